//! Where the output of a file operation goes, so that a failure never leaves unverified or
//! partial data at the output path, nor a half-written file after a crash.
//!
//! A regular file is written as a new temporary file beside it (mode 0600), flushed to disk,
//! and only then given the target's name: with link(2), which fails if the name exists (a
//! file that appeared meanwhile is not replaced), or with rename(2) when overwriting is
//! asked for; the directory is flushed after. On any failure, or if the output is dropped
//! without [`OutputFile::commit`], the temporary file is removed and the target is untouched.
//! An existing target that is not a regular file (a device, a FIFO such as `/dev/null`) is
//! written in place and never removed. The input itself is never a target: same device and
//! inode is refused before anything is created.
//!
//! ```no_run
//! use combsiv::stream::{Decryptor, MasterKey, Options, OutputFile};
//! use std::fs::File;
//! use std::path::Path;
//!
//! # fn run(key: &MasterKey) -> Result<(), combsiv::stream::StreamError> {
//! let input = File::open("report.pdf.cmb")?;
//! let target = OutputFile::plan(Path::new("report.pdf"), Some(&input), false)?;
//! let decryptor = Decryptor::new(&input)?;
//! decryptor.check_key(key)?; // before the output exists
//! let mut output = target.create()?;
//! decryptor.decrypt_file(key, output.file(), &Options::default(), |_| {})?;
//! output.commit()?; // on an error above, dropping `output` removes the temporary file
//! # Ok(()) }
//! ```

use alloc::format;
use alloc::vec::Vec;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::StreamError;

/// An output path that passed the checks of [`OutputFile::plan`]; nothing was created yet
/// (but an existing device or FIFO is open).
#[derive(Debug)]
pub struct PlannedOutput {
    target: PathBuf,
    overwrite: bool,
    /// An existing device or FIFO, opened to be written in place.
    in_place: Option<File>,
}

/// The output being written: a temporary file beside the target, or a device or FIFO in
/// place. Dropped without [`commit`](Self::commit), it removes the temporary file.
#[derive(Debug)]
pub struct OutputFile {
    target: PathBuf,
    overwrite: bool,
    file: Option<File>,
    /// The temporary file; `None` when writing in place.
    temp: Option<PathBuf>,
}

impl OutputFile {
    /// Checks `path` as an output without creating anything: [`StreamError::SameFile`] if it
    /// is `input` (same device and inode), [`StreamError::OutputExists`] if it is an existing
    /// regular file and `overwrite` is false. An existing device or FIFO is opened here, to
    /// be written in place.
    pub fn plan(
        path: &Path,
        input: Option<&File>,
        overwrite: bool,
    ) -> Result<PlannedOutput, StreamError> {
        if let Ok(existing) = fs::metadata(path) {
            if let Some(input) = input
                && is_same_file(&input.metadata()?, &existing)
            {
                return Err(StreamError::SameFile(path.to_path_buf()));
            }
            if !existing.is_file() {
                return Ok(PlannedOutput {
                    target: path.to_path_buf(),
                    overwrite,
                    in_place: Some(OpenOptions::new().write(true).open(path)?),
                });
            }
            if !overwrite {
                return Err(StreamError::OutputExists(path.to_path_buf()));
            }
        }
        Ok(PlannedOutput {
            target: path.to_path_buf(),
            overwrite,
            in_place: None,
        })
    }
}

/// Whether two files' metadata name the same file (device and inode).
pub fn is_same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

impl PlannedOutput {
    /// The output path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Creates the output: for a regular file, a new temporary file (mode 0600) beside the
    /// target, named `.<target>.combsiv-<pid>-<n>.tmp`.
    pub fn create(self) -> Result<OutputFile, StreamError> {
        let PlannedOutput {
            target,
            overwrite,
            in_place,
        } = self;
        if let Some(file) = in_place {
            return Ok(OutputFile {
                target,
                overwrite,
                file: Some(file),
                temp: None,
            });
        }
        let dir = directory_of(&target);
        let name = target
            .file_name()
            .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        for attempt in 0u32..100 {
            let temp = dir.join(format!(
                ".{name}.combsiv-{}-{attempt}.tmp",
                std::process::id()
            ));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)
            {
                Ok(file) => {
                    writing().push(temp.clone());
                    return Ok(OutputFile {
                        target,
                        overwrite,
                        file: Some(file),
                        temp: Some(temp),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(StreamError::CreateOutput(target, e)),
            }
        }
        Err(StreamError::Io(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temporary file name beside the output",
        )))
    }
}

/// The temporary files this process is writing, for [`remove_temporary_files`].
static WRITING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn writing() -> MutexGuard<'static, Vec<PathBuf>> {
    WRITING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes every temporary file an [`OutputFile`] of this process is writing (they may hold
/// verified plaintext of a decryption that has not finished). For a signal handler that is
/// about to end the process: the outputs' `Drop`, which removes them otherwise, will not run.
pub fn remove_temporary_files() {
    for temp in writing().drain(..) {
        let _ = fs::remove_file(temp);
    }
}

/// Forgets `temp` as being written (once it is removed or has taken its name).
fn done_writing(temp: &Path) {
    let mut writing = writing();
    if let Some(i) = writing.iter().position(|t| t == temp) {
        writing.swap_remove(i);
    }
}

/// The directory a path is in ("." for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

impl OutputFile {
    /// The file to write.
    pub fn file(&mut self) -> &File {
        match &self.file {
            Some(file) => file,
            None => unreachable!("the file is only taken by commit and drop, which consume"),
        }
    }

    /// The output path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The file, if it is a new temporary file (this process made it, empty, and nothing
    /// else writes it): one that may be sized first and written at any offset.
    pub(super) fn positional(&mut self) -> Option<&File> {
        self.temp.as_ref().and(self.file.as_ref())
    }

    /// The temporary file being written, if any ([`remove_temporary_files`] removes it when
    /// a signal ends the process).
    pub fn temporary_path(&self) -> Option<&Path> {
        self.temp.as_deref()
    }

    /// Makes the output durable and visible: the temporary file's data is flushed to disk
    /// before it takes the target's name, and the directory after, so that a crash leaves
    /// either the old target or the whole new file. Without overwriting, the name is taken
    /// with link(2): [`StreamError::OutputExists`] if a file appeared there meanwhile. On
    /// any failure the old target is intact and the temporary file is gone.
    pub fn commit(mut self) -> Result<(), StreamError> {
        let Some(file) = self.file.take() else {
            unreachable!("the file is only taken by commit and drop, which consume");
        };
        let Some(temp) = self.temp.take() else {
            return Ok(());
        };
        let published = file.sync_all().and_then(|()| {
            drop(file);
            if self.overwrite {
                fs::rename(&temp, &self.target)
            } else {
                fs::hard_link(&temp, &self.target).map(|()| {
                    let _ = fs::remove_file(&temp);
                })
            }
        });
        if published.is_err() {
            let _ = fs::remove_file(&temp);
        }
        done_writing(&temp);
        if let Err(e) = published {
            return Err(match e.kind() {
                io::ErrorKind::AlreadyExists => StreamError::OutputExists(self.target.clone()),
                _ => StreamError::Io(e),
            });
        }
        File::open(directory_of(&self.target)).and_then(|dir| dir.sync_all())?;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if let Some(temp) = self.temp.take() {
            done_writing(&temp);
            let _ = fs::remove_file(temp);
        }
    }
}
