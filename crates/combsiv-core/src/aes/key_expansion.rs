//! AES key expansion (FIPS 197 Section 5.2) on the vector tiers: one key on the narrow tier
//! (every key object's schedule, GCM-SIV's per-message keys), or four registers of keys at
//! once word-sliced (the batch groups' per-message keys).

use crate::cpu::{Block, Narrow, Tier, load_block};

/// Expanded encryption round keys as values: 11 used for AES-128, all 15 for AES-256. Fused
/// kernels keep a per-message schedule in registers as this; a key that is stored is a
/// `RoundKeys` (`kernels.rs`), which wipes it on drop.
pub type KeySchedule = [Block; 15];

/// FIPS 197 Section 5.2. SubWord(RotWord(w)) ^ Rcon comes from the cipher's last round
/// (AESENCLAST) on a state whose four columns all hold RotWord(w): ShiftRows then moves
/// nothing, SubBytes substitutes, and the "round key" adds Rcon. That has a latency of about
/// 5 cycles where AESKEYGENASSIST has about 12 on Intel cores (and Miri does not implement
/// AESKEYGENASSIST at all), and key expansion is on GCM-SIV's per-message critical path.
///
/// `high` is the second half of an AES-256 key, `None` for AES-128.
#[inline(always)]
pub(crate) fn expand_key(narrow: Narrow, low: Block, high: Option<Block>) -> KeySchedule {
    let mut keys = [[narrow.zero(); 15]];
    first_round_keys([low], high.map(|high| [high]), &mut keys);
    // Written out step by step: as a loop, LLVM kept it rolled inside the GCM-SIV kernels,
    // each round key stored to the stack and reloaded by the next step, which put a
    // store-to-load forward on every link of the chain. Unrolled, the 64-byte seal on
    // AES-NI went from 4.6 to 3.3 TSC cycles per byte (Zen 3).
    macro_rules! steps {
        ($aes256:literal: $($index:literal)*) => {
            $(round_key(narrow, $aes256, $index, &mut keys);)*
        };
    }
    if high.is_some() {
        steps!(true: 2 3 4 5 6 7 8 9 10 11 12 13 14);
    } else {
        steps!(false: 1 2 3 4 5 6 7 8 9 10);
    }
    let [keys] = keys;
    keys
}

/// Round keys 0 (and, for AES-256, 1) of each key: its halves. Returns the index of the
/// first round key [`round_key`] derives.
#[inline(always)]
pub(crate) fn first_round_keys<R: Copy, const N: usize>(
    low: [R; N],
    high: Option<[R; N]>,
    keys: &mut [[R; 15]; N],
) -> usize {
    for (keys, low) in keys.iter_mut().zip(low) {
        keys[0] = low;
    }
    let Some(high) = high else {
        return 1;
    };
    for (keys, high) in keys.iter_mut().zip(high) {
        keys[1] = high;
    }
    2
}

/// Rcon in every column, as blocks to load: a loop over N keys may stay rolled, and then
/// building the broadcast from an integer would cost a 128-bit multiply per step.
const RCON: [[u8; 16]; 10] = {
    let rcon = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let mut blocks = [[0; 16]; 10];
    let mut i = 0;
    while i < 40 {
        blocks[i / 4][4 * (i % 4)] = rcon[i / 4];
        i += 1;
    }
    blocks
};

/// Round key `index` of each of `N` registers of keys (`N x W::BLOCKS` keys, one per block),
/// from the round keys before it: one step of [`expand_key`]. Each step is a chain of about
/// five dependent instructions, so `N` independent chains in program order keep the AES unit
/// busy where one would leave it idle. (The batch groups expand their four registers of keys
/// word-sliced instead: `SlicedExpansion`.)
#[inline(always)]
pub(crate) fn round_key<W: Tier, const N: usize>(
    tier: W,
    aes256: bool,
    index: usize,
    keys: &mut [[W::Reg; 15]; N],
) {
    // w[i] = w[i-Nk] ^ t for the four words of a round key becomes: every word XORs all the
    // words before it in the previous round key (a prefix XOR), then the broadcast t.
    let prefix_xor = |k: W::Reg| {
        let k = tier.xor(k, tier.shift_bytes_up::<4>(k));
        tier.xor(k, tier.shift_bytes_up::<8>(k))
    };
    // Byte indices 13, 14, 15, 12 in every column: RotWord(w3), broadcast.
    let rot_word_3 = tier.broadcast(load_block(&[
        13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
    ]));
    let sub_rot = |w: W::Reg, rcon: &[u8; 16]| {
        let rcon = tier.broadcast(load_block(rcon));
        tier.aes_last_round(tier.shuffle_bytes(w, rot_word_3), rcon)
    };
    // AES-256's extra step: SubWord(w3) without rotation or Rcon.
    let sub = |w: W::Reg| tier.aes_last_round(tier.broadcast_word_3(w), tier.zero());
    // AES-128 (Nk = 4) derives each round key from the one before; AES-256 (Nk = 8) from
    // the two before, with Rcon on the even ones and a plain SubWord on the odd ones.
    let (previous, rcon) = if aes256 {
        (
            index - 2,
            index.is_multiple_of(2).then(|| &RCON[index / 2 - 1]),
        )
    } else {
        (index - 1, Some(&RCON[index - 1]))
    };
    for keys in keys.iter_mut() {
        let t = match rcon {
            Some(rcon) => sub_rot(keys[index - 1], rcon),
            None => sub(keys[index - 1]),
        };
        keys[index] = tier.xor(prefix_xor(keys[previous]), t);
    }
}

/// Four registers of keys expanded together, word-sliced: `words[j]` holds word j of the
/// current round key of every key, the key of block i of register c in word c of block i.
/// A step of FIPS 197 Section 5.2 then takes about as many instructions for all four keys
/// as [`round_key`] takes for one: SubWord(RotWord(w3)) of the four by one AESENCLAST (a
/// byte shuffle first moves each key's w3 so that ShiftRows takes it back to its own
/// column), and the prefix XOR w0 ^= t, w1 ^= w0, w2 ^= w1, w3 ^= w2 across registers.
/// Each round key costs eight more to transpose back into the keys' registers, two per key
/// (on AArch64 none: one ST4 store transposes as it stores the four keys' round key).
/// Against one key per register, a 64-byte message's share of a batch group's expansion went
/// from 117 to 79 AArch64 instructions (qemu count).
///
/// Values, not memory: the words are the latest round keys, which the caller stores (and
/// wipes); wiping this copy would force it from registers into memory on every step.
#[cfg(feature = "alloc")]
pub(crate) struct SlicedExpansion<W: Tier> {
    /// The latest round key in words 0-3; for AES-256, the latest of even index there and
    /// of odd index in words 4-7.
    words: [W::Reg; 8],
}

/// Shuffle indices that put w3's bytes, rotated by one (`ROTATE`) or not, where ShiftRows
/// takes each byte back to the column it came from: byte r of column c is read from column
/// c - r, which ShiftRows moves r columns down.
#[cfg(feature = "alloc")]
const fn sliced_word_3(rotate: bool) -> [u8; 16] {
    let mut indices = [0; 16];
    let mut i = 0;
    while i < 16 {
        let (row, column) = (i % 4, i / 4);
        let byte = if rotate { (row + 1) % 4 } else { row };
        indices[i] = (4 * ((column + 4 - row) % 4) + byte) as u8;
        i += 1;
    }
    indices
}

#[cfg(feature = "alloc")]
impl<W: Tier> SlicedExpansion<W> {
    /// From round keys 0 and, for AES-256, 1 of the four registers of keys.
    #[inline(always)]
    pub(crate) fn new(tier: W, low: [W::Reg; 4], high: Option<[W::Reg; 4]>) -> Self {
        let [w0, w1, w2, w3] = tier.transpose_words(low);
        let [w4, w5, w6, w7] = match high {
            Some(high) => tier.transpose_words(high),
            None => [tier.zero(); 4],
        };
        SlicedExpansion {
            words: [w0, w1, w2, w3, w4, w5, w6, w7],
        }
    }

    /// Round key `index` of the four registers of keys, register c's into `out[c]`; the round
    /// keys before it must have come from here or [`new`](Self::new), in order.
    #[inline(always)]
    pub(crate) fn next(&mut self, tier: W, aes256: bool, index: usize, out: &mut [W::Reg; 4]) {
        let (even, odd) = self.words.split_at_mut(4);
        // As in `round_key`: AES-128 from the round key before; AES-256 from the two before,
        // with Rcon on the even ones. (No closures: theirs would be compiled without the
        // kernel's target features.)
        if !aes256 {
            let t = Self::substitute(tier, even[3], Some(&RCON[index - 1]));
            Self::step(tier, even, t, out);
        } else if index.is_multiple_of(2) {
            let t = Self::substitute(tier, odd[3], Some(&RCON[index / 2 - 1]));
            Self::step(tier, even, t, out);
        } else {
            let t = Self::substitute(tier, even[3], None);
            Self::step(tier, odd, t, out);
        }
    }

    /// SubWord(RotWord(w3)) ^ Rcon of each key, or with no `rcon` SubWord(w3).
    #[inline(always)]
    fn substitute(tier: W, w3: W::Reg, rcon: Option<&[u8; 16]>) -> W::Reg {
        let indices = tier.broadcast(load_block(&sliced_word_3(rcon.is_some())));
        let rcon = match rcon {
            Some(rcon) => tier.broadcast(load_block(rcon)),
            None => tier.zero(),
        };
        tier.aes_last_round(tier.shuffle_bytes(w3, indices), rcon)
    }

    /// The next round key's words from the four before and `t`, transposed back into the
    /// keys' registers at `out`.
    #[inline(always)]
    fn step(tier: W, words: &mut [W::Reg], t: W::Reg, out: &mut [W::Reg; 4]) {
        words[0] = tier.xor(words[0], t);
        words[1] = tier.xor(words[1], words[0]);
        words[2] = tier.xor(words[2], words[1]);
        words[3] = tier.xor(words[3], words[2]);
        tier.store_transposed_words([words[0], words[1], words[2], words[3]], out);
    }
}
