//! Files in the combsiv stream format (the CLI's format: each side reads the other's files),
//! under a 32-byte master key; the GIL is released for the whole file.

use std::fs::{self, File, OpenOptions};
use std::path::PathBuf;

use combsiv::stream::{
    Algorithm, DEFAULT_CHUNK_SIZE, Decryptor, Encryptor, KeySource, MasterKey, Options, StreamError,
};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::InvalidTag;
use crate::buffer::BytesLike;

fn master_key(key: &Bound<'_, PyAny>) -> PyResult<MasterKey> {
    let key = BytesLike::new(key)?.into_snapshot();
    let mut bytes: [u8; 32] = (*key)
        .try_into()
        .map_err(|_| PyValueError::new_err("a master key is 32 bytes"))?;
    let master = MasterKey::new(bytes);
    zeroize::Zeroize::zeroize(&mut bytes);
    Ok(master)
}

/// `InvalidTag` for what a forger or a wrong key causes, `OSError` for I/O, `ValueError`
/// for the rest.
fn to_py(error: StreamError) -> PyErr {
    match error {
        StreamError::Io(e) => PyOSError::new_err(e.to_string()),
        StreamError::WrongKey | StreamError::Corrupted { .. } | StreamError::Truncated { .. } => {
            InvalidTag::new_err(error.to_string())
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Creates `path` (refusing an existing file unless `overwrite`), runs `body` into it, and
/// removes it again if `body` fails, so that a failed decryption leaves nothing behind.
fn write_new(
    path: &PathBuf,
    overwrite: bool,
    body: impl FnOnce(&mut File) -> Result<u64, StreamError>,
) -> Result<u64, StreamError> {
    let mut options = OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path)?;
    match body(&mut file).and_then(|n| file.sync_all().map(|()| n).map_err(StreamError::Io)) {
        Ok(n) => Ok(n),
        Err(e) => {
            drop(file);
            let _ = fs::remove_file(path);
            Err(e)
        }
    }
}

/// Encrypts the file `src` into a new file `dst`; returns the plaintext length.
#[pyfunction]
#[pyo3(signature = (src, dst, key, *, chunk_size = DEFAULT_CHUNK_SIZE, aes128 = false, threads = 0, overwrite = false))]
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
    aes128: bool,
    threads: usize,
    overwrite: bool,
) -> PyResult<u64> {
    let key = master_key(key)?;
    let algorithm = if aes128 {
        Algorithm::Aes128GcmSiv
    } else {
        Algorithm::Aes256GcmSiv
    };
    let encryptor = Encryptor::new(algorithm, chunk_size, KeySource::KeyFile).map_err(to_py)?;
    let options = Options {
        threads,
        backend: None,
    };
    py.detach(|| {
        let input = File::open(&src)?;
        write_new(&dst, overwrite, |out| {
            encryptor.encrypt(&key, &input, out, &options, |_| {})
        })
    })
    .map_err(to_py)
}

/// Decrypts the combsiv file `src` into a new file `dst`; returns the plaintext length.
/// On failure `dst` is removed: no unverified plaintext is left.
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
        decryptor.check_key(&key)?;
        write_new(&dst, overwrite, |out| {
            decryptor.decrypt(&key, out, &options, |_| {})
        })
    })
    .map_err(to_py)
}

/// The 32-byte master key in a key file made by `combsiv keygen`.
#[pyfunction]
fn load_key_file<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyBytes>> {
    let text = zeroize::Zeroizing::new(
        fs::read_to_string(&path).map_err(|e| PyOSError::new_err(e.to_string()))?,
    );
    let key = MasterKey::from_key_file_text(&text).ok_or_else(|| {
        PyValueError::new_err(format!("{} is not a combsiv key file", path.display()))
    })?;
    Ok(PyBytes::new(py, key.as_bytes()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_key_file, m)?)?;
    Ok(())
}
