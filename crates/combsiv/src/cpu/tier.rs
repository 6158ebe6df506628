//! The vector layer: what the generic kernels (counter mode, POLYVAL, the fused AEADs, the
//! batch groups, the comb lanes) need from a tier, and the tuning constants each tier owns.
//!
//! A tier is a register type of [`BLOCKS`](Tier::BLOCKS) AES blocks and the instructions
//! that act on each block of it on its own: an AES round, a carry-less product of 64-bit
//! halves, XOR, a byte shuffle within each block. The kernels are written once over this
//! trait and compiled per tier ([`per_tier!`](crate::cpu::per_tier)); a kernel computes the
//! same thing at every width, block by block, so what is tested on one tier (natively, under
//! Miri or under qemu) is the code the others run.
//!
//! Every architecture with tiers has one *narrow* tier of one block per register
//! ([`Narrow`], whose register is a [`Block`]): key expansion, reductions, the tag block
//! and short messages run there whatever the tier, and each tier reaches it through
//! [`Tier::narrow`]. What is architecture-specific lives in `cpu/<arch>`: the token types,
//! detection, the implementations of this trait, the `#[target_feature]` instantiation, and
//! the loads and stores of single blocks; `cpu/partial.rs` reads and writes partial blocks
//! on any one-block tier.
//!
//! The methods take `self`, the zero-sized proof that the CPU has the instructions, which is
//! what makes them safe to call. They are `#[inline(always)]` so that they dissolve into the
//! `#[target_feature]` function that instantiates a kernel; called anywhere else they are
//! still correct, only slow.

use zeroize::Zeroize;

use super::{Block, Narrow};

/// How far ahead of its loads and stores a pass over a message asks for the input's and the
/// output's cache lines ([`Tier::prefetch_stride_ahead`]). Many rows laid out one after another
/// (a column's values sealed or opened into the column's output) would otherwise wait on
/// memory at each row's first lines: the hardware's prefetchers stop at 4 KiB pages, and an
/// output line written first is read for ownership before the store completes. Measured on
/// the Intel Xeon virtual machine of docs/PERFORMANCE.md (AES-256 seals of rows of 512-1500
/// bytes, 360 MB each way, TSC cycles per row, medians): 1000-1050 without, 860-880 at 2048,
/// 3072 and 4096 bytes (with 2 MiB pages 877 -> 730); from L1 unchanged (588-595 against
/// 575-593). Opens of the same rows at 4096: 950-1160 -> 790-1000, from L1 550-600 both.
const PREFETCH_AHEAD: usize = 4096;

/// What the shared kernels need from a tier; see the module comment.
pub(crate) trait Tier: Copy {
    /// A register of [`BLOCKS`](Self::BLOCKS) AES blocks.
    type Reg: Copy + Zeroize;
    /// The bytes of one register: `[u8; 16 * BLOCKS]`.
    type Bytes: Copy + Zeroize;
    /// The one-block tier of every feature this tier's token proves (see [`single`](Self::single)).
    type Single: Tier<Reg = Block, Bytes = [u8; 16]>;
    /// Blocks per register.
    const BLOCKS: usize;
    /// Hash powers a stride uses: one per block of a stride.
    const POWERS: usize = super::STRIDE * Self::BLOCKS;
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
    /// round keys. AArch64 needs it: its AES round adds the key first (AESE) where the
    /// kernels' round, x86's AESENC, adds it last, and LLVM folds each round key's XOR into
    /// the next AESE only across written-out rounds; a loop, which LLVM does not unroll for
    /// eight AESE/AESMC pairs, spends a third instruction per block and round (the
    /// counter-mode stride: 28 instructions per round instead of 17). On x86 the loops are
    /// smaller and measured as fast or faster (written out, AES-NI's AES-128-GCM decrypt of
    /// 8 KiB took 1.07x as long on Zen 5).
    const UNROLL_ROUNDS: bool;
    /// Comb lanes one lane-kernel call runs: one per block of a stride.
    #[cfg(feature = "alloc")]
    const COMB_LANES: usize = super::STRIDE * Self::BLOCKS;

    /// The narrow tier every tier includes (key expansion, reduction, the tag block), as the
    /// one type the code shared by all tiers takes.
    fn narrow(self) -> Narrow;
    /// The narrow tier with what this tier adds to it for a message's bytes: on a CPU with
    /// AVX-512, masked loads and stores of partial blocks. The short messages run here.
    fn single(self) -> Self::Single;

    /// The tier with its token, to call a kernel instantiated by
    /// [`per_tier!`](crate::cpu::per_tier) (the batch calls the single-message kernels so).
    #[cfg(feature = "alloc")]
    fn token(self) -> super::TierToken;

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

    /// One AES round (FIPS 197: ShiftRows, SubBytes, MixColumns, AddRoundKey) on each block.
    fn aesenc(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// The last AES round (no MixColumns) on each block.
    fn aesenclast(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// One round of the equivalent inverse cipher (FIPS 197 Section 5.3.5) on each block.
    fn aesdec(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// The last round of the equivalent inverse cipher on each block.
    fn aesdeclast(self, state: Self::Reg, key: Self::Reg) -> Self::Reg;
    /// InvMixColumns of each block: turns an encryption round key into the equivalent
    /// inverse cipher's.
    fn inv_mix_columns(self, key: Self::Reg) -> Self::Reg;
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
        let stride_bytes = super::STRIDE * size_of::<Self::Bytes>();
        for line in (0..stride_bytes).step_by(64) {
            self.prefetch(input.wrapping_add(PREFETCH_AHEAD + line));
            self.prefetch(output.wrapping_add(PREFETCH_AHEAD + line));
        }
    }
    /// The 64x64-bit carry-less product of one half of each block of `a` and one of `b`'s:
    /// `SELECT` bit 0 picks the half of `a`, bit 4 that of `b` (PCLMULQDQ's immediate).
    fn clmul<const SELECT: i32>(self, a: Self::Reg, b: Self::Reg) -> Self::Reg;
}
