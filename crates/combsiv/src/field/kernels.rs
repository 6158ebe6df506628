//! POLYVAL with carry-less multiplication on the vector tiers, written once over [`Tier`]
//! (PCLMULQDQ on XMM registers for AES-NI, VPCLMULQDQ on YMM registers, two blocks each, for
//! VAES, and on ZMM registers, four each, for AVX-512) and instantiated per tier by
//! [`per_tier!`]. Math: see the parent module.
//!
//! Design:
//! - Aggregation: a stride of [`STRIDE`] registers (8 blocks on AES-NI, 16 with VAES, 32 with
//!   AVX-512) is
//!   multiplied by `H^n..H^1`, summed unreduced, and reduced once.
//! - Karatsuba: each 128x128 product takes three 64x64 multiplications, not four:
//!   `a.lo*h.lo`, `a.hi*h.hi` and `(a.lo^a.hi)*(h.lo^h.hi)`, whose XOR with the first two is
//!   the middle term. `h.lo^h.hi` is precomputed with the powers, so a block costs three
//!   carry-less multiplications, one shuffle and one XOR. On Zen 3, where VPCLMULQDQ (two
//!   cycles per YMM instruction) shares its two pipes with VAES, these multiplications are
//!   what a stitched loop spends most of its time on: 24 per 16 blocks instead of 32.
//! - The sums are folded across the blocks of a register before the one reduction, which then
//!   runs on 128 bits.
//! - The powers are stored in the order the loops read them: descending, `H^k` at entry
//!   `MAX_POWERS - k`, then zero entries. A register loaded at entry `MAX_POWERS - k` holds
//!   `H^k, H^(k-1), ...`, which is what a group of `k` blocks multiplies its first register
//!   by; a group whose count is not a multiple of the width ends on the zero entries, next to
//!   zero-padded blocks. The same table serves every width.
//! - GCM-SIV has a fresh hash key per message, so the table is built per message, only as far
//!   as the message needs, by repeated doubling (`H^(m+1..2m) = H^m * H^(1..m)`, a register
//!   of powers per product): 16 powers take four dependent products.

use zeroize::Zeroize;

use crate::cpu::{
    Block, MAX_BLOCKS, Narrow, STRIDE, Tier, TierToken, block_from, load_block, load_last_partial,
    per_tier, store_block,
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
    /// GCM-SIV drops a table per message, and short ones use few entries.
    fn drop(&mut self) {
        let written = MAX_POWERS - self.count.min(MAX_POWERS)..MAX_POWERS;
        for entry in &mut self.powers[written.clone()] {
            entry.zeroize();
        }
        for entry in &mut self.karatsuba[written] {
            entry.zeroize();
        }
    }
}

impl PowerTable {
    pub(crate) fn new(tier: TierToken, h: &[u8; 16], blocks: usize) -> Self {
        build_key(tier, h, blocks)
    }

    pub(crate) fn absorb<L: Layout>(&self, tier: TierToken, acc: &mut u128, blocks: &[[u8; 16]]) {
        absorb_blocks::<L>(tier, self, acc, blocks);
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
fn build_key_kernel<W: Tier>(width: W, h: &[u8; 16], blocks: usize) -> PowerTable {
    powers_of(width, load_block(h), blocks)
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
    width: W,
    key: &PowerTable,
    acc: &mut u128,
    blocks: &[[u8; 16]],
) {
    let data = (blocks.as_flattened(), 0);
    let s = absorb_padded::<W, L>(width, key, block_from(*acc), data, None);
    *acc = u128::from_le_bytes(store_block(s));
}

/// `H^1..H^count` for `count = blocks` clamped to `W::BLOCKS..=W::POWERS` (see the module comment).
#[inline(always)]
pub(crate) fn powers_of<W: Tier>(width: W, h: Block, blocks: usize) -> PowerTable {
    let mut key = PowerTable::empty(width.narrow());
    fill_powers(width, &mut key, h, blocks);
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
pub(crate) fn fill_powers<W: Tier>(width: W, key: &mut PowerTable, h: Block, blocks: usize) {
    let narrow = width.narrow();
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
    let mut registers = [width.zero(); STRIDE];
    let initial = base / W::BLOCKS;
    for (r, register) in registers.iter_mut().enumerate().take(initial) {
        *register = width.load_blocks(first, base - (r + 1) * W::BLOCKS);
    }
    let mut count = initial;
    for level in base.ilog2()..W::POWERS.ilog2() {
        let m = 1 << level;
        if m / W::BLOCKS >= needed {
            break;
        }
        // H^m is the highest power of register m / BLOCKS - 1, its block 0.
        let h_m = width.broadcast(width.block(registers[m / W::BLOCKS - 1], 0));
        let h_m = (h_m, width.xor(h_m, width.swap_halves(h_m)));
        for j in 0..m / W::BLOCKS {
            if m / W::BLOCKS + j < needed {
                let product = karatsuba_dot(width, registers[j], h_m);
                registers[m / W::BLOCKS + j] = product;
                count = m / W::BLOCKS + j + 1;
            }
        }
    }
    for (r, &register) in registers.iter().enumerate().take(count) {
        let entry = MAX_POWERS - (r + 1) * W::BLOCKS;
        width.store_blocks(register, &mut key.powers, entry);
        let karatsuba = width.xor(register, width.swap_halves(register));
        width.store_blocks(karatsuba, &mut key.karatsuba, entry);
    }
    key.count = count * W::BLOCKS;
}

/// The most powers [`fill_powers`] computes one block at a time: one register of the widest
/// tier, and at least 2.
const FIRST_POWERS: usize = if MAX_BLOCKS > 2 { MAX_BLOCKS } else { 2 };

/// The unreduced 256-bit products `a * b` of each block as (low, middle, high), schoolbook.
#[inline(always)]
pub(crate) fn mul<W: Tier>(width: W, a: W::Reg, b: W::Reg) -> [W::Reg; 3] {
    let low = width.clmul::<0x00>(a, b);
    let high = width.clmul::<0x11>(a, b);
    let middle = width.xor(width.clmul::<0x01>(a, b), width.clmul::<0x10>(a, b));
    [low, middle, high]
}

/// Montgomery reduction of each block's `high:low` (with the middle product folded in) by
/// `x^128`: two folds by `c = x^63 + x^62 + x^57` (parent module).
#[inline(always)]
pub(crate) fn reduce<W: Tier>(width: W, [low, middle, high]: [W::Reg; 3]) -> W::Reg {
    let low = width.xor(low, width.low_half_up(middle));
    let high = width.xor(high, width.high_half_down(middle));
    // The high 64 bits hold c; selector 0x10 multiplies low64(a) by it.
    let c = width.broadcast(block_from(0xC200_0000_0000_0000 << 64));
    // Fold word 0: swap the words so v0 sits where v0 * x^128 lands, add v0 * c at word 1.
    let fold = width.clmul::<0x10>(low, c);
    let low = width.xor(width.swap_halves(low), fold);
    // Fold word 1 the same way; the result is what remains above x^128.
    let fold = width.clmul::<0x10>(low, c);
    let low = width.xor(width.swap_halves(low), fold);
    width.xor(low, high)
}

#[inline(always)]
pub(crate) fn dot(narrow: Narrow, a: Block, b: Block) -> Block {
    reduce(narrow, mul(narrow, a, b))
}

/// `dot(a, a)` of each block: two multiplications, the cross terms cancelling (parent
/// module).
#[inline(always)]
pub(crate) fn square<W: Tier>(width: W, a: W::Reg) -> W::Reg {
    let low = width.clmul::<0x00>(a, a);
    let high = width.clmul::<0x11>(a, a);
    reduce(width, [low, width.zero(), high])
}

/// `dot(a, b)` of each block by Karatsuba (three multiplications); `b_karatsuba` is `b` with
/// each block's halves XORed, for a `b` that serves several products.
#[inline(always)]
fn karatsuba_dot<W: Tier>(width: W, a: W::Reg, (b, b_karatsuba): (W::Reg, W::Reg)) -> W::Reg {
    let mut sums = [width.zero(); 3];
    accumulate_product(width, &mut sums, a, (b, b_karatsuba));
    reduce_sums(width, sums)
}

/// Unreduced sums of Karatsuba products: low, Karatsuba middle, high.
pub(crate) type Sums<W> = [<W as Tier>::Reg; 3];

/// Adds the product of register `j` of a group of `n` blocks (`x`, with the running state
/// already added to its first block) and its powers to `sums`.
#[inline(always)]
pub(crate) fn accumulate<W: Tier>(
    width: W,
    key: &PowerTable,
    sums: &mut Sums<W>,
    (n, j): (usize, usize),
    x: W::Reg,
) {
    let entry = MAX_POWERS - n + j * W::BLOCKS;
    let h = width.load_blocks(&key.powers, entry);
    let h_karatsuba = width.load_blocks(&key.karatsuba, entry);
    accumulate_product(width, sums, x, (h, h_karatsuba));
}

/// Adds the Karatsuba products of each block of `x` and of `h` to `sums`; `h_karatsuba` is
/// `h` with each block's halves XORed (its low half is `h.lo ^ h.hi`).
#[inline(always)]
pub(crate) fn accumulate_product<W: Tier>(
    width: W,
    sums: &mut Sums<W>,
    x: W::Reg,
    (h, h_karatsuba): (W::Reg, W::Reg),
) {
    sums[0] = width.xor(sums[0], width.clmul::<0x00>(x, h));
    sums[2] = width.xor(sums[2], width.clmul::<0x11>(x, h));
    let x_karatsuba = width.xor(x, width.swap_halves(x));
    sums[1] = width.xor(sums[1], width.clmul::<0x00>(x_karatsuba, h_karatsuba));
}

/// The reduced sum: blocks folded together, then [`reduce_sums`].
#[inline(always)]
pub(crate) fn reduce_and_fold<W: Tier>(width: W, [low, middle, high]: Sums<W>) -> Block {
    let folded = [
        width.sum_blocks(low),
        width.sum_blocks(middle),
        width.sum_blocks(high),
    ];
    reduce_sums(width.narrow(), folded)
}

/// Each block's reduced sum: Karatsuba's middle term completed, one reduction.
#[inline(always)]
pub(crate) fn reduce_sums<W: Tier>(width: W, [low, middle, high]: Sums<W>) -> W::Reg {
    let middle = width.xor(middle, width.xor(low, high));
    reduce(width, [low, middle, high])
}

/// Register `x` of hashed data as POLYVAL reads it (byte-reversed for GHASH), with the
/// running state `s` added to its first block when it is the first register of a group.
#[inline(always)]
pub(crate) fn hashed_register<W: Tier, L: Layout>(width: W, x: W::Reg, s: Option<Block>) -> W::Reg {
    let mut x = x;
    if L::GCM {
        let reverse = load_block(&[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        x = width.shuffle_bytes(x, width.broadcast(reverse));
    }
    match s {
        Some(s) => width.xor(x, width.gather(|i| if i == 0 { s } else { block_from(0) })),
        None => x,
    }
}

/// One whole stride: `S' = (S + X_1)*H^n + ... + X_n*H^1` with `n = W::POWERS`.
#[inline(always)]
pub(crate) fn absorb_stride<W: Tier, L: Layout>(
    width: W,
    key: &PowerTable,
    s: Block,
    stride: &[W::Bytes; STRIDE],
) -> Block {
    let mut sums = [width.zero(); 3];
    // Register 0, which carries `s`, comes last: the previous stride's reduction then has
    // the other registers' multiplies to overlap with, rather than starting every sum's
    // chain of additions (Neoverse V1 in llvm-mca: 32.1 cycles per stride in order, 26.1 so).
    for (j, bytes) in stride.iter().enumerate().skip(1) {
        let x = hashed_register::<W, L>(width, width.load(bytes), None);
        accumulate(width, key, &mut sums, (W::POWERS, j), x);
    }
    let x = hashed_register::<W, L>(width, width.load(&stride[0]), Some(s));
    accumulate(width, key, &mut sums, (W::POWERS, 0), x);
    reduce_and_fold(width, sums)
}

/// Absorbs the `n` blocks of registers `register(0..)` into `s` in groups as large as the
/// table allows. Groups start on register boundaries (the table's count is a multiple of
/// `W::BLOCKS`); a register's blocks at or past `n` meet the table's zero entry, so their
/// contents do not matter.
#[inline(always)]
pub(crate) fn absorb_each<W: Tier, L: Layout>(
    width: W,
    key: &PowerTable,
    mut s: Block,
    n: usize,
    register: impl Fn(usize) -> W::Reg,
) -> Block {
    let group = key.count.min(W::POWERS);
    let mut start = 0;
    while start < n {
        let len = (n - start).min(group);
        let mut sums = [width.zero(); 3];
        for j in 0..len.div_ceil(W::BLOCKS) {
            let x = register(start / W::BLOCKS + j);
            let x = hashed_register::<W, L>(width, x, (j == 0).then_some(s));
            accumulate(width, key, &mut sums, (len, j), x);
        }
        s = reduce_and_fold(width, sums);
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
    width: W,
    key: &PowerTable,
    mut s: Block,
    (data, start): (&[u8], usize),
    last: Option<Block>,
) -> Block {
    let narrow = width.narrow();
    let (blocks, partial) = data[start..].as_chunks::<16>();
    let mut rest = blocks;
    if key.covers_stride::<W>() {
        let whole = blocks.len() / W::POWERS * W::POWERS;
        let (body, tail) = blocks.split_at(whole);
        for stride in W::registers(body.as_flattened()).0.as_chunks::<STRIDE>().0 {
            s = absorb_stride::<W, L>(width, key, s, stride);
        }
        rest = tail;
    }
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
        (!partial.is_empty()).then(|| load_last_partial(narrow, data)),
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
    s = absorb_each::<W, L>(
        width,
        key,
        s,
        n,
        #[inline(always)]
        |r| match registers.get(r) {
            Some(bytes) => width.load(bytes),
            None => width.gather(|i| loose[(r - registers.len()) * W::BLOCKS + i]),
        },
    );
    s
}
