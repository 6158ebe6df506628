//! Everything that can go wrong reading or writing a stream: [`StreamError`].

use alloc::string::String;
use core::fmt;
use std::io;

use super::kdf::{KdfLimits, KeySource};
use combsiv_core::Error;

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

impl From<combsiv_parallel::WorkerFailure> for StreamError {
    fn from(failure: combsiv_parallel::WorkerFailure) -> Self {
        match failure {
            combsiv_parallel::WorkerFailure::Spawn(e) => StreamError::Io(e),
            combsiv_parallel::WorkerFailure::Panicked(what) => {
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
