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

mod advance;
mod ccm;
mod chained;
mod cmac;
#[cfg(vector_tiers)]
mod kernels;
mod lanes;
mod schedule;

use alloc::vec::Vec;

use zeroize::Zeroize;

use self::lanes::{Lane, LanePool};
use self::schedule::Scheduler;
pub use self::schedule::{Schedule, ScheduleStats};
use crate::modes::Ccm;
use combsiv_core::aes::BlockCipher;
use combsiv_core::cpu::Isa;
use combsiv_core::{Aes, Backend};

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
pub use combsiv_core::SivJob;

/// CCM payloads and CMAC messages up to this many bytes are copied into the engine's scratch,
/// behind CCM's header or with CMAC's last block masked, and run in one round of lanes;
/// longer ones are read (CCM seal: encrypted) where they lie, in lanes of their own, and
/// their last blocks take one more step. Copying a short message costs less than the
/// kernel calls of the extra steps: measured with CCM on AES-NI (Zen 1), when the extra
/// steps were rounds of lanes, 64-byte messages ran 30 % slower in place and 400-byte ones
/// 4 %, while 2 KiB ones ran 15 % faster than copied.
const COPIED_PAYLOAD: usize = 512;

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
        Isa::Vector(token) => token.comb_lanes(),
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
    use combsiv_core::Error;

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
