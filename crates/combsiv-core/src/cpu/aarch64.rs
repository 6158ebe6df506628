//! AArch64: the ARMv8 crypto extensions (AESE/AESD/AESMC/AESIMC and PMULL), detected once,
//! and the SHA3 extension's three-way XOR (EOR3) where the core has it.
//!
//! With `std`, detection asks the OS (`is_aarch64_feature_detected!`: `aes` covers
//! AESE..AESIMC and PMULL/PMULL2, FEAT_AES with FEAT_PMULL; `sha3` covers EOR3 and BCAX);
//! without it, or under Miri (which has no auxiliary vector to ask), what the build enables
//! statically.
//!
//! One backend, [`Backend::Armv8`], has two tiers that differ only in what the compiler may
//! emit: [`Armv8`] and [`Armv8Sha3`] run the same kernels, and the instance compiled with
//! `sha3` enabled turns each `a ^ b ^ c` of the POLYVAL sums and the counter-mode output into
//! one EOR3 (LLVM's instruction selection does it; no kernel names the instruction). Neoverse
//! V1/V2 and Apple cores have it, Neoverse N1 and Cortex-A72 do not.

#![allow(
    unsafe_code,
    reason = "AArch64 intrinsics; each unsafe block says why it is sound"
)]

pub mod tiers;

use core::arch::aarch64::*;

use crate::cpu::Backend;

/// One AES block in a NEON register.
pub type Block = uint8x16_t;
/// The narrow tier: one block per register (both AArch64 tiers are narrow).
pub type Narrow = Armv8;

/// Registers per loop iteration: eight states, a round key and a data register fit the 32
/// NEON registers with room for the hash, and eight independent AESE/AESMC pairs cover the
/// latency x throughput of the cores we target (Neoverse V1: latency 2, four pipes).
pub const STRIDE: usize = 8;
/// Blocks per register of the widest AArch64 tier.
pub const MAX_BLOCKS: usize = 1;
/// Registers of messages per group of `seal_batch`/`open_batch`.
#[cfg(feature = "alloc")]
pub const BATCH_GROUP: usize = 4;
/// The most POLYVAL blocks of a message in a batch group on any AArch64 tier.
pub const MAX_BATCH_GROUP_BLOCKS: usize = 24;
/// Whether a batch group hashes each message where it lies, one message after another,
/// rather than through rows that line the group's blocks up: 489 instructions a 64-byte
/// message of `seal_batch` against 546 (qemu count).
#[cfg(feature = "alloc")]
pub const BATCH_HASHES_BY_LANE: bool = true;

/// Proof that the CPU has the ARMv8 AES and PMULL instructions, and EOR3 too if `EOR3`:
/// exactly the features of `#[target_feature(enable = "neon,aes")]`, or of
/// `"neon,aes,sha3"`. Only [`Neon::get`] makes one from nothing.
#[derive(Clone, Copy, Debug)]
pub struct Neon<const EOR3: bool>(());

/// The ARMv8 AES and PMULL instructions.
pub type Armv8 = Neon<false>;
/// The ARMv8 AES and PMULL instructions and the SHA3 extension's EOR3.
pub type Armv8Sha3 = Neon<true>;

impl<const EOR3: bool> Neon<EOR3> {
    pub fn get() -> Option<Neon<EOR3>> {
        let features = Features::detected();
        (features.aes && (features.sha3 || !EOR3)).then_some(Neon(()))
    }
}

/// What the CPU has of the extensions the tiers use.
struct Features {
    aes: bool,
    sha3: bool,
}

impl Features {
    #[cfg(all(feature = "std", not(miri)))]
    fn detected() -> Features {
        Features {
            aes: std::arch::is_aarch64_feature_detected!("aes"),
            sha3: std::arch::is_aarch64_feature_detected!("sha3"),
        }
    }

    #[cfg(any(not(feature = "std"), miri))]
    fn detected() -> Features {
        Features {
            aes: cfg!(target_feature = "aes"),
            sha3: cfg!(target_feature = "sha3"),
        }
    }
}

/// The AArch64 tiers, declared once, as x86's are (`x86_tiers!`): one backend, `armv8`, of
/// two tiers, without and with EOR3.
#[doc(hidden)]
#[macro_export]
macro_rules! aarch64_tiers {
    ([$($callback:tt)*] { $($input:tt)* }) => {
        $($callback)*! { $($input)* tiers: [
            /// 128-bit NEON registers, one block each.
            Armv8($crate::cpu::aarch64::Armv8) = Armv8, "neon,aes";
            /// The same, compiled with EOR3.
            Armv8Sha3($crate::cpu::aarch64::Armv8Sha3) = Armv8, "neon,aes,sha3";
        ] }
    };
}
pub use crate::aarch64_tiers as tiers;

crate::cpu::tiers!([crate::declare_tier_token] {});

impl TierToken {
    /// Whether the stitched loops multiply schoolbook rather than by Karatsuba: never here
    /// (PMULL is the scarce unit on Neoverse N1; see x86's `TierToken::schoolbook_stitched`).
    #[inline(always)]
    pub fn schoolbook_stitched(self) -> bool {
        false
    }

    /// The tier of a backend, if it is an AArch64 tier and this CPU has it: `armv8` is the
    /// EOR3 tier where the CPU has the SHA3 extension.
    pub fn for_backend(backend: Backend) -> Option<TierToken> {
        match backend {
            Backend::Armv8 => Armv8Sha3::get()
                .map(TierToken::Armv8Sha3)
                .or_else(|| Armv8::get().map(TierToken::Armv8)),
            _ => None,
        }
    }

    /// The tier that runs one message through a kernel: on AArch64 always this one.
    #[inline(always)]
    pub fn for_message(self, _: crate::cpu::Kernel, _: usize) -> TierToken {
        self
    }
}

/// Loads 16 bytes into a NEON register (NEON is part of the AArch64 baseline).
#[inline(always)]
pub fn load_block(bytes: &[u8; 16]) -> uint8x16_t {
    // SAFETY: the reference covers 16 readable bytes; LD1 has no alignment requirement.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

/// Stores a NEON register as 16 bytes.
#[inline(always)]
pub fn store_block(value: uint8x16_t) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` covers 16 writable bytes; ST1 has no alignment requirement.
    unsafe { vst1q_u8(bytes.as_mut_ptr(), value) };
    bytes
}

/// A 128-bit constant: bit i of `value` is bit i of the block.
#[inline(always)]
pub fn block_from(value: u128) -> uint8x16_t {
    load_block(&value.to_le_bytes())
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    /// CI runs the suite under two qemu CPU models, one with the SHA3 extension and one
    /// without, and says which through `COMBSIV_EXPECT_EOR3` (`1` or `0`): `armv8` silently
    /// running the other of its two tiers fails here.
    #[test]
    fn armv8_runs_the_eor3_tier_exactly_where_the_cpu_has_sha3() {
        let Ok(expected) = std::env::var("COMBSIV_EXPECT_EOR3") else {
            return;
        };
        let token = TierToken::for_backend(Backend::Armv8);
        assert!(token.is_some(), "no AES instructions");
        let eor3 = matches!(token, Some(TierToken::Armv8Sha3(_)));
        assert_eq!(
            eor3,
            expected.trim() == "1",
            "COMBSIV_EXPECT_EOR3={expected}"
        );
    }
}
