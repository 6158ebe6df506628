//! Random access into a sealed file, in the combsiv stream format or C2SP chunked encryption:
//! read any plaintext range, decrypting only the chunks it touches.
//!
//! Both formats bind every chunk to its position (its nonce is its index) and mark the final
//! chunk (the stream format in its nonce, C2SP by its length), so a chunk read out of order is
//! as authentic as one read in order. [`SeekableDecryptor`] authenticates the final chunk when
//! it opens the file, before it answers anything about the end: the plaintext length, a seek
//! from the end and a read that reaches it all rest on a verified final chunk, and a
//! truncated file fails to open. A read then opens only the chunks it covers (a 4 KiB read:
//! one chunk, or two across a boundary); a damaged chunk fails the reads that touch it and no
//! others.
//!
//! ```
//! use std::io::{Read, Seek, SeekFrom};
//! use combsiv::c2sp::{self, Aead, Encryptor};
//! use combsiv::random_access::SeekableDecryptor;
//!
//! let key = Aead::Aes256GcmSiv.generate_key()?;
//! let plaintext: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
//! let mut encryptor = Encryptor::new(Aead::Aes256GcmSiv, &key, b"app")?;
//! let mut sealed = encryptor.update(&plaintext)?;
//! sealed.extend(encryptor.finalize()?);
//!
//! let file = SeekableDecryptor::c2sp(&sealed[..], Aead::Aes256GcmSiv, &key, b"app")?;
//! assert_eq!(file.len(), 100_000);
//! let mut middle = [0u8; 4096];
//! file.read_at(50_000, &mut middle)?;
//! assert_eq!(middle[..], plaintext[50_000..54_096]);
//!
//! // Or as a reader: the range to fetch from an object store comes first.
//! assert_eq!(c2sp::ciphertext_range(50_000..54_096), 56 + 3 * 16_400..56 + 4 * 16_400);
//! let mut reader = file;
//! reader.seek(SeekFrom::End(-10))?;
//! let mut tail = Vec::new();
//! reader.read_to_end(&mut tail)?;
//! assert_eq!(tail, plaintext[99_990..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod source;
#[cfg(test)]
mod tests;

pub use source::{ReadAt, SeekSource};

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ops::Range;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Mutex;

use zeroize::{Zeroize, Zeroizing};

use crate::c2sp::{self, keys::MessageKeys};
use crate::stream::chunk_cipher::ChunkCipher;
use crate::stream::{self, ChunkMap, Decryptor, KdfLimits, MasterKey, Options, StreamError};

/// A sealed file opened for reading at any offset; see the [module docs](self).
///
/// [`read_at`](Self::read_at) takes `&self`: threads can read one decryptor at once (with a
/// source that allows it). As a [`Read`] + [`Seek`], it keeps a position and the chunk it
/// last opened, so that small sequential reads open each chunk once.
pub struct SeekableDecryptor<S> {
    source: S,
    cipher: Box<dyn ChunkCipher + Send>,
    /// The chunks, counted from `chunks_from`.
    map: ChunkMap,
    chunks_from: u64,
    /// For [`Read`] and [`Seek`]: the plaintext position, and the chunk last opened with its
    /// index.
    position: u64,
    cached: Option<(u64, Zeroizing<Vec<u8>>)>,
    /// A sealed chunk's buffer for `read_at`, kept between reads: wiping a fresh 16 KiB
    /// buffer after every read cost more than opening the chunk (`zeroize` writes byte by
    /// byte). A read that finds it taken by another thread uses a buffer of its own. It
    /// holds the last chunk a read opened until the decryptor is dropped, and is wiped then.
    scratch: Mutex<Zeroizing<Vec<u8>>>,
}

impl<S> core::fmt::Debug for SeekableDecryptor<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeekableDecryptor")
            .field("len", &self.map.plaintext_len())
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

/// No limit on the header's key derivation, which does not run here.
const KEY_ALREADY_DERIVED: KdfLimits = KdfLimits {
    max_memory_kib: u32::MAX,
    max_iterations: u32::MAX,
    max_parallelism: u32::MAX,
};

/// The header of a combsiv stream at the start of `source`, checked against `limits`: what a
/// caller reads first when the key comes from a passphrase (its Argon2id parameters).
pub fn stream_header<S: ReadAt>(
    source: &S,
    limits: &KdfLimits,
) -> Result<stream::Header, StreamError> {
    let prefix = read_prefix::<{ stream::PREFIX_LEN }>(source)?;
    Ok(Decryptor::with_limits(&prefix[..], limits)?
        .header()
        .clone())
}

impl<S: ReadAt> SeekableDecryptor<S> {
    /// Opens a combsiv stream (docs/FORMAT.md) in `source` under `key`:
    /// [`StreamError::WrongKey`] unless the header tag verifies, then the final chunk is
    /// opened ([`StreamError::Truncated`] or [`StreamError::Corrupted`] if it is not there
    /// whole). The header's key-derivation parameters are not limited here: `key` is derived
    /// already (see [`stream_header`]).
    pub fn stream(source: S, key: &MasterKey) -> Result<Self, StreamError> {
        let prefix = read_prefix::<{ stream::PREFIX_LEN }>(&source)?;
        let decryptor = Decryptor::with_limits(&prefix[..], &KEY_ALREADY_DERIVED)?;
        let chunk_size = decryptor.header().chunk_size;
        let cipher = decryptor.cipher(key, &Options::default())?;
        let body_len = sealed_size(&source, stream::PREFIX_LEN)?;
        let map = ChunkMap::of_sealed(body_len, chunk_size)?;
        Self::open(source, Box::new(cipher), map, stream::PREFIX_LEN as u64)
    }

    /// Opens a C2SP chunked-encryption message in `source` sealed with `aead` under
    /// `input_key` and `context`: [`StreamError::WrongKey`] unless the commitment matches,
    /// then the final chunk is opened as for [`stream`](Self::stream).
    pub fn c2sp(
        source: S,
        aead: c2sp::Aead,
        input_key: &[u8],
        context: &[u8],
    ) -> Result<Self, StreamError> {
        c2sp::keys::check_input_key(aead, input_key)?;
        let header = read_prefix::<{ c2sp::HEADER_LEN }>(&source)?;
        let keys = MessageKeys::of_header(aead, input_key, &header, context)?;
        let body_len = sealed_size(&source, c2sp::HEADER_LEN)?;
        c2sp::plaintext_len(body_len + c2sp::HEADER_LEN as u64)?;
        let map = ChunkMap::of_sealed(body_len, c2sp::CHUNK_LEN as u32)?;
        Self::open(source, Box::new(keys), map, c2sp::HEADER_LEN as u64)
    }

    /// Authenticates the final chunk, so that the length can be answered.
    fn open(
        source: S,
        cipher: Box<dyn ChunkCipher + Send>,
        map: ChunkMap,
        chunks_from: u64,
    ) -> Result<Self, StreamError> {
        let mut file = SeekableDecryptor {
            source,
            cipher,
            map,
            chunks_from,
            position: 0,
            cached: None,
            scratch: Mutex::new(Zeroizing::new(Vec::new())),
        };
        let last = map.chunks() - 1;
        let mut chunk = Zeroizing::new(Vec::new());
        file.open_chunk(last, &mut chunk)?;
        file.cached = Some((last, chunk));
        Ok(file)
    }

    /// The plaintext length (authenticated: the final chunk verified when the file opened).
    pub fn len(&self) -> u64 {
        self.map.plaintext_len()
    }

    /// Whether the plaintext is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The source.
    pub fn into_inner(self) -> S {
        self.source
    }

    /// Fills `buf` with the plaintext from `offset` (fewer bytes where the plaintext ends
    /// first) and returns how many bytes it wrote; 0 at or past the end. Only the chunks the
    /// range covers are read and opened; on any failure the first failing chunk's error is
    /// returned and `buf` is zeroed.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, StreamError> {
        let end = offset.saturating_add(buf.len() as u64).min(self.len());
        if offset >= end {
            return Ok(0);
        }
        let n = (end - offset) as usize;
        let result = self.read_range(offset..end, &mut buf[..n]);
        if result.is_err() {
            buf.zeroize();
        }
        result.map(|()| n)
    }

    fn read_range(&self, range: Range<u64>, out: &mut [u8]) -> Result<(), StreamError> {
        let mut own = Zeroizing::new(Vec::new());
        let mut scratch = self.scratch.try_lock().ok();
        let sealed: &mut Vec<u8> = match scratch.as_deref_mut() {
            Some(shared) => shared,
            None => &mut own,
        };
        for index in self.map.chunk_at(range.start)..=self.map.chunk_at(range.end - 1) {
            let chunk = self.map.plaintext(index);
            let from = chunk.start.max(range.start);
            let to = chunk.end.min(range.end);
            let dst = &mut out[(from - range.start) as usize..(to - range.start) as usize];
            self.read_sealed(index, sealed)?;
            if from == chunk.start && to == chunk.end {
                // The whole chunk: opened straight into `out`.
                self.cipher
                    .open_chunk(self.map.position(index), Some(sealed), dst)?;
            } else {
                self.cipher
                    .open_chunk(self.map.position(index), None, sealed)?;
                let skip = (from - chunk.start) as usize;
                dst.copy_from_slice(&sealed[skip..skip + dst.len()]);
            }
        }
        Ok(())
    }

    /// Reads sealed chunk `index` (body and tag) into `buffer`, once: the bytes opened are
    /// the bytes read, whatever the source does meanwhile.
    fn read_sealed(&self, index: u64, buffer: &mut Vec<u8>) -> Result<(), StreamError> {
        let sealed = self.map.sealed(index);
        let len =
            usize::try_from(sealed.end - sealed.start).map_err(|_| StreamError::InputChanged)?;
        buffer.resize(len, 0);
        self.source
            .read_exact_at(buffer, self.chunks_from + sealed.start)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => StreamError::InputChanged,
                _ => StreamError::Io(e),
            })
    }

    /// Chunk `index`'s plaintext, into `data`.
    fn open_chunk(&self, index: u64, data: &mut Vec<u8>) -> Result<(), StreamError> {
        self.read_sealed(index, data)?;
        self.cipher
            .open_chunk(self.map.position(index), None, data)?;
        let body = data.len() - stream::TAG_LEN;
        data.truncate(body);
        Ok(())
    }

    /// The ciphertext bytes (offsets in the source) that hold `plaintext`, clipped to the
    /// plaintext's end: what a range reader fetches.
    pub fn ciphertext_range(&self, plaintext: Range<u64>) -> Range<u64> {
        let end = plaintext.end.min(self.len());
        if plaintext.start >= end {
            return self.chunks_from..self.chunks_from;
        }
        let first = self.map.sealed(self.map.chunk_at(plaintext.start));
        let last = self.map.sealed(self.map.chunk_at(end - 1));
        self.chunks_from + first.start..self.chunks_from + last.end
    }
}

/// The first `N` bytes of `source`: [`StreamError::Truncated`] if it is shorter.
fn read_prefix<const N: usize>(source: &impl ReadAt) -> Result<[u8; N], StreamError> {
    let mut prefix = [0u8; N];
    source
        .read_exact_at(&mut prefix, 0)
        .map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => StreamError::Truncated { chunks: 0 },
            _ => StreamError::Io(e),
        })?;
    Ok(prefix)
}

/// The length of `source` after its first `prefix_len` bytes.
fn sealed_size(source: &impl ReadAt, prefix_len: usize) -> Result<u64, StreamError> {
    Ok(source.size()?.saturating_sub(prefix_len as u64))
}

/// An error of the decryptor as an I/O error: I/O errors as they are, the others as
/// [`io::ErrorKind::InvalidData`] carrying the [`StreamError`].
fn into_io(error: StreamError) -> io::Error {
    match error {
        StreamError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other),
    }
}

impl<S: ReadAt> Read for SeekableDecryptor<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.position >= self.len() || buf.is_empty() {
            return Ok(0);
        }
        let index = self.map.chunk_at(self.position);
        if self
            .cached
            .as_ref()
            .is_none_or(|(cached, _)| *cached != index)
        {
            // The cached chunk's buffer is refilled: no allocation and wipe per chunk.
            let mut chunk = self
                .cached
                .take()
                .map(|(_, chunk)| chunk)
                .unwrap_or_default();
            self.open_chunk(index, &mut chunk).map_err(into_io)?;
            self.cached = Some((index, chunk));
        }
        let Some((_, chunk)) = &self.cached else {
            return Ok(0);
        };
        let skip = (self.position - self.map.plaintext(index).start) as usize;
        let n = buf.len().min(chunk.len() - skip);
        buf[..n].copy_from_slice(&chunk[skip..skip + n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl<S: ReadAt> Seek for SeekableDecryptor<S> {
    /// Moves the position; a position past the end reads nothing, one before the start is
    /// [`io::ErrorKind::InvalidInput`].
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let base = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => self.len().checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        self.position = base.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start or past 2^64",
            )
        })?;
        Ok(self.position)
    }
}
