//! POLYVAL with carry-less multiplication on the vector tiers, written once over [`Tier`]
//! (PCLMULQDQ on XMM registers for AES-NI, VPCLMULQDQ on YMM registers, two blocks each, for
//! VAES, and on ZMM registers, four each, for AVX-512) and instantiated per tier by
//! [`per_tier!`]. Math: see the parent module.
//!
//! Design:
//! - Aggregation: a stride of [`STRIDE`] registers (8 blocks on AES-NI, 16 with VAES, 32 with
//!   AVX-512) is multiplied by `H^n..H^1`, summed unreduced, and reduced once.
//! - Karatsuba: each 128x128 product takes three 64x64 multiplications, not four:
//!   `a.lo*h.lo`, `a.hi*h.hi` and `(a.lo^a.hi)*(h.lo^h.hi)`, whose XOR with the first two is
//!   the middle term. `h.lo^h.hi` is precomputed with the powers, so a block costs three
//!   carry-less multiplications, one shuffle and one XOR (no shuffle for blocks hashed from
//!   memory, see [`absorb_stride`]). On Zen 3, where VPCLMULQDQ (two cycles per YMM
//!   instruction) shares its two pipes with VAES, these multiplications are what a stitched
//!   loop spends most of its time on: 24 per 16 blocks instead of 32. The stitched loops of a
//!   tier that asks for it multiply schoolbook instead ([`accumulate_schoolbook`]).
//! - The one reduction runs on every block of the sums' registers, then the reduced blocks
//!   are added: one register folded across its blocks, not three. On Sapphire Rapids, where
//!   every 512-bit multiply, shuffle and cross-block move runs on port 5, this and the
//!   shuffle-free middle inputs take the POLYVAL pass over 32 blocks from 45.1 to 30.1 cycles
//!   in llvm-mca 19's model (0.94 per block).
//! - The powers are stored in the order the loops read them: descending, `H^k` at entry
//!   `MAX_POWERS - k`, then zero entries. A register loaded at entry `MAX_POWERS - k` holds
//!   `H^k, H^(k-1), ...`, which is what a group of `k` blocks multiplies its first register
//!   by; a group whose count is not a multiple of the width ends on the zero entries, next to
//!   zero-padded blocks. The same table serves every width.
//! - GCM-SIV has a fresh hash key per message, so the table is built per message, only as far
//!   as the message needs, by repeated doubling (`H^(m+1..2m) = H^m * H^(1..m)`, a register
//!   of powers per product): 16 powers take four dependent products.

use crate::cpu::{
    Block, MAX_BLOCKS, Narrow, STRIDE, Tier, TierToken, block_from, load_block, per_tier,
    store_block,
};
use crate::layout::Layout;

/// The most powers a table holds: one per block of a stride of the widest tier.
pub(crate) const MAX_POWERS: usize = STRIDE * MAX_BLOCKS;
/// Entries of a table: the powers, then zero entries for the last register of a group whose
/// count is not a multiple of the width.
const TABLE_ENTRIES: usize = MAX_POWERS + MAX_BLOCKS - 1;

#[derive(Clone)]
pub(crate) struct PowerTable {
    /// `H^k` at entry `MAX_POWERS - k` for `k = 1..=count`, then zero entries.
    powers: [Block; TABLE_ENTRIES],
    /// Each entry of `powers` XORed with its halves swapped: the low half is Karatsuba's
    /// `h.lo ^ h.hi`.
    karatsuba: [Block; TABLE_ENTRIES],
    count: usize,
}

impl Drop for PowerTable {
    /// Wipes the entries [`fill_powers`] wrote (the others were never anything but zero):
    /// GCM-SIV drops a table per message, and short ones use few entries. Plain stores, which
    /// the compiler widens, then `zeroize`'s barrier, which keeps them: its volatile stores,
    /// one per entry, were 6 % of a 1500-byte AES-256 seal's time on Zen 4.
    fn drop(&mut self) {
        let written = MAX_POWERS - self.count.min(MAX_POWERS)..MAX_POWERS;
        self.powers[written.clone()].fill(block_from(0));
        self.karatsuba[written].fill(block_from(0));
        zeroize::optimization_barrier(self);
    }
}

impl PowerTable {
    pub(crate) fn new(token: TierToken, h: &[u8; 16], blocks: usize) -> Self {
        build_key(token, h, blocks)
    }

    pub(crate) fn absorb<L: Layout>(&self, token: TierToken, acc: &mut u128, blocks: &[[u8; 16]]) {
        absorb_blocks::<L>(token, self, acc, blocks);
    }

    /// Whether the table covers a whole stride of width `W`.
    #[inline(always)]
    pub(crate) fn covers_stride<W: Tier>(&self) -> bool {
        self.count >= W::POWERS
    }
}

per_tier! {
    fn build_key(h: &[u8; 16], blocks: usize) -> PowerTable = build_key_kernel;
}

#[inline(always)]
fn build_key_kernel<W: Tier>(tier: W, h: &[u8; 16], blocks: usize) -> PowerTable {
    powers_of(tier, load_block(h), blocks)
}

per_tier! {
    fn absorb_blocks<L: Layout>(
        key: &PowerTable,
        acc: &mut u128,
        blocks: &[[u8; 16]],
    ) = absorb_blocks_kernel;
}

#[inline(always)]
fn absorb_blocks_kernel<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    acc: &mut u128,
    blocks: &[[u8; 16]],
) {
    let data = (blocks.as_flattened(), 0);
    let s = absorb_padded::<W, L>(tier, key, block_from(*acc), data, None);
    *acc = u128::from_le_bytes(store_block(s));
}

/// `H^1..H^count` for `count = blocks` clamped to `W::BLOCKS..=W::POWERS` (see the module comment).
#[inline(always)]
pub(crate) fn powers_of<W: Tier>(tier: W, h: Block, blocks: usize) -> PowerTable {
    let mut key = PowerTable::empty(tier.narrow());
    fill_powers(tier, &mut key, h, blocks);
    key
}

impl PowerTable {
    /// A table to fill with [`fill_powers`] where it lives: at 550 bytes, building it in a
    /// callee and returning it would add a copy to every GCM-SIV message.
    #[inline(always)]
    pub(crate) fn empty(narrow: Narrow) -> PowerTable {
        PowerTable {
            powers: [narrow.zero(); TABLE_ENTRIES],
            karatsuba: [narrow.zero(); TABLE_ENTRIES],
            count: 0,
        }
    }
}

/// Fills `key` with `H^1..H^count` for `count = blocks` clamped to `W::BLOCKS..=W::POWERS`
/// (rounded up to whole registers), by doubling: `H^(m+1..2m) = H^m * H^(1..m)` for m = 2,
/// 4, 8, one register of powers per product, by Karatsuba (H^2 as a square). Schoolbook, the
/// 16 powers took 48 multiplications, 9 more: on Zen 3 each `vpclmulqdq ymm` holds the
/// pipes the AES instructions share for 2 cycles.
///
/// The powers stay in registers until the table is complete: register r holds the powers
/// that entry `MAX_POWERS - (r + 1) * W::BLOCKS` of the table holds. Reloading each level
/// from the table instead would put a store-to-load forward on every step of the dependent
/// chain, and at width 2 a failed one (a 32-byte load over two 16-byte stores), which waits
/// for the stores to retire. The levels and registers are constant loops, so the code is
/// straight-line; the tests of `wanted` (public) skip what the message does not need.
#[inline(always)]
pub(crate) fn fill_powers<W: Tier>(tier: W, key: &mut PowerTable, h: Block, blocks: usize) {
    let narrow = tier.narrow();
    let needed = blocks.clamp(W::BLOCKS, W::POWERS).div_ceil(W::BLOCKS);
    // The doubling starts from H^base..H^1, base = max(BLOCKS, 2), computed one block at a
    // time: H^2 = H*H, then H^3 = H^2*H and H^4 = H^2*H^2 side by side.
    let base = const { if W::BLOCKS > 2 { W::BLOCKS } else { 2 } };
    const { assert!(matches!(W::BLOCKS, 1 | 2 | 4)) };
    let h2 = square(narrow, h);
    let mut first = [narrow.zero(); FIRST_POWERS];
    first[FIRST_POWERS - 2..].copy_from_slice(&[h2, h]);
    if base == 4 {
        first[0] = square(narrow, h2);
        first[1] = karatsuba_dot(narrow, h2, (h, narrow.xor(h, narrow.swap_halves(h))));
    }
    let first = &first[FIRST_POWERS - base..];
    let mut registers = [tier.zero(); STRIDE];
    let initial = base / W::BLOCKS;
    for (r, register) in registers.iter_mut().enumerate().take(initial) {
        *register = tier.load_blocks(first, base - (r + 1) * W::BLOCKS);
    }
    let mut count = initial;
    for level in base.ilog2()..W::POWERS.ilog2() {
        let m = 1 << level;
        if m / W::BLOCKS >= needed {
            break;
        }
        // H^m is the highest power of register m / BLOCKS - 1, its block 0.
        let h_m = tier.broadcast(tier.block(registers[m / W::BLOCKS - 1], 0));
        let h_m = (h_m, tier.xor(h_m, tier.swap_halves(h_m)));
        for j in 0..m / W::BLOCKS {
            if m / W::BLOCKS + j < needed {
                let product = karatsuba_dot(tier, registers[j], h_m);
                registers[m / W::BLOCKS + j] = product;
                count = m / W::BLOCKS + j + 1;
            }
        }
    }
    for (r, &register) in registers.iter().enumerate().take(count) {
        let entry = MAX_POWERS - (r + 1) * W::BLOCKS;
        tier.store_blocks(register, &mut key.powers, entry);
        let karatsuba = tier.xor(register, tier.swap_halves(register));
        tier.store_blocks(karatsuba, &mut key.karatsuba, entry);
    }
    key.count = count * W::BLOCKS;
}

/// The most powers [`fill_powers`] computes one block at a time: one register of the widest
/// tier, and at least 2.
const FIRST_POWERS: usize = if MAX_BLOCKS > 2 { MAX_BLOCKS } else { 2 };

/// The unreduced 256-bit products `a * b` of each block as (low, middle, high), schoolbook.
#[inline(always)]
pub(crate) fn mul<W: Tier>(tier: W, a: W::Reg, b: W::Reg) -> [W::Reg; 3] {
    let low = tier.mul_low_halves(a, b);
    let high = tier.mul_high_halves(a, b);
    let middle = tier.xor(tier.mul_high_by_low(a, b), tier.mul_low_by_high(a, b));
    [low, middle, high]
}

/// Montgomery reduction of each block's 256-bit product, given as `low` (bits 0..128),
/// `middle` (bits 64..192) and `high` (bits 128..256), by `x^128`: two folds by
/// `c = x^63 + x^62 + x^57` (parent module). Each fold clears the lowest word left: word 0 of
/// `low` into the middle, then word 0 of the middle into the high, so the middle needs no
/// shifts into the other two (2 multiplications, 2 word swaps, 4 XORs).
#[inline(always)]
pub(crate) fn reduce<W: Tier>(tier: W, [low, middle, high]: [W::Reg; 3]) -> W::Reg {
    // The high 64 bits hold c, which mul_low_by_high multiplies by low64(a).
    let c = tier.broadcast(block_from(0xC200_0000_0000_0000 << 64));
    // `low`'s word 0 (v0) times c lands on the middle's two words, v0 itself on its word 1;
    // `low`'s word 1 is the middle's word 0: swapping `low`'s words puts both in place.
    let fold = tier.mul_low_by_high(low, c);
    let middle = tier.xor(middle, tier.xor(tier.swap_halves(low), fold));
    // The same with the middle's word 0 into the high; what remains is the high.
    let fold = tier.mul_low_by_high(middle, c);
    tier.xor(high, tier.xor(tier.swap_halves(middle), fold))
}

#[inline(always)]
pub(crate) fn dot(narrow: Narrow, a: Block, b: Block) -> Block {
    reduce(narrow, mul(narrow, a, b))
}

/// `dot(a, a)` of each block: two multiplications, the cross terms cancelling (parent
/// module).
#[inline(always)]
pub(crate) fn square<W: Tier>(tier: W, a: W::Reg) -> W::Reg {
    let low = tier.mul_low_halves(a, a);
    let high = tier.mul_high_halves(a, a);
    reduce(tier, [low, tier.zero(), high])
}

/// `dot(a, b)` of each block by Karatsuba (three multiplications); `b_karatsuba` is `b` with
/// each block's halves XORed, for a `b` that serves several products.
#[inline(always)]
fn karatsuba_dot<W: Tier>(tier: W, a: W::Reg, (b, b_karatsuba): (W::Reg, W::Reg)) -> W::Reg {
    let mut sums = [tier.zero(); 3];
    accumulate_product(tier, &mut sums, a, (b, b_karatsuba));
    reduce_sums(tier, sums)
}

/// Unreduced sums of Karatsuba products: low, Karatsuba middle, high.
pub(crate) type Sums<W> = [<W as Tier>::Reg; 3];

/// Adds the product of register `j` of a group of `n` blocks (`x`, with the running state
/// already added to its first block, and its [`karatsuba_input`]) and its powers to `sums`.
#[inline(always)]
pub(crate) fn accumulate<W: Tier>(
    tier: W,
    key: &PowerTable,
    sums: &mut Sums<W>,
    (n, j): (usize, usize),
    x: (W::Reg, W::Reg),
) {
    let entry = MAX_POWERS - n + j * W::BLOCKS;
    let h = tier.load_blocks(&key.powers, entry);
    let h_karatsuba = tier.load_blocks(&key.karatsuba, entry);
    accumulate_split(tier, sums, x, (h, h_karatsuba));
}

/// `x` and Karatsuba's middle input of each of its blocks: `x.lo ^ x.hi` in the low half (the
/// high half is not read).
#[inline(always)]
pub(crate) fn karatsuba_input<W: Tier>(tier: W, x: W::Reg) -> (W::Reg, W::Reg) {
    (x, tier.xor(x, tier.swap_halves(x)))
}

/// Adds the Karatsuba products of each block of `x` and of `h` to `sums`; `h_karatsuba` is
/// `h` with each block's halves XORed (its low half is `h.lo ^ h.hi`).
#[inline(always)]
pub(crate) fn accumulate_product<W: Tier>(
    tier: W,
    sums: &mut Sums<W>,
    x: W::Reg,
    h: (W::Reg, W::Reg),
) {
    accumulate_split(tier, sums, karatsuba_input(tier, x), h);
}

/// [`accumulate_product`] with `x`'s middle input given.
#[inline(always)]
fn accumulate_split<W: Tier>(
    tier: W,
    sums: &mut Sums<W>,
    (x, x_karatsuba): (W::Reg, W::Reg),
    (h, h_karatsuba): (W::Reg, W::Reg),
) {
    sums[0] = tier.xor(sums[0], tier.mul_low_halves(x, h));
    sums[2] = tier.xor(sums[2], tier.mul_high_halves(x, h));
    sums[1] = tier.xor(sums[1], tier.mul_low_halves(x_karatsuba, h_karatsuba));
}

/// [`accumulate`] schoolbook: register `j`'s four products with its powers, the two cross
/// products added to the middle sum, which then needs no completing ([`reduce_and_fold`]
/// with `schoolbook`). It takes a fourth multiplication where Karatsuba takes the middle
/// input's shuffle and XOR (see `TierToken::schoolbook_stitched`). Every addition is a
/// three-way XOR ([`Tier::xor3`]): the middle's two products into its sum, and the low and
/// high products of registers `j - 1` and `j` into theirs for odd `j` (those of even `j` wait
/// in `pending`): 16 XORs a stride of 8 registers, not 23 as LLVM grouped them. Registers
/// run from 0 up, their first pair starting the sums.
#[inline(always)]
pub(crate) fn accumulate_schoolbook<W: Tier>(
    tier: W,
    key: &PowerTable,
    (sums, pending): (&mut Sums<W>, &mut [W::Reg; 2]),
    (n, j): (usize, usize),
    x: W::Reg,
) {
    let h = tier.load_blocks(&key.powers, MAX_POWERS - n + j * W::BLOCKS);
    let low = tier.mul_low_halves(x, h);
    let high = tier.mul_high_halves(x, h);
    let cross = (tier.mul_high_by_low(x, h), tier.mul_low_by_high(x, h));
    sums[1] = match j {
        0 => tier.xor(cross.0, cross.1),
        _ => tier.xor3(sums[1], cross.0, cross.1),
    };
    match j % 2 {
        0 => *pending = [low, high],
        _ if j == 1 => {
            *sums = [
                tier.xor(pending[0], low),
                sums[1],
                tier.xor(pending[1], high),
            ]
        }
        _ => {
            sums[0] = tier.xor3(sums[0], pending[0], low);
            sums[2] = tier.xor3(sums[2], pending[1], high);
        }
    }
}

/// The reduced sum: each block's sum reduced ([`reduce_sums`]), then the blocks added.
/// Reducing first (reduction is linear) folds one register across its blocks instead of
/// three; on Sapphire Rapids every cross-block move and 512-bit multiply runs on port 5.
/// `schoolbook`: the sums of [`accumulate_schoolbook`], whose middle term is complete.
#[inline(always)]
pub(crate) fn reduce_and_fold<W: Tier>(tier: W, sums: Sums<W>, schoolbook: bool) -> Block {
    let reduced = if schoolbook {
        reduce(tier, sums)
    } else {
        reduce_sums(tier, sums)
    };
    tier.sum_blocks(reduced)
}

/// Each block's reduced sum: Karatsuba's middle term completed, one reduction.
#[inline(always)]
pub(crate) fn reduce_sums<W: Tier>(tier: W, [low, middle, high]: Sums<W>) -> W::Reg {
    let middle = tier.xor(middle, tier.xor(low, high));
    reduce(tier, [low, middle, high])
}

/// Register `x` of hashed data as POLYVAL reads it (byte-reversed for GHASH), with the
/// running state `s` added to its first block when it is the first register of a group.
#[inline(always)]
pub(crate) fn hashed_register<W: Tier, L: Layout>(tier: W, x: W::Reg, s: Option<Block>) -> W::Reg {
    let mut x = x;
    if L::HASHED_BYTES.reversed() {
        x = tier.reverse_bytes(x);
    }
    match s {
        Some(s) => tier.xor(x, tier.gather(|i| if i == 0 { s } else { block_from(0) })),
        None => x,
    }
}

/// A stride of hashed bytes in memory and, where the 8 bytes after it can be read, the same
/// stride read from 8 bytes later. The low half of each block of the second is the high half
/// of the first's block, so one XOR gives Karatsuba's middle input, where [`karatsuba_input`]
/// swaps halves first. That shuffle, like every 512-bit multiply and cross-block move on
/// Sapphire Rapids, runs on port 5, which bounds the POLYVAL pass there. Used only in
/// POLYVAL's order (GHASH reverses each block's bytes first). The stitched loops, which hash
/// output they wrote a stride or two before, use it only where [`Tier::HASH_OUTPUT_SHIFTED`]:
/// on x86 a load across two stores still in the store buffer waits for both to reach the
/// cache.
pub(crate) type StrideInMemory<'a, W> = (
    &'a [<W as Tier>::Bytes; STRIDE],
    Option<&'a [<W as Tier>::Bytes; STRIDE]>,
);

/// Register `j` of a stride in memory as POLYVAL reads it ([`hashed_register`], with `s` added
/// to its first block), and its middle input.
#[inline(always)]
pub(crate) fn stride_register<W: Tier, L: Layout>(
    tier: W,
    (stride, shifted): StrideInMemory<'_, W>,
    j: usize,
    s: Option<Block>,
) -> (W::Reg, W::Reg) {
    let bytes = tier.load(&stride[j]);
    match (shifted, s) {
        (Some(shifted), None) if !L::HASHED_BYTES.reversed() => {
            (bytes, tier.xor(bytes, tier.load(&shifted[j])))
        }
        // `s` in the first block adds `s.lo ^ s.hi` to that block's middle input, computed on
        // one block: on Sapphire Rapids off port 5 (30.1 cycles per 32 blocks in llvm-mca
        // where swapping the register's halves took 32.1). A tier of one block per register
        // swaps the register's halves instead: the same shuffle, one XOR fewer.
        (Some(shifted), Some(s)) if !L::HASHED_BYTES.reversed() && W::BLOCKS > 1 => {
            let narrow = tier.narrow();
            let s_middle = narrow.xor(s, narrow.swap_halves(s));
            let first = |block| tier.gather(|i| if i == 0 { block } else { block_from(0) });
            let middle = tier.xor(bytes, tier.load(&shifted[j]));
            (tier.xor(bytes, first(s)), tier.xor(middle, first(s_middle)))
        }
        _ => karatsuba_input(tier, hashed_register::<W, L>(tier, bytes, s)),
    }
}

/// One whole stride: `S' = (S + X_1)*H^n + ... + X_n*H^1` with `n = W::POWERS`.
#[inline(always)]
pub(crate) fn absorb_stride<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    s: Block,
    (stride, shifted): StrideInMemory<'_, W>,
) -> Block {
    // One instance per case, so that no register tests which it is.
    let register = |shifted| {
        #[inline(always)]
        move |j: usize| stride_register::<W, L>(tier, (stride, shifted), j, (j == 0).then_some(s))
    };
    match shifted {
        Some(shifted) => absorb_registers(tier, key, register(Some(shifted))),
        None => absorb_registers(tier, key, register(None)),
    }
}

/// The reduced sum of a stride's registers `register(j)` (each with its middle input) times
/// their powers.
#[inline(always)]
fn absorb_registers<W: Tier>(
    tier: W,
    key: &PowerTable,
    register: impl Fn(usize) -> (W::Reg, W::Reg),
) -> Block {
    let mut sums = [tier.zero(); 3];
    // Register 0, which carries `s`, comes last: the previous stride's reduction then has
    // the other registers' multiplies to overlap with, rather than starting every sum's
    // chain of additions (Neoverse V1 in llvm-mca: 32.1 cycles per stride in order, 26.1 so).
    for j in 1..STRIDE {
        accumulate(tier, key, &mut sums, (W::POWERS, j), register(j));
    }
    accumulate(tier, key, &mut sums, (W::POWERS, 0), register(0));
    reduce_and_fold(tier, sums, false)
}

/// Absorbs the `n` blocks of registers `register(0..)` into `s` in groups as large as the
/// table allows. Groups start on register boundaries (the table's count is a multiple of
/// `W::BLOCKS`); a register's blocks at or past `n` meet the table's zero entry, so their
/// contents do not matter.
#[inline(always)]
pub(crate) fn absorb_each<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    mut s: Block,
    n: usize,
    register: impl Fn(usize) -> W::Reg,
) -> Block {
    let group = key.count.min(W::POWERS);
    let mut start = 0;
    while start < n {
        let len = (n - start).min(group);
        let mut sums = [tier.zero(); 3];
        for j in 0..len.div_ceil(W::BLOCKS) {
            let x = register(start / W::BLOCKS + j);
            let x = hashed_register::<W, L>(tier, x, (j == 0).then_some(s));
            accumulate(tier, key, &mut sums, (len, j), karatsuba_input(tier, x));
        }
        s = reduce_and_fold(tier, sums, false);
        start += len;
    }
    s
}

/// Absorbs `data[start..]` (`start` a multiple of 16) zero-padded to whole blocks, then the
/// block `last` if there is one (GCM-SIV's length block, which then shares the last
/// reduction). The bytes before `start` are only there for reading the partial last block in
/// one piece.
///
/// Whole registers are loaded straight from `data`; only the few blocks after them (the whole
/// blocks short of a register, the partial block, `last`) are assembled, once, so that the number
/// of length-dependent branches does not grow with the tail: with random message lengths each
/// one is a likely misprediction.
#[inline(always)]
pub(crate) fn absorb_padded<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    mut s: Block,
    (data, start): (&[u8], usize),
    last: Option<Block>,
) -> Block {
    let whole = whole_strides::<W>(key, data.len() - start);
    let strides = W::registers(&data[start..start + whole])
        .0
        .as_chunks::<STRIDE>()
        .0;
    // The strides that 8 more bytes follow, read again from 8 bytes on.
    let later = data.get(start + 8..).unwrap_or_default();
    let shifted = if L::HASHED_BYTES.reversed() {
        &[]
    } else {
        W::registers(later).0.as_chunks::<STRIDE>().0
    };
    let (with_shifted, last_strides) = strides.split_at(shifted.len().min(strides.len()));
    for (stride, shifted) in with_shifted.iter().zip(shifted) {
        s = absorb_stride::<W, L>(tier, key, s, (stride, Some(shifted)));
    }
    for stride in last_strides {
        s = absorb_stride::<W, L>(tier, key, s, (stride, None));
    }
    absorb_tail::<W, L>(tier, key, s, (data, start + whole), last)
}

/// [`absorb_padded`] of `data` from its start, reading each byte once and writing it to
/// `copy` (as long): whole strides are loaded into registers, stored to `copy` and hashed
/// from the registers (their middle inputs by a swap, not a second read); the tail is copied
/// first and hashed from `copy`. What was hashed is then exactly what `copy` holds, however
/// `data` changes meanwhile (another thread's buffer), at the cost of one store per
/// register, not a copy pass before the hash.
#[inline(always)]
pub(crate) fn absorb_padded_copying<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    mut s: Block,
    (data, copy): (&[u8], &mut [u8]),
    last: Option<Block>,
) -> Block {
    let whole = whole_strides::<W>(key, data.len());
    let (body, tail) = data.split_at(whole);
    let (copied_body, copied_tail) = copy.split_at_mut(whole);
    let strides = W::registers(body).0.as_chunks::<STRIDE>().0;
    let copied_strides = W::registers_mut(copied_body).0.as_chunks_mut::<STRIDE>().0;
    for (stride, copied) in strides.iter().zip(copied_strides) {
        tier.prefetch_stride_ahead(stride.as_ptr().cast(), copied.as_ptr().cast());
        let mut registers: [W::Reg; STRIDE] = core::array::from_fn(|j| tier.load(&stride[j]));
        for (register, copied) in registers.iter_mut().zip(copied) {
            // Held in a register: the hash below must not load it from `data` again.
            tier.pin(register);
            *copied = tier.store(*register);
        }
        s = absorb_registers(
            tier,
            key,
            #[inline(always)]
            |j| {
                let x = hashed_register::<W, L>(tier, registers[j], (j == 0).then_some(s));
                karatsuba_input(tier, x)
            },
        );
    }
    copied_tail.copy_from_slice(tail);
    absorb_tail::<W, L>(tier, key, s, (copy, whole), last)
}

/// The bytes of `len` that [`absorb_padded`] hashes in whole strides: none unless the table
/// covers one.
#[inline(always)]
fn whole_strides<W: Tier>(key: &PowerTable, len: usize) -> usize {
    match key.covers_stride::<W>() {
        true => len / (16 * W::POWERS) * (16 * W::POWERS),
        false => 0,
    }
}

/// The end of [`absorb_padded`]: `data[start..]`, fewer blocks than a stride (or any number
/// when the table does not cover one), zero-padded, then `last`.
#[inline(always)]
fn absorb_tail<W: Tier, L: Layout>(
    tier: W,
    key: &PowerTable,
    s: Block,
    (data, start): (&[u8], usize),
    last: Option<Block>,
) -> Block {
    let narrow = tier.narrow();
    let (rest, partial) = data[start..].as_chunks::<16>();
    let (registers, lone) = W::registers(rest.as_flattened());
    // At most BLOCKS + 1 blocks follow the whole registers (fewer than a register's whole
    // blocks, the partial one, `last`), so at most two registers are assembled from them.
    let mut loose = [narrow.zero(); 2 * MAX_BLOCKS];
    let mut filled = 0;
    for bytes in lone.as_chunks::<16>().0 {
        loose[filled] = load_block(bytes);
        filled += 1;
    }
    let loose_blocks = [
        (!partial.is_empty()).then(|| tier.load_last_partial(data)),
        last,
    ];
    for (slot, block) in loose[filled..]
        .iter_mut()
        .zip(loose_blocks.into_iter().flatten())
    {
        *slot = block;
    }
    let n = rest.len() + usize::from(!partial.is_empty()) + usize::from(last.is_some());
    // The closure is inlined by force: left out of line at width 4 (LLVM's heuristics found
    // it too big), it was compiled without the instance's target features and every intrinsic
    // in it became a call.
    absorb_each::<W, L>(
        tier,
        key,
        s,
        n,
        #[inline(always)]
        |r| match registers.get(r) {
            Some(bytes) => tier.load(bytes),
            None => tier.gather(|i| loose[(r - registers.len()) * W::BLOCKS + i]),
        },
    )
}
