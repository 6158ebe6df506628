//! The chained confidentiality modes over many messages: CBC and CFB encryption and OFB,
//! each message's chain a comb lane.

use alloc::vec::Vec;

use zeroize::Zeroizing;

use super::advance::advance;
use super::lanes::{Chain, Lane};
use super::{CbcJob, CfbJob, Comb, OfbJob, ScheduleStats, ScratchLoan};
use combsiv_core::{Aes, Error};

impl Comb {
    /// CBC-encrypts every job (SP 800-38A 6.2). [`Error::InvalidLength`] before any work if a
    /// job's data is not whole blocks.
    pub fn cbc_encrypt(&mut self, jobs: &mut [CbcJob<'_>]) -> Result<(), Error> {
        if jobs.iter().any(|job| !job.data.len().is_multiple_of(16)) {
            return Err(Error::InvalidLength);
        }
        let mut lanes = self.pool.take();
        lanes.extend(jobs.iter_mut().enumerate().map(|(job, j)| {
            Lane::new(
                j.key.block_cipher(),
                j.iv,
                j.data.as_chunks_mut::<16>().0,
                job,
            )
        }));
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
                Lane::new(key.block_cipher(), *iv, data.as_chunks_mut::<16>().0, job)
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
                Lane::new(
                    key.block_cipher(),
                    states[job],
                    core::slice::from_mut(slot),
                    job,
                )
            },
        ));
        advance(chain, &mut tail_lanes, 1);
        self.pool.give_back(tail_lanes);
        for (slot, (_, _, tail)) in scratch.blocks.iter().zip(&mut tails) {
            let len = tail.len();
            tail.copy_from_slice(&slot[..len]);
        }
    }
}
