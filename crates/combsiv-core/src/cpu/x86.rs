//! CPUID and XGETBV, read once.
//!
//! References: Intel SDM Vol. 2A, CPUID leaf 01H (ECX: bit 1 PCLMULQDQ, 9 SSSE3, 19 SSE4.1,
//! 25 AES, 27 OSXSAVE, 28 AVX) and leaf 07H sub-leaf 0 (EBX bit 5 AVX2; ECX bit 9 VAES,
//! bit 10 VPCLMULQDQ); Vol. 1 13.3: the OS must have enabled XMM and YMM state in XCR0
//! (bits 1 and 2) before any VEX-encoded instruction may run. 256-bit VAES needs only YMM
//! state, not the AVX-512 state (XCR0 bits 5-7): Zen 3 and Alder Lake have VAES without
//! AVX-512, and requiring it would deny them the fast path. The ZMM tier needs leaf 07H EBX
//! bits 16 (AVX512F), 30 (AVX512BW) and 31 (AVX512VL), and the opmask and ZMM state enabled
//! in XCR0 (bits 5, 6 and 7).

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

#[cfg(test)]
pub mod pair;
pub mod tiers;

/// One AES block in a register of the narrow tier.
pub type Block = core::arch::x86_64::__m128i;
/// The narrow tier: one block per register.
pub type Narrow = Aesni;

/// Registers per loop iteration on every x86 tier: eight states plus a round key and a data
/// register fit the sixteen XMM/YMM registers, and eight independent AESENCs cover the
/// latency x throughput of every AES unit we target (Zen 3: latency 4 x 2 per cycle).
pub const STRIDE: usize = 8;
/// Blocks per register of the widest x86 tier, for arrays sized for every tier.
pub const MAX_BLOCKS: usize = 4;
/// Registers of messages per group of `seal_batch`/`open_batch`, every x86 tier: four
/// independent chains cover the latency of each step (AESENC: 4 cycles, issued twice per
/// cycle on Zen; a multiply-and-reduce: about 15 cycles for about 4 cycles of issue), and 8
/// derivation blocks are in flight.
#[cfg(feature = "alloc")]
pub const BATCH_GROUP: usize = 4;
/// The most POLYVAL blocks of a message in a batch group on any x86 tier
/// ([`Tier::BATCH_GROUP_BLOCKS`](crate::cpu::Tier::BATCH_GROUP_BLOCKS)).
pub const MAX_BATCH_GROUP_BLOCKS: usize = 64;
/// Whether a batch group of the AES-NI tier hashes each message where it lies, one message
/// after another, rather than through rows that line the group's blocks up: that saved
/// instructions but not time, each message's chain of multiplications waiting for the one
/// before (`seal_batch` of 64- and 96-byte messages: 127 and 172 cycles a message against
/// 121 and 158 through the rows, Zen 4).
#[cfg(feature = "alloc")]
pub const BATCH_HASHES_BY_LANE: bool = false;

#[cfg(not(miri))]
use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
use core::sync::atomic::{AtomicU8, Ordering};

use crate::cpu::{Backend, Kernel};

const DETECTED: u8 = 1;
const HAS_AESNI: u8 = 2;
const HAS_VAES: u8 = 4;
const HAS_AVX512: u8 = 8;
/// The CPU is one of those that lower their clock while ZMM registers are in use.
const PREFERS_YMM: u8 = 16;
/// An Intel CPU: its 512-bit multiplies, shuffles and XORs share ports 0 and 5.
const INTEL: u8 = 32;
/// AMD's Zen 4, which runs each 512-bit instruction as two 256-bit halves (see [`zmm_from`]).
const ZEN4: u8 = 64;

/// What [`detect`] found, with [`DETECTED`] once it ran.
static FEATURES: AtomicU8 = AtomicU8::new(0);

fn features() -> u8 {
    let cached = FEATURES.load(Ordering::Relaxed);
    if cached & DETECTED != 0 {
        return cached;
    }
    let found = detect() | DETECTED;
    FEATURES.store(found, Ordering::Relaxed);
    found
}

#[cfg(not(miri))]
fn bit(word: u32, index: u32) -> bool {
    word >> index & 1 == 1
}

/// Under Miri there is no CPUID (it is inline assembly there): the features are the ones
/// the build enables statically (`-C target-feature=...`), which Miri then executes.
#[cfg(miri)]
fn detect() -> u8 {
    let aesni = cfg!(all(
        target_feature = "aes",
        target_feature = "pclmulqdq",
        target_feature = "ssse3",
        target_feature = "sse4.1"
    ));
    let vaes = cfg!(all(
        target_feature = "avx",
        target_feature = "avx2",
        target_feature = "vaes",
        target_feature = "vpclmulqdq"
    ));
    let avx512 = cfg!(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vl"
    ));
    match (aesni, vaes, avx512) {
        (true, true, true) => HAS_AESNI | HAS_VAES | HAS_AVX512,
        (true, true, false) => HAS_AESNI | HAS_VAES,
        (true, false, _) => HAS_AESNI,
        _ => 0,
    }
}

#[cfg(not(miri))]
fn detect() -> u8 {
    let max_leaf = __cpuid(0).eax;
    let leaf1 = __cpuid(1);
    let aesni = bit(leaf1.ecx, 1) && bit(leaf1.ecx, 9) && bit(leaf1.ecx, 19) && bit(leaf1.ecx, 25);
    let osxsave = bit(leaf1.ecx, 27);
    let avx = bit(leaf1.ecx, 28);
    // SAFETY: OSXSAVE says the OS set CR4.OSXSAVE, which makes XGETBV executable.
    let xcr0 = if osxsave { unsafe { read_xcr0() } } else { 0 };
    let ymm_state_enabled = xcr0 & 0b110 == 0b110;
    let zmm_state_enabled = xcr0 & 0b1110_0110 == 0b1110_0110;
    let (avx2, vaes, vpclmulqdq, avx512) = if max_leaf >= 7 {
        let leaf7 = __cpuid_count(7, 0);
        let avx512 = bit(leaf7.ebx, 16) && bit(leaf7.ebx, 30) && bit(leaf7.ebx, 31);
        (
            bit(leaf7.ebx, 5),
            bit(leaf7.ecx, 9),
            bit(leaf7.ecx, 10),
            avx512,
        )
    } else {
        (false, false, false, false)
    };
    let mut found = 0;
    if aesni {
        found |= HAS_AESNI;
        if avx && ymm_state_enabled && avx2 && vaes && vpclmulqdq {
            found |= HAS_VAES;
            if avx512 && zmm_state_enabled {
                found |= HAS_AVX512;
            }
        }
    }
    if zmm_downclocks(leaf1.eax) {
        found |= PREFERS_YMM;
    }
    let leaf0 = __cpuid(0);
    let vendor = [leaf0.ebx, leaf0.edx, leaf0.ecx];
    if vendor == vendor_words(b"GenuineIntel") {
        found |= INTEL;
    }
    // Family 0x19 is Zen 3 and Zen 4; of them only Zen 4 has AVX-512.
    if vendor == vendor_words(b"AuthenticAMD")
        && family(leaf1.eax) == 0x19
        && found & HAS_AVX512 != 0
    {
        found |= ZEN4;
    }
    found
}

/// A vendor string as CPUID leaf 0 returns it in EBX, EDX and ECX.
#[cfg(not(miri))]
fn vendor_words(name: &[u8; 12]) -> [u32; 3] {
    let word = |i: usize| u32::from_le_bytes([name[i], name[i + 1], name[i + 2], name[i + 3]]);
    [word(0), word(4), word(8)]
}

/// The display family of CPUID leaf 1's EAX: the base family, plus the extended family when
/// the base is 0xF.
#[cfg(not(miri))]
fn family(leaf1_eax: u32) -> u32 {
    let base = leaf1_eax >> 8 & 0xF;
    match base {
        0xF => base + (leaf1_eax >> 20 & 0xFF),
        _ => base,
    }
}

/// Whether the ZMM tier's stitched loops multiply schoolbook
/// ([`TierToken::schoolbook_stitched`]): on Intel CPUs. Only an [`Avx512`] token asks, and
/// making one ran the detection, so this reads what it stored: one load, where calling
/// [`features`] would also bring the code of [`detect`] into each caller. In the crate's own
/// tests, whatever the CPU, each call on a thread takes the other choice than the call before
/// it, so that the tests of the AVX-512 tier run both between them, unless
/// `with_schoolbook_stitched` chose one.
pub fn schoolbook_stitched() -> bool {
    #[cfg(all(test, feature = "std"))]
    return SCHOOLBOOK_STITCHED.with(|chosen| {
        let (choice, fixed) = chosen.get();
        if !fixed {
            chosen.set((!choice, false));
        }
        choice
    });
    #[cfg(not(all(test, feature = "std")))]
    return FEATURES.load(Ordering::Relaxed) & INTEL != 0;
}

#[cfg(all(test, feature = "std"))]
std::thread_local! {
    /// The next choice of [`schoolbook_stitched`], and whether it is fixed.
    static SCHOOLBOOK_STITCHED: core::cell::Cell<(bool, bool)> =
        const { core::cell::Cell::new((false, false)) };
}

#[cfg(all(test, feature = "std"))]
std::thread_local! {
    /// Whether [`zmm_from`] hands no message to the 256-bit tier, on this thread.
    static WIDEST_TIER_ALWAYS: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Runs `f` with every message of an AVX-512 key on the ZMM tier, on this thread.
#[cfg(all(test, feature = "std"))]
pub fn with_widest_tier_always<R>(f: impl FnOnce() -> R) -> R {
    WIDEST_TIER_ALWAYS.set(true);
    let result = f();
    WIDEST_TIER_ALWAYS.set(false);
    result
}

/// Runs `f` with the ZMM tier's stitched loops multiplying schoolbook or not, whatever the
/// CPU, on this thread.
#[cfg(all(test, feature = "std"))]
pub fn with_schoolbook_stitched<R>(schoolbook: bool, f: impl FnOnce() -> R) -> R {
    SCHOOLBOOK_STITCHED.set((schoolbook, true));
    let result = f();
    SCHOOLBOOK_STITCHED.set((false, false));
    result
}

/// Intel cores that lower their clock for as long as ZMM registers are busy, by enough that
/// 512-bit code slows down everything else on the core: Skylake-SP and Cascade Lake (family 6,
/// model 0x55), Ice Lake server (0x6A, 0x6C), client (0x7D, 0x7E) and NNPI (0x9D), Tiger
/// Lake (0x8C, 0x8D). Linux and BoringSSL keep 256-bit code on the same list; Rocket Lake,
/// Sapphire Rapids and later Intel cores and AMD's Zen 4 and Zen 5 are not on it. The vendor
/// is not checked: no other vendor's family 6 has these models and AVX-512.
#[cfg(not(miri))]
fn zmm_downclocks(leaf1_eax: u32) -> bool {
    let model = (leaf1_eax >> 12 & 0xF0) | (leaf1_eax >> 4 & 0xF);
    family(leaf1_eax) == 6 && matches!(model, 0x55 | 0x6A | 0x6C | 0x7D | 0x7E | 0x9D | 0x8C | 0x8D)
}

#[cfg(not(miri))]
#[target_feature(enable = "xsave")]
unsafe fn read_xcr0() -> u64 {
    // SAFETY: the caller checked OSXSAVE; XCR0 (register 0) always exists then.
    unsafe { _xgetbv(0) }
}

/// Proof that the CPU has AES-NI, PCLMULQDQ, SSSE3 and SSE4.1: exactly the features of
/// `#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]`; with `MASKED`, also everything
/// [`Avx512`] proves, for the one-block code of the AVX-512 key's tiers (see [`Ymm`]).
#[derive(Clone, Copy, Debug)]
pub struct Xmm<const MASKED: bool>(());

/// The 128-bit tier: AES-NI and PCLMULQDQ on XMM registers.
pub type Aesni = Xmm<false>;

impl Aesni {
    pub fn get() -> Option<Aesni> {
        (features() & HAS_AESNI != 0).then_some(Xmm(()))
    }
}

impl<const MASKED: bool> Xmm<MASKED> {
    /// The AVX-512 features, which the token proves if `MASKED`.
    pub fn avx512(self) -> Option<Avx512> {
        MASKED.then_some(Avx512(()))
    }
}

/// Proof that the CPU has everything [`Aesni`] proves plus AVX, AVX2, VAES and VPCLMULQDQ
/// with YMM state enabled by the OS, and with `MASKED` also everything [`Avx512`] proves.
/// Both run the 256-bit kernels; the `MASKED` instance loads and stores partial blocks with
/// AVX-512's byte masks (see [`load_last_partial_masked`]). Only [`Vaes::get`] and
/// [`Avx512::ymm`] make one.
#[derive(Clone, Copy, Debug)]
pub struct Ymm<const MASKED: bool>(());

/// The 256-bit tier: VAES and VPCLMULQDQ on YMM registers.
pub type Vaes = Ymm<false>;
/// The 256-bit tier on a CPU with AVX-512: AVX-512 keys run messages too short for ZMM
/// registers here ([`zmm_from`]).
pub type VaesMasked = Ymm<true>;

impl Vaes {
    pub fn get() -> Option<Vaes> {
        (features() & HAS_VAES != 0).then_some(Ymm(()))
    }
}

impl<const MASKED: bool> Ymm<MASKED> {
    /// The 128-bit subset, which the VAES feature set includes.
    pub fn aesni(self) -> Aesni {
        Xmm(())
    }

    /// The one-block tier of the same features.
    pub fn xmm(self) -> Xmm<MASKED> {
        Xmm(())
    }
}

/// Proof that the CPU has everything [`Vaes`] proves plus AVX512F, AVX512BW and AVX512VL
/// with the opmask and ZMM state enabled by the OS.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Avx512 {
    pub fn get() -> Option<Avx512> {
        (features() & HAS_AVX512 != 0).then_some(Avx512(()))
    }

    /// The 128-bit subset, which the feature set includes.
    pub fn aesni(self) -> Aesni {
        Xmm(())
    }

    /// The one-block tier with the masked partial blocks, whose features this token proves.
    pub fn xmm(self) -> Xmm<true> {
        Xmm(())
    }

    /// The 256-bit tier with the masked partial blocks, whose features this token proves.
    pub fn ymm(self) -> VaesMasked {
        Ymm(())
    }
}

/// The shortest message, in bytes, that [`Avx512`] keys run on their own tier through each
/// GCM-SIV kernel; shorter ones run the [`VaesMasked`] instance. A stride of 8 ZMM registers is
/// 512 bytes, so a mid-sized message fills one or two strides and pays the wider tier's fixed
/// costs: 32 hash powers per message where YMM needs 16, folds across four blocks, and in the
/// open the first and last strides, which the stitched loop cannot pair (it hashes its own
/// output one stride behind). The limits are where ZMM stopped losing to YMM in alternating
/// runs on each kind of CPU (Zen 5: the AES-128 seal took 0.88-0.92x YMM's time at 1024
/// bytes); Zen 4 runs a 512-bit instruction as two halves and Intel's cores issue one 512-bit
/// AES round per cycle where they issue two 256-bit ones, so ZMM pays later there. The runs:
/// docs/measurements/2026-11-27-zen5-avx512.md and 2026-11-29-intel-xeon-avx512.md.
fn zmm_from(kernel: Kernel) -> usize {
    #[cfg(all(test, feature = "std"))]
    if WIDEST_TIER_ALWAYS.get() {
        return 0;
    }
    // An Avx512 token exists, so the detection ran: one load.
    let features = FEATURES.load(Ordering::Relaxed);
    let [seal, open, gcm] = if features & ZEN4 != 0 {
        [2048, 4096, 1024]
    } else if features & INTEL != 0 {
        [2048, 1536, 0]
    } else {
        [1024, 1536, 0]
    };
    match kernel {
        Kernel::SivSeal => seal,
        Kernel::SivOpen => open,
        Kernel::Gcm => gcm,
    }
}

/// Whether [`Backend::detected`] passes over the ZMM tier on this CPU, which has it but
/// lowers its clock while ZMM registers are busy (see `zmm_downclocks`).
pub fn prefers_ymm() -> bool {
    features() & PREFERS_YMM != 0
}

/// The x86 tiers, declared once: each tier's [`TierToken`] variant and token, the
/// [`Backend`] it is, and the features its kernels' instances enable (exactly what the token
/// proves). [`TierToken`] and its mappings, and every [`per_tier!`](crate::cpu::per_tier)
/// kernel's instances, come from this list: `tiers!([callback] { input })` hands it to
/// `callback!` after `input`.
#[doc(hidden)]
#[macro_export]
macro_rules! x86_tiers {
    ([$($callback:tt)*] { $($input:tt)* }) => {
        $($callback)*! { $($input)* tiers: [
            /// 128-bit registers, one block each.
            Aesni($crate::cpu::x86::Aesni) = Aesni, "aes,pclmulqdq,ssse3,sse4.1";
            /// 256-bit registers, two blocks each.
            Vaes($crate::cpu::x86::Vaes) = Vaes,
                "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq";
            /// The same on a CPU with AVX-512 (its partial blocks masked): an AVX-512 key's
            /// messages too short for ZMM registers.
            VaesMasked($crate::cpu::x86::VaesMasked) = Avx512,
                "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq,avx512f,avx512bw,avx512vl";
            /// 512-bit registers, four blocks each.
            Avx512($crate::cpu::x86::Avx512) = Avx512,
                "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq,avx512f,avx512bw,avx512vl";
            /// The test-only tier: two blocks per register on AES-NI (`pair.rs`).
            #[cfg(all(test, owns_test_tier))]
            Pair($crate::cpu::x86::pair::Pair) = Aesni, "aes,pclmulqdq,ssse3,sse4.1";
        ] }
    };
}
pub use crate::x86_tiers as tiers;

crate::cpu::tiers!([crate::declare_tier_token] {});

impl TierToken {
    /// The tier of a backend, if it is an x86 tier and this CPU has it.
    pub fn for_backend(backend: Backend) -> Option<TierToken> {
        match backend {
            Backend::Aesni => Aesni::get().map(TierToken::Aesni),
            Backend::Vaes => Vaes::get().map(TierToken::Vaes),
            Backend::Avx512 => Avx512::get().map(TierToken::Avx512),
            Backend::Portable | Backend::Armv8 => None,
        }
    }

    /// The tier that runs one message of `bytes` bytes through `kernel`: this one, except
    /// that the AVX-512 tier hands messages shorter than [`zmm_from`] to the 256-bit tier,
    /// which its token includes, in its masked instance.
    #[inline(always)]
    pub fn for_message(self, kernel: Kernel, bytes: usize) -> TierToken {
        match self {
            TierToken::Avx512(token) if bytes < zmm_from(kernel) => {
                TierToken::VaesMasked(token.ymm())
            }
            token => token,
        }
    }

    /// Whether the stitched loops (AES-GCM, the AES-GCM-SIV open) multiply each hashed block by its
    /// power schoolbook, four multiplications, rather than by Karatsuba's three plus a shuffle and
    /// an XOR for the middle input (`field::kernels::accumulate_schoolbook`): on the ZMM tier of
    /// Intel CPUs. There every 512-bit multiply, shuffle and XOR runs on port 0 or 5, and the
    /// stitched AES-GCM loop is bound by those two ports: measured on an Intel Xeon, schoolbook
    /// took 0.89-0.94x Karatsuba's time for the AES-GCM seal of 2 to 64 KiB, while Zen 4 and Zen
    /// 5 spend more on the fourth multiplication than on the middle input (1.09x on Zen 4; the
    /// runs and the llvm-mca models: docs/measurements/2026-11-29-intel-xeon-avx512.md). The
    /// caller picks the kernel's instance with it, once per message: the two are
    /// separate functions (in a debug build each instance's frame is about a megabyte, and two in
    /// one function outgrew a thread's 2 MiB stack).
    #[inline(always)]
    pub fn schoolbook_stitched(self) -> bool {
        matches!(self, TierToken::Avx512(_)) && schoolbook_stitched()
    }
}

/// Loads 16 bytes into an XMM register (SSE2, part of the x86-64 baseline).
#[inline(always)]
pub fn load_block(bytes: &[u8; 16]) -> core::arch::x86_64::__m128i {
    // SAFETY: the reference covers 16 readable bytes and MOVDQU has no alignment requirement.
    unsafe { core::arch::x86_64::_mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// [`load_last_partial`](crate::cpu::partial::load_last_partial) on a CPU with AVX-512: one load of
/// the partial block's bytes under a byte mask (VMOVDQU8 with zeroing) at every length, no branch
/// and no shuffle. With it, AVX-512 keys sealed messages of 1 to 47 bytes with 0 to 12 bytes of
/// AAD, where the unmasked code branches on the length's bits, in 0.85x the time (Zen 5; the
/// runs: docs/measurements/2026-11-27-zen5-avx512.md).
#[inline(always)]
pub fn load_last_partial_masked(_: Avx512, data: &[u8]) -> core::arch::x86_64::__m128i {
    let start = data.len() - data.len() % 16;
    let mask = partial_mask(data.len());
    // SAFETY: the token proves AVX512BW and AVX512VL; the mask selects the bytes from `start`
    // to the end of `data`, and a masked load touches no byte the mask leaves out.
    unsafe { core::arch::x86_64::_mm_maskz_loadu_epi8(mask, data[start..].as_ptr().cast()) }
}

/// [`store_last_partial`](crate::cpu::partial::store_last_partial) on a CPU with AVX-512: one
/// store of the partial block's bytes under a byte mask (see [`load_last_partial_masked`]).
#[inline(always)]
pub fn store_last_partial_masked(_: Avx512, block: core::arch::x86_64::__m128i, data: &mut [u8]) {
    let start = data.len() - data.len() % 16;
    let mask = partial_mask(data.len());
    let target = data[start..].as_mut_ptr().cast();
    // SAFETY: as in `load_last_partial_masked`: the store writes exactly the bytes from
    // `start` to the end of `data`.
    unsafe { core::arch::x86_64::_mm_mask_storeu_epi8(target, mask, block) }
}

/// The byte mask of the partial last block of `len` bytes: its low `len % 16` bits set.
#[inline(always)]
fn partial_mask(len: usize) -> u16 {
    ((1u32 << (len % 16)) - 1) as u16
}

/// A 128-bit constant: bit i of `value` is bit i of the block (byte i is bits 8i..8i+8).
#[inline(always)]
pub fn block_from(value: u128) -> core::arch::x86_64::__m128i {
    // Two general-register moves and an unpack, not a store and a reload: a 16-byte load
    // from two 8-byte stores cannot be forwarded and would stall until they retire.
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe { core::arch::x86_64::_mm_set_epi64x((value >> 64) as i64, value as i64) }
}

/// Stores an XMM register as 16 bytes (SSE2, part of the x86-64 baseline).
#[inline(always)]
pub fn store_block(value: core::arch::x86_64::__m128i) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` covers 16 writable bytes and MOVDQU has no alignment requirement.
    unsafe { core::arch::x86_64::_mm_storeu_si128(bytes.as_mut_ptr().cast(), value) };
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::partial;

    /// The masked loads and stores of a partial block give what the overlapping and
    /// piecewise ones give, at every partial length within three blocks, and write no byte
    /// after the data.
    #[test]
    fn masked_partial_blocks_match_the_unmasked_ones() {
        let (Some(aesni), Some(avx512)) = (Aesni::get(), Avx512::get()) else {
            return;
        };
        let bytes: [u8; 48] = core::array::from_fn(|i| i as u8 + 1);
        let block = block_from(0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100);
        for len in (1..48).filter(|len| len % 16 != 0) {
            let data = &bytes[..len];
            let loaded = store_block(load_last_partial_masked(avx512, data));
            let unmasked = store_block(partial::load_last_partial(aesni, data));
            assert_eq!(loaded, unmasked, "{len}");
            let (mut masked, mut unmasked) = ([0x55u8; 64], [0x55u8; 64]);
            store_last_partial_masked(avx512, block, &mut masked[..len]);
            partial::store_last_partial(aesni, block, &mut unmasked[..len]);
            assert_eq!(masked, unmasked, "{len}");
        }
    }

    /// CPUID leaf 1's EAX of known CPUs: the families and the downclocking list read them
    /// as their vendors document.
    #[test]
    #[cfg(not(miri))]
    fn families_and_models_decode() {
        // Zen 3 (Milan), Zen 4 (Genoa), Zen 5 (Turin), Cascade Lake, Sapphire Rapids.
        let known = [
            (0x00A0_0F11, 0x19, false),
            (0x00A1_0F11, 0x19, false),
            (0x00B0_0F21, 0x1A, false),
            (0x0005_0657, 6, true),
            (0x0008_06F8, 6, false),
        ];
        for (eax, expected_family, downclocks) in known {
            assert_eq!(family(eax), expected_family, "{eax:#x}");
            assert_eq!(zmm_downclocks(eax), downclocks, "{eax:#x}");
        }
    }
}
