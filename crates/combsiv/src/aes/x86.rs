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
#[derive(Clone)]
pub(crate) struct RoundKeys {
    keys: [[u8; 16]; 15],
    rounds: usize,
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.keys.zeroize();
    }
}

impl RoundKeys {
    pub(crate) fn new(_: Aesni, key: KeyBytes<'_>) -> Self {
        // SAFETY: the token proves the CPU has the features `expand_key` enables.
        unsafe { expand_key(key) }
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
}

/// The round keys of one key, loaded into registers once per call.
#[derive(Clone, Copy)]
struct Schedule {
    keys: [__m128i; 15],
    rounds: usize,
}

impl Schedule {
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    fn load(round_keys: &RoundKeys) -> Schedule {
        Schedule {
            keys: round_keys.keys.map(|key| load128(&key)),
            rounds: round_keys.rounds,
        }
    }

    /// Encrypts N independent blocks, interleaved round by round so that they pipeline.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    #[inline]
    fn encrypt<const N: usize>(&self, blocks: &mut [__m128i; N]) {
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
}

/// FIPS 197 Section 5.2 with AESKEYGENASSIST doing SubWord(RotWord(w)) ^ Rcon.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn expand_key(key: KeyBytes<'_>) -> RoundKeys {
    // w[i] = w[i-Nk] ^ t for the four words of a round key becomes: every word XORs all the
    // words before it in the previous round key (a prefix XOR), then the broadcast t.
    #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
    fn prefix_xor(k: __m128i) -> __m128i {
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, _mm_slli_si128::<8>(k))
    }
    // AESKEYGENASSIST returns [SubWord(w1), RotWord(SubWord(w1)) ^ rcon, SubWord(w3),
    // RotWord(SubWord(w3)) ^ rcon]; lane 3 (0xff) drives every Nk-th word, lane 2 (0xaa) the
    // extra SubWord step of AES-256.
    macro_rules! next_key {
        ($prev:expr, $last:expr, $rcon:literal) => {
            _mm_xor_si128(
                prefix_xor($prev),
                _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<$rcon>($last)),
            )
        };
    }
    macro_rules! next_key_sub_only {
        ($prev:expr, $last:expr) => {
            _mm_xor_si128(
                prefix_xor($prev),
                _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>($last)),
            )
        };
    }

    let mut keys = [_mm_setzero_si128(); 15];
    let rounds = match key {
        KeyBytes::Aes128(key) => {
            keys[0] = load128(key);
            keys[1] = next_key!(keys[0], keys[0], 0x01);
            keys[2] = next_key!(keys[1], keys[1], 0x02);
            keys[3] = next_key!(keys[2], keys[2], 0x04);
            keys[4] = next_key!(keys[3], keys[3], 0x08);
            keys[5] = next_key!(keys[4], keys[4], 0x10);
            keys[6] = next_key!(keys[5], keys[5], 0x20);
            keys[7] = next_key!(keys[6], keys[6], 0x40);
            keys[8] = next_key!(keys[7], keys[7], 0x80);
            keys[9] = next_key!(keys[8], keys[8], 0x1b);
            keys[10] = next_key!(keys[9], keys[9], 0x36);
            10
        }
        KeyBytes::Aes256(key) => {
            keys[0] = load128(&core::array::from_fn(|i| key[i]));
            keys[1] = load128(&core::array::from_fn(|i| key[16 + i]));
            keys[2] = next_key!(keys[0], keys[1], 0x01);
            keys[3] = next_key_sub_only!(keys[1], keys[2]);
            keys[4] = next_key!(keys[2], keys[3], 0x02);
            keys[5] = next_key_sub_only!(keys[3], keys[4]);
            keys[6] = next_key!(keys[4], keys[5], 0x04);
            keys[7] = next_key_sub_only!(keys[5], keys[6]);
            keys[8] = next_key!(keys[6], keys[7], 0x08);
            keys[9] = next_key_sub_only!(keys[7], keys[8]);
            keys[10] = next_key!(keys[8], keys[9], 0x10);
            keys[11] = next_key_sub_only!(keys[9], keys[10]);
            keys[12] = next_key!(keys[10], keys[11], 0x20);
            keys[13] = next_key_sub_only!(keys[11], keys[12]);
            keys[14] = next_key!(keys[12], keys[13], 0x40);
            14
        }
    };
    let mut expanded = RoundKeys {
        keys: [[0; 16]; 15],
        rounds,
    };
    for (out, key) in expanded.keys.iter_mut().zip(keys) {
        *out = store128(key);
    }
    expanded
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn encrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let schedule = Schedule::load(round_keys);
    let mut chunks = blocks.chunks_exact_mut(4);
    for chunk in &mut chunks {
        let mut state = [_mm_setzero_si128(); 4];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = load128(block);
        }
        schedule.encrypt(&mut state);
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store128(value);
        }
    }
    for block in chunks.into_remainder() {
        let mut state = [load128(block)];
        schedule.encrypt(&mut state);
        *block = store128(state[0]);
    }
}

/// Counter mode with a 32-bit wrapping counter; `BIG_ENDIAN` selects AES-GCM's layout.
///
/// The counter is kept in a register with its 32-bit word as a native little-endian lane
/// (lane 0 for GCM-SIV; lane 3 after swapping bytes 12..16 for GCM), so that one PADDD
/// increments it and wraps modulo 2^32 without carrying into the other lanes.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ctr32_xor<const BIG_ENDIAN: bool>(round_keys: &RoundKeys, counter: &[u8; 16], data: &mut [u8]) {
    let schedule = Schedule::load(round_keys);
    let swap_last_word = _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    let to_native = |block: __m128i| {
        if BIG_ENDIAN {
            _mm_shuffle_epi8(block, swap_last_word)
        } else {
            block
        }
    };
    let one = if BIG_ENDIAN {
        _mm_set_epi32(1, 0, 0, 0)
    } else {
        _mm_set_epi32(0, 0, 0, 1)
    };
    // The shuffle is its own inverse, so `to_native` also turns a native counter back.
    let mut next = to_native(load128(counter));
    let mut keystream_blocks = || {
        let mut blocks = [_mm_setzero_si128(); CTR_BLOCKS];
        for block in &mut blocks {
            *block = to_native(next);
            next = _mm_add_epi32(next, one);
        }
        schedule.encrypt(&mut blocks);
        blocks
    };

    let mut chunks = data.chunks_exact_mut(16 * CTR_BLOCKS);
    for chunk in &mut chunks {
        let keystream = keystream_blocks();
        for (block, key) in chunk.as_chunks_mut::<16>().0.iter_mut().zip(keystream) {
            *block = store128(_mm_xor_si128(load128(block), key));
        }
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut keystream = keystream_blocks().map(store128);
        for (byte, key) in tail.iter_mut().zip(keystream.as_flattened()) {
            *byte ^= key;
        }
        keystream.zeroize();
    }
}
