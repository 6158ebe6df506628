//! POLYVAL with PCLMULQDQ on 128-bit registers.
//!
//! CPU predicate: [`Aesni`] (AES-NI, PCLMULQDQ, SSSE3, SSE4.1); every `#[target_feature]`
//! here enables exactly that set. Math: see the parent module.
//!
//! Design: up to [`MAX_POWERS`] blocks are multiplied by `H^8..H^1` (four PCLMULQDQ each,
//! schoolbook), summed unreduced, and reduced once. PCLMULQDQ has a latency of 3-7 cycles
//! and a throughput of one per cycle or better, so eight independent products keep it busy;
//! the table is eight registers, the accumulators three, leaving five of sixteen for loads.
//! The table is built per key because GCM-SIV has a fresh hash key per message: a short
//! message builds only the powers it can use.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

use crate::cpu::x86::{Aesni, load128, store128};

/// Blocks aggregated per reduction (see the module comment).
pub(crate) const MAX_POWERS: usize = 8;

#[derive(Clone)]
pub(crate) struct Key {
    /// `powers[i] = H^(i+1)` in the dot product; only the first `count` are set.
    powers: [__m128i; MAX_POWERS],
    count: usize,
}

impl Drop for Key {
    fn drop(&mut self) {
        self.powers.zeroize();
    }
}

impl Key {
    pub(crate) fn new(_: Aesni, h: &[u8; 16], blocks: usize) -> Self {
        // SAFETY: the token proves the CPU has the features `powers_of` enables.
        unsafe { powers_of(load128(h), blocks) }
    }

    pub(crate) fn absorb<const REVERSED: bool>(
        &self,
        _: Aesni,
        acc: &mut [u8; 16],
        blocks: &[[u8; 16]],
    ) {
        // SAFETY: the token proves the CPU has the features `absorb_blocks` enables.
        unsafe { absorb_blocks::<REVERSED>(self, acc, blocks) }
    }

    /// The full table of eight powers, if this key has it (fused kernels need it).
    pub(crate) fn eight_powers(&self) -> Option<&[__m128i; MAX_POWERS]> {
        (self.count == MAX_POWERS).then_some(&self.powers)
    }
}

/// H^1..H^count by a product tree of depth 3 (H^2; then H^3, H^4; then H^5..H^8 from H^4),
/// not a chain of seven dependent multiplications: GCM-SIV builds this table per message, so
/// its latency is per-message overhead.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn powers_of(h: __m128i, count: usize) -> Key {
    let count = count.clamp(1, MAX_POWERS);
    let mut powers = [_mm_setzero_si128(); MAX_POWERS];
    powers[0] = h;
    if count > 1 {
        powers[1] = dot(h, h);
    }
    if count > 2 {
        powers[2] = dot(powers[1], h);
        powers[3] = dot(powers[1], powers[1]);
    }
    if count > 4 {
        let h4 = powers[3];
        for i in 4..MAX_POWERS {
            powers[i] = dot(h4, powers[i - 4]);
        }
    }
    Key { powers, count }
}

/// The unreduced 256-bit product `a * b` as (low, middle, high) partial products, schoolbook.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn mul_unreduced(a: __m128i, b: __m128i) -> [__m128i; 3] {
    let low = _mm_clmulepi64_si128::<0x00>(a, b);
    let high = _mm_clmulepi64_si128::<0x11>(a, b);
    let middle = _mm_xor_si128(
        _mm_clmulepi64_si128::<0x01>(a, b),
        _mm_clmulepi64_si128::<0x10>(a, b),
    );
    [low, middle, high]
}

/// Montgomery reduction of `high:low` (with the middle product folded in) by `x^128`.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn reduce([low, middle, high]: [__m128i; 3]) -> __m128i {
    let low = _mm_xor_si128(low, _mm_slli_si128::<8>(middle));
    let high = _mm_xor_si128(high, _mm_srli_si128::<8>(middle));
    // The high 64 bits hold c = x^63 + x^62 + x^57; selector 0x10 multiplies low64(a) by it.
    let c = _mm_set_epi64x(0xC200_0000_0000_0000u64 as i64, 0);
    // Fold word 0: swap the words so v0 sits where v0 * x^128 lands, add v0 * c at word 1.
    let fold = _mm_clmulepi64_si128::<0x10>(low, c);
    let low = _mm_xor_si128(_mm_shuffle_epi32::<0x4E>(low), fold);
    // Fold word 1 the same way; the result is what remains above x^128.
    let fold = _mm_clmulepi64_si128::<0x10>(low, c);
    let low = _mm_xor_si128(_mm_shuffle_epi32::<0x4E>(low), fold);
    _mm_xor_si128(low, high)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn dot(a: __m128i, b: __m128i) -> __m128i {
    reduce(mul_unreduced(a, b))
}

/// Bytes 15..0: reverses a block, turning a GHASH block into a POLYVAL one.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn byte_reverse(block: __m128i) -> __m128i {
    let reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    _mm_shuffle_epi8(block, reverse)
}

/// S' = (S + X_1)·H^n + X_2·H^(n-1) + ... + X_n·H^1 for the n = `blocks.len()` <= 8 blocks,
/// reduced once. Blocks are loaded as they are multiplied (byte-reversed first for GHASH), so
/// that a caller with eight keystream blocks in registers does not run out of registers.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn aggregate<const REVERSED: bool>(
    s: __m128i,
    blocks: &[[u8; 16]],
    powers: &[__m128i; MAX_POWERS],
) -> __m128i {
    let mut sum = [_mm_setzero_si128(); 3];
    for (i, block) in blocks.iter().enumerate() {
        let mut x = load128(block);
        if REVERSED {
            x = byte_reverse(x);
        }
        if i == 0 {
            x = _mm_xor_si128(x, s);
        }
        let product = mul_unreduced(x, powers[blocks.len() - 1 - i]);
        for (total, part) in sum.iter_mut().zip(product) {
            *total = _mm_xor_si128(*total, part);
        }
    }
    reduce(sum)
}

/// [`aggregate`] for exactly eight blocks: the unrolled, bounds-check-free hot loop.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn aggregate8<const REVERSED: bool>(
    s: __m128i,
    blocks: &[[u8; 16]; MAX_POWERS],
    powers: &[__m128i; MAX_POWERS],
) -> __m128i {
    let mut sum = [_mm_setzero_si128(); 3];
    for i in 0..MAX_POWERS {
        accumulate_block::<REVERSED>(&mut sum, s, blocks, i, powers);
    }
    reduce(sum)
}

/// One step of [`aggregate8`]: adds block `i` (with `s` added to block 0) times H^(8-i) to
/// the unreduced `sum`. Fused kernels call it between AES rounds.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn accumulate_block<const REVERSED: bool>(
    sum: &mut [__m128i; 3],
    s: __m128i,
    blocks: &[[u8; 16]; MAX_POWERS],
    i: usize,
    powers: &[__m128i; MAX_POWERS],
) {
    let mut x = load128(&blocks[i]);
    if REVERSED {
        x = byte_reverse(x);
    }
    if i == 0 {
        x = _mm_xor_si128(x, s);
    }
    let product = mul_unreduced(x, powers[MAX_POWERS - 1 - i]);
    for (total, part) in sum.iter_mut().zip(product) {
        *total = _mm_xor_si128(*total, part);
    }
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn absorb_blocks<const REVERSED: bool>(key: &Key, acc: &mut [u8; 16], blocks: &[[u8; 16]]) {
    *acc = store128(absorb_whole::<REVERSED>(key, load128(acc), blocks));
}

/// Absorbs whole blocks into the running state `s`, eight per reduction.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn absorb_whole<const REVERSED: bool>(key: &Key, mut s: __m128i, blocks: &[[u8; 16]]) -> __m128i {
    let mut rest = blocks;
    if key.count == MAX_POWERS {
        let (groups, remainder) = blocks.as_chunks::<MAX_POWERS>();
        for group in groups {
            s = aggregate8::<REVERSED>(s, group, &key.powers);
        }
        rest = remainder;
    }
    for group in rest.chunks(key.count) {
        s = aggregate::<REVERSED>(s, group, &key.powers);
    }
    s
}

/// Absorbs `data` zero-padded to whole blocks into the running state `s` (POLYVAL order).
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn absorb_padded(key: &Key, s: __m128i, data: &[u8]) -> __m128i {
    let (blocks, tail) = data.as_chunks::<16>();
    let mut s = absorb_whole::<false>(key, s, blocks);
    if !tail.is_empty() {
        let mut last = [0u8; 16];
        last[..tail.len()].copy_from_slice(tail);
        s = aggregate::<false>(s, &[last], &key.powers);
        last.zeroize();
    }
    s
}
