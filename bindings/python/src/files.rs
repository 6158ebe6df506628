//! Files in the combsiv stream format (the CLI's format: each side reads the other's files),
//! under a 32-byte master key; the GIL is released for the whole file. Inputs are read and
//! outputs written by the same library code as the CLI's, with the same guarantees.

use std::fs::File;
use std::path::PathBuf;

use combsiv::AesKeySize;
use combsiv::stream::{
    Algorithm, DEFAULT_CHUNK_SIZE, Decryptor, Encryptor, KeySource, MasterKey, Options, OutputFile,
    SecretFileError, StreamError,
};
use pyo3::exceptions::{
    PyBrokenPipeError, PyFileExistsError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::InvalidTag;
use crate::buffer::BytesLike;

pub fn master_key(key: &Bound<'_, PyAny>) -> PyResult<MasterKey> {
    let key = BytesLike::new(key)?.into_snapshot();
    let mut bytes: [u8; 32] = (*key)
        .try_into()
        .map_err(|_| PyValueError::new_err("a master key is 32 bytes"))?;
    let master = MasterKey::new(bytes);
    zeroize::Zeroize::zeroize(&mut bytes);
    Ok(master)
}

/// `InvalidTag` for what a forger or a wrong key causes, `FileExistsError` for an output
/// that exists (a block device included: `overwrite=True` writes over it),
/// `BrokenPipeError` for a FIFO that nothing reads, `OSError` for I/O and an input that
/// changed while it was read, `ValueError` for the rest.
pub fn to_py(error: StreamError) -> PyErr {
    match error {
        StreamError::Io(e) => PyOSError::new_err(e.to_string()),
        StreamError::CreateOutput(..) => PyOSError::new_err(error.to_string()),
        StreamError::WrongKey | StreamError::Corrupted { .. } | StreamError::Truncated { .. } => {
            InvalidTag::new_err(error.to_string())
        }
        StreamError::OutputExists(_) | StreamError::BlockDevice(_) => {
            PyFileExistsError::new_err(error.to_string())
        }
        StreamError::NoReader(_) => PyBrokenPipeError::new_err(error.to_string()),
        StreamError::InputChanged => PyOSError::new_err(error.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Encrypts the file `src` into `dst`; returns the plaintext length. `dst` is written as the
/// CLI writes it (the library's `OutputFile`): a private temporary file beside it, flushed
/// and given its name only when complete, so that a failure leaves the old `dst` (or none)
/// and never `src` destroyed (same file: refused).
#[pyfunction]
#[pyo3(signature = (src, dst, key, *, chunk_size = DEFAULT_CHUNK_SIZE, key_size = None, threads = 0, overwrite = false, aes128 = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "keyword arguments of a Python function"
)]
fn encrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    key: &Bound<'_, PyAny>,
    chunk_size: u32,
    key_size: Option<u32>,
    threads: usize,
    overwrite: bool,
    aes128: bool,
) -> PyResult<u64> {
    let key = master_key(key)?;
    let algorithm = Algorithm::gcm_siv(file_key_size(key_size, aes128)?);
    let encryptor = Encryptor::new(algorithm, chunk_size, KeySource::KeyFile).map_err(to_py)?;
    let options = Options {
        threads,
        backend: None,
    };
    py.detach(|| {
        let input = File::open(&src)?;
        let output = OutputFile::plan(&dst, Some(&input), overwrite)?;
        encryptor.encrypt_to_file(&key, &input, output, &options, |_| {})
    })
    .map_err(to_py)
}

/// The AES key size `encrypt_file` encrypts with: `key_size` bits (128 or 256, as
/// `generate_key(bit_length)` takes them; default 256), or 128 for the older `aes128=True`.
fn file_key_size(key_size: Option<u32>, aes128: bool) -> PyResult<AesKeySize> {
    match (key_size, aes128) {
        (None, false) => Ok(AesKeySize::Aes256),
        (None | Some(128), true) => Ok(AesKeySize::Aes128),
        (Some(_), true) => Err(PyValueError::new_err(
            "aes128=True is key_size=128; pass key_size alone",
        )),
        (Some(bits), false) => AesKeySize::of_bits(bits)
            .map_err(|_| PyValueError::new_err("key_size must be 128 or 256 (bits)")),
    }
}

/// Decrypts the combsiv file `src` into `dst`; returns the plaintext length. As
/// `encrypt_file` writes: on failure nothing is left at `dst` (or the old `dst` is), and
/// never unverified plaintext.
#[pyfunction]
#[pyo3(signature = (src, dst, key, *, threads = 0, overwrite = false))]
fn decrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    key: &Bound<'_, PyAny>,
    threads: usize,
    overwrite: bool,
) -> PyResult<u64> {
    let key = master_key(key)?;
    let options = Options {
        threads,
        backend: None,
    };
    py.detach(|| {
        let input = File::open(&src)?;
        let decryptor = Decryptor::new(&input)?;
        if !matches!(decryptor.header().key_source, KeySource::KeyFile) {
            return Err(StreamError::InvalidHeader(
                "the file was encrypted with a passphrase; decrypt it with the combsiv CLI",
            ));
        }
        let output = OutputFile::plan(&dst, Some(&input), overwrite)?;
        decryptor.decrypt_to_file(&key, output, &options, |_| {})
    })
    .map_err(to_py)
}

/// The 32-byte master key in a key file made by `combsiv keygen`, read as the CLI reads
/// one: at most 4 KiB, and unless `allow_insecure` only a file that no other user may read
/// or write and that belongs to this user (or root) (`PermissionError` otherwise).
#[pyfunction]
#[pyo3(signature = (path, *, allow_insecure = false))]
fn load_key_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    allow_insecure: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = MasterKey::read_key_file(&path, allow_insecure).map_err(|e| {
        let what = format!("{}: {e}", path.display());
        match e {
            SecretFileError::Io(e) => PyOSError::new_err(format!("{}: {e}", path.display())),
            SecretFileError::Exposed { .. } | SecretFileError::ForeignOwner { .. } => {
                PyPermissionError::new_err(what)
            }
            _ => PyValueError::new_err(what),
        }
    })?;
    Ok(PyBytes::new(py, key.as_bytes()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_key_file, m)?)?;
    Ok(())
}
