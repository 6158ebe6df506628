//! The stream file format (the `combsiv` command's files, docs/FORMAT.md) file to file on
//! every core, under a 32-byte master key: the same library code as the command's, with its
//! guarantees. The output is written to a private temporary file beside `dst` and renamed
//! only when complete, so a failure leaves the old `dst` (or none) and never unverified
//! plaintext.

use core::ffi::{CStr, c_char, c_int};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use combsiv::AesKeySize;
use combsiv::stream::{
    Algorithm, DEFAULT_CHUNK_SIZE, Decryptor, Encryptor, KeySource, MasterKey, Options, OutputFile,
    StreamError,
};

use crate::COMBSIV_STREAM_KEY_LEN;
use crate::buffers::{Region, set};
use crate::status::{
    COMBSIV_EAUTH, COMBSIV_ECHANGED, COMBSIV_EEXIST, COMBSIV_EFORMAT, COMBSIV_EINVAL, COMBSIV_EIO,
    COMBSIV_EKEYLEN, code, guard,
};

/// How a file is encrypted or decrypted; a zeroed struct (or NULL) asks for the defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types, reason = "a C type")]
pub struct combsiv_stream_options {
    /// Encryption: the chunk size in bytes, a power of two from 4 KiB to 16 MiB; 0 is
    /// 1 MiB. Ignored by decryption (the file says).
    pub chunk_size: u32,
    /// Encryption: 128 or 256 (the AES key size the chunks are sealed with); 0 is 256.
    pub key_bits: u32,
    /// Worker threads; 0 is one per available core.
    pub threads: usize,
    /// Nonzero: replace an existing output file; zero: `COMBSIV_EEXIST` if it exists.
    pub overwrite: c_int,
}

/// Encrypts the file `src` into the file `dst` under the 32-byte master key `key` with
/// AES-GCM-SIV chunks; the plaintext length is written to `*plaintext_len` (if not NULL).
///
/// # Safety
///
/// `src` and `dst` are NUL-terminated paths; `key` points to `key_len` readable bytes;
/// `options` and `plaintext_len` are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_stream_encrypt_file(
    src: *const c_char,
    dst: *const c_char,
    key: *const u8,
    key_len: usize,
    options: *const combsiv_stream_options,
    plaintext_len: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let (src, dst, key, options) = unsafe { arguments(src, dst, key, key_len, options)? };
        let key_size = match options.key_bits {
            0 | 256 => AesKeySize::Aes256,
            128 => AesKeySize::Aes128,
            _ => return Err(COMBSIV_EINVAL),
        };
        let chunk_size = match options.chunk_size {
            0 => DEFAULT_CHUNK_SIZE,
            size => size,
        };
        let encryptor =
            Encryptor::new(Algorithm::gcm_siv(key_size), chunk_size, KeySource::KeyFile)
                .map_err(stream_code)?;
        let run = || {
            let input = File::open(src)?;
            let output = OutputFile::plan(dst, Some(&input), options.overwrite != 0)?;
            encryptor.encrypt_to_file(&key, &input, output, &engine(&options), |_| {})
        };
        let length = run().map_err(stream_code)?;
        // SAFETY: NULL or writable by the caller's promise.
        unsafe { set(plaintext_len, length) };
        Ok(())
    })
}

/// Decrypts the stream-format file `src` into the file `dst` under the 32-byte master key
/// `key`; the plaintext length is written to `*plaintext_len` (if not NULL). A wrong key, a
/// damaged or truncated file: `COMBSIV_EAUTH`, checked before `dst` is created where the
/// format allows (the key and the length), and no unverified byte is ever at `dst`.
///
/// # Safety
///
/// As `combsiv_stream_encrypt_file`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_stream_decrypt_file(
    src: *const c_char,
    dst: *const c_char,
    key: *const u8,
    key_len: usize,
    options: *const combsiv_stream_options,
    plaintext_len: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let (src, dst, key, options) = unsafe { arguments(src, dst, key, key_len, options)? };
        let run = || {
            let input = File::open(src)?;
            let decryptor = Decryptor::new(&input)?;
            if !matches!(decryptor.header().key_source, KeySource::KeyFile) {
                return Err(StreamError::InvalidHeader(
                    "the file was encrypted with a passphrase; decrypt it with the combsiv command",
                ));
            }
            let output = OutputFile::plan(dst, Some(&input), options.overwrite != 0)?;
            decryptor.decrypt_to_file(&key, output, &engine(&options), |_| {})
        };
        let length = run().map_err(stream_code)?;
        // SAFETY: NULL or writable by the caller's promise.
        unsafe { set(plaintext_len, length) };
        Ok(())
    })
}

/// The paths, the master key and the options, checked.
///
/// # Safety
///
/// As `combsiv_stream_encrypt_file`.
unsafe fn arguments<'a>(
    src: *const c_char,
    dst: *const c_char,
    key: *const u8,
    key_len: usize,
    options: *const combsiv_stream_options,
) -> Result<(&'a Path, &'a Path, MasterKey, combsiv_stream_options), c_int> {
    if src.is_null() || dst.is_null() {
        return Err(COMBSIV_EINVAL);
    }
    // SAFETY: NUL-terminated strings by the caller's promise.
    let (src, dst) = unsafe { (path(CStr::from_ptr(src)), path(CStr::from_ptr(dst))) };
    let key = Region::new(key, key_len)?;
    // SAFETY: readable for key_len bytes by the caller's promise.
    let key: [u8; COMBSIV_STREAM_KEY_LEN] = unsafe { key.as_slice() }
        .try_into()
        .map_err(|_| COMBSIV_EKEYLEN)?;
    // SAFETY: NULL or a valid struct by the caller's promise.
    let options = unsafe { options.as_ref() }.copied().unwrap_or_default();
    Ok((src, dst, MasterKey::new(key), options))
}

fn path(bytes: &CStr) -> &Path {
    Path::new(OsStr::from_bytes(bytes.to_bytes()))
}

fn engine(options: &combsiv_stream_options) -> Options {
    Options {
        threads: options.threads,
        backend: None,
    }
}

fn stream_code(error: StreamError) -> c_int {
    match error {
        StreamError::Io(_) | StreamError::CreateOutput(..) | StreamError::NoReader(_) => {
            COMBSIV_EIO
        }
        StreamError::WrongKey | StreamError::Corrupted { .. } | StreamError::Truncated { .. } => {
            COMBSIV_EAUTH
        }
        StreamError::NotCombsiv
        | StreamError::UnsupportedVersion(_)
        | StreamError::InvalidHeader(_) => COMBSIV_EFORMAT,
        StreamError::OutputExists(_) | StreamError::BlockDevice(_) => COMBSIV_EEXIST,
        StreamError::InputChanged => COMBSIV_ECHANGED,
        StreamError::Crypto(error) => code(error),
        _ => COMBSIV_EINVAL,
    }
}
