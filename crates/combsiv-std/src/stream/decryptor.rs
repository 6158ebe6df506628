//! [`Decryptor`]: a stream being decrypted, its header checked against [`KdfLimits`] before
//! any work, into a writer, a buffer or a file.

#[cfg(unix)]
use std::fs::File;
use std::io::{self, Read, Write};

use super::Options;
#[cfg(unix)]
use super::PlannedOutput;
use super::chunk_cipher::TAG_LEN;
use super::chunks::{Source, check_output_len, read_full};
use super::error::StreamError;
use super::header::{FileCipher, HEADER_LEN, Header, MAGIC, MasterKey};
use super::kdf::{KdfLimits, KeySource};
use super::positional::ChunkMap;
use super::{files, positional};

impl KdfLimits {
    /// [`StreamError::KdfTooExpensive`] if `source` asks for more than these limits.
    pub fn check(&self, source: &KeySource) -> Result<(), StreamError> {
        match *source {
            KeySource::Argon2id {
                memory_kib,
                iterations,
                parallelism,
            } if memory_kib > self.max_memory_kib
                || iterations > self.max_iterations
                || parallelism > self.max_parallelism =>
            {
                Err(StreamError::KdfTooExpensive {
                    asked: *source,
                    limits: *self,
                })
            }
            _ => Ok(()),
        }
    }
}

/// A stream being decrypted: the header is read, parsed and checked against the
/// [`KdfLimits`] first, so that the caller can derive the key it names (e.g. run Argon2id
/// with its parameters) and check it ([`check_key`](Self::check_key)) before creating any
/// output.
#[derive(Debug)]
pub struct Decryptor<R: Read> {
    input: R,
    header: Header,
    header_tag: [u8; TAG_LEN],
}

impl<R: Read> Decryptor<R> {
    /// Reads and parses the header and header tag, with the default [`KdfLimits`].
    pub fn new(input: R) -> Result<Self, StreamError> {
        Decryptor::with_limits(input, &KdfLimits::DEFAULT)
    }

    /// Reads and parses the header and header tag; a header asking for more key-derivation
    /// work than `limits` allow is refused before anything else happens.
    pub fn with_limits(mut input: R, limits: &KdfLimits) -> Result<Self, StreamError> {
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
        limits.check(&header.key_source)?;
        Ok(Decryptor {
            input,
            header,
            header_tag: header_tag.try_into().map_err(|_| StreamError::NotCombsiv)?,
        })
    }

    /// The stream's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// [`StreamError::WrongKey`] unless the header tag verifies under `key`: a wrong key or
    /// passphrase is found before any output exists.
    pub fn check_key(&self, key: &MasterKey) -> Result<(), StreamError> {
        self.cipher(key, &Options::default()).map(|_| ())
    }

    /// The file cipher, once the header tag verified under `key`.
    pub(crate) fn cipher(
        &self,
        key: &MasterKey,
        options: &Options,
    ) -> Result<FileCipher, StreamError> {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        cipher
            .check_header_tag(&self.header_tag)
            .map_err(|_| StreamError::WrongKey)?;
        Ok(cipher)
    }

    /// Decrypts the chunks into `output`, writing each only after it verified; returns the
    /// number of plaintext bytes. `progress` is called with the running count of input bytes
    /// consumed (after the header).
    pub fn decrypt(
        mut self,
        key: &MasterKey,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError>
    where
        R: Send,
    {
        let cipher = self.cipher(key, options)?;
        let source = Source::Reader(&mut self.input);
        files::open_in_order(
            &cipher,
            self.header.chunk_size,
            source,
            output,
            options,
            progress,
        )
    }
}

impl Decryptor<&[u8]> {
    /// The length of the plaintext this stream holds, or [`StreamError::Truncated`] if it
    /// ends before its final chunk.
    pub fn plaintext_len(&self) -> Result<u64, StreamError> {
        Ok(ChunkMap::of_sealed(self.input.len() as u64, self.header.chunk_size)?.plaintext_len())
    }

    /// Decrypts the stream into `output`, which must be exactly
    /// [`plaintext_len`](Self::plaintext_len) bytes ([`StreamError::WrongOutputLength`]
    /// otherwise, before any work); returns that length. The chunks are opened on every
    /// core, each straight from the input into its place in `output`. On any failure
    /// (this one included) `output` is zeroed: nothing unverified is left in it. See
    /// [`Encryptor::encrypt_into`](super::Encryptor::encrypt_into) for an example.
    pub fn decrypt_into(
        self,
        key: &MasterKey,
        output: &mut [u8],
        options: &Options,
    ) -> Result<u64, StreamError> {
        let opened = ChunkMap::of_sealed(self.input.len() as u64, self.header.chunk_size).and_then(
            |layout| {
                check_output_len(output, layout.plaintext_len())?;
                let cipher = self.cipher(key, options)?;
                let threads = options.threads();
                positional::open_memory(&cipher, self.input, layout, output, threads)?;
                Ok(layout.plaintext_len())
            },
        );
        if opened.is_err() {
            zeroize::Zeroize::zeroize(output);
        }
        opened
    }

    /// [`decrypt`](Self::decrypt) for a stream already in memory: each chunk is opened
    /// straight from the input into its output buffer, with no copy. For a file, use
    /// [`decrypt_file`](Decryptor::decrypt_file), not a mapping of it.
    pub fn decrypt_slice(
        self,
        key: &MasterKey,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = self.cipher(key, options)?;
        let source: Source<'_, io::Empty> = Source::Memory {
            bytes: self.input,
            position: 0,
        };
        files::open_in_order(
            &cipher,
            self.header.chunk_size,
            source,
            output,
            options,
            progress,
        )
    }
}

#[cfg(unix)]
impl Decryptor<&File> {
    /// [`decrypt`](Self::decrypt) for a file, from where the header ended: a regular file
    /// is read as [`Encryptor::encrypt_file`](super::Encryptor::encrypt_file) reads one (positional reads on every worker
    /// into its own buffer, and [`StreamError::InputChanged`] if its size or modification
    /// time changed meanwhile: the output, though every chunk of it verified, must then be
    /// discarded); anything else in order.
    pub fn decrypt_file(
        self,
        key: &MasterKey,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = self.cipher(key, options)?;
        let chunks = (&cipher, self.header.chunk_size);
        files::open_file(chunks, self.input, output, options, progress)
    }
}

#[cfg(unix)]
impl Decryptor<&File> {
    /// Decrypts the stream into the output `output` plans, by the [`OutputFile`](super::OutputFile) policy
    /// (see [`Encryptor::encrypt_to_file`](super::Encryptor::encrypt_to_file)); returns the number of plaintext bytes. The key
    /// is checked, and a regular input's length, before the output is created: a wrong key
    /// or a truncated file leaves nothing behind. From a regular file into a regular file
    /// every chunk is read, opened and written at its place on every core (each written
    /// only once verified); otherwise in order, as [`decrypt_file`](Self::decrypt_file).
    pub fn decrypt_to_file(
        self,
        key: &MasterKey,
        output: PlannedOutput,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = self.cipher(key, options)?;
        let chunks = (&cipher, self.header.chunk_size);
        files::open_file_to(chunks, self.input, output, options, progress)
    }
}
