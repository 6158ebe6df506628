//! AES with AES-NI on 128-bit registers.
//!
//! CPU predicate: [`Aesni`] (AES-NI, PCLMULQDQ, SSSE3, SSE4.1). Every function here with a
//! `#[target_feature]` enables exactly that set, and is only called with the token in hand.
//!
//! Design: AESENC has a latency of 3-4 cycles and a throughput of one or two per cycle on
//! current cores, so one block at a time leaves the unit mostly idle. The counter-mode kernel
//! therefore keeps [`CTR_BLOCKS`] independent blocks in flight, which covers latency x
//! throughput on every AES-NI core and fits 8 state + 1 counter + 1 scratch register of the
//! 16 XMM registers, with round keys taken from L1 as memory operands.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::{Counter32, KeyBytes};
use crate::cpu::x86::{Aesni, load128, store128};

/// Blocks in flight per iteration of the counter-mode loop (see the module comment).
const CTR_BLOCKS: usize = 8;

/// Expanded encryption round keys: 11 used for AES-128, all 15 for AES-256.
///
/// Kept as registers' type so that wiping them on drop is 15 vector stores.
#[derive(Clone)]
pub(crate) struct RoundKeys {
    keys: [__m128i; 15],
    rounds: usize,
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.keys.zeroize();
    }
}

impl RoundKeys {
    pub(crate) fn new(_: Aesni, key: KeyBytes<'_>) -> Self {
        let (low, high) = match key {
            KeyBytes::Aes128(key) => (load128(key), None),
            KeyBytes::Aes256(key) => (
                load128(&core::array::from_fn(|i| key[i])),
                Some(load128(&core::array::from_fn(|i| key[16 + i]))),
            ),
        };
        // SAFETY: the token proves the CPU has the features `expand_key` enables.
        unsafe { expand_key(low, high) }
    }

    pub(crate) fn encrypt_blocks(&self, _: Aesni, blocks: &mut [[u8; 16]]) {
        // SAFETY: the token proves the CPU has the features `encrypt_ecb` enables.
        unsafe { encrypt_ecb(self, blocks) }
    }

    pub(crate) fn apply_keystream(
        &self,
        _: Aesni,
        counter: &[u8; 16],
        order: Counter32,
        data: &mut [u8],
    ) {
        match order {
            // SAFETY: the token proves the CPU has the features `ctr32_xor` enables.
            Counter32::LittleEndianFirst => unsafe { ctr32_xor::<false>(self, counter, data) },
            // SAFETY: as above.
            Counter32::BigEndianLast => unsafe { ctr32_xor::<true>(self, counter, data) },
        }
    }

    /// Encrypts N independent blocks, interleaved round by round so that they pipeline.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    #[inline]
    pub(crate) fn encrypt<const N: usize>(&self, blocks: &mut [__m128i; N]) {
        let (first, middle, last) = (
            self.keys[0],
            &self.keys[1..self.rounds],
            self.keys[self.rounds],
        );
        for block in blocks.iter_mut() {
            *block = _mm_xor_si128(*block, first);
        }
        for &key in middle {
            for block in blocks.iter_mut() {
                *block = _mm_aesenc_si128(*block, key);
            }
        }
        for block in blocks.iter_mut() {
            *block = _mm_aesenclast_si128(*block, last);
        }
    }

    pub(crate) fn decrypt_blocks(&self, _: Aesni, blocks: &mut [[u8; 16]]) {
        // SAFETY: the token proves the CPU has the features `decrypt_ecb` enables.
        unsafe { decrypt_ecb(self, blocks) }
    }

    pub(crate) fn key_bits(&self) -> usize {
        if self.rounds == 10 { 128 } else { 256 }
    }

    /// GCM-SIV counter mode from inside another kernel with the same features.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    #[inline]
    pub(crate) fn apply_keystream_registers(&self, counter: &[u8; 16], data: &mut [u8]) {
        ctr32_xor::<false>(self, counter, data);
    }

    /// The round keys and the number of rounds (10 or 14), for fused kernels that schedule
    /// AES rounds themselves.
    pub(crate) fn schedule(&self) -> (&[__m128i; 15], usize) {
        (&self.keys, self.rounds)
    }
}

/// FIPS 197 Section 5.2. SubWord(RotWord(w)) ^ Rcon comes from AESENCLAST on a state whose
/// four columns all hold RotWord(w): ShiftRows then moves nothing, SubBytes substitutes, and
/// the "round key" adds Rcon. That has a latency of about 5 cycles where AESKEYGENASSIST has
/// about 12 on Intel cores, and key expansion is on GCM-SIV's per-message critical path.
///
/// `high` is the second half of an AES-256 key, `None` for AES-128.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[inline]
pub(crate) fn expand_key(low: __m128i, high: Option<__m128i>) -> RoundKeys {
    // w[i] = w[i-Nk] ^ t for the four words of a round key becomes: every word XORs all the
    // words before it in the previous round key (a prefix XOR), then the broadcast t.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    fn prefix_xor(k: __m128i) -> __m128i {
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, _mm_slli_si128::<8>(k))
    }
    // Byte indices 13, 14, 15, 12 in every column: RotWord(w3), broadcast.
    let rot_word_3 = _mm_set_epi8(
        12, 15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13,
    );
    let sub_rot = |w: __m128i, rcon: i32| {
        _mm_aesenclast_si128(_mm_shuffle_epi8(w, rot_word_3), _mm_set1_epi32(rcon))
    };
    // AES-256's extra step: SubWord(w3) without rotation or Rcon.
    let sub = |w: __m128i| _mm_aesenclast_si128(_mm_shuffle_epi32::<0xff>(w), _mm_setzero_si128());
    const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

    let mut keys = [_mm_setzero_si128(); 15];
    keys[0] = low;
    let rounds = match high {
        None => {
            for (i, rcon) in RCON.into_iter().enumerate() {
                keys[i + 1] = _mm_xor_si128(prefix_xor(keys[i]), sub_rot(keys[i], rcon));
            }
            10
        }
        Some(high) => {
            keys[1] = high;
            for (i, rcon) in RCON.into_iter().take(7).enumerate() {
                let (even, odd) = (2 * i + 2, 2 * i + 3);
                keys[even] =
                    _mm_xor_si128(prefix_xor(keys[even - 2]), sub_rot(keys[even - 1], rcon));
                if odd < 15 {
                    keys[odd] = _mm_xor_si128(prefix_xor(keys[odd - 2]), sub(keys[even]));
                }
            }
            14
        }
    };
    RoundKeys { keys, rounds }
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn encrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    // One block (the chained modes' every step): straight through, nothing padded.
    if let [block] = blocks {
        let mut state = [load128(block)];
        round_keys.encrypt(&mut state);
        *block = store128(state[0]);
        return;
    }
    // Up to eight blocks at a time; a short batch (GCM-SIV's 4 or 6 derivation blocks) is
    // padded to four or eight, which costs no latency and little throughput. The state left
    // in registers is the output just stored, so there is nothing to wipe.
    for chunk in blocks.chunks_mut(CTR_BLOCKS) {
        let mut state = [_mm_setzero_si128(); CTR_BLOCKS];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = load128(block);
        }
        if chunk.len() <= 4 {
            let mut half = [state[0], state[1], state[2], state[3]];
            round_keys.encrypt(&mut half);
            state[..4].copy_from_slice(&half);
        } else {
            round_keys.encrypt(&mut state);
        }
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store128(value);
        }
    }
}

/// The inverse cipher (FIPS 197 Section 5.3.5, "equivalent inverse cipher"): AESDEC wants the
/// round keys in reverse order with InvMixColumns (AESIMC) applied to all but the first and
/// last. They are derived here per call and wiped after, so no decryption schedule is kept.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn decrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let rounds = round_keys.rounds;
    let mut keys = [_mm_setzero_si128(); 15];
    keys[0] = round_keys.keys[rounds];
    for (inverse, forward) in keys[1..rounds]
        .iter_mut()
        .zip(round_keys.keys[1..rounds].iter().rev())
    {
        *inverse = _mm_aesimc_si128(*forward);
    }
    keys[rounds] = round_keys.keys[0];
    for chunk in blocks.chunks_mut(CTR_BLOCKS) {
        let mut state = [_mm_setzero_si128(); CTR_BLOCKS];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = _mm_xor_si128(load128(block), keys[0]);
        }
        for &key in &keys[1..rounds] {
            for value in &mut state {
                *value = _mm_aesdec_si128(*value, key);
            }
        }
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store128(_mm_aesdeclast_si128(value, keys[rounds]));
        }
        state.zeroize();
    }
    keys.zeroize();
}

/// Counter mode with a 32-bit wrapping counter; `BIG_ENDIAN` selects AES-GCM's layout.
///
/// The counter is kept in a register with its 32-bit word as a native little-endian lane
/// (lane 0 for GCM-SIV; lane 3 after swapping bytes 12..16 for GCM), so that one PADDD
/// increments it and wraps modulo 2^32 without carrying into the other lanes.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ctr32_xor<const BIG_ENDIAN: bool>(round_keys: &RoundKeys, counter: &[u8; 16], data: &mut [u8]) {
    let mut counter = Counter::<BIG_ENDIAN>::new(counter);
    let mut chunks = data.chunks_exact_mut(16 * CTR_BLOCKS);
    for chunk in &mut chunks {
        let mut keystream = counter.next_blocks::<CTR_BLOCKS>();
        round_keys.encrypt(&mut keystream);
        for (block, key) in chunk.as_chunks_mut::<16>().0.iter_mut().zip(keystream) {
            *block = store128(_mm_xor_si128(load128(block), key));
        }
    }
    xor_tail(round_keys, &mut counter, chunks.into_remainder());
}

/// The last partial stride: as few keystream blocks as cover it, then byte-wise XOR.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
pub(crate) fn xor_tail<const BIG_ENDIAN: bool>(
    round_keys: &RoundKeys,
    counter: &mut Counter<BIG_ENDIAN>,
    tail: &mut [u8],
) {
    let mut keystream = [_mm_setzero_si128(); CTR_BLOCKS];
    match tail.len().div_ceil(16) {
        0 => return,
        1 => {
            let mut blocks = counter.next_blocks::<1>();
            round_keys.encrypt(&mut blocks);
            keystream[0] = blocks[0];
        }
        2 => {
            let mut blocks = counter.next_blocks::<2>();
            round_keys.encrypt(&mut blocks);
            keystream[..2].copy_from_slice(&blocks);
        }
        3 | 4 => {
            let mut blocks = counter.next_blocks::<4>();
            round_keys.encrypt(&mut blocks);
            keystream[..4].copy_from_slice(&blocks);
        }
        _ => {
            keystream = counter.next_blocks::<CTR_BLOCKS>();
            round_keys.encrypt(&mut keystream);
        }
    }
    // XOR in registers over a zero-padded copy; afterwards only the padding holds keystream
    // bytes, so only the padding needs wiping.
    let mut padded = [0u8; 16 * CTR_BLOCKS];
    padded[..tail.len()].copy_from_slice(tail);
    let used = tail.len().div_ceil(16);
    for (block, key) in padded
        .as_chunks_mut::<16>()
        .0
        .iter_mut()
        .zip(keystream)
        .take(used)
    {
        *block = store128(_mm_xor_si128(load128(block), key));
    }
    tail.copy_from_slice(&padded[..tail.len()]);
    padded[tail.len()..16 * used].zeroize();
    keystream.zeroize();
}

/// A 32-bit counter in a register, as [`ctr32_xor`] describes.
pub(crate) struct Counter<const BIG_ENDIAN: bool> {
    native: __m128i,
}

impl<const BIG_ENDIAN: bool> Counter<BIG_ENDIAN> {
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    pub(crate) fn new(block: &[u8; 16]) -> Self {
        Counter {
            native: Self::swap(load128(block)),
        }
    }

    /// Swaps bytes 12..16 for GCM (its own inverse); nothing for GCM-SIV.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    #[inline]
    fn swap(block: __m128i) -> __m128i {
        if BIG_ENDIAN {
            let swap_last_word = _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            _mm_shuffle_epi8(block, swap_last_word)
        } else {
            block
        }
    }

    /// The next N counter blocks, ready to encrypt.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    #[inline]
    pub(crate) fn next_blocks<const N: usize>(&mut self) -> [__m128i; N] {
        let one = if BIG_ENDIAN {
            _mm_set_epi32(1, 0, 0, 0)
        } else {
            _mm_set_epi32(0, 0, 0, 1)
        };
        let mut blocks = [_mm_setzero_si128(); N];
        for block in &mut blocks {
            *block = Self::swap(self.native);
            self.native = _mm_add_epi32(self.native, one);
        }
        blocks
    }
}
