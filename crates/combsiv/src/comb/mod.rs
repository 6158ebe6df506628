//! The comb engine: many independent messages at once, so that inherently sequential modes
//! (CBC, CFB and OFB encryption, CMAC, CCM's MAC) fill the AES pipeline instead of waiting on
//! its latency (Bogdanov, Lauridsen, Tischhauser: "Comb to Pipeline", FSE 2015).
//!
//! ```
//! use combsiv::comb::{CbcJob, Comb};
//! use combsiv::{Aes, modes};
//!
//! let key = Aes::new(&[7; 16])?;
//! let mut messages = vec![vec![1u8; 64], vec![2u8; 4096], vec![3u8; 16]];
//! let expected: Vec<Vec<u8>> = messages.iter().map(|m| {
//!     let mut m = m.clone();
//!     modes::cbc_encrypt(&key, &[9; 16], &mut m).map(|()| m)
//! }).collect::<Result<_, _>>()?;
//!
//! let mut jobs: Vec<CbcJob> =
//!     messages.iter_mut().map(|data| CbcJob { key: &key, iv: [9; 16], data }).collect();
//! Comb::new().cbc_encrypt(&mut jobs)?;
//! assert_eq!(messages, expected);
//! # Ok::<(), combsiv::Error>(())
//! ```

#[cfg(vector_tiers)]
mod kernels;
mod lanes;
mod schedule;

use alloc::vec::Vec;

use zeroize::{Zeroize, Zeroizing};

use self::lanes::{Chain, Lane, LanePool};
use self::schedule::Scheduler;
pub use self::schedule::{Schedule, ScheduleStats};
use crate::aead::{open_or_wipe, refuse_wiped};
use crate::aes::BlockCipher;
use crate::cpu::Isa;
use crate::modes::{Ccm, CmacSubkeys, cmac_blocks, cmac_split, cmac_subkeys};
use crate::verdict::check_tag;
use crate::{Aes, Backend, Error};

/// A CBC encryption job: `data` (whole blocks) is encrypted in place under `key` and `iv`.
#[derive(Debug)]
pub struct CbcJob<'a> {
    /// The key.
    pub key: &'a Aes,
    /// The initialization vector.
    pub iv: [u8; 16],
    /// Plaintext in, ciphertext out; a multiple of 16 bytes.
    pub data: &'a mut [u8],
}

/// A CFB128 encryption job (any length).
#[derive(Debug)]
pub struct CfbJob<'a> {
    /// The key.
    pub key: &'a Aes,
    /// The initialization vector.
    pub iv: [u8; 16],
    /// Plaintext in, ciphertext out.
    pub data: &'a mut [u8],
}

/// An OFB job (any length; encryption and decryption are the same).
#[derive(Debug)]
pub struct OfbJob<'a> {
    /// The key.
    pub key: &'a Aes,
    /// The initialization vector.
    pub iv: [u8; 16],
    /// Data in, data xor keystream out.
    pub data: &'a mut [u8],
}

/// A CMAC job: `tag` receives the 16-byte AES-CMAC of `message`.
#[derive(Debug)]
pub struct CmacJob<'a> {
    /// The key.
    pub key: &'a Aes,
    /// The message.
    pub message: &'a [u8],
    /// Output: the tag.
    pub tag: [u8; 16],
}

/// A CCM job. Sealing encrypts `data` and writes the tag (first `tag_len` bytes of `tag`);
/// opening decrypts `data` if `tag` authenticates it and sets `authentic`.
#[derive(Debug)]
pub struct CcmJob<'a> {
    /// The CCM instance (key, nonce length, tag length).
    pub ccm: &'a Ccm,
    /// The nonce, exactly `ccm.nonce_len()` bytes.
    pub nonce: &'a [u8],
    /// Associated data.
    pub aad: &'a [u8],
    /// Plaintext or ciphertext, in place.
    pub data: &'a mut [u8],
    /// The tag: output of seal, input of open (first `tag_len` bytes).
    pub tag: [u8; 16],
    /// Output of open: whether this message was authentic.
    pub authentic: bool,
}

/// AES-GCM-SIV batches are the AEAD's own; the job type is re-exported here with the comb's
/// other job types.
pub use crate::aead::gcm_siv::SivJob;

/// CCM payloads and CMAC messages up to this many bytes are copied into the engine's scratch,
/// behind CCM's header or with CMAC's last block masked, and run in one round of lanes;
/// longer ones are read (CCM seal: encrypted) where they lie, in lanes of their own, and
/// their last blocks take one more step. Copying a short message costs less than the
/// kernel calls of the extra steps: measured with CCM on AES-NI (Zen 1), when the extra
/// steps were rounds of lanes, 64-byte messages ran 30 % slower in place and 400-byte ones
/// 4 %, while 2 KiB ones ran 15 % faster than copied.
const COPIED_PAYLOAD: usize = 512;

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

/// The multi-message engine. Holds the lane count, the schedule and reusable scratch space.
pub struct Comb {
    lanes: usize,
    scheduler: Scheduler,
    scratch: Vec<[u8; 16]>,
    /// The lane vectors' allocation, reused by every call.
    pool: LanePool,
}

impl core::fmt::Debug for Comb {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Comb")
            .field("lanes", &self.lanes)
            .field("schedule", &self.scheduler.schedule)
            .finish_non_exhaustive()
    }
}

impl Default for Comb {
    fn default() -> Self {
        Comb::new()
    }
}

/// Lanes per group by backend: the comb paper's P = latency x throughput, in blocks. On Zen 3
/// AESENC (XMM) and VAESENC (YMM) both issue every 0.5 cycles with latency 4, so 8
/// instructions must be in flight: 8 lanes on AES-NI, 16 on VAES (two per register). The
/// measured curve (`combsiv-bench`, table (a)) agrees: CBC at 2 KiB improves up to 8 and 16
/// lanes and not beyond, where a second kernel call per window adds cost without adding
/// parallelism. (Cascade Lake, one AESENC per cycle, measured best at 6 with the earlier
/// kernel, which spilled its states at 8.) The portable backend delegates to a cipher with
/// its own batching, so its lanes only bound the group size.
fn default_lanes(isa: Isa) -> usize {
    match isa {
        Isa::Portable => 6,
        #[cfg(vector_tiers)]
        Isa::Vector(tier) => kernels::lanes_per_call(tier),
    }
}

impl Comb {
    /// An engine with the lane count measured best for the detected backend.
    pub fn new() -> Comb {
        Comb::with_lanes(default_lanes(Isa::detected()))
    }

    /// An engine with the lane count measured best for `backend`, for keys made with
    /// [`Aes::with_backend`] (a backend this CPU cannot run gets the portable count).
    pub fn for_backend(backend: Backend) -> Comb {
        Comb::with_lanes(default_lanes(
            Isa::for_backend(backend).unwrap_or(Isa::Portable),
        ))
    }

    /// An engine with `lanes` messages in flight per group (at least 1).
    pub fn with_lanes(lanes: usize) -> Comb {
        Comb {
            lanes: lanes.max(1),
            scheduler: Scheduler::default(),
            scratch: Vec::new(),
            pool: LanePool::default(),
        }
    }

    /// The same engine with another [`Schedule`].
    pub fn with_schedule(mut self, schedule: Schedule) -> Comb {
        self.scheduler.schedule = schedule;
        self
    }

    /// Messages in flight per group.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Lane usage of the last call.
    pub fn last_stats(&self) -> ScheduleStats {
        self.scheduler.stats
    }

    /// CBC-encrypts every job (SP 800-38A 6.2). [`Error::InvalidLength`] before any work if a
    /// job's data is not whole blocks.
    pub fn cbc_encrypt(&mut self, jobs: &mut [CbcJob<'_>]) -> Result<(), Error> {
        if jobs.iter().any(|job| !job.data.len().is_multiple_of(16)) {
            return Err(Error::InvalidLength);
        }
        let mut lanes = self.pool.take();
        lanes.extend(
            jobs.iter_mut().enumerate().map(|(job, j)| {
                Lane::new(&j.key.cipher, j.iv, j.data.as_chunks_mut::<16>().0, job)
            }),
        );
        self.scheduler.stats = ScheduleStats::default();
        self.scheduler
            .run(Chain::CbcEncrypt, &mut lanes, self.lanes);
        self.pool.give_back(lanes);
        Ok(())
    }

    /// CFB128-encrypts every job (any length).
    pub fn cfb_encrypt(&mut self, jobs: &mut [CfbJob<'_>]) {
        let mut stream: Vec<(&Aes, [u8; 16], &mut [u8])> = jobs
            .iter_mut()
            .map(|j| (j.key, j.iv, &mut *j.data))
            .collect();
        self.stream(Chain::CfbEncrypt, &mut stream);
    }

    /// Applies OFB to every job (any length).
    pub fn ofb(&mut self, jobs: &mut [OfbJob<'_>]) {
        let mut stream: Vec<(&Aes, [u8; 16], &mut [u8])> = jobs
            .iter_mut()
            .map(|j| (j.key, j.iv, &mut *j.data))
            .collect();
        self.stream(Chain::Ofb, &mut stream);
    }

    /// CFB and OFB: whole blocks in place through the lanes, then every job's partial last
    /// block at once, padded in scratch, with each lane's final state.
    fn stream(&mut self, chain: Chain, jobs: &mut [(&Aes, [u8; 16], &mut [u8])]) {
        // OFB's states are keystream; wiped when dropped, also on unwinding.
        let mut states = Zeroizing::new(alloc::vec![[0u8; 16]; jobs.len()]);
        {
            let mut lanes = self.pool.take();
            lanes.extend(jobs.iter_mut().enumerate().map(|(job, (key, iv, data))| {
                Lane::new(&key.cipher, *iv, data.as_chunks_mut::<16>().0, job)
            }));
            self.scheduler.stats = ScheduleStats::default();
            self.scheduler.run(chain, &mut lanes, self.lanes);
            for lane in &lanes {
                states[lane.job] = lane.state();
            }
            self.pool.give_back(lanes);
        }
        // Every job's partial last block, padded to a block in scratch, advanced one block
        // from its lane's final state.
        let mut tails: Vec<(usize, &Aes, &mut [u8])> = jobs
            .iter_mut()
            .enumerate()
            .map(|(job, (key, _, data))| (job, *key, data.as_chunks_mut::<16>().1))
            .filter(|(_, _, tail)| !tail.is_empty())
            .collect();
        let scratch = ScratchLoan::zeroed(&mut self.scratch, tails.len());
        // `scratch` has exactly one slot per tail: the zips below pair them all.
        assert_eq!(scratch.blocks.len(), tails.len(), "one slot per tail");
        let mut tail_lanes = self.pool.take();
        tail_lanes.extend(scratch.blocks.iter_mut().zip(&tails).map(
            |(slot, &(job, key, ref tail))| {
                slot[..tail.len()].copy_from_slice(tail);
                Lane::new(&key.cipher, states[job], core::slice::from_mut(slot), job)
            },
        ));
        lanes::advance(chain, &mut tail_lanes, 1);
        self.pool.give_back(tail_lanes);
        for (slot, (_, _, tail)) in scratch.blocks.iter().zip(&mut tails) {
            let len = tail.len();
            tail.copy_from_slice(&slot[..len]);
        }
    }

    /// Computes every job's AES-CMAC (RFC 4493) into its `tag`.
    ///
    /// A message of at most 512 bytes is copied into scratch with its last
    /// block padded and masked (RFC 4493 2.4 steps 3-4), so that its lane is one contiguous
    /// CBC-MAC chain. A longer one is read where it lies, all but its last block, which
    /// then takes one pass of ECB with every other long message's (one AES each, on the MAC
    /// so far xor the masked block): a round of one-block lanes cost more in scheduling and
    /// marshalling than the AES.
    pub fn cmac(&mut self, jobs: &mut [CmacJob<'_>]) {
        let copied = |j: &CmacJob<'_>| j.message.len() <= COPIED_PAYLOAD;
        let sizes: Vec<usize> = jobs
            .iter()
            .map(|j| j.message.len().div_ceil(16).max(1))
            .collect();
        let copied_total: usize = jobs
            .iter()
            .zip(&sizes)
            .filter(|(j, _)| copied(j))
            .map(|(_, &size)| size)
            .sum();
        let last_count = jobs.iter().filter(|j| !copied(j)).count();
        self.scheduler.stats = ScheduleStats::default();
        let scratch = ScratchLoan::zeroed(&mut self.scratch, copied_total + last_count);
        let (mut copies, lasts) = scratch.blocks.split_at_mut(copied_total);
        let mut lanes = self.pool.take();
        // Subkeys cost two AES calls; derive them once per run of jobs sharing a key. Replaced
        // subkeys are wiped as they drop.
        let mut subkeys: Option<(&Aes, CmacSubkeys)> = None;
        let mut lasts_left = lasts.iter_mut();
        for (job, (j, &size)) in jobs.iter().zip(&sizes).enumerate() {
            let (_, current) = match subkeys.take() {
                Some(same) if core::ptr::eq(same.0, j.key) => subkeys.insert(same),
                _ => subkeys.insert((j.key, cmac_subkeys(j.key))),
            };
            if copied(j) {
                let (blocks, after) = copies.split_at_mut(size);
                copies = after;
                cmac_blocks(current, j.message, blocks);
                lanes.push(Lane::new(&j.key.cipher, [0; 16], blocks, job));
            } else {
                let Some(last) = lasts_left.next() else {
                    unreachable!("`lasts` has a slot for every job that is not copied");
                };
                let body = cmac_split(current, j.message, last);
                lanes.push(Lane::reading(&j.key.cipher, [0; 16], body, job));
            }
        }
        drop(subkeys);
        Comb::cmac_round(&mut self.scheduler, self.lanes, &mut lanes, jobs);
        self.pool.give_back(lanes);
        // Each long message's last block is one AES of its running MAC xor the masked block,
        // independent of every other's: one pass of ECB over all of them.
        if last_count == 0 {
            return;
        }
        let long = || jobs.iter().filter(|j| !copied(j));
        assert_eq!(
            long().count(),
            lasts.len(),
            "one last block per long message"
        );
        for (j, last) in long().zip(lasts.iter_mut()) {
            *last = (u128::from_le_bytes(*last) ^ u128::from_le_bytes(j.tag)).to_le_bytes();
        }
        encrypt_per_job(long().map(|j| &j.key.cipher), lasts, 1);
        for (j, last) in jobs.iter_mut().filter(|j| !copied(j)).zip(lasts.iter()) {
            j.tag = *last;
        }
    }

    /// One round of CBC-MAC lanes; each lane's state becomes its job's tag so far.
    fn cmac_round(
        scheduler: &mut Scheduler,
        lanes_per_group: usize,
        lanes: &mut [Lane<'_>],
        jobs: &mut [CmacJob<'_>],
    ) {
        scheduler.run(Chain::CbcMac, lanes, lanes_per_group);
        for lane in lanes.iter() {
            jobs[lane.job].tag = lane.state();
        }
    }

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
        // Each job's path, decided once: the passes below read it instead of re-deriving it.
        let plans: Vec<MacPlan> = jobs.iter().map(|j| MacPlan::of(j, selected(j))).collect();
        let plan_of = |job: usize| plans[job];
        let (mut lanes_total, mut b0_count, mut tail_count) = (0, 0, 0);
        for (j, plan) in jobs.iter().zip(&plans) {
            match plan.path {
                MacPath::Skipped => {}
                MacPath::B0Alone => b0_count += 1,
                MacPath::Copied => lanes_total += plan.header + j.data.len().div_ceil(16),
                MacPath::HeaderInLanes => lanes_total += plan.header,
            }
            tail_count += usize::from(plan.has_tail(j));
        }
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
            let MacPlan { path, header } = plan_of(job);
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
            let (header, copy) = lane.blocks().split_at(plan_of(lane.job).header);
            if let Some(last) = header.last() {
                masks[lane.job] ^= u128::from_le_bytes(*last);
            }
            if payload == Chain::CcmSeal && !copy.is_empty() {
                j.data.copy_from_slice(&copy.as_flattened()[..j.data.len()]);
            }
        });
        // Passes over the jobs only where there is work: a batch of short messages has none.
        if b0_count > 0 {
            let b0_jobs = || {
                let alone =
                    |(job, _): &(usize, &CcmJob<'_>)| plan_of(*job).path == MacPath::B0Alone;
                jobs.iter().enumerate().filter(alone)
            };
            encrypt_per_job(b0_jobs().map(|(_, j)| j.ccm.cipher()), b0_scratch, 2);
            assert_eq!(b0_scratch.len(), 2 * b0_count, "two slots per B0 job");
            for ((job, _), [mac, s0]) in b0_jobs().zip(b0_scratch.as_chunks::<2>().0) {
                macs[job] = u128::from_le_bytes(*mac);
                masks[job] = u128::from_le_bytes(*s0);
            }
        }

        let mut lanes = self.pool.take();
        lanes.extend(
            jobs.iter_mut()
                .enumerate()
                .filter(|(job, _)| plan_of(*job).in_place())
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
            let tail_jobs = || {
                jobs.iter()
                    .enumerate()
                    .filter(|(job, j)| plan_of(*job).has_tail(j))
            };
            for ((job, j), slots) in tail_jobs().zip(tail_scratch.chunks_exact_mut(tail_blocks)) {
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
            let tail_ciphers = tail_jobs().map(|(_, j)| j.ccm.cipher());
            encrypt_per_job(tail_ciphers, tail_scratch, tail_blocks);
            let tails = (jobs.iter_mut().enumerate()).filter(|(job, j)| plan_of(*job).has_tail(j));
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
            if plan_of(job).path != MacPath::Skipped {
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

    /// A CCM lane over `blocks` that resumes `job` where the last round left it.
    fn resumed<'l>(
        ccm: &'l Ccm,
        blocks: &'l mut [[u8; 16]],
        job: usize,
        (macs, counters): (&[u128], &[u128]),
    ) -> Lane<'l> {
        Lane::new(ccm.cipher(), macs[job].to_le_bytes(), blocks, job)
            .with_counter(counters[job].to_le_bytes())
    }

    /// Whether every byte of the engine's scratch is zero, as it must be between calls.
    #[cfg(test)]
    fn scratch_is_clear(&self) -> bool {
        self.scratch.iter().all(|block| *block == [0; 16])
    }
}

impl Drop for Comb {
    fn drop(&mut self) {
        self.scratch.zeroize();
    }
}

/// Encrypts `blocks` in place, `per_job` of them under each key that `ciphers` lists, in
/// order: one call (one dispatch, the blocks pipelined) per run of jobs under the same key,
/// so one call when the whole batch shares a key.
fn encrypt_per_job<'k>(
    ciphers: impl Iterator<Item = &'k BlockCipher>,
    blocks: &mut [[u8; 16]],
    per_job: usize,
) {
    let mut rest = blocks;
    let mut ciphers = ciphers.peekable();
    while let Some(cipher) = ciphers.next() {
        let mut jobs = 1;
        while ciphers
            .next_if(|next| core::ptr::eq(*next, cipher))
            .is_some()
        {
            jobs += 1;
        }
        let (run, after) = rest.split_at_mut((jobs * per_job).min(rest.len()));
        cipher.encrypt_blocks(run);
        rest = after;
    }
}

/// How many bits of a payload's last sixteen bytes come before its partial last block: read
/// as a little-endian integer, shifting right by this leaves the zero-padded partial block,
/// and a block shifted left by this lines up with it. The payload ends in a partial block.
fn bits_before_tail(payload: &[u8]) -> u32 {
    8 * (16 - (payload.len() % 16) as u32)
}

/// The first blocks of the engine's scratch, lent to one call. ScratchLoan holds copies of
/// plaintext, keystream or masked subkeys; it is wiped when the loan ends, on return or on
/// unwinding from a panic, so that it is all zero between calls and only growth has to
/// write. It stays owned by the engine, so the wipe cannot be elided as a dead store; a
/// byte-wise volatile wipe would cost about a cycle per byte of every message.
struct ScratchLoan<'a> {
    blocks: &'a mut [[u8; 16]],
}

impl<'a> ScratchLoan<'a> {
    fn zeroed(scratch: &'a mut Vec<[u8; 16]>, blocks: usize) -> Self {
        if scratch.len() < blocks {
            scratch.resize(blocks, [0; 16]);
        }
        ScratchLoan {
            blocks: &mut scratch[..blocks],
        }
    }
}

impl Drop for ScratchLoan<'_> {
    fn drop(&mut self) {
        self.blocks.as_flattened_mut().fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ScratchLoan holds plaintext copies, keystream and masked subkeys: it must be all zero
    /// after every call, and after a call that panicked.
    #[test]
    fn scratch_is_wiped_after_every_call_and_on_unwinding() {
        let key = Aes::new(&[5; 16]).unwrap();
        let ccm = Ccm::new(&[6; 16], 13, 16).unwrap();
        let mut comb = Comb::with_lanes(3);
        let mut messages: Vec<Vec<u8>> = (0..7).map(|i| alloc::vec![0xA5; 16 * i + 5]).collect();
        let mut cfb: Vec<CfbJob<'_>> = messages
            .iter_mut()
            .map(|data| CfbJob {
                key: &key,
                iv: [1; 16],
                data,
            })
            .collect();
        comb.cfb_encrypt(&mut cfb);
        assert!(!comb.scratch.is_empty() && comb.scratch_is_clear());
        drop(cfb);
        let mut ofb: Vec<OfbJob<'_>> = messages
            .iter_mut()
            .map(|data| OfbJob {
                key: &key,
                iv: [1; 16],
                data,
            })
            .collect();
        comb.ofb(&mut ofb);
        assert!(comb.scratch_is_clear());
        drop(ofb);
        let mut cmac: Vec<CmacJob<'_>> = messages
            .iter()
            .map(|message| CmacJob {
                key: &key,
                message,
                tag: [0; 16],
            })
            .collect();
        comb.cmac(&mut cmac);
        assert!(comb.scratch_is_clear());
        let mut ccm_jobs: Vec<CcmJob<'_>> = messages
            .iter_mut()
            .map(|data| CcmJob {
                ccm: &ccm,
                nonce: &[2; 13],
                aad: b"header",
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        comb.ccm_seal(&mut ccm_jobs).unwrap();
        assert!(comb.scratch_is_clear());
        ccm_jobs[0].tag[0] ^= 1;
        assert_eq!(comb.ccm_open(&mut ccm_jobs), Err(Error::Authentication));
        assert!(comb.scratch_is_clear());

        let unwound = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            let scratch = ScratchLoan::zeroed(&mut comb.scratch, 4);
            scratch.blocks[3] = [0xEE; 16];
            panic!("a bug mid-call");
        }));
        assert!(unwound.is_err());
        assert!(comb.scratch_is_clear());
    }
}
