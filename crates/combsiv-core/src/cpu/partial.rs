//! The partial last block of some bytes, on the one-block tier of every architecture: read
//! and written without touching a byte outside the data, with as few branches on the length
//! as possible. Partial blocks come in every length, so a branch on the length's bits
//! mispredicts on a mix of message sizes (the lengths are public: a branch on them leaks
//! nothing).

use super::Tier;

/// The partial last block of `data` (its last `data.len() % 16` bytes, 1 to 15 of them) as the
/// low bytes of a block, the rest zero. When `data` holds a whole block before the partial one,
/// one overlapping 16-byte load of its last 16 bytes and a shuffle whose indices the length
/// picks; otherwise [`short_value`].
#[inline(always)]
pub fn load_last_partial<N: Tier<Bytes = [u8; 16]>>(narrow: N, data: &[u8]) -> N::Reg {
    let partial = data.len() % 16;
    match data.last_chunk::<16>() {
        // Byte i of the result is byte 16 - partial + i of the last 16, or zero past `partial`.
        Some(last) => narrow.shuffle_bytes(narrow.load(last), slide(narrow, 32 - partial)),
        None => narrow.load(&short_value(data).to_le_bytes()),
    }
}

/// Writes the low `data.len() % 16` bytes of `block` as the partial last block of `data`,
/// whose earlier bytes must already hold their final values: where `data` holds a whole block
/// before the partial one, as one overlapping 16-byte store of the last 16 bytes, the block
/// before the partial one rewritten with what it holds; otherwise [`write_short_value`].
#[inline(always)]
pub fn store_last_partial<N: Tier<Bytes = [u8; 16]>>(narrow: N, block: N::Reg, data: &mut [u8]) {
    let partial = data.len() % 16;
    let whole = data.len() - partial;
    let Some(previous) = data[..whole].last_chunk::<16>() else {
        write_short_value(u128::from_le_bytes(narrow.store(block)), data);
        return;
    };
    // Bytes 0..16 - partial: the previous block's bytes partial..16; then `block`'s.
    let combined = narrow.or(
        narrow.shuffle_bytes(narrow.load(previous), slide(narrow, 16 + partial)),
        narrow.shuffle_bytes(block, slide(narrow, partial)),
    );
    if let Some(last) = data.last_chunk_mut::<16>() {
        *last = narrow.store(combined);
    }
}

/// Byte shuffles that move bytes within a block: `slide(n)` is bytes n..n + 16 of
/// `0x80 x 16, 0, 1, ..., 15, 0x80 x 16`. An index of 0x80 selects zero under both x86's
/// PSHUFB (top bit set) and AArch64's TBL (16 or more).
#[inline(always)]
fn slide<N: Tier<Bytes = [u8; 16]>>(narrow: N, start: usize) -> N::Reg {
    const SLIDE: [u8; 48] = {
        let mut table = [0x80u8; 48];
        let mut i = 0;
        while i < 16 {
            table[16 + i] = i as u8;
            i += 1;
        }
        table
    };
    let Some(indices) = SLIDE.get(start..).and_then(<[u8]>::first_chunk::<16>) else {
        unreachable!("slide({start}) is outside 0..=32");
    };
    narrow.load(indices)
}

/// Fewer than 16 `bytes` as a little-endian integer. Read in two overlapping pieces of 8 or 4
/// bytes (the first and the last), or for 1 to 3 bytes the first, middle and last byte, so
/// that the length picks one of three paths in two branches. Reading 8-, 4-, 2- and 1-byte
/// pieces as the length's bits say took four, and AES-128-GCM-SIV seals of 1-15 bytes with 0-12
/// bytes of AAD 1.05x the time (AES-NI and VAES on Zen 5).
#[inline(always)]
fn short_value(bytes: &[u8]) -> u128 {
    let len = bytes.len();
    // The bytes two pieces share are the same bytes: OR combines them.
    if let (Some(first), Some(last)) = (bytes.first_chunk(), bytes.last_chunk()) {
        u128::from(u64::from_le_bytes(*first))
            | u128::from(u64::from_le_bytes(*last)) << (8 * (len - 8))
    } else if let (Some(first), Some(last)) = (bytes.first_chunk(), bytes.last_chunk()) {
        u128::from(u32::from_le_bytes(*first))
            | u128::from(u32::from_le_bytes(*last)) << (8 * (len - 4))
    } else if let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) {
        let middle = bytes[len / 2];
        u128::from(first)
            | u128::from(middle) << (8 * (len / 2))
            | u128::from(last) << (8 * (len - 1))
    } else {
        0
    }
}

/// Writes the low `out.len()` (fewer than 16) bytes of `value` to `out`, in the pieces
/// [`short_value`] reads (overlapping pieces write the same bytes twice).
#[inline(always)]
fn write_short_value(value: u128, out: &mut [u8]) {
    let len = out.len();
    let from = |offset: usize| value >> (8 * offset);
    if len >= 8 {
        if let Some(first) = out.first_chunk_mut() {
            *first = (value as u64).to_le_bytes();
        }
        if let Some(last) = out.last_chunk_mut() {
            *last = (from(len - 8) as u64).to_le_bytes();
        }
    } else if len >= 4 {
        if let Some(first) = out.first_chunk_mut() {
            *first = (value as u32).to_le_bytes();
        }
        if let Some(last) = out.last_chunk_mut() {
            *last = (from(len - 4) as u32).to_le_bytes();
        }
    } else if len > 0 {
        out[0] = value as u8;
        out[len / 2] = from(len / 2) as u8;
        out[len - 1] = from(len - 1) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fewer than 16 bytes read as the bytes zero-padded, and written as exactly them, at
    /// every length.
    #[test]
    fn short_values_are_the_bytes_zero_padded() {
        let bytes: [u8; 15] = core::array::from_fn(|i| 0xA0 + i as u8);
        let value = u128::from_le_bytes(core::array::from_fn(|i| 0x10 + i as u8));
        for len in 0..16 {
            let mut padded = [0u8; 16];
            padded[..len].copy_from_slice(&bytes[..len]);
            assert_eq!(short_value(&bytes[..len]).to_le_bytes(), padded, "{len}");
            let mut out = [0x55u8; 16];
            write_short_value(value, &mut out[..len]);
            let mut expected = [0x55u8; 16];
            expected[..len].copy_from_slice(&value.to_le_bytes()[..len]);
            assert_eq!(out, expected, "{len}");
        }
    }
}
