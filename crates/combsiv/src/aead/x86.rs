//! Fused AEAD kernels on AES-NI and PCLMULQDQ (128-bit registers).
//!
//! CPU predicate: [`Aesni`] (AES-NI, PCLMULQDQ, SSSE3, SSE4.1); every `#[target_feature]`
//! here enables exactly that set. Field math: `field/mod.rs`.
//!
//! Design, with the numbers of the cores this runs on (AESENC: latency 4, one per cycle on
//! Intel since Skylake, two per cycle on Zen; PCLMULQDQ: one per cycle, on a different port
//! than AESENC on Intel):
//! - `derive_record_keys`: RFC 8452's 4 or 6 derivation blocks are encrypted as one batch
//!   and never leave registers; the record encryption key is expanded from them directly,
//!   so the per-message chain is one batch of AES (~45 cycles) plus the expansion.
//! - `ctr_and_hash`: one pass over memory. Each iteration encrypts eight counter blocks and,
//!   independently, multiplies the previous iteration's eight hashed blocks by H^8..H^1; the
//!   out-of-order core overlaps the two, and on Intel they use different ports. GCM-SIV's
//!   open hashes the plaintext (the output), GCM's seal the ciphertext (the output), GCM's
//!   open the ciphertext (the input).

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use super::Hashed;
use crate::aes::x86::{Counter, RoundKeys, expand_key, xor_tail};
use crate::cpu::x86::{Aesni, load128, store128};
use crate::field::x86::{Key as PolyvalKey, MAX_POWERS, aggregate, byte_reverse};

/// Blocks per iteration: the CTR batch of `aes/x86.rs` and the POLYVAL table of
/// `field/x86.rs` are both eight blocks.
const STRIDE: usize = 8;

/// RFC 8452 Section 4 in registers: returns the record authentication key and the expanded
/// record encryption key (AES-256 when `aes256`).
pub(crate) fn derive_record_keys(
    _: Aesni,
    key_generating_key: &RoundKeys,
    nonce: &[u8; 12],
    aes256: bool,
) -> ([u8; 16], RoundKeys) {
    // SAFETY: the token proves the CPU has the features `derive_record_keys_kernel` enables.
    unsafe { derive_record_keys_kernel(key_generating_key, nonce, aes256) }
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn derive_record_keys_kernel(
    key_generating_key: &RoundKeys,
    nonce: &[u8; 12],
    aes256: bool,
) -> ([u8; 16], RoundKeys) {
    let mut nonce_block = [0u8; 16];
    nonce_block[4..].copy_from_slice(nonce);
    let base = load128(&nonce_block);
    // Block i is LE32(i) || nonce: lane 0 of the nonce block is zero, so add i there.
    let block = |i: i32| _mm_add_epi32(base, _mm_set_epi32(0, 0, 0, i));
    // The first eight bytes of blocks 2i and 2i+1 form one 16-byte key part.
    let halves = |a: __m128i, b: __m128i| _mm_unpacklo_epi64(a, b);
    if aes256 {
        let mut blocks = [block(0), block(1), block(2), block(3), block(4), block(5)];
        key_generating_key.encrypt(&mut blocks);
        let authentication = store128(halves(blocks[0], blocks[1]));
        let encryption = expand_key(
            halves(blocks[2], blocks[3]),
            Some(halves(blocks[4], blocks[5])),
        );
        (authentication, encryption)
    } else {
        let mut blocks = [block(0), block(1), block(2), block(3)];
        key_generating_key.encrypt(&mut blocks);
        let authentication = store128(halves(blocks[0], blocks[1]));
        (
            authentication,
            expand_key(halves(blocks[2], blocks[3]), None),
        )
    }
}

/// XORs `data` with the keystream from `counter` and absorbs the `hashed` side of it,
/// zero-padded, into `acc`: GCM's layout (big-endian counter, GHASH block order) when
/// `GHASH`, GCM-SIV's otherwise. Returns false, touching nothing, if `hash` lacks the full
/// table of powers (only short inputs build less; the generic path serves them).
pub(crate) fn ctr_and_hash<const GHASH: bool>(
    _: Aesni,
    (aes, hash): (&RoundKeys, &PolyvalKey),
    (acc, counter): (&mut [u8; 16], &[u8; 16]),
    hashed: Hashed,
    data: &mut [u8],
) -> bool {
    let Some(powers) = hash.eight_powers() else {
        return false;
    };
    let hash_output = hashed == Hashed::Output;
    // SAFETY: the token proves the CPU has the features every instantiation enables.
    unsafe {
        match (GHASH, hash_output) {
            (false, true) => {
                ctr_and_hash_kernel::<false, false, true>(aes, powers, acc, counter, data)
            }
            (false, false) => {
                ctr_and_hash_kernel::<false, false, false>(aes, powers, acc, counter, data)
            }
            (true, true) => {
                ctr_and_hash_kernel::<true, true, true>(aes, powers, acc, counter, data)
            }
            (true, false) => {
                ctr_and_hash_kernel::<true, true, false>(aes, powers, acc, counter, data)
            }
        }
    }
    true
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ctr_and_hash_kernel<const BIG_ENDIAN: bool, const REVERSED: bool, const HASH_OUTPUT: bool>(
    aes: &RoundKeys,
    powers: &[__m128i; MAX_POWERS],
    acc: &mut [u8; 16],
    counter: &[u8; 16],
    data: &mut [u8],
) {
    let to_field = |block: __m128i| if REVERSED { byte_reverse(block) } else { block };
    let mut counter = Counter::<BIG_ENDIAN>::new(counter);
    let mut s = load128(acc);
    let mut pending: Option<[__m128i; STRIDE]> = None;
    let mut chunks = data.chunks_exact_mut(16 * STRIDE);
    for chunk in &mut chunks {
        let mut keystream = counter.next_blocks::<STRIDE>();
        aes.encrypt(&mut keystream);
        // Independent of the AES above: the previous stride's blocks times H^8..H^1.
        if let Some(previous) = pending {
            s = aggregate(s, &previous, powers);
        }
        let mut to_hash = [_mm_setzero_si128(); STRIDE];
        let blocks = chunk.as_chunks_mut::<16>().0;
        for ((block, key), hashed) in blocks.iter_mut().zip(keystream).zip(&mut to_hash) {
            let input = load128(block);
            let output = _mm_xor_si128(input, key);
            *block = store128(output);
            *hashed = to_field(if HASH_OUTPUT { output } else { input });
        }
        pending = Some(to_hash);
    }
    if let Some(previous) = pending {
        s = aggregate(s, &previous, powers);
    }

    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let hash_tail = |s: __m128i, tail: &[u8]| {
            let mut padded = [0u8; 16 * STRIDE];
            padded[..tail.len()].copy_from_slice(tail);
            let mut blocks = [_mm_setzero_si128(); STRIDE];
            for (value, block) in blocks.iter_mut().zip(padded.as_chunks::<16>().0) {
                *value = to_field(load128(block));
            }
            let s = aggregate(s, &blocks[..tail.len().div_ceil(16)], powers);
            zeroize::Zeroize::zeroize(&mut padded[..tail.len()]);
            s
        };
        if !HASH_OUTPUT {
            s = hash_tail(s, tail);
        }
        xor_tail(aes, &mut counter, tail);
        if HASH_OUTPUT {
            s = hash_tail(s, tail);
        }
    }
    *acc = store128(s);
}
