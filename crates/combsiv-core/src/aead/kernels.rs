//! Fused AEAD kernels on the vector tiers, written once over [`Tier`] and instantiated per
//! tier by [`per_tier!`] (on x86: AES-NI, one block per XMM register, and VAES, two per YMM
//! register). Field math: `field/mod.rs`.
//!
//! Design, with the numbers behind it (Zen 3, from `llvm-mca -mcpu=znver3` and checked on the
//! hardware: `vaesenc ymm` 0.5 cycles per instruction, latency 4; `vpclmulqdq ymm` 2 cycles,
//! latency 4; the two share the same two pipes. Cascade Lake, AES-NI only: AESENC ~1 per
//! cycle, latency 4; PCLMULQDQ ~1 per cycle, latency ~7, on another port):
//! - `derive_record_keys`: RFC 8452's 4 or 6 derivation blocks are encrypted as one batch and
//!   never leave registers; the record encryption key is expanded from them directly, and out
//!   of order execution overlaps that expansion with building the POLYVAL table from the
//!   authentication key, and the tag block's rounds with the last expansion steps.
//! - A stride is [`STRIDE`] registers: 8 blocks on AES-NI, 16 with VAES, 32 with AVX-512.
//!   Per 16 blocks of AES-128 with VAES that is 88 AES instructions (44 cycles) and, with
//!   Karatsuba, 24 multiplications plus 2 for the reduction (50 cycles): ~0.37 core cycles per
//!   byte, the floor on Zen 3, where stitching cannot overlap the two (shared pipes) but costs
//!   nothing.
//! - `ctr_and_hash`: one pass over memory. Each iteration encrypts a stride of counter blocks
//!   and multiplies a stride of hashed registers by their powers, *interleaved in program
//!   order* (one register's multiplies after each AES round). On Cascade Lake, issuing them
//!   back to back measured as no overlap at all (CTR 0.51 + POLYVAL 0.25 = fused 0.75 c/B,
//!   interleaved 0.65): the AESENCs fill the scheduler and the multiplies cannot start.
//!   GCM-SIV's open and GCM's seal hash their own output, [`Tier::HASH_LAG`] strides behind
//!   the counter mode (re-read from L1); GCM's open hashes its input, fetched once into
//!   registers that both the hash and the XOR read, so that ciphertext another thread
//!   changes meanwhile cannot be decrypted without being hashed.
//! - GCM-SIV's seal cannot stitch (the counter is the tag, which needs the whole hash): a
//!   hash pass, then a counter-mode pass, both full width.
//! - Short messages run at width 1 even on VAES: a message of one stride of XMM registers
//!   or less gains nothing from wide registers, whose broadcasts and cross-lane folds only
//!   add latency.

use aead::inout::InOutBuf;
use zeroize::Zeroize;

use super::Hashed;
use crate::aes::AesKeySize;
use crate::aes::ctr::{
    Counter, Tail, TailInput, apply_keystream, apply_keystream_sized, load_registers,
    store_xor_stride, stride, stride_bytes, xor_stride, xor_tail,
};
use crate::aes::kernels::{RoundKeys, broadcast, encrypt};
use crate::aes::key_expansion::{KeySchedule, expand_key};
use crate::cpu::{
    Block, MAX_BLOCKS, Narrow, STRIDE, Tier, block_from, load_block, per_tier, store_block,
};
use crate::field::kernels::{
    PowerTable, StrideInMemory, Sums, absorb_each, absorb_padded, absorb_padded_copying,
    absorb_stride, accumulate, accumulate_schoolbook, dot, fill_powers, hashed_register,
    karatsuba_input, mul, reduce, reduce_and_fold, square, stride_register,
};
use crate::layout::{Layout, SivLayout};

/// What a whole GCM-SIV seal or open needs besides the buffer.
pub(crate) struct SivMessage<'a> {
    pub(crate) key_generating_key: &'a RoundKeys,
    pub(crate) nonce: &'a [u8; 12],
    pub(crate) aad: &'a [u8],
}

impl<'a> SivMessage<'a> {
    pub(crate) fn new(
        key_generating_key: &'a RoundKeys,
        nonce: &'a [u8; 12],
        aad: &'a [u8],
    ) -> Self {
        SivMessage {
            key_generating_key,
            nonce,
            aad,
        }
    }

    /// Blocks POLYVAL reads: the padded AAD and plaintext, and the length block.
    fn hashed_blocks(&self, plaintext_len: usize) -> usize {
        self.aad.len().div_ceil(16) + plaintext_len.div_ceil(16) + 1
    }
}

per_tier! {
    /// RFC 8452 Section 4, a whole seal in one function: key derivation, the POLYVAL table,
    /// POLYVAL over AAD, plaintext and length block, the tag, and CTR, with no intermediate
    /// state leaving registers or the stack frame.
    pub(crate) fn gcm_siv_seal(
        message: &SivMessage<'_>,
        buf: InOutBuf<'_, '_, u8>,
    ) -> [u8; 16] = seal_whole;
}

per_tier! {
    /// [`gcm_siv_seal`] of `plaintext` into `ciphertext` (as long), reading each plaintext
    /// byte once: POLYVAL's pass writes what it hashed into `ciphertext`
    /// ([`absorb_padded_copying`]) and counter mode then runs there in place (a short message
    /// is copied first). A plaintext another thread changes meanwhile still gives a ciphertext
    /// that opens; reading it twice, once per pass, would not.
    pub(crate) fn gcm_siv_seal_copying(
        message: &SivMessage<'_>,
        plaintext: &[u8],
        ciphertext: &mut [u8],
    ) -> [u8; 16] = seal_whole_copying;
}

per_tier! {
    /// RFC 8452 Section 5, a whole open in one function: key derivation, CTR from the received
    /// tag fused with POLYVAL over the plaintext, and the tag the message should have. The
    /// caller compares it in constant time and wipes `buf` on a mismatch. `SCHOOLBOOK`: the
    /// stitched loop's products ([`TierToken::schoolbook_stitched`](crate::cpu::TierToken)).
    pub(crate) fn gcm_siv_open<const SCHOOLBOOK: bool>(
        message: &SivMessage<'_>,
        buf: InOutBuf<'_, '_, u8>,
        received_tag: &[u8; 16],
    ) -> [u8; 16] = open_whole;
}

/// Messages whose POLYVAL input (padded AAD, padded plaintext, length block) is at most
/// [`Tier::SIV_SHORT_CHUNKS`] chunks of this many blocks take the short path: everything in
/// narrow registers, no table, one reduction per chunk against the same powers. Up to one
/// chunk it waits only on its powers (a product tree of depth 3).
const SHORT_CHUNK: usize = <Narrow as Tier>::POWERS;

/// The most chunks a tier may send down the short path: the instances below.
const MAX_SHORT_CHUNKS: usize = 3;

/// Whether GCM runs a message of `blocks` blocks on the narrow tier.
#[inline(always)]
fn is_short<W: Tier>(blocks: usize) -> bool {
    blocks <= W::GCM_NARROW_BLOCKS
}

/// The chunks of [`SHORT_CHUNK`] blocks a message's POLYVAL input fills (at least one).
#[inline(always)]
fn chunks_of(message: &SivMessage<'_>, plaintext_len: usize) -> usize {
    message.hashed_blocks(plaintext_len).div_ceil(SHORT_CHUNK)
}

#[inline(always)]
fn seal_whole<W: Tier>(tier: W, message: &SivMessage<'_>, buf: InOutBuf<'_, '_, u8>) -> [u8; 16] {
    const { assert!(W::SIV_SHORT_CHUNKS <= MAX_SHORT_CHUNKS) };
    let single = tier.single();
    match (
        chunks_of(message, buf.len()),
        message.key_generating_key.size(),
    ) {
        (chunks, AesKeySize::Aes128) if chunks > W::SIV_SHORT_CHUNKS => {
            seal_rounds::<W, 10>(tier, message, (None, buf))
        }
        (chunks, AesKeySize::Aes256) if chunks > W::SIV_SHORT_CHUNKS => {
            seal_rounds::<W, 14>(tier, message, (None, buf))
        }
        (1, AesKeySize::Aes128) => seal_short::<_, 10, 1>(single, message, buf),
        (1, AesKeySize::Aes256) => seal_short::<_, 14, 1>(single, message, buf),
        (2, AesKeySize::Aes128) => seal_short::<_, 10, 2>(single, message, buf),
        (2, AesKeySize::Aes256) => seal_short::<_, 14, 2>(single, message, buf),
        (_, AesKeySize::Aes128) => seal_short::<_, 10, 3>(single, message, buf),
        (_, AesKeySize::Aes256) => seal_short::<_, 14, 3>(single, message, buf),
    }
}

#[inline(always)]
fn seal_whole_copying<W: Tier>(
    tier: W,
    message: &SivMessage<'_>,
    plaintext: &[u8],
    ciphertext: &mut [u8],
) -> [u8; 16] {
    let text = (Some(plaintext), ciphertext.into());
    match (
        chunks_of(message, plaintext.len()),
        message.key_generating_key.size(),
    ) {
        (chunks, AesKeySize::Aes128) if chunks > W::SIV_SHORT_CHUNKS => {
            seal_rounds::<W, 10>(tier, message, text)
        }
        (chunks, AesKeySize::Aes256) if chunks > W::SIV_SHORT_CHUNKS => {
            seal_rounds::<W, 14>(tier, message, text)
        }
        _ => {
            ciphertext.copy_from_slice(plaintext);
            seal_whole(tier, message, ciphertext.into())
        }
    }
}

#[inline(always)]
fn open_whole<W: Tier, const SCHOOLBOOK: bool>(
    tier: W,
    message: &SivMessage<'_>,
    buf: InOutBuf<'_, '_, u8>,
    received_tag: &[u8; 16],
) -> [u8; 16] {
    const { assert!(W::SIV_SHORT_CHUNKS <= MAX_SHORT_CHUNKS) };
    let single = tier.single();
    match (
        chunks_of(message, buf.len()),
        message.key_generating_key.size(),
    ) {
        (chunks, AesKeySize::Aes128) if chunks > W::SIV_SHORT_CHUNKS => {
            open_rounds::<W, 10, SCHOOLBOOK>(tier, message, buf, received_tag)
        }
        (chunks, AesKeySize::Aes256) if chunks > W::SIV_SHORT_CHUNKS => {
            open_rounds::<W, 14, SCHOOLBOOK>(tier, message, buf, received_tag)
        }
        (1, AesKeySize::Aes128) => open_short::<_, 10, 1>(single, message, buf, received_tag),
        (1, AesKeySize::Aes256) => open_short::<_, 14, 1>(single, message, buf, received_tag),
        (2, AesKeySize::Aes128) => open_short::<_, 10, 2>(single, message, buf, received_tag),
        (2, AesKeySize::Aes256) => open_short::<_, 14, 2>(single, message, buf, received_tag),
        (_, AesKeySize::Aes128) => open_short::<_, 10, 3>(single, message, buf, received_tag),
        (_, AesKeySize::Aes256) => open_short::<_, 14, 3>(single, message, buf, received_tag),
    }
}

/// The short seal of a message of `CHUNKS` chunks: derivation, POLYVAL with the powers in
/// registers, tag, counter mode. Its critical path is the derivation (~44 cycles for
/// AES-128), the record-key expansion (~60; POLYVAL runs beside it), the tag's last round and
/// one more AES for the keystream (~44): nothing else may add to it. POLYVAL comes first in
/// program order so that its multiplications, which need only the authentication key, issue
/// early.
#[inline(always)]
fn seal_short<S: Tier<Reg = Block>, const ROUNDS: usize, const CHUNKS: usize>(
    single: S,
    message: &SivMessage<'_>,
    buf: InOutBuf<'_, '_, u8>,
) -> [u8; 16] {
    let narrow = single.narrow();
    let keys = derive_record_keys::<ROUNDS>(narrow, message.key_generating_key, message.nonce);
    let s = polyval_short::<S, CHUNKS>(single, keys.authentication, message.aad, buf.get_in());
    let mut encryption = keys.expand(narrow);
    let tag = tag_of::<ROUNDS>(narrow, &encryption, s, message.nonce);
    let mut counter = Counter::<S, SivLayout>::new(single, counter_block(narrow, tag));
    short_keystream::<S, ROUNDS, CHUNKS>(single, &encryption, &mut counter, buf);
    encryption.zeroize();
    store_block(tag)
}

/// The short open: as [`seal_short`], with counter mode first and POLYVAL over its output.
#[inline(always)]
fn open_short<S: Tier<Reg = Block>, const ROUNDS: usize, const CHUNKS: usize>(
    single: S,
    message: &SivMessage<'_>,
    mut buf: InOutBuf<'_, '_, u8>,
    received_tag: &[u8; 16],
) -> [u8; 16] {
    let narrow = single.narrow();
    let keys = derive_record_keys::<ROUNDS>(narrow, message.key_generating_key, message.nonce);
    let mut encryption = keys.expand(narrow);
    let counter = counter_block(narrow, load_block(received_tag));
    let mut counter = Counter::<S, SivLayout>::new(single, counter);
    short_keystream::<S, ROUNDS, CHUNKS>(single, &encryption, &mut counter, buf.reborrow());
    let s = polyval_short::<S, CHUNKS>(single, keys.authentication, message.aad, buf.get_out());
    let tag = tag_of::<ROUNDS>(narrow, &encryption, s, message.nonce);
    encryption.zeroize();
    store_block(tag)
}

/// Counter mode over a short message's text: less than one stride in one chunk, so one
/// partial stride ([`xor_tail`]; through the loop over strides, which does the same work
/// here, a seal of 64 bytes took 14-21 more cycles on Zen 3 and one of 112 bytes 22-32);
/// one stride more per further chunk.
#[inline(always)]
fn short_keystream<S: Tier<Reg = Block>, const ROUNDS: usize, const CHUNKS: usize>(
    single: S,
    encryption: &KeySchedule,
    counter: &mut Counter<S, SivLayout>,
    buf: InOutBuf<'_, '_, u8>,
) {
    if CHUNKS == 1 {
        xor_tail::<S, SivLayout, ROUNDS>(single, encryption, counter, buf, Tail::buffer(0));
    } else {
        apply_keystream::<S, SivLayout, ROUNDS>(single, encryption, counter, buf);
    }
}

/// POLYVAL(H, AAD, text, length block) for n <= `CHUNKS` * [`SHORT_CHUNK`] blocks: the
/// powers H^1..H^min(n, 8) by a product tree (depth 3 for eight), then one aggregated sum and
/// one reduction per chunk of eight blocks. Horner's rule over the chunks: a chunk's sum S
/// (each block times H^8..H^1) enters the next chunk's sum as S * H^8, since the true powers
/// of its blocks are H^8 times those. The loops run over constant indices with tests of n
/// (public), so the code is straight-line and the powers stay in registers; the blocks go
/// through a small array (16-byte stores and loads, which store forwarding serves) because
/// their positions depend on the lengths.
#[inline(always)]
fn polyval_short<S: Tier<Reg = Block>, const CHUNKS: usize>(
    single: S,
    h: Block,
    aad: &[u8],
    text: &[u8],
) -> Block {
    const POWERS: usize = SHORT_CHUNK;
    let narrow = single.narrow();
    let n = aad.len().div_ceil(16) + text.len().div_ceil(16) + 1;
    let capacity = CHUNKS * POWERS;
    // Block i is multiplied by H^(n - i); blocks[capacity - n..] hold the input.
    let mut chunks = [[narrow.zero(); POWERS]; CHUNKS];
    let blocks = chunks.as_flattened_mut();
    let mut next = capacity - n;
    for part in [aad, text] {
        let (whole, partial) = part.as_chunks::<16>();
        for block in whole {
            blocks[next] = load_block(block);
            next += 1;
        }
        if !partial.is_empty() {
            blocks[next] = single.load_last_partial(part);
            next += 1;
        }
    }
    blocks[next] = length_block(aad.len(), text.len());
    let mut powers = [h; POWERS];
    if n > 1 {
        powers[1] = square(narrow, h);
    }
    if n > 2 {
        powers[2] = dot(narrow, powers[1], h);
    }
    if n > 3 {
        powers[3] = square(narrow, powers[1]);
    }
    for i in 4..POWERS {
        if n > i {
            powers[i] = dot(narrow, powers[3], powers[i - 4]);
        }
    }
    // Horner's rule over the chunks, one reduction each: S = S * H^8 + the chunk's blocks
    // times H^8..H^1. Blocks before capacity - n hold no input, and chunks of none are
    // skipped. (The last chunk apart: looping over all of them cost one chunk's messages
    // about 57 more instructions.)
    let empty = capacity - n;
    let mut s = None;
    let mut sums = [narrow.zero(); 3];
    if let Some((last, before)) = chunks.split_last() {
        for (c, chunk) in before.iter().enumerate() {
            let first = empty.saturating_sub(c * POWERS);
            if first < POWERS {
                let mut chunk_sums = [narrow.zero(); 3];
                add_products(narrow, &mut chunk_sums, chunk, (&powers, first));
                if let Some(s) = s {
                    add_product(narrow, &mut chunk_sums, s, powers[POWERS - 1]);
                }
                s = Some(reduce(narrow, chunk_sums));
            }
        }
        let first = empty.saturating_sub(before.len() * POWERS);
        add_products(narrow, &mut sums, last, (&powers, first));
        if let Some(s) = s {
            add_product(narrow, &mut sums, s, powers[POWERS - 1]);
        }
    }
    chunks.zeroize();
    reduce(narrow, sums)
}

/// Adds `blocks[i] * H^(8 - i)` to `sums` for the blocks from `first` on, H^k being
/// `powers[k - 1]`: a loop of constant length with a test of `first` (public), which unrolls
/// into straight-line code. (A function, not a closure: a closure's body would not inherit
/// the kernel's target features.)
#[inline(always)]
fn add_products<const POWERS: usize>(
    narrow: Narrow,
    sums: &mut [Block; 3],
    blocks: &[Block; POWERS],
    (powers, first): (&[Block; POWERS], usize),
) {
    for (i, &block) in blocks.iter().enumerate() {
        if i >= first {
            add_product(narrow, sums, block, powers[POWERS - 1 - i]);
        }
    }
}

/// Adds the unreduced product `a * b` to `sums`.
#[inline(always)]
fn add_product(narrow: Narrow, sums: &mut [Block; 3], a: Block, b: Block) {
    for (sum, part) in sums.iter_mut().zip(mul(narrow, a, b)) {
        *sum = narrow.xor(*sum, part);
    }
}

/// RFC 8452 Section 4's record keys as values: the authentication key, and the encryption
/// key before expansion (its second half for AES-256).
struct RecordKeyRegisters {
    authentication: Block,
    encryption: (Block, Option<Block>),
}

/// The record keys are per-message secrets: what of them the compiler put on the stack is
/// wiped when they go.
impl Drop for RecordKeyRegisters {
    fn drop(&mut self) {
        self.authentication.zeroize();
        self.encryption.0.zeroize();
        if let Some(high) = self.encryption.1.as_mut() {
            high.zeroize();
        }
    }
}

impl RecordKeyRegisters {
    /// The expanded record encryption key.
    #[inline(always)]
    fn expand(&self, narrow: Narrow) -> KeySchedule {
        expand_key(narrow, self.encryption.0, self.encryption.1)
    }
}

/// RFC 8452 Section 4 in registers: the first halves of AES(LE32(i) || nonce) for i < 4 (or
/// 6, when `ROUNDS` is 14: the record keys are as long as the key-generating key), encrypted
/// as one batch.
#[inline(always)]
fn derive_record_keys<const ROUNDS: usize>(
    narrow: Narrow,
    key_generating_key: &RoundKeys,
    nonce: &[u8; 12],
) -> RecordKeyRegisters {
    // Block i is LE32(i) || nonce.
    let nonce = nonce_value(nonce) << 32;
    let block = |i: u128| block_from(nonce | i);
    // The first eight bytes of blocks 2i and 2i+1 form one 16-byte key part.
    let halves = |a: Block, b: Block| narrow.low_halves(a, b);
    let keys = key_generating_key.schedule();
    if ROUNDS == 14 {
        let mut blocks = [block(0), block(1), block(2), block(3), block(4), block(5)];
        encrypt(narrow, keys, ROUNDS, &mut blocks);
        RecordKeyRegisters {
            authentication: halves(blocks[0], blocks[1]),
            encryption: (
                halves(blocks[2], blocks[3]),
                Some(halves(blocks[4], blocks[5])),
            ),
        }
    } else {
        let mut blocks = [block(0), block(1), block(2), block(3)];
        encrypt(narrow, keys, ROUNDS, &mut blocks);
        RecordKeyRegisters {
            authentication: halves(blocks[0], blocks[1]),
            encryption: (halves(blocks[2], blocks[3]), None),
        }
    }
}

/// What seal and open share before their passes over the text: the record encryption key
/// (also broadcast into `wide_keys` for the counter mode of width `W`), `hash_key` filled with
/// the POLYVAL table this message needs, and POLYVAL's state after the padded AAD.
///
/// The broadcast keys are made observable before the table is built: otherwise LLVM sinks the
/// encryption key's derivation and expansion to where the tag needs them, after the whole hash
/// pass, and their ~140 cycles of latency (AES-256) follow it instead of overlapping it.
#[inline(always)]
pub(crate) fn record_keys_and_aad<W: Tier, const ROUNDS: usize>(
    tier: W,
    message: &SivMessage<'_>,
    plaintext_len: usize,
    (hash_key, wide_keys): (&mut PowerTable, &mut [W::Reg; 15]),
) -> (KeySchedule, Block) {
    let keys =
        derive_record_keys::<ROUNDS>(tier.narrow(), message.key_generating_key, message.nonce);
    let encryption = keys.expand(tier.narrow());
    *wide_keys = broadcast(tier, &encryption);
    core::hint::black_box(&*wide_keys);
    let blocks = message.hashed_blocks(plaintext_len);
    fill_powers(tier, hash_key, keys.authentication, blocks);
    let s = absorb_padded::<W, SivLayout>(tier, hash_key, block_from(0), (message.aad, 0), None);
    (encryption, s)
}

/// The long seal. `plaintext`: read from there once, into `buf`'s output, where counter mode
/// then runs in place ([`gcm_siv_seal_copying`]); `None`: `buf`'s input, read by both passes.
#[inline(always)]
fn seal_rounds<W: Tier, const ROUNDS: usize>(
    tier: W,
    message: &SivMessage<'_>,
    (plaintext, mut buf): (Option<&[u8]>, InOutBuf<'_, '_, u8>),
) -> [u8; 16] {
    let mut hash_key = PowerTable::empty(tier.narrow());
    let mut keys = [tier.zero(); 15];
    let (mut encryption, s) =
        record_keys_and_aad::<W, ROUNDS>(tier, message, buf.len(), (&mut hash_key, &mut keys));
    let lengths = Some(length_block(message.aad.len(), buf.len()));
    let s = match plaintext {
        Some(plaintext) => {
            let text = (plaintext, buf.get_out());
            absorb_padded_copying::<W, SivLayout>(tier, &hash_key, s, text, lengths)
        }
        None => absorb_padded::<W, SivLayout>(tier, &hash_key, s, (buf.get_in(), 0), lengths),
    };
    let tag = tag_of::<ROUNDS>(tier.narrow(), &encryption, s, message.nonce);
    encryption.zeroize();
    let mut counter = Counter::<W, SivLayout>::new(tier, counter_block(tier.narrow(), tag));
    apply_keystream::<W, SivLayout, ROUNDS>(tier, &keys, &mut counter, buf);
    keys.zeroize();
    store_block(tag)
}

#[inline(always)]
fn open_rounds<W: Tier, const ROUNDS: usize, const SCHOOLBOOK: bool>(
    tier: W,
    message: &SivMessage<'_>,
    buf: InOutBuf<'_, '_, u8>,
    received_tag: &[u8; 16],
) -> [u8; 16] {
    let mut hash_key = PowerTable::empty(tier.narrow());
    let mut keys = [tier.zero(); 15];
    let (mut encryption, s) =
        record_keys_and_aad::<W, ROUNDS>(tier, message, buf.len(), (&mut hash_key, &mut keys));
    let lengths = length_block(message.aad.len(), buf.len());
    let counter = counter_block(tier.narrow(), load_block(received_tag));
    let mut counter = Counter::<W, SivLayout>::new(tier, counter);
    let s = ctr_and_hash_rounds::<W, SivLayout, true, ROUNDS, SCHOOLBOOK>(
        tier,
        (&keys, &hash_key),
        (s, &mut counter),
        buf,
        lengths,
    );
    keys.zeroize();
    let tag = tag_of::<ROUNDS>(tier.narrow(), &encryption, s, message.nonce);
    encryption.zeroize();
    store_block(tag)
}

/// Section 4: the length block, bit lengths of AAD and plaintext as little-endian 64-bit
/// integers.
#[inline(always)]
pub(crate) fn length_block(aad_len: usize, plaintext_len: usize) -> Block {
    block_from(u128::from(plaintext_len as u64 * 8) << 64 | u128::from(aad_len as u64 * 8))
}

/// The nonce as the low 96 bits of a little-endian integer, read as an 8-byte and a 4-byte
/// load: the stores that just wrote a nonce are usually split that way, and a load that
/// straddles two stores cannot be forwarded from them (see also [`block_from`]).
#[inline(always)]
pub(crate) fn nonce_value(nonce: &[u8; 12]) -> u128 {
    let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11] = *nonce;
    let low = u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
    let high = u32::from_le_bytes([b8, b9, b10, b11]);
    u128::from(low) | u128::from(high) << 64
}

/// Bit 7 of byte 15, the bit the tag clears and the counter block sets.
#[inline(always)]
pub(crate) fn top_bit() -> Block {
    block_from(1 << 127)
}

/// Section 4: the counter block is the tag with the top bit set.
#[inline(always)]
pub(crate) fn counter_block(narrow: Narrow, tag: Block) -> Block {
    narrow.or(tag, top_bit())
}

/// Section 4: tag = AES(record encryption key, (S xor nonce) with the top bit cleared).
#[inline(always)]
pub(crate) fn tag_of<const ROUNDS: usize>(
    narrow: Narrow,
    encryption: &KeySchedule,
    mut s: Block,
    nonce: &[u8; 12],
) -> Block {
    let mut tag = [narrow.and_not(top_bit(), narrow.xor(s, block_from(nonce_value(nonce))))];
    s.zeroize();
    encrypt(narrow, encryption, ROUNDS, &mut tag);
    tag[0]
}

per_tier! {
    /// XORs `data` with the keystream from the counter block `start.0` (whose count is
    /// `start.1` where that is public) and absorbs the `start.2` side of it, zero-padded,
    /// then the block `last`, into `acc`: GCM's layout (big-endian counter, GHASH block
    /// order) with `GcmLayout`, GCM-SIV's with `SivLayout`. `SCHOOLBOOK`: the stitched
    /// loop's products ([`TierToken::schoolbook_stitched`](crate::cpu::TierToken)).
    pub(crate) fn ctr_and_hash<L: Layout, const SCHOOLBOOK: bool>(
        aes: &RoundKeys,
        hash_key: &PowerTable,
        acc: &mut u128,
        start: (&[u8; 16], Option<u32>, Hashed),
        data: InOutBuf<'_, '_, u8>,
        last: &[u8; 16],
    ) = ctr_and_hash_kernel;
}

#[inline(always)]
fn ctr_and_hash_kernel<W: Tier, L: Layout, const SCHOOLBOOK: bool>(
    tier: W,
    aes: &RoundKeys,
    hash_key: &PowerTable,
    acc: &mut u128,
    (counter, public_count, hashed): (&[u8; 16], Option<u32>, Hashed),
    data: InOutBuf<'_, '_, u8>,
    last: &[u8; 16],
) {
    let hash = (hash_key, block_from(*acc), load_block(last));
    let counter = (counter, public_count);
    let s = if is_short::<W>(data.len().div_ceil(16) + 1) {
        ctr_and_hash_at::<W::Single, L, false>(tier.single(), aes, hash, counter, hashed, data)
    } else {
        ctr_and_hash_at::<W, L, SCHOOLBOOK>(tier, aes, hash, counter, hashed, data)
    };
    *acc = u128::from_le_bytes(store_block(s));
}

/// [`ctr_and_hash`] at width `W`: the stitched loop where the table covers a stride (GCM's
/// always does), otherwise the counter mode and then the hash of its output.
#[inline(always)]
fn ctr_and_hash_at<W: Tier, L: Layout, const SCHOOLBOOK: bool>(
    tier: W,
    aes: &RoundKeys,
    (hash_key, s, last): (&PowerTable, Block, Block),
    (counter, public_count): (&[u8; 16], Option<u32>),
    hashed: Hashed,
    mut data: InOutBuf<'_, '_, u8>,
) -> Block {
    let mut keys = broadcast(tier, aes.schedule());
    let mut counter = Counter::<W, L>::new(tier, load_block(counter));
    if let Some(count) = public_count {
        counter = counter.with_public_count(count);
    }
    let hash = (&keys, hash_key);
    let state = (s, &mut counter);
    // Each (hashed side, round count) is its own fully unrolled instantiation; the counter
    // layout and the block order go together (GCM: big-endian counter and GHASH order).
    // Only GCM's open hashes its input, and GCM's table (`PowerTable::for_ghash`) holds the
    // most powers a tier has: it covers a stride at every width.
    let covers = hash_key.covers_stride::<W>();
    assert!(
        covers || hashed == Hashed::Output,
        "a hash of the input side needs a table that covers a stride"
    );
    let s = match (hashed, aes.size(), covers) {
        (Hashed::Output, AesKeySize::Aes128, true) => {
            ctr_and_hash_rounds::<W, L, true, 10, SCHOOLBOOK>(tier, hash, state, data, last)
        }
        (Hashed::Output, AesKeySize::Aes256, true) => {
            ctr_and_hash_rounds::<W, L, true, 14, SCHOOLBOOK>(tier, hash, state, data, last)
        }
        (Hashed::Input, AesKeySize::Aes128, _) => {
            ctr_and_hash_rounds::<W, L, false, 10, SCHOOLBOOK>(tier, hash, state, data, last)
        }
        (Hashed::Input, AesKeySize::Aes256, _) => {
            ctr_and_hash_rounds::<W, L, false, 14, SCHOOLBOOK>(tier, hash, state, data, last)
        }
        (Hashed::Output, size, false) => {
            apply_keystream_sized(tier, &keys, size, &mut counter, data.reborrow());
            absorb_padded::<W, L>(tier, hash_key, s, (data.get_out(), 0), Some(last))
        }
    };
    keys.zeroize();
    s
}

/// The stride a stitched iteration hashes: in memory, each register loaded just before its
/// multiplication (an output already written; with the same bytes from 8 bytes on where
/// [`Tier::HASH_OUTPUT_SHIFTED`]), or already in registers (an input, fetched once for the
/// hash and the XOR).
enum HashedStride<'a, W: Tier> {
    InMemory(StrideInMemory<'a, W>),
    Loaded(&'a [W::Reg; STRIDE]),
}

impl<W: Tier> HashedStride<'_, W> {
    /// Register `j` as POLYVAL reads it, with `s` added to its first block, and its
    /// Karatsuba middle input.
    #[inline(always)]
    fn register<L: Layout>(&self, tier: W, j: usize, s: Option<Block>) -> (W::Reg, W::Reg) {
        match self {
            HashedStride::InMemory(stride) => stride_register::<W, L>(tier, *stride, j, s),
            HashedStride::Loaded(registers) => {
                karatsuba_input(tier, hashed_register::<W, L>(tier, registers[j], s))
            }
        }
    }
}

/// Encrypts a stride of counter registers while multiplying a stride of hashed registers by
/// their powers: register j's multiplies follow AES round j+1 in program order, and the
/// reduction follows round 9. Issued this way the scheduler always holds both kinds of work.
/// `SCHOOLBOOK`: multiply schoolbook ([`accumulate_schoolbook`]) rather than by Karatsuba.
#[inline(always)]
fn encrypt_and_hash_stride<W: Tier, L: Layout, const ROUNDS: usize, const SCHOOLBOOK: bool>(
    tier: W,
    (keys, hash_key): (&[W::Reg; 15], &PowerTable),
    keystream: &mut [W::Reg; STRIDE],
    s: Block,
    hashed: HashedStride<'_, W>,
) -> Block {
    let round = |keystream: &mut [W::Reg; STRIDE], key: W::Reg| {
        for block in keystream.iter_mut() {
            *block = tier.aes_round(*block, key);
        }
    };
    for block in keystream.iter_mut() {
        *block = tier.xor(*block, keys[0]);
    }
    let mut sums: Sums<W> = [tier.zero(); 3];
    let mut pending = [tier.zero(); 2];
    const { assert!(STRIDE.is_multiple_of(2)) };
    // Register j's multiplies follow AES round j + 1.
    macro_rules! block {
        ($j:expr) => {{
            let j: usize = $j;
            round(keystream, keys[j + 1]);
            let x = hashed.register::<L>(tier, j, (j == 0).then_some(s));
            if SCHOOLBOOK {
                let sums = (&mut sums, &mut pending);
                accumulate_schoolbook(tier, hash_key, sums, (W::POWERS, j), x.0);
            } else {
                accumulate(tier, hash_key, &mut sums, (W::POWERS, j), x);
            }
        }};
    }
    if W::UNROLL_ROUNDS {
        // Written out, as `Tier::UNROLL_ROUNDS` asks (LLVM kept AES-GCM's loop on AArch64).
        const { assert!(STRIDE == 8) };
        block!(0);
        block!(1);
        block!(2);
        block!(3);
        block!(4);
        block!(5);
        block!(6);
        block!(7);
    } else {
        for j in 0..STRIDE {
            block!(j);
        }
    }
    round(keystream, keys[STRIDE + 1]);
    let s = reduce_and_fold(tier, sums, SCHOOLBOOK);
    for &key in &keys[STRIDE + 2..ROUNDS] {
        round(keystream, key);
    }
    for block in keystream.iter_mut() {
        *block = tier.aes_last_round(*block, keys[ROUNDS]);
    }
    s
}

/// The stitched loop over whole strides, then the tail; returns the hash state after `last`.
/// `L` is the AEAD's counter layout and block order; `HASH_OUTPUT` which side is hashed;
/// `SCHOOLBOOK` the products ([`TierToken::schoolbook_stitched`](crate::cpu::TierToken)).
#[inline(always)]
pub(crate) fn ctr_and_hash_rounds<
    W: Tier,
    L: Layout,
    const HASH_OUTPUT: bool,
    const ROUNDS: usize,
    const SCHOOLBOOK: bool,
>(
    tier: W,
    (keys, hash_key): (&[W::Reg; 15], &PowerTable),
    (mut s, counter): (Block, &mut Counter<W, L>),
    mut data: InOutBuf<'_, '_, u8>,
    last: Block,
) -> Block {
    let strides = data.len() / stride_bytes::<W>();
    let body = strides * stride_bytes::<W>();
    for i in 0..strides {
        let at = i * stride_bytes::<W>();
        tier.prefetch_stride_ahead(
            data.get_in().as_ptr().wrapping_add(at),
            data.get_out().as_ptr().wrapping_add(at),
        );
        let mut keystream = counter.next::<STRIDE>(tier);
        if HASH_OUTPUT {
            // The hash reads an earlier stride's output, re-read from L1: it does not wait
            // on this stride's AES. Each arm XORs its own keystream: after a join, the XOR
            // could not be merged with the last round key's (AArch64's EOR3). LLVM then also
            // gives the first HASH_LAG strides a loop of their own, and the stitched loop
            // loses this test (AES-NI's AES-128-GCM seal of 8 KiB: 9 % faster on Zen 5).
            match i.checked_sub(W::HASH_LAG) {
                Some(earlier) => {
                    s = encrypt_and_hash_stride::<W, L, ROUNDS, SCHOOLBOOK>(
                        tier,
                        (keys, hash_key),
                        &mut keystream,
                        s,
                        HashedStride::InMemory(earlier_stride::<W, L>(data.get_out(), earlier)),
                    );
                    xor_stride(tier, &mut data, i, &keystream);
                }
                None => {
                    encrypt(tier, keys, ROUNDS, &mut keystream);
                    xor_stride(tier, &mut data, i, &keystream);
                }
            }
        } else {
            // The input is fetched once: the hash and the XOR read the same registers, so
            // that bytes another thread changes meanwhile cannot be decrypted unhashed.
            let input = load_registers(tier, stride::<W>(data.get_in(), i));
            s = encrypt_and_hash_stride::<W, L, ROUNDS, SCHOOLBOOK>(
                tier,
                (keys, hash_key),
                &mut keystream,
                s,
                HashedStride::Loaded(&input),
            );
            #[cfg(all(test, feature = "std"))]
            crate::aead::probe::after_fetch(data.get_out(), i * stride_bytes::<W>());
            store_xor_stride(tier, &mut data, i, &input, &keystream);
        }
    }
    if HASH_OUTPUT {
        for earlier in strides.saturating_sub(W::HASH_LAG)..strides {
            s = absorb_stride::<W, L>(
                tier,
                hash_key,
                s,
                (stride::<W>(data.get_out(), earlier), None),
            );
        }
        let tail = Tail::buffer(body);
        xor_tail::<W, L, ROUNDS>(tier, keys, counter, data.reborrow(), tail);
        absorb_padded::<W, L>(tier, hash_key, s, (data.get_out(), body), Some(last))
    } else {
        hash_then_xor_tail::<W, L, ROUNDS>(tier, (keys, hash_key), (s, counter), data, body, last)
    }
}

/// Stride `i` of `output`, which a later stride follows, as the stitched loops hash it: with
/// the same stride from 8 bytes on where [`Tier::HASH_OUTPUT_SHIFTED`] and the blocks are
/// hashed as they lie (GCM-SIV; GHASH reverses each block first, see [`stride_register`]).
#[inline(always)]
fn earlier_stride<W: Tier, L: Layout>(output: &[u8], i: usize) -> StrideInMemory<'_, W> {
    let shifted = if W::HASH_OUTPUT_SHIFTED && !L::HASHED_BYTES.reversed() {
        Some(stride::<W>(&output[8..], i))
    } else {
        None
    };
    (stride::<W>(output, i), shifted)
}

/// Blocks [`hash_then_xor_tail`] holds: up to a stride of the widest tier, the block `last`,
/// and the padding of its register.
const TAIL_BLOCKS: usize = (STRIDE + 1) * MAX_BLOCKS;

/// Hashes `data`'s input side from `start` (less than a stride), zero-padded, then `last`,
/// and XORs it with the keystream into the output side, both from one fetch of its blocks
/// into registers, as the strides are. (Fetched into a copy on the stack instead, the XOR's
/// overlapping load of the partial block spans two of the copy's stores and cannot be
/// forwarded from them: AES-NI's GCM open of 1500 bytes took 80 cycles longer on Zen 5.)
#[inline(always)]
fn hash_then_xor_tail<W: Tier, L: Layout, const ROUNDS: usize>(
    tier: W,
    (keys, hash_key): (&[W::Reg; 15], &PowerTable),
    (s, counter): (Block, &mut Counter<W, L>),
    data: InOutBuf<'_, '_, u8>,
    start: usize,
    last: Block,
) -> Block {
    const { assert!(stride_bytes::<W>() / 16 + W::BLOCKS <= TAIL_BLOCKS) };
    let narrow = tier.narrow();
    let (whole, partial) = data.get_in()[start..].as_chunks::<16>();
    let mut blocks = [narrow.zero(); TAIL_BLOCKS];
    for (block, bytes) in blocks.iter_mut().zip(whole) {
        *block = load_block(bytes);
    }
    let mut n = whole.len();
    if !partial.is_empty() {
        blocks[n] = tier.load_last_partial(data.get_in());
        n += 1;
    }
    blocks[n] = last;
    let s = absorb_each::<W, L>(tier, hash_key, s, n + 1, |r| {
        tier.gather(|i| blocks[r * W::BLOCKS + i])
    });
    #[cfg(all(test, feature = "std"))]
    let mut data = data;
    #[cfg(all(test, feature = "std"))]
    crate::aead::probe::after_fetch(data.get_out(), start);
    let fetched = Tail {
        start,
        source: TailInput::Fetched(&blocks),
    };
    xor_tail::<W, L, ROUNDS>(tier, keys, counter, data, fetched);
    s
}
