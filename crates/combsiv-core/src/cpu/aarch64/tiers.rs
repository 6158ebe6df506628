//! The AArch64 tiers: one AES block per 128-bit NEON register, on the ARMv8 crypto
//! extensions, with or without EOR3 (the same code; see `cpu/aarch64.rs`).
//!
//! The [`Tier`] operations follow x86's AESENC convention (ShiftRows, SubBytes, MixColumns,
//! then the round key): AESE adds its key first, so a round here is AESE with a zero key,
//! AESMC, then the XOR with the round key. LLVM folds that XOR into the next round's AESE
//! (`aese(x ^ k, 0)` is `aese(x, k)`), so a chain of rounds compiles to adjacent AESE/AESMC
//! pairs, which the cores fuse, and one XOR at the end. PMULL/PMULL2 give the carry-less
//! products.
//!
//! Miri runs the plain NEON operations but not the AES instructions, nor (before its
//! June 2026 versions) PMULL: under Miri the AES rounds are RustCrypto's software rounds
//! (`aes::hazmat`) and the carry-less products the portable backend's, so that Miri checks
//! the POLYVAL, counter-mode and fused code of this tier.

#![allow(
    unsafe_code,
    reason = "AArch64 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::aarch64::*;

use super::{Armv8, Neon};
#[cfg(feature = "alloc")]
use crate::cpu::TierToken;
use crate::cpu::{Tier, partial};

/// Reinterprets 16 bytes as two 64-bit lanes.
#[inline(always)]
fn u64s(a: uint8x16_t) -> uint64x2_t {
    // SAFETY: NEON is part of the AArch64 baseline; a reinterpretation changes no bits.
    unsafe { vreinterpretq_u64_u8(a) }
}

/// Reinterprets two 64-bit lanes as 16 bytes.
#[inline(always)]
fn bytes(a: uint64x2_t) -> uint8x16_t {
    // SAFETY: as for `u64s`.
    unsafe { vreinterpretq_u8_u64(a) }
}

/// One AES round in x86's order: AESE with a zero key (ShiftRows, SubBytes), AESMC, then
/// the round key.
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
    veorq_u8(vaesmcq_u8(vaeseq_u8(state, vdupq_n_u8(0))), key)
}

/// The last round: no MixColumns.
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn last_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
    veorq_u8(vaeseq_u8(state, vdupq_n_u8(0)), key)
}

/// One round of the equivalent inverse cipher: AESD with a zero key, AESIMC, the key.
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn inverse_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
    veorq_u8(vaesimcq_u8(vaesdq_u8(state, vdupq_n_u8(0))), key)
}

/// The last round of the equivalent inverse cipher.
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn inverse_last_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
    veorq_u8(vaesdq_u8(state, vdupq_n_u8(0)), key)
}

/// InvMixColumns.
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn inverse_mix(key: uint8x16_t) -> uint8x16_t {
    vaesimcq_u8(key)
}

/// The same five operations in software, for Miri: RustCrypto's `cipher_round` is x86's
/// AESENC and `equiv_inv_cipher_round` its AESDEC; a last round is a round with a zero key
/// whose MixColumns (or InvMixColumns) is undone, then the key. They keep the instructions'
/// `#[target_feature]`, so that Miri checks the callers hold the token.
#[cfg(miri)]
mod software {
    use aes::hazmat;
    use core::arch::aarch64::uint8x16_t;

    use crate::cpu::{load_block, store_block};

    fn apply(state: uint8x16_t, f: impl Fn(&mut aes::Block)) -> uint8x16_t {
        let mut block = aes::Block::from(store_block(state));
        f(&mut block);
        load_block(&block.into())
    }

    fn xor(a: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        let (a, key) = (store_block(a), store_block(key));
        load_block(&core::array::from_fn(|i| a[i] ^ key[i]))
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        let key = aes::Block::from(store_block(key));
        apply(state, |b| hazmat::cipher_round(b, &key))
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn last_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        let state = apply(state, |b| {
            hazmat::cipher_round(b, &Default::default());
            hazmat::inv_mix_columns(b);
        });
        xor(state, key)
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn inverse_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        let key = aes::Block::from(store_block(key));
        apply(state, |b| hazmat::equiv_inv_cipher_round(b, &key))
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn inverse_last_round(state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        let state = apply(state, |b| {
            hazmat::equiv_inv_cipher_round(b, &Default::default());
            hazmat::mix_columns(b);
        });
        xor(state, key)
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn inverse_mix(key: uint8x16_t) -> uint8x16_t {
        apply(key, hazmat::inv_mix_columns)
    }
}
#[cfg(miri)]
use software::{inverse_last_round, inverse_mix, inverse_round, last_round, round};

/// The 64x64-bit carry-less product of `x` and `y` (PMULL).
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn carryless(x: u64, y: u64) -> uint8x16_t {
    vreinterpretq_u8_p128(vmull_p64(x, y))
}

/// The carry-less product of 64-bit half `A` of `a` and half `B` of `b` (0 low, 1 high), by
/// PMULL on the two halves moved to general registers.
#[inline(always)]
fn product_of_halves<const A: i32, const B: i32>(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
    let (a, b) = (u64s(a), u64s(b));
    // SAFETY: NEON is part of the AArch64 baseline; the lane indices are 0 or 1.
    let (x, y) = unsafe { (vgetq_lane_u64::<A>(a), vgetq_lane_u64::<B>(b)) };
    // SAFETY: the tier's token, which every caller holds, proves PMULL.
    unsafe { carryless(x, y) }
}

/// The product of the high halves of `a` and `b` (PMULL2): written as such, so that LLVM
/// does not move the halves into low lanes first (a DUP or a replicating load per product,
/// on the SIMD pipes the AES rounds need).
#[target_feature(enable = "neon,aes")]
#[inline]
#[cfg(not(miri))]
fn carryless_high(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
    vreinterpretq_u8_p128(vmull_high_p64(
        vreinterpretq_p64_u8(a),
        vreinterpretq_p64_u8(b),
    ))
}

/// The same product under Miri: the portable backend's.
#[target_feature(enable = "neon,aes")]
#[cfg(miri)]
fn carryless_high(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
    let (a, b) = (u64s(a), u64s(b));
    carryless(vgetq_lane_u64::<1>(a), vgetq_lane_u64::<1>(b))
}

/// The same product under Miri, whose toolchain here does not run PMULL: the portable
/// backend's constant-time product.
#[target_feature(enable = "neon,aes")]
#[cfg(miri)]
fn carryless(x: u64, y: u64) -> uint8x16_t {
    crate::cpu::block_from(crate::clmul::clmul64(x, y))
}

const _: () = assert!(<Armv8 as Tier>::BATCH_GROUP_BLOCKS <= super::MAX_BATCH_GROUP_BLOCKS);

impl<const EOR3: bool> Tier for Neon<EOR3> {
    type Reg = uint8x16_t;
    type Bytes = [u8; 16];
    type Single = Self;
    const BLOCKS: usize = 1;
    const HASH_LAG: usize = 2;
    const HASH_OUTPUT_SHIFTED: bool = true;
    const GCM_NARROW_BLOCKS: usize = 0;
    const SIV_SHORT_CHUNKS: usize = 3;
    const BATCH_GROUP_BLOCKS: usize = 24;
    const UNROLL_ROUNDS: bool = true;

    #[inline(always)]
    fn narrow(self) -> Armv8 {
        // Every core with EOR3 has the AES instructions: the token without EOR3 holds.
        Neon(())
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn token(self) -> TierToken {
        // `self` proves the features of `Neon<EOR3>`, so the token of the same type holds.
        match EOR3 {
            false => TierToken::Armv8(Neon(())),
            true => TierToken::Armv8Sha3(Neon(())),
        }
    }

    #[inline(always)]
    fn single(self) -> Self {
        self
    }

    #[inline(always)]
    fn load_last_partial(self, data: &[u8]) -> uint8x16_t {
        partial::load_last_partial(self, data)
    }

    #[inline(always)]
    fn store_last_partial(self, block: uint8x16_t, data: &mut [u8]) {
        partial::store_last_partial(self, block, data);
    }

    #[inline(always)]
    fn registers(data: &[u8]) -> (&[[u8; 16]], &[u8]) {
        data.as_chunks()
    }

    #[inline(always)]
    fn registers_mut(data: &mut [u8]) -> (&mut [[u8; 16]], &mut [u8]) {
        data.as_chunks_mut()
    }

    #[inline(always)]
    fn load(self, bytes: &[u8; 16]) -> uint8x16_t {
        super::load_block(bytes)
    }

    #[inline(always)]
    fn store(self, reg: uint8x16_t) -> [u8; 16] {
        super::store_block(reg)
    }

    /// The whole entry, loaded once. Where only each half is used apart (a power's low half
    /// by PMULL, its high half by PMULL2), LLVM would otherwise load the halves apart, the
    /// high one by LD1R, which takes a SIMD pipe as well as a load pipe: 8 more SIMD
    /// instructions per stitched stride of 8 blocks.
    #[inline(always)]
    fn load_blocks(self, blocks: &[uint8x16_t], first: usize) -> uint8x16_t {
        #[cfg_attr(miri, allow(unused_mut, reason = "Miri runs no assembly"))]
        let mut entry = blocks[first];
        // SAFETY: the block is empty: it reads and writes only the register it is given.
        #[cfg(not(miri))]
        unsafe {
            core::arch::asm!(
                "/* {0:v} */",
                inout(vreg) entry,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        entry
    }

    #[inline(always)]
    fn store_blocks(self, reg: uint8x16_t, blocks: &mut [uint8x16_t], first: usize) {
        blocks[first] = reg;
    }

    #[inline(always)]
    fn gather(self, block: impl Fn(usize) -> uint8x16_t) -> uint8x16_t {
        block(0)
    }

    #[inline(always)]
    fn block(self, reg: uint8x16_t, _: usize) -> uint8x16_t {
        reg
    }

    #[inline(always)]
    fn sum_blocks(self, reg: uint8x16_t) -> uint8x16_t {
        reg
    }

    #[inline(always)]
    fn broadcast(self, block: uint8x16_t) -> uint8x16_t {
        block
    }

    #[inline(always)]
    fn zero(self) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { vdupq_n_u8(0) }
    }

    #[inline(always)]
    fn xor(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { veorq_u8(a, b) }
    }

    #[inline(always)]
    fn or(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { vorrq_u8(a, b) }
    }

    #[inline(always)]
    fn and_not(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline. BIC computes `b & !a`.
        unsafe { vbicq_u8(b, a) }
    }

    #[inline(always)]
    fn add32(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { vreinterpretq_u8_u32(vaddq_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b))) }
    }

    #[inline(always)]
    fn shuffle_bytes(self, a: uint8x16_t, indices: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline. TBL gives zero for an index of 16 or
        // more, so the indices with the top bit set that PSHUFB zeroes are zero here too.
        unsafe { vqtbl1q_u8(a, indices) }
    }

    #[inline(always)]
    fn swap_halves(self, a: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { vextq_u8::<8>(a, a) }
    }

    #[inline(always)]
    fn low_halves(self, low: uint8x16_t, high: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        bytes(unsafe { vzip1q_u64(u64s(low), u64s(high)) })
    }

    #[inline(always)]
    fn shift_bytes_up<const BYTES: i32>(self, a: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline. EXT of zero and `a` from byte
        // 16 - BYTES: the low BYTES bytes zero, then `a`.
        unsafe {
            let zero = vdupq_n_u8(0);
            match BYTES {
                4 => vextq_u8::<12>(zero, a),
                8 => vextq_u8::<8>(zero, a),
                _ => unreachable!("key expansion shifts by 4 and 8 bytes only"),
            }
        }
    }

    #[inline(always)]
    fn broadcast_word_3(self, a: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is part of the AArch64 baseline.
        unsafe { vreinterpretq_u8_u32(vdupq_laneq_u32::<3>(vreinterpretq_u32_u8(a))) }
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn transpose_words(self, [a, b, c, d]: [uint8x16_t; 4]) -> [uint8x16_t; 4] {
        // SAFETY: NEON is part of the AArch64 baseline. TRN1/TRN2 on words interleave the
        // even (odd) words of a and b, and of c and d; on doublewords, those pairs' halves.
        unsafe {
            let words = |a| vreinterpretq_u32_u8(a);
            let pairs = |a| vreinterpretq_u64_u32(a);
            let ab_even = pairs(vtrn1q_u32(words(a), words(b)));
            let ab_odd = pairs(vtrn2q_u32(words(a), words(b)));
            let cd_even = pairs(vtrn1q_u32(words(c), words(d)));
            let cd_odd = pairs(vtrn2q_u32(words(c), words(d)));
            [
                bytes(vtrn1q_u64(ab_even, cd_even)),
                bytes(vtrn1q_u64(ab_odd, cd_odd)),
                bytes(vtrn2q_u64(ab_even, cd_even)),
                bytes(vtrn2q_u64(ab_odd, cd_odd)),
            ]
        }
    }

    /// ST4 (multiple structures) stores the four registers' words interleaved, word i of
    /// each in turn: block i of `out` gets word i of `a`, `b`, `c` and `d`, which is the
    /// transpose, in one instruction where the transpose and its stores are twelve.
    /// (Miri runs no ST4: it takes the transpose.)
    #[cfg(all(feature = "alloc", not(miri)))]
    #[inline(always)]
    fn store_transposed_words(self, [a, b, c, d]: [uint8x16_t; 4], out: &mut [uint8x16_t; 4]) {
        let out = core::ptr::from_mut(out).cast::<u32>();
        // SAFETY: NEON is part of the AArch64 baseline. `out` is four registers' storage, 64
        // writable bytes aligned for u32, and ST4 writes 64 bytes there.
        unsafe {
            let rows = uint32x4x4_t(
                vreinterpretq_u32_u8(a),
                vreinterpretq_u32_u8(b),
                vreinterpretq_u32_u8(c),
                vreinterpretq_u32_u8(d),
            );
            vst4q_u32(out, rows);
        }
    }

    #[inline(always)]
    fn aes_round(self, state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves the AES instructions.
        unsafe { round(state, key) }
    }

    #[inline(always)]
    fn aes_last_round(self, state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves the AES instructions.
        unsafe { last_round(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_round(self, state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves the AES instructions.
        unsafe { inverse_round(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_last_round(self, state: uint8x16_t, key: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves the AES instructions.
        unsafe { inverse_last_round(state, key) }
    }

    #[inline(always)]
    fn aes_inverse_mix_columns(self, key: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves the AES instructions.
        unsafe { inverse_mix(key) }
    }

    /// Nothing: an empty `asm!` holding each register after a round, as on x86, would also
    /// keep LLVM from folding the round key's XOR into the next AESE (28 instead of 17
    /// instructions per counter-mode round), and with 32 NEON registers the scheduler keeps
    /// the eight states of a stride interleaved by itself.
    #[inline(always)]
    fn pin(self, _: &mut uint8x16_t) {}

    #[inline(always)]
    fn mul_low_halves(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        product_of_halves::<0, 0>(a, b)
    }

    #[inline(always)]
    fn mul_high_halves(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: the token proves PMULL2.
        unsafe { carryless_high(a, b) }
    }

    #[inline(always)]
    fn mul_high_by_low(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        product_of_halves::<1, 0>(a, b)
    }

    #[inline(always)]
    fn mul_low_by_high(self, a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        product_of_halves::<0, 1>(a, b)
    }
}
