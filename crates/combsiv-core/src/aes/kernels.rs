//! AES on the vector tiers, written once over [`Tier`] and instantiated per tier by
//! [`per_tier!`] (a `#[target_feature]` function per tier, called only with its token in
//! hand): the stored key ([`RoundKeys`]), the cipher on registers of blocks, and single
//! blocks (ECB and the inverse cipher). Key expansion is in `key_expansion.rs`, counter mode
//! in `ctr.rs`.
//!
//! Design: an AES round instruction has a latency of 3-4 cycles and issues once or twice per
//! cycle, so one block at a time leaves the unit mostly idle: [`encrypt`] runs `N`
//! independent registers round by round (counter mode keeps [`STRIDE`] of them in flight: 8
//! blocks on AES-NI, 16 with VAES, 32 with AVX-512). Round keys are expanded once as 128-bit
//! blocks; a wide kernel broadcasts them to every block of its registers when it starts.

use zeroize::Zeroize;

use super::key_expansion::{KeySchedule, expand_key};
use super::{AesKeySize, KeyBytes};
use crate::cpu::{STRIDE, Tier, TierToken, load_block, per_tier, store_block};

/// An expanded AES key as it is stored: its [`KeySchedule`] and round count, wiped on drop.
///
/// Kept as registers' type so that wiping them is 15 vector stores.
#[derive(Clone)]
pub struct RoundKeys {
    keys: KeySchedule,
    size: AesKeySize,
}

/// Nothing of the schedule: it is key material.
impl core::fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RoundKeys").finish_non_exhaustive()
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.keys.zeroize();
    }
}

impl RoundKeys {
    pub fn new(token: TierToken, key: KeyBytes<'_>) -> Self {
        expand(token, key)
    }

    pub fn size(&self) -> AesKeySize {
        self.size
    }

    /// 10 or 14.
    pub fn rounds(&self) -> usize {
        self.size.rounds()
    }

    /// The 128-bit round keys, for kernels that schedule AES rounds themselves.
    pub fn schedule(&self) -> &KeySchedule {
        &self.keys
    }

    pub fn encrypt_blocks(&self, token: TierToken, blocks: &mut [[u8; 16]]) {
        encrypt_ecb(token, self, blocks);
    }

    pub fn decrypt_blocks(&self, token: TierToken, blocks: &mut [[u8; 16]]) {
        decrypt_ecb(token, self, blocks);
    }
}

per_tier! {
    fn expand(key: KeyBytes<'_>) -> RoundKeys = expand_kernel;
}

fn expand_kernel<W: Tier>(tier: W, key: KeyBytes<'_>) -> RoundKeys {
    let (low, high) = match key {
        KeyBytes::Aes128(key) => (load_block(key), None),
        KeyBytes::Aes256(key) => (
            load_block(&core::array::from_fn(|i| key[i])),
            Some(load_block(&core::array::from_fn(|i| key[16 + i]))),
        ),
    };
    RoundKeys {
        keys: expand_key(tier.narrow(), low, high),
        size: key.size(),
    }
}

/// A schedule in every block of a register of width `W`. (A loop, not `array::map`: the
/// closure of a library function that is not inlined would compile without the kernel's
/// target features.)
#[inline(always)]
pub fn broadcast<W: Tier>(tier: W, schedule: &KeySchedule) -> [W::Reg; 15] {
    let mut keys = [tier.zero(); 15];
    for (wide, &key) in keys.iter_mut().zip(schedule) {
        *wide = tier.broadcast(key);
    }
    keys
}

/// Runs `$body` with `$i` bound to each middle round i = 1..rounds of AES-128 (`rounds` 10)
/// or AES-256 (14), on tier `$tier`: as a loop, or, where the tier asks for it
/// ([`Tier::UNROLL_ROUNDS`]), as straight-line code, the body written out once per round and
/// only the four rounds AES-256 adds behind a test of the key size (folded away when `rounds`
/// is a constant). A macro, not a function taking a closure: LLVM declined to inline the
/// closure of a stitched loop into its thirteen call sites.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_middle_round {
    ($tier:ty, $rounds:expr, |$i:ident| $body:expr) => {{
        // At most 14, which lets LLVM drop the bounds checks of `keys[$i]`.
        let rounds: usize = ::core::cmp::Ord::min($rounds, 14);
        if <$tier as $crate::cpu::Tier>::UNROLL_ROUNDS {
            $crate::aes::kernels::for_each_middle_round!(@each $i $body; 1 2 3 4 5 6 7 8 9);
            if rounds > 10 {
                $crate::aes::kernels::for_each_middle_round!(@each $i $body; 10 11 12 13);
            }
        } else {
            for $i in 1..rounds {
                $body
            }
        }
    }};
    (@each $i:ident $body:expr; $($round:literal)*) => {
        $({
            let $i: usize = $round;
            $body
        })*
    };
}
pub use crate::for_each_middle_round;

/// Encrypts N independent registers, interleaved round by round so that they pipeline.
/// `rounds` is 10 or 14.
#[inline(always)]
pub(crate) fn encrypt<W: Tier, const N: usize>(
    tier: W,
    keys: &[W::Reg; 15],
    rounds: usize,
    blocks: &mut [W::Reg; N],
) {
    for block in blocks.iter_mut() {
        *block = tier.xor(*block, keys[0]);
    }
    for_each_middle_round!(W, rounds, |i| {
        for block in blocks.iter_mut() {
            *block = tier.aes_round(*block, keys[i]);
        }
        round_boundary(tier, blocks);
    });
    for block in blocks.iter_mut() {
        *block = tier.aes_last_round(*block, keys[rounds]);
    }
}

/// Keeps a round's AESENCs on all registers together: each register passes through
/// [`Tier::pin`] after the round, and since the pins stay in program order, the emitted code
/// keeps every register within a round of the others. Without it, LLVM's scheduler, short of
/// registers for eight states and the round keys, runs each register through all rounds in
/// turn, and the dependent AESENCs fill the CPU's scheduler: the VAES counter-mode stride of
/// AES-128 took 48 cycles instead of 40 (the AES pipes' bound) on Zen 3 in `llvm-mca`, and
/// AES-NI's 1.15x as long on the hardware. (A compiler fence, used here before, orders only
/// memory: it held nothing in registers together, and it made a state array that lived on
/// the stack store and reload every round.) It emits no instruction.
#[inline(always)]
pub(crate) fn round_boundary<W: Tier>(tier: W, blocks: &mut [W::Reg]) {
    for block in blocks {
        tier.pin(block);
    }
}

per_tier! {
    fn encrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) = encrypt_ecb_kernel;
}

/// ECB over independent blocks on the narrow tier (key derivation, the chained modes' steps).
fn encrypt_ecb_kernel<W: Tier>(tier: W, round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let narrow = tier.narrow();
    let (keys, rounds) = (&round_keys.keys, round_keys.rounds());
    // One block (the chained modes' every step): straight through, nothing padded.
    if let [block] = blocks {
        let mut state = [load_block(block)];
        encrypt(narrow, keys, rounds, &mut state);
        *block = store_block(state[0]);
        return;
    }
    // Up to eight blocks at a time; a short batch is padded to four or eight, which costs no
    // latency and little throughput. The state left in registers is the output just stored,
    // so there is nothing to wipe.
    for chunk in blocks.chunks_mut(STRIDE) {
        let mut state = [narrow.zero(); STRIDE];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = load_block(block);
        }
        if chunk.len() <= 4 {
            let mut half = [state[0], state[1], state[2], state[3]];
            encrypt(narrow, keys, rounds, &mut half);
            state[..4].copy_from_slice(&half);
        } else {
            encrypt(narrow, keys, rounds, &mut state);
        }
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store_block(value);
        }
    }
}

per_tier! {
    /// The inverse cipher (FIPS 197 Section 5.3.5, "equivalent inverse cipher"): AESDEC wants the
    /// round keys in reverse order with InvMixColumns (AESIMC) applied to all but the first and
    /// last. They are derived here per call and wiped after, so no decryption schedule is kept.
    fn decrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) = decrypt_ecb_kernel;
}

fn decrypt_ecb_kernel<W: Tier>(tier: W, round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let narrow = tier.narrow();
    let rounds = round_keys.rounds();
    let mut keys = [narrow.zero(); 15];
    keys[0] = round_keys.keys[rounds];
    for (inverse, forward) in keys[1..rounds]
        .iter_mut()
        .zip(round_keys.keys[1..rounds].iter().rev())
    {
        *inverse = narrow.aes_inverse_mix_columns(*forward);
    }
    keys[rounds] = round_keys.keys[0];
    for chunk in blocks.chunks_mut(STRIDE) {
        let mut state = [narrow.zero(); STRIDE];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = narrow.xor(load_block(block), keys[0]);
        }
        for_each_middle_round!(W, rounds, |i| {
            for value in &mut state {
                *value = narrow.aes_inverse_round(*value, keys[i]);
            }
        });
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store_block(narrow.aes_inverse_last_round(value, keys[rounds]));
        }
        state.zeroize();
    }
    keys.zeroize();
}
