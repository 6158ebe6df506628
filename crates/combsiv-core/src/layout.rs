//! The one place the two AEADs' data layouts differ, as a type: kernels generic over
//! [`Layout`] are compiled once per AEAD.
//!
//! AES-GCM (SP 800-38D) counts in the last four bytes of a counter block, big-endian, and
//! hashes with GHASH, which is POLYVAL on byte-reversed blocks (RFC 8452 Appendix A; see the
//! `field` module). AES-GCM-SIV (RFC 8452 Section 4) counts in the first four bytes,
//! little-endian, and hashes with POLYVAL as the blocks lie. Both counters wrap modulo 2^32.

/// AES-GCM's layout or AES-GCM-SIV's. Sealed: [`GcmLayout`] and [`SivLayout`] only.
pub(crate) trait Layout: 'static {
    /// How the counter steps: which 32 bits of a counter block count, in which byte order.
    const COUNTER: Counter32;
    /// How POLYVAL reads a hashed block's bytes: as they lie, or reversed (GHASH).
    const HASHED_BYTES: ByteOrder;
}

/// The order in which POLYVAL reads the bytes of a hashed block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// As they lie: POLYVAL's own order (AES-GCM-SIV).
    AsTheyLie,
    /// Reversed: GHASH's blocks are POLYVAL's byte-reversed (AES-GCM).
    Reversed,
}

impl ByteOrder {
    /// Whether the bytes are reversed.
    pub const fn reversed(self) -> bool {
        matches!(self, ByteOrder::Reversed)
    }

    /// A block read as POLYVAL's little-endian integer.
    pub const fn read(self, block: &[u8; 16]) -> u128 {
        match self {
            ByteOrder::AsTheyLie => u128::from_le_bytes(*block),
            ByteOrder::Reversed => u128::from_be_bytes(*block),
        }
    }

    /// POLYVAL's integer written back as a block.
    pub const fn write(self, value: u128) -> [u8; 16] {
        match self {
            ByteOrder::AsTheyLie => value.to_le_bytes(),
            ByteOrder::Reversed => value.to_be_bytes(),
        }
    }
}

/// AES-GCM (SP 800-38D).
pub(crate) enum GcmLayout {}

/// AES-GCM-SIV (RFC 8452).
pub(crate) enum SivLayout {}

impl Layout for GcmLayout {
    const COUNTER: Counter32 = Counter32::BigEndianLast;
    const HASHED_BYTES: ByteOrder = ByteOrder::Reversed;
}

impl Layout for SivLayout {
    const COUNTER: Counter32 = Counter32::LittleEndianFirst;
    const HASHED_BYTES: ByteOrder = ByteOrder::AsTheyLie;
}

/// Which 32 bits of a counter block are the counter, and in which byte order.
///
/// Both AEADs increment only those 32 bits and wrap modulo 2^32 without carrying into the
/// rest of the block (RFC 8452 Section 4 and its C.3 vectors; SP 800-38D inc32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter32 {
    /// Bytes 0..4, little-endian (AES-GCM-SIV).
    LittleEndianFirst,
    /// Bytes 12..16, big-endian (AES-GCM).
    BigEndianLast,
}

impl Counter32 {
    /// Whether the count is big-endian: its bytes are swapped before a little-endian add.
    pub const fn big_endian(self) -> bool {
        matches!(self, Counter32::BigEndianLast)
    }

    /// Where the count's least significant bit lies in the block read as a little-endian
    /// integer after the big-endian count's bytes are swapped: bit 96 (word 3) or bit 0.
    pub const fn native_shift(self) -> u32 {
        match self {
            Counter32::BigEndianLast => 96,
            Counter32::LittleEndianFirst => 0,
        }
    }

    /// Where the count's least significant byte lies in the block as it lies (read as a
    /// little-endian integer): bit 120 (byte 15) or bit 0 (byte 0).
    pub const fn low_byte_shift(self) -> u32 {
        match self {
            Counter32::BigEndianLast => 120,
            Counter32::LittleEndianFirst => 0,
        }
    }

    /// The counter block `steps` increments after `block`.
    pub(crate) fn advance(self, block: &[u8; 16], steps: u32) -> [u8; 16] {
        let mut next = *block;
        match self {
            Counter32::LittleEndianFirst => {
                let word = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
                next[..4].copy_from_slice(&word.wrapping_add(steps).to_le_bytes());
            }
            Counter32::BigEndianLast => {
                let word = u32::from_be_bytes([block[12], block[13], block[14], block[15]]);
                next[12..].copy_from_slice(&word.wrapping_add(steps).to_be_bytes());
            }
        }
        next
    }
}
