//! Lane kernels on AES-NI (128-bit registers, one block per lane in each register).
//!
//! CPU predicate: [`Aesni`] (AES-NI, PCLMULQDQ, SSSE3, SSE4.1); every `#[target_feature]` here
//! enables exactly that set.
//!
//! Design: a chained mode's block i+1 needs block i's AES output, so one lane issues an AESENC
//! every 4 cycles (its latency) on a unit that accepts one per cycle. Interleaving the rounds
//! of LANES independent chains, each with its own round keys (read from L1 as memory
//! operands, so shared or per-lane keys cost the same), keeps LANES AESENCs in flight. The lane
//! count is a const generic so that the states live in registers and the inner loops unroll;
//! one kernel call serves a whole window, with no per-block branches.

#![allow(
    unsafe_code,
    reason = "x86 intrinsics; each unsafe block says why it is sound"
)]

use core::arch::x86_64::*;

use super::lanes::{Chain, Lane, MAX_KERNEL_LANES};
use crate::aes::BlockCipher;
use zeroize::Zeroize;

use crate::cpu::x86::{Aesni, load128, store128};

const CBC_ENCRYPT: u8 = 0;
const CFB_ENCRYPT: u8 = 1;
const OFB: u8 = 2;
const CBC_MAC: u8 = 3;

/// Runs the next `count` blocks of `lanes` (at most [`MAX_KERNEL_LANES`], each with at least
/// `count` blocks left) through the AES-NI kernel if they are all AES-NI keys of one key size;
/// returns false otherwise, touching nothing. Does not move the lanes' positions.
pub(crate) fn advance(chain: Chain, lanes: &mut [Lane<'_>], count: usize) -> bool {
    macro_rules! lanes {
        ($($n:literal),*) => {
            match lanes.len() {
                $($n => match lanes.first_chunk_mut::<$n>() {
                    Some(group) => run(chain, group, count),
                    None => unreachable!("a slice of length {} has a first chunk that long", $n),
                },)*
                0 => true,
                _ => unreachable!("lanes::advance passes at most MAX_KERNEL_LANES lanes"),
            }
        };
    }
    const _: () = assert!(MAX_KERNEL_LANES == 8);
    lanes!(1, 2, 3, 4, 5, 6, 7, 8)
}

/// The token, round count and each lane's round keys, if every lane is an AES-NI key with the
/// same round count.
fn aesni_keys<'k, const LANES: usize>(
    lanes: &[Lane<'k>; LANES],
) -> Option<(Aesni, usize, [&'k [__m128i; 15]; LANES])> {
    let BlockCipher::X86(first, tier) = lanes.first()?.cipher else {
        return None;
    };
    let rounds = first.rounds();
    let mut keys = [first.schedule(); LANES];
    for (key, lane) in keys.iter_mut().zip(lanes) {
        match lane.cipher {
            BlockCipher::X86(round_keys, _) if round_keys.rounds() == rounds => {
                *key = round_keys.schedule();
            }
            _ => return None,
        }
    }
    Some((tier.aesni(), rounds, keys))
}

fn run<const LANES: usize>(chain: Chain, lanes: &mut [Lane<'_>; LANES], count: usize) -> bool {
    let Some((token, rounds, keys)) = aesni_keys(lanes) else {
        return false;
    };
    let mut states = lanes.each_ref().map(|lane| lane.state);
    let mut blocks = lanes.each_mut().map(|lane| lane.window(count));
    let _: Aesni = token;
    let shared = keys.iter().all(|key| core::ptr::eq(*key, keys[0]));
    macro_rules! kernel {
        ($mode:expr) => {
            if shared {
                chain_kernel::<LANES, { $mode }, true>(
                    &keys,
                    rounds,
                    &mut states,
                    &mut blocks,
                    count,
                )
            } else {
                chain_kernel::<LANES, { $mode }, false>(
                    &keys,
                    rounds,
                    &mut states,
                    &mut blocks,
                    count,
                )
            }
        };
    }
    // SAFETY: the token proves the CPU has the features the kernel enables (every arm).
    unsafe {
        match chain {
            Chain::CbcEncrypt => kernel!(CBC_ENCRYPT),
            Chain::CfbEncrypt => kernel!(CFB_ENCRYPT),
            Chain::Ofb => kernel!(OFB),
            Chain::CbcMac => kernel!(CBC_MAC),
        }
    }
    for (lane, state) in lanes.iter_mut().zip(&states) {
        lane.state = *state;
    }
    states.zeroize();
    true
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
#[allow(
    clippy::needless_range_loop,
    reason = "the lane index addresses four parallel arrays"
)]
fn chain_kernel<const LANES: usize, const MODE: u8, const SHARED_KEY: bool>(
    key_refs: &[&[__m128i; 15]; LANES],
    rounds: usize,
    state_bytes: &mut [[u8; 16]; LANES],
    blocks: &mut [&mut [[u8; 16]]; LANES],
    count: usize,
) {
    // Distinct keys: copied into one stack array addressed from the stack pointer, because
    // eight key pointers on top of eight data pointers would exhaust the general registers.
    // One shared key: read in place through one pointer, nothing to copy or wipe.
    let mut keys = [[_mm_setzero_si128(); 15]; LANES];
    if !SHARED_KEY {
        for (copy, key) in keys.iter_mut().zip(key_refs) {
            copy[..=rounds].copy_from_slice(&key[..=rounds]);
        }
    }
    let key = |l: usize, round: usize| {
        if SHARED_KEY {
            key_refs[0][round]
        } else {
            keys[l][round]
        }
    };
    // Every lane's window is `count` blocks ([`Lane::window`]); saying so once lets the loop
    // drop the bounds checks.
    assert!(
        blocks.iter().all(|lane| lane.len() == count),
        "each lane's window holds count blocks"
    );
    let mut states = state_bytes.map(|state| load128(&state));
    for j in 0..count {
        let mut x = states;
        for l in 0..LANES {
            if MODE == CBC_ENCRYPT || MODE == CBC_MAC {
                x[l] = _mm_xor_si128(x[l], load128(&blocks[l][j]));
            }
            x[l] = _mm_xor_si128(x[l], key(l, 0));
        }
        for round in 1..rounds {
            for l in 0..LANES {
                x[l] = _mm_aesenc_si128(x[l], key(l, round));
            }
        }
        for l in 0..LANES {
            x[l] = _mm_aesenclast_si128(x[l], key(l, rounds));
            match MODE {
                CBC_ENCRYPT => {
                    states[l] = x[l];
                    blocks[l][j] = store128(x[l]);
                }
                CFB_ENCRYPT => {
                    states[l] = _mm_xor_si128(load128(&blocks[l][j]), x[l]);
                    blocks[l][j] = store128(states[l]);
                }
                OFB => {
                    states[l] = x[l];
                    blocks[l][j] = store128(_mm_xor_si128(load128(&blocks[l][j]), x[l]));
                }
                _ => states[l] = x[l],
            }
        }
    }
    *state_bytes = states.map(store128);
    if !SHARED_KEY {
        keys.zeroize();
    }
}
