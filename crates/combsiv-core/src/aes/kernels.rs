//! AES on the vector tiers: key expansion, single blocks, and counter mode at any width,
//! written once over [`Tier`] and instantiated per tier by [`per_tier!`] (a
//! `#[target_feature]` function per tier, called only with its token in hand). Key
//! expansion and single blocks run on the tier's [`Narrow`] registers.
//!
//! Design: AESENC has a latency of 3-4 cycles and a throughput of one or two instructions per
//! cycle, so one block at a time leaves the unit mostly idle. Counter mode keeps [`STRIDE`]
//! independent registers in flight (8 blocks on AES-NI, 16 with VAES, 32 with AVX-512; on
//! Zen 3 one `vaesenc ymm` issues every 0.5 cycles with latency 4, so 8 registers keep both
//! AES pipes busy). Round keys are expanded once as 128-bit blocks; a wide kernel broadcasts
//! them to every block of its registers when it starts.

use core::marker::PhantomData;

use aead::inout::InOutBuf;
use zeroize::Zeroize;

use super::{AesKeySize, KeyBytes};
use crate::cpu::{
    Block, Narrow, STRIDE, Tier, TierToken, block_from, load_block, per_tier, store_block,
};
use crate::layout::Counter32;
use crate::layout::{GcmLayout, Layout, SivLayout};

/// Expanded encryption round keys as values: 11 used for AES-128, all 15 for AES-256. Fused
/// kernels keep a per-message schedule in registers as this; a key that is stored is a
/// [`RoundKeys`].
pub type KeySchedule = [Block; 15];

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
    pub fn new(tier: TierToken, key: KeyBytes<'_>) -> Self {
        expand(tier, key)
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

    pub fn encrypt_blocks(&self, tier: TierToken, blocks: &mut [[u8; 16]]) {
        encrypt_ecb(tier, self, blocks);
    }

    pub fn decrypt_blocks(&self, tier: TierToken, blocks: &mut [[u8; 16]]) {
        decrypt_ecb(tier, self, blocks);
    }

    pub fn apply_keystream(
        &self,
        tier: TierToken,
        counter: &[u8; 16],
        order: Counter32,
        data: InOutBuf<'_, '_, u8>,
    ) {
        match order {
            Counter32::LittleEndianFirst => ctr32_xor::<SivLayout>(tier, self, counter, data),
            Counter32::BigEndianLast => ctr32_xor::<GcmLayout>(tier, self, counter, data),
        }
    }
}

/// FIPS 197 Section 5.2. SubWord(RotWord(w)) ^ Rcon comes from AESENCLAST on a state whose
/// four columns all hold RotWord(w): ShiftRows then moves nothing, SubBytes substitutes, and
/// the "round key" adds Rcon. That has a latency of about 5 cycles where AESKEYGENASSIST has
/// about 12 on Intel cores (and Miri does not implement AESKEYGENASSIST at all), and key
/// expansion is on GCM-SIV's per-message critical path.
///
/// `high` is the second half of an AES-256 key, `None` for AES-128.
#[inline(always)]
pub(crate) fn expand_key(narrow: Narrow, low: Block, high: Option<Block>) -> KeySchedule {
    let mut keys = [[narrow.zero(); 15]];
    first_round_keys([low], high.map(|high| [high]), &mut keys);
    // Written out step by step: as a loop, LLVM kept it rolled inside the GCM-SIV kernels,
    // each round key stored to the stack and reloaded by the next step, which put a
    // store-to-load forward on every link of the chain. Unrolled, the single-message seal
    // of 64 bytes on AES-NI went from 4.6-4.7 to 3.2-3.4 TSC cycles per byte, and 1500 bytes
    // with VAES from 0.61 to 0.57 (Zen 3).
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
    width: W,
    aes256: bool,
    index: usize,
    keys: &mut [[W::Reg; 15]; N],
) {
    // w[i] = w[i-Nk] ^ t for the four words of a round key becomes: every word XORs all the
    // words before it in the previous round key (a prefix XOR), then the broadcast t.
    let prefix_xor = |k: W::Reg| {
        let k = width.xor(k, width.shift_bytes_up::<4>(k));
        width.xor(k, width.shift_bytes_up::<8>(k))
    };
    // Byte indices 13, 14, 15, 12 in every column: RotWord(w3), broadcast.
    let rot_word_3 = width.broadcast(load_block(&[
        13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
    ]));
    let sub_rot = |w: W::Reg, rcon: &[u8; 16]| {
        let rcon = width.broadcast(load_block(rcon));
        width.aesenclast(width.shuffle_bytes(w, rot_word_3), rcon)
    };
    // AES-256's extra step: SubWord(w3) without rotation or Rcon.
    let sub = |w: W::Reg| width.aesenclast(width.broadcast_word_3(w), width.zero());
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
        keys[index] = width.xor(prefix_xor(keys[previous]), t);
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
/// from 117 to 79 AArch64 instructions (qemu count) and `seal_batch` of 64 x 64 bytes from
/// 27-28 to 25 ns a message with VAES, 40-42 to 38 on AES-NI (Zen 5).
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
    pub(crate) fn new(width: W, low: [W::Reg; 4], high: Option<[W::Reg; 4]>) -> Self {
        let [w0, w1, w2, w3] = width.transpose_words(low);
        let [w4, w5, w6, w7] = match high {
            Some(high) => width.transpose_words(high),
            None => [width.zero(); 4],
        };
        SlicedExpansion {
            words: [w0, w1, w2, w3, w4, w5, w6, w7],
        }
    }

    /// Round key `index` of the four registers of keys, register c's into `out[c]`; the round
    /// keys before it must have come from here or [`new`](Self::new), in order.
    #[inline(always)]
    pub(crate) fn next(&mut self, width: W, aes256: bool, index: usize, out: &mut [W::Reg; 4]) {
        let (even, odd) = self.words.split_at_mut(4);
        // As in `round_key`: AES-128 from the round key before; AES-256 from the two before,
        // with Rcon on the even ones. (No closures: theirs would be compiled without the
        // kernel's target features.)
        if !aes256 {
            let t = Self::substitute(width, even[3], Some(&RCON[index - 1]));
            Self::step(width, even, t, out);
        } else if index.is_multiple_of(2) {
            let t = Self::substitute(width, odd[3], Some(&RCON[index / 2 - 1]));
            Self::step(width, even, t, out);
        } else {
            let t = Self::substitute(width, even[3], None);
            Self::step(width, odd, t, out);
        }
    }

    /// SubWord(RotWord(w3)) ^ Rcon of each key, or with no `rcon` SubWord(w3).
    #[inline(always)]
    fn substitute(width: W, w3: W::Reg, rcon: Option<&[u8; 16]>) -> W::Reg {
        let indices = width.broadcast(load_block(&sliced_word_3(rcon.is_some())));
        let rcon = match rcon {
            Some(rcon) => width.broadcast(load_block(rcon)),
            None => width.zero(),
        };
        width.aesenclast(width.shuffle_bytes(w3, indices), rcon)
    }

    /// The next round key's words from the four before and `t`, transposed back into the
    /// keys' registers at `out`.
    #[inline(always)]
    fn step(width: W, words: &mut [W::Reg], t: W::Reg, out: &mut [W::Reg; 4]) {
        words[0] = width.xor(words[0], t);
        words[1] = width.xor(words[1], words[0]);
        words[2] = width.xor(words[2], words[1]);
        words[3] = width.xor(words[3], words[2]);
        width.store_transposed_words([words[0], words[1], words[2], words[3]], out);
    }
}

per_tier! {
    fn expand(key: KeyBytes<'_>) -> RoundKeys = expand_kernel;
}

fn expand_kernel<W: Tier>(width: W, key: KeyBytes<'_>) -> RoundKeys {
    let (low, high) = match key {
        KeyBytes::Aes128(key) => (load_block(key), None),
        KeyBytes::Aes256(key) => (
            load_block(&core::array::from_fn(|i| key[i])),
            Some(load_block(&core::array::from_fn(|i| key[16 + i]))),
        ),
    };
    RoundKeys {
        keys: expand_key(width.narrow(), low, high),
        size: key.size(),
    }
}

/// A schedule in every block of a register of width `W`. (A loop, not `array::map`: the
/// closure of a library function that is not inlined would compile without the kernel's
/// target features.)
#[inline(always)]
pub fn broadcast<W: Tier>(width: W, schedule: &KeySchedule) -> [W::Reg; 15] {
    let mut keys = [width.zero(); 15];
    for (wide, &key) in keys.iter_mut().zip(schedule) {
        *wide = width.broadcast(key);
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
    width: W,
    keys: &[W::Reg; 15],
    rounds: usize,
    blocks: &mut [W::Reg; N],
) {
    for block in blocks.iter_mut() {
        *block = width.xor(*block, keys[0]);
    }
    for_each_middle_round!(W, rounds, |i| {
        for block in blocks.iter_mut() {
            *block = width.aesenc(*block, keys[i]);
        }
        round_boundary(width, blocks);
    });
    for block in blocks.iter_mut() {
        *block = width.aesenclast(*block, keys[rounds]);
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
pub(crate) fn round_boundary<W: Tier>(width: W, blocks: &mut [W::Reg]) {
    for block in blocks {
        width.pin(block);
    }
}

per_tier! {
    fn encrypt_ecb(round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) = encrypt_ecb_kernel;
}

/// ECB over independent blocks on the narrow tier (key derivation, the chained modes' steps).
fn encrypt_ecb_kernel<W: Tier>(width: W, round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let narrow = width.narrow();
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

fn decrypt_ecb_kernel<W: Tier>(width: W, round_keys: &RoundKeys, blocks: &mut [[u8; 16]]) {
    let narrow = width.narrow();
    let rounds = round_keys.rounds();
    let mut keys = [narrow.zero(); 15];
    keys[0] = round_keys.keys[rounds];
    for (inverse, forward) in keys[1..rounds]
        .iter_mut()
        .zip(round_keys.keys[1..rounds].iter().rev())
    {
        *inverse = narrow.inv_mix_columns(*forward);
    }
    keys[rounds] = round_keys.keys[0];
    for chunk in blocks.chunks_mut(STRIDE) {
        let mut state = [narrow.zero(); STRIDE];
        for (value, block) in state.iter_mut().zip(chunk.iter()) {
            *value = narrow.xor(load_block(block), keys[0]);
        }
        for_each_middle_round!(W, rounds, |i| {
            for value in &mut state {
                *value = narrow.aesdec(*value, keys[i]);
            }
        });
        for (block, value) in chunk.iter_mut().zip(state) {
            *block = store_block(narrow.aesdeclast(value, keys[rounds]));
        }
        state.zeroize();
    }
    keys.zeroize();
}

per_tier! {
    /// Counter mode with a 32-bit wrapping counter in the layout `L` (AES-GCM's or AES-GCM-SIV's).
    fn ctr32_xor<L: Layout>(
        round_keys: &RoundKeys,
        counter: &[u8; 16],
        data: InOutBuf<'_, '_, u8>,
    ) = ctr32_xor_kernel;
}

#[inline(always)]
fn ctr32_xor_kernel<W: Tier, L: Layout>(
    width: W,
    round_keys: &RoundKeys,
    counter: &[u8; 16],
    data: InOutBuf<'_, '_, u8>,
) {
    let mut keys = broadcast(width, &round_keys.keys);
    let mut counter = Counter::<W, L>::new(width, load_block(counter));
    apply_keystream_sized(width, &keys, round_keys.size(), &mut counter, data);
    keys.zeroize();
}

/// [`apply_keystream`] for a key size known at run time.
#[inline(always)]
pub(crate) fn apply_keystream_sized<W: Tier, L: Layout>(
    width: W,
    keys: &[W::Reg; 15],
    size: AesKeySize,
    counter: &mut Counter<W, L>,
    data: InOutBuf<'_, '_, u8>,
) {
    match size {
        AesKeySize::Aes128 => apply_keystream::<W, L, 10>(width, keys, counter, data),
        AesKeySize::Aes256 => apply_keystream::<W, L, 14>(width, keys, counter, data),
    }
}

/// XORs the input side of `data` with the keystream from `counter` into its output side (the
/// same bytes, or a separate buffer: one pass either way), [`STRIDE`] registers per
/// iteration; the keystream never leaves registers except for the last partial stride.
#[inline(always)]
pub(crate) fn apply_keystream<W: Tier, L: Layout, const ROUNDS: usize>(
    width: W,
    keys: &[W::Reg; 15],
    counter: &mut Counter<W, L>,
    mut data: InOutBuf<'_, '_, u8>,
) {
    let strides = data.len() / stride_bytes::<W>();
    for i in 0..strides {
        let mut keystream = counter.next::<STRIDE>(width);
        encrypt(width, keys, ROUNDS, &mut keystream);
        xor_stride(width, &mut data, i, &keystream);
    }
    let start = strides * stride_bytes::<W>();
    xor_tail::<W, L, ROUNDS>(width, keys, counter, data, Tail::buffer(start));
}

/// Output stride `i` = input stride `i` XOR `keystream`. A whole stride has a constant
/// number of registers, so the loops unroll and the keystream stays in registers; through
/// [`xor_whole_registers`], whose count is known only at run time, it would be stored to the
/// stack and XORed there (about ten more instructions per block). Loads before stores, as
/// there.
#[inline(always)]
pub(crate) fn xor_stride<W: Tier>(
    width: W,
    data: &mut InOutBuf<'_, '_, u8>,
    i: usize,
    keystream: &[W::Reg; STRIDE],
) {
    let input = load_registers(width, stride::<W>(data.get_in(), i));
    store_xor_stride(width, data, i, &input, keystream);
}

/// N registers (a stride, say), loaded.
#[inline(always)]
pub(crate) fn load_registers<W: Tier, const N: usize>(
    width: W,
    bytes: &[W::Bytes; N],
) -> [W::Reg; N] {
    let mut registers = [width.zero(); N];
    for (register, bytes) in registers.iter_mut().zip(bytes) {
        *register = width.load(bytes);
    }
    registers
}

/// Output stride `i` = `input` XOR `keystream`, for an input already in registers.
#[inline(always)]
pub(crate) fn store_xor_stride<W: Tier>(
    width: W,
    data: &mut InOutBuf<'_, '_, u8>,
    i: usize,
    input: &[W::Reg; STRIDE],
    keystream: &[W::Reg; STRIDE],
) {
    let out = stride_mut::<W>(data.get_out(), i);
    for ((bytes, &input), &keystream) in out.iter_mut().zip(input).zip(keystream) {
        *bytes = width.store(width.xor(input, keystream));
    }
}

/// Bytes per stride of width `W`.
#[inline(always)]
pub(crate) const fn stride_bytes<W: Tier>() -> usize {
    16 * W::BLOCKS * STRIDE
}

/// Stride `i` of `bytes` as registers' bytes.
#[inline(always)]
pub(crate) fn stride<W: Tier>(bytes: &[u8], i: usize) -> &[W::Bytes; STRIDE] {
    let range = i * stride_bytes::<W>()..(i + 1) * stride_bytes::<W>();
    let (registers, _) = W::registers(&bytes[range]);
    let Some(stride) = registers.first_chunk::<STRIDE>() else {
        unreachable!("a stride's bytes are STRIDE whole registers");
    };
    stride
}

/// [`stride`], to write.
#[inline(always)]
fn stride_mut<W: Tier>(bytes: &mut [u8], i: usize) -> &mut [W::Bytes; STRIDE] {
    let range = i * stride_bytes::<W>()..(i + 1) * stride_bytes::<W>();
    let (registers, _) = W::registers_mut(&mut bytes[range]);
    let Some(stride) = registers.first_chunk_mut::<STRIDE>() else {
        unreachable!("a stride's bytes are STRIDE whole registers");
    };
    stride
}

/// Output registers from `start` = input registers from `start` XOR `keystream`, for as many
/// whole registers as both have. All loads come before all stores, so that in place the
/// stores cannot overtake a load of the same bytes, and out of place the input is read once.
/// Returns how many registers were written.
#[inline(always)]
pub(crate) fn xor_whole_registers<W: Tier, const N: usize>(
    width: W,
    data: &mut InOutBuf<'_, '_, u8>,
    Tail { start, source }: Tail<'_>,
    keystream: &[W::Reg; N],
) -> usize {
    let end = data.len().min(start + 16 * W::BLOCKS * N);
    let mut values = *keystream;
    let (input, _) = W::registers(&data.get_in()[start..end]);
    let whole = input.len();
    match source {
        TailInput::Buffer => {
            for (value, bytes) in values.iter_mut().zip(input) {
                *value = width.xor(width.load(bytes), *value);
            }
        }
        TailInput::Fetched(blocks) => {
            for (r, value) in values.iter_mut().enumerate().take(whole) {
                *value = width.xor(width.gather(|i| blocks[r * W::BLOCKS + i]), *value);
            }
        }
    }
    let (output, _) = W::registers_mut(&mut data.get_out()[start..end]);
    for (bytes, value) in output.iter_mut().zip(values) {
        *bytes = width.store(value);
    }
    whole
}

/// Where the last partial stride starts in the buffer (a multiple of 16), and where
/// [`xor_tail`] reads it from.
#[derive(Clone, Copy)]
pub(crate) struct Tail<'a> {
    pub(crate) start: usize,
    pub(crate) source: TailInput<'a>,
}

impl Tail<'_> {
    /// The tail from `start`, read from the input side of the buffer.
    pub(crate) fn buffer(start: usize) -> Self {
        Tail {
            start,
            source: TailInput::Buffer,
        }
    }
}

/// Where [`xor_tail`] reads its input: the input side of its buffer, or the blocks the
/// caller already fetched from it (from `start` on, the partial last block zero-padded, as
/// [`Tier::load_last_partial`] gives it) and also hashed, so that both read one fetch.
#[derive(Clone, Copy)]
pub(crate) enum TailInput<'a> {
    Buffer,
    Fetched(&'a [Block]),
}

impl TailInput<'_> {
    /// Block `i` from `start` (whole, or the partial last one) of `input`.
    #[inline(always)]
    fn block<W: Tier>(self, width: W, input: &[u8], start: usize, i: usize) -> Block {
        match self {
            TailInput::Buffer => match input[start + 16 * i..].first_chunk::<16>() {
                Some(block) => load_block(block),
                None => width.load_last_partial(input),
            },
            TailInput::Fetched(blocks) => blocks[i],
        }
    }
}

/// The last partial stride, from `start` (a multiple of 16) to the end of `data`: as few
/// keystream registers as cover it (1, 2, 4 or 8, so that a short message does not wait on a
/// full stride), XORed a block at a time.
#[inline(always)]
pub(crate) fn xor_tail<W: Tier, L: Layout, const ROUNDS: usize>(
    width: W,
    keys: &[W::Reg; 15],
    counter: &mut Counter<W, L>,
    data: InOutBuf<'_, '_, u8>,
    tail: Tail<'_>,
) {
    let registers = (data.len() - tail.start).div_ceil(16 * W::BLOCKS);
    let args = TailArgs {
        keys,
        counter,
        data,
        tail,
    };
    match registers {
        0 => {}
        1 => xor_registers::<W, L, ROUNDS, 1>(width, args),
        2 => xor_registers::<W, L, ROUNDS, 2>(width, args),
        3 | 4 => xor_registers::<W, L, ROUNDS, 4>(width, args),
        _ => xor_registers::<W, L, ROUNDS, STRIDE>(width, args),
    }
}

/// What [`xor_tail`] hands [`xor_registers`].
struct TailArgs<'k, 'i, 'o, W: Tier, L: Layout> {
    keys: &'k [W::Reg; 15],
    counter: &'k mut Counter<W, L>,
    data: InOutBuf<'i, 'o, u8>,
    tail: Tail<'k>,
}

/// XORs `data` from `start` (at most N registers long) with N registers of keystream: whole
/// registers directly, then the at most `W::BLOCKS` blocks after them from the next keystream
/// register. The partial last block is read before anything is written, so that its
/// overlapping load does not wait for the stores.
#[inline(always)]
fn xor_registers<W: Tier, L: Layout, const ROUNDS: usize, const N: usize>(
    width: W,
    TailArgs {
        keys,
        counter,
        mut data,
        tail,
    }: TailArgs<'_, '_, '_, W, L>,
) {
    let Tail { start, source } = tail;
    let narrow = width.narrow();
    let has_partial = !data.len().is_multiple_of(16);
    let partial = if has_partial {
        source.block(width, data.get_in(), start, (data.len() - start) / 16)
    } else {
        narrow.zero()
    };
    // Encrypted in an array of its own, then moved into the one indexed at run time below. A
    // dynamically indexed array lives on the stack: had the rounds run on it, every round
    // would have loaded and stored each state around its [`round_boundary`], a
    // store-to-load forward on each link of the chain. Moved after the rounds, the state
    // stays in registers and is stored once. Measured on Zen 3 (VAES, alternating runs): the
    // batched GCM-SIV seal of 64 x 1500 bytes, whose last 14 blocks take this path, 1.10x
    // faster; the Internet mix 1.08x.
    let mut state = counter.next::<N>(width);
    encrypt(width, keys, ROUNDS, &mut state);
    // N whole registers from the buffer, 8 blocks at most (a 64-byte GCM-SIV message's four
    // blocks): a count known at compile time keeps the keystream in registers, which the
    // run-time count below stores to the stack and loads back (AArch64, qemu count: a
    // 64-byte GCM-SIV seal took 743 instructions, now 714; Zen 5, AES-GCM seal of 64 bytes
    // 0.86-0.89x the time on every tier). Not for 16 blocks: four ZMM registers this way made
    // AVX-512's AES-GCM seal of 256 bytes 1.11x as slow.
    if let TailInput::Buffer = source
        && N * W::BLOCKS <= 8
        && data.len() - start == 16 * W::BLOCKS * N
        && let Some(input) = W::registers(&data.get_in()[start..]).0.first_chunk::<N>()
    {
        let input = load_registers(width, input);
        if let Some(output) = W::registers_mut(&mut data.get_out()[start..])
            .0
            .first_chunk_mut::<N>()
        {
            for ((bytes, input), keystream) in output.iter_mut().zip(input).zip(state) {
                *bytes = width.store(width.xor(input, keystream));
            }
        }
        return;
    }
    let keystream = state;
    let whole = xor_whole_registers(width, &mut data, tail, &keystream);
    // The blocks after the whole registers: at most one whole block (at width 2), then the
    // partial block.
    let next = keystream.get(whole).copied().unwrap_or(width.zero());
    let lone_start = start + whole * 16 * W::BLOCKS;
    let lone_end = data.len() - data.len() % 16;
    for (i, at) in (lone_start..lone_end).step_by(16).enumerate() {
        let block = source.block(width, data.get_in(), start, (at - start) / 16);
        let value = narrow.xor(block, width.block(next, i));
        let Some(block) = data.get_out()[at..].first_chunk_mut::<16>() else {
            unreachable!("a whole block lies between lone_start and lone_end");
        };
        *block = store_block(value);
    }
    if has_partial {
        let key = width.block(next, (lone_end - lone_start) / 16);
        width.store_last_partial(narrow.xor(partial, key), data.get_out());
    }
}

/// Reverses bytes 12..16 of every block: between a big-endian 32-bit counter (GCM, CCM) and a
/// native lane that one vector add increments (its own inverse).
#[inline(always)]
pub fn swap_last_word<W: Tier>(width: W, block: W::Reg) -> W::Reg {
    let indices = load_block(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12]);
    width.shuffle_bytes(block, width.broadcast(indices))
}

/// A 32-bit counter in registers of width `W`, block i of the next register holding the
/// counter plus i.
///
/// The registers hold the counter blocks as they lie. GCM-SIV's counter is a little-endian
/// lane (lane 0), so one vector add increments every block and wraps modulo 2^32 without
/// carrying into the other lanes. GCM's is big-endian: a lane add increments it directly only
/// while byte 15 does not carry (an add to lane 3 adds to byte 15 alone). Otherwise each
/// register is swapped to a native lane, added to and swapped back, one shuffle per register;
/// a counter whose count is public ([`Counter::with_public_count`], GCM with a 96-bit IV)
/// skips those shuffles in every call whose blocks leave byte 15 unwrapped (31 of 32 strides
/// of 8 blocks). A count derived from the key, GCM's J0 for other IV lengths, must not steer a
/// branch.
pub(crate) struct Counter<W: Tier, L: Layout> {
    /// The next register of counter blocks, as they lie.
    blocks: W::Reg,
    /// The count of the next register's block 0, where it is public.
    public_count: Option<u32>,
    layout: PhantomData<L>,
}

impl<W: Tier, L: Layout> Counter<W, L> {
    #[inline(always)]
    pub(crate) fn new(width: W, block: Block) -> Self {
        let narrow = width.narrow();
        let native = Self::swap(narrow, block);
        Counter {
            blocks: width.gather(|i| Self::swap(narrow, narrow.add32(native, Self::in_lane(i)))),
            public_count: None,
            layout: PhantomData,
        }
    }

    /// `n` in the counter's lane, native order: lane 3 for GCM, lane 0 for GCM-SIV.
    #[inline(always)]
    fn in_lane(n: usize) -> Block {
        block_from((n as u128) << L::COUNTER.native_shift())
    }

    /// `n` in the counter's least significant byte as it lies: byte 15 for GCM, byte 0 for
    /// GCM-SIV. (Constants, not fields: x86 adds them from memory, without a register.)
    #[inline(always)]
    fn in_place(n: usize) -> Block {
        block_from((n as u128) << L::COUNTER.low_byte_shift())
    }

    /// Declares the first block's 32-bit count public (it must be `count`), so that [`next`]
    /// may branch on it.
    ///
    /// [`next`]: Counter::next
    #[inline(always)]
    pub(crate) fn with_public_count(self, count: u32) -> Self {
        Counter {
            public_count: Some(count),
            ..self
        }
    }

    /// Swaps bytes 12..16 for GCM (its own inverse); nothing for GCM-SIV.
    #[inline(always)]
    fn swap<V: Tier>(width: V, block: V::Reg) -> V::Reg {
        if L::COUNTER.big_endian() {
            swap_last_word(width, block)
        } else {
            block
        }
    }

    /// Whether the next `blocks` counter blocks, and the register after them that the
    /// counter keeps for the next call (counts up to `count + blocks + W::BLOCKS - 1`), are
    /// known not to carry out of GCM's byte 15; advances the public count past the blocks.
    /// (A register whose byte 15 wrapped without its carry would repeat a counter block 256
    /// blocks back: keystream reuse.)
    #[inline(always)]
    fn no_byte_carry(&mut self, blocks: usize) -> bool {
        let Some(count) = self.public_count else {
            return false;
        };
        self.public_count = Some(count.wrapping_add(blocks as u32));
        (count & 0xff) as usize + blocks + W::BLOCKS <= 256
    }

    /// The next N registers of counter blocks, ready to encrypt.
    #[inline(always)]
    pub(crate) fn next<const N: usize>(&mut self, width: W) -> [W::Reg; N] {
        let mut blocks = [width.zero(); N];
        if !L::COUNTER.big_endian() || self.no_byte_carry(N * W::BLOCKS) {
            let step = width.broadcast(Self::in_place(W::BLOCKS));
            for block in &mut blocks {
                *block = self.blocks;
                self.blocks = width.add32(self.blocks, step);
            }
        } else {
            let step = width.broadcast(Self::in_lane(W::BLOCKS));
            let mut native = Self::swap(width, self.blocks);
            for block in &mut blocks {
                *block = Self::swap(width, native);
                native = width.add32(native, step);
            }
            self.blocks = Self::swap(width, native);
        }
        blocks
    }
}
