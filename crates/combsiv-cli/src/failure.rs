//! What the user sees when something goes wrong: one line saying what happened, one saying
//! what to do, and an exit code that tells scripts which kind of failure it was.

use std::fmt;
use std::io;

use combsiv::stream::StreamError;

/// The exit codes of `combsiv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The data is not authentic (wrong key, modified, truncated, not a combsiv file).
    Authentication = 1,
    /// The command line or the environment asked for something combsiv refuses to do.
    Usage = 2,
    /// Reading or writing failed.
    Io = 3,
}

/// A failure on its way to the user.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub what: String,
    pub hint: String,
}

impl Failure {
    pub fn usage(what: impl Into<String>, hint: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Usage,
            what: what.into(),
            hint: hint.into(),
        }
    }

    pub fn io(context: impl fmt::Display, error: &io::Error) -> Failure {
        let hint = match error.kind() {
            io::ErrorKind::NotFound => "check the path",
            io::ErrorKind::PermissionDenied => "check the file's permissions",
            io::ErrorKind::AlreadyExists => "choose another path, or pass --force",
            io::ErrorKind::BrokenPipe => "the reading end of the pipe closed early",
            _ => "check the disk and the path, then retry",
        };
        Failure {
            exit: Exit::Io,
            what: format!("{context}: {}", plain_io_error(error)),
            hint: hint.into(),
        }
    }

    /// A stream error while decrypting (`decrypting`) or encrypting.
    pub fn stream(error: StreamError, input: &str, decrypting: bool) -> Failure {
        let authentication = |what: String, hint: &str| Failure {
            exit: Exit::Authentication,
            what,
            hint: hint.into(),
        };
        match error {
            StreamError::Io(e) => Failure::io(input, &e),
            StreamError::NotCombsiv | StreamError::InvalidHeader(_) if decrypting => {
                authentication(
                    format!("{input} is not a combsiv-encrypted file ({error})"),
                    "check that this is the file combsiv encrypt produced",
                )
            }
            StreamError::UnsupportedVersion(_) => Failure::usage(
                format!("{input}: {error}"),
                "decrypt it with the combsiv version that wrote it",
            ),
            StreamError::WrongKey => authentication(
                "decryption failed: wrong key or passphrase, or the file header was modified"
                    .into(),
                "check the key file or passphrase; no output was written",
            ),
            StreamError::Corrupted { chunk } => authentication(
                format!(
                    "decryption failed: chunk {chunk} of {input} is not authentic (modified, truncated, \
                     reordered or spliced)"
                ),
                "the file is damaged or was tampered with; nothing after the damage is trusted",
            ),
            StreamError::KdfTooExpensive { .. } => authentication(
                format!("{input}: {error}"),
                "a file from an untrusted source may ask for this to stall you; if you trust \
                 this one, raise the limits with --max-argon2-memory, --max-argon2-passes and \
                 --max-argon2-lanes",
            ),
            StreamError::InputChanged => Failure {
                exit: Exit::Io,
                what: format!(
                    "{input} changed while it was being read (its size or modification time)"
                ),
                hint: "run again once nothing else writes to it; no output was kept".into(),
            },
            StreamError::Truncated { chunks } => authentication(
                format!("decryption failed: {input} is truncated after {chunks} chunks"),
                "the file is incomplete; obtain the whole file again",
            ),
            other => Failure {
                exit: Exit::Io,
                what: other.to_string(),
                hint: "retry; if it persists, report it".into(),
            },
        }
    }
}

/// An `io::Error` without Rust's debug formatting ("(os error 2)" is kept: it is useful).
fn plain_io_error(error: &io::Error) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "combsiv: error: {}\ncombsiv: hint: {}",
            self.what, self.hint
        )
    }
}
