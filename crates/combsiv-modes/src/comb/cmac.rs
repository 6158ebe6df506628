//! CMAC over many messages (RFC 4493): the messages' CBC-MAC chains as comb lanes, each
//! last block masked with its subkey.

use alloc::vec::Vec;

use super::lanes::{Chain, Lane};
use super::schedule::Scheduler;
use super::{COPIED_PAYLOAD, CmacJob, Comb, ScheduleStats, ScratchLoan, encrypt_per_job};
use crate::modes::{CmacSubkeys, cmac_blocks, cmac_split, cmac_subkeys};
use combsiv_core::Aes;

impl Comb {
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
                lanes.push(Lane::new(j.key.block_cipher(), [0; 16], blocks, job));
            } else {
                let Some(last) = lasts_left.next() else {
                    unreachable!("`lasts` has a slot for every job that is not copied");
                };
                let body = cmac_split(current, j.message, last);
                lanes.push(Lane::reading(j.key.block_cipher(), [0; 16], body, job));
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
        encrypt_per_job(long().map(|j| j.key.block_cipher()), lasts, 1);
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
}
