//! GF(2^128): POLYVAL (RFC 8452 Section 3), and GHASH (SP 800-38D) expressed through it.
//!
//! This is the one place the field arithmetic is explained; the kernels refer back here.
//!
//! # The field
//!
//! Elements are polynomials over GF(2) of degree below 128, reduced modulo
//!
//! ```text
//! P(x) = x^128 + x^127 + x^126 + x^121 + 1.
//! ```
//!
//! POLYVAL reads a 16-byte block as a little-endian 128-bit integer whose bit `i` is the
//! coefficient of `x^i`. Addition is XOR. Multiplication is carry-less multiplication (a
//! 255-bit product) followed by reduction modulo `P`.
//!
//! # POLYVAL's product and why it is cheap
//!
//! POLYVAL does not use the plain field product but `dot(a, b) = a * b * x^-128 mod P`, and
//! `POLYVAL(H, X_1..X_n)` is Horner's rule in that product:
//! `S_0 = 0, S_j = dot(S_{j-1} + X_j, H)`, result `S_n`.
//!
//! The factor `x^-128` is a Montgomery reduction, and it makes reduction cheap. Write the
//! 256-bit product as four 64-bit words `v3:v2:v1:v0` (`v0` lowest). Adding `v0 * P` changes
//! nothing modulo `P` and clears `v0`, because `P`'s constant term is 1. The rest of
//! `v0 * P` is `v0 * (x^121 + x^126 + x^127)`, which lands in words 1 and 2, and
//! `v0 * x^128`, which XORs `v0` into word 2. Since `x^121 + x^126 + x^127 = x^64 * c` with
//! `c = x^57 + x^62 + x^63` (the 64-bit constant `0xC200_0000_0000_0000`), that "rest" is one
//! 64x64 carry-less multiplication `v0 * c` added at word 1, plus `v0` at word 2:
//!
//! ```text
//! v1 ^= low64(v0 * c)             = (v0 << 63) ^ (v0 << 62) ^ (v0 << 57)
//! v2 ^= high64(v0 * c) ^ v0       = (v0 >> 1) ^ (v0 >> 2) ^ (v0 >> 7) ^ v0
//! ```
//!
//! Folding `v1` the same way into words 2 and 3 leaves a multiple of `x^128`, and dividing
//! by `x^128` is dropping the two zero words: the result is `v3:v2`. Software does the
//! shifts; PCLMULQDQ does each fold as one multiplication by `c` plus a word swap.
//!
//! # Aggregation
//!
//! Reduction is linear, so products may be added before reducing. With the powers
//! `H^1 = H, H^(k+1) = dot(H^k, H)` precomputed, eight Horner steps become
//!
//! ```text
//! S' = (S + X_1)·H^8 + X_2·H^7 + ... + X_8·H^1      (each · is dot)
//! ```
//!
//! eight independent 128x128 products summed unreduced and reduced once. The products do
//! not wait on each other, which is what lets the multiplier pipeline.
//!
//! Building the powers costs a message its own multiplications (GCM-SIV's hash key changes
//! with every nonce), so they are made cheap. The product of two elements split into 64-bit
//! halves, `(a1·x^64 + a0)(b1·x^64 + b0)`, takes four 64x64 multiplications schoolbook, or
//! three by Karatsuba: `a1·b1`, `a0·b0` and `(a1 + a0)(b1 + b0)`, whose sum with the other
//! two is the middle term `a1·b0 + a0·b1`. A square takes two: its middle term
//! `a1·a0 + a0·a1` is zero in characteristic 2.
//!
//! # GHASH through POLYVAL (RFC 8452 Appendix A)
//!
//! GHASH uses the same field with the bits of each byte in the opposite order and no
//! `x^-128`. RFC 8452 Appendix A shows
//!
//! ```text
//! GHASH(H, X_1..X_n) = ByteReverse(POLYVAL(mulX_POLYVAL(ByteReverse(H)),
//!                                          ByteReverse(X_1), ..., ByteReverse(X_n)))
//! ```
//!
//! where `mulX_POLYVAL(v) = v * x mod P`: the byte reversal turns GHASH's bit-reflected
//! representation into POLYVAL's, and the extra `x` cancels POLYVAL's `x^-128` against
//! GHASH's convention. So one implementation of the field serves both AEADs: [`Ghash`] only
//! reverses the bytes of each block on the way in and of the result on the way out.

#[cfg(vector_tiers)]
pub(crate) mod kernels;
pub(crate) mod portable;

use core::marker::PhantomData;

use zeroize::Zeroize;

use crate::cpu::Isa;
use crate::layout::{GcmLayout, Layout, SivLayout};

/// `x^128 mod P` with the `x^128` term itself removed: the bits of `x^127 + x^126 + x^121 + 1`.
const P_LOW: u128 = 0xC200_0000_0000_0000_0000_0000_0000_0001;

/// `v * x mod P`, in constant time.
fn mul_x(v: u128) -> u128 {
    let overflow = 0u128.wrapping_sub(v >> 127);
    (v << 1) ^ (overflow & P_LOW)
}

/// The POLYVAL hash key that computes GHASH with GHASH key `h`: mulX_POLYVAL(ByteReverse(h))
/// (see the module comment). The caller wipes it.
pub(crate) fn polyval_key_for_ghash(h: &[u8; 16]) -> [u8; 16] {
    mul_x(u128::from_be_bytes(*h)).to_le_bytes()
}

/// A POLYVAL key (the hash key `H` and any powers of it the backend precomputes).
#[derive(Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "boxing would need an allocator; a key lives in one place and is not moved often"
)]
pub(crate) enum PolyvalKey {
    Portable(portable::Key),
    #[cfg(vector_tiers)]
    Vector(kernels::PowerTable, crate::cpu::TierToken),
}

impl PolyvalKey {
    /// A key for POLYVAL with hash key `h`. `blocks` is how many blocks will be hashed with
    /// it at most (any larger number is still correct); a backend precomputes no more powers
    /// of `h` than that can use.
    pub(crate) fn new(h: &[u8; 16], isa: Isa, blocks: usize) -> Self {
        #[cfg(not(vector_tiers))]
        let _ = blocks;
        match isa {
            Isa::Portable => PolyvalKey::Portable(portable::Key::new(h)),
            #[cfg(vector_tiers)]
            Isa::Vector(token) => {
                PolyvalKey::Vector(kernels::PowerTable::new(token, h, blocks), token)
            }
        }
    }

    /// The POLYVAL key that computes GHASH with GHASH key `h` (see the module comment).
    pub(crate) fn for_ghash(h: &[u8; 16], isa: Isa) -> Self {
        let mut polyval_h = polyval_key_for_ghash(h);
        let key = PolyvalKey::new(&polyval_h, isa, usize::MAX);
        polyval_h.zeroize();
        key
    }

    /// The key as [`UniversalHash`] borrows it.
    pub(crate) fn as_hash_key(&self) -> HashKey<'_> {
        match self {
            PolyvalKey::Portable(key) => HashKey::Portable(key),
            #[cfg(vector_tiers)]
            PolyvalKey::Vector(key, token) => HashKey::Vector(key, *token),
        }
    }
}

/// A borrowed POLYVAL key with its tier: a [`PolyvalKey`]'s, or the hash key of a key object
/// that owns it next to its AES schedule under one tier (AES-GCM's).
#[derive(Clone, Copy)]
pub(crate) enum HashKey<'k> {
    Portable(&'k portable::Key),
    #[cfg(vector_tiers)]
    Vector(&'k kernels::PowerTable, crate::cpu::TierToken),
}

impl HashKey<'_> {
    fn absorb<L: Layout>(self, acc: &mut u128, blocks: &[[u8; 16]]) {
        match self {
            HashKey::Portable(key) => key.absorb::<L>(acc, blocks),
            #[cfg(vector_tiers)]
            HashKey::Vector(key, token) => key.absorb::<L>(token, acc, blocks),
        }
    }
}

/// A running hash: POLYVAL with AES-GCM-SIV's layout, GHASH with AES-GCM's.
pub(crate) struct UniversalHash<'k, L: Layout> {
    key: HashKey<'k>,
    /// The running state, as the little-endian value of its 16 bytes (one 16-byte value, so
    /// that wiping it is one store rather than sixteen).
    acc: u128,
    layout: PhantomData<L>,
}

/// POLYVAL as RFC 8452 defines it.
pub(crate) type Polyval<'k> = UniversalHash<'k, SivLayout>;
/// GHASH as SP 800-38D defines it, computed with POLYVAL.
pub(crate) type Ghash<'k> = UniversalHash<'k, GcmLayout>;

impl<'k, L: Layout> UniversalHash<'k, L> {
    pub(crate) fn new(key: HashKey<'k>) -> Self {
        UniversalHash {
            key,
            acc: 0,
            layout: PhantomData,
        }
    }

    /// Hashes `data` followed by zero bytes up to a multiple of 16.
    pub(crate) fn update_padded(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let (blocks, tail) = data.as_chunks::<16>();
        self.key.absorb::<L>(&mut self.acc, blocks);
        if !tail.is_empty() {
            let mut last = [0u8; 16];
            last[..tail.len()].copy_from_slice(tail);
            self.key.absorb::<L>(&mut self.acc, &[last]);
            last.zeroize();
        }
    }

    /// The running state, for a fused kernel that hashes while it encrypts.
    #[cfg(vector_tiers)]
    pub(crate) fn state(&mut self) -> &mut u128 {
        &mut self.acc
    }

    pub(crate) fn update_block(&mut self, block: &[u8; 16]) {
        self.key
            .absorb::<L>(&mut self.acc, core::slice::from_ref(block));
    }

    pub(crate) fn finish(mut self) -> [u8; 16] {
        let result = L::HASHED_BYTES.write(self.acc);
        self.acc.zeroize();
        result
    }
}

impl<L: Layout> Drop for UniversalHash<'_, L> {
    fn drop(&mut self) {
        self.acc.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::{hex16, rfc8452};

    fn every_isa() -> impl Iterator<Item = Isa> {
        crate::cpu::isas_under_test().into_iter()
    }

    fn polyval(key: &PolyvalKey, data: &[u8]) -> [u8; 16] {
        let mut hash = Polyval::new(key.as_hash_key());
        hash.update_padded(data);
        hash.finish()
    }

    /// RFC 8452 Appendix A: POLYVAL(H, X_1, X_2), and GHASH with the same H as GHASH key.
    #[test]
    fn appendix_a_polyval_and_ghash() {
        let example = &rfc8452()["polyval_appendix_a"][0];
        let h = hex16(&example["h"]);
        let data = [hex16(&example["x_1"]), hex16(&example["x_2"])].concat();
        // mulX_GHASH(ByteReverse(H)) is the GHASH key that computes POLYVAL with key H;
        // converting it back must give H.
        let ghash_equivalent = hex16(&example["ghash_key_equivalent"]);
        assert_eq!(
            mul_x(u128::from_be_bytes(ghash_equivalent)).to_le_bytes(),
            h
        );
        for isa in every_isa() {
            assert_eq!(
                polyval(&PolyvalKey::new(&h, isa, 2), &data),
                hex16(&example["polyval_result"])
            );
            let ghash_key = PolyvalKey::for_ghash(&h, isa);
            let mut ghash = Ghash::new(ghash_key.as_hash_key());
            ghash.update_padded(&data);
            assert_eq!(
                ghash.finish(),
                hex16(&example["ghash_result_with_h_as_ghash_key"])
            );
        }
    }

    /// RFC 8452 Section 7: dot(a, b) = a * b * x^-128, and the plain product a * b.
    #[test]
    fn section_7_field_examples() {
        let example = &rfc8452()["field_examples_section_7"][0];
        let (a, b) = (hex16(&example["a"]), hex16(&example["b"]));
        // POLYVAL of the single block a under key b is dot(a, b).
        // a * b = dot(a, b * x^128), and b * x^128 is 128 doublings of b.
        let b_times_x128 = (0..128)
            .fold(u128::from_le_bytes(b), |v, _| mul_x(v))
            .to_le_bytes();
        for isa in every_isa() {
            assert_eq!(
                polyval(&PolyvalKey::new(&b, isa, 1), &a),
                hex16(&example["dot_a_b"])
            );
            assert_eq!(
                polyval(&PolyvalKey::new(&b_times_x128, isa, 1), &a),
                hex16(&example["a_times_b"])
            );
        }
    }

    /// Every backend's aggregated POLYVAL equals the portable Horner evaluation, at lengths
    /// around both tiers' aggregation widths (8 and 16 blocks) and for every kind of table:
    /// one power, two, an odd count, one short of a stride, whole strides. Under Miri, a
    /// sample of the lengths.
    #[test]
    fn backends_agree_with_portable_reference() {
        let data: std::vec::Vec<u8> = (0..16 * 40).map(|i| (i * 7 + 3) as u8).collect();
        let h: [u8; 16] = core::array::from_fn(|i| (i * 29 + 1) as u8);
        let reference = PolyvalKey::new(&h, Isa::Portable, 1);
        let (step, tables): (usize, &[usize]) = if cfg!(miri) {
            (37, &[1, 7, 9, usize::MAX])
        } else {
            (5, &[1, 2, 7, 8, 9, 15, 16, usize::MAX])
        };
        for isa in every_isa() {
            for &table in tables {
                let key = PolyvalKey::new(&h, isa, table);
                for len in (0..=data.len()).step_by(step) {
                    assert_eq!(
                        polyval(&key, &data[..len]),
                        polyval(&reference, &data[..len]),
                        "len {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn mul_x_matches_the_definition() {
        assert_eq!(mul_x(1), 2);
        assert_eq!(mul_x(1 << 127), P_LOW);
        assert_eq!(mul_x((1 << 127) | 1), P_LOW ^ 2);
    }
}
