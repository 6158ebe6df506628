//! Lane kernels on the vector tiers, written once over [`Tier`] and instantiated per tier by
//! [`per_tier!`]: one lane per block of a register (AES-NI: one per XMM register; VAES: two
//! per YMM register, AVX-512: four per ZMM register, each 128-bit block with its own state and
//! round keys).
//!
//! Design: a chained mode's block i+1 needs block i's AES output, so one lane issues an AESENC
//! every 4 cycles (its latency). Interleaving the rounds of independent lanes keeps the AES
//! unit busy: the comb paper's P = latency x throughput. On Cascade Lake (one AESENC per cycle,
//! latency 4) that is 4 lanes plus the chaining XOR: 6 measured best. On Zen 3 `aesenc xmm`
//! and `vaesenc ymm` both issue every 0.5 cycles with latency 4, so 8 instructions must be in
//! flight: 8 XMM lanes, or 8 YMM registers = 16 lanes with VAES, where one instruction does two
//! lanes' rounds. A kernel call runs a whole comb group, window after window (see
//! [`comb_group`]), each window's loop instantiated for its number of registers and free of
//! per-block branches; states stay in registers, round keys are read as memory operands from a
//! copy packed once per call: per lane on AES-NI, per lane pair on VAES (the two halves of a
//! YMM key register hold two lanes' round keys), or one broadcast schedule when every lane
//! shares the key. An odd lane count on VAES runs the last lane in both halves of its
//! register: the duplicate computes the same values and stores them to the same place.
//!
//! One call per group rather than per window: on the Internet mix a group of mid-sized
//! messages has about as many windows as lanes, and the calls' fixed costs (marshalling the
//! lanes, packing keys, loading states) showed in profiles; one call per group ran comb CBC,
//! CFB, OFB and CMAC on the mix 4-8 % faster on Zen 3 (VAES, best of five alternating runs;
//! CCM seal 8 % slower, within what this noisy machine could resolve).
//!
//! The windows are reached by checked indexing, through slices of cells where a duplicated
//! lane is written through two copies of one slice: 1-5 % slower on the mix and 64-byte
//! messages than raw pointers were on Zen 4 (up to 9 % for CCM with AES-NI), and no scheduling
//! bug can reach past a lane's blocks.
//!
//! CCM sealing runs two blocks per lane and step, the chained CBC-MAC block and the independent
//! counter block, through the same round keys: 8 lanes on VAES already keep 8 YMM states in
//! flight (measured: 8 lanes 0.46 TSC c/B at 2 KiB on Zen 4, 16 lanes 0.59, where 16 states
//! no longer fit the 16 YMM registers next to the loads).

use core::cell::Cell;

use zeroize::Zeroize;

use super::lanes::{Blocks, Chain, Lane, Span};
use combsiv_core::aes::BlockCipher;
use combsiv_core::aes::ctr::swap_last_word;
use combsiv_core::aes::kernels::{broadcast, for_each_middle_round};
use combsiv_core::aes::key_expansion::KeySchedule;
use combsiv_core::cpu::{MAX_BLOCKS, STRIDE, Tier, TierToken, load_block, per_tier, store_block};

const CBC_ENCRYPT: u8 = 0;
const CFB_ENCRYPT: u8 = 1;
const OFB: u8 = 2;
const CBC_MAC: u8 = 3;
const CCM_SEAL: u8 = 4;

/// The most lanes one kernel call runs on any tier: one per block of a stride of the widest.
pub(crate) const MAX_KERNEL_LANES: usize = STRIDE * MAX_BLOCKS;

/// One kernel call over at most [`TierToken::comb_lanes`] lanes of `token`'s keys with `rounds`
/// rounds: the blocks `span` gives each lane, from its position. Does not move the positions.
pub(crate) fn run(
    token: TierToken,
    rounds: usize,
    chain: Chain,
    lanes: &mut [Lane<'_>],
    span: Span<'_>,
) {
    // The per-call arrays sized for the tier's lanes, not for the widest tier's 32: filling
    // and wiping 32 lanes' worth made the comb 11-17 % slower on 64-byte messages with AES-NI
    // (8 lanes) on Zen 5.
    match token.comb_lanes() {
        0..=8 => run_lanes::<8>(token, rounds, chain, lanes, span),
        9..=16 => run_lanes::<16>(token, rounds, chain, lanes, span),
        _ => run_lanes::<MAX_KERNEL_LANES>(token, rounds, chain, lanes, span),
    }
}

/// [`run`] with room for `LANES` lanes.
fn run_lanes<const LANES: usize>(
    token: TierToken,
    rounds: usize,
    chain: Chain,
    lanes: &mut [Lane<'_>],
    span: Span<'_>,
) {
    let n = lanes.len();
    assert!(n <= LANES, "at most the token's lanes per call");
    let Some(BlockCipher::Vector(first, _)) = lanes.first().map(|lane| lane.cipher) else {
        unreachable!("the caller checked that every lane holds a key of `token`");
    };
    let mut schedules = [first.schedule(); LANES];
    // States as integers: wiping them is 16 volatile stores, not 256.
    let mut states = [0u128; LANES];
    let mut counters = [0u128; LANES];
    let mut windows: [Blocks<'_>; LANES] = core::array::from_fn(|_| Blocks::Read(&[]));
    for (i, ((((schedule, state), counter), window), lane)) in schedules
        .iter_mut()
        .zip(&mut states)
        .zip(&mut counters)
        .zip(&mut windows)
        .zip(lanes.iter_mut())
        .enumerate()
    {
        let BlockCipher::Vector(keys, _) = lane.cipher else {
            unreachable!("the caller checked that every lane holds a key of `token`");
        };
        *schedule = keys.schedule();
        *state = u128::from_le_bytes(lane.state());
        *counter = u128::from_le_bytes(lane.counter());
        let count = span.of(i, lane);
        *window = lane.window(count);
    }
    let schedules = &schedules[..n];
    let shared = schedules.iter().all(|s| core::ptr::eq(*s, schedules[0]));
    let job = CombGroup {
        lanes: Lanes {
            schedules,
            rounds,
            states: &mut states[..n],
            counters: &mut counters[..n],
            n,
        },
        blocks: &mut windows[..n],
    };
    macro_rules! kernel {
        ($mode:expr) => {
            if shared {
                lane_kernel::<{ $mode }, true>(token, job)
            } else {
                lane_kernel::<{ $mode }, false>(token, job)
            }
        };
    }
    match chain {
        Chain::CbcEncrypt => kernel!(CBC_ENCRYPT),
        Chain::CfbEncrypt => kernel!(CFB_ENCRYPT),
        Chain::Ofb => kernel!(OFB),
        Chain::CcmSeal => kernel!(CCM_SEAL),
        Chain::CbcMac if shared => mac_kernel::<true>(token, job),
        Chain::CbcMac => mac_kernel::<false>(token, job),
    }
    for ((lane, state), counter) in lanes.iter_mut().zip(&states).zip(&counters) {
        lane.set_state(state.to_le_bytes());
        lane.set_counter(counter.to_le_bytes());
    }
    states[..n].zeroize();
}

/// What one kernel call advances: `n` lanes' schedules, states, counters (CCM) and windows,
/// the windows in order of decreasing length (a comb group), each lane to its window's end.
struct CombGroup<'s, 'b> {
    lanes: Lanes<'s>,
    blocks: &'s mut [Blocks<'b>],
}

per_tier! {
    /// Advances every lane of `job` to the end of its window, reading and writing the
    /// windows (every mode but CBC-MAC).
    fn lane_kernel<const MODE: u8, const SHARED_KEY: bool>(job: CombGroup<'_, '_>) = cells_kernel;
}

per_tier! {
    /// Advances every lane of `job` to the end of its window under CBC-MAC, which stores
    /// nothing and so also runs over read-only windows.
    fn mac_kernel<const SHARED_KEY: bool>(job: CombGroup<'_, '_>) = read_kernel;
}

/// A group's chaining states and CCM's counters in flight, one register per lane pair (VAES)
/// or lane (AES-NI).
struct States<W: Tier> {
    x: [W::Reg; STRIDE],
    counter: [W::Reg; STRIDE],
    /// CCM's last keystream blocks, kept only to be wiped.
    keystream: [W::Reg; STRIDE],
}

/// The modes that store: their windows as slices of cells, so that a lane that fills both
/// halves of a register is reached through two copies of one shared slice, which two `&mut`
/// could not be. (Two kernels, not one that picks its windows by `MODE`: every instance
/// compiles both arms of a branch on a const parameter, so that one doubled the window loops,
/// half of the crate's LLVM IR.)
#[inline(always)]
fn cells_kernel<W: Tier, const MODE: u8, const SHARED_KEY: bool>(tier: W, job: CombGroup<'_, '_>) {
    let CombGroup { lanes, blocks } = job;
    let mut windows: [&[Cell<[u8; 16]>]; MAX_KERNEL_LANES] = [&[]; MAX_KERNEL_LANES];
    for (window, blocks) in windows.iter_mut().zip(blocks.iter_mut()) {
        let Blocks::InPlace(blocks) = blocks else {
            unreachable!("only CBC-MAC, which stores nothing, runs over read-only windows");
        };
        *window = Cell::from_mut(&mut **blocks).as_slice_of_cells();
    }
    comb_group::<W, _, MODE, SHARED_KEY>(tier, lanes, windows);
}

/// CBC-MAC reads its windows as they are (some are read-only).
#[inline(always)]
fn read_kernel<W: Tier, const SHARED_KEY: bool>(tier: W, job: CombGroup<'_, '_>) {
    let CombGroup { lanes, blocks } = job;
    let mut windows: [&[[u8; 16]]; MAX_KERNEL_LANES] = [&[]; MAX_KERNEL_LANES];
    for (window, blocks) in windows.iter_mut().zip(blocks.iter()) {
        *window = blocks.as_slice();
    }
    comb_group::<W, _, CBC_MAC, SHARED_KEY>(tier, lanes, windows);
}

/// A group's `n` lanes apart from their windows.
struct Lanes<'s> {
    schedules: &'s [&'s KeySchedule],
    rounds: usize,
    states: &'s mut [u128],
    counters: &'s mut [u128],
    n: usize,
}

/// A lane's window as the loop reaches it: blocks read, and written in place.
trait Window: Copy {
    fn len(self) -> usize;
    fn load(self, j: usize) -> [u8; 16];
    fn store(self, j: usize, block: [u8; 16]);
}

impl Window for &[[u8; 16]] {
    #[inline(always)]
    fn len(self) -> usize {
        <[_]>::len(self)
    }
    #[inline(always)]
    fn load(self, j: usize) -> [u8; 16] {
        self[j]
    }
    #[inline(always)]
    fn store(self, _: usize, _: [u8; 16]) {
        unreachable!("only CBC-MAC runs over read-only windows, and it stores nothing")
    }
}

impl Window for &[Cell<[u8; 16]>] {
    #[inline(always)]
    fn len(self) -> usize {
        <[_]>::len(self)
    }
    #[inline(always)]
    fn load(self, j: usize) -> [u8; 16] {
        self[j].get()
    }
    #[inline(always)]
    fn store(self, j: usize, block: [u8; 16]) {
        self[j].set(block);
    }
}

/// The comb's windows inside one call. With lanes sorted by decreasing length l_1 >= ... >=
/// l_n, blocks 0..l_n run on every lane, then l_n..l_(n-1) on the first n - 1, and so on
/// (Bogdanov, Lauridsen, Tischhauser, Algorithms 1 and 2). Each window runs the loop
/// instantiated for its number of registers, so a window of few lanes costs few
/// instructions; when a lane ends its state is saved, and on the wide tiers a register some of
/// whose lanes have ended runs its last lane still running in their blocks (the duplicates
/// compute the same values and store them to the same place).
#[inline(always)]
fn comb_group<W: Tier, V: Window, const MODE: u8, const SHARED_KEY: bool>(
    tier: W,
    lanes: Lanes<'_>,
    lane_windows: [V; MAX_KERNEL_LANES],
) {
    let Lanes {
        schedules,
        rounds,
        states: lane_states,
        counters: lane_counters,
        n,
    } = lanes;
    assert!(
        n >= 1 && n.div_ceil(W::BLOCKS) <= STRIDE && schedules.len() == n && lane_states.len() == n,
        "one schedule, state and window per lane, at most STRIDE registers of them"
    );
    assert!(
        lane_windows[..n]
            .windows(2)
            .all(|pair| pair[0].len() >= pair[1].len()),
        "windows in order of decreasing length"
    );
    // Filled for the lanes present only: the arrays are sized for the widest tier.
    let mut ends = [0usize; MAX_KERNEL_LANES];
    for (end, window) in ends.iter_mut().zip(&lane_windows[..n]) {
        *end = window.len();
    }
    let lane = lane_of::<W>;
    let mut regs = States::<W> {
        x: [tier.zero(); STRIDE],
        counter: [tier.zero(); STRIDE],
        keystream: [tier.zero(); STRIDE],
    };
    // Shared: one schedule broadcast to every block. Distinct: each register's halves packed
    // from their lanes' schedules (only then is the larger array written, and so kept).
    let mut shared_keys = [tier.zero(); 15];
    let mut keys = [[tier.zero(); 15]; STRIDE];
    if SHARED_KEY {
        shared_keys = broadcast(tier, schedules[0]);
    }
    let registers = n.div_ceil(W::BLOCKS);
    for r in 0..registers {
        if !SHARED_KEY {
            pack_keys(tier, schedules, rounds, &mut keys[r], (n, r));
        }
        regs.x[r] = tier.gather(|i| load_block(&lane_states[lane(n, r, i)].to_le_bytes()));
        if MODE == CCM_SEAL {
            // Each lane's counter with its last word byte-swapped, so that one vector add
            // steps every lane.
            let native = tier.gather(|i| load_block(&lane_counters[lane(n, r, i)].to_le_bytes()));
            regs.counter[r] = swap_last_word(tier, native);
        }
    }
    let (mut active, mut done) = (n, 0);
    while active > 0 {
        let end = ends[active - 1];
        let in_flight = active.div_ceil(W::BLOCKS);
        if end > done {
            let windows: [[V; MAX_BLOCKS]; STRIDE] = core::array::from_fn(|r| {
                core::array::from_fn(|i| lane_windows[lane(active, r, i)])
            });
            let keys: &[[W::Reg; 15]] = if SHARED_KEY {
                core::slice::from_ref(&shared_keys)
            } else {
                &keys
            };
            let steps = Steps {
                tier,
                rounds,
                keys,
                windows,
                from: done,
                to: end,
            };
            match in_flight {
                1 => steps.run::<1, MODE, SHARED_KEY>(&mut regs),
                2 => steps.run::<2, MODE, SHARED_KEY>(&mut regs),
                3 => steps.run::<3, MODE, SHARED_KEY>(&mut regs),
                4 => steps.run::<4, MODE, SHARED_KEY>(&mut regs),
                5 => steps.run::<5, MODE, SHARED_KEY>(&mut regs),
                6 => steps.run::<6, MODE, SHARED_KEY>(&mut regs),
                7 => steps.run::<7, MODE, SHARED_KEY>(&mut regs),
                _ => steps.run::<8, MODE, SHARED_KEY>(&mut regs),
            }
            done = end;
        }
        // The lanes that end here leave the group with their states.
        while active > 0 && ends[active - 1] == done {
            let (r, i) = ((active - 1) / W::BLOCKS, (active - 1) % W::BLOCKS);
            lane_states[active - 1] = u128::from_le_bytes(store_block(tier.block(regs.x[r], i)));
            if MODE == CCM_SEAL {
                let native = swap_last_word(tier, regs.counter[r]);
                lane_counters[active - 1] = u128::from_le_bytes(store_block(tier.block(native, i)));
            }
            active -= 1;
        }
        // A register some of whose lanes left, and not all, runs its last lane still running
        // in the blocks of those that left from here on (as `lane` maps them).
        if active > 0 && active % W::BLOCKS != 0 {
            let r = active / W::BLOCKS;
            if !SHARED_KEY {
                pack_keys(tier, schedules, rounds, &mut keys[r], (active, r));
            }
            let last = active % W::BLOCKS - 1;
            regs.x[r] = refill(tier, regs.x[r], last);
            regs.counter[r] = refill(tier, regs.counter[r], last);
        }
    }
    regs.x.zeroize();
    regs.keystream.zeroize();
    if SHARED_KEY {
        shared_keys.zeroize();
    } else {
        for keys in &mut keys[..registers] {
            keys.zeroize();
        }
    }
    const _: () = assert!(STRIDE == 8);
}

/// The lane in block `i` of register `r` while `active` lanes run: lane `r * BLOCKS + i`, or
/// past the last lane still running, that lane again.
#[inline(always)]
fn lane_of<W: Tier>(active: usize, r: usize, i: usize) -> usize {
    (r * W::BLOCKS + i).min(active - 1)
}

/// Packs register `r`'s round keys from its lanes' schedules while `active` lanes run.
/// (A function, not a closure: LLVM left such closures out of line, compiled without the
/// tier's target features, with a call for every intrinsic.)
#[inline(always)]
fn pack_keys<W: Tier>(
    tier: W,
    schedules: &[&KeySchedule],
    rounds: usize,
    keys: &mut [W::Reg; 15],
    (active, r): (usize, usize),
) {
    for (round, key) in keys.iter_mut().enumerate().take(rounds + 1) {
        *key = tier.gather(|i| schedules[lane_of::<W>(active, r, i)][round]);
    }
}

/// `reg` with block `last`'s value in every block after it (the blocks of lanes that ended).
#[inline(always)]
fn refill<W: Tier>(tier: W, reg: W::Reg, last: usize) -> W::Reg {
    tier.gather(|i| tier.block(reg, i.min(last)))
}

/// One window: blocks `from..to` of the lanes that `windows` points at.
struct Steps<'k, W: Tier, V> {
    tier: W,
    rounds: usize,
    /// One schedule for every register (shared key) or one per register.
    keys: &'k [[W::Reg; 15]],
    windows: [[V; MAX_BLOCKS]; STRIDE],
    from: usize,
    to: usize,
}

impl<W: Tier, V: Window> Steps<'_, W, V> {
    /// The window's loop over `REGS` registers of lanes; states and counters stay in
    /// registers across blocks, the round keys are memory operands.
    #[inline(always)]
    #[allow(
        clippy::needless_range_loop,
        reason = "the register index addresses parallel arrays"
    )]
    fn run<const REGS: usize, const MODE: u8, const SHARED_KEY: bool>(self, regs: &mut States<W>) {
        let Steps {
            tier,
            rounds,
            keys,
            windows,
            from,
            to,
        } = self;
        let load = |r: usize, j: usize| tier.gather(|i| load_block(&windows[r][i].load(j)));
        // Both halves of a duplicated lane store the same value.
        let store = |r: usize, j: usize, out: W::Reg| {
            for i in 0..W::BLOCKS {
                windows[r][i].store(j, store_block(tier.block(out, i)));
            }
        };
        let key = |r: usize, round: usize| {
            if SHARED_KEY {
                keys[0][round]
            } else {
                keys[r][round]
            }
        };
        let ccm = MODE == CCM_SEAL;
        let mut x = [tier.zero(); REGS];
        let mut counter = [tier.zero(); REGS];
        for r in 0..REGS {
            x[r] = regs.x[r];
            if ccm {
                counter[r] = regs.counter[r];
            }
        }
        let one = tier.broadcast(load_block(&(1u128 << 96).to_le_bytes()));
        let mut keystream = [tier.zero(); REGS];
        // Each step reads its input blocks before it stores any: with the loads after the
        // stores, LLVM left the register loop of CFB and OFB rolled (28 % slower on Zen 4).
        let mut input = [tier.zero(); REGS];
        for j in from..to {
            for r in 0..REGS {
                input[r] = load(r, j);
                if MODE == CBC_ENCRYPT || MODE == CBC_MAC || ccm {
                    x[r] = tier.xor(x[r], input[r]);
                }
                x[r] = tier.xor(x[r], key(r, 0));
                if ccm {
                    keystream[r] = tier.xor(swap_last_word(tier, counter[r]), key(r, 0));
                    counter[r] = tier.add32(counter[r], one);
                }
            }
            for_each_middle_round!(W, rounds, |round| {
                for r in 0..REGS {
                    x[r] = tier.aes_round(x[r], key(r, round));
                    if ccm {
                        keystream[r] = tier.aes_round(keystream[r], key(r, round));
                    }
                }
            });
            for r in 0..REGS {
                x[r] = tier.aes_last_round(x[r], key(r, rounds));
                match MODE {
                    CBC_ENCRYPT => store(r, j, x[r]),
                    CFB_ENCRYPT => {
                        x[r] = tier.xor(input[r], x[r]);
                        store(r, j, x[r]);
                    }
                    OFB => store(r, j, tier.xor(input[r], x[r])),
                    CCM_SEAL => {
                        keystream[r] = tier.aes_last_round(keystream[r], key(r, rounds));
                        store(r, j, tier.xor(input[r], keystream[r]));
                    }
                    _ => {}
                }
            }
        }
        // The states (and keystream) go back to `regs`, which the kernel wipes when the
        // group ends; wiping these copies here would take their addresses and keep them in
        // memory throughout the loop.
        for r in 0..REGS {
            regs.x[r] = x[r];
            if ccm {
                regs.counter[r] = counter[r];
                regs.keystream[r] = keystream[r];
            }
        }
    }
}
