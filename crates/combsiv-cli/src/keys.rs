//! Where the master key comes from: a key file made by `combsiv keygen`, or a passphrase
//! stretched with Argon2id.

use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use argon2::{Algorithm, Argon2, Params, Version};
use combsiv::stream::{Header, KeySource, MasterKey, SecretFileError, read_secret_file};
use zeroize::Zeroizing;

use crate::failure::Failure;

/// Set while the terminal's echo may be off for a passphrase prompt, so that a signal
/// handler can turn it back on.
pub static PROMPTING: AtomicBool = AtomicBool::new(false);

/// The first line of every key file.
const KEY_FILE_HEADER: &str =
    "# combsiv key file v1: a 256-bit secret key. Keep it private: it decrypts your files.";

/// Argon2id cost for new passphrase-encrypted files: 64 MiB, 3 passes, 1 lane (RFC 9106's
/// second recommended option, one lane because the work runs on one thread).
pub const ARGON2_DEFAULT: KeySource = KeySource::Argon2id {
    memory_kib: 64 * 1024,
    iterations: 3,
    parallelism: 1,
};

/// The user's choice of key on the command line.
#[derive(Clone, Debug)]
pub enum KeyChoice {
    File(PathBuf),
    PassphrasePrompt,
    PassphraseFile(PathBuf),
}

impl KeyChoice {
    /// How a new file's key is obtained.
    pub fn source(&self) -> KeySource {
        match self {
            KeyChoice::File(_) => KeySource::KeyFile,
            _ => ARGON2_DEFAULT,
        }
    }

    /// The master key for a stream with `header`. Key and passphrase files that other users
    /// can read are refused unless `allow_insecure` (a secret they can read is theirs too).
    pub fn master_key(
        &self,
        header: &Header,
        confirm: bool,
        allow_insecure: bool,
    ) -> Result<MasterKey, Failure> {
        match (self, header.key_source) {
            (KeyChoice::File(path), KeySource::KeyFile) => read_key_file(path, allow_insecure),
            (KeyChoice::File(_), KeySource::Argon2id { .. }) => Err(Failure::usage(
                "this file was encrypted with a passphrase, not a key file",
                "use --passphrase or --passphrase-file",
            )),
            (_, KeySource::KeyFile) => Err(Failure::usage(
                "this file was encrypted with a key file, not a passphrase",
                "use --key-file with the key it was encrypted with",
            )),
            (KeyChoice::PassphrasePrompt, params) => {
                let passphrase = prompt_passphrase(confirm)?;
                stretch(&passphrase, header, params)
            }
            (KeyChoice::PassphraseFile(path), params) => {
                let passphrase = read_passphrase_file(path, allow_insecure)?;
                stretch(&passphrase, header, params)
            }
        }
    }

    /// The input key of a C2SP message with `salt`, `len` bytes long: a key file's 32 bytes
    /// (AES-256 only), or Argon2id of the passphrase with the message's salt and
    /// [`ARGON2_DEFAULT`]'s cost (docs/C2SP.md: the format has no room for parameters).
    pub fn c2sp_input_key(
        &self,
        salt: &[u8],
        len: usize,
        confirm: bool,
        allow_insecure: bool,
    ) -> Result<Zeroizing<Vec<u8>>, Failure> {
        let mut key = Zeroizing::new(vec![0u8; len]);
        let passphrase = match self {
            KeyChoice::File(path) => {
                let master = read_key_file(path, allow_insecure)?;
                if master.as_bytes().len() != len {
                    return Err(Failure::usage(
                        "C2SP with AES-128 takes a 16-byte input key; combsiv key files hold 32 bytes",
                        "use --key-size 256 with a key file, or a passphrase",
                    ));
                }
                key.copy_from_slice(master.as_bytes());
                return Ok(key);
            }
            KeyChoice::PassphrasePrompt => prompt_passphrase(confirm)?,
            KeyChoice::PassphraseFile(path) => read_passphrase_file(path, allow_insecure)?,
        };
        argon2id(&passphrase, salt, ARGON2_DEFAULT, &mut key)?;
        Ok(key)
    }
}

/// Writes a new random key file at `path` (mode 0600, never over an existing file), or to
/// stdout without a path.
pub fn keygen(path: Option<&Path>) -> Result<(), Failure> {
    let key = MasterKey::generate().map_err(|e| {
        Failure::usage(
            e.to_string(),
            "check that the OS random number generator works",
        )
    })?;
    let mut text = Zeroizing::new(format!("{KEY_FILE_HEADER}\n"));
    for byte in key.as_bytes() {
        text.push_str(&format!("{byte:02x}"));
    }
    text.push('\n');
    match path {
        Some(path) if path.exists() => Err(Failure::usage(
            format!("refusing to overwrite {}", path.display()),
            "keys are never overwritten: choose a new path, or delete the old key first",
        )),
        Some(path) => {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| {
                    Failure::io(format!("cannot create key file {}", path.display()), &e)
                })?;
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| {
                    Failure::io(format!("cannot write key file {}", path.display()), &e)
                })?;
            // The new name too must survive a crash.
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            File::open(dir).and_then(|dir| dir.sync_all()).map_err(|e| {
                Failure::io(
                    format!("cannot sync the directory of {}", path.display()),
                    &e,
                )
            })
        }
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| Failure::io("cannot write the key to stdout", &e)),
    }
}

/// The most a passphrase file may hold.
const MAX_PASSPHRASE_FILE: u64 = 64 * 1024;

/// The whole of a small secret file (see [`read_secret_file`]: a size limit, and unless
/// `allow_insecure` only a file that is the user's alone), as a failure to show otherwise.
fn read_small(
    path: &Path,
    (limit, allow_insecure): (u64, bool),
    what: &str,
) -> Result<Zeroizing<String>, Failure> {
    read_secret_file(path, limit, allow_insecure).map_err(|e| secret_file_failure(e, path, what))
}

fn secret_file_failure(error: SecretFileError, path: &Path, what: &str) -> Failure {
    let path = path.display();
    match error {
        SecretFileError::Io(e) => Failure::io(format!("cannot read {what} {path}"), &e),
        SecretFileError::Exposed { mode } => Failure::usage(
            format!(
                "{what} {path} can be read by other users (mode {:03o})",
                mode & 0o777
            ),
            format!("run `chmod 600 {path}`, or pass --allow-insecure-key-file"),
        ),
        SecretFileError::ForeignOwner { uid } => Failure::usage(
            format!("{what} {path} belongs to another user (uid {uid}), who could replace it"),
            "use a file of your own, or pass --allow-insecure-key-file",
        ),
        SecretFileError::TooLong { limit } => Failure::usage(
            format!("{what} {path} is longer than {limit} bytes"),
            format!("a {what} is a short text file"),
        ),
        SecretFileError::NotText => Failure::usage(
            format!("{what} {path} is not UTF-8 text"),
            format!("a {what} is a short text file"),
        ),
        SecretFileError::NotKeyFile => Failure::usage(
            format!("{path} is not a combsiv key file"),
            "pass a file made by `combsiv keygen`",
        ),
        other => Failure::usage(format!("{what} {path}: {other}"), "check the file"),
    }
}

fn read_key_file(path: &Path, allow_insecure: bool) -> Result<MasterKey, Failure> {
    MasterKey::read_key_file(path, allow_insecure)
        .map_err(|e| secret_file_failure(e, path, "key file"))
}

fn prompt_passphrase(confirm: bool) -> Result<Zeroizing<String>, Failure> {
    if !std::io::stderr().is_terminal() && !std::io::stdin().is_terminal() {
        return Err(Failure::usage(
            "no terminal to ask for the passphrase",
            "use --passphrase-file FILE in scripts",
        ));
    }
    let ask = |prompt: &str| {
        rpassword::prompt_password(prompt)
            .map(Zeroizing::new)
            .map_err(|e| Failure::io("cannot read the passphrase from the terminal", &e))
    };
    PROMPTING.store(true, Ordering::SeqCst);
    let answers = ask("Passphrase: ").and_then(|passphrase| {
        let again = if confirm {
            Some(ask("Passphrase (again): ")?)
        } else {
            None
        };
        Ok((passphrase, again))
    });
    PROMPTING.store(false, Ordering::SeqCst);
    let (passphrase, again) = answers?;
    if passphrase.is_empty() {
        return Err(Failure::usage(
            "the passphrase is empty",
            "type a passphrase",
        ));
    }
    if again.is_some_and(|again| *again != *passphrase) {
        return Err(Failure::usage(
            "the passphrases differ",
            "type the same passphrase twice",
        ));
    }
    Ok(passphrase)
}

/// The first line of `path`, without its line ending.
fn read_passphrase_file(path: &Path, allow_insecure: bool) -> Result<Zeroizing<String>, Failure> {
    let text = read_small(
        path,
        (MAX_PASSPHRASE_FILE, allow_insecure),
        "passphrase file",
    )?;
    let line = Zeroizing::new(text.lines().next().unwrap_or_default().to_owned());
    if line.is_empty() {
        return Err(Failure::usage(
            format!("passphrase file {} is empty", path.display()),
            "put the passphrase on its first line",
        ));
    }
    Ok(line)
}

/// Argon2id(passphrase, salt = the header's salt) with the header's parameters.
fn stretch(passphrase: &str, header: &Header, source: KeySource) -> Result<MasterKey, Failure> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    argon2id(passphrase, &header.salt, source, &mut bytes[..])?;
    Ok(MasterKey::new(*bytes))
}

/// Argon2id (RFC 9106, version 0x13) of `passphrase` with `salt` and the cost `source`
/// names, filling `out`.
fn argon2id(
    passphrase: &str,
    salt: &[u8],
    source: KeySource,
    out: &mut [u8],
) -> Result<(), Failure> {
    let KeySource::Argon2id {
        memory_kib,
        iterations,
        parallelism,
    } = source
    else {
        return Err(Failure::usage(
            "the file has no passphrase parameters",
            "use --key-file",
        ));
    };
    let params =
        Params::new(memory_kib, iterations, parallelism, Some(out.len())).map_err(|e| {
            Failure::usage(
                format!("invalid Argon2id parameters: {e}"),
                "the header is damaged",
            )
        })?;
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), salt, out)
        .map_err(|e| Failure::usage(format!("Argon2id failed: {e}"), "check the passphrase"))
}
