//! POLYVAL in portable constant-time integer code: the reference arithmetic.
//!
//! The math is in the parent module; the carry-less products are `crate::clmul`'s. No branch
//! and no memory index depends on secret data.

use zeroize::Zeroize;

use crate::clmul::clmul64;
use crate::layout::Layout;

pub(crate) struct Key {
    h: u128,
}

impl Clone for Key {
    fn clone(&self) -> Self {
        Key { h: self.h }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        self.h.zeroize();
    }
}

impl Key {
    pub(crate) fn new(h: &[u8; 16]) -> Self {
        Key {
            h: u128::from_le_bytes(*h),
        }
    }

    pub(crate) fn absorb<L: Layout>(&self, acc: &mut u128, blocks: &[[u8; 16]]) {
        let mut s = *acc;
        for block in blocks {
            let x = L::HASHED_BYTES.read(block);
            s = dot(s ^ x, self.h);
        }
        *acc = s;
    }
}

/// `a * b * x^-128 mod P`.
pub(crate) fn dot(a: u128, b: u128) -> u128 {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    // Karatsuba: three 64x64 products instead of four.
    let low = clmul64(a0, b0);
    let high = clmul64(a1, b1);
    let middle = clmul64(a0 ^ a1, b0 ^ b1) ^ low ^ high;
    let product = [
        low as u64,
        (low >> 64) as u64 ^ middle as u64,
        high as u64 ^ (middle >> 64) as u64,
        (high >> 64) as u64,
    ];
    montgomery_reduce(product)
}

/// Divides the 256-bit `v3:v2:v1:v0` by `x^128` modulo `P` (derivation in the parent module).
fn montgomery_reduce([v0, mut v1, mut v2, mut v3]: [u64; 4]) -> u128 {
    v2 ^= v0 ^ (v0 >> 1) ^ (v0 >> 2) ^ (v0 >> 7);
    v1 ^= (v0 << 63) ^ (v0 << 62) ^ (v0 << 57);
    v3 ^= v1 ^ (v1 >> 1) ^ (v1 >> 2) ^ (v1 >> 7);
    v2 ^= (v1 << 63) ^ (v1 << 62) ^ (v1 << 57);
    u128::from(v2) | u128::from(v3) << 64
}
