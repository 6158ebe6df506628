//! `combsiv encrypt` and `combsiv decrypt`: files and pipes, written so that a failure never
//! leaves unverified or partial plaintext at the output path, nor a half-written file after
//! a crash, nor anything at all before the key has been checked.
//!
//! Regular input files are mapped into memory, so that each chunk is sealed (or opened)
//! straight from the page cache into its output buffer: reading them with read(2) would
//! copy every byte once more, inside the kernel, on the one thread that holds the input.
//! Pipes, devices and `--no-mmap` read with read(2). A mapped file that another process
//! truncates while combsiv reads it would crash combsiv with SIGBUS (as it would any program
//! that maps files); a file whose size changed by the end is reported as an error and its
//! output discarded.

use std::fs::{self, File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use combsiv::stream::{
    Algorithm, Decryptor, Encryptor, KdfLimits, MasterKey, Options, StreamError,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::failure::Failure;
use crate::keys::KeyChoice;
use crate::mapped::Mapped;

/// What `encrypt` and `decrypt` were asked to do.
#[derive(Debug)]
pub struct Job {
    pub input: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub key: KeyChoice,
    pub algorithm: Algorithm,
    pub chunk_size: u32,
    pub force: bool,
    pub quiet: bool,
    pub threads: usize,
    pub allow_insecure_key_file: bool,
    pub map_input: bool,
    pub kdf_limits: KdfLimits,
}

impl Job {
    fn options(&self) -> Options {
        Options {
            threads: self.threads,
            backend: None,
        }
    }
}

/// `-` and an absent path both mean the standard stream.
fn named(path: &Option<PathBuf>) -> Option<&Path> {
    path.as_deref().filter(|p| p.as_os_str() != "-")
}

/// The opened input: its reader, its mapping when it is a regular file, a name for
/// messages, and its size when known.
struct Input {
    reader: File,
    mapped: Option<Mapped>,
    name: String,
    len: Option<u64>,
}

impl Input {
    /// A failure if the mapped file changed size while it was read (its output cannot be
    /// trusted to be the file's contents).
    fn check_unchanged(&self) -> Result<(), Failure> {
        match &self.mapped {
            Some(mapped) if !mapped.unchanged(&self.reader) => Err(Failure::usage(
                format!("{} changed size while it was being read", self.name),
                "run again once nothing else writes to it",
            )),
            _ => Ok(()),
        }
    }
}

fn open_input(path: Option<&Path>, map: bool) -> Result<Input, Failure> {
    match path {
        Some(path) => {
            let reader = File::open(path)
                .map_err(|e| Failure::io(format!("cannot open {}", path.display()), &e))?;
            let meta = reader
                .metadata()
                .map_err(|e| Failure::io(format!("cannot inspect {}", path.display()), &e))?;
            let len = meta.is_file().then_some(meta.len());
            // Empty files cannot be mapped, and read(2) is as good for them.
            let mapped = match len {
                Some(len) if map && len > 0 => Mapped::new(&reader, len),
                _ => None,
            };
            Ok(Input {
                reader,
                mapped,
                name: path.display().to_string(),
                len,
            })
        }
        None => {
            // The descriptor as a File: unbuffered, like the chunks we hand it.
            let fd = io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Failure::io("cannot read stdin", &e))?;
            Ok(Input {
                reader: File::from(fd),
                mapped: None,
                name: "stdin".into(),
                len: None,
            })
        }
    }
}

/// The temporary file being written, for the signal handler to remove.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

fn pending() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary file being written (it may hold
/// verified plaintext), turns terminal echo back on if a passphrase prompt had it off, and
/// exits with 128 + the signal number, as a shell reports it.
pub fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            if let Some(temp) = pending().take() {
                let _ = fs::remove_file(temp);
            }
            if crate::keys::PROMPTING.load(std::sync::atomic::Ordering::SeqCst)
                && let Ok(tty) = File::open("/dev/tty")
            {
                // The prompt's own restore will not run; stty is the portable way back.
                let _ = std::process::Command::new("stty")
                    .arg("echo")
                    .stdin(tty)
                    .status();
                eprintln!();
            }
            std::process::exit(128 + signal);
        }
    });
}

/// Where the output will go, once every check has passed: nothing exists there yet.
enum Target {
    /// A regular file, written as a temporary file beside it and moved into place at the end.
    File { path: PathBuf, force: bool },
    /// stdout, a pipe or a device: written as it goes.
    Stream(File),
}

/// Where the output goes.
enum Output {
    /// A temporary file beside `target`, moved onto it once everything verified.
    Replace {
        temp: PathBuf,
        target: PathBuf,
        force: bool,
        file: File,
    },
    /// stdout, a pipe or a device: written as it goes.
    Stream(File),
}

/// The directory a path is in ("." for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

impl Output {
    fn writer(&mut self) -> &mut File {
        match self {
            Output::Replace { file, .. } | Output::Stream(file) => file,
        }
    }

    /// Makes the output durable and visible: the temporary file's data is flushed to disk
    /// before it takes the target's name, and the directory after, so that a crash leaves
    /// either the old target or the whole new file. Without `--force` the name is taken
    /// with link(2), which fails if the target exists (it may have appeared while combsiv
    /// ran): an existing file is never replaced. On any failure the old target is intact
    /// and the temporary file is gone.
    fn commit(self) -> Result<(), Failure> {
        let Output::Replace {
            temp,
            target,
            force,
            file,
        } = self
        else {
            return Ok(());
        };
        let failed = |what: String, e: &io::Error| {
            let _ = fs::remove_file(&temp);
            *pending() = None;
            Failure::io(what, e)
        };
        file.sync_all()
            .map_err(|e| failed(format!("cannot write {}", target.display()), &e))?;
        drop(file);
        if force {
            fs::rename(&temp, &target)
                .map_err(|e| failed(format!("cannot create {}", target.display()), &e))?;
        } else {
            match fs::hard_link(&temp, &target) {
                Ok(()) => {
                    let _ = fs::remove_file(&temp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let _ = fs::remove_file(&temp);
                    *pending() = None;
                    return Err(Failure::usage(
                        format!(
                            "refusing to overwrite {}: it appeared while combsiv was running",
                            target.display()
                        ),
                        "pass --force to replace it",
                    ));
                }
                Err(e) => return Err(failed(format!("cannot create {}", target.display()), &e)),
            }
        }
        *pending() = None;
        File::open(directory_of(&target))
            .and_then(|dir| dir.sync_all())
            .map_err(|e| {
                Failure::io(
                    format!("cannot sync the directory of {}", target.display()),
                    &e,
                )
            })
    }

    fn abandon(self) {
        if let Output::Replace { temp, file, .. } = self {
            drop(file);
            let _ = fs::remove_file(&temp);
            *pending() = None;
        }
    }
}

/// Checks where the output goes without creating anything there.
fn plan_output(job: &Job, input: &Input, encrypting: bool) -> Result<Target, Failure> {
    let Some(target) = named(&job.output) else {
        if encrypting && io::stdout().is_terminal() {
            return Err(Failure::usage(
                "refusing to write ciphertext to a terminal",
                "use -o FILE, or redirect stdout to a file or pipe",
            ));
        }
        let fd = io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Failure::io("cannot write stdout", &e))?;
        return Ok(Target::Stream(File::from(fd)));
    };
    if let Ok(existing) = fs::metadata(target) {
        if let Ok(source) = input.reader.metadata()
            && source.dev() == existing.dev()
            && source.ino() == existing.ino()
        {
            return Err(Failure::usage(
                format!("input and output are the same file ({})", target.display()),
                "write to another path, then rename it",
            ));
        }
        if !existing.is_file() {
            // A device or pipe (e.g. /dev/null): written in place, never replaced.
            let file = OpenOptions::new()
                .write(true)
                .open(target)
                .map_err(|e| Failure::io(format!("cannot open {}", target.display()), &e))?;
            return Ok(Target::Stream(file));
        }
        if !job.force {
            return Err(Failure::usage(
                format!("refusing to overwrite {}", target.display()),
                "pass --force to replace it",
            ));
        }
    }
    Ok(Target::File {
        path: target.to_path_buf(),
        force: job.force,
    })
}

impl Target {
    /// Creates the output: for a file, a new temporary file (mode 0600) beside the target.
    fn create(self) -> Result<Output, Failure> {
        let (target, force) = match self {
            Target::Stream(file) => return Ok(Output::Stream(file)),
            Target::File { path, force } => (path, force),
        };
        let dir = directory_of(&target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
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
                    *pending() = Some(temp.clone());
                    return Ok(Output::Replace {
                        temp,
                        target,
                        force,
                        file,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Failure::io(
                        format!("cannot create a temporary file in {}", dir.display()),
                        &e,
                    ));
                }
            }
        }
        Err(Failure::usage(
            "cannot create a temporary file",
            "check the output directory",
        ))
    }
}

/// A progress bar on stderr, only for a terminal, a known size and no --quiet.
fn progress_bar(job: &Job, input: &Input) -> Option<ProgressBar> {
    let len = input.len?;
    if job.quiet || !io::stderr().is_terminal() || len < 16 * 1024 * 1024 {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    Some(bar)
}

/// Creates the output, runs `body` into it with progress reports, and commits it only if
/// all of it succeeded (and the input did not change meanwhile).
fn write_output(
    job: &Job,
    input: &Input,
    target: Target,
    decrypting: bool,
    body: impl FnOnce(&mut File, &(dyn Fn(u64) + Sync)) -> Result<u64, StreamError>,
) -> Result<(), Failure> {
    let mut output = target.create()?;
    let bar = progress_bar(job, input);
    let report = |done: u64| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    };
    let result = body(output.writer(), &report)
        .map_err(|e| Failure::stream(e, &input.name, decrypting))
        .and_then(|_| input.check_unchanged());
    match result {
        Ok(()) => output.commit()?,
        Err(failure) => {
            output.abandon();
            return Err(failure);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

pub fn encrypt(job: &Job) -> Result<(), Failure> {
    let input = open_input(named(&job.input), job.map_input)?;
    let encryptor =
        Encryptor::new(job.algorithm, job.chunk_size, job.key.source()).map_err(|e| {
            Failure::usage(e.to_string(), "choose a chunk size from 16 bytes to 64 MiB")
        })?;
    let target = plan_output(job, &input, true)?;
    let key = job
        .key
        .master_key(encryptor.header(), true, job.allow_insecure_key_file)?;
    let options = job.options();
    write_output(job, &input, target, false, |writer, report| {
        match &input.mapped {
            Some(mapped) => encryptor.encrypt_slice(&key, mapped.bytes(), writer, &options, report),
            None => encryptor.encrypt(&key, &input.reader, writer, &options, report),
        }
    })
}

pub fn decrypt(job: &Job) -> Result<(), Failure> {
    let input = open_input(named(&job.input), job.map_input)?;
    let options = job.options();
    let header_failure = |e| Failure::stream(e, &input.name, true);
    match &input.mapped {
        Some(mapped) => {
            let decryptor =
                Decryptor::with_limits(mapped.bytes(), &job.kdf_limits).map_err(header_failure)?;
            decrypt_with(job, &input, decryptor, |decryptor, key, writer, report| {
                decryptor.decrypt_slice(key, writer, &options, report)
            })
        }
        None => {
            let decryptor =
                Decryptor::with_limits(&input.reader, &job.kdf_limits).map_err(header_failure)?;
            decrypt_with(job, &input, decryptor, |decryptor, key, writer, report| {
                decryptor.decrypt(key, writer, &options, report)
            })
        }
    }
}

/// The order that keeps a failed decryption from leaving anything behind: the header was
/// parsed and its Argon2id cost capped (by the caller), then the output is checked, the key
/// derived and checked against the header tag, and only then is the output created.
fn decrypt_with<R: io::Read>(
    job: &Job,
    input: &Input,
    decryptor: Decryptor<R>,
    run: impl FnOnce(
        Decryptor<R>,
        &MasterKey,
        &mut File,
        &(dyn Fn(u64) + Sync),
    ) -> Result<u64, StreamError>,
) -> Result<(), Failure> {
    let target = plan_output(job, input, false)?;
    let key = job
        .key
        .master_key(decryptor.header(), false, job.allow_insecure_key_file)?;
    decryptor
        .check_key(&key)
        .map_err(|e| Failure::stream(e, &input.name, true))?;
    write_output(job, input, target, true, |writer, report| {
        run(decryptor, &key, writer, report)
    })
}
