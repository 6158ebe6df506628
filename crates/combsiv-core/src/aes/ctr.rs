//! Counter mode on the vector tiers: a 32-bit counter in AES-GCM's or AES-GCM-SIV's layout,
//! [`STRIDE`] registers of counter blocks encrypted at a time, from an `InOutBuf`'s input side
//! to its output side (in place or out of place); the partial strides and blocks at the end;
//! [`Counter`], the counter blocks as registers.

use core::marker::PhantomData;

use aead::inout::InOutBuf;
use zeroize::Zeroize;

use super::AesKeySize;
use super::kernels::{RoundKeys, broadcast, encrypt};
use crate::cpu::{Block, STRIDE, Tier, TierToken, block_from, load_block, per_tier, store_block};
use crate::layout::Counter32;
use crate::layout::{GcmLayout, Layout, SivLayout};

impl RoundKeys {
    pub fn apply_keystream(
        &self,
        token: TierToken,
        counter: &[u8; 16],
        order: Counter32,
        data: InOutBuf<'_, '_, u8>,
    ) {
        match order {
            Counter32::LittleEndianFirst => ctr32_xor::<SivLayout>(token, self, counter, data),
            Counter32::BigEndianLast => ctr32_xor::<GcmLayout>(token, self, counter, data),
        }
    }
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
    tier: W,
    round_keys: &RoundKeys,
    counter: &[u8; 16],
    data: InOutBuf<'_, '_, u8>,
) {
    let mut keys = broadcast(tier, round_keys.schedule());
    let mut counter = Counter::<W, L>::new(tier, load_block(counter));
    apply_keystream_sized(tier, &keys, round_keys.size(), &mut counter, data);
    keys.zeroize();
}

/// [`apply_keystream`] for a key size known at run time.
#[inline(always)]
pub(crate) fn apply_keystream_sized<W: Tier, L: Layout>(
    tier: W,
    keys: &[W::Reg; 15],
    size: AesKeySize,
    counter: &mut Counter<W, L>,
    data: InOutBuf<'_, '_, u8>,
) {
    match size {
        AesKeySize::Aes128 => apply_keystream::<W, L, 10>(tier, keys, counter, data),
        AesKeySize::Aes256 => apply_keystream::<W, L, 14>(tier, keys, counter, data),
    }
}

/// XORs the input side of `data` with the keystream from `counter` into its output side (the
/// same bytes, or a separate buffer: one pass either way), [`STRIDE`] registers per
/// iteration; the keystream never leaves registers except for the last partial stride.
#[inline(always)]
pub(crate) fn apply_keystream<W: Tier, L: Layout, const ROUNDS: usize>(
    tier: W,
    keys: &[W::Reg; 15],
    counter: &mut Counter<W, L>,
    mut data: InOutBuf<'_, '_, u8>,
) {
    let strides = data.len() / stride_bytes::<W>();
    for i in 0..strides {
        let mut keystream = counter.next::<STRIDE>(tier);
        encrypt(tier, keys, ROUNDS, &mut keystream);
        xor_stride(tier, &mut data, i, &keystream);
    }
    let start = strides * stride_bytes::<W>();
    xor_tail::<W, L, ROUNDS>(tier, keys, counter, data, Tail::buffer(start));
}

/// Output stride `i` = input stride `i` XOR `keystream`. A whole stride has a constant
/// number of registers, so the loops unroll and the keystream stays in registers; through
/// [`xor_whole_registers`], whose count is known only at run time, it would be stored to the
/// stack and XORed there (about ten more instructions per block). Loads before stores, as
/// there.
#[inline(always)]
pub(crate) fn xor_stride<W: Tier>(
    tier: W,
    data: &mut InOutBuf<'_, '_, u8>,
    i: usize,
    keystream: &[W::Reg; STRIDE],
) {
    let input = load_registers(tier, stride::<W>(data.get_in(), i));
    store_xor_stride(tier, data, i, &input, keystream);
}

/// N registers (a stride, say), loaded.
#[inline(always)]
pub(crate) fn load_registers<W: Tier, const N: usize>(
    tier: W,
    bytes: &[W::Bytes; N],
) -> [W::Reg; N] {
    let mut registers = [tier.zero(); N];
    for (register, bytes) in registers.iter_mut().zip(bytes) {
        *register = tier.load(bytes);
    }
    registers
}

/// Output stride `i` = `input` XOR `keystream`, for an input already in registers.
#[inline(always)]
pub(crate) fn store_xor_stride<W: Tier>(
    tier: W,
    data: &mut InOutBuf<'_, '_, u8>,
    i: usize,
    input: &[W::Reg; STRIDE],
    keystream: &[W::Reg; STRIDE],
) {
    let out = stride_mut::<W>(data.get_out(), i);
    for ((bytes, &input), &keystream) in out.iter_mut().zip(input).zip(keystream) {
        *bytes = tier.store(tier.xor(input, keystream));
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
    tier: W,
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
                *value = tier.xor(tier.load(bytes), *value);
            }
        }
        TailInput::Fetched(blocks) => {
            for (r, value) in values.iter_mut().enumerate().take(whole) {
                *value = tier.xor(tier.gather(|i| blocks[r * W::BLOCKS + i]), *value);
            }
        }
    }
    let (output, _) = W::registers_mut(&mut data.get_out()[start..end]);
    for (bytes, value) in output.iter_mut().zip(values) {
        *bytes = tier.store(value);
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
    fn block<W: Tier>(self, tier: W, input: &[u8], start: usize, i: usize) -> Block {
        match self {
            TailInput::Buffer => match input[start + 16 * i..].first_chunk::<16>() {
                Some(block) => load_block(block),
                None => tier.load_last_partial(input),
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
    tier: W,
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
        1 => xor_registers::<W, L, ROUNDS, 1>(tier, args),
        2 => xor_registers::<W, L, ROUNDS, 2>(tier, args),
        3 | 4 => xor_registers::<W, L, ROUNDS, 4>(tier, args),
        _ => xor_registers::<W, L, ROUNDS, STRIDE>(tier, args),
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
    tier: W,
    TailArgs {
        keys,
        counter,
        mut data,
        tail,
    }: TailArgs<'_, '_, '_, W, L>,
) {
    let Tail { start, source } = tail;
    let narrow = tier.narrow();
    let has_partial = !data.len().is_multiple_of(16);
    let partial = if has_partial {
        source.block(tier, data.get_in(), start, (data.len() - start) / 16)
    } else {
        narrow.zero()
    };
    // Encrypted in an array of its own, then moved into the one indexed at run time below. A
    // dynamically indexed array lives on the stack: had the rounds run on it, every round
    // would have loaded and stored each state around its [`round_boundary`], a
    // store-to-load forward on each link of the chain. Moved after the rounds, the state
    // stays in registers and is stored once: the batched GCM-SIV seal of 64 x 1500 bytes,
    // whose last 14 blocks take this path, ran 1.10x faster (Zen 3, VAES).
    let mut state = counter.next::<N>(tier);
    encrypt(tier, keys, ROUNDS, &mut state);
    // N whole registers from the buffer, 8 blocks at most (a 64-byte GCM-SIV message's four
    // blocks): a count known at compile time keeps the keystream in registers, which the
    // run-time count below stores to the stack and loads back (a 64-byte AES-GCM seal in
    // 0.87x the time, Zen 5). Not for 16 blocks: four ZMM registers this way made AVX-512's
    // AES-GCM seal of 256 bytes 1.11x as slow.
    if let TailInput::Buffer = source
        && N * W::BLOCKS <= 8
        && data.len() - start == 16 * W::BLOCKS * N
        && let Some(input) = W::registers(&data.get_in()[start..]).0.first_chunk::<N>()
    {
        let input = load_registers(tier, input);
        if let Some(output) = W::registers_mut(&mut data.get_out()[start..])
            .0
            .first_chunk_mut::<N>()
        {
            for ((bytes, input), keystream) in output.iter_mut().zip(input).zip(state) {
                *bytes = tier.store(tier.xor(input, keystream));
            }
        }
        return;
    }
    let keystream = state;
    let whole = xor_whole_registers(tier, &mut data, tail, &keystream);
    // The blocks after the whole registers: at most one whole block (at width 2), then the
    // partial block.
    let next = keystream.get(whole).copied().unwrap_or(tier.zero());
    let lone_start = start + whole * 16 * W::BLOCKS;
    let lone_end = data.len() - data.len() % 16;
    for (i, at) in (lone_start..lone_end).step_by(16).enumerate() {
        let block = source.block(tier, data.get_in(), start, (at - start) / 16);
        let value = narrow.xor(block, tier.block(next, i));
        let Some(block) = data.get_out()[at..].first_chunk_mut::<16>() else {
            unreachable!("a whole block lies between lone_start and lone_end");
        };
        *block = store_block(value);
    }
    if has_partial {
        let key = tier.block(next, (lone_end - lone_start) / 16);
        tier.store_last_partial(narrow.xor(partial, key), data.get_out());
    }
}

/// Reverses bytes 12..16 of every block: between a big-endian 32-bit counter (GCM, CCM) and a
/// native lane that one vector add increments (its own inverse).
#[inline(always)]
pub fn swap_last_word<W: Tier>(tier: W, block: W::Reg) -> W::Reg {
    let indices = load_block(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 14, 13, 12]);
    tier.shuffle_bytes(block, tier.broadcast(indices))
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
    pub(crate) fn new(tier: W, block: Block) -> Self {
        let narrow = tier.narrow();
        let native = Self::swap(narrow, block);
        Counter {
            blocks: tier.gather(|i| Self::swap(narrow, narrow.add32(native, Self::in_lane(i)))),
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
    fn swap<V: Tier>(tier: V, block: V::Reg) -> V::Reg {
        if L::COUNTER.big_endian() {
            swap_last_word(tier, block)
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
    pub(crate) fn next<const N: usize>(&mut self, tier: W) -> [W::Reg; N] {
        let mut blocks = [tier.zero(); N];
        if !L::COUNTER.big_endian() || self.no_byte_carry(N * W::BLOCKS) {
            let step = tier.broadcast(Self::in_place(W::BLOCKS));
            for block in &mut blocks {
                *block = self.blocks;
                self.blocks = tier.add32(self.blocks, step);
            }
        } else {
            let step = tier.broadcast(Self::in_lane(W::BLOCKS));
            let mut native = Self::swap(tier, self.blocks);
            for block in &mut blocks {
                *block = Self::swap(tier, native);
                native = tier.add32(native, step);
            }
            self.blocks = Self::swap(tier, native);
        }
        blocks
    }
}
