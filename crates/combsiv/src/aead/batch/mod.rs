//! Batched AES-GCM-SIV: short and medium messages in lockstep, one per block of a register,
//! so that their latency chains overlap in program order instead of waiting on each other;
//! long ones software-pipelined.
//!
//! Why: a short message is almost all latency. A 64-byte AES-128 seal is a chain of the
//! derivation (10 dependent AES rounds), the record-key expansion (10 steps of about five
//! dependent instructions), POLYVAL (a few dependent multiplications), the tag (10 rounds)
//! and the counter mode (10 rounds): about 200 cycles of latency for about 100 AES
//! instructions, which the AES unit could issue in 50. One message at a time, out-of-order
//! execution overlaps only what its window holds of the next message.
//!
//! How: a group is [`GROUP`] registers of messages, one message per block (4 messages on
//! AES-NI, 8 with VAES, two per YMM register), and every step runs on all of them, step by
//! step: the derivation blocks of the whole group as one batch under the key-generating key,
//! the record keys expanded round key by round key across the group, POLYVAL by Horner's rule
//! (one multiplication and reduction per block, the fewest instructions when latency is
//! hidden; the single-message path builds a table of up to 16 powers per message instead, to
//! shorten its chain; groups of more than [`HORNER_ROWS`] rows reduce once per four rows,
//! against three powers per lane),
//! the tags and the counter blocks with each lane's own round keys. When sealing, the
//! expansion runs a few round keys after each POLYVAL row: it is a latency chain (about six
//! cycles per round key) and POLYVAL is bound by the multiplier's throughput (on Zen 3 a row
//! of four registers is 20 multiplications, 40 cycles), and neither needs the other; one
//! after the other in program order, the reorder window held only half the expansion at a
//! time and the group waited on it (64 x 64 bytes: 1.15-1.20x the single-message API on
//! AES-NI before, 1.5-1.9x after; VAES 1.45x before, 2.25-2.55x after). Everything a message
//! differs in becomes data: its blocks are gathered into rows, right-aligned so that a
//! shorter message starts with zero blocks (which leave a POLYVAL state of zero unchanged),
//! and its keystream is computed for as many blocks as the group's longest message and used
//! only as far as its own length. The batch takes short messages ordered by their hashed
//! block count, so a group's messages are nearly equally long.
//!
//! Messages whose POLYVAL input (padded AAD, padded plaintext, length block) is at most
//! [`Tier::BATCH_GROUP_BLOCKS`] blocks run in groups: 64 with VAES (texts up to about 1000 bytes), 24 on
//! AES-NI (about 370). Past a few blocks a group no longer saves latency but instructions:
//! the single-message kernel builds a table of up to 16 powers of H per message (about 45
//! carry-less multiplications) and waits on it, where a group's Horner's rule needs no table
//! at five multiplications per block, and on VAES every AES and multiplication serves two
//! messages. Measured on Zen 3 against the loop of single calls, groups of messages of 576
//! bytes ran 1.5x on VAES (the pipeline below: 1.10x) and 1.1-1.2x on AES-NI (1.03x); at
//! 1000 bytes 1.15x on VAES (1.05x); at 1500 bytes the groups lost (0.96x VAES, 0.86x
//! AES-NI). The AES-NI limit was 48 blocks until the single-message key expansion was
//! unrolled and the single path got faster: then, in alternating runs, the pipeline beat the
//! groups on AES-NI from 26 blocks up (400 bytes: 1.01-1.06x against 0.94-1.00x; 576: 1.06x
//! against 1.01-1.05x; 700: 1.03-1.05x against 0.99-1.00x), while at 300 bytes the groups
//! still won (1.08-1.22x against 1.00-1.10x). A last group that is not full runs the
//! single-message kernel message by message, and the long messages run its steps
//! software-pipelined across messages ([`pipeline`]), so that one message's key setup and tag
//! wait while another's counter mode runs.

use alloc::vec;
use alloc::vec::Vec;

use aead::inout::InOutBuf;

use zeroize::Zeroize;

use super::kernels::{
    SivMessage, counter_block, ctr_and_hash_rounds, length_block, nonce_value, record_keys_and_aad,
    tag_of, top_bit,
};
use super::{check_tag, open_or_wipe};
use crate::aead::gcm_siv::SivJob;
use crate::aes::kernels::{
    Counter, RoundKeys, Schedule, apply_keystream, broadcast, encrypt, first_round_keys, round_key,
};
use crate::cpu::{
    BATCH_GROUP, Block, MAX_BATCH_GROUP_BLOCKS, MAX_BLOCKS, Narrow, Tier, block_from, load_block,
    load_last_partial, per_tier, store_block, store_last_partial,
};
use crate::field::kernels::{
    Key as PolyvalKey, absorb_padded, accumulate_product, mul, reduce, reduce_sums, square,
};

/// Registers of messages per group (the architecture's [`BATCH_GROUP`]).
const GROUP: usize = BATCH_GROUP;

/// Messages per group at the widest register.
const MAX_LANES: usize = GROUP * MAX_BLOCKS;

/// A group's blocks, row by row: row r holds each lane's block r (right-aligned, see the
/// module comment), lane `g * W::BLOCKS + i` in block i of register g.
type Row = [Block; MAX_LANES];

/// A block of the group's keystream, one register per group register.
type KeystreamRow<W> = [<W as Tier>::Reg; GROUP];

/// What a group keeps in memory, allocated once per batch: zeroing it per group cost more
/// than a group's POLYVAL. The rows are wiped after each group, which leaves them zero as the
/// next group needs them; the rest is overwritten by each group and wiped when the batch
/// ends. Rows and keystream are as long as the batch's longest grouped message needs: a
/// batch of short messages neither clears nor wipes room for long ones.
struct Scratch<W: Tier> {
    /// Each lane's record encryption key, expanded.
    encryption: [[W::Reg; 15]; GROUP],
    rows: Vec<Row>,
    keystream: Vec<KeystreamRow<W>>,
}

impl<W: Tier> Scratch<W> {
    /// Scratch for groups of messages of at most `blocks` hashed blocks (at least one).
    #[inline(always)]
    fn new(width: W, blocks: usize) -> Self {
        Scratch {
            encryption: [[width.zero(); 15]; GROUP],
            rows: vec![[width.narrow().zero(); MAX_LANES]; blocks],
            keystream: vec![[width.zero(); GROUP]; blocks.saturating_sub(1)],
        }
    }

    /// Wipes the rows a group used, leaving them zero for the next one.
    #[inline(always)]
    fn clear_rows(&mut self, first_row: usize, lanes: usize) {
        for row in &mut self.rows[first_row..] {
            for block in &mut row[..lanes] {
                block.zeroize();
            }
        }
    }
}

impl<W: Tier> Drop for Scratch<W> {
    fn drop(&mut self) {
        self.encryption.zeroize();
        self.keystream.zeroize();
    }
}

/// The blocks POLYVAL reads for a job.
#[inline(always)]
fn hashed_blocks(job: &SivJob<'_>) -> usize {
    job.aad.len().div_ceil(16) + job.data.len().div_ceil(16) + 1
}

/// Seals every job: short ones in groups ordered by their hashed block count, the others
/// (and those that do not fill a last group) one at a time.
#[inline(always)]
pub(crate) fn seal_jobs<W: Tier>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    run_jobs::<W, false>(width, key_generating_key, jobs);
}

/// Opens every job as [`seal_jobs`] seals them: each job's tag is checked in constant time,
/// and a job that fails is zeroed (through the one failure path every decryption takes) and
/// marked not authentic.
#[inline(always)]
pub(crate) fn open_jobs<W: Tier>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    run_jobs::<W, true>(width, key_generating_key, jobs);
}

/// [`seal_jobs`] or, with `OPEN`, [`open_jobs`].
///
/// (No closures here: a closure's body would not inherit the kernel's target features.)
#[inline(always)]
fn run_jobs<W: Tier, const OPEN: bool>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    let Some(groups) = Groups::new(GROUP * W::BLOCKS, W::BATCH_GROUP_BLOCKS, jobs) else {
        for job in jobs.iter_mut().filter(|job| is_short_job::<W>(job)) {
            run_one::<W, OPEN>(width, key_generating_key, job);
        }
        gcm_siv_long_jobs::<OPEN>(width.token(), key_generating_key, jobs);
        return;
    };
    let mut wide_keys = broadcast(width, key_generating_key.schedule());
    let mut scratch = Scratch::new(width, groups.longest());
    for group in groups.full() {
        let args = (&wide_keys, &mut *jobs, group, &mut scratch);
        match (OPEN, key_generating_key.rounds()) {
            (false, 10) => seal_group::<W, 10>(width, args),
            (false, _) => seal_group::<W, 14>(width, args),
            (true, 10) => open_group::<W, 10>(width, args),
            (true, _) => open_group::<W, 14>(width, args),
        }
    }
    drop(scratch);
    wide_keys.zeroize();
    // The members no group takes: the short ones of the last group, then the long ones.
    let alone = groups.alone();
    for member in alone
        .iter()
        .filter(|member| member.blocks <= W::BATCH_GROUP_BLOCKS)
    {
        run_one::<W, OPEN>(width, key_generating_key, &mut jobs[member.job]);
    }
    if alone
        .last()
        .is_some_and(|member| member.blocks > W::BATCH_GROUP_BLOCKS)
    {
        gcm_siv_long_jobs::<OPEN>(width.token(), key_generating_key, jobs);
    }
}

/// Whether a job is short enough for the groups at width `W`.
#[inline(always)]
fn is_short_job<W: Tier>(job: &SivJob<'_>) -> bool {
    hashed_blocks(job) <= W::BATCH_GROUP_BLOCKS
}

per_tier! {
    /// Every long job of a batch (more than [`Tier::BATCH_GROUP_BLOCKS`] hashed blocks),
    /// software-pipelined ([`pipeline`]).
    fn gcm_siv_long_jobs<const OPEN: bool>(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
    ) = long_jobs;
}

#[inline(always)]
fn long_jobs<W: Tier, const OPEN: bool>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    match key_generating_key.rounds() {
        10 => pipeline::<W, 10, OPEN>(width, key_generating_key, jobs),
        _ => pipeline::<W, 14, OPEN>(width, key_generating_key, jobs),
    }
}

/// A message whose last pass is still to run: its job, its record encryption key, and its
/// tag (sealing) or POLYVAL's state after the AAD (opening). Its broadcast key and its
/// POLYVAL table are in the other slot of [`pipeline`]'s pairs.
struct Pending {
    job: usize,
    encryption: Schedule,
    value: Block,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.encryption.zeroize();
        self.value.zeroize();
    }
}

/// Seals (or, with `OPEN`, opens) the long jobs with the single-message
/// kernel's steps, but software-pipelined across messages: the record keys and POLYVAL table
/// of message i+1 (derivation, expansion and the powers: about 125 dependent cycles on Zen 3)
/// come before message i's last pass in program order, and so does the tag of message i when
/// sealing (about 45 more), so that their latency passes while that pass runs instead of
/// stalling the next message. Sealing runs
///
/// ```text
/// keys(0) hash(0) tag(0) | keys(1) ctr(0) hash(1) tag(1) | keys(2) ctr(1) hash(2) tag(2) | ...
/// ```
///
/// and opening `keys(0) | keys(1) ctr+hash(0) tag(0) | keys(2) ctr+hash(1) tag(1) | ...`. The
/// results are the single-message kernel's: the same functions in another order. Measured on
/// Zen 3, same process, medians of 41: the batch of 64 x 1500 bytes 1.06-1.10x the loop of
/// single calls on VAES (1.03x on AES-NI), 64 x 576 bytes 1.07-1.19x.
#[inline(always)]
fn pipeline<W: Tier, const ROUNDS: usize, const OPEN: bool>(
    width: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    let narrow = width.narrow();
    // Two slots of broadcast record encryption keys and POLYVAL tables: this message's, and
    // the pending one's.
    let mut hash_keys = [PolyvalKey::empty(narrow), PolyvalKey::empty(narrow)];
    let mut wide = [[width.zero(); 15]; 2];
    let mut current = 0;
    let mut pending: Option<Pending> = None;
    for index in 0..jobs.len() {
        let job = &jobs[index];
        if is_short_job::<W>(job) {
            continue;
        }
        let message = SivMessage {
            key_generating_key,
            nonce: &job.nonce,
            aad: job.aad,
        };
        let slot = (&mut hash_keys[current], &mut wide[current]);
        let (encryption, s) =
            record_keys_and_aad::<W, ROUNDS>(width, &message, job.data.len(), slot);
        // The table must be built here, ahead of the pass below, not sunk past it.
        core::hint::black_box(&hash_keys[current]);
        if let Some(previous) = pending.take() {
            let other = 1 - current;
            finish::<W, ROUNDS, OPEN>(width, (&wide[other], &hash_keys[other]), previous, jobs);
        }
        let value = if OPEN {
            s
        } else {
            let job = &mut jobs[index];
            let lengths = length_block(job.aad.len(), job.data.len());
            let s = absorb_padded::<W, false>(
                width,
                &hash_keys[current],
                s,
                (&*job.data, 0),
                Some(lengths),
            );
            let tag = tag_of::<ROUNDS>(narrow, &encryption, s, &job.nonce);
            job.tag = store_block(tag);
            tag
        };
        pending = Some(Pending {
            job: index,
            encryption,
            value,
        });
        current = 1 - current;
    }
    if let Some(previous) = pending {
        let other = 1 - current;
        finish::<W, ROUNDS, OPEN>(width, (&wide[other], &hash_keys[other]), previous, jobs);
    }
    wide.zeroize();
}

/// A pending message's last pass: counter mode from its tag (sealing), or counter mode
/// stitched with POLYVAL from the received tag, then the tag check, which wipes the job on a
/// mismatch (opening).
#[inline(always)]
fn finish<W: Tier, const ROUNDS: usize, const OPEN: bool>(
    width: W,
    (keys, hash_key): (&[W::Reg; 15], &PolyvalKey),
    message: Pending,
    jobs: &mut [SivJob<'_>],
) {
    let narrow = width.narrow();
    let job = &mut jobs[message.job];
    let tag = if OPEN {
        load_block(&job.tag)
    } else {
        message.value
    };
    let mut counter = Counter::<W, false>::new(width, counter_block(narrow, tag));
    let mut buf: InOutBuf<'_, '_, u8> = (&mut *job.data).into();
    if OPEN {
        let lengths = length_block(job.aad.len(), buf.len());
        let s = ctr_and_hash_rounds::<W, false, true, ROUNDS>(
            width,
            (keys, hash_key),
            (message.value, &mut counter),
            buf.reborrow(),
            lengths,
        );
        let expected = store_block(tag_of::<ROUNDS>(narrow, &message.encryption, s, &job.nonce));
        let received = job.tag;
        job.authentic = open_or_wipe(buf, |_| check_tag(&expected, &received)).is_ok();
    } else {
        apply_keystream::<W, false, ROUNDS>(width, keys, &mut counter, buf);
    }
}

/// A job no group takes, through the single-message kernel: called, not inlined, so that it
/// is the very code the single-message API runs. Inlined into the batch loop, the VAES
/// instance ran 64 messages of 1500 bytes 7 % slower than one call each (Zen 3, median of
/// 41 interleaved runs; the compiler schedules and allocates registers differently in the
/// larger function), and a batch must never be slower than the loop it replaces.
#[inline(always)]
fn run_one<W: Tier, const OPEN: bool>(
    width: W,
    key_generating_key: &RoundKeys,
    job: &mut SivJob<'_>,
) {
    let message = SivMessage {
        key_generating_key,
        nonce: &job.nonce,
        aad: job.aad,
    };
    let mut buf: InOutBuf<'_, '_, u8> = (&mut *job.data).into();
    if OPEN {
        let received = job.tag;
        let expected =
            super::kernels::gcm_siv_open(width.token(), &message, buf.reborrow(), &received);
        job.authentic = open_or_wipe(buf, |_| check_tag(&expected, &received)).is_ok();
    } else {
        job.tag = super::kernels::gcm_siv_seal(width.token(), &message, buf);
    }
}

/// A job of the batch and the number of blocks POLYVAL reads for it.
#[derive(Clone, Copy, Default)]
struct Member {
    job: usize,
    blocks: usize,
}

/// The jobs in order of their hashed block count (a counting sort; lengths are public), the
/// short ones first, cut into full groups of `lanes`; the short jobs of the last group,
/// which is not full, and the long jobs run alone.
struct Groups {
    order: Vec<Member>,
    short: usize,
    lanes: usize,
}

impl Groups {
    /// The groups of a batch, or `None` if its short jobs fill no group: then the batch
    /// costs one pass over the lengths more than the loop over the jobs, and allocates
    /// nothing (the sort and the scratch cost a batch of 64 long messages about 2 %).
    #[inline(always)]
    fn new(lanes: usize, limit: usize, jobs: &[SivJob<'_>]) -> Option<Self> {
        // Bucket n < limit holds the jobs of n + 1 hashed blocks, bucket `limit` the long
        // jobs. starts[b] counts bucket b's jobs, then becomes its first position.
        let bucket = |blocks: usize| (blocks - 1).min(limit);
        let mut starts = [0; MAX_BATCH_GROUP_BLOCKS + 1];
        for job in jobs {
            starts[bucket(hashed_blocks(job))] += 1;
        }
        let mut position = 0;
        for start in &mut starts {
            let count = *start;
            *start = position;
            position += count;
        }
        let short = starts[limit];
        if short < lanes {
            return None;
        }
        let mut order = vec![Member::default(); jobs.len()];
        for (i, job) in jobs.iter().enumerate() {
            let blocks = hashed_blocks(job);
            let start = &mut starts[bucket(blocks)];
            order[*start] = Member { job: i, blocks };
            *start += 1;
        }
        Some(Groups {
            order,
            short,
            lanes,
        })
    }

    /// The full groups.
    #[inline(always)]
    fn full(&self) -> core::slice::ChunksExact<'_, Member> {
        self.order[..self.short].chunks_exact(self.lanes)
    }

    /// The most hashed blocks of any job in a full group.
    #[inline(always)]
    fn longest(&self) -> usize {
        let grouped = self.short - self.full().remainder().len();
        grouped
            .checked_sub(1)
            .map_or(1, |last| self.order[last].blocks)
    }

    /// The jobs no group takes: the short ones of the last group, then the long ones.
    #[inline(always)]
    fn alone(&self) -> &[Member] {
        &self.order[self.short - self.full().remainder().len()..]
    }
}

/// What a group kernel works on: the broadcast key-generating key, the jobs, the group's
/// members (which jobs, and their hashed block counts), the scratch.
type GroupArgs<'a, 'j, W> = (
    &'a [<W as Tier>::Reg; 15],
    &'a mut [SivJob<'j>],
    &'a [Member],
    &'a mut Scratch<W>,
);

/// RFC 8452 Section 4 for a full group of short jobs, every step across the group.
#[inline(always)]
fn seal_group<W: Tier, const ROUNDS: usize>(
    width: W,
    (key_generating_key, jobs, group, scratch): GroupArgs<'_, '_, W>,
) {
    let first_row = gather_rows::<W>(width.narrow(), jobs, group, &mut scratch.rows);
    let (nonces, mut authentication, expansion) =
        record_keys::<W, ROUNDS>(width, key_generating_key, jobs, group, scratch);
    // The record keys' expansion (a latency chain) runs between POLYVAL's rows (bound by the
    // multiplier's throughput), which do not depend on it.
    let s = polyval_rows(width, &authentication, scratch, first_row, expansion);
    authentication.zeroize();
    scratch.clear_rows(first_row, group.len());
    let tags = tags_of::<W, ROUNDS>(width, &scratch.encryption, s, &nonces);
    let text_blocks = text_blocks(jobs, group);
    keystream_of::<W, ROUNDS>(width, scratch, &tags, text_blocks);
    for (lane, member) in group.iter().enumerate() {
        let job = &mut jobs[member.job];
        job.tag = store_block(width.block(tags[lane / W::BLOCKS], lane % W::BLOCKS));
        xor_keystream(width, job.data, &scratch.keystream, lane);
    }
}

/// RFC 8452 Section 5 for a full group of short jobs: counter mode from the received tags,
/// POLYVAL over what it produced, and each job's tag checked on its own.
#[inline(always)]
fn open_group<W: Tier, const ROUNDS: usize>(
    width: W,
    (key_generating_key, jobs, group, scratch): GroupArgs<'_, '_, W>,
) {
    let received = per_register(width, |lane| load_block(&jobs[group[lane].job].tag));
    let (nonces, mut authentication, mut expansion) =
        record_keys::<W, ROUNDS>(width, key_generating_key, jobs, group, scratch);
    expansion.run(width, &mut scratch.encryption, ROUNDS);
    let text_blocks = text_blocks(jobs, group);
    keystream_of::<W, ROUNDS>(width, scratch, &received, text_blocks);
    for (lane, member) in group.iter().enumerate() {
        xor_keystream(width, jobs[member.job].data, &scratch.keystream, lane);
    }
    let first_row = gather_rows::<W>(width.narrow(), jobs, group, &mut scratch.rows);
    let s = polyval_rows(width, &authentication, scratch, first_row, expansion);
    authentication.zeroize();
    scratch.clear_rows(first_row, group.len());
    let expected = tags_of::<W, ROUNDS>(width, &scratch.encryption, s, &nonces);
    for (lane, member) in group.iter().enumerate() {
        let job = &mut jobs[member.job];
        let expected = store_block(width.block(expected[lane / W::BLOCKS], lane % W::BLOCKS));
        let received = job.tag;
        let verdict = open_or_wipe((&mut *job.data).into(), |_| check_tag(&expected, &received));
        job.authentic = verdict.is_ok();
    }
}

/// The group's registers, lane `g * W::BLOCKS + i` in block i of register g.
#[inline(always)]
fn per_register<W: Tier>(width: W, lane: impl Fn(usize) -> Block) -> [W::Reg; GROUP] {
    let mut registers = [width.zero(); GROUP];
    for (g, register) in registers.iter_mut().enumerate() {
        *register = width.gather(|i| lane(g * W::BLOCKS + i));
    }
    registers
}

/// Section 4's derivation for the group (the first halves of AES(LE32(i) || nonce) for i < 4,
/// or 6 for AES-256, as one batch per pair of i): puts the record encryption keys into the
/// scratch as their first round keys and returns the nonces (as blocks), the authentication
/// keys and the expansion still to run.
#[inline(always)]
fn record_keys<W: Tier, const ROUNDS: usize>(
    width: W,
    key_generating_key: &[W::Reg; 15],
    jobs: &[SivJob<'_>],
    group: &[Member],
    scratch: &mut Scratch<W>,
) -> ([W::Reg; GROUP], [W::Reg; GROUP], Expansion<ROUNDS>) {
    let nonces = per_register(width, |lane| {
        block_from(nonce_value(&jobs[group[lane].job].nonce))
    });
    let mut shifted = [width.zero(); GROUP];
    for (shifted, &nonce) in shifted.iter_mut().zip(&nonces) {
        *shifted = width.shift_bytes_up::<4>(nonce);
    }
    // Key part p (authentication, encryption, its second half) is the first halves of blocks
    // 2p and 2p+1.
    let parts = if ROUNDS == 14 { 3 } else { 2 };
    let mut halves = [[width.zero(); GROUP]; 3];
    for (p, halves) in halves.iter_mut().enumerate().take(parts) {
        let mut blocks = [width.zero(); 2 * GROUP];
        for (g, &nonce) in shifted.iter().enumerate() {
            blocks[g] = width.or(nonce, width.broadcast(block_from(2 * p as u128)));
            blocks[GROUP + g] = width.or(nonce, width.broadcast(block_from(2 * p as u128 + 1)));
        }
        encrypt(width, key_generating_key, ROUNDS, &mut blocks);
        for (g, half) in halves.iter_mut().enumerate() {
            *half = width.low_halves(blocks[g], blocks[GROUP + g]);
        }
        blocks.zeroize();
    }
    let [authentication, low, high] = halves;
    let high = (ROUNDS == 14).then_some(high);
    let next = first_round_keys(low, high, &mut scratch.encryption);
    halves.zeroize();
    (nonces, authentication, Expansion { next })
}

/// The round keys of a group's record encryption keys still to expand: from `next` to
/// `ROUNDS`.
struct Expansion<const ROUNDS: usize> {
    next: usize,
}

impl<const ROUNDS: usize> Expansion<ROUNDS> {
    /// Expands the next `steps` round keys of every lane, or as many as remain.
    #[inline(always)]
    fn run<W: Tier>(&mut self, width: W, keys: &mut [[W::Reg; 15]; GROUP], steps: usize) {
        let end = (self.next + steps).min(ROUNDS + 1);
        for index in self.next..end {
            round_key(width, ROUNDS == 14, index, keys);
        }
        self.next = end;
    }

    /// Round keys still to expand.
    #[inline(always)]
    fn remaining(&self) -> usize {
        ROUNDS + 1 - self.next
    }
}

/// Each lane's blocks of padded AAD, padded text and length block, right-aligned in `rows`;
/// returns the first row any lane uses. Rows before a lane's first are left zero.
#[inline(always)]
fn gather_rows<W: Tier>(
    narrow: Narrow,
    jobs: &[SivJob<'_>],
    group: &[Member],
    rows: &mut [Row],
) -> usize {
    let mut first_row = rows.len();
    // Zipped with the lane range, so that indexing a row by lane needs no bounds check.
    for (lane, member) in (0..MAX_LANES).zip(group) {
        let job = &jobs[member.job];
        let row = rows.len() - member.blocks;
        first_row = first_row.min(row);
        let mut targets = rows[row..].iter_mut().map(|row| &mut row[lane]);
        for part in [job.aad, &*job.data] {
            let (whole, partial) = part.as_chunks::<16>();
            for (block, target) in whole.iter().zip(&mut targets) {
                *target = load_block(block);
            }
            if !partial.is_empty()
                && let Some(target) = targets.next()
            {
                *target = load_last_partial(narrow, part);
            }
        }
        if let Some(target) = targets.next() {
            *target = length_block(job.aad.len(), job.data.len());
        }
    }
    first_row
}

/// Rows of a group up to which POLYVAL runs Horner's rule one row at a time; longer groups
/// take [`AGGREGATED_ROWS`] rows per reduction.
const HORNER_ROWS: usize = 8;

/// Rows per reduction in a long group: `S' = (S + X_1) * H^4 + X_2 * H^3 + X_3 * H^2 + X_4 * H`
/// costs 14 carry-less multiplications per register where four steps of Horner's rule cost
/// 20, for 15 more per register and group to compute `H^2..H^4`. POLYVAL is what a long
/// group spends most of its time on: on Zen 3, where a YMM multiplication takes two cycles of
/// the pipes the AES instructions also use, a row of four registers costs about 47 cycles by
/// Horner's rule (`llvm-mca -mcpu=znver3`).
const AGGREGATED_ROWS: usize = 4;

/// POLYVAL of each lane's rows from `first_row` on, by Horner's rule: S = (S + X) * H, a row
/// at a time, or for long groups [`AGGREGATED_ROWS`] rows at a time against powers of H
/// after a row at a time for the rows that do not divide evenly. The rest of the `expansion`
/// is spread over the steps, the same number of round keys after each.
#[inline(always)]
fn polyval_rows<W: Tier, const ROUNDS: usize>(
    width: W,
    h: &[W::Reg; GROUP],
    scratch: &mut Scratch<W>,
    first_row: usize,
    mut expansion: Expansion<ROUNDS>,
) -> [W::Reg; GROUP] {
    let rows = &scratch.rows[first_row..];
    let mut karatsuba = [width.zero(); GROUP];
    for (karatsuba, &h) in karatsuba.iter_mut().zip(h) {
        *karatsuba = width.xor(h, width.swap_halves(h));
    }
    let mut s = [width.zero(); GROUP];
    if rows.len() <= HORNER_ROWS {
        // Short groups: no powers, which would cost more than they save (and, kept in
        // memory to be wiped, slowed 64-byte messages by a tenth).
        let keys_per_step = expansion.remaining().div_ceil(rows.len());
        for row in rows {
            horner_row(width, &mut s, row, (h, &karatsuba));
            expansion.run(width, &mut scratch.encryption, keys_per_step);
        }
        karatsuba.zeroize();
        return s;
    }
    let (single, aggregated) = rows.split_at(rows.len() % AGGREGATED_ROWS);
    let aggregated = aggregated.as_chunks::<AGGREGATED_ROWS>().0;
    let keys_per_step = expansion
        .remaining()
        .div_ceil(single.len() + aggregated.len());
    for row in single {
        horner_row(width, &mut s, row, (h, &karatsuba));
        expansion.run(width, &mut scratch.encryption, keys_per_step);
    }
    // powers[k - 1] holds H^k of each register's lanes, and the same with each entry's
    // halves XORed for Karatsuba.
    let mut powers = [[*h, karatsuba]; AGGREGATED_ROWS];
    for g in 0..GROUP {
        let h_squared = square(width, h[g]);
        powers[1][0][g] = h_squared;
        powers[2][0][g] = reduce(width, mul(width, h_squared, h[g]));
        powers[3][0][g] = square(width, h_squared);
    }
    for [power, karatsuba] in powers.iter_mut().skip(1) {
        for (power, karatsuba) in power.iter().zip(karatsuba) {
            *karatsuba = width.xor(*power, width.swap_halves(*power));
        }
    }
    for chunk in aggregated {
        for (g, s) in s.iter_mut().enumerate() {
            let mut sums = [width.zero(); 3];
            for (j, row) in chunk.iter().enumerate() {
                let mut x = width.load_blocks(row, g * W::BLOCKS);
                if j == 0 {
                    x = width.xor(x, *s);
                }
                let [power, karatsuba] = &powers[AGGREGATED_ROWS - 1 - j];
                accumulate_product(width, &mut sums, x, (power[g], karatsuba[g]));
            }
            *s = reduce_sums(width, sums);
        }
        expansion.run(width, &mut scratch.encryption, keys_per_step);
    }
    powers.zeroize();
    karatsuba.zeroize();
    s
}

/// One step of Horner's rule for each register: S = (S + X) * H.
#[inline(always)]
fn horner_row<W: Tier>(
    width: W,
    s: &mut [W::Reg; GROUP],
    row: &Row,
    (h, karatsuba): (&[W::Reg; GROUP], &[W::Reg; GROUP]),
) {
    for (g, s) in s.iter_mut().enumerate() {
        let x = width.xor(*s, width.load_blocks(row, g * W::BLOCKS));
        let mut sums = [width.zero(); 3];
        accumulate_product(width, &mut sums, x, (h[g], karatsuba[g]));
        *s = reduce_sums(width, sums);
    }
}

/// Section 4: tag = AES(record encryption key, (S xor nonce) with the top bit cleared).
#[inline(always)]
fn tags_of<W: Tier, const ROUNDS: usize>(
    width: W,
    keys: &[[W::Reg; 15]; GROUP],
    s: [W::Reg; GROUP],
    nonces: &[W::Reg; GROUP],
) -> [W::Reg; GROUP] {
    let top_bit = width.broadcast(top_bit());
    let mut tags = [width.zero(); GROUP];
    for ((tag, s), &nonce) in tags.iter_mut().zip(s).zip(nonces) {
        *tag = width.and_not(top_bit, width.xor(s, nonce));
    }
    encrypt_each::<W, ROUNDS>(width, keys, &mut tags);
    tags
}

/// The most text blocks of any lane.
#[inline(always)]
fn text_blocks(jobs: &[SivJob<'_>], group: &[Member]) -> usize {
    let mut blocks = 0;
    for member in group {
        blocks = blocks.max(jobs[member.job].data.len().div_ceil(16));
    }
    blocks
}

/// Section 4's counter mode: `blocks` keystream blocks of each lane into the scratch, from the
/// counter block that is its tag with the top bit set.
///
/// A row at a time, one block of every group register: four independent chains per row,
/// which the out-of-order window overlaps with the next rows', and the round keys stay memory
/// operands of the AES instructions, read where they lie. Computed four rows at a time and
/// then stored row by row, as before, the keys were loop-invariant for the loop over the
/// rows, so LLVM loaded every one of them and spilled it to the stack inside the loop: on
/// AES-NI 72 moves next to 40 AES instructions, which made the loop bound by its stores in
/// `llvm-mca` (74 cycles against 25 now per 40 AES instructions), and 3.6 % (64-byte
/// messages) to 7.6 % (300 bytes) more instructions in all.
#[inline(always)]
fn keystream_of<W: Tier, const ROUNDS: usize>(
    width: W,
    scratch: &mut Scratch<W>,
    tags: &[W::Reg; GROUP],
    blocks: usize,
) {
    let top_bit = width.broadcast(top_bit());
    let mut counters = [width.zero(); GROUP];
    for (counter, &tag) in counters.iter_mut().zip(tags) {
        *counter = width.or(tag, top_bit);
    }
    for (i, row) in scratch.keystream.iter_mut().take(blocks).enumerate() {
        // The counter is the first 32-bit word, little-endian, wrapping mod 2^32.
        let offset = width.broadcast(block_from(i as u128));
        let mut states = [width.zero(); GROUP];
        for (state, &counter) in states.iter_mut().zip(&counters) {
            *state = width.add32(counter, offset);
        }
        encrypt_each::<W, ROUNDS>(width, &scratch.encryption, &mut states);
        *row = states;
    }
}

/// Encrypts one register per group register, each with its own lanes' round keys, round by
/// round across the group in program order: four independent chains. No
/// [`round_boundary`](crate::aes::kernels::round_boundary) is needed to keep four states
/// together, and the keystream's rows overlap one another in the out-of-order window.
#[inline(always)]
fn encrypt_each<W: Tier, const ROUNDS: usize>(
    width: W,
    keys: &[[W::Reg; 15]; GROUP],
    blocks: &mut [W::Reg; GROUP],
) {
    for (block, keys) in blocks.iter_mut().zip(keys) {
        *block = width.xor(*block, keys[0]);
    }
    for round in 1..ROUNDS {
        for (block, keys) in blocks.iter_mut().zip(keys) {
            *block = width.aesenc(*block, keys[round]);
        }
    }
    for (block, keys) in blocks.iter_mut().zip(keys) {
        *block = width.aesenclast(*block, keys[ROUNDS]);
    }
}

/// XORs lane `lane`'s keystream into `data` (at most one block per keystream row).
#[inline(always)]
fn xor_keystream<W: Tier>(width: W, data: &mut [u8], keystream: &[KeystreamRow<W>], lane: usize) {
    let narrow = width.narrow();
    let (g, i) = (lane / W::BLOCKS, lane % W::BLOCKS);
    // A short keystream would leave plaintext in place: never silently.
    assert!(
        keystream.len() >= data.len().div_ceil(16),
        "a keystream row for every block"
    );
    let (whole, partial) = data.as_chunks_mut::<16>();
    let (whole_count, has_partial) = (whole.len(), !partial.is_empty());
    for (block, row) in whole.iter_mut().zip(keystream) {
        *block = store_block(narrow.xor(load_block(block), width.block(row[g], i)));
    }
    if has_partial {
        let row = &keystream[whole_count];
        let block = load_last_partial(narrow, data);
        store_last_partial(narrow, narrow.xor(block, width.block(row[g], i)), data);
    }
}
