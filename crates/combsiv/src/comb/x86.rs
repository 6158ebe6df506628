//! Lane kernels on the x86 tiers, written once over the register width ([`Width`]) and
//! instantiated for AES-NI (XMM: one lane per register) and VAES (YMM: two lanes per
//! register, each 128-bit half with its own state and round keys).
//!
//! CPU predicate: the token of each instantiation ([`per_width!`]); every `#[target_feature]`
//! function enables exactly its token's features.
//!
//! Design: a chained mode's block i+1 needs block i's AES output, so one lane issues an AESENC
//! every 4 cycles (its latency). Interleaving the rounds of independent lanes keeps the AES
//! unit busy: the comb paper's P = latency x throughput. On Cascade Lake (one AESENC per cycle,
//! latency 4) that is 4 lanes plus the chaining XOR: 6 measured best. On Zen 3 `aesenc xmm`
//! and `vaesenc ymm` both issue every 0.5 cycles with latency 4, so 8 instructions must be in
//! flight: 8 XMM lanes, or 8 YMM registers = 16 lanes with VAES, where one instruction does two
//! lanes' rounds. A kernel call serves one window (every lane advances `count` blocks) with no
//! per-block branch; states stay in registers, round keys are read as memory operands from a
//! copy packed once per call: per lane on AES-NI, per lane pair on VAES (the two halves of a
//! YMM key register hold two lanes' round keys), or one broadcast schedule when every lane
//! shares the key. An odd lane count on VAES runs the last lane in both halves of its
//! register: the duplicate computes the same values and stores them to the same place.
//!
//! CCM sealing runs two blocks per lane and step, the chained CBC-MAC block and the independent
//! counter block, through the same round keys: 8 lanes on VAES already keep 8 YMM states in
//! flight (measured: 8 lanes 0.46 TSC c/B at 2 KiB on Zen 4, 16 lanes 0.59, where 16 states
//! no longer fit the 16 YMM registers next to the loads).

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use zeroize::Zeroize;

use super::lanes::{Blocks, Chain, Lane};
use crate::aes::BlockCipher;
use crate::aes::x86::{Schedule, broadcast, swap_last_word};
use crate::cpu::x86::{STRIDE, Tier, Width, load128, per_width, store128};

const CBC_ENCRYPT: u8 = 0;
const CFB_ENCRYPT: u8 = 1;
const OFB: u8 = 2;
const CBC_MAC: u8 = 3;
const CCM_SEAL: u8 = 4;

/// The most lanes one kernel call runs: [`STRIDE`] registers of two lanes on VAES.
pub(crate) const MAX_KERNEL_LANES: usize = 2 * STRIDE;

/// Runs the next `count` blocks of `lanes` (each with at least `count` blocks left) through
/// the lane kernels if they are all x86 keys of one key size, as many calls as the tier's
/// registers need; returns false otherwise, touching nothing. Does not move the positions.
pub(crate) fn advance(chain: Chain, lanes: &mut [Lane<'_>], count: usize) -> bool {
    let Some((tier, rounds)) = x86_kind(lanes) else {
        return false;
    };
    let per_call = match tier {
        Tier::Aesni(_) => STRIDE,
        Tier::Vaes(_) => 2 * STRIDE,
    };
    for group in lanes.chunks_mut(per_call) {
        run(tier, rounds, chain, group, count);
    }
    true
}

/// The tier of the first lane's key and the round count, if every lane is an x86 key with
/// that round count. Any x86 lane's token proves what the whole group runs on. Compares the
/// kinds the lanes computed when they were made (backend and key size), not their keys: on
/// 64-byte messages, reading every lane's key here showed in profiles.
fn x86_kind(lanes: &[Lane<'_>]) -> Option<(Tier, usize)> {
    let first = lanes.first()?;
    let BlockCipher::X86(keys, tier) = first.cipher else {
        return None;
    };
    let kind = first.kind();
    lanes
        .iter()
        .all(|lane| lane.kind() == kind)
        .then_some((*tier, keys.rounds()))
}

/// One kernel call over at most [`MAX_KERNEL_LANES`] lanes.
fn run(tier: Tier, rounds: usize, chain: Chain, lanes: &mut [Lane<'_>], count: usize) {
    let n = lanes.len();
    let Some(BlockCipher::X86(first, _)) = lanes.first().map(|lane| lane.cipher) else {
        unreachable!("x86_kind checked that every lane holds x86 round keys");
    };
    let mut schedules = [first.schedule(); MAX_KERNEL_LANES];
    // States as integers: wiping them is 16 volatile stores, not 256.
    let mut states = [0u128; MAX_KERNEL_LANES];
    let mut counters = [0u128; MAX_KERNEL_LANES];
    let mut windows: [Blocks<'_>; MAX_KERNEL_LANES] = core::array::from_fn(|_| Blocks::Read(&[]));
    for ((((schedule, state), counter), window), lane) in schedules
        .iter_mut()
        .zip(&mut states)
        .zip(&mut counters)
        .zip(&mut windows)
        .zip(lanes.iter_mut())
    {
        let BlockCipher::X86(keys, _) = lane.cipher else {
            unreachable!("x86_kind checked that every lane holds x86 round keys");
        };
        *schedule = keys.schedule();
        *state = u128::from_le_bytes(lane.state());
        *counter = u128::from_le_bytes(lane.counter());
        *window = lane.window(count);
    }
    let schedules = &schedules[..n];
    let shared = schedules.iter().all(|s| core::ptr::eq(*s, schedules[0]));
    let lanes_per_register = match tier {
        Tier::Aesni(_) => 1,
        Tier::Vaes(_) => 2,
    };
    let job = Window {
        schedules,
        rounds,
        states: &mut states[..n],
        counters: &mut counters[..n],
        blocks: &mut windows[..n],
        count,
    };
    macro_rules! by_registers {
        ($($regs:literal),*) => {
            match n.div_ceil(lanes_per_register) {
                $($regs => by_mode::<$regs>(tier, chain, shared, job),)*
                _ => unreachable!("a call holds at most STRIDE registers of lanes"),
            }
        };
    }
    const _: () = assert!(STRIDE == 8);
    by_registers!(1, 2, 3, 4, 5, 6, 7, 8);
    for ((lane, state), counter) in lanes.iter_mut().zip(&states).zip(&counters) {
        lane.set_state(state.to_le_bytes());
        lane.set_counter(counter.to_le_bytes());
    }
    states.zeroize();
}

fn by_mode<const REGS: usize>(tier: Tier, chain: Chain, shared: bool, job: Window<'_, '_>) {
    macro_rules! kernel {
        ($mode:expr) => {
            if shared {
                lane_kernel::<REGS, { $mode }, true>(tier, job)
            } else {
                lane_kernel::<REGS, { $mode }, false>(tier, job)
            }
        };
    }
    match chain {
        Chain::CbcEncrypt => kernel!(CBC_ENCRYPT),
        Chain::CfbEncrypt => kernel!(CFB_ENCRYPT),
        Chain::Ofb => kernel!(OFB),
        Chain::CbcMac => kernel!(CBC_MAC),
        Chain::CcmSeal => kernel!(CCM_SEAL),
    }
}

/// What one kernel call advances: `n` lanes' schedules, states, counters (CCM) and windows
/// of `count` blocks.
struct Window<'s, 'b> {
    schedules: &'s [&'s Schedule],
    rounds: usize,
    states: &'s mut [u128],
    counters: &'s mut [u128],
    blocks: &'s mut [Blocks<'b>],
    count: usize,
}

per_width! {
    /// Advances every lane of `job` by its window, `REGS` registers of lanes.
    fn lane_kernel<const REGS: usize, const MODE: u8, const SHARED_KEY: bool>(
        job: Window<'_, '_>,
    ) = chain_kernel;
}

#[inline(always)]
#[allow(
    clippy::needless_range_loop,
    reason = "the register index addresses parallel arrays"
)]
fn chain_kernel<W: Width, const REGS: usize, const MODE: u8, const SHARED_KEY: bool>(
    width: W,
    job: Window<'_, '_>,
) {
    let Window {
        schedules,
        rounds,
        states: lane_states,
        counters: lane_counters,
        blocks,
        count,
    } = job;
    let n = blocks.len();
    assert!(
        n >= 1 && n.div_ceil(W::BLOCKS) == REGS && schedules.len() == n && lane_states.len() == n,
        "one schedule, state and window per lane, REGS registers of them"
    );
    assert!(
        blocks.iter().all(|lane| lane.len() == count),
        "each lane's window holds count blocks"
    );
    assert!(
        MODE == CBC_MAC || blocks.iter().all(Blocks::is_in_place),
        "only CBC-MAC, which stores nothing, runs over read-only windows"
    );
    // Half i of register r is lane r * BLOCKS + i; past the last lane, the last lane again.
    let lane = |r: usize, i: usize| (r * W::BLOCKS + i).min(n - 1);
    // Each half's window as a raw pointer: a lane that fills both halves of the last register
    // is read and written through two copies of one pointer, which two `&mut` could not be,
    // and the loop reads no slice lengths. Taken once per lane, so that both copies derive
    // from the same borrow.
    let base: [*mut [u8; 16]; MAX_KERNEL_LANES] = {
        let mut base = [core::ptr::null_mut(); MAX_KERNEL_LANES];
        for (pointer, window) in base.iter_mut().zip(blocks.iter_mut()) {
            *pointer = match window {
                Blocks::InPlace(window) => window.as_mut_ptr(),
                // Never written through: only CBC-MAC reads such windows (asserted above),
                // and it stores nothing.
                Blocks::Read(window) => window.as_ptr().cast_mut(),
            };
        }
        base
    };
    let windows: [[*mut [u8; 16]; 2]; REGS] =
        core::array::from_fn(|r| [base[lane(r, 0)], base[lane(r, 1)]]);
    let load = |r: usize, j: usize| {
        width.gather(|i| {
            // SAFETY: `windows[r][i]` points to a window of `count` blocks (asserted above)
            // that no reference is used for during the loop, and j < count.
            load128(unsafe { &*windows[r][i].add(j) })
        })
    };
    let store = |r: usize, j: usize, out: W::Reg| {
        for i in 0..W::BLOCKS {
            // SAFETY: as for `load`, and only windows in place are stored to (the modes
            // that store never get read-only windows, asserted above); both halves of a
            // duplicated lane store the same value.
            unsafe { *windows[r][i].add(j) = store128(width.block(out, i)) };
        }
    };
    // Shared: one schedule broadcast to every block. Distinct: each register's halves packed
    // from their lanes' schedules, once per call.
    let mut shared_keys = [width.zero(); 15];
    let mut keys = [[width.zero(); 15]; REGS];
    if SHARED_KEY {
        shared_keys = broadcast(width, schedules[0]);
    } else {
        for r in 0..REGS {
            for round in 0..=rounds {
                keys[r][round] = width.gather(|i| schedules[lane(r, i)][round]);
            }
        }
    }
    let key = |r: usize, round: usize| {
        if SHARED_KEY {
            shared_keys[round]
        } else {
            keys[r][round]
        }
    };
    // The chaining states live in `x` across blocks, so that nothing on the chain goes
    // through memory.
    let mut x: [W::Reg; REGS] =
        core::array::from_fn(|r| width.gather(|i| load128(&lane_states[lane(r, i)].to_le_bytes())));
    // CCM: each lane's counter with its last word byte-swapped, so that one vector add steps
    // every lane; `keystream` holds the counter blocks on their way through the rounds.
    let ccm = MODE == CCM_SEAL;
    // (A loop, not `array::from_fn`: a closure compiled apart from this function's target
    // features called the byte shuffle out of line, 4 % of 64-byte CCM in a profile.)
    let mut counter = [width.zero(); REGS];
    if ccm {
        for r in 0..REGS {
            let native = width.gather(|i| load128(&lane_counters[lane(r, i)].to_le_bytes()));
            counter[r] = swap_last_word(width, native);
        }
    }
    let one = width.broadcast(load128(&(1u128 << 96).to_le_bytes()));
    let mut keystream = [width.zero(); REGS];
    for j in 0..count {
        for r in 0..REGS {
            if MODE == CBC_ENCRYPT || MODE == CBC_MAC || ccm {
                x[r] = width.xor(x[r], load(r, j));
            }
            x[r] = width.xor(x[r], key(r, 0));
            if ccm {
                keystream[r] = width.xor(swap_last_word(width, counter[r]), key(r, 0));
                counter[r] = width.add32(counter[r], one);
            }
        }
        for round in 1..rounds {
            for r in 0..REGS {
                x[r] = width.aesenc(x[r], key(r, round));
                if ccm {
                    keystream[r] = width.aesenc(keystream[r], key(r, round));
                }
            }
        }
        for r in 0..REGS {
            x[r] = width.aesenclast(x[r], key(r, rounds));
            match MODE {
                CBC_ENCRYPT => store(r, j, x[r]),
                CFB_ENCRYPT => {
                    x[r] = width.xor(load(r, j), x[r]);
                    store(r, j, x[r]);
                }
                OFB => store(r, j, width.xor(load(r, j), x[r])),
                CCM_SEAL => {
                    keystream[r] = width.aesenclast(keystream[r], key(r, rounds));
                    store(r, j, width.xor(load(r, j), keystream[r]));
                }
                _ => {}
            }
        }
    }
    for r in 0..REGS {
        let native = swap_last_word(width, counter[r]);
        for i in 0..W::BLOCKS {
            lane_states[lane(r, i)] = u128::from_le_bytes(store128(width.block(x[r], i)));
            if ccm {
                lane_counters[lane(r, i)] = u128::from_le_bytes(store128(width.block(native, i)));
            }
        }
    }
    x.zeroize();
    keystream.zeroize();
    if SHARED_KEY {
        shared_keys.zeroize();
    } else {
        keys.zeroize();
    }
}
