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

pub(crate) mod chunk_cipher;
pub(crate) mod chunks;
mod decryptor;
mod encryptor;
mod error;
pub(crate) mod files;
mod header;
mod kdf;
#[cfg(unix)]
mod output;
mod pipeline;
pub(crate) mod positional;
#[cfg(unix)]
mod secret_file;
#[cfg(unix)]
mod stamp;

pub use chunk_cipher::TAG_LEN;
pub use header::{
    Algorithm, DEFAULT_CHUNK_SIZE, HEADER_LEN, Header, MAGIC, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE,
    MasterKey, VERSION,
};
#[cfg(unix)]
pub use output::{OutputFile, PlannedOutput, is_same_file, remove_temporary_files};
pub(crate) use positional::ChunkMap;
#[cfg(unix)]
pub use secret_file::{MAX_KEY_FILE_LEN, SecretFileError, read_secret_file};

pub use self::decryptor::Decryptor;
pub use self::encryptor::Encryptor;
pub use self::error::StreamError;
pub use self::kdf::{KdfLimits, KeySource};
use combsiv_core::Backend;

pub use combsiv_parallel::MAX_THREADS;

/// The length of a stream's prefix: the header and its tag.
pub(crate) const PREFIX_LEN: usize = HEADER_LEN + TAG_LEN;

/// How a stream is processed (not part of the format).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Worker threads; 0 means one per available core (at most [`MAX_THREADS`]). Each holds
    /// one chunk in memory (file to file: chunks smaller than 256 KiB go in runs of about
    /// 256 KiB, read into one buffer and sealed or opened into a second).
    pub threads: usize,
    /// The backend to run on; `None` means [`Backend::detected`].
    pub backend: Option<Backend>,
}

impl Options {
    pub(crate) fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::detected)
    }

    /// At most [`MAX_THREADS`]: each thread holds a chunk buffer.
    pub(crate) fn threads(&self) -> usize {
        match self.threads {
            0 => combsiv_parallel::available_cores(),
            n => n.min(MAX_THREADS),
        }
    }
}

/// The bytes of a stream with chunks of `chunk_size` that hold the plaintext bytes
/// `plaintext`: whole sealed chunks, the last one ending where it would end if whole (clip
/// at the stream's length). What a reader of an object store fetches for
/// `random_access::SeekableDecryptor::read_at`, beside the header and the final chunk,
/// which opening the stream reads.
pub fn ciphertext_range(
    chunk_size: u32,
    plaintext: core::ops::Range<u64>,
) -> core::ops::Range<u64> {
    let chunk_size = u64::from(chunk_size.max(1));
    positional::chunk_span(PREFIX_LEN as u64, chunk_size, plaintext)
}

/// The size of the stream that encrypts `plaintext_len` bytes with chunks of `chunk_size`.
pub fn sealed_len(plaintext_len: u64, chunk_size: u32) -> u64 {
    PREFIX_LEN as u64 + ChunkMap::of_plaintext(plaintext_len, chunk_size).sealed_len()
}
