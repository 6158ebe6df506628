//! Which lanes advance together, and by how much: the comb paper's windows, and a greedy
//! refill scheduler in the style of intel-ipsec-mb.

use alloc::vec::Vec;

use super::advance::{advance, run_to_end};
use super::lanes::{Chain, Lane};

/// How a [`crate::comb::Comb`] assigns messages to lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Bogdanov-Lauridsen-Tischhauser's comb (Algorithms 1 and 2): sort by decreasing length,
    /// take groups of P, and run each *window* (the blocks that k messages of the group still
    /// share) as one straight-line k-lane kernel call.
    #[default]
    Windows,
    /// intel-ipsec-mb's manager: P lanes in arrival order; step every lane by the shortest
    /// remaining length; refill the lanes that finished from the queue.
    Greedy,
}

/// How well the lanes were used: `busy / slots` is the fraction of lane-blocks that did work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleStats {
    /// Lane-blocks offered: lanes x blocks of every kernel step.
    pub slots: u64,
    /// Lane-blocks that processed a message block.
    pub busy: u64,
}

impl ScheduleStats {
    /// The fraction of lane-blocks that stayed idle, 0.0 when nothing ran.
    pub fn idle_fraction(&self) -> f64 {
        if self.slots == 0 {
            0.0
        } else {
            1.0 - self.busy as f64 / self.slots as f64
        }
    }

    fn record(&mut self, lanes: usize, active: usize, blocks: usize) {
        self.slots += (lanes * blocks) as u64;
        self.busy += (active * blocks) as u64;
    }
}

/// The sort's buffers (lengths and indices only, nothing secret), kept by the engine between
/// calls for the reason [`super::lanes::LanePool`] gives.
#[derive(Default)]
pub(crate) struct SortScratch {
    order: Vec<(u64, usize)>,
    moved: Vec<(u64, usize)>,
    from: Vec<usize>,
}

/// A [`Schedule`] with the statistics it adds to and its sort's buffers: what the engine
/// keeps between calls to run rounds of lanes.
#[derive(Default)]
pub(crate) struct Scheduler {
    pub(crate) schedule: Schedule,
    pub(crate) stats: ScheduleStats,
    sort: SortScratch,
}

impl Scheduler {
    /// Runs every lane to its end with `lanes_per_group` lanes, as the schedule says; lanes
    /// are grouped by key kind (backend and key size) first, since one kernel call needs one
    /// kind.
    pub(crate) fn run(&mut self, chain: Chain, lanes: &mut [Lane<'_>], lanes_per_group: usize) {
        let width = lanes_per_group.max(1);
        let stats = &mut self.stats;
        match self.schedule {
            Schedule::Windows => sort_longest_first(lanes, &mut self.sort),
            // Stable: arrival order within a kind.
            Schedule::Greedy => lanes.sort_by_key(|lane| lane.kind().ordinal()),
        }
        let mut rest = &mut *lanes;
        while let Some(first) = rest.first() {
            let kind = first.kind();
            let same = rest.iter().take_while(|lane| lane.kind() == kind).count();
            let (of_kind, after) = rest.split_at_mut(same);
            match self.schedule {
                Schedule::Windows => run_windows(chain, of_kind, width, stats),
                Schedule::Greedy => run_greedy(chain, of_kind, width, stats),
            }
            rest = after;
        }
    }
}

/// Orders lanes by kind, then by decreasing remaining length. Sorting the lanes themselves
/// (64 bytes each) took an eighth of the time on the Internet mix; sorting 16-byte keys and
/// then moving every lane once along the permutation's cycles does not.
fn sort_longest_first(lanes: &mut [Lane<'_>], scratch: &mut SortScratch) {
    const LENGTH_BITS: u32 = 40;
    let length_mask = (1u64 << LENGTH_BITS) - 1;
    let SortScratch { order, moved, from } = scratch;
    order.clear();
    order.extend(lanes.iter().enumerate().map(|(index, lane)| {
        let longest_first = !(lane.remaining() as u64).min(length_mask) & length_mask;
        let key = (u64::from(lane.kind().ordinal()) << LENGTH_BITS) | longest_first;
        (key, index)
    }));
    // Already in order (a batch of one size, or one the caller sorted): nothing to move.
    if order.is_sorted_by_key(|&(key, _)| key) {
        return;
    }
    radix_sort(order, moved);
    // Position i receives the lane now at `from[i]`; each cycle of the permutation is walked
    // once, and a visited position is marked as a fixed point.
    from.clear();
    from.extend(order.iter().map(|&(_, index)| index));
    for start in 0..from.len() {
        let mut position = start;
        while from[position] != position {
            let source = from[position];
            from[position] = position;
            if source == start {
                break;
            }
            lanes.swap(position, source);
            position = source;
        }
    }
}

/// Sorts by key, least significant byte first, only over the bytes in which the keys differ
/// (usually the one or two that hold the length; none when every message has the same
/// length): a comparison sort mispredicts on every step, and counting all eight bytes cost
/// more than the whole encryption of 64 short messages.
fn radix_sort(pairs: &mut Vec<(u64, usize)>, moved: &mut Vec<(u64, usize)>) {
    let (any, all) = pairs.iter().fold((0u64, !0u64), |(any, all), &(key, _)| {
        (any | key, all & key)
    });
    let varying = any ^ all;
    for digit in (0..8).filter(|digit| (varying >> (8 * digit)) & 0xff != 0) {
        let byte = |key: u64| ((key >> (8 * digit)) & 0xff) as usize;
        let mut next = [0usize; 256];
        for &(key, _) in pairs.iter() {
            next[byte(key)] += 1;
        }
        let mut sum = 0;
        for slot in next.iter_mut() {
            let n = *slot;
            *slot = sum;
            sum += n;
        }
        moved.resize(pairs.len(), (0u64, 0usize));
        for &(key, index) in pairs.iter() {
            let bucket = &mut next[byte(key)];
            // The buckets' starts are the prefix sums of their counts: within `pairs`.
            let Some(target) = moved.get_mut(*bucket) else {
                unreachable!("a bucket's next slot lies within the pairs");
            };
            *target = (key, index);
            *bucket += 1;
        }
        core::mem::swap(pairs, moved);
    }
}

/// Algorithm 1 and 2 of the paper: in a group sorted by decreasing length l_1 >= ... >= l_k,
/// blocks 0..l_k are shared by all k lanes, l_k..l_(k-1) by k - 1, and so on.
/// A group runs as one kernel call where it fits one ([`run_to_end`]).
fn run_windows(chain: Chain, lanes: &mut [Lane<'_>], width: usize, stats: &mut ScheduleStats) {
    for group in lanes.chunks_mut(width) {
        let mut done = 0;
        for active in (1..=group.len()).rev() {
            let end = group[active - 1].remaining();
            if end > done {
                stats.record(width, active, end - done);
                done = end;
            }
        }
        run_to_end(chain, group);
    }
}

/// Lanes `done..done + active` are in flight, the queue follows them; a finished lane is
/// swapped to the front so that the in-flight lanes stay contiguous.
fn run_greedy(chain: Chain, lanes: &mut [Lane<'_>], width: usize, stats: &mut ScheduleStats) {
    let mut done = 0;
    while done < lanes.len() {
        let active = width.min(lanes.len() - done);
        let in_flight = &mut lanes[done..done + active];
        let step = in_flight.iter().map(Lane::remaining).min().unwrap_or(0);
        if step > 0 {
            advance(chain, in_flight, step);
            stats.record(width, active, step);
        }
        let (mut i, end) = (done, done + active);
        while i < end {
            if lanes[i].remaining() == 0 {
                lanes.swap(i, done);
                done += 1;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_agrees_with_a_comparison_sort() {
        let mut next = crate::xorshift::xorshift();
        for len in [0, 1, 2, 3, 255, 256, 1000] {
            for spread in [0u64, 0xff, 0xffff, u64::MAX >> 6] {
                let mut pairs: Vec<(u64, usize)> = (0..len).map(|i| (next() & spread, i)).collect();
                let mut expected = pairs.clone();
                expected.sort();
                radix_sort(&mut pairs, &mut Vec::new());
                assert_eq!(pairs, expected, "{len} keys under {spread:#x}");
            }
        }
    }
}
