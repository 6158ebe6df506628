//! `combsiv encrypt` and `combsiv decrypt`: files and pipes, written so that a failure never
//! leaves unverified or partial plaintext at the output path.

use std::fs::{self, File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use combsiv::stream::{self, Algorithm, Decryptor, Header, MasterKey, Options, StreamError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::failure::Failure;
use crate::keys::KeyChoice;

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

/// The opened input: its reader, a name for messages, and its size when known.
struct Input {
    reader: File,
    name: String,
    len: Option<u64>,
}

fn open_input(path: Option<&Path>) -> Result<Input, Failure> {
    match path {
        Some(path) => {
            let reader = File::open(path)
                .map_err(|e| Failure::io(format!("cannot open {}", path.display()), &e))?;
            let meta = reader
                .metadata()
                .map_err(|e| Failure::io(format!("cannot inspect {}", path.display()), &e))?;
            Ok(Input {
                reader,
                name: path.display().to_string(),
                len: meta.is_file().then_some(meta.len()),
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

/// Where the output goes.
enum Output {
    /// A temporary file beside `target`, renamed onto it once everything verified.
    Replace {
        temp: PathBuf,
        target: PathBuf,
        file: File,
    },
    /// stdout, a pipe or a device: written as it goes.
    Stream(File),
}

impl Output {
    fn writer(&mut self) -> &mut File {
        match self {
            Output::Replace { file, .. } | Output::Stream(file) => file,
        }
    }

    fn commit(self) -> Result<(), Failure> {
        if let Output::Replace { temp, target, file } = self {
            drop(file);
            if let Err(e) = fs::rename(&temp, &target) {
                let _ = fs::remove_file(&temp);
                return Err(Failure::io(
                    format!("cannot create {}", target.display()),
                    &e,
                ));
            }
        }
        Ok(())
    }

    fn abandon(self) {
        if let Output::Replace { temp, file, .. } = self {
            drop(file);
            let _ = fs::remove_file(&temp);
            *pending() = None;
        }
    }
}

fn open_output(job: &Job, input: &Input, encrypting: bool) -> Result<Output, Failure> {
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
        return Ok(Output::Stream(File::from(fd)));
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
            return Ok(Output::Stream(file));
        }
        if !job.force {
            return Err(Failure::usage(
                format!("refusing to overwrite {}", target.display()),
                "pass --force to replace it",
            ));
        }
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    for attempt in 0u32.. {
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
                    target: target.to_path_buf(),
                    file,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {}
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

/// Runs `body` against the output and commits or abandons it.
fn with_output(
    mut output: Output,
    body: impl FnOnce(&mut File) -> Result<(), Failure>,
) -> Result<(), Failure> {
    match body(output.writer()) {
        Ok(()) => output.commit(),
        Err(failure) => {
            output.abandon();
            Err(failure)
        }
    }
}

/// Gets the key, then runs `body` into the output with progress reports; the output is
/// committed only if all of it succeeded.
fn process(
    job: &Job,
    input: &Input,
    output: Output,
    key: impl FnOnce() -> Result<MasterKey, Failure>,
    body: impl FnOnce(&MasterKey, &mut File, &(dyn Fn(u64) + Sync)) -> Result<u64, StreamError>,
    decrypting: bool,
) -> Result<(), Failure> {
    let key = match key() {
        Ok(key) => key,
        Err(failure) => {
            output.abandon();
            return Err(failure);
        }
    };
    let bar = progress_bar(job, input);
    let report = |done: u64| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    };
    with_output(output, |writer| {
        body(&key, writer, &report)
            .map(|_| ())
            .map_err(|e| Failure::stream(e, &input.name, decrypting))
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

pub fn encrypt(job: &Job) -> Result<(), Failure> {
    let input = open_input(named(&job.input))?;
    let header = Header::new(job.algorithm, job.chunk_size, job.key.source()).map_err(|e| {
        Failure::usage(e.to_string(), "choose a chunk size from 16 bytes to 64 MiB")
    })?;
    let output = open_output(job, &input, true)?;
    process(
        job,
        &input,
        output,
        || job.key.master_key(&header, true),
        |key, writer, report| {
            stream::encrypt(key, &header, &input.reader, writer, &job.options(), report)
        },
        false,
    )
}

pub fn decrypt(job: &Job) -> Result<(), Failure> {
    let input = open_input(named(&job.input))?;
    let decryptor =
        Decryptor::new(&input.reader).map_err(|e| Failure::stream(e, &input.name, true))?;
    let output = open_output(job, &input, false)?;
    let header = decryptor.header().clone();
    process(
        job,
        &input,
        output,
        || job.key.master_key(&header, false),
        |key, writer, report| decryptor.decrypt(key, writer, &job.options(), report),
        true,
    )
}
