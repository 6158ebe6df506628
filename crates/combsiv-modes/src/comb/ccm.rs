//! CCM over many messages (SP 800-38C): each job's MAC input (B0, the formatted AAD, the
//! payload) and counter blocks planned once, the MACs as comb lanes of CBC-MAC, the counter
//! mode and the last blocks as one ECB pass per round.

use alloc::vec::Vec;

use zeroize::{Zeroize, Zeroizing};

use super::lanes::{Chain, Lane, LanePool};
use super::schedule::Scheduler;
use super::{COPIED_PAYLOAD, CcmJob, Comb, ScheduleStats, ScratchLoan, encrypt_per_job};
use combsiv_core::Error;
use combsiv_core::aead::{open_or_wipe, refuse_wiped};
use combsiv_core::verdict::check_tag;

/// The longest payload whose CCM lanes step a 32-bit counter: 2^32 - 1 blocks.
const INTERLEAVED_PAYLOAD: u64 = 16 * 0xFFFF_FFFF;

/// How [`Comb::ccm_tags`] runs a job's MAC (see there).
#[derive(Clone, Copy, PartialEq, Eq)]
enum MacPath {
    /// Not selected: no MAC, a zero tag.
    Skipped,
    /// Header and payload copied to scratch, all in one round of lanes.
    Copied,
    /// Header of several blocks in a round of lanes from scratch, payload in place.
    HeaderInLanes,
    /// B0 in the ECB pass, payload in place.
    B0Alone,
}

/// A job's [`MacPath`] and its header's length in blocks (B0 and the formatted AAD).
#[derive(Clone, Copy)]
struct MacPlan {
    path: MacPath,
    header: usize,
}

impl MacPlan {
    fn of(job: &CcmJob<'_>, selected: bool) -> MacPlan {
        let header = job.ccm.mac_header_blocks(job.aad.len());
        let path = if !selected {
            MacPath::Skipped
        } else if job.data.len() <= COPIED_PAYLOAD {
            MacPath::Copied
        } else if header > 1 {
            MacPath::HeaderInLanes
        } else {
            MacPath::B0Alone
        };
        MacPlan { path, header }
    }

    /// Whether the payload's whole blocks run in place, in a round of lanes of their own.
    fn in_place(self) -> bool {
        matches!(self.path, MacPath::HeaderInLanes | MacPath::B0Alone)
    }

    /// Whether the payload ends in a partial block that the last ECB pass finishes.
    fn has_tail(self, job: &CcmJob<'_>) -> bool {
        self.in_place() && !job.data.len().is_multiple_of(16)
    }
}

/// Every job's [`MacPlan`], decided once: the passes of [`Comb::ccm_tags`] read it instead of
/// re-deriving it.
struct CcmPlan {
    plans: Vec<MacPlan>,
}

impl CcmPlan {
    fn new(jobs: &[CcmJob<'_>], selected: impl Fn(&CcmJob<'_>) -> bool) -> CcmPlan {
        CcmPlan {
            plans: jobs
                .iter()
                .map(|job| MacPlan::of(job, selected(job)))
                .collect(),
        }
    }

    fn of(&self, job: usize) -> MacPlan {
        self.plans[job]
    }

    /// Blocks the header round's lanes take in scratch, and the jobs whose B0 runs alone and
    /// whose partial last block the tail pass finishes.
    fn counts(&self, jobs: &[CcmJob<'_>]) -> (usize, usize, usize) {
        let (mut lane_blocks, mut b0_alone, mut tails) = (0, 0, 0);
        for (job, plan) in jobs.iter().zip(&self.plans) {
            match plan.path {
                MacPath::Skipped => {}
                MacPath::B0Alone => b0_alone += 1,
                MacPath::Copied => lane_blocks += plan.header + job.data.len().div_ceil(16),
                MacPath::HeaderInLanes => lane_blocks += plan.header,
            }
            tails += usize::from(plan.has_tail(job));
        }
        (lane_blocks, b0_alone, tails)
    }

    /// The jobs whose B0 runs alone in the ECB pass, with their indices.
    fn b0_alone<'a, 'j>(
        &'a self,
        jobs: &'a [CcmJob<'j>],
    ) -> impl Iterator<Item = (usize, &'a CcmJob<'j>)> {
        (jobs.iter().enumerate()).filter(|(job, _)| self.of(*job).path == MacPath::B0Alone)
    }

    /// The jobs whose partial last block the tail pass finishes, with their indices.
    fn tails<'a, 'j>(
        &'a self,
        jobs: &'a [CcmJob<'j>],
    ) -> impl Iterator<Item = (usize, &'a CcmJob<'j>)> {
        (jobs.iter().enumerate()).filter(|(job, j)| self.of(*job).has_tail(j))
    }

    /// [`tails`](Self::tails), for writing.
    fn tails_mut<'a, 'j>(
        &'a self,
        jobs: &'a mut [CcmJob<'j>],
    ) -> impl Iterator<Item = (usize, &'a mut CcmJob<'j>)> {
        (jobs.iter_mut().enumerate()).filter(|(job, j)| self.of(*job).has_tail(j))
    }
}

/// How many bits of a payload's last sixteen bytes come before its partial last block: read
/// as a little-endian integer, shifting right by this leaves the zero-padded partial block,
/// and a block shifted left by this lines up with it. The payload ends in a partial block.
fn bits_before_tail(payload: &[u8]) -> u32 {
    8 * (16 - (payload.len() % 16) as u32)
}

impl Comb {
    /// CCM-encrypts every job and writes its tag. Nonce and length errors are reported before
    /// any work.
    ///
    /// Each lane runs a message's CBC-MAC and its counter mode in one round loop: the counter
    /// block's AES does not depend on the chain, so it fills the chained block's latency and a
    /// block costs about one chained AES plus one parallel AES. Lanes carry two blocks each, so
    /// half as many fill the pipeline.
    pub fn ccm_seal(&mut self, jobs: &mut [CcmJob<'_>]) -> Result<(), Error> {
        for job in jobs.iter() {
            job.ccm.check(job.nonce, job.data.len())?;
        }
        // The lanes step a 32-bit counter; a payload of 2^32 blocks or more (64 GiB) takes the
        // single-message path, which carries into the upper bytes.
        let interleaved = |job: &CcmJob<'_>| job.data.len() as u64 <= INTERLEAVED_PAYLOAD;
        for job in jobs.iter_mut().filter(|job| !interleaved(job)) {
            job.tag = job
                .ccm
                .encrypt_in_place_detached(job.nonce, job.aad, job.data)?;
        }
        let tags = self.ccm_tags(jobs, Chain::CcmSeal, interleaved);
        assert_eq!(tags.len(), jobs.len(), "one tag per job");
        for (job, tag) in jobs.iter_mut().zip(tags.iter()) {
            if interleaved(job) {
                job.tag = tag.to_le_bytes();
            }
        }
        Ok(())
    }

    /// CCM-decrypts every job whose tag authenticates it and sets `authentic`; a job that fails
    /// is zeroed, and the call returns [`Error::Authentication`] if any failed.
    pub fn ccm_open(&mut self, jobs: &mut [CcmJob<'_>]) -> Result<(), Error> {
        for job in jobs.iter_mut() {
            job.authentic = false;
        }
        if let Some(error) = jobs
            .iter()
            .find_map(|job| job.ccm.check(job.nonce, job.data.len()).err())
        {
            // Nothing is opened: every job fails, zeroed as any failed decryption is.
            for job in jobs.iter_mut() {
                refuse_wiped(job.data, error);
            }
            return Err(error);
        }
        // The MAC needs the plaintext: counter mode over each whole message first.
        for job in jobs.iter_mut() {
            job.ccm.apply_payload_keystream(job.nonce, job.data);
        }
        let expected = self.ccm_tags(jobs, Chain::CbcMac, |_| true);
        let mut all = true;
        assert_eq!(expected.len(), jobs.len(), "one tag per job");
        for (job, expected) in jobs.iter_mut().zip(expected.iter()) {
            let tag_len = job.ccm.tag_len();
            let expected = expected.to_le_bytes();
            let verdict = check_tag(&expected[..tag_len], &job.tag[..tag_len]);
            job.authentic = open_or_wipe((&mut *job.data).into(), |_| verdict).is_ok();
            all &= job.authentic;
        }
        if all {
            Ok(())
        } else {
            Err(Error::Authentication)
        }
    }

    /// The tag of every job that `selected` picks (zero for the others): its CBC-MAC (SP
    /// 800-38C A.2) masked with S0 and cut to the tag length. `payload` is what the payload
    /// blocks run through: [`Chain::CcmSeal`] also encrypts them in place from counter 1,
    /// [`Chain::CbcMac`] only reads them.
    ///
    /// Long payloads are MACed where they lie (copying every message into scratch and back,
    /// and wiping it, cost a third as much as the AES on the Internet mix in a profile), so a
    /// message takes up to three steps:
    /// 1. its formatted header (B0, the AAD) from scratch. A header of more than one block, or
    ///    one followed by a payload of at most [`COPIED_PAYLOAD`] bytes (copied behind it:
    ///    such a message finishes here), runs in a round of lanes through [`Chain::CcmSeal`],
    ///    with a counter started early enough to meet counter 0 on the last header block, so
    ///    that S0 comes out of the same kernel calls (the other header blocks' keystream is
    ///    dropped: one AES each, against one more call per message for S0). B0 alone is two
    ///    independent blocks, B0 and counter block 0: those of all such messages take one
    ///    pass of ECB (one AES call per run of jobs under one key);
    /// 2. the longer payloads' whole blocks, in place, in a round of lanes;
    /// 3. their partial last blocks: again two independent blocks per message (the MAC state
    ///    xor the zero-padded block, and the counter block), all in one pass of ECB.
    ///
    /// Steps 1 and 3 were rounds of one-block lanes before: at 1500 bytes the partial block's
    /// round alone made messages 16 % slower than at 1504 bytes (VAES, Zen 3), its lanes'
    /// scheduling and marshalling costing 470 instructions per message (AES-NI, callgrind).
    fn ccm_tags(
        &mut self,
        jobs: &mut [CcmJob<'_>],
        payload: Chain,
        selected: impl Fn(&CcmJob<'_>) -> bool,
    ) -> Zeroizing<Vec<u128>> {
        let plan = CcmPlan::new(jobs, selected);
        let (lanes_total, b0_count, tail_count) = plan.counts(jobs);
        // Sealing also encrypts the partial block: its counter block joins the ECB pass.
        let tail_blocks = if payload == Chain::CcmSeal { 2 } else { 1 };
        self.scheduler.stats = ScheduleStats::default();
        let half = self.lanes.div_ceil(2);
        let lanes_per_group = match payload {
            Chain::CcmSeal => half,
            _ => self.lanes,
        };
        let scratch = ScratchLoan::zeroed(
            &mut self.scratch,
            lanes_total + 2 * b0_count + tail_blocks * tail_count,
        );
        let (lane_scratch, rest) = scratch.blocks.split_at_mut(lanes_total);
        let (b0_scratch, tail_scratch) = rest.split_at_mut(2 * b0_count);
        // Per job, as integers (wiped with one store each): the running MAC, the next counter
        // block, and S0 (for a header run in lanes, first its last block, which the run turns
        // into that block xor S0).
        let mut macs = Zeroizing::new(alloc::vec![0u128; jobs.len()]);
        let mut counters = alloc::vec![0u128; jobs.len()];
        let mut masks = Zeroizing::new(alloc::vec![0u128; jobs.len()]);

        let mut lanes = self.pool.take();
        let mut rest = lane_scratch;
        let mut b0_pairs = b0_scratch.as_chunks_mut::<2>().0.iter_mut();
        for (job, j) in jobs.iter().enumerate() {
            let MacPlan { path, header } = plan.of(job);
            if path == MacPath::Skipped {
                continue;
            }
            let starts = j.ccm.starts(j.nonce, j.aad.len(), j.data.len());
            if path == MacPath::B0Alone {
                let Some([b0, counter]) = b0_pairs.next() else {
                    unreachable!("the B0 scratch has a pair for every such job");
                };
                *b0 = starts.b0;
                *counter = starts.counter(0);
                counters[job] = u128::from_le_bytes(starts.counter(1));
                continue;
            }
            let copied_blocks = if path == MacPath::Copied {
                j.data.len().div_ceil(16)
            } else {
                0
            };
            let (blocks, after) = rest.split_at_mut(header + copied_blocks);
            rest = after;
            let (formatted, copy) = blocks.split_at_mut(header);
            masks[job] = j.ccm.write_mac_header(starts.b0, j.aad, formatted);
            if !copy.is_empty() {
                copy.as_flattened_mut()[..j.data.len()].copy_from_slice(j.data);
            }
            let counter = starts.counter_before(header - 1);
            lanes.push(Lane::new(j.ccm.cipher(), [0; 16], blocks, job).with_counter(counter));
        }
        let engine = (&mut self.scheduler, &mut self.pool);
        let states = (&mut macs[..], &mut counters[..]);
        Comb::ccm_round(engine, half, Chain::CcmSeal, lanes, states, |lane| {
            let j = &mut jobs[lane.job];
            let (header, copy) = lane.blocks().split_at(plan.of(lane.job).header);
            if let Some(last) = header.last() {
                masks[lane.job] ^= u128::from_le_bytes(*last);
            }
            if payload == Chain::CcmSeal && !copy.is_empty() {
                j.data.copy_from_slice(&copy.as_flattened()[..j.data.len()]);
            }
        });
        // Passes over the jobs only where there is work: a batch of short messages has none.
        if b0_count > 0 {
            let ciphers = plan.b0_alone(jobs).map(|(_, j)| j.ccm.cipher());
            encrypt_per_job(ciphers, b0_scratch, 2);
            assert_eq!(b0_scratch.len(), 2 * b0_count, "two slots per B0 job");
            for ((job, _), [mac, s0]) in plan.b0_alone(jobs).zip(b0_scratch.as_chunks::<2>().0) {
                macs[job] = u128::from_le_bytes(*mac);
                masks[job] = u128::from_le_bytes(*s0);
            }
        }

        let mut lanes = self.pool.take();
        lanes.extend(
            jobs.iter_mut()
                .enumerate()
                .filter(|(job, _)| plan.of(*job).in_place())
                .map(|(job, j)| (job, j.ccm, j.data.as_chunks_mut::<16>().0))
                .filter(|(_, _, blocks)| !blocks.is_empty())
                .map(|(job, ccm, blocks)| Comb::resumed(ccm, blocks, job, (&macs, &counters))),
        );
        let engine = (&mut self.scheduler, &mut self.pool);
        let states = (&mut macs[..], &mut counters[..]);
        Comb::ccm_round(engine, lanes_per_group, payload, lanes, states, |_| {});

        if tail_count > 0 {
            // `tail_scratch` has exactly `tail_blocks` slots per tail: the zips pair them all.
            assert_eq!(
                tail_scratch.len(),
                tail_blocks * tail_count,
                "slots per tail"
            );
            for ((job, j), slots) in plan
                .tails(jobs)
                .zip(tail_scratch.chunks_exact_mut(tail_blocks))
            {
                let Some(last_sixteen) = j.data.last_chunk::<16>() else {
                    unreachable!("a payload that runs in place is longer than a block");
                };
                let Some((block, counter)) = slots.split_first_mut() else {
                    unreachable!("a tail has at least its MAC block");
                };
                // The zero-padded tail as an integer: the message's last sixteen bytes with
                // those before the tail shifted out (the tail is 1..=15 bytes). Copying the
                // tail into the block and reading it back whole stalled on store forwarding;
                // XORing it in byte by byte cost 45 instructions per message.
                let mut tail = u128::from_le_bytes(*last_sixteen) >> bits_before_tail(j.data);
                *block = (tail ^ macs[job]).to_le_bytes();
                tail.zeroize();
                if let Some(counter) = counter.first_mut() {
                    *counter = counters[job].to_le_bytes();
                }
            }
            let ciphers = plan.tails(jobs).map(|(_, j)| j.ccm.cipher());
            encrypt_per_job(ciphers, tail_scratch, tail_blocks);
            let tails = plan.tails_mut(jobs);
            for ((job, j), slots) in tails.zip(tail_scratch.chunks_exact(tail_blocks)) {
                let Some((mac, keystream)) = slots.split_first() else {
                    unreachable!("a tail has at least its MAC block");
                };
                macs[job] = u128::from_le_bytes(*mac);
                // Sealing: the keystream moved up under the tail, XORed into the last sixteen
                // bytes whole: the bytes before the tail take zeros. (Opening has no
                // keystream slot: its payload was decrypted before the MAC.)
                let shift = bits_before_tail(j.data);
                if let Some(keystream) = keystream.first() {
                    let Some(last_sixteen) = j.data.last_chunk_mut::<16>() else {
                        unreachable!("a payload that runs in place is longer than a block");
                    };
                    let mut keystream = u128::from_le_bytes(*keystream) << shift;
                    *last_sixteen = (u128::from_le_bytes(*last_sixteen) ^ keystream).to_le_bytes();
                    keystream.zeroize();
                }
            }
        }

        let mut tags = Zeroizing::new(alloc::vec![0u128; jobs.len()]);
        for (job, j) in jobs.iter().enumerate() {
            if plan.of(job).path != MacPath::Skipped {
                tags[job] = j.ccm.masked_tag(macs[job], masks[job]);
            }
        }
        tags
    }

    /// One round of CCM lanes; then records where each lane's job stands (its running MAC
    /// and its next counter block), shows each lane to `after` while its blocks are still
    /// lent, and returns the lanes' allocation to the pool.
    fn ccm_round(
        (scheduler, pool): (&mut Scheduler, &mut LanePool),
        lanes_per_group: usize,
        chain: Chain,
        mut lanes: Vec<Lane<'_>>,
        (macs, counters): (&mut [u128], &mut [u128]),
        mut after: impl FnMut(&Lane<'_>),
    ) {
        scheduler.run(chain, &mut lanes, lanes_per_group);
        for lane in &lanes {
            macs[lane.job] = u128::from_le_bytes(lane.state());
            counters[lane.job] = u128::from_le_bytes(lane.counter());
            after(lane);
        }
        pool.give_back(lanes);
    }
}
