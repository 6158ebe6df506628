//! Which instruction sets this CPU has, decided once.
//!
//! Detection runs on first use and is cached. What it finds is handed out as zero-sized
//! tokens (x86's `Aesni`, `Vaes` and `Avx512`, AArch64's `Armv8` and `Armv8Sha3`): a kernel whose
//! `#[target_feature]` list is exactly a token's feature set takes the token as an argument,
//! so holding one is the proof that the kernel's instructions exist. The [`Backend`] of a key
//! is chosen when the key is created, never per block.

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(vector_tiers)]
mod dispatch;
#[cfg(vector_tiers)]
mod partial;
#[cfg(target_arch = "x86_64")]
pub mod x86;

#[cfg(all(target_arch = "aarch64", feature = "alloc"))]
pub use aarch64::{BATCH_GROUP, BATCH_HASHES_BY_LANE, MAX_BATCH_GROUP_BLOCKS};
#[cfg(target_arch = "aarch64")]
pub use aarch64::{
    Block, MAX_BLOCKS, Narrow, STRIDE, TierToken, block_from, load_block, store_block, tiers,
};
#[cfg(all(target_arch = "x86_64", feature = "alloc"))]
pub use x86::{BATCH_GROUP, BATCH_HASHES_BY_LANE, MAX_BATCH_GROUP_BLOCKS};
/// The architecture's tiers: tokens, the narrow tier and its block, the stride, the
/// instantiation macro, and the loads and stores of single blocks.
#[cfg(target_arch = "x86_64")]
pub use x86::{
    Block, MAX_BLOCKS, Narrow, STRIDE, TierToken, block_from, load_block, store_block, tiers,
};

/// The macros of `dispatch.rs`, where the kernels and the macros themselves name them.
#[cfg(vector_tiers)]
pub use crate::{call_instance, instance, instances, per_tier};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};

#[cfg(vector_tiers)]
use zeroize::Zeroize;

use crate::Error;

/// Runs `f` once for each choice of products the stitched loops can make on this
/// architecture (x86's ZMM tier: Karatsuba, then schoolbook; see `x86::schoolbook_stitched`).
/// `f` learns whether the choice is schoolbook.
#[cfg(all(test, feature = "std"))]
pub fn for_each_stitched_product(mut f: impl FnMut(bool)) {
    #[cfg(target_arch = "x86_64")]
    for schoolbook in [false, true] {
        x86::with_schoolbook_stitched(schoolbook, || f(schoolbook));
    }
    #[cfg(not(target_arch = "x86_64"))]
    f(false);
}

/// The instruction sets the library's own tests run on: every available backend's, and the
/// test-only tier's (`cpu/x86/pair.rs`) where the CPU has it.
#[cfg(all(test, feature = "std"))]
pub fn isas_under_test() -> Vec<Isa> {
    #[allow(unused_mut, reason = "only x86 has the test-only token")]
    let mut isas: Vec<Isa> = Backend::available()
        .into_iter()
        .filter_map(|backend| Isa::for_backend(backend).ok())
        .collect();
    #[cfg(target_arch = "x86_64")]
    isas.extend(x86::pair::Pair::get().map(|token| Isa::Vector(TierToken::Pair(token))));
    isas
}

/// Runs `f` with each message on the tier `TierToken::for_message` picks, then (on x86) with
/// every message on the key's own tier, so that a CPU on which the widest tier takes only
/// long messages still runs its kernels at every length.
#[cfg(all(test, feature = "std"))]
pub fn with_and_without_length_dispatch(mut f: impl FnMut()) {
    f();
    #[cfg(target_arch = "x86_64")]
    x86::with_widest_tier_always(f);
}

/// An implementation tier. Every key remembers the backend it was created with.
///
/// | backend    | instructions                                   | registers |
/// |------------|------------------------------------------------|-----------|
/// | `Portable` | none beyond the base ISA (RustCrypto `aes` for AES, our constant-time POLYVAL) | 64-bit |
/// | `Aesni`    | AES-NI, PCLMULQDQ, SSSE3, SSE4.1               | 128-bit   |
/// | `Vaes`     | the above plus AVX, AVX2, VAES, VPCLMULQDQ (no AVX-512 needed) | 256-bit |
/// | `Avx512`   | the above plus AVX512F, AVX512BW, AVX512VL                      | 512-bit |
/// | `Armv8`    | AArch64 with the ARMv8 crypto extensions (AES, PMULL); EOR3 where the SHA3 extension is present | 128-bit |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Runs on any CPU.
    Portable,
    /// x86-64 with AES-NI and PCLMULQDQ on 128-bit registers.
    Aesni,
    /// x86-64 with VAES and VPCLMULQDQ on 256-bit registers (Zen 3+, Ice Lake+, Alder Lake+).
    Vaes,
    /// AArch64 with the ARMv8 AES and PMULL instructions on 128-bit NEON registers (AWS
    /// Graviton, Ampere, Apple M-series, Neoverse), and the SHA3 extension's three-way XOR
    /// (EOR3) where the CPU has it (Neoverse V1/V2, Apple M-series).
    Armv8,
    /// x86-64 with VAES and VPCLMULQDQ on 512-bit registers (AVX-512: Zen 4+, Sapphire
    /// Rapids+, Ice Lake and Tiger Lake). [`Backend::detected`] passes over it on the Ice
    /// Lake and Tiger Lake cores, which lower their clock while 512-bit registers are busy,
    /// and picks `Vaes` there.
    Avx512,
}

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 5] = [
        Backend::Portable,
        Backend::Armv8,
        Backend::Aesni,
        Backend::Vaes,
        Backend::Avx512,
    ];

    /// The backend new keys use: the fastest this CPU runs (`Vaes` rather than `Avx512` on
    /// the CPUs whose clock drops while 512-bit registers are busy).
    ///
    /// With the `std` feature, the environment variable `COMBSIV_BACKEND` (`portable`,
    /// `aesni`, `vaes`, `avx512` or `armv8`) pins it instead, if that backend is available; an
    /// unknown or unavailable name is ignored. The answer is computed once.
    pub fn detected() -> Backend {
        static CHOSEN: AtomicU8 = AtomicU8::new(UNKNOWN);
        match CHOSEN.load(Ordering::Relaxed) {
            UNKNOWN => {
                let chosen = override_from_env()
                    .filter(|b| b.is_available())
                    .unwrap_or_else(Backend::best_available);
                CHOSEN.store(chosen as u8, Ordering::Relaxed);
                chosen
            }
            cached => Backend::from_u8(cached),
        }
    }

    /// Every backend this CPU can run, `Portable` first.
    #[cfg(feature = "alloc")]
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        Isa::for_backend(self).is_ok()
    }

    /// The lowercase name, as accepted by `COMBSIV_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Aesni => "aesni",
            Backend::Vaes => "vaes",
            Backend::Avx512 => "avx512",
            Backend::Armv8 => "armv8",
        }
    }

    /// Parses a name as printed by [`Backend::name`].
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name.trim()))
    }

    fn best_available() -> Backend {
        Backend::ALL
            .into_iter()
            .rev()
            .filter(|&b| !(b == Backend::Avx512 && zmm_downclocks()))
            .find(|b| b.is_available())
            .unwrap_or(Backend::Portable)
    }

    fn from_u8(value: u8) -> Backend {
        match value {
            0 => Backend::Portable,
            1 => Backend::Aesni,
            2 => Backend::Vaes,
            3 => Backend::Armv8,
            4 => Backend::Avx512,
            _ => unreachable!("only a Backend's own value is stored"),
        }
    }
}

impl core::fmt::Display for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

const UNKNOWN: u8 = u8::MAX;

/// Whether this CPU lowers its clock while 512-bit registers are busy.
fn zmm_downclocks() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::prefers_ymm()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(feature = "std")]
fn override_from_env() -> Option<Backend> {
    std::env::var("COMBSIV_BACKEND")
        .ok()
        .as_deref()
        .and_then(Backend::from_name)
}

#[cfg(not(feature = "std"))]
fn override_from_env() -> Option<Backend> {
    None
}

/// A fused single-message kernel, for [`TierToken::for_message`]: the widest tier is not the
/// fastest for every kernel at every length.
#[cfg(vector_tiers)]
#[derive(Clone, Copy, Debug)]
pub enum Kernel {
    SivSeal,
    SivOpen,
    /// AES-GCM's one pass, either direction.
    Gcm,
}

/// The instruction set a key's kernels run on, with the token that proves it: the portable
/// code, or a vector tier, whose kernels are written once over [`Tier`].
#[derive(Clone, Copy, Debug)]
pub enum Isa {
    Portable,
    #[cfg(vector_tiers)]
    Vector(TierToken),
}

impl Isa {
    /// The instruction set of [`Backend::detected`].
    pub fn detected() -> Isa {
        // `detected` only returns available backends; the fallback keeps that a non-panic.
        Isa::for_backend(Backend::detected()).unwrap_or(Isa::Portable)
    }

    pub fn for_backend(backend: Backend) -> Result<Isa, Error> {
        if backend == Backend::Portable {
            return Ok(Isa::Portable);
        }
        #[cfg(vector_tiers)]
        if let Some(token) = TierToken::for_backend(backend) {
            return Ok(Isa::Vector(token));
        }
        Err(Error::BackendUnavailable)
    }

    /// The backend this instruction set is.
    pub fn backend(self) -> Backend {
        match self {
            Isa::Portable => Backend::Portable,
            #[cfg(vector_tiers)]
            Isa::Vector(token) => token.backend(),
        }
    }
}

/// How far ahead of its loads and stores a pass over a message asks for the input's and the
/// output's cache lines ([`Tier::prefetch_stride_ahead`]). Many rows laid out one after another
/// (a column's values sealed or opened into the column's output) would otherwise wait on
/// memory at each row's first lines: the hardware's prefetchers stop at 4 KiB pages, and an
/// output line written first is read for ownership before the store completes. On an Intel
/// Xeon, AES-256 seals of rows of 512-1500 bytes took 860-880 TSC cycles a row at 2048 to
/// 4096 bytes ahead against 1000-1050 without, and rows in L1 no longer (the runs:
/// docs/measurements/2026-11-30-intel-xeon-prefetch.md).
#[cfg(vector_tiers)]
const PREFETCH_AHEAD: usize = 4096;

/// The vector layer: what the generic kernels (counter mode, POLYVAL, the fused AEADs, the
/// batch groups, the comb lanes) need from a tier, and the tuning constants each tier owns.
///
/// A tier is a register type of [`BLOCKS`](Tier::BLOCKS) AES blocks and the instructions
/// that act on each block of it on its own: an AES round, a carry-less product of 64-bit
/// halves, XOR, a byte shuffle within each block. The kernels are written once over this
/// trait and compiled per tier ([`per_tier!`](crate::cpu::per_tier)); a kernel computes the
/// same thing at every width, block by block, so what is tested on one tier (natively, under
/// Miri or under qemu) is the code the others run.
///
/// Every architecture with tiers has one *narrow* tier of one block per register
/// ([`Narrow`], whose register is a [`Block`]): key expansion, reductions, the tag block
/// and short messages run there whatever the tier, and each tier reaches it through
/// [`Tier::narrow`]. What is architecture-specific lives in `cpu/<arch>`: the token types,
/// detection, the implementations of this trait, the `#[target_feature]` instantiation, and
/// the loads and stores of single blocks; `cpu/partial.rs` reads and writes partial blocks
/// on any one-block tier.
///
/// The methods take `self`, the zero-sized proof that the CPU has the instructions, which is
/// what makes them safe to call. They are `#[inline(always)]` so that they dissolve into the
/// `#[target_feature]` function that instantiates a kernel; called anywhere else they are
/// still correct, only slow.
#[cfg(vector_tiers)]
pub trait Tier: Copy {
    /// A register of [`BLOCKS`](Self::BLOCKS) AES blocks.
    type Reg: Copy + Zeroize;
    /// The bytes of one register: `[u8; 16 * BLOCKS]`.
    type Bytes: Copy + Zeroize;
    /// The one-block tier of every feature this tier's token proves (see [`single`](Self::single)).
    type Single: Tier<Reg = Block, Bytes = [u8; 16]>;
    /// Blocks per register.
    const BLOCKS: usize;
    /// Hash powers a stride uses: one per block of a stride.
    const POWERS: usize = STRIDE * Self::BLOCKS;
    /// How many strides behind the counter mode a stitched loop hashes its own output: the
    /// output of stride i exists only after its last AES round, so hashing it at once would
    /// stall the multiplies behind that latency.
    const HASH_LAG: usize;
    /// Whether those stitched loops also read the earlier stride from 8 bytes on, for
    /// Karatsuba's middle inputs without a shuffle (`field::kernels::StrideInMemory`). On
    /// AArch64 LLVM reads only the 8 bytes it needs, inside one block's store, and the
    /// shuffle it saves is a SIMD instruction: 8 per stride of the GCM-SIV open. x86's
    /// 16-byte load spans two stores (AES-NI's AES-128-GCM-SIV open of 64 KiB ran about 6 %
    /// slower on Zen 5 so).
    const HASH_OUTPUT_SHIFTED: bool;
    /// AES-GCM messages of at most this many blocks run on the narrow tier: a message of one
    /// narrow stride or less gains nothing from wide registers, whose broadcasts and
    /// cross-block folds only add latency. 0 on the narrow tier itself.
    const GCM_NARROW_BLOCKS: usize;
    /// AES-GCM-SIV messages whose POLYVAL input is at most this many chunks of the narrow
    /// tier's powers take the short path (no table of powers; see `aead/kernels.rs`).
    const SIV_SHORT_CHUNKS: usize;
    /// Messages of at most this many POLYVAL blocks run in the lockstep groups of
    /// `seal_batch`/`open_batch` (of the architecture's `BATCH_GROUP` registers, one
    /// message per block); longer ones run the single-message kernel's steps, pipelined.
    const BATCH_GROUP_BLOCKS: usize;
    /// Whether the kernels write out the AES rounds one by one rather than loop over the
    /// round keys. AArch64 needs it: LLVM folds each round key's XOR into the next AESE (see
    /// [`aes_round`](Tier::aes_round)) only across written-out rounds, and a loop spends a
    /// third instruction per block and round (the counter-mode stride: 28 instructions per
    /// round instead of 17). On x86 the loops are smaller and as fast or faster (written
    /// out, AES-NI's AES-128-GCM decrypt of 8 KiB took 1.07x as long on Zen 5).
    const UNROLL_ROUNDS: bool;
    /// Comb lanes one lane-kernel call runs: one per block of a stride.
    #[cfg(feature = "alloc")]
    const COMB_LANES: usize = STRIDE * Self::BLOCKS;

    /// The narrow tier every tier includes (key expansion, reduction, the tag block), as the
    /// one type the code shared by all tiers takes.
    fn narrow(self) -> Narrow;
    /// The narrow tier with what this tier adds to it for a message's bytes: on a CPU with
    /// AVX-512, masked loads and stores of partial blocks. The short messages run here.
    fn single(self) -> Self::Single;

    /// The tier with its token, to call a kernel instantiated by
    /// [`per_tier!`](crate::cpu::per_tier) (the batch calls the single-message kernels so).
    #[cfg(feature = "alloc")]
    fn token(self) -> TierToken;

    /// Splits bytes into whole registers and the rest.
    fn registers(data: &[u8]) -> (&[Self::Bytes], &[u8]);
    /// Splits bytes into whole registers and the rest.
    fn registers_mut(data: &mut [u8]) -> (&mut [Self::Bytes], &mut [u8]);

    fn load(self, bytes: &Self::Bytes) -> Self::Reg;
    fn store(self, reg: Self::Reg) -> Self::Bytes;
    /// `blocks[first..first + BLOCKS]` as one register (panics past the end).
    fn load_blocks(self, blocks: &[Block], first: usize) -> Self::Reg;
    /// Writes one register to `blocks[first..first + BLOCKS]` (panics past the end).
    fn store_blocks(self, reg: Self::Reg, blocks: &mut [Block], first: usize);
    /// The partial last block of `data` (its last `data.len() % 16` bytes, 1 to 15 of them)
    /// as the low bytes of a block, the rest zero, as [`single`](Self::single) reads it: the
    /// one-block tiers (`Single = Self`) implement it, with `cpu/partial.rs` or a faster
    /// way.
    #[inline(always)]
    fn load_last_partial(self, data: &[u8]) -> Block {
        self.single().load_last_partial(data)
    }
    /// Writes the low `data.len() % 16` bytes of `block` as the partial last block of `data`,
    /// whose earlier bytes must already hold their final values (see `cpu/partial.rs`), as
    /// [`single`](Self::single) writes it; the one-block tiers implement it.
    #[inline(always)]
    fn store_last_partial(self, block: Block, data: &mut [u8]) {
        self.single().store_last_partial(block, data);
    }
    /// A register whose block i is `block(i)`.
    fn gather(self, block: impl Fn(usize) -> Block) -> Self::Reg;
    /// Block `i` of a register.
    fn block(self, reg: Self::Reg, i: usize) -> Block;
    /// The XOR of all blocks of a register.
    fn sum_blocks(self, reg: Self::Reg) -> Block;
    /// `block` in every block.
    fn broadcast(self, block: Block) -> Self::Reg;

    fn zero(self) -> Self::Reg;
    fn xor(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// `a ^ b ^ c` as one instruction where the tier has one (AVX-512's `VPTERNLOGD`): LLVM
    /// forms it from two XORs only where it sees the tree whole.
    #[inline(always)]
    fn xor3(self, a: Self::Reg, b: Self::Reg, c: Self::Reg) -> Self::Reg {
        self.xor(self.xor(a, b), c)
    }
    fn or(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// `!a & b`.
    fn and_not(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// Adds 32-bit lanes (counters).
    fn add32(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// Byte `i` of each block is byte `indices[i]` of that block, or zero where the index
    /// has its top bit set (PSHUFB; TBL on ARM).
    fn shuffle_bytes(self, a: Self::Reg, indices: Self::Reg) -> Self::Reg;

    /// Each block's bytes in reverse order (GHASH's blocks as POLYVAL reads them).
    #[inline(always)]
    fn reverse_bytes(self, a: Self::Reg) -> Self::Reg {
        let reverse = self
            .narrow()
            .load(&[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        self.shuffle_bytes(a, self.broadcast(reverse))
    }
    /// Swaps the 64-bit halves of each block.
    fn swap_halves(self, a: Self::Reg) -> Self::Reg;
    /// Each block of `low` with its high half replaced by the low half of `high`'s block.
    fn low_halves(self, low: Self::Reg, high: Self::Reg) -> Self::Reg;
    /// Shifts each block left (towards byte 15) by `BYTES` bytes.
    fn shift_bytes_up<const BYTES: i32>(self, a: Self::Reg) -> Self::Reg;
    /// Word 3 of each block in all four of its words.
    fn broadcast_word_3(self, a: Self::Reg) -> Self::Reg;
    /// Transposes, block by block, the 4x4 matrix of 32-bit words that the four registers'
    /// block i form: word c of block i of register j becomes word j of block i of register c.
    #[cfg(feature = "alloc")]
    fn transpose_words(self, rows: [Self::Reg; 4]) -> [Self::Reg; 4];
    /// [`transpose_words`](Tier::transpose_words) of `rows` stored to `out`: a tier that
    /// stores the transpose in fewer instructions than it computes it says so.
    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn store_transposed_words(self, rows: [Self::Reg; 4], out: &mut [Self::Reg; 4]) {
        *out = self.transpose_words(rows);
    }

    /// One round of AES's cipher as FIPS 197 (Section 5.1) writes it, on each block:
    /// SubBytes, ShiftRows, MixColumns, then AddRoundKey with `key`. The kernels run the
    /// cipher as FIPS 197 does (AddRoundKey, `Nr - 1` of these, [`aes_last_round`]), so one
    /// kernel source serves every architecture. x86's AESENC is exactly this round. AArch64's
    /// AESE adds its key first; its tier writes the round as AESE with a zero key, AESMC and
    /// the key's XOR, and where the rounds are written out ([`UNROLL_ROUNDS`]) LLVM folds
    /// that XOR into the next AESE, leaving AArch64's own chain (AESE with the key, AESMC).
    ///
    /// [`aes_last_round`]: Tier::aes_last_round
    /// [`UNROLL_ROUNDS`]: Tier::UNROLL_ROUNDS
    fn aes_round(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// The cipher's last round (FIPS 197 Section 5.1: no MixColumns) on each block.
    fn aes_last_round(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// One round of the equivalent inverse cipher (FIPS 197 Section 5.3.5) on each block:
    /// InvSubBytes, InvShiftRows, InvMixColumns, then AddRoundKey with `key`.
    fn aes_inverse_round(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// The equivalent inverse cipher's last round (no InvMixColumns) on each block.
    fn aes_inverse_last_round(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// InvMixColumns of each block: turns an encryption round key into the equivalent
    /// inverse cipher's.
    fn aes_inverse_mix_columns(self, key: Self::Reg) -> Self::Reg;
    /// A scheduling barrier that emits nothing. On x86, `reg` passes through an empty `asm!`
    /// block: the compiler must assume the block has side effects (it is not `pure`), so it
    /// keeps all such blocks in program order, and whatever reads `reg` afterwards follows
    /// the block. [`round_boundary`](crate::aes::kernels::round_boundary) pins every state
    /// after each AES round. On AArch64 it is nothing (see that tier's impl). Miri, which runs
    /// no assembly, skips it: it changes no value.
    fn pin(self, reg: &mut Self::Reg);
    /// Asks for the cache line at `at` to be fetched into L1 ahead of its loads: a hint,
    /// which reads nothing and cannot fault, so any address will do. Nothing by default.
    #[inline(always)]
    fn prefetch(self, at: *const u8) {
        let _ = at;
    }
    /// Asks for the cache lines of the stride [`PREFETCH_AHEAD`] bytes past `input` and of
    /// the one as far past `output`: what a pass reading one stride and writing one calls
    /// before each. Addresses past the buffers' ends are fine (hints).
    #[inline(always)]
    fn prefetch_stride_ahead(self, input: *const u8, output: *const u8) {
        let stride_bytes = STRIDE * size_of::<Self::Bytes>();
        for line in (0..stride_bytes).step_by(64) {
            self.prefetch(input.wrapping_add(PREFETCH_AHEAD + line));
            self.prefetch(output.wrapping_add(PREFETCH_AHEAD + line));
        }
    }
    /// The 64x64-bit carry-less product of the low halves of each block of `a` and `b`.
    fn mul_low_halves(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// The carry-less product of the high halves of each block of `a` and `b`.
    fn mul_high_halves(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// The carry-less product of the high half of each block of `a` and the low half of `b`'s.
    fn mul_high_by_low(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// The carry-less product of the low half of each block of `a` and the high half of `b`'s.
    fn mul_low_by_high(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
}
