//! Encrypting a message incrementally: the header first, each whole chunk as soon as its
//! 16 KiB are in, the short final chunk at [`Encryptor::finalize`].

use alloc::vec::Vec;

use zeroize::Zeroizing;

use super::Message;
use super::keys::MessageKeys;
use super::{
    Aead, CHUNK_LEN, HEADER_LEN, MAX_CHUNKS, SALT_LEN, SEALED_CHUNK_LEN, TAG_LEN, check_room,
    into_vec,
};
use crate::stream::StreamError;
use combsiv_core::Error;

/// Encrypts one message in the C2SP chunked format, fed in pieces of any size: `update`
/// returns the ciphertext that is ready (the header, then each whole chunk), `finalize` the
/// rest. Memory stays at one chunk of plaintext.
pub struct Encryptor {
    keys: MessageKeys,
    header: [u8; HEADER_LEN],
    header_pending: bool,
    /// Plaintext of the chunk being filled: fewer than [`CHUNK_LEN`] bytes.
    buffer: Zeroizing<Vec<u8>>,
    next_chunk: u64,
}

impl Encryptor {
    /// An encryptor for a new message under `input_key` (the AEAD's key length, uniformly
    /// random: [`Aead::generate_key`]), with a fresh random salt. `context` is bound into the
    /// message's keys; the decryptor must be given the same.
    pub fn new(aead: Aead, input_key: &[u8], context: &[u8]) -> Result<Encryptor, StreamError> {
        let mut salt = [0u8; SALT_LEN];
        getrandom::fill(&mut salt).map_err(|_| Error::RandomnessUnavailable)?;
        Self::with_salt(aead, input_key, context, salt)
    }

    /// An encryptor with a given salt, for known-answer tests: a salt must never repeat
    /// under one input key.
    pub(super) fn with_salt(
        aead: Aead,
        input_key: &[u8],
        context: &[u8],
        salt: [u8; SALT_LEN],
    ) -> Result<Encryptor, StreamError> {
        let Message { keys, header } = Message::with_salt_hazmat(aead, input_key, context, salt)?;
        Ok(Encryptor {
            keys,
            header,
            header_pending: true,
            buffer: Zeroizing::new(Vec::with_capacity(CHUNK_LEN)),
            next_chunk: 0,
        })
    }

    /// How many bytes [`update`](Self::update) returns for `data_len` more bytes of
    /// plaintext: the header the first time, and every chunk they complete.
    pub fn update_len(&self, data_len: usize) -> usize {
        let chunks = (self.buffer.len().saturating_add(data_len)) / CHUNK_LEN;
        self.header_len() + chunks * SEALED_CHUNK_LEN
    }

    /// How many bytes [`finalize`](Self::finalize) returns: the header if nothing was
    /// returned yet, and the final chunk with its tag.
    pub fn finalize_len(&self) -> usize {
        self.header_len() + self.buffer.len() + TAG_LEN
    }

    fn header_len(&self) -> usize {
        if self.header_pending { HEADER_LEN } else { 0 }
    }

    /// Encrypts `data` and returns the ciphertext that is ready.
    pub fn update(&mut self, data: &[u8]) -> Result<Vec<u8>, StreamError> {
        into_vec(self.update_len(data.len()), |out| {
            self.update_into(data, out)
        })
    }

    /// Encrypts `data` into `out`, which must hold at least
    /// [`update_len`](Self::update_len)`(data.len())` bytes, and returns how many it wrote.
    /// A message past [`MAX_CHUNKS`] chunks is refused before anything is written.
    pub fn update_into(&mut self, mut data: &[u8], out: &mut [u8]) -> Result<usize, StreamError> {
        let needed = self.update_len(data.len());
        check_room(out, needed)?;
        let chunks = ((self.buffer.len() + data.len()) / CHUNK_LEN) as u64;
        if chunks >= MAX_CHUNKS - self.next_chunk {
            return Err(StreamError::Crypto(Error::InvalidLength));
        }
        let mut written = 0;
        if self.header_pending {
            out[..HEADER_LEN].copy_from_slice(&self.header);
            written = HEADER_LEN;
            self.header_pending = false;
        }
        if !self.buffer.is_empty() {
            let take = (CHUNK_LEN - self.buffer.len()).min(data.len());
            self.buffer.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffer.len() == CHUNK_LEN {
                let sealed = &mut out[written..written + SEALED_CHUNK_LEN];
                self.keys.seal(self.next_chunk, &self.buffer, sealed)?;
                self.next_chunk += 1;
                written += SEALED_CHUNK_LEN;
                self.buffer.clear();
            }
        }
        while let Some((chunk, rest)) = data.split_at_checked(CHUNK_LEN) {
            let sealed = &mut out[written..written + SEALED_CHUNK_LEN];
            self.keys.seal(self.next_chunk, chunk, sealed)?;
            self.next_chunk += 1;
            written += SEALED_CHUNK_LEN;
            data = rest;
        }
        self.buffer.extend_from_slice(data);
        Ok(written)
    }

    /// Ends the message: returns the header if it was not returned yet, and the final chunk
    /// (shorter than [`CHUNK_LEN`], possibly empty) with its tag.
    pub fn finalize(self) -> Result<Vec<u8>, StreamError> {
        into_vec(self.finalize_len(), |out| self.finalize_into(out))
    }

    /// [`finalize`](Self::finalize) into `out`, which must hold at least
    /// [`finalize_len`](Self::finalize_len) bytes; returns how many it wrote.
    pub fn finalize_into(self, out: &mut [u8]) -> Result<usize, StreamError> {
        let needed = self.finalize_len();
        check_room(out, needed)?;
        let header = self.header_len();
        out[..header].copy_from_slice(&self.header[..header]);
        self.keys
            .seal(self.next_chunk, &self.buffer, &mut out[header..needed])?;
        Ok(needed)
    }
}

impl core::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Encryptor")
            .field("chunks_sealed", &self.next_chunk)
            .finish_non_exhaustive()
    }
}
