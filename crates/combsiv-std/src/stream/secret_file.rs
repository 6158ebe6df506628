//! Key files and passphrase files: small text files that must be the reader's alone.
//!
//! A secret that another user can read, or that another user owns (and so can rewrite with
//! a key of their choosing), is theirs too: such files are refused unless the caller allows
//! it. The checks run on the opened file, so the file cannot be swapped in between, and the
//! read stops past a size limit, so that `/dev/zero` or a mistaken large path fails at once.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use zeroize::Zeroizing;

use super::MasterKey;

/// The most a key file may hold (a key is 64 hex digits, plus comments).
pub const MAX_KEY_FILE_LEN: u64 = 4096;

/// Why a key or passphrase file was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum SecretFileError {
    /// Opening or reading it failed.
    Io(io::Error),
    /// Users other than its owner may read or write it (the permission bits given).
    Exposed {
        /// The file's permission bits.
        mode: u32,
    },
    /// It belongs to another user (neither the reader nor root).
    ForeignOwner {
        /// The owner's user id.
        uid: u32,
    },
    /// It is longer than the limit.
    TooLong {
        /// The limit, in bytes.
        limit: u64,
    },
    /// It is not UTF-8 text.
    NotText,
    /// It is not a combsiv key file ([`MasterKey::from_key_file_text`]).
    NotKeyFile,
}

impl fmt::Display for SecretFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretFileError::Io(e) => write!(f, "{e}"),
            SecretFileError::Exposed { mode } => {
                write!(
                    f,
                    "it can be read by other users (mode {:03o})",
                    mode & 0o777
                )
            }
            SecretFileError::ForeignOwner { uid } => {
                write!(f, "it belongs to another user (uid {uid})")
            }
            SecretFileError::TooLong { limit } => write!(f, "it is longer than {limit} bytes"),
            SecretFileError::NotText => f.write_str("it is not UTF-8 text"),
            SecretFileError::NotKeyFile => f.write_str("it is not a combsiv key file"),
        }
    }
}

impl std::error::Error for SecretFileError {}

impl From<io::Error> for SecretFileError {
    fn from(e: io::Error) -> Self {
        SecretFileError::Io(e)
    }
}

/// The whole of a small secret text file, at most `limit` bytes. Unless `allow_insecure`,
/// only a file that no other user may read or write and that belongs to the reader (or to
/// root) is read.
pub fn read_secret_file(
    path: &Path,
    limit: u64,
    allow_insecure: bool,
) -> Result<Zeroizing<String>, SecretFileError> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !allow_insecure {
        if meta.mode() & 0o077 != 0 {
            return Err(SecretFileError::Exposed { mode: meta.mode() });
        }
        if meta.uid() != 0 && meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(SecretFileError::ForeignOwner { uid: meta.uid() });
        }
    }
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(SecretFileError::TooLong { limit });
    }
    let text = core::str::from_utf8(&bytes).map_err(|_| SecretFileError::NotText)?;
    Ok(Zeroizing::new(String::from(text)))
}

impl MasterKey {
    /// The key in a key file made by `combsiv keygen`, read as [`read_secret_file`] reads
    /// (at most [`MAX_KEY_FILE_LEN`] bytes).
    pub fn read_key_file(path: &Path, allow_insecure: bool) -> Result<MasterKey, SecretFileError> {
        let text = read_secret_file(path, MAX_KEY_FILE_LEN, allow_insecure)?;
        MasterKey::from_key_file_text(&text).ok_or(SecretFileError::NotKeyFile)
    }
}
