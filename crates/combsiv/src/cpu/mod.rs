//! Which instruction sets this CPU has, decided once.
//!
//! Detection runs on first use and is cached. What it finds is handed out as zero-sized
//! tokens (x86's `Aesni`, `Vaes` and `Avx512`, AArch64's `Armv8` and `Armv8Sha3`): a kernel whose
//! `#[target_feature]` list is exactly a token's feature set takes the token as an argument,
//! so holding one is the proof that the kernel's instructions exist. The [`Backend`] of a key
//! is chosen when the key is created, never per block.

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg(vector_tiers)]
mod partial;
#[cfg(vector_tiers)]
mod tier;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

#[cfg(all(target_arch = "aarch64", feature = "alloc"))]
pub(crate) use aarch64::{BATCH_GROUP, BATCH_HASHES_BY_LANE, MAX_BATCH_GROUP_BLOCKS};
#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::{
    Block, MAX_BLOCKS, Narrow, STRIDE, TierToken, block_from, load_block, per_tier, store_block,
};
#[cfg(vector_tiers)]
pub(crate) use tier::Tier;
#[cfg(all(target_arch = "x86_64", feature = "alloc"))]
pub(crate) use x86::{BATCH_GROUP, BATCH_HASHES_BY_LANE, MAX_BATCH_GROUP_BLOCKS};
/// The architecture's tiers: tokens, the narrow tier and its block, the stride, the
/// instantiation macro, and the loads and stores of single blocks.
#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{
    Block, MAX_BLOCKS, Narrow, STRIDE, TierToken, block_from, load_block, per_tier, store_block,
};

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};

use crate::Error;

/// Runs `f` once for each choice of products the stitched loops can make on this
/// architecture (x86's ZMM tier: Karatsuba, then schoolbook; see `x86::schoolbook_stitched`).
/// `f` learns whether the choice is schoolbook.
#[cfg(all(test, feature = "std"))]
pub(crate) fn for_each_stitched_product(mut f: impl FnMut(bool)) {
    #[cfg(target_arch = "x86_64")]
    for schoolbook in [false, true] {
        x86::with_schoolbook_stitched(schoolbook, || f(schoolbook));
    }
    #[cfg(not(target_arch = "x86_64"))]
    f(false);
}

/// Runs `f` with each message on the tier `TierToken::for_message` picks, then (on x86) with
/// every message on the key's own tier, so that a CPU on which the widest tier takes only
/// long messages still runs its kernels at every length.
#[cfg(all(test, feature = "std"))]
pub(crate) fn with_and_without_length_dispatch(mut f: impl FnMut()) {
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
    /// The library's own tests only: a tier of two blocks per register on AES-NI.
    #[cfg(test)]
    Pair,
}

impl Backend {
    /// Every backend, slowest first.
    #[cfg(not(test))]
    pub const ALL: [Backend; 5] = [
        Backend::Portable,
        Backend::Armv8,
        Backend::Aesni,
        Backend::Vaes,
        Backend::Avx512,
    ];
    /// Every backend, slowest first (and the test-only tier).
    #[cfg(test)]
    pub const ALL: [Backend; 6] = [
        Backend::Portable,
        Backend::Armv8,
        Backend::Pair,
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
            #[cfg(test)]
            Backend::Pair => "pair",
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
            #[cfg(test)]
            5 => Backend::Pair,
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
pub(crate) enum Kernel {
    SivSeal,
    SivOpen,
    /// AES-GCM's one pass, either direction.
    Gcm,
}

/// The instruction set a key's kernels run on, with the token that proves it: the portable
/// code, or a vector tier, whose kernels are written once over [`Tier`] (`cpu/tier.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Isa {
    Portable,
    #[cfg(vector_tiers)]
    Vector(TierToken),
}

impl Isa {
    /// The instruction set of [`Backend::detected`].
    pub(crate) fn detected() -> Isa {
        // `detected` only returns available backends; the fallback keeps that a non-panic.
        Isa::for_backend(Backend::detected()).unwrap_or(Isa::Portable)
    }

    pub(crate) fn for_backend(backend: Backend) -> Result<Isa, Error> {
        if backend == Backend::Portable {
            return Ok(Isa::Portable);
        }
        #[cfg(vector_tiers)]
        if let Some(tier) = TierToken::for_backend(backend) {
            return Ok(Isa::Vector(tier));
        }
        Err(Error::BackendUnavailable)
    }

    /// The backend this instruction set is.
    pub(crate) fn backend(self) -> Backend {
        match self {
            Isa::Portable => Backend::Portable,
            #[cfg(vector_tiers)]
            Isa::Vector(tier) => tier.backend(),
        }
    }
}
