//! Batched AES-GCM-SIV on the x86 tiers (`seal_batch`, `open_batch`), written once over the
//! register width and instantiated for AES-NI and VAES.
//!
//! CPU predicate: the token of each instantiation ([`per_width!`]); every `#[target_feature]`
//! function enables exactly its token's features. The RFC 8452 steps are those of
//! `aead/x86.rs`; only their order changes.
//!
//! Design: a message of 40-100 bytes costs the single-message API about 300 cycles, nearly
//! all of it latency: the derivation (4 or 6 AES blocks, ~44 cycles for AES-128), the record
//! key's expansion (10 or 13 dependent steps of ~6 cycles), a short POLYVAL chain, the tag
//! block (another dependent AES), and the counter blocks after it. None of that depends on
//! another message, so a group of messages runs each step for all of them before the next:
//! - the derivation blocks of the whole group go through the key-generating key as one batch
//!   ([`STRIDE`] registers at a time: 8 blocks on AES-NI, 16 with VAES);
//! - the record keys are expanded step by step across the group ([`expand_keys`]): on VAES
//!   each YMM register expands two messages' keys, its halves independent;
//! - POLYVAL and the counter mode run per message (short messages in registers, long ones
//!   through the full-width passes), out of order execution overlapping neighbours;
//! - the tags are one more batch: register r, half i encrypts message r * BLOCKS + i's tag
//!   block under that message's own schedule, which the expansion left in exactly that place.
//!
//! A group is [`GROUP_REGISTERS`] registers of messages (8 on AES-NI, 16 on VAES): enough
//! independent AES blocks to cover Zen 3's 2 instructions per cycle x latency 4. A partial
//! last group repeats its last message in the unused places; the repeats are computed and
//! dropped.

#![allow(
    unsafe_code,
    reason = "the per_width! dispatch calls #[target_feature] functions with their token"
)]

use core::arch::x86_64::__m128i;

use zeroize::Zeroize;

use super::x86::{
    SHORT_BLOCKS, counter_block, ctr_and_hash_rounds, length_block, nonce_value, top_bit,
};
use crate::aes::x86::{
    Counter, RoundKeys, Schedule, apply_keystream, broadcast, encrypt, expand_keys, xor_tail,
};
use crate::comb::SivJob;
use crate::cpu::x86::{
    Aesni, STRIDE, Width, block_from, load_last_partial, load128, per_width, store128,
};
use crate::field::x86::{Key as PolyvalKey, absorb_padded, dot, fill_powers};

/// Registers of messages per group.
const GROUP_REGISTERS: usize = 8;
/// Messages per group at the widest tier (two per VAES register).
const MAX_GROUP: usize = 2 * GROUP_REGISTERS;

per_width! {
    /// RFC 8452 Section 4 for every job: seals `data` in place and writes `tag`.
    pub(crate) fn gcm_siv_seal_batch(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
    ) = seal_batch;
}

per_width! {
    /// RFC 8452 Section 5 for every job: decrypts `data` in place with the counter taken from
    /// its received `tag` and writes the tag the message should have to `expected` (one per
    /// job). The caller compares them in constant time and wipes the jobs that fail.
    pub(crate) fn gcm_siv_open_batch(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
        expected: &mut [[u8; 16]],
    ) = open_batch;
}

#[inline(always)]
fn seal_batch<W: Width>(width: W, key_generating_key: &RoundKeys, jobs: &mut [SivJob<'_>]) {
    for group in jobs.chunks_mut(GROUP_REGISTERS * W::BLOCKS) {
        if key_generating_key.rounds() == 10 {
            group_of::<W, 10, false>(width, key_generating_key, group, &mut []);
        } else {
            group_of::<W, 14, false>(width, key_generating_key, group, &mut []);
        }
    }
}

#[inline(always)]
fn open_batch<W: Width>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
    expected: &mut [[u8; 16]],
) {
    let group = GROUP_REGISTERS * W::BLOCKS;
    for (jobs, expected) in jobs.chunks_mut(group).zip(expected.chunks_mut(group)) {
        if key_generating_key.rounds() == 10 {
            group_of::<W, 10, true>(width, key_generating_key, jobs, expected);
        } else {
            group_of::<W, 14, true>(width, key_generating_key, jobs, expected);
        }
    }
}

/// The record keys of one group: the authentication keys per message, and the expanded
/// encryption keys as registers (register r, block i: message r * BLOCKS + i).
struct GroupKeys<W: Width> {
    authentication: [__m128i; MAX_GROUP],
    encryption: [[W::Reg; 15]; GROUP_REGISTERS],
}

impl<W: Width> GroupKeys<W> {
    /// Message `m`'s record encryption key as 128-bit round keys.
    #[inline(always)]
    fn schedule(&self, width: W, m: usize) -> Schedule {
        let mut schedule = [width.aesni().zero(); 15];
        for (key, wide) in schedule.iter_mut().zip(&self.encryption[m / W::BLOCKS]) {
            *key = width.block(*wide, m % W::BLOCKS);
        }
        schedule
    }
}

impl<W: Width> Drop for GroupKeys<W> {
    /// Wipes the places the group used (the others were never anything but zero).
    fn drop(&mut self) {
        for key in &mut self.authentication[..GROUP_REGISTERS * W::BLOCKS] {
            key.zeroize();
        }
        self.encryption.zeroize();
    }
}

/// Seals (`OPEN` false) or opens one group of at most `GROUP_REGISTERS * W::BLOCKS` jobs.
#[inline(always)]
fn group_of<W: Width, const ROUNDS: usize, const OPEN: bool>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
    expected: &mut [[u8; 16]],
) {
    let aesni = width.aesni();
    let count = jobs.len();
    let Some(last) = jobs.last() else {
        return;
    };
    // The unused places repeat the last message.
    let mut nonces = [last.nonce; MAX_GROUP];
    for (nonce, job) in nonces.iter_mut().zip(jobs.iter()) {
        *nonce = job.nonce;
    }
    let keys = derive_group::<W, ROUNDS>(width, key_generating_key, &nonces);

    // POLYVAL and, when opening, the counter mode from the received tag, per message.
    let mut sums = [aesni.zero(); MAX_GROUP];
    for (m, (job, sum)) in jobs.iter_mut().zip(&mut sums).enumerate() {
        let h = keys.authentication[m];
        let short = job.aad.len().div_ceil(16) + job.data.len().div_ceil(16) < SHORT_BLOCKS;
        *sum = match (short, OPEN) {
            (true, false) => polyval_chain(aesni, h, job.aad, job.data),
            (true, true) => {
                let mut schedule = keys.schedule(width, m);
                let start = counter_block(aesni, load128(&job.tag));
                let mut counter = Counter::<Aesni, false>::new(aesni, start);
                xor_tail::<Aesni, false, ROUNDS>(aesni, &schedule, &mut counter, job.data, 0);
                schedule.zeroize();
                polyval_chain(aesni, h, job.aad, job.data)
            }
            (false, _) => {
                let blocks = job.aad.len().div_ceil(16) + job.data.len().div_ceil(16) + 1;
                let mut hash_key = PolyvalKey::empty(aesni);
                fill_powers(width, &mut hash_key, h, blocks);
                let s =
                    absorb_padded::<W, false>(width, &hash_key, aesni.zero(), (job.aad, 0), None);
                let lengths = length_block(job.aad.len(), job.data.len());
                if OPEN {
                    let mut schedule = keys.schedule(width, m);
                    let mut wide = broadcast(width, &schedule);
                    schedule.zeroize();
                    let start = counter_block(aesni, load128(&job.tag));
                    let mut counter = Counter::<W, false>::new(width, start);
                    let s = ctr_and_hash_rounds::<W, false, true, ROUNDS>(
                        width,
                        (&wide, &hash_key),
                        (s, &mut counter),
                        job.data,
                        lengths,
                    );
                    wide.zeroize();
                    s
                } else {
                    absorb_padded::<W, false>(width, &hash_key, s, (job.data, 0), Some(lengths))
                }
            }
        };
    }

    let tags = tags_of::<W, ROUNDS>(width, &keys, &mut sums, &nonces);
    if OPEN {
        for (out, tag) in expected.iter_mut().zip(&tags[..count]) {
            *out = store128(*tag);
        }
        return;
    }
    for (m, (job, &tag)) in jobs.iter_mut().zip(&tags).enumerate() {
        job.tag = store128(tag);
        let mut schedule = keys.schedule(width, m);
        let start = counter_block(aesni, tag);
        if job.data.len().div_ceil(16) < SHORT_BLOCKS {
            let mut counter = Counter::<Aesni, false>::new(aesni, start);
            xor_tail::<Aesni, false, ROUNDS>(aesni, &schedule, &mut counter, job.data, 0);
        } else {
            let mut wide = broadcast(width, &schedule);
            let mut counter = Counter::<W, false>::new(width, start);
            apply_keystream::<W, false, ROUNDS>(width, &wide, &mut counter, job.data);
            wide.zeroize();
        }
        schedule.zeroize();
    }
}

/// POLYVAL(H, AAD, text, length block) of a short message by Horner's rule, one reduced
/// product per block: about 6 multiplications per block, where the table of powers that makes
/// a single message fast costs more (a message of 5 blocks: 30 against 46). The chain's
/// latency is what the group hides: the other messages' steps fill it.
#[inline(always)]
fn polyval_chain(aesni: Aesni, h: __m128i, aad: &[u8], text: &[u8]) -> __m128i {
    let mut s = aesni.zero();
    for part in [aad, text] {
        let (whole, partial) = part.as_chunks::<16>();
        for block in whole {
            s = dot(aesni, aesni.xor(s, load128(block)), h);
        }
        if !partial.is_empty() {
            s = dot(aesni, aesni.xor(s, load_last_partial(aesni, part)), h);
        }
    }
    dot(aesni, aesni.xor(s, length_block(aad.len(), text.len())), h)
}

/// RFC 8452 Section 4 for a group: the derivation blocks LE32(i) || nonce of every message
/// encrypted as one batch, the authentication keys, and the record encryption keys expanded
/// side by side.
#[inline(always)]
fn derive_group<W: Width, const ROUNDS: usize>(
    width: W,
    key_generating_key: &RoundKeys,
    nonces: &[[u8; 12]; MAX_GROUP],
) -> GroupKeys<W> {
    let aesni = width.aesni();
    let per_message = if ROUNDS == 14 { 6 } else { 4 };
    let messages = GROUP_REGISTERS * W::BLOCKS;
    let mut blocks = [aesni.zero(); 6 * MAX_GROUP];
    for (m, nonce) in nonces.iter().enumerate().take(messages) {
        let nonce = nonce_value(nonce) << 32;
        for i in 0..per_message {
            blocks[m * per_message + i] = block_from(nonce | i as u128);
        }
    }
    // 32 or 48 blocks per 8 messages: whole batches of STRIDE registers at either width.
    let mut wide_key = broadcast(width, key_generating_key.schedule());
    for first in (0..per_message * messages).step_by(STRIDE * W::BLOCKS) {
        let mut batch: [W::Reg; STRIDE] =
            core::array::from_fn(|r| width.load_blocks(&blocks, first + r * W::BLOCKS));
        encrypt(width, &wide_key, ROUNDS, &mut batch);
        for (r, register) in batch.into_iter().enumerate() {
            width.store_blocks(register, &mut blocks, first + r * W::BLOCKS);
        }
    }
    wide_key.zeroize();
    // The first eight bytes of blocks 2i and 2i+1 form one 16-byte key part.
    let part = |m: usize, i: usize| {
        let first = m * per_message + 2 * i;
        aesni.low_halves(blocks[first], blocks[first + 1])
    };
    let mut authentication = [aesni.zero(); MAX_GROUP];
    for (m, key) in authentication.iter_mut().enumerate().take(messages) {
        *key = part(m, 0);
    }
    let low: [W::Reg; GROUP_REGISTERS] =
        core::array::from_fn(|r| width.gather(|i| part(r * W::BLOCKS + i, 1)));
    let high: Option<[W::Reg; GROUP_REGISTERS]> = (ROUNDS == 14)
        .then(|| core::array::from_fn(|r| width.gather(|i| part(r * W::BLOCKS + i, 2))));
    let encryption = expand_keys(width, low, high);
    for block in &mut blocks[..per_message * messages] {
        block.zeroize();
    }
    GroupKeys {
        authentication,
        encryption,
    }
}

/// Section 4's tags for a group: AES under each message's record key of its POLYVAL result
/// with the nonce XORed in and the top bit cleared, all in one batch. Wipes the sums.
#[inline(always)]
fn tags_of<W: Width, const ROUNDS: usize>(
    width: W,
    keys: &GroupKeys<W>,
    sums: &mut [__m128i; MAX_GROUP],
    nonces: &[[u8; 12]; MAX_GROUP],
) -> [__m128i; MAX_GROUP] {
    let aesni = width.aesni();
    let input = |m: usize| {
        let masked = aesni.xor(sums[m], block_from(nonce_value(&nonces[m])));
        aesni.and_not(top_bit(), masked)
    };
    let mut x: [W::Reg; GROUP_REGISTERS] =
        core::array::from_fn(|r| width.gather(|i| input(r * W::BLOCKS + i)));
    sums.zeroize();
    for (x, keys) in x.iter_mut().zip(&keys.encryption) {
        *x = width.xor(*x, keys[0]);
    }
    for round in 1..ROUNDS {
        for (x, keys) in x.iter_mut().zip(&keys.encryption) {
            *x = width.aesenc(*x, keys[round]);
        }
    }
    let mut tags = [aesni.zero(); MAX_GROUP];
    for (r, (x, keys)) in x.iter_mut().zip(&keys.encryption).enumerate() {
        *x = width.aesenclast(*x, keys[ROUNDS]);
        for i in 0..W::BLOCKS {
            tags[r * W::BLOCKS + i] = width.block(*x, i);
        }
    }
    tags
}
