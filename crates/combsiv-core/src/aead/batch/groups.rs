//! The lockstep groups: every step of RFC 8452 across a group of short messages, one per block
//! of a register (see the parent module).

use alloc::vec;
use alloc::vec::Vec;

use zeroize::Zeroize;

use super::super::kernels::{counter_block, length_block, nonce_value, top_bit};
use super::super::{check_tag, open_or_wipe};
use super::hashed_blocks;
use crate::aead::SivJob;
use crate::aes::ctr::{Counter, apply_keystream};
use crate::aes::kernels::{encrypt, for_each_middle_round};
use crate::aes::key_expansion::SlicedExpansion;
use crate::cpu::{
    BATCH_GROUP, BATCH_HASHES_BY_LANE, Block, MAX_BATCH_GROUP_BLOCKS, MAX_BLOCKS, Tier, block_from,
    load_block, store_block,
};
use crate::field::kernels::{accumulate_product, mul, reduce, reduce_sums, square};
use crate::layout::SivLayout;

/// Registers of messages per group (the architecture's [`BATCH_GROUP`]).
pub(super) const GROUP: usize = BATCH_GROUP;

/// Messages per group at the widest register.
const MAX_LANES: usize = GROUP * MAX_BLOCKS;

/// A group's blocks, row by row: row r holds each lane's block r (right-aligned, see the
/// module comment), lane `g * W::BLOCKS + i` in block i of register g.
type Row = [Block; MAX_LANES];

/// What a group keeps in memory, allocated once per batch: zeroing it per group cost more
/// than a group's POLYVAL. Each group overwrites what it uses and the batch wipes it all
/// when it ends. A lane's rows before its first must be zero, and they are without a wipe
/// per group: the groups come in order of their messages' hashed block counts, so a lane's
/// rows in one group (the last `blocks` rows) include every row it used in the groups
/// before, and the rows before them were never written. Rows and keystream are as long as
/// the batch's longest grouped message needs: a batch of short messages neither clears nor
/// wipes room for long ones.
pub(super) struct GroupScratch<W: Tier> {
    /// The group's record encryption keys, expanded, round by round: round key r of
    /// register g's lanes at `[r][g]`, so that each expansion step stores 64 bytes in a row
    /// (on AArch64 one ST4 store, which also transposes them).
    encryption: [[W::Reg; GROUP]; 15],
    rows: Vec<Row>,
    /// Row i: each lane's keystream block i, as the rows' lanes. (Blocks, not registers:
    /// a vector of AVX-512 registers is allocated 64-byte aligned, which left glibc's
    /// allocator a fragment to consolidate on every batch.)
    keystream: Vec<Row>,
}

impl<W: Tier> GroupScratch<W> {
    /// GroupScratch for groups of messages of at most `blocks` hashed blocks (at least one).
    #[inline(always)]
    pub(super) fn new(tier: W, blocks: usize) -> Self {
        GroupScratch {
            encryption: [[tier.zero(); GROUP]; 15],
            rows: vec![[tier.narrow().zero(); MAX_LANES]; blocks],
            // A one-block tier's counter mode needs no rows (see `counter_mode`).
            keystream: vec![
                [tier.narrow().zero(); MAX_LANES];
                if W::BLOCKS == 1 {
                    0
                } else {
                    blocks.saturating_sub(1)
                }
            ],
        }
    }
}

impl<W: Tier> Drop for GroupScratch<W> {
    fn drop(&mut self) {
        self.encryption.zeroize();
        self.rows.zeroize();
        self.keystream.zeroize();
    }
}

/// A job of the batch and the number of blocks POLYVAL reads for it.
#[derive(Clone, Copy, Default)]
pub(super) struct Member {
    pub(super) job: usize,
    pub(super) blocks: usize,
}

/// The jobs in order of their hashed block count (a counting sort; lengths are public), the
/// short ones first, cut into full groups of `lanes`; the short jobs of the last group,
/// which is not full, and the long jobs run alone.
pub(super) struct Groups {
    order: Vec<Member>,
    short: usize,
    lanes: usize,
}

impl Groups {
    /// The groups of a batch, or `None` if its short jobs fill no group: then the batch
    /// costs one pass over the lengths more than the loop over the jobs (and, with at least
    /// `lanes` jobs, the allocation of their order; the sort and the scratch cost a batch of
    /// 64 long messages about 2 %). A batch already in order (all its messages equally long,
    /// say) is taken as it comes: one pass checks the order and a binary search finds the
    /// first long job, where the counting sort took a 64-byte message of an AArch64 batch 7
    /// more instructions.
    #[inline(always)]
    pub(super) fn new(lanes: usize, limit: usize, jobs: &[SivJob<'_>]) -> Option<Self> {
        if jobs.len() < lanes {
            return None;
        }
        let mut order: Vec<Member> = jobs
            .iter()
            .enumerate()
            .map(|(job, sivjob)| Member {
                job,
                blocks: hashed_blocks(sivjob),
            })
            .collect();
        // Bucket n < limit holds the jobs of n + 1 hashed blocks, bucket `limit` the long
        // jobs.
        let bucket = |member: &Member| (member.blocks - 1).min(limit);
        let in_order = order.windows(2).fold(true, |in_order, pair| {
            in_order & (bucket(&pair[0]) <= bucket(&pair[1]))
        });
        let short = if in_order {
            order.partition_point(|member| bucket(member) < limit)
        } else {
            // A counting sort: starts[b] counts bucket b's jobs, then becomes its first
            // position.
            let mut starts = [0; MAX_BATCH_GROUP_BLOCKS + 1];
            for member in &order {
                starts[bucket(member)] += 1;
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
            let mut sorted = vec![Member::default(); order.len()];
            for member in &order {
                let start = &mut starts[bucket(member)];
                sorted[*start] = *member;
                *start += 1;
            }
            order = sorted;
            short
        };
        if short < lanes {
            return None;
        }
        Some(Groups {
            order,
            short,
            lanes,
        })
    }

    /// The full groups.
    #[inline(always)]
    pub(super) fn full(&self) -> core::slice::ChunksExact<'_, Member> {
        self.order[..self.short].chunks_exact(self.lanes)
    }

    /// The most hashed blocks of any job in a full group.
    #[inline(always)]
    pub(super) fn longest(&self) -> usize {
        let grouped = self.short - self.full().remainder().len();
        grouped
            .checked_sub(1)
            .map_or(1, |last| self.order[last].blocks)
    }

    /// The jobs no group takes: the short ones of the last group, then the long ones.
    #[inline(always)]
    pub(super) fn alone(&self) -> &[Member] {
        &self.order[self.short - self.full().remainder().len()..]
    }
}

/// What a group kernel works on.
pub(super) struct Group<'a, 'j, W: Tier> {
    /// The key-generating key, broadcast to every block of a register.
    pub(super) key_generating_key: &'a [W::Reg; 15],
    pub(super) jobs: &'a mut [SivJob<'j>],
    /// Which jobs the group takes, with their hashed block counts.
    pub(super) members: &'a [Member],
    pub(super) scratch: &'a mut GroupScratch<W>,
}

/// RFC 8452 Section 4 for a full group of short jobs, every step across the group.
#[inline(always)]
pub(super) fn seal_group<W: Tier, const ROUNDS: usize>(
    tier: W,
    Group {
        key_generating_key,
        jobs,
        members: group,
        scratch,
    }: Group<'_, '_, W>,
) {
    let first_row = gather_rows(tier, jobs, group, &mut scratch.rows);
    let (nonces, mut authentication, expansion) =
        record_keys::<W, ROUNDS>(tier, key_generating_key, jobs, group, scratch);
    // The record keys' expansion (a latency chain) runs between POLYVAL's steps (bound by
    // the multiplier's throughput), which do not depend on it.
    let s = polyval(
        tier,
        &authentication,
        jobs,
        group,
        scratch,
        first_row,
        expansion,
    );
    authentication.zeroize();
    let tags = tags_of::<W, ROUNDS>(tier, &scratch.encryption, s, &nonces);
    counter_mode::<W, ROUNDS>(tier, jobs, group, scratch, &tags);
    for (lane, member) in group.iter().enumerate() {
        jobs[member.job].tag = store_block(tier.block(tags[lane / W::BLOCKS], lane % W::BLOCKS));
    }
}

/// RFC 8452 Section 5 for a full group of short jobs: counter mode from the received tags,
/// POLYVAL over what it produced, and each job's tag checked on its own.
#[inline(always)]
pub(super) fn open_group<W: Tier, const ROUNDS: usize>(
    tier: W,
    Group {
        key_generating_key,
        jobs,
        members: group,
        scratch,
    }: Group<'_, '_, W>,
) {
    let received = per_register(tier, |lane| load_block(&jobs[group[lane].job].tag));
    let (nonces, mut authentication, mut expansion) =
        record_keys::<W, ROUNDS>(tier, key_generating_key, jobs, group, scratch);
    expansion.finish(tier, &mut scratch.encryption);
    counter_mode::<W, ROUNDS>(tier, jobs, group, scratch, &received);
    let first_row = gather_rows(tier, jobs, group, &mut scratch.rows);
    let s = polyval(
        tier,
        &authentication,
        jobs,
        group,
        scratch,
        first_row,
        expansion,
    );
    authentication.zeroize();
    let expected = tags_of::<W, ROUNDS>(tier, &scratch.encryption, s, &nonces);
    for (lane, member) in group.iter().enumerate() {
        let job = &mut jobs[member.job];
        let expected = store_block(tier.block(expected[lane / W::BLOCKS], lane % W::BLOCKS));
        let received = job.tag;
        let verdict = open_or_wipe((&mut *job.data).into(), |_| check_tag(&expected, &received));
        job.authentic = verdict.is_ok();
    }
}

/// The group's registers, lane `g * W::BLOCKS + i` in block i of register g.
#[inline(always)]
fn per_register<W: Tier>(tier: W, lane: impl Fn(usize) -> Block) -> [W::Reg; GROUP] {
    let mut registers = [tier.zero(); GROUP];
    for (g, register) in registers.iter_mut().enumerate() {
        *register = tier.gather(|i| lane(g * W::BLOCKS + i));
    }
    registers
}

/// Section 4's derivation for the group (the first halves of AES(LE32(i) || nonce) for i < 4,
/// or 6 for AES-256, as one batch per pair of i): puts the record encryption keys into the
/// scratch as their first round keys and returns the nonces (as blocks), the authentication
/// keys and the expansion still to run.
#[inline(always)]
fn record_keys<W: Tier, const ROUNDS: usize>(
    tier: W,
    key_generating_key: &[W::Reg; 15],
    jobs: &[SivJob<'_>],
    group: &[Member],
    scratch: &mut GroupScratch<W>,
) -> ([W::Reg; GROUP], [W::Reg; GROUP], Expansion<W, ROUNDS>) {
    let nonces = per_register(tier, |lane| {
        block_from(nonce_value(&jobs[group[lane].job].nonce))
    });
    let mut shifted = [tier.zero(); GROUP];
    for (shifted, &nonce) in shifted.iter_mut().zip(&nonces) {
        *shifted = tier.shift_bytes_up::<4>(nonce);
    }
    // The authentication key (part 0), the encryption key (1) and AES-256's second half (2),
    // a call per part so that each stays in registers: a loop over the parts kept them on the
    // stack, and wiping them there cost a 64-byte message 11 AArch64 instructions (the
    // single-message derivation, too, leaves the values it keeps in registers unwiped).
    let authentication = key_part::<W, ROUNDS>(tier, key_generating_key, &shifted, 0);
    let low = key_part::<W, ROUNDS>(tier, key_generating_key, &shifted, 1);
    let high = if ROUNDS == 14 {
        Some(key_part::<W, ROUNDS>(tier, key_generating_key, &shifted, 2))
    } else {
        None
    };
    scratch.encryption[0] = low;
    if let Some(high) = high {
        scratch.encryption[1] = high;
    }
    let sliced = SlicedExpansion::new(tier, low, high);
    (
        nonces,
        authentication,
        Expansion {
            sliced,
            quarters: 0,
        },
    )
}

/// Key part `p` of RFC 8452 Section 4's derivation for every lane: the first halves of
/// AES(LE32(2p) || nonce) and AES(LE32(2p + 1) || nonce), from the nonces shifted up by the
/// counter's 4 bytes.
#[inline(always)]
fn key_part<W: Tier, const ROUNDS: usize>(
    tier: W,
    key_generating_key: &[W::Reg; 15],
    shifted: &[W::Reg; GROUP],
    p: u128,
) -> [W::Reg; GROUP] {
    let mut blocks = [tier.zero(); 2 * GROUP];
    for (g, &nonce) in shifted.iter().enumerate() {
        blocks[g] = tier.or(nonce, tier.broadcast(block_from(2 * p)));
        blocks[GROUP + g] = tier.or(nonce, tier.broadcast(block_from(2 * p + 1)));
    }
    encrypt(tier, key_generating_key, ROUNDS, &mut blocks);
    let mut halves = [tier.zero(); GROUP];
    for (g, half) in halves.iter_mut().enumerate() {
        *half = tier.low_halves(blocks[g], blocks[GROUP + g]);
    }
    halves
}

/// The round keys of a group's record encryption keys still to expand, the four registers
/// of keys at once, in quarters of two to four steps whose bounds are constants where the
/// quarter's number is: there they unroll into straight-line code, Rcon and the place each
/// step stores to constant and the words kept in registers from one step to the next. (In a
/// loop of as many steps after each of POLYVAL's rows, storing by four ST4 of a key each, the
/// expansion cost a 64-byte message of an AArch64 batch 69 instructions; in quarters, with one
/// ST4 a step, 27, qemu count. Each quarter written out step by step instead gave an
/// unoptimized build a 1.5 MB stack frame for the batch kernel, which overflowed a test
/// thread's 2 MiB.) A quarter runs after each of POLYVAL's first four steps: the expansion is
/// a latency chain and POLYVAL bound by the multiplier's throughput, and finely interleaved
/// the two overlap; with the whole expansion ahead of POLYVAL, `seal_batch` of 64-byte
/// messages on AES-NI took 155 cycles a message against 121 (Zen 4), the chain's waiting
/// instructions filling the scheduler.
struct Expansion<W: Tier, const ROUNDS: usize> {
    sliced: SlicedExpansion<W>,
    /// Quarters expanded so far, 0 to 4.
    quarters: usize,
}

const _: () = assert!(
    GROUP == 4,
    "the expansion is sliced across four registers of keys"
);

impl<W: Tier, const ROUNDS: usize> Expansion<W, ROUNDS> {
    /// Expands the next quarter of the round keys, if any is left.
    #[inline(always)]
    fn quarter(&mut self, tier: W, keys: &mut [[W::Reg; GROUP]; 15]) {
        // Round keys 1..=10 (AES-128) or 2..=14 (AES-256), in quarters.
        let (from, to) = match (ROUNDS == 14, self.quarters) {
            (false, 0) => (1, 4),
            (false, 1) => (4, 7),
            (false, 2) => (7, 9),
            (false, 3) => (9, 11),
            (true, 0) => (2, 6),
            (true, 1) => (6, 9),
            (true, 2) => (9, 12),
            (true, 3) => (12, 15),
            _ => (0, 0),
        };
        #[allow(
            clippy::needless_range_loop,
            reason = "the index is the step's too; enumerated, the loop did not unroll"
        )]
        for index in from..to {
            self.sliced
                .next(tier, ROUNDS == 14, index, &mut keys[index]);
        }
        self.quarters = (self.quarters + 1).min(4);
    }

    /// Expands every round key left.
    #[inline(always)]
    fn finish(&mut self, tier: W, keys: &mut [[W::Reg; GROUP]; 15]) {
        while self.quarters < 4 {
            self.quarter(tier, keys);
        }
    }
}

/// Each lane's blocks of padded AAD, padded text and length block, right-aligned in `rows`;
/// returns the first row any lane uses. Rows before a lane's first are left zero. A group
/// that [`polyval_lanes`] hashes needs no rows.
#[inline(always)]
fn gather_rows<W: Tier>(tier: W, jobs: &[SivJob<'_>], group: &[Member], rows: &mut [Row]) -> usize {
    if lane_by_lane::<W>(group) {
        return rows.len();
    }
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
                *target = tier.load_last_partial(part);
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
pub(super) const HORNER_ROWS: usize = 8;

/// Whether POLYVAL runs lane by lane on each lane's own text ([`polyval_lanes`]): where the
/// architecture asks for it, on a one-block tier, for groups that Horner's rule hashes. (The
/// last member is the longest.)
#[inline(always)]
fn lane_by_lane<W: Tier>(group: &[Member]) -> bool {
    BATCH_HASHES_BY_LANE
        && W::BLOCKS == 1
        && group.last().is_some_and(|last| last.blocks <= HORNER_ROWS)
}

/// POLYVAL of each lane with the rest of the `expansion` spread over it: lane by lane where
/// [`lane_by_lane`], else over the rows from `first_row` on.
#[inline(always)]
fn polyval<W: Tier, const ROUNDS: usize>(
    tier: W,
    h: &[W::Reg; GROUP],
    jobs: &[SivJob<'_>],
    group: &[Member],
    scratch: &mut GroupScratch<W>,
    first_row: usize,
    expansion: Expansion<W, ROUNDS>,
) -> [W::Reg; GROUP] {
    if lane_by_lane::<W>(group) {
        polyval_lanes(tier, h, jobs, group, scratch, expansion)
    } else {
        polyval_rows(tier, h, scratch, first_row, expansion)
    }
}

/// POLYVAL by Horner's rule of each lane's padded AAD, padded text and length block, read
/// where they lie, a lane at a time: a register of a one-block tier is one lane, so no rows
/// are needed to line the lanes up ([`BATCH_HASHES_BY_LANE`] says where this pays).
#[inline(always)]
fn polyval_lanes<W: Tier, const ROUNDS: usize>(
    tier: W,
    h: &[W::Reg; GROUP],
    jobs: &[SivJob<'_>],
    group: &[Member],
    scratch: &mut GroupScratch<W>,
    mut expansion: Expansion<W, ROUNDS>,
) -> [W::Reg; GROUP] {
    // A lane at a time with a quarter of the expansion after each, written out so that each
    // quarter's number is a constant (in a loop over the lanes, the branch on it cost a
    // 64-byte message 6 AArch64 instructions).
    let keys = &mut scratch.encryption;
    let s0 = polyval_lane(tier, jobs, group, h, 0);
    expansion.quarter(tier, keys);
    let s1 = polyval_lane(tier, jobs, group, h, 1);
    expansion.quarter(tier, keys);
    let s2 = polyval_lane(tier, jobs, group, h, 2);
    expansion.quarter(tier, keys);
    let s3 = polyval_lane(tier, jobs, group, h, 3);
    expansion.finish(tier, keys);
    [s0, s1, s2, s3]
}

/// POLYVAL by Horner's rule of lane `g`'s padded AAD, padded text and length block (zero for
/// a lane the group has no member in: none, for a full group).
#[inline(always)]
fn polyval_lane<W: Tier>(
    tier: W,
    jobs: &[SivJob<'_>],
    group: &[Member],
    h: &[W::Reg; GROUP],
    g: usize,
) -> W::Reg {
    let (Some(member), Some(&h)) = (group.get(g), h.get(g)) else {
        return tier.zero();
    };
    let job = &jobs[member.job];
    let h = (h, tier.xor(h, tier.swap_halves(h)));
    let mut s = tier.zero();
    for part in [job.aad, &*job.data] {
        let (whole, partial) = part.as_chunks::<16>();
        for block in whole {
            horner_step(tier, &mut s, tier.broadcast(load_block(block)), h);
        }
        if !partial.is_empty() {
            let block = tier.load_last_partial(part);
            horner_step(tier, &mut s, tier.broadcast(block), h);
        }
    }
    let length = length_block(job.aad.len(), job.data.len());
    horner_step(tier, &mut s, tier.broadcast(length), h);
    s
}

/// One step of Horner's rule: S = (S + X) * H, with H's halves XORed for Karatsuba.
#[inline(always)]
fn horner_step<W: Tier>(tier: W, s: &mut W::Reg, x: W::Reg, h: (W::Reg, W::Reg)) {
    let mut sums = [tier.zero(); 3];
    accumulate_product(tier, &mut sums, tier.xor(*s, x), h);
    *s = reduce_sums(tier, sums);
}

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
    tier: W,
    h: &[W::Reg; GROUP],
    scratch: &mut GroupScratch<W>,
    first_row: usize,
    mut expansion: Expansion<W, ROUNDS>,
) -> [W::Reg; GROUP] {
    let rows = &scratch.rows[first_row..];
    let mut karatsuba = [tier.zero(); GROUP];
    for (karatsuba, &h) in karatsuba.iter_mut().zip(h) {
        *karatsuba = tier.xor(h, tier.swap_halves(h));
    }
    let mut s = [tier.zero(); GROUP];
    if rows.len() <= HORNER_ROWS {
        // Short groups: no powers, which would cost more than they save (and, kept in
        // memory to be wiped, slowed 64-byte messages by a tenth).
        for row in rows {
            horner_row(tier, &mut s, row, (h, &karatsuba));
            expansion.quarter(tier, &mut scratch.encryption);
        }
        expansion.finish(tier, &mut scratch.encryption);
        karatsuba.zeroize();
        return s;
    }
    let (single, aggregated) = rows.split_at(rows.len() % AGGREGATED_ROWS);
    let aggregated = aggregated.as_chunks::<AGGREGATED_ROWS>().0;
    for row in single {
        horner_row(tier, &mut s, row, (h, &karatsuba));
        expansion.quarter(tier, &mut scratch.encryption);
    }
    // powers[k - 1] holds H^k of each register's lanes, and the same with each entry's
    // halves XORed for Karatsuba.
    let mut powers = [[*h, karatsuba]; AGGREGATED_ROWS];
    for g in 0..GROUP {
        let h_squared = square(tier, h[g]);
        powers[1][0][g] = h_squared;
        powers[2][0][g] = reduce(tier, mul(tier, h_squared, h[g]));
        powers[3][0][g] = square(tier, h_squared);
    }
    for [power, karatsuba] in powers.iter_mut().skip(1) {
        for (power, karatsuba) in power.iter().zip(karatsuba) {
            *karatsuba = tier.xor(*power, tier.swap_halves(*power));
        }
    }
    for chunk in aggregated {
        for (g, s) in s.iter_mut().enumerate() {
            let mut sums = [tier.zero(); 3];
            for (j, row) in chunk.iter().enumerate() {
                let mut x = tier.load_blocks(row, g * W::BLOCKS);
                if j == 0 {
                    x = tier.xor(x, *s);
                }
                let [power, karatsuba] = &powers[AGGREGATED_ROWS - 1 - j];
                accumulate_product(tier, &mut sums, x, (power[g], karatsuba[g]));
            }
            *s = reduce_sums(tier, sums);
        }
        expansion.quarter(tier, &mut scratch.encryption);
    }
    expansion.finish(tier, &mut scratch.encryption);
    powers.zeroize();
    karatsuba.zeroize();
    s
}

/// One step of Horner's rule for each register: S = (S + X) * H.
#[inline(always)]
fn horner_row<W: Tier>(
    tier: W,
    s: &mut [W::Reg; GROUP],
    row: &Row,
    (h, karatsuba): (&[W::Reg; GROUP], &[W::Reg; GROUP]),
) {
    for (g, s) in s.iter_mut().enumerate() {
        horner_step(
            tier,
            s,
            tier.load_blocks(row, g * W::BLOCKS),
            (h[g], karatsuba[g]),
        );
    }
}

/// Section 4: tag = AES(record encryption key, (S xor nonce) with the top bit cleared).
#[inline(always)]
fn tags_of<W: Tier, const ROUNDS: usize>(
    tier: W,
    keys: &[[W::Reg; GROUP]; 15],
    s: [W::Reg; GROUP],
    nonces: &[W::Reg; GROUP],
) -> [W::Reg; GROUP] {
    let top_bit = tier.broadcast(top_bit());
    let mut tags = [tier.zero(); GROUP];
    for ((tag, s), &nonce) in tags.iter_mut().zip(s).zip(nonces) {
        *tag = tier.and_not(top_bit, tier.xor(s, nonce));
    }
    encrypt_each::<W, ROUNDS>(tier, keys, &mut tags);
    tags
}

/// Section 4's counter mode over each lane's text, from the counter block that is its tag
/// (computed or received, in `tags`) with the top bit set.
///
/// On a one-block tier a register is one lane and its round keys are that lane's own, so the
/// single-message counter mode runs on each lane's text in turn, as many blocks as the text
/// has, the keystream XORed from registers. A wider register holds several lanes, each block
/// under its own key: there the keystream goes through the scratch's rows. (Through the rows,
/// a 64-byte message of a batch took 58 more AArch64 instructions, qemu count.)
#[inline(always)]
fn counter_mode<W: Tier, const ROUNDS: usize>(
    tier: W,
    jobs: &mut [SivJob<'_>],
    group: &[Member],
    scratch: &mut GroupScratch<W>,
    tags: &[W::Reg; GROUP],
) {
    if W::BLOCKS == 1 {
        for (g, (member, &tag)) in group.iter().zip(tags).enumerate() {
            let keys = core::array::from_fn(|round| scratch.encryption[round][g]);
            let counter = counter_block(tier.narrow(), tier.block(tag, 0));
            let mut counter = Counter::<W, SivLayout>::new(tier, counter);
            let text = (&mut *jobs[member.job].data).into();
            apply_keystream::<W, SivLayout, ROUNDS>(tier, &keys, &mut counter, text);
        }
        return;
    }
    keystream_of::<W, ROUNDS>(tier, scratch, tags, text_blocks(jobs, group));
    for (lane, member) in group.iter().enumerate() {
        xor_keystream(tier, jobs[member.job].data, &scratch.keystream, lane);
    }
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
    tier: W,
    scratch: &mut GroupScratch<W>,
    tags: &[W::Reg; GROUP],
    blocks: usize,
) {
    let top_bit = tier.broadcast(top_bit());
    let mut counters = [tier.zero(); GROUP];
    for (counter, &tag) in counters.iter_mut().zip(tags) {
        *counter = tier.or(tag, top_bit);
    }
    for (i, row) in scratch.keystream.iter_mut().take(blocks).enumerate() {
        // The counter is the first 32-bit word, little-endian, wrapping mod 2^32.
        let offset = tier.broadcast(block_from(i as u128));
        let mut states = [tier.zero(); GROUP];
        for (state, &counter) in states.iter_mut().zip(&counters) {
            *state = tier.add32(counter, offset);
        }
        encrypt_each::<W, ROUNDS>(tier, &scratch.encryption, &mut states);
        for (g, state) in states.into_iter().enumerate() {
            tier.store_blocks(state, row, g * W::BLOCKS);
        }
    }
}

/// Encrypts one register per group register, each with its own lanes' round keys, round by
/// round across the group in program order: four independent chains. No
/// [`round_boundary`](crate::aes::kernels::round_boundary) is needed to keep four states
/// together, and the keystream's rows overlap one another in the out-of-order window.
#[inline(always)]
fn encrypt_each<W: Tier, const ROUNDS: usize>(
    tier: W,
    keys: &[[W::Reg; GROUP]; 15],
    blocks: &mut [W::Reg; GROUP],
) {
    for (block, &key) in blocks.iter_mut().zip(&keys[0]) {
        *block = tier.xor(*block, key);
    }
    for_each_middle_round!(W, ROUNDS, |round| {
        for (block, &key) in blocks.iter_mut().zip(&keys[round]) {
            *block = tier.aes_round(*block, key);
        }
    });
    for (block, &key) in blocks.iter_mut().zip(&keys[ROUNDS]) {
        *block = tier.aes_last_round(*block, key);
    }
}

/// XORs lane `lane`'s keystream into `data` (at most one block per keystream row).
#[inline(always)]
fn xor_keystream<W: Tier>(tier: W, data: &mut [u8], keystream: &[Row], lane: usize) {
    let narrow = tier.narrow();
    // A short keystream would leave plaintext in place: never silently.
    assert!(
        keystream.len() >= data.len().div_ceil(16) && lane < MAX_LANES,
        "a keystream row for every block, and the lane in each"
    );
    let (whole, partial) = data.as_chunks_mut::<16>();
    let (whole_count, has_partial) = (whole.len(), !partial.is_empty());
    for (block, row) in whole.iter_mut().zip(keystream) {
        *block = store_block(narrow.xor(load_block(block), row[lane]));
    }
    if has_partial {
        let row = &keystream[whole_count];
        let block = tier.load_last_partial(data);
        tier.store_last_partial(narrow.xor(block, row[lane]), data);
    }
}
