//! CCM (NIST SP 800-38C, RFC 3610): CBC-MAC over a formatted header, the AAD and the
//! plaintext, then CTR encryption of the plaintext and of the MAC.
//!
//! Parameters: a nonce of n = 7..=13 bytes leaves L = 15 - n bytes for the message length
//! and the block counter, so messages are shorter than 2^(8L) bytes; tags are M = 4, 6, ...,
//! 16 bytes.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use super::{cbc_mac, cbc_mac_padded, ctr_apply};
use combsiv_core::aead::open_or_wipe;
use combsiv_core::cpu::Backend;
use combsiv_core::verdict::check_tag;
use combsiv_core::{Aes, Error};

/// AES-CCM with a fixed nonce length and tag length.
///
/// ```
/// use combsiv::modes::Ccm;
///
/// let ccm = Ccm::new(&[0x40; 16], 13, 8)?; // RFC 3610's parameters
/// let nonce = [3u8; 13];
/// let sealed = ccm.encrypt(&nonce, b"header", b"payload")?;
/// assert_eq!(sealed.len(), 7 + 8);
/// assert_eq!(ccm.decrypt(&nonce, b"header", &sealed)?, b"payload");
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ccm {
    key: Aes,
    nonce_len: usize,
    tag_len: usize,
}

impl Ccm {
    /// A CCM instance for a 16- or 32-byte key, `nonce_len` in 7..=13 and `tag_len` in
    /// {4, 6, ..., 16}, on the detected backend.
    pub fn new(key: &[u8], nonce_len: usize, tag_len: usize) -> Result<Ccm, Error> {
        Ccm::from_key(Aes::new(key)?, nonce_len, tag_len)
    }

    /// Like [`Ccm::new`] on a chosen backend.
    pub fn with_backend(
        key: &[u8],
        nonce_len: usize,
        tag_len: usize,
        backend: Backend,
    ) -> Result<Ccm, Error> {
        Ccm::from_key(Aes::with_backend(key, backend)?, nonce_len, tag_len)
    }

    fn from_key(key: Aes, nonce_len: usize, tag_len: usize) -> Result<Ccm, Error> {
        if !(7..=13).contains(&nonce_len) {
            return Err(Error::InvalidNonceLength);
        }
        if !(4..=16).contains(&tag_len) || !tag_len.is_multiple_of(2) {
            return Err(Error::InvalidTagLength);
        }
        Ok(Ccm {
            key,
            nonce_len,
            tag_len,
        })
    }

    /// The nonce length in bytes.
    pub fn nonce_len(&self) -> usize {
        self.nonce_len
    }

    /// The tag length in bytes.
    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// The longest plaintext this nonce length allows: 2^(8L) - 1 bytes with L = 15 - n.
    pub fn max_plaintext_len(&self) -> u64 {
        let length_bytes = 15 - self.nonce_len;
        if length_bytes >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * length_bytes)) - 1
        }
    }

    /// Encrypts and returns `ciphertext || tag` (`tag_len` bytes longer).
    #[cfg(feature = "alloc")]
    pub fn encrypt(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        self.check(nonce, plaintext.len())?;
        let mut out = Vec::with_capacity(plaintext.len() + self.tag_len);
        out.extend_from_slice(plaintext);
        let tag = self.encrypt_in_place_detached(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag[..self.tag_len]);
        Ok(out)
    }

    /// Decrypts `ciphertext || tag` and returns the plaintext.
    #[cfg(feature = "alloc")]
    pub fn decrypt(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let Some(split) = ciphertext_and_tag.len().checked_sub(self.tag_len) else {
            return Err(Error::CiphertextTooShort);
        };
        let (ciphertext, tag) = ciphertext_and_tag.split_at(split);
        self.check(nonce, ciphertext.len())?;
        let mut out = ciphertext.to_vec();
        self.decrypt_in_place_detached(nonce, aad, &mut out, tag)?;
        Ok(out)
    }

    /// Encrypts `buf` in place and returns the tag in the first `tag_len` bytes of the array
    /// (the rest is zero).
    pub fn encrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], Error> {
        self.check(nonce, buf.len())?;
        let tag = self.mac(nonce, aad, buf);
        self.apply_payload_keystream(nonce, buf);
        Ok(self.encrypt_tag(nonce, tag))
    }

    /// Decrypts `buf` in place if `tag` (exactly `tag_len` bytes) authenticates it. On any
    /// error `buf` is zeroed.
    pub fn decrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), Error> {
        open_or_wipe(buf.into(), |mut buf| {
            let buf = buf.get_out();
            self.check(nonce, buf.len())?;
            if tag.len() != self.tag_len {
                return Err(Error::InvalidTagLength);
            }
            self.apply_payload_keystream(nonce, buf);
            let expected = self.encrypt_tag(nonce, self.mac(nonce, aad, buf));
            check_tag(&expected[..self.tag_len], tag)
        })
    }

    pub(crate) fn check(&self, nonce: &[u8], plaintext_len: usize) -> Result<(), Error> {
        if nonce.len() != self.nonce_len {
            return Err(Error::InvalidNonceLength);
        }
        if !u64::try_from(plaintext_len).is_ok_and(|len| len <= self.max_plaintext_len()) {
            return Err(Error::InvalidLength);
        }
        Ok(())
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn cipher(&self) -> &combsiv_core::aes::BlockCipher {
        self.key.block_cipher()
    }

    /// SP 800-38C A.2: B_0 = flags || N || Q, the AAD with its length prefix, the payload;
    /// all zero-padded to blocks and run through CBC-MAC.
    fn mac(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> [u8; 16] {
        let mut state = [0u8; 16];
        cbc_mac(
            &self.key,
            &mut state,
            &[self.b0(nonce, aad.len(), plaintext.len())],
        );
        if !aad.is_empty() {
            let (header, consumed) = aad_header(aad);
            cbc_mac(&self.key, &mut state, &[header]);
            cbc_mac_padded(&self.key, &mut state, &aad[consumed..]);
        }
        cbc_mac_padded(&self.key, &mut state, plaintext);
        state
    }

    /// How many blocks [`Ccm::write_mac_header`] writes: B0 and the AAD with its length
    /// encoding, zero-padded.
    #[cfg(feature = "alloc")]
    pub(crate) fn mac_header_blocks(&self, aad_len: usize) -> usize {
        let aad_blocks = if aad_len == 0 {
            0
        } else {
            (aad_length_size(aad_len) + aad_len).div_ceil(16)
        };
        1 + aad_blocks
    }

    /// B0 and counter block 0 of a message, for the comb engine, which needs both for every
    /// message: built from one reading of the nonce.
    #[cfg(feature = "alloc")]
    pub(crate) fn starts(&self, nonce: &[u8], aad_len: usize, plaintext_len: usize) -> Starts {
        let nonce = self.placed_nonce(nonce);
        Starts {
            b0: self.block_at(self.b0_flags(aad_len), nonce, plaintext_len as u64),
            counter_zero: u128::from_be_bytes(self.block_at(self.l_flag(), nonce, 0)),
        }
    }

    /// The blocks [`Ccm::mac`] runs over before the payload, B0 first (from [`Ccm::starts`]),
    /// written out for the comb engine's lanes ([`Ccm::mac_header_blocks`] of them; `out`
    /// arrives zeroed). The payload follows them unchanged, zero-padded to a block. Returns
    /// the last block written, as a little-endian integer: without AAD that is B0 straight
    /// from the registers it was built in, where reading it back whole from the two 8-byte
    /// stores that wrote it stalls on store forwarding (2 % of comb CCM at 1500 bytes in a
    /// profile).
    ///
    /// # Panics
    ///
    /// If `out` is not exactly that many blocks: the caller sized it with the same formula,
    /// and a mismatch would MAC the wrong blocks.
    #[cfg(feature = "alloc")]
    pub(crate) fn write_mac_header(&self, b0: [u8; 16], aad: &[u8], out: &mut [[u8; 16]]) -> u128 {
        assert_eq!(
            out.len(),
            self.mac_header_blocks(aad.len()),
            "the MAC header is sized by mac_header_blocks"
        );
        let (b0_slot, aad_blocks) = out.split_at_mut(1);
        b0_slot[0] = b0;
        let Some((first, after)) = aad_blocks.split_first_mut() else {
            return u128::from_le_bytes(b0);
        };
        let (encoded, consumed) = aad_header(aad);
        *first = encoded;
        after.as_flattened_mut()[..aad.len() - consumed].copy_from_slice(&aad[consumed..]);
        after.last().map_or(u128::from_le_bytes(encoded), |last| {
            u128::from_le_bytes(*last)
        })
    }

    /// A.2.1: flags (Adata, (M - 2) / 2, L - 1) || N || Q.
    fn b0(&self, nonce: &[u8], aad_len: usize, plaintext_len: usize) -> [u8; 16] {
        self.block_at(
            self.b0_flags(aad_len),
            self.placed_nonce(nonce),
            plaintext_len as u64,
        )
    }

    fn b0_flags(&self, aad_len: usize) -> u8 {
        (u8::from(aad_len > 0) << 6) | (((self.tag_len - 2) / 2) as u8) << 3 | self.l_flag()
    }

    /// L - 1, the flags of the counter blocks and the low bits of B0's.
    fn l_flag(&self) -> u8 {
        (15 - self.nonce_len - 1) as u8
    }

    /// The width of the L-byte field that ends B0 and the counter blocks, in bits.
    fn field_bits(&self) -> u32 {
        8 * (15 - self.nonce_len) as u32
    }

    /// The nonce (n = 7..=13 bytes) shifted to its place in a block, bytes 1..=n, from
    /// fixed-size reads: its first seven bytes (two overlapping 4-byte reads) end the high
    /// half, and its last eight, shifted left past the L-byte field, begin the low half (the
    /// shift pushes out the bytes the high half holds). B0 and the counter blocks share it. A
    /// byte-by-byte loop is a serial chain of 128-bit shifts, which was a tenth of the comb
    /// engine's time on 64-byte messages; a nonce read as an integer and then shifted into
    /// place took 128-bit shifts by variable amounts, a sixth of its bookkeeping on 64-byte
    /// messages (callgrind, AES-NI).
    fn placed_nonce(&self, nonce: &[u8]) -> u128 {
        let be32 = |bytes: Option<&[u8; 4]>| bytes.map_or(0, |b| u64::from(u32::from_be_bytes(*b)));
        let first_four = be32(nonce.first_chunk::<4>());
        let fourth_to_seventh = be32(nonce.get(3..).and_then(<[u8]>::first_chunk::<4>));
        let high = first_four << 24 | (fourth_to_seventh & 0xFF_FFFF);
        // With a 7-byte nonce nothing is left for the low half (and there is no 8-byte read).
        let last_eight = nonce
            .last_chunk::<8>()
            .map_or(0, |b| u64::from_be_bytes(*b));
        let low = last_eight.checked_shl(self.field_bits()).unwrap_or(0);
        u128::from(high) << 64 | u128::from(low)
    }

    /// The layout B0 and the counter blocks share: a flags byte, the nonce (from
    /// [`Ccm::placed_nonce`]), and an L-byte big-endian field. Built in a register: a block
    /// assembled by byte stores and then loaded whole stalls on store forwarding, which was a
    /// quarter of the comb engine's bookkeeping on 64-byte messages in a profile.
    fn block_at(&self, flags: u8, placed_nonce: u128, field: u64) -> [u8; 16] {
        // The field is 16 to 64 bits wide.
        let field = field & (u64::MAX >> (64 - self.field_bits()));
        (u128::from(flags) << 120 | placed_nonce | u128::from(field)).to_be_bytes()
    }

    /// A.3: counter block i = flags (L - 1) || N || [i]_L.
    pub(crate) fn counter_block(&self, nonce: &[u8], index: u8) -> [u8; 16] {
        self.block_at(self.l_flag(), self.placed_nonce(nonce), u64::from(index))
    }

    /// CTR over the payload from counter block 1 (encryption and decryption alike).
    pub(crate) fn apply_payload_keystream(&self, nonce: &[u8], data: &mut [u8]) {
        ctr_apply(&self.key, &self.counter_block(nonce, 1), data);
    }

    /// The tag: the first `tag_len` bytes of the MAC xor AES(counter block 0).
    pub(crate) fn encrypt_tag(&self, nonce: &[u8], mac: [u8; 16]) -> [u8; 16] {
        let s0 = self
            .key
            .block_cipher()
            .encrypt_block(&self.counter_block(nonce, 0));
        self.masked_tag(u128::from_le_bytes(mac), u128::from_le_bytes(s0))
            .to_le_bytes()
    }

    /// The tag from the CBC-MAC and S0 = AES(counter block 0) (both as little-endian
    /// integers), cut to the tag length. Integer operations throughout: byte stores followed by a
    /// block load stall on store forwarding, which showed in profiles of short messages.
    pub(crate) fn masked_tag(&self, mac: u128, s0: u128) -> u128 {
        let kept = u128::MAX >> (8 * (16 - self.tag_len));
        (mac ^ s0) & kept
    }
}

/// A message's B0 and counter block 0 ([`Ccm::starts`]).
#[cfg(feature = "alloc")]
pub(crate) struct Starts {
    pub(crate) b0: [u8; 16],
    /// Counter block 0 as a big-endian integer: the counter is its low end.
    counter_zero: u128,
}

#[cfg(feature = "alloc")]
impl Starts {
    /// Counter block `index` (0 or 1: below 2^16, the least the L-byte field holds).
    pub(crate) fn counter(&self, index: u8) -> [u8; 16] {
        (self.counter_zero | u128::from(index)).to_be_bytes()
    }

    /// Counter block 0 stepped back `blocks` in its last 32 bits (big-endian, wrapping), so
    /// that a keystream started there `blocks` blocks early reaches counter 1 on the first
    /// payload block. `blocks` below 2^32.
    pub(crate) fn counter_before(&self, blocks: usize) -> [u8; 16] {
        let low = (self.counter_zero as u32).wrapping_sub(blocks as u32);
        (self.counter_zero & !0xFFFF_FFFF | u128::from(low)).to_be_bytes()
    }
}

/// A.2.2: the first AAD block (the length encoding, then as much AAD as fits) and how many
/// AAD bytes it took.
fn aad_header(aad: &[u8]) -> ([u8; 16], usize) {
    let mut header = [0u8; 16];
    let prefix = aad_length_prefix(aad.len(), &mut header);
    let first = aad.len().min(16 - prefix);
    header[prefix..prefix + first].copy_from_slice(&aad[..first]);
    (header, first)
}

/// The size of the A.2.2 AAD length encoding.
#[cfg(feature = "alloc")]
fn aad_length_size(len: usize) -> usize {
    aad_length_prefix(len, &mut [0; 16])
}

/// Writes the A.2.2 encoding of an AAD length into `header`; returns its size.
fn aad_length_prefix(len: usize, header: &mut [u8; 16]) -> usize {
    let len = len as u64;
    if len < (1 << 16) - (1 << 8) {
        header[..2].copy_from_slice(&(len as u16).to_be_bytes());
        2
    } else if len <= u64::from(u32::MAX) {
        header[..2].copy_from_slice(&[0xFF, 0xFE]);
        header[2..6].copy_from_slice(&(len as u32).to_be_bytes());
        6
    } else {
        header[..2].copy_from_slice(&[0xFF, 0xFF]);
        header[2..10].copy_from_slice(&len.to_be_bytes());
        10
    }
}
