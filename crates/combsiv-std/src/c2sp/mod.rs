//! C2SP chunked encryption, version 1 (<https://c2sp.org/chunked-encryption>), with SHA-512
//! as its hash: byte for byte the format `cryptography` ships as Cobblestone.
//!
//! Per message, HKDF-Expand with SHA-512 turns an input key, a random 24-byte salt and an
//! application context into a one-message AEAD key, a base nonce and a 32-byte key
//! commitment:
//!
//! ```text
//! key || base nonce || commitment = HKDF-Expand(prk = input key,
//!     info = "c2sp.org/chunked-encryption@v1+" || AEAD name || 0x00 || salt || context)
//! ciphertext = salt || commitment || chunk 0 || chunk 1 || ...
//! ```
//!
//! The message is cut into chunks of 16 KiB, the last always shorter (possibly empty), so that
//! the last chunk marks the end. Chunk `i` is sealed under `base nonce XOR i` (big-endian)
//! with empty associated data, and lies at byte `56 + i * (16384 + 16)`. A decryptor checks
//! the commitment before anything else, and a message that ends on a chunk boundary is
//! truncated.
//!
//! [`Aead::Aes128Gcm`] and [`Aead::Aes256Gcm`] are Cobblestone-128 and Cobblestone-256;
//! [`Aead::Aes128GcmSiv`] and [`Aead::Aes256GcmSiv`] are combsiv's instantiation of the same
//! construction over AES-GCM-SIV, named `AEAD_AES_128_GCM_SIV` and `AEAD_AES_256_GCM_SIV` in
//! the derivation as the IANA AEAD registry names them (docs/C2SP.md).
//!
//! ```
//! use combsiv::c2sp::{Aead, Decryptor, Encryptor};
//!
//! let key = Aead::Aes128Gcm.generate_key()?;
//! let mut encryptor = Encryptor::new(Aead::Aes128Gcm, &key, b"my-app v1")?;
//! let mut sealed = encryptor.update(&[7u8; 20_000])?;
//! sealed.extend(encryptor.finalize()?);
//! assert_eq!(sealed.len(), 56 + 16_384 + 16 + (20_000 - 16_384) + 16);
//!
//! let mut decryptor = Decryptor::new(Aead::Aes128Gcm, &key, b"my-app v1")?;
//! let mut opened = decryptor.update(&sealed)?;
//! opened.extend(decryptor.finalize()?);
//! assert_eq!(opened, [7u8; 20_000]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decryptor;
mod encryptor;
pub(crate) mod keys;
mod whole;

pub use decryptor::Decryptor;
pub use encryptor::Encryptor;
#[cfg(unix)]
pub use whole::read_header;
pub use whole::{Message, decrypt_into, encrypt_into};

use alloc::vec::Vec;
use core::ops::Range;

use zeroize::Zeroizing;

use crate::stream::StreamError;
use combsiv_core::{AesKeySize, Error};

/// Plaintext bytes in every chunk but the last, which holds fewer.
pub const CHUNK_LEN: usize = 16 * 1024;
/// Length of the random salt that starts a message.
pub const SALT_LEN: usize = 24;
/// Length of the key commitment that follows the salt.
pub const COMMITMENT_LEN: usize = 32;
/// Length of what precedes the chunks: the salt and the commitment.
pub const HEADER_LEN: usize = SALT_LEN + COMMITMENT_LEN;
/// Length of each chunk's tag.
pub const TAG_LEN: usize = 16;
/// Length of a sealed whole chunk.
pub const SEALED_CHUNK_LEN: usize = CHUNK_LEN + TAG_LEN;
/// The most chunks a message may have (the spec's 38-bit counter): just under 4 PiB.
pub const MAX_CHUNKS: u64 = 1 << 38;

/// The AEAD that seals the chunks, and with it the name the key derivation binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aead {
    /// AES-128-GCM: Cobblestone-128.
    Aes128Gcm,
    /// AES-256-GCM: Cobblestone-256.
    Aes256Gcm,
    /// AES-128-GCM-SIV (RFC 8452).
    Aes128GcmSiv,
    /// AES-256-GCM-SIV (RFC 8452).
    Aes256GcmSiv,
}

impl Aead {
    /// Every AEAD, Cobblestone's two first.
    pub const ALL: [Aead; 4] = [
        Aead::Aes128Gcm,
        Aead::Aes256Gcm,
        Aead::Aes128GcmSiv,
        Aead::Aes256GcmSiv,
    ];

    /// The name in the IANA AEAD registry, which the key derivation binds.
    pub fn iana_name(self) -> &'static str {
        match self {
            Aead::Aes128Gcm => "AEAD_AES_128_GCM",
            Aead::Aes256Gcm => "AEAD_AES_256_GCM",
            Aead::Aes128GcmSiv => "AEAD_AES_128_GCM_SIV",
            Aead::Aes256GcmSiv => "AEAD_AES_256_GCM_SIV",
        }
    }

    /// The AES key size, which is also the input key's length.
    pub fn key_size(self) -> AesKeySize {
        match self {
            Aead::Aes128Gcm | Aead::Aes128GcmSiv => AesKeySize::Aes128,
            Aead::Aes256Gcm | Aead::Aes256GcmSiv => AesKeySize::Aes256,
        }
    }

    /// Whether the chunks are sealed with AES-GCM-SIV rather than AES-GCM.
    pub fn is_gcm_siv(self) -> bool {
        matches!(self, Aead::Aes128GcmSiv | Aead::Aes256GcmSiv)
    }

    /// A new random input key of the AEAD's key length.
    pub fn generate_key(self) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut key = Zeroizing::new(vec![0u8; self.key_size().key_len()]);
        getrandom::fill(&mut key).map_err(|_| Error::RandomnessUnavailable)?;
        Ok(key)
    }
}

/// The length of the ciphertext of `plaintext_len` bytes: the header, every chunk's tag and
/// the final chunk's, which is there even when it is empty. `None` past [`MAX_CHUNKS`].
pub fn ciphertext_len(plaintext_len: u64) -> Option<u64> {
    let chunks = plaintext_len / CHUNK_LEN as u64 + 1;
    if chunks > MAX_CHUNKS {
        return None;
    }
    Some(HEADER_LEN as u64 + plaintext_len + chunks * TAG_LEN as u64)
}

/// The length of the plaintext a ciphertext of `ciphertext_len` bytes holds, or
/// [`StreamError::Truncated`] if no message has that length: shorter than the header and an
/// empty final chunk, or a final chunk shorter than its tag (including none at all, when
/// the ciphertext ends on a chunk boundary).
pub fn plaintext_len(ciphertext_len: u64) -> Result<u64, StreamError> {
    let body = ciphertext_len
        .checked_sub(HEADER_LEN as u64)
        .ok_or(StreamError::Truncated { chunks: 0 })?;
    let whole = body / SEALED_CHUNK_LEN as u64;
    let last = body % SEALED_CHUNK_LEN as u64;
    if last < TAG_LEN as u64 || whole >= MAX_CHUNKS {
        return Err(StreamError::Truncated { chunks: whole });
    }
    Ok(whole * CHUNK_LEN as u64 + last - TAG_LEN as u64)
}

/// The ciphertext bytes that hold the plaintext bytes `plaintext`: whole sealed chunks, the
/// last one ending where it would end if whole (clip at the message's length). What a
/// reader of an object store fetches for `random_access::SeekableDecryptor::read_at`,
/// beside the header and the final chunk, which opening the message reads.
pub fn ciphertext_range(plaintext: Range<u64>) -> Range<u64> {
    crate::stream::positional::chunk_span(HEADER_LEN as u64, CHUNK_LEN as u64, plaintext)
}

/// [`StreamError::WrongOutputLength`] unless `out` holds at least `needed` bytes.
fn check_room(out: &[u8], needed: usize) -> Result<(), StreamError> {
    if out.len() < needed {
        return Err(StreamError::WrongOutputLength {
            needed: needed as u64,
            given: out.len() as u64,
        });
    }
    Ok(())
}

/// What a step that writes into a buffer of `len` bytes wrote, as a vector.
fn into_vec(
    len: usize,
    step: impl FnOnce(&mut [u8]) -> Result<usize, StreamError>,
) -> Result<Vec<u8>, StreamError> {
    let mut out = vec![0u8; len];
    let written = step(&mut out)?;
    out.truncate(written);
    Ok(out)
}

#[cfg(test)]
mod tests;
