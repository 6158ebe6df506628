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
//! use combsiv::stream::{self, Algorithm, Decryptor, Encryptor, KeySource, MasterKey, Options};
//!
//! let key = MasterKey::generate()?;
//! // The encryptor draws the stream's salt; encrypting consumes it.
//! let encryptor = Encryptor::new(Algorithm::Aes256GcmSiv, 1024, KeySource::KeyFile)?;
//! let header = encryptor.header().clone();
//! let plaintext = vec![7u8; 5000];
//! let mut sealed = Vec::new();
//! encryptor.encrypt(&key, &plaintext[..], &mut sealed, &Options::default(), |_| {})?;
//!
//! let decryptor = Decryptor::new(&sealed[..])?;
//! assert_eq!(decryptor.header(), &header);
//! decryptor.check_key(&key)?; // before creating any output
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
#[cfg(unix)]
mod output;
mod pipeline;
mod positional;
#[cfg(unix)]
mod secret_file;

use alloc::string::String;
use core::fmt;
#[cfg(unix)]
use std::fs::File;
use std::io::{self, Read, Write};

pub use header::{
    Algorithm, DEFAULT_CHUNK_SIZE, HEADER_LEN, Header, KeySource, MAGIC, MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE, MasterKey, TAG_LEN, VERSION,
};
use header::{FileCipher, chunk_nonce};
#[cfg(unix)]
pub use output::{OutputFile, PlannedOutput, is_same_file, remove_temporary_files};
use pipeline::Slot;
use positional::Layout;
#[cfg(unix)]
pub use secret_file::{MAX_KEY_FILE_LEN, SecretFileError, read_secret_file};

use crate::aead::in_out;
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
    /// The header asks for more key-derivation work than the reader allows ([`KdfLimits`]).
    KdfTooExpensive {
        /// What the header asks for.
        asked: KeySource,
        /// What the reader allows.
        limits: KdfLimits,
    },
    /// A worker, the reader, the writer or the progress callback panicked; the stream was
    /// stopped.
    Panicked(String),
    /// A cryptographic operation failed (e.g. no randomness).
    Crypto(Error),
    /// The input file changed (its size or modification time) while it was read: the output
    /// is not the file's contents at any one moment, and must be discarded.
    InputChanged,
    /// The output path names the input file.
    SameFile(std::path::PathBuf),
    /// The output path exists (or appeared while the output was written), and overwriting
    /// was not asked for.
    OutputExists(std::path::PathBuf),
    /// The output file (the temporary file beside this path) could not be created.
    CreateOutput(std::path::PathBuf, io::Error),
    /// The output path is a block device (a disk) and overwriting was not asked for.
    BlockDevice(std::path::PathBuf),
    /// The output path is a FIFO that no process has open for reading.
    NoReader(std::path::PathBuf),
    /// A caller-provided output buffer does not have the length the stream needs.
    WrongOutputLength {
        /// The length needed.
        needed: u64,
        /// The length given.
        given: u64,
    },
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
            StreamError::KdfTooExpensive { asked, limits } => {
                let (memory, passes, lanes) = match asked {
                    KeySource::Argon2id {
                        memory_kib,
                        iterations,
                        parallelism,
                    } => (*memory_kib, *iterations, *parallelism),
                    KeySource::KeyFile => (0, 0, 0),
                };
                write!(
                    f,
                    "the header asks Argon2id for {memory} KiB, {passes} passes and {lanes} \
                     lanes, more than this reader allows ({} KiB, {} passes, {} lanes)",
                    limits.max_memory_kib, limits.max_iterations, limits.max_parallelism
                )
            }
            StreamError::Panicked(what) => write!(f, "the stream stopped: {what}"),
            StreamError::Crypto(e) => write!(f, "{e}"),
            StreamError::InputChanged => f.write_str(
                "the input file changed (size or modification time) while it was being read",
            ),
            StreamError::SameFile(path) => write!(
                f,
                "input and output are the same file ({}): it would be destroyed",
                path.display()
            ),
            StreamError::OutputExists(path) => {
                write!(f, "refusing to overwrite {}: it exists", path.display())
            }
            StreamError::CreateOutput(path, e) => {
                write!(f, "cannot create {}: {e}", path.display())
            }
            StreamError::BlockDevice(path) => write!(
                f,
                "refusing to write over {}: it is a block device (a disk)",
                path.display()
            ),
            StreamError::NoReader(path) => write!(
                f,
                "nothing is reading the FIFO {}: start its reader first",
                path.display()
            ),
            StreamError::WrongOutputLength { needed, given } => write!(
                f,
                "the output buffer is {given} bytes; this stream needs exactly {needed}"
            ),
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Io(e) | StreamError::CreateOutput(_, e) => Some(e),
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

impl From<crate::parallel::WorkerFailure> for StreamError {
    fn from(failure: crate::parallel::WorkerFailure) -> Self {
        match failure {
            crate::parallel::WorkerFailure::Spawn(e) => StreamError::Io(e),
            crate::parallel::WorkerFailure::Panicked(what) => {
                StreamError::Panicked(alloc::format!("a stream thread panicked: {what}"))
            }
        }
    }
}

impl From<Error> for StreamError {
    fn from(e: Error) -> Self {
        StreamError::Crypto(e)
    }
}

pub use crate::parallel::MAX_THREADS;

/// The length of a stream's prefix: the header and its tag.
const PREFIX_LEN: usize = HEADER_LEN + TAG_LEN;

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
            0 => crate::parallel::available_cores(),
            n => n.min(MAX_THREADS),
        }
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

/// Where a stream's chunks come from: a reader, each chunk copied into its slot's buffer
/// by whoever holds the input; bytes in memory, each slot naming its range (nothing is
/// copied; the AEAD reads the range and writes the slot's buffer); or a file, each slot
/// naming its range for the worker to read into its own buffer with a positional read.
enum Source<'m, R> {
    Reader(R),
    Memory {
        bytes: &'m [u8],
        position: usize,
    },
    #[cfg(unix)]
    File {
        file: &'m File,
        len: u64,
        position: u64,
    },
}

/// Where a worker fetches a slot's input that is not in its buffer (see [`Source`]).
#[derive(Clone, Copy)]
enum Fetch<'m> {
    InBuffer,
    Memory(&'m [u8]),
    #[cfg(unix)]
    File(&'m File),
}

impl<'m, R: Read> Source<'m, R> {
    fn fetch(&self) -> Fetch<'m> {
        match self {
            Source::Reader(_) => Fetch::InBuffer,
            Source::Memory { bytes, .. } => Fetch::Memory(bytes),
            #[cfg(unix)]
            Source::File { file, .. } => Fetch::File(file),
        }
    }

    /// Takes the next `want` bytes (fewer at the end) into the slot; returns how many.
    fn next(&mut self, want: usize, slot: &mut Slot) -> io::Result<usize> {
        match self {
            Source::Reader(input) => {
                slot.data.resize(want, 0);
                let n = read_full(input, &mut slot.data)?;
                slot.data.truncate(n);
                Ok(n)
            }
            Source::Memory { bytes, position } => {
                let n = want.min(bytes.len() - *position);
                slot.input = Some(*position as u64..(*position + n) as u64);
                *position += n;
                Ok(n)
            }
            #[cfg(unix)]
            Source::File { len, position, .. } => {
                // An offset at or past the end (a file shorter than where it was opened)
                // reads nothing: the final, empty chunk.
                let left = len.saturating_sub(*position);
                let n = usize::try_from(left).map_or(want, |left| left.min(want));
                slot.input = Some(*position..*position + n as u64);
                *position += n as u64;
                Ok(n)
            }
        }
    }
}

impl Fetch<'_> {
    /// The slot's input: `Some` to read in place (in memory), or `None` once it is in the
    /// slot's buffer (it was read there, or is now fetched from the file, whose bytes another
    /// process may change: the worker seals its own copy, so the output always opens to what
    /// was read).
    fn input<'a>(self, slot: &mut Slot) -> Result<Option<&'a [u8]>, StreamError>
    where
        Self: 'a,
    {
        let Some(range) = slot.input.clone() else {
            return Ok(None);
        };
        match self {
            Fetch::InBuffer => Ok(None),
            Fetch::Memory(memory) => {
                let at = |offset: u64| usize::try_from(offset).unwrap_or(usize::MAX);
                memory
                    .get(at(range.start)..at(range.end))
                    .map(Some)
                    .ok_or(StreamError::InputChanged)
            }
            #[cfg(unix)]
            Fetch::File(file) => {
                let len = usize::try_from(range.end - range.start)
                    .map_err(|_| StreamError::InputChanged)?;
                slot.data.resize(len, 0);
                read_file_at(file, &mut slot.data, range.start).map(|()| None)
            }
        }
    }
}

/// Fills `buffer` from `file` at `offset`: [`StreamError::InputChanged`] if the file ends
/// first (it was shorter than when its size was read).
#[cfg(unix)]
fn read_file_at(file: &File, buffer: &mut [u8], offset: u64) -> Result<(), StreamError> {
    use std::os::unix::fs::FileExt;
    match file.read_exact_at(buffer, offset) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(StreamError::InputChanged),
        Err(e) => Err(StreamError::Io(e)),
    }
}

/// Seals one chunk into `sealed` (body, then tag): from `plaintext`, or in place from the
/// body when `plaintext` is `None`.
fn seal_chunk(
    cipher: &FileCipher,
    header: &[u8; HEADER_LEN],
    nonce: [u8; 12],
    plaintext: Option<&[u8]>,
    sealed: &mut [u8],
) -> Result<(), Error> {
    let body_len = sealed
        .len()
        .checked_sub(TAG_LEN)
        .ok_or(Error::InvalidLength)?;
    let (body, tag) = sealed.split_at_mut(body_len);
    let buf = match plaintext {
        Some(plaintext) => in_out(plaintext, body)?,
        None => body.into(),
    };
    tag.copy_from_slice(&cipher.aead.seal_inout(&nonce, header, buf)?);
    Ok(())
}

/// Opens one chunk: from `sealed` (body, then tag) into `data`, or, when `sealed` is
/// `None`, in place in `data` (body, then tag; the plaintext ends up in the body). Nothing
/// unverified is left on failure.
fn open_chunk(
    cipher: &FileCipher,
    header: &[u8; HEADER_LEN],
    nonce: [u8; 12],
    sealed: Option<&[u8]>,
    data: &mut [u8],
) -> Result<(), Error> {
    match sealed {
        Some(sealed) => {
            let body_len = sealed
                .len()
                .checked_sub(TAG_LEN)
                .ok_or(Error::Authentication)?;
            let (body, tag) = sealed.split_at(body_len);
            let tag = <&[u8; TAG_LEN]>::try_from(tag).map_err(|_| Error::Authentication)?;
            cipher
                .aead
                .open_inout(&nonce, header, in_out(body, data)?, tag)
        }
        None => {
            let body_len = data
                .len()
                .checked_sub(TAG_LEN)
                .ok_or(Error::Authentication)?;
            let (body, tag) = data.split_at_mut(body_len);
            let tag: [u8; TAG_LEN] = (&*tag).try_into().map_err(|_| Error::Authentication)?;
            cipher.aead.open_inout(&nonce, header, body.into(), &tag)
        }
    }
}

/// The stream's chunk `slot` sealed: from its input in memory into the buffer in one pass,
/// or in its own buffer (read from a reader or fetched from a file). The tag goes after the
/// chunk.
fn seal_slot(cipher: &FileCipher, header: &[u8; HEADER_LEN], fetch: Fetch<'_>, slot: &mut Slot) {
    let nonce = chunk_nonce(slot.index, slot.last);
    let sealed = fetch.input(slot).and_then(|plaintext| {
        let len = plaintext.map_or(slot.data.len(), <[u8]>::len);
        slot.data.resize(len + TAG_LEN, 0);
        Ok(seal_chunk(
            cipher,
            header,
            nonce,
            plaintext,
            &mut slot.data,
        )?)
    });
    if let Err(e) = sealed {
        slot.data.clear();
        slot.error = Some(e);
    }
}

/// The stream's chunk `slot` opened (body then tag): from its input in memory into the
/// buffer in one pass, or in its own buffer. The buffer ends up holding the plaintext, or
/// nothing on failure.
fn open_slot(cipher: &FileCipher, header: &[u8; HEADER_LEN], fetch: Fetch<'_>, slot: &mut Slot) {
    let nonce = chunk_nonce(slot.index, slot.last);
    let body_len = slot.input_len - TAG_LEN;
    let opened = fetch.input(slot).and_then(|sealed| {
        if sealed.is_some() {
            slot.data.resize(body_len, 0);
        }
        open_chunk(cipher, header, nonce, sealed, &mut slot.data)
            .map_err(|_| StreamError::Corrupted { chunk: slot.index })
    });
    slot.data.truncate(body_len);
    if let Err(e) = opened {
        slot.data.clear();
        slot.error = Some(e);
    }
}

/// A stream being encrypted: its header, with a salt drawn from the operating system's
/// random number generator when it was made. Encrypting consumes it, so no two streams can
/// share a salt (and with it a file key and every chunk nonce) through this API.
///
/// The header is available first so that the caller can derive the key it names: Argon2id
/// salts with [`Header::salt`].
#[derive(Debug)]
pub struct Encryptor {
    header: Header,
    header_bytes: [u8; HEADER_LEN],
}

impl Encryptor {
    /// A new stream of `chunk_size`-byte chunks sealed with `algorithm`, under a key obtained
    /// as `key_source` says, with a fresh random salt.
    pub fn new(
        algorithm: Algorithm,
        chunk_size: u32,
        key_source: KeySource,
    ) -> Result<Encryptor, StreamError> {
        let mut salt = [0u8; 32];
        getrandom::fill(&mut salt)
            .map_err(|_| StreamError::Crypto(Error::RandomnessUnavailable))?;
        Encryptor::with_salt_hazmat(Header {
            algorithm,
            chunk_size,
            key_source,
            salt,
        })
    }

    /// **Hazardous**: a stream with the salt `header` names, for known-answer tests and
    /// reproducible fixtures only. Two streams with the same salt under the same master key
    /// share their file key and every chunk nonce: GCM-SIV then reveals which chunks are
    /// equal. Use [`Encryptor::new`].
    pub fn with_salt_hazmat(header: Header) -> Result<Encryptor, StreamError> {
        header.validate()?;
        let header_bytes = header.to_bytes();
        Ok(Encryptor {
            header,
            header_bytes,
        })
    }

    /// The header this stream will carry.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Encrypts all of `input` into `output` under `key`; returns the number of plaintext
    /// bytes. `progress` is called with the running count of input bytes consumed.
    pub fn encrypt(
        self,
        key: &MasterKey,
        input: impl Read + Send,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        self.run(key, Source::Reader(input), output, options, progress)
    }

    /// [`encrypt`](Self::encrypt) for an input already in memory: each chunk is sealed
    /// straight from `input` into its output buffer, with no copy. For a file, use
    /// [`encrypt_file`](Self::encrypt_file), not a mapping of it: another process can change
    /// a mapped file under the seal (AES-GCM-SIV reads each chunk twice).
    pub fn encrypt_slice(
        self,
        key: &MasterKey,
        input: &[u8],
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let source: Source<'_, io::Empty> = Source::Memory {
            bytes: input,
            position: 0,
        };
        self.run(key, source, output, options, progress)
    }

    /// [`encrypt`](Self::encrypt) for a file, from its current offset to its end. A regular
    /// file is read by position: each worker reads its chunks with positional reads into
    /// its own buffer, so that the reads run on all cores and every chunk is sealed from a
    /// private copy. Its size and modification time are read before and after: if they
    /// changed, or the file ended early, [`StreamError::InputChanged`], and the output must be
    /// discarded (it opens, but not to the file's contents at any one moment). Anything else
    /// (a pipe, a device) is read in order, as [`encrypt`](Self::encrypt) reads.
    #[cfg(unix)]
    pub fn encrypt_file(
        self,
        key: &MasterKey,
        mut input: &File,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let Some(stamp) = Stamp::of_regular(input)? else {
            return self.encrypt(key, input, output, options, progress);
        };
        let source: Source<'_, io::Empty> = Source::File {
            file: input,
            len: stamp.len,
            position: io::Seek::stream_position(&mut input)?,
        };
        let total = self.run(key, source, output, options, progress)?;
        stamp.check(input)?;
        Ok(total)
    }

    /// Encrypts all of `input` into `output`, which must be exactly
    /// [`sealed_len`]`(input.len(), chunk_size)` bytes ([`StreamError::WrongOutputLength`]
    /// otherwise, before any work): the chunks are sealed on every core, each straight from
    /// `input` into its place in `output`.
    ///
    /// ```
    /// use combsiv::stream::{self, Algorithm, Decryptor, Encryptor, KeySource, MasterKey, Options};
    ///
    /// let key = MasterKey::generate()?;
    /// let plaintext = vec![7u8; 100_000];
    /// let encryptor = Encryptor::new(Algorithm::Aes256GcmSiv, 4096, KeySource::KeyFile)?;
    /// let mut sealed = vec![0; stream::sealed_len(plaintext.len() as u64, 4096) as usize];
    /// encryptor.encrypt_into(&key, &plaintext, &mut sealed, &Options::default())?;
    ///
    /// let decryptor = Decryptor::new(&sealed[..])?;
    /// let mut opened = vec![0; decryptor.plaintext_len()? as usize];
    /// decryptor.decrypt_into(&key, &mut opened, &Options::default())?;
    /// assert_eq!(opened, plaintext);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_into(
        self,
        key: &MasterKey,
        input: &[u8],
        output: &mut [u8],
        options: &Options,
    ) -> Result<(), StreamError> {
        let layout = Layout::of_plaintext(input.len() as u64, self.header.chunk_size);
        check_output_len(output, PREFIX_LEN as u64 + layout.sealed_len())?;
        let (prefix, chunks) = output.split_at_mut(PREFIX_LEN);
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        prefix.copy_from_slice(&self.prefix(&cipher)?);
        let threads = options.threads();
        positional::seal_memory(&cipher, &self.header_bytes, input, layout, chunks, threads)
    }

    /// Encrypts the file `input`, from its current offset to its end, into the output
    /// `output` plans, by the [`OutputFile`] policy: a temporary file beside the target,
    /// given the target's name only once complete and flushed (on any error it is removed and
    /// the target untouched). Returns the number of plaintext bytes.
    ///
    /// From a regular file into a regular file, every chunk is read, sealed and written at
    /// its place on every core (positional reads and writes into an output sized first);
    /// the input is checked as [`encrypt_file`](Self::encrypt_file) checks it. Otherwise (a
    /// pipe, an output device) the chunks go in order, as `encrypt_file` writes them.
    #[cfg(unix)]
    pub fn encrypt_to_file(
        self,
        key: &MasterKey,
        mut input: &File,
        output: PlannedOutput,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let mut output = output.create()?;
        let stamp = Stamp::of_regular(input)?;
        let len = match (stamp, output.positional()) {
            (Some(stamp), Some(file)) => {
                let from = io::Seek::stream_position(&mut input)?;
                let len = stamp.len.saturating_sub(from);
                let layout = Layout::of_plaintext(len, self.header.chunk_size);
                let cipher = FileCipher::new(key, &self.header, options.backend())?;
                let prefix = self.prefix(&cipher)?;
                let parts = (&cipher, &self.header_bytes, &prefix[..]);
                positional::seal_file(parts, (input, from), layout, file, options, progress)?;
                stamp.check(input)?;
                layout.plaintext_len()
            }
            _ => self.encrypt_file(key, input, output.file(), options, progress)?,
        };
        output.commit()?;
        Ok(len)
    }

    fn run(
        self,
        key: &MasterKey,
        source: Source<'_, impl Read + Send>,
        mut output: impl Write + Send,
        options: &Options,
        mut progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = self.begin(key, &mut output, options)?;
        let chunk = self.header.chunk_size as usize;
        let fetch = source.fetch();
        let mut sink = Sink::new(&mut output, &mut progress);
        pipeline::run(
            options.threads(),
            chunk + TAG_LEN,
            source,
            &mut sink,
            |source, slot| match source.next(chunk, slot) {
                Ok(n) => {
                    slot.input_len = n;
                    slot.last = n < chunk;
                }
                Err(e) => slot.error = Some(e.into()),
            },
            |slot| seal_slot(&cipher, &self.header_bytes, fetch, slot),
            |sink, slot| sink.write(slot),
        )?;
        let total = sink.consumed;
        output.flush()?;
        Ok(total)
    }

    /// The file cipher, after writing the header and its tag.
    fn begin(
        &self,
        key: &MasterKey,
        output: &mut impl Write,
        options: &Options,
    ) -> Result<FileCipher, StreamError> {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        output.write_all(&self.prefix(&cipher)?)?;
        Ok(cipher)
    }

    /// The header and its tag: what the stream starts with.
    fn prefix(&self, cipher: &FileCipher) -> Result<[u8; PREFIX_LEN], StreamError> {
        let mut prefix = [0; PREFIX_LEN];
        let (header, tag) = prefix.split_at_mut(HEADER_LEN);
        header.copy_from_slice(&self.header_bytes);
        tag.copy_from_slice(&cipher.header_tag(&self.header_bytes)?);
        Ok(prefix)
    }
}

/// The most Argon2id work a reader does for a header before it can check the header's tag.
///
/// The parameters come from the header, which nobody has authenticated yet: without caps a
/// crafted file could make a reader allocate gigabytes and spin for minutes before it learns
/// that the file is not genuine. The defaults ([`KdfLimits::DEFAULT`]) allow 16 times the
/// memory and 3 times the passes combsiv itself writes (64 MiB, 3 passes, 1 lane); raise
/// them only for files you expect to have been made with more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfLimits {
    /// The most memory, in KiB.
    pub max_memory_kib: u32,
    /// The most passes over the memory.
    pub max_iterations: u32,
    /// The most lanes.
    pub max_parallelism: u32,
}

impl KdfLimits {
    /// 1 GiB, 10 passes, 4 lanes.
    pub const DEFAULT: KdfLimits = KdfLimits {
        max_memory_kib: 1024 * 1024,
        max_iterations: 10,
        max_parallelism: 4,
    };

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

impl Default for KdfLimits {
    fn default() -> Self {
        KdfLimits::DEFAULT
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
    header_bytes: [u8; HEADER_LEN],
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
            header_bytes,
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
    fn cipher(&self, key: &MasterKey, options: &Options) -> Result<FileCipher, StreamError> {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        cipher
            .check_header_tag(&self.header_bytes, &self.header_tag)
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
        let header = (self.header_bytes, self.header.chunk_size);
        let source = Source::Reader(&mut self.input);
        Self::run(&cipher, header, source, output, options, progress)
    }

    /// Opens the chunks of a stream with this header (its bytes and chunk size).
    fn run(
        cipher: &FileCipher,
        (header_bytes, chunk_size): ([u8; HEADER_LEN], u32),
        source: Source<'_, impl Read + Send>,
        mut output: impl Write + Send,
        options: &Options,
        mut progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let sealed_chunk = chunk_size as usize + TAG_LEN;
        let fetch = source.fetch();
        let mut sink = Sink::new(&mut output, &mut progress);
        pipeline::run(
            options.threads(),
            sealed_chunk,
            source,
            &mut sink,
            |source, slot| match source.next(sealed_chunk, slot) {
                Ok(n) => sealed_chunk_read(n, sealed_chunk, slot),
                Err(e) => slot.error = Some(e.into()),
            },
            |slot| open_slot(cipher, &header_bytes, fetch, slot),
            |sink, slot| sink.write(slot),
        )?;
        let total = sink.produced;
        output.flush()?;
        Ok(total)
    }
}

impl Decryptor<&[u8]> {
    /// The length of the plaintext this stream holds, or [`StreamError::Truncated`] if it
    /// ends before its final chunk.
    pub fn plaintext_len(&self) -> Result<u64, StreamError> {
        Ok(Layout::of_sealed(self.input.len() as u64, self.header.chunk_size)?.plaintext_len())
    }

    /// Decrypts the stream into `output`, which must be exactly
    /// [`plaintext_len`](Self::plaintext_len) bytes ([`StreamError::WrongOutputLength`]
    /// otherwise, before any work); returns that length. The chunks are opened on every
    /// core, each straight from the input into its place in `output`. On any failure
    /// (this one included) `output` is zeroed: nothing unverified is left in it. See
    /// [`Encryptor::encrypt_into`] for an example.
    pub fn decrypt_into(
        self,
        key: &MasterKey,
        output: &mut [u8],
        options: &Options,
    ) -> Result<u64, StreamError> {
        let opened =
            Layout::of_sealed(self.input.len() as u64, self.header.chunk_size).and_then(|layout| {
                check_output_len(output, layout.plaintext_len())?;
                let cipher = self.cipher(key, options)?;
                let (header, threads) = (&self.header_bytes, options.threads());
                positional::open_memory(&cipher, header, self.input, layout, output, threads)?;
                Ok(layout.plaintext_len())
            });
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
        let header = (self.header_bytes, self.header.chunk_size);
        Self::run(&cipher, header, source, output, options, progress)
    }
}

#[cfg(unix)]
impl Decryptor<&File> {
    /// [`decrypt`](Self::decrypt) for a file, from where the header ended: a regular file
    /// is read as [`Encryptor::encrypt_file`] reads one (positional reads on every worker
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
        let mut input = self.input;
        let Some(stamp) = Stamp::of_regular(input)? else {
            return self.decrypt(key, output, options, progress);
        };
        let cipher = self.cipher(key, options)?;
        let source: Source<'_, io::Empty> = Source::File {
            file: input,
            len: stamp.len,
            position: io::Seek::stream_position(&mut input)?,
        };
        let header = (self.header_bytes, self.header.chunk_size);
        let total = Self::run(&cipher, header, source, output, options, progress)?;
        stamp.check(input)?;
        Ok(total)
    }
}

#[cfg(unix)]
impl Decryptor<&File> {
    /// Decrypts the stream into the output `output` plans, by the [`OutputFile`] policy
    /// (see [`Encryptor::encrypt_to_file`]); returns the number of plaintext bytes. The key
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
        let mut input = self.input;
        let stamp = Stamp::of_regular(input)?;
        let from = io::Seek::stream_position(&mut input)?;
        let chunk_size = self.header.chunk_size;
        let layout = stamp
            .as_ref()
            .map(|stamp| Layout::of_sealed(stamp.len.saturating_sub(from), chunk_size))
            .transpose()?;
        let mut output = output.create()?;
        let len = match (stamp, layout, output.positional()) {
            (Some(stamp), Some(layout), Some(file)) => {
                let parts = (&cipher, &self.header_bytes);
                positional::open_file(parts, (input, from), layout, file, options, progress)?;
                stamp.check(input)?;
                layout.plaintext_len()
            }
            _ => self.decrypt_file(key, output.file(), options, progress)?,
        };
        output.commit()?;
        Ok(len)
    }
}

/// [`StreamError::WrongOutputLength`] unless `output` is `len` bytes long.
fn check_output_len(output: &[u8], len: u64) -> Result<(), StreamError> {
    match output.len() as u64 {
        given if given == len => Ok(()),
        given => Err(StreamError::WrongOutputLength { needed: len, given }),
    }
}

/// A file's size and modification time, to tell whether it changed while it was read.
#[cfg(unix)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

#[cfg(unix)]
impl Stamp {
    /// The stamp of a regular file; `None` for anything else.
    fn of_regular(file: &File) -> io::Result<Option<Stamp>> {
        let meta = file.metadata()?;
        Ok(meta.is_file().then(|| Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }))
    }

    /// [`StreamError::InputChanged`] unless `file` still has this size and time.
    fn check(&self, file: &File) -> Result<(), StreamError> {
        match Stamp::of_regular(file)? {
            Some(now) if now.len == self.len && now.modified == self.modified => Ok(()),
            _ => Err(StreamError::InputChanged),
        }
    }
}

/// What `n` bytes read of a sealed chunk mean: a whole chunk, the final (shorter) one, or,
/// with less than a tag, a stream cut before its final chunk.
fn sealed_chunk_read(n: usize, sealed_chunk: usize, slot: &mut Slot) {
    if n >= TAG_LEN {
        slot.input_len = n;
        slot.last = n < sealed_chunk;
    } else {
        slot.data.clear();
        slot.error = Some(StreamError::Truncated { chunks: slot.index });
    }
}

/// The size of the stream that encrypts `plaintext_len` bytes with chunks of `chunk_size`.
pub fn sealed_len(plaintext_len: u64, chunk_size: u32) -> u64 {
    PREFIX_LEN as u64 + Layout::of_plaintext(plaintext_len, chunk_size).sealed_len()
}
