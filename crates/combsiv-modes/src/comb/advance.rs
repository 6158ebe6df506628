//! Advancing lanes: a comb group to its end, or every lane by a number of blocks, in one lane
//! kernel call where the lanes share a tier and key size, block by block otherwise.

use zeroize::Zeroize;

#[cfg(vector_tiers)]
use super::lanes::Span;
use super::lanes::{Blocks, Chain, Lane};
use combsiv_core::aes::BlockCipher;

/// Runs every lane of a comb group to its end: the group's windows (see `schedule.rs`) in
/// one kernel call where the lanes' backend can, otherwise one [`advance`] per window. The
/// lanes must be in order of decreasing remaining length.
pub(crate) fn run_to_end(chain: Chain, lanes: &mut [Lane<'_>]) {
    assert!(
        lanes
            .windows(2)
            .all(|pair| pair[0].remaining() >= pair[1].remaining()),
        "a group's lanes in order of decreasing length"
    );
    match shared_key(lanes) {
        // The whole group in one call, if it fits one.
        #[cfg(vector_tiers)]
        Some(BlockCipher::Vector(keys, token)) if lanes.len() <= token.comb_lanes() => {
            let (token, rounds) = (*token, keys.rounds());
            stagger(lanes, |lanes, counts| {
                super::kernels::run(token, rounds, chain, lanes, Span::Each(counts));
            });
            super::kernels::run(token, rounds, chain, lanes, Span::Remaining);
            for lane in lanes.iter_mut() {
                lane.position = lane.blocks.len();
            }
            return;
        }
        _ => {}
    }
    for active in (1..=lanes.len()).rev() {
        let count = lanes[active - 1].remaining();
        if count > 0 {
            advance(chain, &mut lanes[..active], count);
        }
    }
}

/// Lanes whose current blocks share an L1 set that are left as they are: every x86 L1 data
/// cache has at least 8 ways. (Zen 3, VAES, 16 lanes of CBC over records 2 KiB apart, 8 to a
/// set: 1.05-1.09x the time of records 64 bytes apart; staggered to 4 to a set, 1.17-1.30x.)
const WAYS: usize = 8;

/// The lanes to a set that a staggered group keeps.
const LANES_PER_SET: usize = 4;

/// Staggers a group whose lanes would evict each other's lines. Every x86 L1 data cache has
/// 64 sets of 64-byte lines, chosen by address bits 6 to 11, so records laid out back to back
/// 2 or 4 KiB apart put every lane's current block in one or two sets: 16 or 32 lanes in 8
/// or 12 ways, each line evicted before its next block is read (Zen 3, VAES, 16 lanes of
/// CBC over 4 KiB records: 2.4-3.5x the time of the same records 64 bytes apart; staggered,
/// 1.2x). When more than [`WAYS`] lanes share a set, the lanes are cut into G runs by
/// their order so that [`LANES_PER_SET`] share one, and run g first advances 4 (G - 1 - g)
/// blocks, one line per run (`prefix`, one kernel call with those counts): the runs then
/// move through G different sets. The lanes are put back in order of decreasing remaining
/// length for the call that follows.
#[cfg(vector_tiers)]
fn stagger(lanes: &mut [Lane<'_>], prefix: impl FnOnce(&mut [Lane<'_>], &[usize])) {
    // Too few lanes to crowd a set, or messages too short to pay for the check (under 256
    // bytes, 4 lines, where each line is read a few times at most).
    if lanes.len() <= WAYS || lanes.first().is_none_or(|lane| lane.remaining() < 16) {
        return;
    }
    let (mut per_set, mut crowded) = ([0u8; 64], 0);
    for lane in lanes.iter() {
        let next = lane.blocks().as_ptr().addr() + 16 * lane.position;
        let count = &mut per_set[(next >> 6) % 64];
        *count += 1;
        crowded = crowded.max(*count);
    }
    let crowded = usize::from(crowded);
    if crowded <= WAYS {
        return;
    }
    let runs = crowded.div_ceil(LANES_PER_SET);
    let n = lanes.len();
    let mut counts = [0usize; super::kernels::MAX_KERNEL_LANES];
    for (i, (count, lane)) in counts.iter_mut().zip(lanes.iter()).enumerate() {
        // Blocks per line, times the runs after this lane's; never past the lane's end
        // (then still in decreasing order, as the lanes' lengths are).
        *count = (4 * (runs - 1 - i * runs / n)).min(lane.remaining());
    }
    prefix(lanes, &counts[..n]);
    for (lane, count) in lanes.iter_mut().zip(counts) {
        lane.position += count;
    }
    lanes.sort_unstable_by_key(|lane| core::cmp::Reverse(lane.remaining()));
}

/// Advances every lane by `count` blocks. Uses the lane kernels of the lanes' backend when
/// they share one, otherwise steps block by block.
///
/// # Panics
///
/// If a lane has fewer than `count` blocks left: the schedulers never ask for more, and a
/// lane that silently stopped short would leave plaintext where ciphertext belongs. If a
/// read-only lane is asked for a mode that writes: its output would be lost.
pub(crate) fn advance(chain: Chain, lanes: &mut [Lane<'_>], count: usize) {
    assert!(
        lanes.iter().all(|lane| lane.remaining() >= count),
        "a window never reaches past a lane's end"
    );
    assert!(
        chain == Chain::CbcMac || lanes.iter().all(|lane| lane.blocks.is_in_place()),
        "only CBC-MAC lanes read without writing"
    );
    match shared_key(lanes) {
        #[cfg(vector_tiers)]
        Some(BlockCipher::Vector(keys, token)) => {
            for group in lanes.chunks_mut(token.comb_lanes()) {
                super::kernels::run(*token, keys.rounds(), chain, group, Span::Next(count));
            }
        }
        // Portable keys, or lanes of several kinds: each lane with its own key, block-major,
        // so that the lanes' independent chains overlap out of order.
        _ => {
            for j in 0..count {
                for lane in lanes.iter_mut() {
                    let (mut state, mut counter) = (lane.state(), lane.counter());
                    let index = lane.position + j;
                    match &mut lane.blocks {
                        Blocks::InPlace(blocks) => {
                            chain.step(lane.cipher, &mut state, &mut counter, &mut blocks[index]);
                        }
                        // CBC-MAC (asserted above) only reads the block.
                        Blocks::Read(blocks) => {
                            let mut block = blocks[index];
                            chain.step(lane.cipher, &mut state, &mut counter, &mut block);
                            block.zeroize();
                        }
                    }
                    lane.set_state(state);
                    lane.set_counter(counter);
                    state.zeroize();
                }
            }
        }
    }
    for lane in lanes.iter_mut() {
        lane.position += count;
    }
}

/// The first lane's key if every lane has a key of its kind (tier and key size): then the
/// first key's tier is every lane's, and one lane kernel can run them all.
fn shared_key<'a>(lanes: &[Lane<'a>]) -> Option<&'a BlockCipher> {
    let first = lanes.first()?;
    let kind = first.kind();
    lanes
        .iter()
        .all(|lane| lane.kind() == kind)
        .then_some(first.cipher)
}
