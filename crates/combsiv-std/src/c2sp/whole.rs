//! A whole message at once, on every core: from memory into a caller's buffer, and file to
//! file by position (or in order through the pipeline, for pipes), with the same output
//! policy as the stream format's files: `Message::new(..)?.encrypt_to_file(..)`,
//! `Message::read(..)?.decrypt_to_file(..)`.
//!
//! ```
//! use combsiv::c2sp::{self, Aead};
//! use combsiv::stream::Options;
//!
//! let key = Aead::Aes256Gcm.generate_key()?;
//! let plaintext = vec![7u8; 100_000];
//! let len = c2sp::ciphertext_len(plaintext.len() as u64).unwrap() as usize;
//! let mut sealed = vec![0; len];
//! c2sp::encrypt_into(Aead::Aes256Gcm, &key, b"app", &plaintext, &mut sealed, &Options::default())?;
//!
//! let mut opened = vec![0; c2sp::plaintext_len(sealed.len() as u64)? as usize];
//! c2sp::decrypt_into(Aead::Aes256Gcm, &key, b"app", &sealed, &mut opened, &Options::default())?;
//! assert_eq!(opened, plaintext);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(unix)]
use std::fs::File;
#[cfg(unix)]
use std::io::Write;

use zeroize::Zeroize;

use super::keys::{MessageKeys, check_input_key};
use super::{Aead, CHUNK_LEN, HEADER_LEN, SALT_LEN};
use crate::stream::chunks::check_output_len;
#[cfg(unix)]
use crate::stream::files;
use crate::stream::{ChunkMap, Options, StreamError, positional};
#[cfg(unix)]
use crate::stream::{PlannedOutput, chunks::read_full};
use combsiv_core::Error;

/// One message's keys, derived from the input key, its salt and the context, with its
/// header: what the whole-message functions seal and open under. [`Message::new`] draws the
/// salt; [`Message::open`] takes it from a message's header and checks the commitment.
pub struct Message {
    pub(super) keys: MessageKeys,
    pub(super) header: [u8; HEADER_LEN],
}

impl core::fmt::Debug for Message {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Message").finish_non_exhaustive()
    }
}

impl Message {
    /// A new message under `input_key` with a fresh random salt.
    pub fn new(aead: Aead, input_key: &[u8], context: &[u8]) -> Result<Message, StreamError> {
        let mut salt = [0u8; SALT_LEN];
        getrandom::fill(&mut salt).map_err(|_| Error::RandomnessUnavailable)?;
        Message::with_salt_hazmat(aead, input_key, context, salt)
    }

    /// **Hazardous**: a new message with the salt given, for an input key derived from the
    /// salt itself (a passphrase, docs/C2SP.md) or known-answer tests. A salt must never
    /// repeat under one input key: draw it from the OS (`getrandom`).
    pub fn with_salt_hazmat(
        aead: Aead,
        input_key: &[u8],
        context: &[u8],
        salt: [u8; SALT_LEN],
    ) -> Result<Message, StreamError> {
        let keys = MessageKeys::derive(aead, input_key, &salt, context)?;
        let mut header = [0u8; HEADER_LEN];
        header[..SALT_LEN].copy_from_slice(&salt);
        header[SALT_LEN..].copy_from_slice(&keys.commitment);
        Ok(Message { keys, header })
    }

    /// The message whose header (salt, then commitment) is `header`:
    /// [`StreamError::WrongKey`] unless its commitment matches (a wrong key or context).
    pub fn open(
        aead: Aead,
        input_key: &[u8],
        context: &[u8],
        header: &[u8; HEADER_LEN],
    ) -> Result<Message, StreamError> {
        let keys = MessageKeys::of_header(aead, input_key, header, context)?;
        Ok(Message {
            keys,
            header: *header,
        })
    }

    /// The message in the file `input` from its current offset: its header read (the
    /// input is left just after it) and its commitment checked, before anything is written
    /// anywhere ([`StreamError::WrongKey`] for a wrong key or context).
    #[cfg(unix)]
    pub fn read(
        aead: Aead,
        input_key: &[u8],
        context: &[u8],
        input: &File,
    ) -> Result<Message, StreamError> {
        check_input_key(aead, input_key)?;
        Message::open(aead, input_key, context, &read_header(input)?)
    }

    /// The salt, then the commitment: what the message starts with.
    pub fn header(&self) -> &[u8; HEADER_LEN] {
        &self.header
    }

    /// Encrypts `input` into `output`, which must be exactly
    /// [`ciphertext_len`](super::ciphertext_len)`(input.len())` bytes
    /// ([`StreamError::WrongOutputLength`] otherwise, before any work): the header, then
    /// the chunks sealed on the options' threads, each straight from `input` into its place.
    pub fn encrypt_into(
        &self,
        input: &[u8],
        output: &mut [u8],
        options: &Options,
    ) -> Result<(), StreamError> {
        let layout = ChunkMap::of_plaintext(input.len() as u64, CHUNK_LEN as u32);
        let len = super::ciphertext_len(input.len() as u64).ok_or(Error::InvalidLength)?;
        check_output_len(output, len)?;
        let (prefix, chunks) = output.split_at_mut(HEADER_LEN);
        prefix.copy_from_slice(&self.header);
        positional::seal_memory(&self.keys, input, layout, chunks, options.threads())
    }

    /// Opens the chunks `input` holds (everything after the header) into `output`, which
    /// must be exactly as long as their plaintext; on any failure `output` is zeroed.
    pub fn decrypt_chunks_into(
        &self,
        chunks: &[u8],
        output: &mut [u8],
        options: &Options,
    ) -> Result<u64, StreamError> {
        let opened =
            ChunkMap::of_sealed(chunks.len() as u64, CHUNK_LEN as u32).and_then(|layout| {
                super::plaintext_len(chunks.len() as u64 + HEADER_LEN as u64)?;
                check_output_len(output, layout.plaintext_len())?;
                positional::open_memory(&self.keys, chunks, layout, output, options.threads())?;
                Ok(layout.plaintext_len())
            });
        if opened.is_err() {
            output.zeroize();
        }
        opened
    }

    /// Writes the header, then encrypts the file `input` from its current offset to its end
    /// into `output` in order (a regular input read by position on every worker); returns
    /// the plaintext length. [`StreamError::InputChanged`] if a regular input changed
    /// meanwhile.
    #[cfg(unix)]
    pub fn encrypt_file(
        &self,
        input: &File,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let chunks = (&self.keys, &self.header[..], CHUNK_LEN as u32);
        files::seal_file(chunks, input, output, options, progress)
    }

    /// Encrypts the file `input` into the output `output` plans, by the
    /// [`OutputFile`](crate::stream::OutputFile) policy: from a regular file into a regular
    /// file every chunk is read, sealed and written at its place on every core; the output
    /// gets its name only once complete, and nothing is left on failure.
    #[cfg(unix)]
    pub fn encrypt_to_file(
        &self,
        input: &File,
        output: PlannedOutput,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        let chunks = (&self.keys, &self.header[..], CHUNK_LEN as u32);
        files::seal_file_to(chunks, input, output, options, progress)
    }

    /// Decrypts the chunks of the file `input` (from its current offset, just after the
    /// header) into `output` in order, each written only once verified; returns the
    /// plaintext length.
    #[cfg(unix)]
    pub fn decrypt_file(
        &self,
        input: &File,
        output: impl Write + Send,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        files::open_file(
            (&self.keys, CHUNK_LEN as u32),
            input,
            output,
            options,
            progress,
        )
    }

    /// Decrypts the chunks of the file `input` (just after the header) into the output
    /// `output` plans: a regular input's length is checked before the output is created;
    /// from a regular file into a regular file on every core.
    #[cfg(unix)]
    pub fn decrypt_to_file(
        &self,
        input: &File,
        output: PlannedOutput,
        options: &Options,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StreamError> {
        files::open_file_to(
            (&self.keys, CHUNK_LEN as u32),
            input,
            output,
            options,
            progress,
        )
    }
}

/// [`Message::encrypt_into`] for a new message.
pub fn encrypt_into(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &[u8],
    output: &mut [u8],
    options: &Options,
) -> Result<(), StreamError> {
    check_output_len(
        output,
        super::ciphertext_len(input.len() as u64).unwrap_or(u64::MAX),
    )?;
    Message::new(aead, input_key, context)?.encrypt_into(input, output, options)
}

/// Decrypts the message `input` into `output`, which must be exactly
/// [`plaintext_len`](super::plaintext_len)`(input.len())` bytes; returns that length. The
/// commitment is checked first ([`StreamError::WrongKey`]), then every chunk is opened on
/// the options' threads. On any failure `output` is zeroed.
pub fn decrypt_into(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &[u8],
    output: &mut [u8],
    options: &Options,
) -> Result<u64, StreamError> {
    let opened = super::plaintext_len(input.len() as u64).and_then(|len| {
        check_output_len(output, len)?;
        let (header, chunks) = input.split_at(HEADER_LEN);
        let header = header.try_into().map_err(|_| StreamError::WrongKey)?;
        Message::open(aead, input_key, context, header)?
            .decrypt_chunks_into(chunks, output, options)
    });
    if opened.is_err() {
        output.zeroize();
    }
    opened
}

/// The header of the message `input` holds from its current offset, read in full:
/// [`StreamError::Truncated`] if the input ends first.
#[cfg(unix)]
pub fn read_header(mut input: &File) -> Result<[u8; HEADER_LEN], StreamError> {
    let mut header = [0u8; HEADER_LEN];
    if read_full(&mut input, &mut header)? < HEADER_LEN {
        return Err(StreamError::Truncated { chunks: 0 });
    }
    Ok(header)
}
