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
//! the record keys expanded round key by round key, word-sliced across the group's four
//! registers, POLYVAL by Horner's rule (one multiplication and reduction per block, the fewest
//! instructions when latency is hidden; the single-message path builds a table of up to 16
//! powers per message instead, to shorten its chain; groups of more than
//! [`HORNER_ROWS`](groups::HORNER_ROWS) rows reduce once per four rows, against three powers
//! per lane), the tags and the counter blocks with each lane's own round keys. When sealing, the
//! expansion runs a few round keys after each POLYVAL row: it is a latency chain (about six
//! cycles per round key) and POLYVAL is bound by the multiplier's throughput (on Zen 3 a row
//! of four registers is 20 multiplications, 40 cycles), and neither needs the other; one
//! after the other in program order, the reorder window held only half the expansion at a
//! time and the group waited on it (interleaved, 64 x 64-byte seals went from 1.45x to
//! 2.25-2.55x the single-message API on VAES). Everything a message
//! differs in becomes data: its blocks are gathered into rows, right-aligned so that a
//! shorter message starts with zero blocks (which leave a POLYVAL state of zero unchanged),
//! and, where a register holds several messages (VAES, AVX-512), its keystream is computed
//! for as many blocks as the group's longest message and used only as far as its own length;
//! where it holds one (AES-NI, AArch64), each message's counter mode runs on its own text
//! with its own round keys. The batch takes short messages ordered by their hashed block
//! count, so a group's messages are nearly equally long.
//!
//! Messages whose POLYVAL input (padded AAD, padded plaintext, length block) is at most
//! [`Tier::BATCH_GROUP_BLOCKS`] blocks run in groups: 64 with VAES (texts up to about 1000 bytes), 24 on
//! AES-NI (about 370). Past a few blocks a group no longer saves latency but instructions:
//! the single-message kernel builds a table of up to 16 powers of H per message (about 45
//! carry-less multiplications) and waits on it, where a group's Horner's rule needs no table
//! at five multiplications per block, and on VAES every AES and multiplication serves two
//! messages. The limits are where the groups stopped beating the pipeline below in
//! alternating runs (Zen 3: at 576 bytes the groups ran 1.5x the loop of single calls on VAES,
//! the pipeline 1.10x; at 1500 bytes the groups lost; the runs:
//! docs/measurements/2026-11-25-zen3-aead-comb-batch.md). A last group that is not full runs the
//! single-message kernel message by message, and the long messages run its steps
//! software-pipelined across messages ([`pipeline`]), so that one message's key setup and tag
//! wait while another's counter mode runs.

mod groups;
mod pipeline;

use zeroize::Zeroize;

use self::groups::{GROUP, Group, GroupScratch, Groups, open_group, seal_group};
use self::pipeline::{gcm_siv_long_jobs, run_one};
use crate::aead::SivJob;
use crate::aes::AesKeySize;
use crate::aes::kernels::{RoundKeys, broadcast};
use crate::cpu::Tier;
use crate::cpu::{TierToken, per_tier};

per_tier! {
    /// `seal_batch` in one function, one dispatch for the whole batch: short messages in
    /// lockstep groups, long ones software-pipelined across messages (this module).
    pub(crate) fn gcm_siv_seal_jobs(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
    ) = seal_jobs;
}

per_tier! {
    /// `open_batch` in one function, as [`gcm_siv_seal_jobs`]: each job's tag is
    /// checked in constant time and a job that fails is zeroed (through the one failure path
    /// every decryption takes) and marked not authentic.
    pub(crate) fn gcm_siv_open_jobs(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
    ) = open_jobs;
}

/// The blocks POLYVAL reads for a job.
#[inline(always)]
pub(super) fn hashed_blocks(job: &SivJob<'_>) -> usize {
    job.aad.len().div_ceil(16) + job.data.len().div_ceil(16) + 1
}

/// Seals every job: short ones in groups ordered by their hashed block count, the others
/// (and those that do not fill a last group) one at a time.
#[inline(always)]
pub(crate) fn seal_jobs<W: Tier>(tier: W, key_generating_key: &RoundKeys, jobs: &mut [SivJob<'_>]) {
    run_jobs::<W, false>(tier, key_generating_key, jobs);
}

/// Opens every job as [`seal_jobs`] seals them: each job's tag is checked in constant time,
/// and a job that fails is zeroed (through the one failure path every decryption takes) and
/// marked not authentic.
#[inline(always)]
pub(crate) fn open_jobs<W: Tier>(tier: W, key_generating_key: &RoundKeys, jobs: &mut [SivJob<'_>]) {
    run_jobs::<W, true>(tier, key_generating_key, jobs);
}

/// [`seal_jobs`] or, with `OPEN`, [`open_jobs`].
///
/// (No closures here: a closure's body would not inherit the kernel's target features.)
#[inline(always)]
fn run_jobs<W: Tier, const OPEN: bool>(
    tier: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    let Some(groups) = Groups::new(GROUP * W::BLOCKS, W::BATCH_GROUP_BLOCKS, jobs) else {
        for job in jobs.iter_mut().filter(|job| is_short_job::<W>(job)) {
            run_one::<W, OPEN>(tier, key_generating_key, job);
        }
        long_jobs::<OPEN>(tier.token(), key_generating_key, jobs);
        return;
    };
    let mut wide_keys = broadcast(tier, key_generating_key.schedule());
    {
        // Wiped where it lies when the block ends: `drop(scratch)` copied its 4 KB (with
        // AVX-512) to a new place first.
        let mut scratch = GroupScratch::new(tier, groups.longest());
        for group in groups.full() {
            let args = Group {
                key_generating_key: &wide_keys,
                jobs: &mut *jobs,
                members: group,
                scratch: &mut scratch,
            };
            match (OPEN, key_generating_key.size()) {
                (false, AesKeySize::Aes128) => seal_group::<W, 10>(tier, args),
                (false, AesKeySize::Aes256) => seal_group::<W, 14>(tier, args),
                (true, AesKeySize::Aes128) => open_group::<W, 10>(tier, args),
                (true, AesKeySize::Aes256) => open_group::<W, 14>(tier, args),
            }
        }
    }
    wide_keys.zeroize();
    // The members no group takes: the short ones of the last group, then the long ones.
    let alone = groups.alone();
    for member in alone
        .iter()
        .filter(|member| member.blocks <= W::BATCH_GROUP_BLOCKS)
    {
        run_one::<W, OPEN>(tier, key_generating_key, &mut jobs[member.job]);
    }
    if alone
        .last()
        .is_some_and(|member| member.blocks > W::BATCH_GROUP_BLOCKS)
    {
        long_jobs::<OPEN>(tier.token(), key_generating_key, jobs);
    }
}

/// Whether a job is short enough for the groups at width `W`.
#[inline(always)]
pub(super) fn is_short_job<W: Tier>(job: &SivJob<'_>) -> bool {
    hashed_blocks(job) <= W::BATCH_GROUP_BLOCKS
}

/// [`gcm_siv_long_jobs`] with the stitched loop's products the tier asks for
/// ([`TierToken::schoolbook_stitched`]; a seal has no stitched loop).
fn long_jobs<const OPEN: bool>(
    token: TierToken,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    if OPEN && token.schoolbook_stitched() {
        gcm_siv_long_jobs::<true, true>(token, key_generating_key, jobs);
    } else {
        gcm_siv_long_jobs::<OPEN, false>(token, key_generating_key, jobs);
    }
}
