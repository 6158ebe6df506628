//! Lanes: independent chains of blocks, each with its own key and state, advanced together so
//! that their AES instructions fill the pipeline.

use alloc::vec::Vec;

use zeroize::Zeroize;

use combsiv_core::Backend;
use combsiv_core::aes::{AesKeySize, BlockCipher};

/// The per-block operation of a chained mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chain {
    /// x = state ^ P; state = C = AES(x).
    CbcEncrypt,
    /// x = state; C = P ^ AES(x); state = C.
    CfbEncrypt,
    /// x = state; state = AES(x); out = in ^ state.
    Ofb,
    /// x = state ^ M; state = AES(x); no output.
    CbcMac,
    /// CCM sealing, both halves of each block in one step: x = state ^ M; state = AES(x);
    /// out = M ^ AES(counter); counter += 1 (its last 32 bits, big-endian). The counter's
    /// AES does not depend on the chain, so it runs in the chained block's latency.
    CcmSeal,
}

impl Chain {
    /// One block of one lane in portable code: the reference for the kernels.
    pub(crate) fn step(
        self,
        cipher: &BlockCipher,
        state: &mut [u8; 16],
        counter: &mut [u8; 16],
        block: &mut [u8; 16],
    ) {
        let mut x = *state;
        if matches!(self, Chain::CbcEncrypt | Chain::CbcMac | Chain::CcmSeal) {
            xor(&mut x, block);
        }
        let mut y = cipher.encrypt_block(&x);
        match self {
            Chain::CbcEncrypt => {
                *block = y;
                *state = y;
            }
            Chain::CfbEncrypt => {
                xor(block, &y);
                *state = *block;
            }
            Chain::Ofb => {
                xor(block, &y);
                *state = y;
            }
            Chain::CbcMac => *state = y,
            Chain::CcmSeal => {
                *state = y;
                let mut keystream = cipher.encrypt_block(counter);
                xor(block, &keystream);
                keystream.zeroize();
                let value = u128::from_be_bytes(*counter);
                let low = (value as u32).wrapping_add(1);
                *counter = (value & !0xFFFF_FFFF | u128::from(low)).to_be_bytes();
            }
        }
        x.zeroize();
        y.zeroize();
    }
}

fn xor(target: &mut [u8; 16], mask: &[u8; 16]) {
    for (byte, m) in target.iter_mut().zip(mask) {
        *byte ^= m;
    }
}

/// A lane's blocks: transformed in place, or only read. CBC-MAC writes nothing, so it can run
/// over data lent immutably without copying it first.
pub(crate) enum Blocks<'a> {
    InPlace(&'a mut [[u8; 16]]),
    Read(&'a [[u8; 16]]),
}

impl Blocks<'_> {
    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub(crate) fn as_slice(&self) -> &[[u8; 16]] {
        match self {
            Blocks::InPlace(blocks) => blocks,
            Blocks::Read(blocks) => blocks,
        }
    }

    pub(crate) fn is_in_place(&self) -> bool {
        matches!(self, Blocks::InPlace(_))
    }
}

/// One chain: its key, chaining state, all of its blocks, and how far it has got.
pub(crate) struct Lane<'a> {
    pub(crate) cipher: &'a BlockCipher,
    /// The chaining state as a little-endian integer: wiped on drop by one volatile store
    /// where a byte array takes sixteen, which showed in profiles of short messages.
    state: u128,
    /// CCM's counter block, as bytes in memory order (unused by the other modes). Public: the
    /// nonce and a position.
    counter: u128,
    pub(crate) blocks: Blocks<'a>,
    pub(crate) position: usize,
    /// Which job this lane belongs to, to write the state back.
    pub(crate) job: usize,
    /// The key's backend and key size, computed once: lanes of one kind share a kernel call.
    kind: LaneKind,
}

/// What lanes must share to run in one kernel call: the tier their keys run on (its token
/// proves what the call runs on) and the key size (the round count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneKind {
    backend: Backend,
    size: AesKeySize,
}

impl LaneKind {
    /// An order of kinds (the scheduler groups lanes by it), as a number of at most 16 bits.
    pub(crate) fn ordinal(self) -> u16 {
        (self.backend as u16) << 1 | self.size as u16
    }
}

impl<'a> Lane<'a> {
    pub(crate) fn new(
        cipher: &'a BlockCipher,
        state: [u8; 16],
        blocks: &'a mut [[u8; 16]],
        job: usize,
    ) -> Self {
        let kind = LaneKind {
            backend: cipher.isa().backend(),
            size: cipher.size(),
        };
        Lane {
            cipher,
            state: u128::from_le_bytes(state),
            counter: 0,
            blocks: Blocks::InPlace(blocks),
            position: 0,
            job,
            kind,
        }
    }

    /// A lane that only reads its blocks: for [`Chain::CbcMac`] alone, which [`advance`]
    /// checks.
    pub(crate) fn reading(
        cipher: &'a BlockCipher,
        state: [u8; 16],
        blocks: &'a [[u8; 16]],
        job: usize,
    ) -> Self {
        let mut lane = Lane::new(cipher, state, &mut [], job);
        lane.blocks = Blocks::Read(blocks);
        lane
    }

    /// All of the lane's blocks, as they are now.
    pub(crate) fn blocks(&self) -> &[[u8; 16]] {
        self.blocks.as_slice()
    }

    /// The chaining state: the last ciphertext block, OFB's keystream or the running MAC.
    pub(crate) fn state(&self) -> [u8; 16] {
        self.state.to_le_bytes()
    }

    pub(crate) fn set_state(&mut self, state: [u8; 16]) {
        self.state = u128::from_le_bytes(state);
    }

    /// The same lane with a counter block for [`Chain::CcmSeal`].
    pub(crate) fn with_counter(mut self, counter: [u8; 16]) -> Self {
        self.counter = u128::from_le_bytes(counter);
        self
    }

    pub(crate) fn counter(&self) -> [u8; 16] {
        self.counter.to_le_bytes()
    }

    pub(crate) fn set_counter(&mut self, counter: [u8; 16]) {
        self.counter = u128::from_le_bytes(counter);
    }

    pub(crate) fn remaining(&self) -> usize {
        self.blocks.len() - self.position
    }

    /// Lanes with the same key kind advance in one kernel call.
    pub(crate) fn kind(&self) -> LaneKind {
        self.kind
    }

    /// The next `count` blocks (the caller checked that there are that many).
    #[cfg(vector_tiers)]
    pub(crate) fn window(&mut self, count: usize) -> Blocks<'_> {
        let range = self.position..self.position + count;
        match &mut self.blocks {
            Blocks::InPlace(blocks) => Blocks::InPlace(&mut blocks[range]),
            Blocks::Read(blocks) => Blocks::Read(&blocks[range]),
        }
    }
}

/// A lane vector's allocation, kept by the engine between calls.
///
/// A call over the Internet mix builds lane vectors of about 100 KB. Allocated and freed on
/// every call, glibc returned the freed top of the heap to the kernel each time (it trims
/// above 128 KB) and grew it again on the next call: three `brk` calls per batch and fresh
/// pages to fault in and clear, a quarter of the time of comb CBC on the mix (Zen 3).
#[derive(Default)]
pub(crate) struct LanePool(Vec<Lane<'static>>);

impl LanePool {
    /// An empty lane vector with the pool's allocation.
    pub(crate) fn take<'a>(&mut self) -> Vec<Lane<'a>> {
        relabel(core::mem::take(&mut self.0))
    }

    /// Drops (and so wipes) the lanes, keeping their allocation for the next call.
    pub(crate) fn give_back(&mut self, lanes: Vec<Lane<'_>>) {
        self.0 = relabel(lanes);
    }

    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.0.capacity()
    }
}

/// Empties `lanes` and returns their allocation as a vector of lanes of another lifetime.
/// The standard library collects a vector's `into_iter()` into a vector of a type of the
/// same size and alignment in place, so this moves no memory and allocates nothing (a
/// test checks it); were that ever to change, it would still be correct, only allocate.
#[allow(
    clippy::unnecessary_filter_map,
    reason = "the map changes the lifetime, which a filter cannot"
)]
fn relabel<'b>(mut lanes: Vec<Lane<'_>>) -> Vec<Lane<'b>> {
    lanes.clear();
    lanes.into_iter().filter_map(|_| None).collect()
}

/// The chaining state is keystream in OFB and the running MAC in CMAC and CCM.
impl Drop for Lane<'_> {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

/// How many blocks of each lane one kernel call runs.
#[cfg(vector_tiers)]
#[derive(Clone, Copy)]
pub(crate) enum Span<'c> {
    /// All that remain.
    Remaining,
    /// The same number for every lane.
    Next(usize),
    /// Lane i's `counts[i]` (in order of decreasing count, as a comb group's windows).
    Each(&'c [usize]),
}

#[cfg(vector_tiers)]
impl Span<'_> {
    pub(crate) fn of(self, i: usize, lane: &Lane<'_>) -> usize {
        match self {
            Span::Remaining => lane.remaining(),
            Span::Next(count) => count,
            Span::Each(counts) => counts[i],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is only worth having if the allocation really survives the change of
    /// lifetime: the same buffer must come back.
    #[test]
    fn the_pool_keeps_its_allocation() {
        let key = combsiv_core::Aes::new(&[1; 16]).unwrap();
        let mut blocks = alloc::vec![[0u8; 16]; 100];
        let mut pool = LanePool::default();
        let mut lanes = pool.take();
        lanes.extend(blocks.iter_mut().enumerate().map(|(job, block)| {
            Lane::new(
                key.block_cipher(),
                [7; 16],
                core::slice::from_mut(block),
                job,
            )
        }));
        let buffer = (lanes.as_ptr() as usize, lanes.capacity());
        pool.give_back(lanes);
        assert_eq!(pool.capacity(), buffer.1);
        let again: Vec<Lane<'_>> = pool.take();
        assert!(again.is_empty());
        assert_eq!((again.as_ptr() as usize, again.capacity()), buffer);
    }
}
