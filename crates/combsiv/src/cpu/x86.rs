//! CPUID and XGETBV, read once.
//!
//! References: Intel SDM Vol. 2A, CPUID leaf 01H (ECX: bit 1 PCLMULQDQ, 9 SSSE3, 19 SSE4.1,
//! 25 AES, 27 OSXSAVE, 28 AVX) and leaf 07H sub-leaf 0 (EBX bit 5 AVX2; ECX bit 9 VAES,
//! bit 10 VPCLMULQDQ); Vol. 1 13.3: the OS must have enabled XMM and YMM state in XCR0
//! (bits 1 and 2) before any VEX-encoded instruction may run. 256-bit VAES needs only YMM
//! state, not the AVX-512 state (XCR0 bits 5-7): Zen 3 and Alder Lake have VAES without
//! AVX-512, and requiring it would deny them the fast path.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
use core::sync::atomic::{AtomicU8, Ordering};

const DETECTED: u8 = 1;
const HAS_AESNI: u8 = 2;
const HAS_VAES: u8 = 4;

fn features() -> u8 {
    static CACHE: AtomicU8 = AtomicU8::new(0);
    let cached = CACHE.load(Ordering::Relaxed);
    if cached & DETECTED != 0 {
        return cached;
    }
    let found = detect() | DETECTED;
    CACHE.store(found, Ordering::Relaxed);
    found
}

fn bit(word: u32, index: u32) -> bool {
    word >> index & 1 == 1
}

fn detect() -> u8 {
    let max_leaf = __cpuid(0).eax;
    let leaf1 = __cpuid(1);
    let aesni = bit(leaf1.ecx, 1) && bit(leaf1.ecx, 9) && bit(leaf1.ecx, 19) && bit(leaf1.ecx, 25);
    let osxsave = bit(leaf1.ecx, 27);
    let avx = bit(leaf1.ecx, 28);
    let ymm_state_enabled = osxsave && {
        // SAFETY: OSXSAVE says the OS set CR4.OSXSAVE, which makes XGETBV executable.
        let xcr0 = unsafe { read_xcr0() };
        xcr0 & 0b110 == 0b110
    };
    let (avx2, vaes, vpclmulqdq) = if max_leaf >= 7 {
        let leaf7 = __cpuid_count(7, 0);
        (bit(leaf7.ebx, 5), bit(leaf7.ecx, 9), bit(leaf7.ecx, 10))
    } else {
        (false, false, false)
    };
    let mut found = 0;
    if aesni {
        found |= HAS_AESNI;
        if avx && ymm_state_enabled && avx2 && vaes && vpclmulqdq {
            found |= HAS_VAES;
        }
    }
    found
}

#[target_feature(enable = "xsave")]
unsafe fn read_xcr0() -> u64 {
    // SAFETY: the caller checked OSXSAVE; XCR0 (register 0) always exists then.
    unsafe { _xgetbv(0) }
}

/// Proof that the CPU has AES-NI, PCLMULQDQ, SSSE3 and SSE4.1: exactly the features of
/// `#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Aesni(());

impl Aesni {
    pub(crate) fn get() -> Option<Aesni> {
        (features() & HAS_AESNI != 0).then_some(Aesni(()))
    }
}

/// Proof that the CPU has everything [`Aesni`] proves plus AVX, AVX2, VAES and VPCLMULQDQ
/// with YMM state enabled by the OS.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vaes(());

impl Vaes {
    pub(crate) fn get() -> Option<Vaes> {
        (features() & HAS_VAES != 0).then_some(Vaes(()))
    }

    /// The 128-bit subset, which the VAES feature set includes.
    pub(crate) fn aesni(self) -> Aesni {
        Aesni(())
    }
}

/// Loads 16 bytes into an XMM register (SSE2, part of the x86-64 baseline).
#[inline(always)]
pub(crate) fn load128(bytes: &[u8; 16]) -> core::arch::x86_64::__m128i {
    // SAFETY: the reference covers 16 readable bytes and MOVDQU has no alignment requirement.
    unsafe { core::arch::x86_64::_mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// Stores an XMM register as 16 bytes (SSE2, part of the x86-64 baseline).
#[inline(always)]
pub(crate) fn store128(value: core::arch::x86_64::__m128i) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` covers 16 writable bytes and MOVDQU has no alignment requirement.
    unsafe { core::arch::x86_64::_mm_storeu_si128(bytes.as_mut_ptr().cast(), value) };
    bytes
}
