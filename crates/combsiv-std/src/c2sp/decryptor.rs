//! Decrypting a message incrementally: the commitment checked as soon as the header is in,
//! each whole chunk opened as soon as it is in (a whole chunk is never the last), the final
//! chunk at [`Decryptor::finalize`].

use alloc::vec::Vec;

use zeroize::{Zeroize, Zeroizing};

use super::keys::{MessageKeys, check_input_key};
use super::{
    Aead, CHUNK_LEN, HEADER_LEN, MAX_CHUNKS, SEALED_CHUNK_LEN, TAG_LEN, check_room, into_vec,
};
use crate::stream::StreamError;
use combsiv_core::Error;

/// Decrypts one message in the C2SP chunked format, fed in pieces of any size: `update`
/// returns the plaintext of every chunk that is in and authentic, `finalize` the final
/// chunk's, and refuses a message that ends without one (truncated). Memory stays at one
/// sealed chunk.
///
/// Plaintext is returned only once its chunk's tag verifies. After a failure every call
/// fails the same way: a message that failed once is not read further.
pub struct Decryptor {
    state: State,
    /// Bytes of the chunk being filled: fewer than [`SEALED_CHUNK_LEN`].
    buffer: Vec<u8>,
    next_chunk: u64,
}

enum State {
    /// The header is still coming in; the input key and context wait for it.
    Header {
        aead: Aead,
        input_key: Zeroizing<Vec<u8>>,
        context: Vec<u8>,
        header: Vec<u8>,
    },
    Chunks(MessageKeys),
    Failed(Failure),
}

/// Why a decryptor stopped: what it answers from then on.
#[derive(Clone, Copy)]
enum Failure {
    WrongKey,
    Corrupted(u64),
    TooLong,
}

impl Failure {
    fn error(self) -> StreamError {
        match self {
            Failure::WrongKey => StreamError::WrongKey,
            Failure::Corrupted(chunk) => StreamError::Corrupted { chunk },
            Failure::TooLong => StreamError::Crypto(Error::InvalidLength),
        }
    }
}

impl Decryptor {
    /// A decryptor for a message sealed under `input_key` with `context`. A wrong key or
    /// context shows once the header is in: [`StreamError::WrongKey`].
    pub fn new(aead: Aead, input_key: &[u8], context: &[u8]) -> Result<Decryptor, StreamError> {
        check_input_key(aead, input_key)?;
        Ok(Decryptor {
            state: State::Header {
                aead,
                input_key: Zeroizing::new(input_key.to_vec()),
                context: context.to_vec(),
                header: Vec::with_capacity(HEADER_LEN),
            },
            buffer: Vec::new(),
            next_chunk: 0,
        })
    }

    /// How many bytes [`update`](Self::update) returns at most for `data_len` more bytes of
    /// ciphertext: 16 KiB for every whole chunk they complete.
    pub fn update_len(&self, data_len: usize) -> usize {
        let body = match &self.state {
            State::Header { header, .. } => data_len.saturating_sub(HEADER_LEN - header.len()),
            _ => self.buffer.len().saturating_add(data_len),
        };
        body / SEALED_CHUNK_LEN * CHUNK_LEN
    }

    /// How many bytes [`finalize`](Self::finalize) returns at most: the final chunk's
    /// plaintext.
    pub fn finalize_len(&self) -> usize {
        self.buffer.len().saturating_sub(TAG_LEN)
    }

    /// Takes in `data` and returns the plaintext of every chunk it completes.
    pub fn update(&mut self, data: &[u8]) -> Result<Vec<u8>, StreamError> {
        into_vec(self.update_len(data.len()), |out| {
            self.update_into(data, out)
        })
    }

    /// [`update`](Self::update) into `out`, which must hold at least
    /// [`update_len`](Self::update_len)`(data.len())` bytes; returns how many it wrote. On
    /// failure what this call wrote is zeroed.
    pub fn update_into(&mut self, mut data: &[u8], out: &mut [u8]) -> Result<usize, StreamError> {
        let needed = self.update_len(data.len());
        check_room(out, needed)?;
        if let State::Header { header, .. } = &mut self.state {
            let take = (HEADER_LEN - header.len()).min(data.len());
            header.extend_from_slice(&data[..take]);
            data = &data[take..];
            if header.len() < HEADER_LEN {
                return Ok(0);
            }
            self.check_commitment()?;
        }
        let keys = match &self.state {
            State::Chunks(keys) => keys,
            State::Failed(failure) => return Err(failure.error()),
            State::Header { .. } => unreachable!("the header is complete"),
        };
        let chunks = ((self.buffer.len() + data.len()) / SEALED_CHUNK_LEN) as u64;
        if chunks >= MAX_CHUNKS - self.next_chunk {
            self.state = State::Failed(Failure::TooLong);
            return Err(Failure::TooLong.error());
        }
        let mut written = 0;
        let mut result = Ok(());
        if !self.buffer.is_empty() {
            let take = (SEALED_CHUNK_LEN - self.buffer.len()).min(data.len());
            self.buffer.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffer.len() == SEALED_CHUNK_LEN {
                let plaintext = &mut out[written..written + CHUNK_LEN];
                result = keys.open(self.next_chunk, &self.buffer, plaintext);
                self.next_chunk += 1;
                written += CHUNK_LEN;
                self.buffer.clear();
            }
        }
        while result.is_ok()
            && let Some((sealed, rest)) = data.split_at_checked(SEALED_CHUNK_LEN)
        {
            let plaintext = &mut out[written..written + CHUNK_LEN];
            result = keys.open(self.next_chunk, sealed, plaintext);
            self.next_chunk += 1;
            written += CHUNK_LEN;
            data = rest;
        }
        if let Err(error) = result {
            out[..written].zeroize();
            self.state = State::Failed(Failure::Corrupted(self.next_chunk - 1));
            return Err(error);
        }
        self.buffer.extend_from_slice(data);
        Ok(written)
    }

    /// Derives the message's keys from the complete header and checks its commitment.
    fn check_commitment(&mut self) -> Result<(), StreamError> {
        let State::Header {
            aead,
            input_key,
            context,
            header,
        } = &self.state
        else {
            return Ok(());
        };
        let header: &[u8; HEADER_LEN] = header[..].try_into().map_err(|_| StreamError::WrongKey)?;
        self.state = match MessageKeys::of_header(*aead, input_key, header, context) {
            Ok(keys) => State::Chunks(keys),
            Err(StreamError::WrongKey) => State::Failed(Failure::WrongKey),
            Err(other) => return Err(other),
        };
        match self.state {
            State::Failed(failure) => Err(failure.error()),
            _ => Ok(()),
        }
    }

    /// Ends the message: opens the final chunk, which must be there and shorter than a
    /// whole one, and returns its plaintext. A message that ends before its header, or on
    /// a chunk boundary, is [`StreamError::Truncated`].
    pub fn finalize(self) -> Result<Vec<u8>, StreamError> {
        into_vec(self.finalize_len(), |out| self.finalize_into(out))
    }

    /// [`finalize`](Self::finalize) into `out`, which must hold at least
    /// [`finalize_len`](Self::finalize_len) bytes; returns how many it wrote, and on
    /// failure leaves them zeroed.
    pub fn finalize_into(self, out: &mut [u8]) -> Result<usize, StreamError> {
        let keys = match &self.state {
            State::Chunks(keys) => keys,
            State::Failed(failure) => return Err(failure.error()),
            State::Header { .. } => return Err(StreamError::Truncated { chunks: 0 }),
        };
        if self.buffer.len() < TAG_LEN {
            return Err(StreamError::Truncated {
                chunks: self.next_chunk,
            });
        }
        let needed = self.finalize_len();
        check_room(out, needed)?;
        keys.open(self.next_chunk, &self.buffer, &mut out[..needed])?;
        Ok(needed)
    }
}

impl core::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Decryptor")
            .field("chunks_opened", &self.next_chunk)
            .finish_non_exhaustive()
    }
}
