//! `combsiv encrypt` and `combsiv decrypt`: files and pipes, written so that a failure never
//! leaves unverified or partial plaintext at the output path, nor a half-written file after
//! a crash, nor anything at all before the key has been checked (the library's
//! [`OutputFile`] holds that policy; the Python package uses the same).
//!
//! Regular input files are read by position on every worker thread, each chunk into the
//! worker's own buffer, and sealed (or opened) there: the output always opens to what was
//! read, and a file whose size or modification time changed by the end is refused (exit 3,
//! output removed). Pipes and devices are read in order.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::ops::Range;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use combsiv::AesKeySize;
use combsiv::c2sp::Aead;

use combsiv::stream::{
    Algorithm, Decryptor, Encryptor, KdfLimits, Options, OutputFile, PlannedOutput, StreamError,
    is_same_file,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::failure::{Exit, Failure};
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
    pub allow_insecure_key_file: bool,
    pub kdf_limits: KdfLimits,
    pub format: Format,
    /// C2SP's context, bound into every message's keys.
    pub context: Vec<u8>,
    /// Decrypt only these plaintext bytes (an end past the plaintext's is its end).
    pub range: Option<Range<u64>>,
}

/// The format written or read: the format has no magic bytes in C2SP's case, so the choice
/// is the user's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// combsiv's stream format (docs/FORMAT.md).
    Combsiv,
    /// C2SP chunked encryption with AES-GCM (Cobblestone) or, `gcm_siv`, AES-GCM-SIV.
    C2sp { gcm_siv: bool },
}

impl Job {
    /// The C2SP AEAD the format and key size name.
    pub fn c2sp_aead(&self) -> Aead {
        let size = self.algorithm.key_size();
        match (self.format, size) {
            (Format::C2sp { gcm_siv: true }, AesKeySize::Aes128) => Aead::Aes128GcmSiv,
            (Format::C2sp { gcm_siv: true }, AesKeySize::Aes256) => Aead::Aes256GcmSiv,
            (_, AesKeySize::Aes128) => Aead::Aes128Gcm,
            (_, AesKeySize::Aes256) => Aead::Aes256Gcm,
        }
    }

    pub fn options(&self) -> Options {
        Options {
            threads: self.threads,
            backend: None,
        }
    }
}

/// `-` and an absent path both mean the standard stream.
pub fn named(path: &Option<PathBuf>) -> Option<&Path> {
    path.as_deref().filter(|p| p.as_os_str() != "-")
}

/// The opened input: the file (or stdin), a name for messages, and its size when known.
pub struct Input {
    pub reader: File,
    pub name: String,
    pub len: Option<u64>,
}

pub fn open_input(path: Option<&Path>) -> Result<Input, Failure> {
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
            let reader = File::from(fd);
            widen_pipe(&reader);
            Ok(Input {
                reader,
                name: "stdin".into(),
                len: None,
            })
        }
    }
}

/// A pipe's buffer raised to 1 MiB (Linux's default limit for unprivileged users), so that a
/// chunk passes in a few large reads or writes instead of 64 KiB ones, each a wakeup of the
/// other end. Measured on Zen 5 (2 cores, `cat` on the other end), 1 GiB on 2 threads: from a
/// pipe 1.0-1.5 GB/s before, 3.0-3.4 after; into a pipe 1.0-1.4 before, 3.4-3.6 after.
/// Anything else, or a refusal, is left as it is.
fn widen_pipe(file: &File) {
    #[cfg(target_os = "linux")]
    if file
        .metadata()
        .is_ok_and(|meta| std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()))
    {
        let _ = rustix::pipe::fcntl_setpipe_size(file, 1 << 20);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
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
            combsiv::stream::remove_temporary_files();
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
pub enum Target {
    /// A file (a temporary file beside it, moved into place at the end), or a device or
    /// FIFO written in place.
    File(PlannedOutput),
    /// stdout, written as it goes.
    Stream(File),
}

/// A failure to plan, create or commit the output `path`.
fn output_failure(error: StreamError, path: &Path) -> Failure {
    match error {
        StreamError::SameFile(_) => Failure::usage(
            format!("input and output are the same file ({})", path.display()),
            "write to another path, then rename it",
        ),
        StreamError::OutputExists(_) => Failure::usage(
            format!(
                "refusing to overwrite {}: it exists, or appeared while combsiv was running",
                path.display()
            ),
            "pass --force to replace it",
        ),
        StreamError::BlockDevice(_) => Failure::usage(
            format!(
                "refusing to write over {}: it is a block device (a disk)",
                path.display()
            ),
            "pass --force if you mean to overwrite that device",
        ),
        StreamError::NoReader(_) => Failure {
            exit: Exit::Io,
            what: format!("nothing is reading the FIFO {}", path.display()),
            hint: "start the program that reads it first".into(),
        },
        StreamError::Io(e) | StreamError::CreateOutput(_, e) => {
            Failure::io(format!("cannot create {}", path.display()), &e)
        }
        other => Failure::io(
            format!("cannot create {}", path.display()),
            &io::Error::other(other.to_string()),
        ),
    }
}

/// Checks where the output goes without creating anything there.
pub fn plan_output(job: &Job, input: &Input, encrypting: bool) -> Result<Target, Failure> {
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
        let stdout = File::from(fd);
        widen_pipe(&stdout);
        // `combsiv encrypt -i f >> f` would append to the file it reads.
        if let (Ok(out), Ok(source)) = (stdout.metadata(), input.reader.metadata())
            && out.is_file()
            && is_same_file(&out, &source)
        {
            return Err(Failure::usage(
                format!(
                    "input and output are the same file ({}, as stdout)",
                    input.name
                ),
                "write to another path, then rename it",
            ));
        }
        return Ok(Target::Stream(stdout));
    };
    OutputFile::plan(target, Some(&input.reader), job.force)
        .map(Target::File)
        .map_err(|e| output_failure(e, target))
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

/// Runs `body` with progress reports, into the planned file (which the library creates,
/// fills and commits only if all of it succeeded) or into stdout.
pub fn write_output(
    job: &Job,
    input: &Input,
    target: Target,
    decrypting: bool,
    body: impl FnOnce(Target, &(dyn Fn(u64) + Sync)) -> Result<u64, StreamError>,
) -> Result<(), Failure> {
    let path = match &target {
        Target::File(planned) => Some(planned.target().to_path_buf()),
        Target::Stream(_) => None,
    };
    let bar = progress_bar(job, input);
    let report = |done: u64| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    };
    body(target, &report).map_err(|error| match (error, path) {
        // Creating or committing the output failed, not the stream.
        (
            error @ (StreamError::OutputExists(_)
            | StreamError::SameFile(_)
            | StreamError::BlockDevice(_)
            | StreamError::NoReader(_)
            | StreamError::CreateOutput(..)),
            Some(path),
        ) => output_failure(error, &path),
        (error, _) => Failure::stream(error, &input.name, decrypting),
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

pub fn encrypt(job: &Job) -> Result<(), Failure> {
    if let Format::C2sp { .. } = job.format {
        return crate::c2sp::encrypt(job);
    }
    let input = open_input(named(&job.input))?;
    let encryptor =
        Encryptor::new(job.algorithm, job.chunk_size, job.key.source()).map_err(|e| {
            Failure::usage(e.to_string(), "choose a chunk size from 16 bytes to 64 MiB")
        })?;
    let target = plan_output(job, &input, true)?;
    let key = job
        .key
        .master_key(encryptor.header(), true, job.allow_insecure_key_file)?;
    let options = job.options();
    write_output(job, &input, target, false, |target, report| match target {
        Target::File(planned) => {
            encryptor.encrypt_to_file(&key, &input.reader, planned, &options, report)
        }
        Target::Stream(stdout) => {
            encryptor.encrypt_file(&key, &input.reader, &stdout, &options, report)
        }
    })
}

/// The order that keeps a failed decryption from leaving anything behind: the header is
/// parsed and its Argon2id cost capped, the output checked, the key derived and checked
/// against the header tag, and only then is the output created.
pub fn decrypt(job: &Job) -> Result<(), Failure> {
    if job.range.is_some() {
        return crate::range::decrypt(job);
    }
    if let Format::C2sp { .. } = job.format {
        return crate::c2sp::decrypt(job);
    }
    let input = open_input(named(&job.input))?;
    let decryptor = Decryptor::with_limits(&input.reader, &job.kdf_limits)
        .map_err(|e| Failure::stream(e, &input.name, true))?;
    let target = plan_output(job, &input, false)?;
    let key = job
        .key
        .master_key(decryptor.header(), false, job.allow_insecure_key_file)?;
    decryptor
        .check_key(&key)
        .map_err(|e| Failure::stream(e, &input.name, true))?;
    let options = job.options();
    write_output(job, &input, target, true, |target, report| match target {
        Target::File(planned) => decryptor.decrypt_to_file(&key, planned, &options, report),
        Target::Stream(stdout) => decryptor.decrypt_file(&key, &stdout, &options, report),
    })
}
