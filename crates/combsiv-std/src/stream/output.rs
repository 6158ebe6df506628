//! Where the output of a file operation goes, so that a failure never leaves unverified or
//! partial data at the output path, nor a half-written file after a crash.
//!
//! The output path is opened before anything is decided (without following a symbolic link,
//! without blocking on a FIFO, without taking a terminal as the controlling one), and the
//! decision is made from what was opened (`fstat`), so that a name swapped between a check
//! and an open cannot send output anywhere the checks refused. A symbolic link is then
//! followed and, again, judged by what was opened: `-o /dev/stdout` writes to stdout.
//!
//! - A regular file, or no file: written as a new temporary file beside the target (mode
//!   0600), flushed to disk, and only then given the target's name: with link(2), which fails
//!   if the name exists (a file that appeared meanwhile is not replaced), or with rename(2)
//!   when overwriting is asked for; the directory is flushed after. An existing regular file
//!   needs `overwrite`. On any failure, or if the output is dropped without
//!   [`OutputFile::commit`], the temporary file is removed and the target is untouched.
//! - A character device (`/dev/null`) or a FIFO: written in place, never removed. A FIFO
//!   that nothing reads is refused ([`StreamError::NoReader`]) instead of waiting forever.
//! - A block device: written in place only with `overwrite` ([`StreamError::BlockDevice`]):
//!   it is a disk.
//! - The input itself is never a target: the same device and inode is refused
//!   ([`StreamError::SameFile`]) before anything is created.
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
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::error::StreamError;

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
    /// Checks `path` as an output without creating anything, deciding from what opening it
    /// finds: [`StreamError::SameFile`] if it is `input` (same device and inode),
    /// [`StreamError::OutputExists`] if it is an existing regular file and `overwrite` is
    /// false, [`StreamError::BlockDevice`] likewise for a block device,
    /// [`StreamError::NoReader`] for a FIFO that nothing reads. An existing character device
    /// or FIFO stays open here, to be written in place.
    pub fn plan(
        path: &Path,
        input: Option<&File>,
        overwrite: bool,
    ) -> Result<PlannedOutput, StreamError> {
        let input = input.map(File::metadata).transpose()?;
        let is_input = |existing: &fs::Metadata| {
            input
                .as_ref()
                .is_some_and(|input| is_same_file(input, existing))
        };
        let planned = |in_place| PlannedOutput {
            target: path.to_path_buf(),
            overwrite,
            in_place,
        };
        let file = match open_existing(path) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(planned(None)),
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
                return Err(StreamError::NoReader(path.to_path_buf()));
            }
            // Not writable by us (a read-only file, a directory, a disk only root may open):
            // judged by its metadata, and never written through, so a name changed meanwhile
            // cannot matter.
            Err(e) => {
                return match fs::metadata(path) {
                    Ok(existing) if is_input(&existing) => {
                        Err(StreamError::SameFile(path.to_path_buf()))
                    }
                    Ok(existing) if existing.is_file() && !overwrite => {
                        Err(StreamError::OutputExists(path.to_path_buf()))
                    }
                    Ok(existing) if existing.is_file() => Ok(planned(None)),
                    Ok(existing) if existing.file_type().is_block_device() && !overwrite => {
                        Err(StreamError::BlockDevice(path.to_path_buf()))
                    }
                    _ => Err(StreamError::CreateOutput(path.to_path_buf(), e)),
                };
            }
        };
        let existing = file.metadata()?;
        let kind = existing.file_type();
        if is_input(&existing) {
            return Err(StreamError::SameFile(path.to_path_buf()));
        }
        if kind.is_file() {
            return match overwrite {
                true => Ok(planned(None)),
                false => Err(StreamError::OutputExists(path.to_path_buf())),
            };
        }
        if kind.is_block_device() && !overwrite {
            return Err(StreamError::BlockDevice(path.to_path_buf()));
        }
        // Opened without blocking only to find out whether a FIFO has a reader: written
        // with ordinary blocking writes.
        let flags = rustix::fs::fcntl_getfl(&file).map_err(io::Error::from)?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)
            .map_err(io::Error::from)?;
        Ok(planned(Some(file)))
    }
}

/// Opens an existing `path` for writing in place, without creating, truncating or waiting:
/// `None` if nothing is there (or a symbolic link names nothing). A FIFO without a reader
/// fails with ENXIO. A symbolic link is opened without following it first (ELOOP), then
/// followed: what is written is what was opened, whatever the name says by then.
fn open_existing(path: &Path) -> io::Result<Option<File>> {
    use rustix::fs::OFlags;
    let open = |flags: OFlags| {
        OpenOptions::new()
            .write(true)
            .custom_flags((flags | OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
            .open(path)
    };
    let opened = match open(OFlags::NOFOLLOW) {
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            open(OFlags::empty())
        }
        opened => opened,
    };
    match opened {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
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
            // Registered before it can exist, so that [`remove_temporary_files`] called at
            // any moment from here on removes it. (A file already there by this name, which
            // has this process's id in it, is one a crashed process of the same id left.)
            writing().push(temp.clone());
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)
            {
                Ok(file) => {
                    return Ok(OutputFile {
                        target,
                        overwrite,
                        file: Some(file),
                        temp: Some(temp),
                    });
                }
                Err(e) => {
                    done_writing(&temp);
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(StreamError::CreateOutput(target, e));
                    }
                }
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

/// Removes every temporary file an [`OutputFile`](super::OutputFile) of this process is writing (they may hold
/// verified plaintext of a decryption that has not finished), for a process about to end on
/// a signal: the outputs' `Drop`, which removes them otherwise, will not run. A file is
/// registered before it is created, so none is missed however late the signal comes.
///
/// Not async-signal-safe: it takes a lock and frees memory, so it must not run inside a
/// signal handler (which may have interrupted the thread holding that lock). Call it from a
/// thread that waits for the signals, as the `combsiv` command does (`signal-hook`'s
/// iterator; `sigwait` in C), and end the process from there.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary file is registered before it exists. With the register locked, as a
    /// signal-handling thread calling [`remove_temporary_files`] at that moment would hold
    /// it, `create` waits with nothing on disk yet; once it returns, the file is registered.
    #[test]
    fn a_temporary_file_is_registered_before_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let planned = OutputFile::plan(&dir.path().join("out"), None, false).unwrap();
        let held = writing();
        let creating = std::thread::spawn(move || planned.create());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let on_disk = fs::read_dir(dir.path()).unwrap().count();
        drop(held);
        let output = creating.join().unwrap().unwrap();
        assert_eq!(
            on_disk, 0,
            "the temporary file existed before it was registered"
        );
        let temp = output.temporary_path().unwrap().to_path_buf();
        assert!(temp.exists() && writing().contains(&temp));
        drop(output);
        assert!(!temp.exists() && !writing().contains(&temp));
    }
}
