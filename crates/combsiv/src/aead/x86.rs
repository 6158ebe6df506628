//! Fused AEAD kernels on AES-NI and PCLMULQDQ (128-bit registers).
//!
//! CPU predicate: [`Aesni`] (AES-NI, PCLMULQDQ, SSSE3, SSE4.1); every `#[target_feature]`
//! here enables exactly that set. Field math: `field/mod.rs`.
//!
//! Design, with numbers measured on the Cascade Lake this was tuned on (in TSC cycles:
//! AESENC ~0.9 per instruction throughput, latency 4; PCLMULQDQ ~1.1 throughput, latency
//! ~7; they run on different ports):
//! - `derive_record_keys_kernel`: RFC 8452's 4 or 6 derivation blocks are encrypted as one batch
//!   and never leave registers; the record encryption key is expanded from them directly,
//!   so the per-message chain is one batch of AES (~45 cycles) plus the expansion.
//! - `ctr_and_hash`: one pass over memory. Each iteration encrypts eight counter blocks and
//!   multiplies eight hashed blocks by H^8..H^1, *interleaved in program order* (one block's
//!   multiply after each AES round): issued back to back instead, the 80 AESENCs fill the
//!   scheduler while queueing for their port and the multiplies cannot start, which measured
//!   as no overlap at all (CTR 0.51 + POLYVAL 0.25 = fused 0.75 c/B; interleaved: 0.65).
//!   GCM-SIV's open hashes the plaintext (the output, so the previous stride's, re-read from
//!   L1), GCM's seal the ciphertext (likewise), GCM's open the ciphertext (the input).

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::Hashed;
use crate::aes::x86::{Counter, RoundKeys, expand_key, xor_tail};
use crate::cpu::x86::{Aesni, load128, store128};
use crate::field::x86::{
    Key as PolyvalKey, MAX_POWERS, absorb_padded, accumulate_block, aggregate, aggregate8,
    powers_of, reduce,
};

/// How many strides behind the CTR the hash of the output runs. The output of stride i is
/// ready only when its last AES round is; hashing it in iteration i + 1 would leave its
/// multiplies waiting in the scheduler behind that latency, two strides later it is ready.
const HASH_LAG: usize = 2;

/// Blocks per iteration: the CTR batch of `aes/x86.rs` and the POLYVAL table of
/// `field/x86.rs` are both eight blocks.
const STRIDE: usize = 8;

/// RFC 8452 Section 4 in registers: the record authentication key and the expanded record
/// encryption key (AES-256 when `aes256`).
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn derive_record_keys_kernel(
    key_generating_key: &RoundKeys,
    nonce: &[u8; 12],
    aes256: bool,
) -> (__m128i, RoundKeys) {
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
        let authentication = halves(blocks[0], blocks[1]);
        let encryption = expand_key(
            halves(blocks[2], blocks[3]),
            Some(halves(blocks[4], blocks[5])),
        );
        blocks.zeroize();
        (authentication, encryption)
    } else {
        let mut blocks = [block(0), block(1), block(2), block(3)];
        key_generating_key.encrypt(&mut blocks);
        let authentication = halves(blocks[0], blocks[1]);
        let encryption = expand_key(halves(blocks[2], blocks[3]), None);
        blocks.zeroize();
        (authentication, encryption)
    }
}

/// What a whole GCM-SIV seal or open needs besides the buffer.
pub(crate) struct SivMessage<'a> {
    pub(crate) key_generating_key: &'a RoundKeys,
    pub(crate) aes256: bool,
    pub(crate) nonce: &'a [u8; 12],
    pub(crate) aad: &'a [u8],
}

/// RFC 8452 Section 4, a whole seal in one function: key derivation, the POLYVAL table,
/// POLYVAL over AAD, plaintext and length block, the tag, and CTR, with no intermediate
/// state leaving registers or the stack frame. Per-message overhead is what dominates short
/// messages, so this path exists for them; long ones spend their time in the same CTR and
/// POLYVAL loops as the generic path.
pub(crate) fn gcm_siv_seal(_: Aesni, message: &SivMessage<'_>, buf: &mut [u8]) -> [u8; 16] {
    // SAFETY: the token proves the CPU has the features `gcm_siv_seal_kernel` enables.
    unsafe { gcm_siv_seal_kernel(message, buf) }
}

/// RFC 8452 Section 5, a whole open in one function: key derivation, CTR from the received
/// tag fused with POLYVAL over the plaintext, and the tag the message should have. The caller
/// compares it in constant time and wipes `buf` on a mismatch.
pub(crate) fn gcm_siv_open(
    _: Aesni,
    message: &SivMessage<'_>,
    buf: &mut [u8],
    received_tag: &[u8; 16],
) -> [u8; 16] {
    // SAFETY: the token proves the CPU has the features `gcm_siv_open_kernel` enables.
    unsafe { gcm_siv_open_kernel(message, buf, received_tag) }
}

/// The record encryption key and a POLYVAL table sized for this message.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn record_keys(message: &SivMessage<'_>, plaintext_len: usize) -> (RoundKeys, PolyvalKey) {
    let (mut authentication, encryption) =
        derive_record_keys_kernel(message.key_generating_key, message.nonce, message.aes256);
    let blocks = message.aad.len().div_ceil(16) + plaintext_len.div_ceil(16) + 1;
    let hash_key = powers_of(authentication, blocks);
    authentication.zeroize();
    (encryption, hash_key)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn gcm_siv_seal_kernel(message: &SivMessage<'_>, buf: &mut [u8]) -> [u8; 16] {
    let (encryption, hash_key) = record_keys(message, buf.len());
    let mut s = absorb_padded(&hash_key, _mm_setzero_si128(), message.aad);
    s = absorb_padded(&hash_key, s, buf);
    s = absorb_padded(&hash_key, s, &length_block(message.aad.len(), buf.len()));
    let tag = tag_of(&encryption, s, message.nonce);
    // The counter block is the tag with the top bit of byte 15 set.
    let counter = store128(_mm_or_si128(load128(&tag), top_bit()));
    encryption.apply_keystream_registers(&counter, buf);
    tag
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn gcm_siv_open_kernel(
    message: &SivMessage<'_>,
    buf: &mut [u8],
    received_tag: &[u8; 16],
) -> [u8; 16] {
    let (encryption, hash_key) = record_keys(message, buf.len());
    let counter = store128(_mm_or_si128(load128(received_tag), top_bit()));
    let mut acc = store128(absorb_padded(&hash_key, _mm_setzero_si128(), message.aad));
    let hashed = (&encryption, &hash_key);
    if !ctr_and_hash_kernel_any::<false>(hashed, (&mut acc, &counter), Hashed::Output, buf) {
        encryption.apply_keystream_registers(&counter, buf);
        acc = store128(absorb_padded(&hash_key, load128(&acc), buf));
    }
    let s = absorb_padded(
        &hash_key,
        load128(&acc),
        &length_block(message.aad.len(), buf.len()),
    );
    acc.zeroize();
    tag_of(&encryption, s, message.nonce)
}

/// Bit 7 of byte 15, the bit the tag clears and the counter block sets.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn top_bit() -> __m128i {
    _mm_set_epi8(-128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

/// Section 4: the length block, bit lengths of AAD and plaintext, little-endian.
fn length_block(aad_len: usize, plaintext_len: usize) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&(aad_len as u64 * 8).to_le_bytes());
    block[8..].copy_from_slice(&(plaintext_len as u64 * 8).to_le_bytes());
    block
}

/// Section 4: tag = AES(record encryption key, (S xor nonce) with the top bit cleared).
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn tag_of(encryption: &RoundKeys, mut s: __m128i, nonce: &[u8; 12]) -> [u8; 16] {
    let mut nonce_block = [0u8; 16];
    nonce_block[..12].copy_from_slice(nonce);
    let mut tag = [_mm_andnot_si128(
        top_bit(),
        _mm_xor_si128(s, load128(&nonce_block)),
    )];
    s.zeroize();
    encryption.encrypt(&mut tag);
    store128(tag[0])
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
    // SAFETY: the token proves the CPU has the features `ctr_and_hash_kernel_any` enables.
    unsafe { ctr_and_hash_kernel_any::<GHASH>((aes, hash), (acc, counter), hashed, data) }
}

/// [`ctr_and_hash`] for callers that already run with its features.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ctr_and_hash_kernel_any<const GHASH: bool>(
    (aes, hash): (&RoundKeys, &PolyvalKey),
    (acc, counter): (&mut [u8; 16], &[u8; 16]),
    hashed: Hashed,
    data: &mut [u8],
) -> bool {
    let Some(powers) = hash.eight_powers() else {
        return false;
    };
    let args = (aes, powers, acc, counter, data);
    // Each (layout, hashed side, round count) is its own fully unrolled instantiation.
    macro_rules! kernel {
        ($big_endian:literal, $reversed:literal, $hash_output:literal) => {
            if aes.schedule().1 == 10 {
                ctr_and_hash_kernel::<$big_endian, $reversed, $hash_output, 10>(args)
            } else {
                ctr_and_hash_kernel::<$big_endian, $reversed, $hash_output, 14>(args)
            }
        };
    }
    match (GHASH, hashed) {
        (false, Hashed::Output) => kernel!(false, false, true),
        (false, Hashed::Input) => kernel!(false, false, false),
        (true, Hashed::Output) => kernel!(true, true, true),
        (true, Hashed::Input) => kernel!(true, true, false),
    }
    true
}

type KernelArgs<'a> = (
    &'a RoundKeys,
    &'a [__m128i; MAX_POWERS],
    &'a mut [u8; 16],
    &'a [u8; 16],
    &'a mut [u8],
);

/// Encrypts eight counter blocks while multiplying eight hashed blocks by H^8..H^1: block i's
/// four PCLMULQDQ follow AES round i+1 in program order, and the reduction follows round 9.
/// Issued this way the scheduler always holds both kinds of work; issued one after the
/// other, the multiplies would wait behind 80 AESENCs queued for their one port.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
fn encrypt_and_hash_stride<const ROUNDS: usize, const REVERSED: bool>(
    keys: &[__m128i; 15],
    keystream: &mut [__m128i; STRIDE],
    s: __m128i,
    blocks: &[[u8; 16]; STRIDE],
    powers: &[__m128i; MAX_POWERS],
) -> __m128i {
    let round = |keystream: &mut [__m128i; STRIDE], key: __m128i| {
        for block in keystream.iter_mut() {
            *block = _mm_aesenc_si128(*block, key);
        }
    };
    for block in keystream.iter_mut() {
        *block = _mm_xor_si128(*block, keys[0]);
    }
    let mut sum = [_mm_setzero_si128(); 3];
    for i in 0..STRIDE {
        round(keystream, keys[i + 1]);
        accumulate_block::<REVERSED>(&mut sum, s, blocks, i, powers);
    }
    round(keystream, keys[STRIDE + 1]);
    let s = reduce(sum);
    for &key in &keys[STRIDE + 2..ROUNDS] {
        round(keystream, key);
    }
    for block in keystream.iter_mut() {
        *block = _mm_aesenclast_si128(*block, keys[ROUNDS]);
    }
    s
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ctr_and_hash_kernel<
    const BIG_ENDIAN: bool,
    const REVERSED: bool,
    const HASH_OUTPUT: bool,
    const ROUNDS: usize,
>(
    (aes, powers, acc, counter, data): KernelArgs<'_>,
) {
    let keys = aes.schedule().0;
    let mut counter = Counter::<BIG_ENDIAN>::new(counter);
    let mut s = load128(acc);
    let whole_strides = data.len() / (16 * STRIDE) * (16 * STRIDE);
    let (body, tail) = data.split_at_mut(whole_strides);
    let strides = body.as_chunks_mut::<16>().0.as_chunks_mut::<STRIDE>().0;
    for i in 0..strides.len() {
        let mut keystream = counter.next_blocks::<STRIDE>();
        // The hash reads the previous stride's output (re-read from L1, not held in
        // registers) or this stride's input before it is overwritten: either way it does
        // not depend on this stride's AES.
        if !HASH_OUTPUT {
            s = encrypt_and_hash_stride::<ROUNDS, REVERSED>(
                keys,
                &mut keystream,
                s,
                &strides[i],
                powers,
            );
        } else if i >= HASH_LAG {
            s = encrypt_and_hash_stride::<ROUNDS, REVERSED>(
                keys,
                &mut keystream,
                s,
                &strides[i - HASH_LAG],
                powers,
            );
        } else {
            aes.encrypt(&mut keystream);
        }
        for (block, key) in strides[i].iter_mut().zip(keystream) {
            *block = store128(_mm_xor_si128(load128(block), key));
        }
    }
    if HASH_OUTPUT {
        for stride in &strides[strides.len().saturating_sub(HASH_LAG)..] {
            s = aggregate8::<REVERSED>(s, stride, powers);
        }
    }

    if !tail.is_empty() {
        let hash_tail = |s: __m128i, tail: &[u8]| {
            let mut padded = [[0u8; 16]; STRIDE];
            padded.as_flattened_mut()[..tail.len()].copy_from_slice(tail);
            let s = aggregate::<REVERSED>(s, &padded[..tail.len().div_ceil(16)], powers);
            padded.as_flattened_mut()[..tail.len()].zeroize();
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
