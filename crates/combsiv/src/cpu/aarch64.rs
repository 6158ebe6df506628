//! AArch64: the ARMv8 crypto extensions (AESE/AESD/AESMC/AESIMC and PMULL), detected once.
//!
//! With `std`, detection asks the OS (`is_aarch64_feature_detected!("aes")`, which covers
//! AESE..AESIMC and PMULL/PMULL2: FEAT_AES with FEAT_PMULL); without it, what the build
//! enables statically. Under Miri, which runs PMULL but not the AES instructions, the tier is
//! off.

#![allow(
    unsafe_code,
    reason = "AArch64 intrinsics; each unsafe block says why it is sound"
)]

pub(crate) mod tiers;

use core::arch::aarch64::*;

use zeroize::Zeroize;

pub(crate) use tiers::per_tier;

use crate::cpu::Backend;
#[cfg(feature = "alloc")]
use crate::cpu::Tier;

/// One AES block in a NEON register.
pub(crate) type Block = uint8x16_t;
/// The narrow tier: one block per register (the only AArch64 tier).
pub(crate) type Narrow = Armv8;

/// Registers per loop iteration: eight states, a round key and a data register fit the 32
/// NEON registers with room for the hash, and eight independent AESE/AESMC pairs cover the
/// latency x throughput of the cores we target (Neoverse V1: latency 2, four pipes).
pub(crate) const STRIDE: usize = 8;
/// Blocks per register of the widest AArch64 tier.
pub(crate) const MAX_BLOCKS: usize = 1;
/// Registers of messages per group of `seal_batch`/`open_batch`.
#[cfg(feature = "alloc")]
pub(crate) const BATCH_GROUP: usize = 4;
/// The most POLYVAL blocks of a message in a batch group on any AArch64 tier.
pub(crate) const MAX_BATCH_GROUP_BLOCKS: usize = 24;

/// Proof that the CPU has the ARMv8 AES and PMULL instructions: exactly the features of
/// `#[target_feature(enable = "neon,aes")]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Armv8(());

impl Armv8 {
    pub(crate) fn get() -> Option<Armv8> {
        detected().then_some(Armv8(()))
    }
}

#[cfg(all(feature = "std", not(miri)))]
fn detected() -> bool {
    std::arch::is_aarch64_feature_detected!("aes")
}

#[cfg(all(not(feature = "std"), not(miri)))]
fn detected() -> bool {
    cfg!(target_feature = "aes")
}

#[cfg(miri)]
fn detected() -> bool {
    false
}

/// The AArch64 tier a key runs on, with the token that proves it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TierToken {
    /// 128-bit NEON registers, one block each.
    Armv8(Armv8),
}

impl TierToken {
    /// The tier of a backend, if it is an AArch64 tier and this CPU has it.
    pub(crate) fn for_backend(backend: Backend) -> Option<TierToken> {
        match backend {
            Backend::Armv8 => Armv8::get().map(TierToken::Armv8),
            _ => None,
        }
    }

    /// Comb lanes one lane-kernel call runs on this tier.
    #[cfg(feature = "alloc")]
    pub(crate) fn comb_lanes(self) -> usize {
        match self {
            TierToken::Armv8(_) => <Armv8 as Tier>::COMB_LANES,
        }
    }

    /// The backend this tier is.
    pub(crate) fn backend(self) -> Backend {
        match self {
            TierToken::Armv8(_) => Backend::Armv8,
        }
    }
}

/// Loads 16 bytes into a NEON register (NEON is part of the AArch64 baseline).
#[inline(always)]
pub(crate) fn load_block(bytes: &[u8; 16]) -> uint8x16_t {
    // SAFETY: the reference covers 16 readable bytes; LD1 has no alignment requirement.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

/// Stores a NEON register as 16 bytes.
#[inline(always)]
pub(crate) fn store_block(value: uint8x16_t) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` covers 16 writable bytes; ST1 has no alignment requirement.
    unsafe { vst1q_u8(bytes.as_mut_ptr(), value) };
    bytes
}

/// A 128-bit constant: bit i of `value` is bit i of the block.
#[inline(always)]
pub(crate) fn block_from(value: u128) -> uint8x16_t {
    load_block(&value.to_le_bytes())
}

/// The partial last block of `data` (its last `data.len() % 16` bytes, 1 to 15) as the low
/// bytes of a block, the rest zero. No byte outside `data` is read.
#[inline(always)]
pub(crate) fn load_last_partial(_: Armv8, data: &[u8]) -> uint8x16_t {
    let partial = data.len() % 16;
    let mut block = [0u8; 16];
    block[..partial].copy_from_slice(&data[data.len() - partial..]);
    let value = load_block(&block);
    block.zeroize();
    value
}

/// Writes the low `data.len() % 16` bytes of `block` as the partial last block of `data`.
#[inline(always)]
pub(crate) fn store_last_partial(_: Armv8, block: uint8x16_t, data: &mut [u8]) {
    let partial = data.len() % 16;
    let len = data.len();
    let mut bytes = store_block(block);
    data[len - partial..].copy_from_slice(&bytes[..partial]);
    bytes.zeroize();
}
