//! Long messages: the single-message kernel's steps, software-pipelined across messages so
//! that one message's key setup and tag wait while another's counter mode runs.

use aead::inout::InOutBuf;
use zeroize::Zeroize;

use super::super::kernels::{
    SivMessage, counter_block, ctr_and_hash_rounds, length_block, record_keys_and_aad, tag_of,
};
use super::super::{check_tag, open_or_wipe};
use super::is_short_job;
use crate::aead::SivJob;
use crate::aes::AesKeySize;
use crate::aes::ctr::{Counter, apply_keystream};
use crate::aes::kernels::RoundKeys;
#[cfg(target_arch = "aarch64")]
use crate::aes::kernels::broadcast;
use crate::aes::key_expansion::KeySchedule;
use crate::cpu::{Block, Kernel, Tier, load_block, per_tier, store_block};
use crate::field::kernels::{PowerTable, absorb_padded};
use crate::layout::SivLayout;

per_tier! {
    /// Every long job of a batch (more than [`Tier::BATCH_GROUP_BLOCKS`] hashed blocks),
    /// software-pipelined ([`pipeline`]).
    pub(super) fn gcm_siv_long_jobs<const OPEN: bool, const SCHOOLBOOK: bool>(
        key_generating_key: &RoundKeys,
        jobs: &mut [SivJob<'_>],
    ) = long_jobs;
}

#[inline(always)]
fn long_jobs<W: Tier, const OPEN: bool, const SCHOOLBOOK: bool>(
    tier: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    match key_generating_key.size() {
        AesKeySize::Aes128 => pipeline::<W, 10, OPEN, SCHOOLBOOK>(tier, key_generating_key, jobs),
        AesKeySize::Aes256 => pipeline::<W, 14, OPEN, SCHOOLBOOK>(tier, key_generating_key, jobs),
    }
}

/// A message whose last pass is still to run: its job, its record encryption key, and its
/// tag (sealing) or POLYVAL's state after the AAD (opening). Its broadcast key and its
/// POLYVAL table are in the other slot of [`pipeline`]'s pairs.
struct Pending {
    job: usize,
    encryption: KeySchedule,
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
/// results are the single-message kernel's: the same functions in another order. A batch of
/// 64 x 1500 bytes ran 1.06x or more the speed of the loop of single calls on VAES (Zen 3;
/// docs/measurements/2026-11-25-zen3-aead-comb-batch.md).
#[inline(always)]
fn pipeline<W: Tier, const ROUNDS: usize, const OPEN: bool, const SCHOOLBOOK: bool>(
    tier: W,
    key_generating_key: &RoundKeys,
    jobs: &mut [SivJob<'_>],
) {
    let narrow = tier.narrow();
    // Two slots of broadcast record encryption keys and POLYVAL tables: this message's, and
    // the pending one's.
    let mut hash_keys = [PowerTable::empty(narrow), PowerTable::empty(narrow)];
    let mut wide = [[tier.zero(); 15]; 2];
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
            record_keys_and_aad::<W, ROUNDS>(tier, &message, job.data.len(), slot);
        // The table must be built here, ahead of the pass below, not sunk past it.
        core::hint::black_box(&hash_keys[current]);
        if let Some(previous) = pending.take() {
            let other = 1 - current;
            complete::<W, ROUNDS, OPEN, SCHOOLBOOK>(
                tier,
                (&wide[other], &hash_keys[other]),
                previous,
                jobs,
            );
        }
        let value = if OPEN {
            s
        } else {
            let job = &mut jobs[index];
            let lengths = Some(length_block(job.aad.len(), job.data.len()));
            let data = (&*job.data, 0);
            #[cfg(not(target_arch = "aarch64"))]
            let s = absorb_padded::<W, SivLayout>(tier, &hash_keys[current], s, data, lengths);
            #[cfg(target_arch = "aarch64")]
            let s = polyval_pass(tier.token(), &hash_keys[current], s, data, lengths);
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
        complete::<W, ROUNDS, OPEN, SCHOOLBOOK>(
            tier,
            (&wide[other], &hash_keys[other]),
            previous,
            jobs,
        );
    }
    wide.zeroize();
}

/// A pending message's last pass: counter mode from its tag (sealing), or counter mode
/// stitched with POLYVAL from the received tag, then the tag check, which wipes the job on a
/// mismatch (opening).
#[inline(always)]
fn complete<W: Tier, const ROUNDS: usize, const OPEN: bool, const SCHOOLBOOK: bool>(
    tier: W,
    (keys, hash_key): (&[W::Reg; 15], &PowerTable),
    message: Pending,
    jobs: &mut [SivJob<'_>],
) {
    let narrow = tier.narrow();
    let job = &mut jobs[message.job];
    let tag = if OPEN {
        load_block(&job.tag)
    } else {
        message.value
    };
    let counter = counter_block(narrow, tag);
    let mut buf: InOutBuf<'_, '_, u8> = (&mut *job.data).into();
    if OPEN {
        let lengths = length_block(job.aad.len(), buf.len());
        let s = ctr_and_hash_rounds::<W, SivLayout, true, ROUNDS, SCHOOLBOOK>(
            tier,
            (keys, hash_key),
            (
                message.value,
                &mut Counter::<W, SivLayout>::new(tier, counter),
            ),
            buf.reborrow(),
            lengths,
        );
        let expected = store_block(tag_of::<ROUNDS>(narrow, &message.encryption, s, &job.nonce));
        let received = job.tag;
        job.authentic = open_or_wipe(buf, |_| check_tag(&expected, &received)).is_ok();
    } else {
        #[cfg(not(target_arch = "aarch64"))]
        let mut counter = Counter::<W, SivLayout>::new(tier, counter);
        #[cfg(not(target_arch = "aarch64"))]
        apply_keystream::<W, SivLayout, ROUNDS>(tier, keys, &mut counter, buf);
        #[cfg(target_arch = "aarch64")]
        counter_pass::<ROUNDS>(tier.token(), &message.encryption, counter, buf);
    }
}

// On AArch64 a long seal's two passes are called, not inlined into the pipeline: there
// LLVM held the POLYVAL table's powers in general registers, moved into vector registers on
// every stride, and built each stride's counters with twice the additions. Sealing 64
// messages of 8 KiB took 19,586 instructions a message against 18,124 one message per call
// (qemu count), called 18,128; 1 KiB 3,129 and 3,064 against 3,051. On x86 the calls cost
// 1-4 % (Zen 5) and the passes stay inlined.
#[cfg(target_arch = "aarch64")]
per_tier! {
    /// A long seal's POLYVAL pass over its text and length block.
    fn polyval_pass(
        hash_key: &PowerTable,
        s: Block,
        data: (&[u8], usize),
        lengths: Option<Block>,
    ) -> Block = polyval_pass_kernel;
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn polyval_pass_kernel<W: Tier>(
    tier: W,
    hash_key: &PowerTable,
    s: Block,
    data: (&[u8], usize),
    lengths: Option<Block>,
) -> Block {
    absorb_padded::<W, SivLayout>(tier, hash_key, s, data, lengths)
}

#[cfg(target_arch = "aarch64")]
per_tier! {
    /// A long seal's counter pass from its first counter block.
    fn counter_pass<const ROUNDS: usize>(
        encryption: &KeySchedule,
        counter: Block,
        data: InOutBuf<'_, '_, u8>,
    ) = counter_pass_kernel;
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn counter_pass_kernel<W: Tier, const ROUNDS: usize>(
    tier: W,
    encryption: &KeySchedule,
    counter: Block,
    data: InOutBuf<'_, '_, u8>,
) {
    let mut keys = broadcast(tier, encryption);
    let mut counter = Counter::<W, SivLayout>::new(tier, counter);
    apply_keystream::<W, SivLayout, ROUNDS>(tier, &keys, &mut counter, data);
    keys.zeroize();
}

/// A job no group takes, through the single-message kernel: called, not inlined, so that it
/// is the very code the single-message API runs. Inlined into the batch loop, the VAES
/// instance ran 64 messages of 1500 bytes 7 % slower than one call each (Zen 3, median of
/// 41 interleaved runs; the compiler schedules and allocates registers differently in the
/// larger function), and a batch must never be slower than the loop it replaces.
#[inline(always)]
pub(super) fn run_one<W: Tier, const OPEN: bool>(
    tier: W,
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
        let token = tier.token().for_message(Kernel::SivOpen, buf.len());
        let opened = buf.reborrow();
        let expected = if token.schoolbook_stitched() {
            super::super::kernels::gcm_siv_open::<true>(token, &message, opened, &received)
        } else {
            super::super::kernels::gcm_siv_open::<false>(token, &message, opened, &received)
        };
        job.authentic = open_or_wipe(buf, |_| check_tag(&expected, &received)).is_ok();
    } else {
        let token = tier.token().for_message(Kernel::SivSeal, buf.len());
        job.tag = super::super::kernels::gcm_siv_seal(token, &message, buf);
    }
}
