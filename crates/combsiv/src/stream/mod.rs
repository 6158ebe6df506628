//! Chunked AEAD for data of any size: the combsiv stream format (docs/FORMAT.md).
//!
//! A stream is a 64-byte header, a 16-byte header tag, and chunks of `chunk_size` plaintext
//! bytes (the last one shorter, possibly empty), each sealed with AES-GCM-SIV under a key
//! derived for this stream alone. A chunk's nonce is its index and a final-chunk flag, and
//! its associated data is the header, so reordering, dropping, duplicating, truncating,
//! appending or splicing chunks all fail authentication. Chunks are sealed and opened on all
//! cores; output stays in order and memory stays bounded (a few batches of chunks).
//!
//! Decryption writes a chunk only after it has been verified, so on failure the output holds
//! a verified prefix of the plaintext: callers that must not expose a partial result (the
//! CLI writing a file) write to a temporary place and discard it on error.
//!
//! ```
//! use combsiv::stream::{self, Algorithm, Decryptor, Header, KeySource, MasterKey, Options};
//!
//! let key = MasterKey::generate()?;
//! let header = Header::new(Algorithm::Aes256GcmSiv, 1024, KeySource::KeyFile)?;
//! let plaintext = vec![7u8; 5000];
//! let mut sealed = Vec::new();
//! stream::encrypt(&key, &header, &plaintext[..], &mut sealed, &Options::default(), |_| {})?;
//!
//! let decryptor = Decryptor::new(&sealed[..])?;
//! assert_eq!(decryptor.header(), &header);
//! let mut opened = Vec::new();
//! decryptor.decrypt(&key, &mut opened, &Options::default(), |_| {})?;
//! assert_eq!(opened, plaintext);
//!
//! // Cutting the stream at a chunk boundary is detected.
//! let cut = &sealed[..80 + 1040];
//! let result = Decryptor::new(cut)?.decrypt(&key, &mut Vec::new(), &Options::default(), |_| {});
//! assert!(matches!(result, Err(stream::StreamError::Truncated { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod header;
mod pipeline;

use core::fmt;
use std::io::{self, Read, Write};

pub use header::{
    Algorithm, DEFAULT_CHUNK_SIZE, HEADER_LEN, Header, KeySource, MAGIC, MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE, MasterKey, TAG_LEN, VERSION,
};
use header::{FileCipher, chunk_nonce};
use pipeline::Slot;

use crate::{Backend, Error};

/// Everything that can go wrong reading or writing a stream.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// Reading the input or writing the output failed.
    Io(io::Error),
    /// The input does not start with the combsiv magic bytes.
    NotCombsiv,
    /// The stream was written by a format version this library does not read.
    UnsupportedVersion(u8),
    /// The header is malformed.
    InvalidHeader(&'static str),
    /// The header tag does not verify: the key (or passphrase) is wrong, or the header was
    /// modified.
    WrongKey,
    /// A chunk failed authentication: the stream was modified, reordered or spliced.
    Corrupted {
        /// The index of the first chunk that failed.
        chunk: u64,
    },
    /// The stream ends before its final chunk.
    Truncated {
        /// How many whole chunks were present.
        chunks: u64,
    },
    /// A cryptographic operation failed (e.g. no randomness).
    Crypto(Error),
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Io(e) => write!(f, "I/O error: {e}"),
            StreamError::NotCombsiv => f.write_str("not a combsiv stream (no combsiv header)"),
            StreamError::UnsupportedVersion(v) => {
                write!(f, "unsupported combsiv format version {v}; upgrade combsiv")
            }
            StreamError::InvalidHeader(why) => write!(f, "invalid combsiv header: {why}"),
            StreamError::WrongKey => f.write_str(
                "wrong key or passphrase (or the header was modified): the header does not verify",
            ),
            StreamError::Corrupted { chunk } => write!(
                f,
                "chunk {chunk} is not authentic: the data was modified, reordered or spliced"
            ),
            StreamError::Truncated { chunks } => write!(
                f,
                "the stream is truncated: it ends after {chunks} chunks, before its final chunk"
            ),
            StreamError::Crypto(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Io(e) => Some(e),
            StreamError::Crypto(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

impl From<Error> for StreamError {
    fn from(e: Error) -> Self {
        StreamError::Crypto(e)
    }
}

/// The most worker threads a stream uses.
pub const MAX_THREADS: usize = 256;

/// How a stream is processed (not part of the format).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Worker threads; 0 means one per available core (at most [`MAX_THREADS`]). Each holds
    /// one chunk in memory.
    pub threads: usize,
    /// The backend to run on; `None` means [`Backend::detected`].
    pub backend: Option<Backend>,
}

impl Options {
    fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::detected)
    }

    /// At most [`MAX_THREADS`]: each thread holds a chunk buffer.
    fn threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .min(MAX_THREADS)
    }
}

/// Where the pipeline's output goes, with the running counts for progress reports.
struct Sink<'a, O, P> {
    output: &'a mut O,
    progress: &'a mut P,
    consumed: u64,
    produced: u64,
}

impl<'a, O: Write, P: FnMut(u64)> Sink<'a, O, P> {
    fn new(output: &'a mut O, progress: &'a mut P) -> Self {
        Sink {
            output,
            progress,
            consumed: 0,
            produced: 0,
        }
    }

    fn write(&mut self, slot: &Slot) -> Result<(), StreamError> {
        self.output.write_all(&slot.data)?;
        self.consumed += slot.input_len as u64;
        self.produced += slot.data.len() as u64;
        (self.progress)(self.consumed);
        Ok(())
    }
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Encrypts all of `input` into `output` as one stream under `key`; returns the number of
/// plaintext bytes. `progress` is called with the running count of input bytes consumed.
pub fn encrypt(
    key: &MasterKey,
    header: &Header,
    mut input: impl Read + Send,
    mut output: impl Write + Send,
    options: &Options,
    mut progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    header.validate()?;
    let cipher = FileCipher::new(key, header, options.backend())?;
    let header_bytes = header.to_bytes();
    output.write_all(&header_bytes)?;
    output.write_all(&cipher.header_tag(&header_bytes)?)?;
    let chunk = header.chunk_size as usize;
    let mut sink = Sink::new(&mut output, &mut progress);
    pipeline::run(
        options.threads(),
        chunk + TAG_LEN,
        &mut input,
        &mut sink,
        |input, slot| {
            slot.data.resize(chunk, 0);
            match read_full(input, &mut slot.data) {
                Ok(n) => {
                    slot.data.truncate(n);
                    slot.input_len = n;
                    slot.last = n < chunk;
                }
                Err(e) => slot.error = Some(e.into()),
            }
        },
        |slot| {
            let nonce = chunk_nonce(slot.index, slot.last);
            match cipher.seal(&nonce, &header_bytes, &mut slot.data) {
                Ok(tag) => slot.data.extend_from_slice(&tag),
                Err(e) => slot.error = Some(e.into()),
            }
        },
        |sink, slot| sink.write(slot),
    )?;
    let total = sink.consumed;
    output.flush()?;
    Ok(total)
}

/// A stream being decrypted: the header is read and parsed first, so that the caller can
/// derive the key it names (e.g. run Argon2id with its parameters).
#[derive(Debug)]
pub struct Decryptor<R: Read> {
    input: R,
    header: Header,
    header_bytes: [u8; HEADER_LEN],
    header_tag: [u8; TAG_LEN],
}

impl<R: Read> Decryptor<R> {
    /// Reads and parses the header and header tag.
    pub fn new(mut input: R) -> Result<Self, StreamError> {
        let mut prefix = [0u8; HEADER_LEN + TAG_LEN];
        let n = read_full(&mut input, &mut prefix)?;
        let (header_bytes, header_tag) = prefix.split_at(HEADER_LEN);
        let header_bytes: [u8; HEADER_LEN] = header_bytes
            .try_into()
            .map_err(|_| StreamError::NotCombsiv)?;
        if n < MAGIC.len() || header_bytes[..MAGIC.len()] != MAGIC {
            return Err(StreamError::NotCombsiv);
        }
        if n < prefix.len() {
            return Err(StreamError::Truncated { chunks: 0 });
        }
        let header = Header::parse(&header_bytes)?;
        Ok(Decryptor {
            input,
            header,
            header_bytes,
            header_tag: header_tag.try_into().map_err(|_| StreamError::NotCombsiv)?,
        })
    }

    /// The stream's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Decrypts the chunks into `output`, writing each only after it verified; returns the
    /// number of plaintext bytes. `progress` is called with the running count of input bytes
    /// consumed (after the header).
    pub fn decrypt(
        mut self,
        key: &MasterKey,
        mut output: impl Write + Send,
        options: &Options,
        mut progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError>
    where
        R: Send,
    {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        cipher
            .check_header_tag(&self.header_bytes, &self.header_tag)
            .map_err(|_| StreamError::WrongKey)?;
        let header_bytes = self.header_bytes;
        let sealed_chunk = self.header.chunk_size as usize + TAG_LEN;
        let mut sink = Sink::new(&mut output, &mut progress);
        pipeline::run(
            options.threads(),
            sealed_chunk,
            &mut self.input,
            &mut sink,
            |input, slot| {
                slot.data.resize(sealed_chunk, 0);
                match read_full(input, &mut slot.data) {
                    Ok(n) if n == sealed_chunk => slot.input_len = n,
                    Ok(n) if n >= TAG_LEN => {
                        slot.data.truncate(n);
                        slot.input_len = n;
                        slot.last = true;
                    }
                    Ok(_) => {
                        slot.data.clear();
                        slot.error = Some(StreamError::Truncated { chunks: slot.index });
                    }
                    Err(e) => slot.error = Some(e.into()),
                }
            },
            |slot| {
                let nonce = chunk_nonce(slot.index, slot.last);
                let body_len = slot.input_len - TAG_LEN;
                let (body, tag) = slot.data.split_at_mut(body_len);
                let opened = match <&[u8; TAG_LEN]>::try_from(&*tag) {
                    Ok(tag) => cipher.open(&nonce, &header_bytes, body, tag),
                    Err(_) => Err(Error::Authentication),
                };
                if opened.is_err() {
                    slot.error = Some(StreamError::Corrupted { chunk: slot.index });
                }
                slot.data.truncate(body_len);
            },
            |sink, slot| sink.write(slot),
        )?;
        let total = sink.produced;
        output.flush()?;
        Ok(total)
    }
}

/// The size of the stream that encrypts `plaintext_len` bytes with chunks of `chunk_size`.
pub fn sealed_len(plaintext_len: u64, chunk_size: u32) -> u64 {
    let chunks = plaintext_len / u64::from(chunk_size.max(1)) + 1;
    (HEADER_LEN + TAG_LEN) as u64 + plaintext_len + chunks * TAG_LEN as u64
}
