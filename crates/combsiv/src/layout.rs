//! The one place the two AEADs' data layouts differ, as a type: kernels generic over
//! [`Layout`] are compiled once per AEAD.
//!
//! AES-GCM (SP 800-38D) counts in the last four bytes of a counter block, big-endian, and
//! hashes with GHASH, which is POLYVAL on byte-reversed blocks (RFC 8452 Appendix A; see the
//! `field` module). AES-GCM-SIV (RFC 8452 Section 4) counts in the first four bytes,
//! little-endian, and hashes with POLYVAL as the blocks lie. Both counters wrap modulo 2^32.

use crate::aes::Counter32;

/// AES-GCM's layout or AES-GCM-SIV's. Sealed: [`GcmLayout`] and [`SivLayout`] only.
pub(crate) trait Layout: 'static {
    /// AES-GCM: a big-endian counter in the last word and GHASH's reversed byte order.
    const GCM: bool;
    /// Which 32 bits of a counter block count, in which byte order.
    const COUNTER: Counter32 = if Self::GCM {
        Counter32::BigEndianLast
    } else {
        Counter32::LittleEndianFirst
    };
}

/// AES-GCM (SP 800-38D).
pub(crate) enum GcmLayout {}

/// AES-GCM-SIV (RFC 8452).
pub(crate) enum SivLayout {}

impl Layout for GcmLayout {
    const GCM: bool = true;
}

impl Layout for SivLayout {
    const GCM: bool = false;
}
