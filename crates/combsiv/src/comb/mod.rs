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

mod lanes;
mod schedule;
#[cfg(target_arch = "x86_64")]
mod x86;

use alloc::vec::Vec;

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use self::lanes::{Chain, Lane};
pub use self::schedule::{Schedule, ScheduleStats};
use crate::modes::Ccm;
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

/// An AES-GCM-SIV job for [`crate::AesGcmSiv::seal_batch`] and `open_batch`.
#[derive(Debug)]
pub struct SivJob<'a> {
    /// The nonce.
    pub nonce: [u8; 12],
    /// Associated data.
    pub aad: &'a [u8],
    /// Plaintext or ciphertext, in place.
    pub data: &'a mut [u8],
    /// The tag: output of seal, input of open.
    pub tag: [u8; 16],
    /// Output of open: whether this message was authentic.
    pub authentic: bool,
}

/// The multi-message engine. Holds the lane count, the schedule and reusable scratch space.
pub struct Comb {
    lanes: usize,
    schedule: Schedule,
    scratch: Vec<[u8; 16]>,
    stats: ScheduleStats,
}

impl core::fmt::Debug for Comb {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Comb")
            .field("lanes", &self.lanes)
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

impl Default for Comb {
    fn default() -> Self {
        Comb::new()
    }
}

/// Lanes per group by backend, from the measured curve (`combsiv-bench`, table (a)). On the
/// Cascade Lake measured, CBC at 2 KiB improves up to 6 lanes (0.57 TSC c/B, 5.9x sequential;
/// AESENC latency 4 x one per cycle, plus the chaining XOR) and gets slower beyond, where the
/// kernel runs out of registers; the mix is flat from 4 to 8. The portable backend delegates
/// to a cipher with its own batching, so its lanes only bound the group size.
fn default_lanes(backend: Backend) -> usize {
    match backend {
        Backend::Portable | Backend::Aesni | Backend::Vaes => 6,
    }
}

impl Comb {
    /// An engine with the lane count measured best for the detected backend.
    pub fn new() -> Comb {
        Comb::with_lanes(default_lanes(Backend::detected()))
    }

    /// An engine with `lanes` messages in flight per group (at least 1).
    pub fn with_lanes(lanes: usize) -> Comb {
        Comb {
            lanes: lanes.max(1),
            schedule: Schedule::default(),
            scratch: Vec::new(),
            stats: ScheduleStats::default(),
        }
    }

    /// The same engine with another [`Schedule`].
    pub fn with_schedule(mut self, schedule: Schedule) -> Comb {
        self.schedule = schedule;
        self
    }

    /// Messages in flight per group.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Lane usage of the last call.
    pub fn last_stats(&self) -> ScheduleStats {
        self.stats
    }

    /// Scratch held copies of plaintext, keystream or masked subkeys. It stays owned by the
    /// engine, so these stores cannot be elided as dead; a byte-wise volatile wipe would cost
    /// about a cycle per byte of every message. Wiping after every use also keeps the whole
    /// scratch zero between calls, which [`zeroed`] relies on.
    fn wipe_scratch(&mut self, blocks: usize) {
        let used = blocks.min(self.scratch.len());
        self.scratch[..used].as_flattened_mut().fill(0);
    }

    fn run(&mut self, chain: Chain, lanes: &mut [Lane<'_>]) {
        self.stats = ScheduleStats::default();
        schedule::run(self.schedule, chain, lanes, self.lanes, &mut self.stats);
    }

    /// CBC-encrypts every job (SP 800-38A 6.2). [`Error::InvalidLength`] before any work if a
    /// job's data is not whole blocks.
    pub fn cbc_encrypt(&mut self, jobs: &mut [CbcJob<'_>]) -> Result<(), Error> {
        if jobs.iter().any(|job| !job.data.len().is_multiple_of(16)) {
            return Err(Error::InvalidLength);
        }
        let mut lanes: Vec<Lane<'_>> = jobs
            .iter_mut()
            .enumerate()
            .map(|(job, j)| Lane::new(&j.key.cipher, j.iv, j.data.as_chunks_mut::<16>().0, job))
            .collect();
        self.run(Chain::CbcEncrypt, &mut lanes);
        Ok(())
    }

    /// CFB128-encrypts every job (any length).
    pub fn cfb_encrypt(&mut self, jobs: &mut [CfbJob<'_>]) -> Result<(), Error> {
        let mut stream: Vec<(&Aes, [u8; 16], &mut [u8])> = jobs
            .iter_mut()
            .map(|j| (j.key, j.iv, &mut *j.data))
            .collect();
        self.stream(Chain::CfbEncrypt, &mut stream);
        Ok(())
    }

    /// Applies OFB to every job (any length).
    pub fn ofb(&mut self, jobs: &mut [OfbJob<'_>]) -> Result<(), Error> {
        let mut stream: Vec<(&Aes, [u8; 16], &mut [u8])> = jobs
            .iter_mut()
            .map(|j| (j.key, j.iv, &mut *j.data))
            .collect();
        self.stream(Chain::Ofb, &mut stream);
        Ok(())
    }

    /// CFB and OFB: whole blocks in place through the lanes, then every job's partial last
    /// block at once, padded in scratch, with each lane's final state.
    fn stream(&mut self, chain: Chain, jobs: &mut [(&Aes, [u8; 16], &mut [u8])]) {
        let mut states: Vec<[u8; 16]> = alloc::vec![[0; 16]; jobs.len()];
        {
            let mut lanes: Vec<Lane<'_>> = jobs
                .iter_mut()
                .enumerate()
                .map(|(job, (key, iv, data))| {
                    Lane::new(&key.cipher, *iv, data.as_chunks_mut::<16>().0, job)
                })
                .collect();
            self.run(chain, &mut lanes);
            for lane in &lanes {
                states[lane.job] = lane.state;
            }
        }
        let tails = jobs
            .iter()
            .filter(|(_, _, data)| !data.len().is_multiple_of(16))
            .count();
        let mut tail_lanes = Vec::with_capacity(tails);
        let mut slots = zeroed(&mut self.scratch, tails).iter_mut();
        for (job, (key, _, data)) in jobs.iter().enumerate() {
            let tail = data.as_chunks::<16>().1;
            if tail.is_empty() {
                continue;
            }
            if let Some(slot) = slots.next() {
                slot[..tail.len()].copy_from_slice(tail);
                tail_lanes.push(Lane::new(
                    &key.cipher,
                    states[job],
                    core::slice::from_mut(slot),
                    job,
                ));
            }
        }
        lanes::advance(chain, &mut tail_lanes, 1);
        drop(tail_lanes);
        let mut slots = self.scratch[..tails].iter();
        for (_, _, data) in jobs.iter_mut() {
            let tail = data.as_chunks_mut::<16>().1;
            if tail.is_empty() {
                continue;
            }
            if let Some(slot) = slots.next() {
                let len = tail.len();
                tail.copy_from_slice(&slot[..len]);
            }
        }
        self.wipe_scratch(tails);
        states.zeroize();
    }

    /// Computes every job's AES-CMAC (RFC 4493) into its `tag`.
    pub fn cmac(&mut self, jobs: &mut [CmacJob<'_>]) -> Result<(), Error> {
        // Scratch holds each message's blocks with the last one padded and masked (RFC 4493
        // 2.4 steps 3-4), so that every lane is one contiguous CBC-MAC chain.
        let sizes: Vec<usize> = jobs
            .iter()
            .map(|j| j.message.len().div_ceil(16).max(1))
            .collect();
        let total: usize = sizes.iter().sum();
        let mut lanes = Vec::with_capacity(jobs.len());
        let mut rest = zeroed(&mut self.scratch, total);
        // Subkeys cost two AES calls; derive them once per run of jobs sharing a key.
        let mut subkeys: Option<(&Aes, crate::modes::CmacSubkeys)> = None;
        for (job, (j, &size)) in jobs.iter().zip(&sizes).enumerate() {
            let (blocks, after) = rest.split_at_mut(size);
            rest = after;
            let current = match subkeys {
                Some((key, keys)) if core::ptr::eq(key, j.key) => keys,
                _ => crate::modes::cmac_subkeys(j.key),
            };
            subkeys = Some((j.key, current));
            crate::modes::cmac_blocks(&current, j.message, blocks);
            lanes.push(Lane::new(&j.key.cipher, [0; 16], blocks, job));
        }
        self.stats = ScheduleStats::default();
        schedule::run(
            self.schedule,
            Chain::CbcMac,
            &mut lanes,
            self.lanes,
            &mut self.stats,
        );
        if let Some((_, (k1, k2))) = subkeys.as_mut() {
            k1.zeroize();
            k2.zeroize();
        }
        for lane in &lanes {
            if let Some(job) = jobs.get_mut(lane.job) {
                job.tag = lane.state;
            }
        }
        drop(lanes);
        self.wipe_scratch(total);
        Ok(())
    }

    /// CCM-encrypts every job and writes its tag. Nonce and length errors are reported before
    /// any work.
    pub fn ccm_seal(&mut self, jobs: &mut [CcmJob<'_>]) -> Result<(), Error> {
        for job in jobs.iter() {
            job.ccm.check(job.nonce, job.data.len())?;
        }
        let macs = self.ccm_macs(jobs);
        for (job, mac) in jobs.iter_mut().zip(macs) {
            job.tag = job.ccm.encrypt_tag(job.nonce, mac);
            job.ccm.apply_payload_keystream(job.nonce, job.data);
        }
        Ok(())
    }

    /// CCM-decrypts every job whose tag authenticates it and sets `authentic`; a job that fails
    /// is zeroed, and the call returns [`Error::Authentication`] if any failed.
    pub fn ccm_open(&mut self, jobs: &mut [CcmJob<'_>]) -> Result<(), Error> {
        for job in jobs.iter() {
            job.ccm.check(job.nonce, job.data.len())?;
        }
        for job in jobs.iter_mut() {
            job.ccm.apply_payload_keystream(job.nonce, job.data);
        }
        let macs = self.ccm_macs(jobs);
        let mut all = true;
        for (job, mac) in jobs.iter_mut().zip(macs) {
            let expected = job.ccm.encrypt_tag(job.nonce, mac);
            let tag_len = job.ccm.tag_len();
            job.authentic = bool::from(expected[..tag_len].ct_eq(&job.tag[..tag_len]));
            if !job.authentic {
                job.data.zeroize();
                all = false;
            }
        }
        if all {
            Ok(())
        } else {
            Err(Error::Authentication)
        }
    }

    /// Every job's CBC-MAC over its formatted input (SP 800-38C A.2), the lanes fed from
    /// scratch.
    fn ccm_macs(&mut self, jobs: &[CcmJob<'_>]) -> Vec<[u8; 16]> {
        let sizes: Vec<usize> = jobs
            .iter()
            .map(|j| j.ccm.mac_input_blocks(j.aad.len(), j.data.len()))
            .collect();
        let total: usize = sizes.iter().sum();
        let mut lanes = Vec::with_capacity(jobs.len());
        let mut rest = zeroed(&mut self.scratch, total);
        for (job, (j, &size)) in jobs.iter().zip(&sizes).enumerate() {
            let (blocks, after) = rest.split_at_mut(size);
            rest = after;
            j.ccm.write_mac_input(j.nonce, j.aad, j.data, blocks);
            lanes.push(Lane::new(j.ccm.cipher(), [0; 16], blocks, job));
        }
        self.stats = ScheduleStats::default();
        schedule::run(
            self.schedule,
            Chain::CbcMac,
            &mut lanes,
            self.lanes,
            &mut self.stats,
        );
        let mut macs = alloc::vec![[0u8; 16]; jobs.len()];
        for lane in &lanes {
            macs[lane.job] = lane.state;
        }
        drop(lanes);
        self.wipe_scratch(total);
        macs
    }
}

/// The first `blocks` blocks of the engine's scratch, all zero: the scratch is wiped after
/// every use, so only growth has to write.
fn zeroed(scratch: &mut Vec<[u8; 16]>, blocks: usize) -> &mut [[u8; 16]] {
    if scratch.len() < blocks {
        scratch.resize(blocks, [0; 16]);
    }
    &mut scratch[..blocks]
}
