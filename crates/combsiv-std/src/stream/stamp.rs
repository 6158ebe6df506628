//! A file's change stamp: whether it changed while it was read.

#[cfg(unix)]
use std::fs::File;
use std::io::{self};

use super::error::StreamError;

/// A file's size and modification time, to tell whether it changed while it was read.
#[cfg(unix)]
pub(super) struct Stamp {
    pub(super) len: u64,
    modified: Option<std::time::SystemTime>,
}

#[cfg(unix)]
impl Stamp {
    /// The stamp of a regular file; `None` for anything else.
    pub(super) fn of_regular(file: &File) -> io::Result<Option<Stamp>> {
        let meta = file.metadata()?;
        Ok(meta.is_file().then(|| Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }))
    }

    /// [`StreamError::InputChanged`] unless `file` still has this size and time.
    pub(super) fn check(&self, file: &File) -> Result<(), StreamError> {
        match Stamp::of_regular(file)? {
            Some(now) if now.len == self.len && now.modified == self.modified => Ok(()),
            _ => Err(StreamError::InputChanged),
        }
    }
}
