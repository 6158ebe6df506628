//! Carry-less multiplication in software, in constant time: the portable POLYVAL's products,
//! and the AArch64 tier's PMULL under Miri, which cannot run that instruction.
//!
//! It uses the integer multiplier with "holes" (BearSSL's `bmul64` idea): each operand is
//! split into four masks holding every fourth bit, so that when the integer products are
//! added, the carries of at most 15 terms land in the three hole bits and never reach the next
//! bit that is kept. No branch and no memory index depends on the operands.

/// The full 128-bit carry-less product of two 64-bit words.
pub(crate) fn clmul64(x: u64, y: u64) -> u128 {
    // The low half directly; the high half as the low half of the bit-reversed operands,
    // whose product is the bit-reversed full product shifted by one.
    let low = clmul64_low(x, y);
    let high = clmul64_low(x.reverse_bits(), y.reverse_bits()).reverse_bits() >> 1;
    u128::from(low) | u128::from(high) << 64
}

/// The low 64 bits of the carry-less product.
///
/// Within 64 bits, at most 16 pairs of bits meet at one position of a masked product and
/// only at bit 60, whose carry leaves the word; below it at most 15 do, so the carries stay
/// inside the holes.
fn clmul64_low(x: u64, y: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    const M1: u64 = M0 << 1;
    const M2: u64 = M0 << 2;
    const M3: u64 = M0 << 3;
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let m = |a: u64, b: u64| a.wrapping_mul(b);
    let z0 = m(x0, y0) ^ m(x1, y3) ^ m(x2, y2) ^ m(x3, y1);
    let z1 = m(x0, y1) ^ m(x1, y0) ^ m(x2, y3) ^ m(x3, y2);
    let z2 = m(x0, y2) ^ m(x1, y1) ^ m(x2, y0) ^ m(x3, y3);
    let z3 = m(x0, y3) ^ m(x1, y2) ^ m(x2, y1) ^ m(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit carry-less multiplication: slow, obviously right, test-only.
    fn clmul64_reference(x: u64, y: u64) -> u128 {
        (0..64)
            .filter(|i| y >> i & 1 == 1)
            .fold(0, |acc, i| acc ^ (u128::from(x) << i))
    }

    #[test]
    fn clmul64_matches_reference() {
        let mut next = crate::test_vectors::xorshift();
        for _ in 0..2000 {
            let (x, y) = (next(), next());
            assert_eq!(clmul64(x, y), clmul64_reference(x, y));
        }
        assert_eq!(
            clmul64(u64::MAX, u64::MAX),
            clmul64_reference(u64::MAX, u64::MAX)
        );
    }
}
