//! [`Encryptor`]: a stream being encrypted, from a reader, memory or a file.

#[cfg(unix)]
use std::fs::File;
use std::io::{self, Read, Write};

#[cfg(unix)]
use super::PlannedOutput;
use super::chunks::{Source, check_output_len};
use super::error::StreamError;
use super::header::{Algorithm, FileCipher, HEADER_LEN, Header, MasterKey};
use super::kdf::KeySource;
use super::positional::ChunkMap;
use super::{Options, PREFIX_LEN};
use super::{files, positional};
use combsiv_core::Error;

/// A stream being encrypted: its header, with a salt drawn from the operating system's
/// random number generator when it was made. Encrypting consumes it, so no two streams can
/// share a salt (and with it a file key and every chunk nonce) through this API.
///
/// The header is available first so that the caller can derive the key it names: Argon2id
/// salts with [`Header::salt`].
#[derive(Debug)]
pub struct Encryptor {
    header: Header,
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
    /// equal. Use [`Encryptor::new`](super::Encryptor::new).
    pub fn with_salt_hazmat(header: Header) -> Result<Encryptor, StreamError> {
        header.validate()?;
        Ok(Encryptor { header })
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
        input: &File,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        let prefix = self.prefix(&cipher)?;
        let chunks = (&cipher, &prefix[..], self.header.chunk_size);
        files::seal_file(chunks, input, output, options, progress)
    }

    /// Encrypts all of `input` into `output`, which must be exactly
    /// [`sealed_len`](super::sealed_len)`(input.len(), chunk_size)` bytes ([`StreamError::WrongOutputLength`]
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
        let layout = ChunkMap::of_plaintext(input.len() as u64, self.header.chunk_size);
        check_output_len(output, PREFIX_LEN as u64 + layout.sealed_len())?;
        let (prefix, chunks) = output.split_at_mut(PREFIX_LEN);
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        prefix.copy_from_slice(&self.prefix(&cipher)?);
        let threads = options.threads();
        positional::seal_memory(&cipher, input, layout, chunks, threads)
    }

    /// Encrypts the file `input`, from its current offset to its end, into the output
    /// `output` plans, by the [`OutputFile`](super::OutputFile) policy: a temporary file beside the target,
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
        input: &File,
        output: PlannedOutput,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = FileCipher::new(key, &self.header, options.backend())?;
        let prefix = self.prefix(&cipher)?;
        let chunks = (&cipher, &prefix[..], self.header.chunk_size);
        files::seal_file_to(chunks, input, output, options, progress)
    }

    fn run(
        self,
        key: &MasterKey,
        source: Source<'_, impl Read + Send>,
        mut output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let cipher = self.begin(key, &mut output, options)?;
        let chunk_size = self.header.chunk_size;
        files::seal_in_order(&cipher, chunk_size, source, output, options, progress)
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
        header.copy_from_slice(&self.header.to_bytes());
        tag.copy_from_slice(&cipher.header_tag()?);
        Ok(prefix)
    }
}
