//! A whole message at once, on every core: from memory into a caller's buffer, and file to
//! file by position (or in order through the pipeline, for pipes), with the same output
//! policy as the stream format's files.
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

/// The keys of a new message with a random salt, and its header.
fn new_message(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
) -> Result<(MessageKeys, [u8; HEADER_LEN]), StreamError> {
    check_input_key(aead, input_key)?;
    let mut salt = [0u8; SALT_LEN];
    getrandom::fill(&mut salt).map_err(|_| Error::RandomnessUnavailable)?;
    let keys = MessageKeys::derive(aead, input_key, &salt, context)?;
    let mut header = [0u8; HEADER_LEN];
    header[..SALT_LEN].copy_from_slice(&salt);
    header[SALT_LEN..].copy_from_slice(&keys.commitment);
    Ok((keys, header))
}

/// Encrypts `input` as one message into `output`, which must be exactly
/// [`ciphertext_len`](super::ciphertext_len)`(input.len())` bytes
/// ([`StreamError::WrongOutputLength`] otherwise, before any work); the chunks are sealed on
/// the options' threads, each straight from `input` into its place.
pub fn encrypt_into(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &[u8],
    output: &mut [u8],
    options: &Options,
) -> Result<(), StreamError> {
    let layout = ChunkMap::of_plaintext(input.len() as u64, CHUNK_LEN as u32);
    let len = super::ciphertext_len(input.len() as u64).ok_or(Error::InvalidLength)?;
    check_output_len(output, len)?;
    let (keys, header) = new_message(aead, input_key, context)?;
    let (prefix, chunks) = output.split_at_mut(HEADER_LEN);
    prefix.copy_from_slice(&header);
    positional::seal_memory(&keys, input, layout, chunks, options.threads())
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
    let opened = (|| {
        let len = super::plaintext_len(input.len() as u64)?;
        check_output_len(output, len)?;
        let (header, chunks) = input.split_at(HEADER_LEN);
        let header = header.try_into().map_err(|_| StreamError::WrongKey)?;
        let keys = MessageKeys::of_header(aead, input_key, header, context)?;
        let layout = ChunkMap::of_sealed(chunks.len() as u64, CHUNK_LEN as u32)?;
        positional::open_memory(&keys, chunks, layout, output, options.threads())?;
        Ok(len)
    })();
    if opened.is_err() {
        output.zeroize();
    }
    opened
}

/// Encrypts the file `input`, from its current offset to its end, into `output` (in order;
/// a regular input is read by position on every worker); returns the plaintext length.
/// [`StreamError::InputChanged`] if a regular input changed meanwhile.
#[cfg(unix)]
pub fn encrypt_file(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &File,
    output: impl Write + Send,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let (keys, header) = new_message(aead, input_key, context)?;
    let chunks = (&keys, &header[..], CHUNK_LEN as u32);
    files::seal_file(chunks, input, output, options, progress)
}

/// Encrypts the file `input` into the output `output` plans, by the
/// [`OutputFile`](crate::stream::OutputFile) policy: from a regular file into a regular file
/// every chunk is read, sealed and written at its place on every core; the output gets its
/// name only once complete, and nothing is left on failure.
#[cfg(unix)]
pub fn encrypt_to_file(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &File,
    output: PlannedOutput,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let (keys, header) = new_message(aead, input_key, context)?;
    let chunks = (&keys, &header[..], CHUNK_LEN as u32);
    files::seal_file_to(chunks, input, output, options, progress)
}

/// The keys of the message `input` holds from its current offset, once its header is read
/// and its commitment matches.
#[cfg(unix)]
fn read_message(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    mut input: &File,
) -> Result<MessageKeys, StreamError> {
    check_input_key(aead, input_key)?;
    let mut header = [0u8; HEADER_LEN];
    if read_full(&mut input, &mut header)? < HEADER_LEN {
        return Err(StreamError::Truncated { chunks: 0 });
    }
    MessageKeys::of_header(aead, input_key, &header, context)
}

/// Decrypts the message in the file `input` (from its current offset) into `output`, in
/// order, each chunk written only once verified; returns the plaintext length. A wrong key
/// or context is found before anything is written.
#[cfg(unix)]
pub fn decrypt_file(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &File,
    output: impl Write + Send,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let keys = read_message(aead, input_key, context, input)?;
    files::open_file((&keys, CHUNK_LEN as u32), input, output, options, progress)
}

/// Decrypts the message in the file `input` into the output `output` plans (see
/// [`encrypt_to_file`]): the commitment, and a regular input's length, are checked before the
/// output is created; from a regular file into a regular file on every core.
#[cfg(unix)]
pub fn decrypt_to_file(
    aead: Aead,
    input_key: &[u8],
    context: &[u8],
    input: &File,
    output: PlannedOutput,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let keys = read_message(aead, input_key, context, input)?;
    files::open_file_to((&keys, CHUNK_LEN as u32), input, output, options, progress)
}
