//! `combsiv.cobblestone`: C2SP chunked encryption through the classes, constructors and
//! methods of `cryptography.cobblestone` (Cobblestone-128 and -256, AES-GCM), so that
//! changing the import is the whole migration, and the same construction over AES-GCM-SIV
//! (`CobblestoneSiv128*`, `CobblestoneSiv256*`: combsiv's instantiation, which `cryptography`
//! does not read).

use std::fs::File;
use std::path::PathBuf;

use combsiv::c2sp::{self, Aead, Decryptor, Encryptor};
use combsiv::stream::{Options, OutputFile, StreamError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffer::{Buffer, BytesLike};
use crate::{AlreadyFinalized, InvalidTag};

/// `cryptography`'s exceptions for what can go wrong: `InvalidTag` for a wrong key or
/// context, a changed, reordered or truncated message; `ValueError` for arguments.
fn to_py(error: StreamError) -> PyErr {
    match error {
        StreamError::WrongKey | StreamError::Corrupted { .. } | StreamError::Truncated { .. } => {
            InvalidTag::new_err(())
        }
        StreamError::WrongOutputLength { needed, .. } => {
            PyValueError::new_err(format!("buffer must be at least {needed} bytes"))
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

pub fn check_key(aead: Aead, key: &[u8]) -> PyResult<()> {
    let len = aead.key_size().key_len();
    if key.len() == len {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("key must be {len} bytes.")))
    }
}

/// Runs `step` on the live context, which a failure ends (`cryptography` drops a context
/// on any error too).
fn on_live<T, C>(
    context: &mut Option<C>,
    step: impl FnOnce(&mut C) -> Result<T, StreamError>,
) -> PyResult<T> {
    let live = context
        .as_mut()
        .ok_or_else(|| AlreadyFinalized::new_err("Context was already finalized."))?;
    step(live).map_err(|error| {
        if !matches!(error, StreamError::WrongOutputLength { .. }) {
            *context = None;
        }
        to_py(error)
    })
}

/// `update_into`'s work: `data` read once, written into the caller's buffer.
fn update_into<C>(
    context: &mut Option<C>,
    data: &Bound<'_, PyAny>,
    buf: &Bound<'_, PyAny>,
    update: impl FnOnce(&mut C, &[u8], &mut [u8]) -> Result<usize, StreamError>,
) -> PyResult<usize> {
    let data = BytesLike::new(data)?.into_snapshot();
    let mut buffer = Buffer::writable(buf)?;
    on_live(context, |live| update(live, &data, buffer.bytes_mut()))
}

/// `finalize`'s work: the context ends here, whatever the outcome.
fn finalize<'py, C>(
    py: Python<'py>,
    context: &mut Option<C>,
    finish: impl FnOnce(C) -> Result<Vec<u8>, StreamError>,
) -> PyResult<Bound<'py, PyBytes>> {
    let live = context
        .take()
        .ok_or_else(|| AlreadyFinalized::new_err("Context was already finalized."))?;
    finish(live).map(|out| new_bytes(py, out)).map_err(to_py)
}

fn new_bytes<'py>(py: Python<'py>, bytes: Vec<u8>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &bytes)
}

macro_rules! chunked_classes {
    ($encryptor:ident, $decryptor:ident, $aead:expr, $name:literal) => {
        #[doc = concat!("Encrypts one message incrementally, ", $name, ".")]
        #[pyclass(module = "combsiv.cobblestone")]
        #[derive(Debug)]
        pub struct $encryptor {
            inner: Option<Encryptor>,
        }

        #[pymethods]
        impl $encryptor {
            /// An encryptor under `key` (the AEAD's key length), binding `context`.
            #[new]
            fn new(key: &Bound<'_, PyAny>, context: &Bound<'_, PyAny>) -> PyResult<Self> {
                let key = BytesLike::new(key)?.into_snapshot();
                let context = BytesLike::new(context)?.into_snapshot();
                check_key($aead, &key)?;
                let inner = Encryptor::new($aead, &key, &context).map_err(to_py)?;
                Ok(Self { inner: Some(inner) })
            }

            /// A new random key from the OS.
            #[staticmethod]
            fn generate_key(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
                let key = $aead
                    .generate_key()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Ok(PyBytes::new(py, &key))
            }

            /// The ciphertext ready after `data`: the header first, then each whole chunk.
            fn update<'py>(
                &mut self,
                py: Python<'py>,
                data: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                let data = BytesLike::new(data)?.into_snapshot();
                on_live(&mut self.inner, |e| e.update(&data)).map(|out| new_bytes(py, out))
            }

            /// `update` into `buf`; returns how many bytes it wrote.
            fn update_into(
                &mut self,
                data: &Bound<'_, PyAny>,
                buf: &Bound<'_, PyAny>,
            ) -> PyResult<usize> {
                update_into(&mut self.inner, data, buf, |e, data, out| {
                    e.update_into(data, out)
                })
            }

            /// The rest of the ciphertext: the final chunk (and the header if nothing was
            /// returned yet). The encryptor takes nothing after it.
            fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                finalize(py, &mut self.inner, |live| live.finalize())
            }
        }

        #[doc = concat!("Decrypts one message incrementally, ", $name, ".")]
        #[pyclass(module = "combsiv.cobblestone")]
        #[derive(Debug)]
        pub struct $decryptor {
            inner: Option<Decryptor>,
        }

        #[pymethods]
        impl $decryptor {
            /// A decryptor under `key`, for a message sealed with `context`.
            #[new]
            fn new(key: &Bound<'_, PyAny>, context: &Bound<'_, PyAny>) -> PyResult<Self> {
                let key = BytesLike::new(key)?.into_snapshot();
                let context = BytesLike::new(context)?.into_snapshot();
                check_key($aead, &key)?;
                let inner = Decryptor::new($aead, &key, &context).map_err(to_py)?;
                Ok(Self { inner: Some(inner) })
            }

            /// The plaintext of every chunk `data` completes, each once its tag verifies.
            fn update<'py>(
                &mut self,
                py: Python<'py>,
                data: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                let data = BytesLike::new(data)?.into_snapshot();
                on_live(&mut self.inner, |d| d.update(&data)).map(|out| new_bytes(py, out))
            }

            /// `update` into `buf`; returns how many bytes it wrote.
            fn update_into(
                &mut self,
                data: &Bound<'_, PyAny>,
                buf: &Bound<'_, PyAny>,
            ) -> PyResult<usize> {
                update_into(&mut self.inner, data, buf, |d, data, out| {
                    d.update_into(data, out)
                })
            }

            /// The final chunk's plaintext; `InvalidTag` if the message is truncated. The
            /// decryptor takes nothing after it.
            fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                finalize(py, &mut self.inner, |live| live.finalize())
            }
        }
    };
}

chunked_classes!(
    Cobblestone128Encryptor,
    Cobblestone128Decryptor,
    Aead::Aes128Gcm,
    "Cobblestone-128 (AES-128-GCM)"
);
chunked_classes!(
    Cobblestone256Encryptor,
    Cobblestone256Decryptor,
    Aead::Aes256Gcm,
    "Cobblestone-256 (AES-256-GCM)"
);
chunked_classes!(
    CobblestoneSiv128Encryptor,
    CobblestoneSiv128Decryptor,
    Aead::Aes128GcmSiv,
    "the construction over AES-128-GCM-SIV"
);
chunked_classes!(
    CobblestoneSiv256Encryptor,
    CobblestoneSiv256Decryptor,
    Aead::Aes256GcmSiv,
    "the construction over AES-256-GCM-SIV"
);

/// The AEAD of a `key` of 16 or 32 bytes: Cobblestone-128/256, or with `siv` combsiv's
/// AES-GCM-SIV instantiation.
fn aead_for(key: &[u8], siv: bool) -> PyResult<Aead> {
    match (key.len(), siv) {
        (16, false) => Ok(Aead::Aes128Gcm),
        (32, false) => Ok(Aead::Aes256Gcm),
        (16, true) => Ok(Aead::Aes128GcmSiv),
        (32, true) => Ok(Aead::Aes256GcmSiv),
        (24, _) => Err(PyValueError::new_err(
            "key must be 16 or 32 bytes: combsiv has no AES-192",
        )),
        _ => Err(PyValueError::new_err("key must be 16 or 32 bytes.")),
    }
}

/// What a file function works under: the key and context copied out of Python, the AEAD
/// the key's length and `siv` name, the threads.
struct FileJob {
    key: Zeroizing<Vec<u8>>,
    context: Vec<u8>,
    aead: Aead,
    options: Options,
}

impl FileJob {
    fn new(
        key: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
        siv: bool,
        threads: usize,
    ) -> PyResult<FileJob> {
        let key = Zeroizing::new(BytesLike::new(key)?.into_snapshot().to_vec());
        let aead = aead_for(&key, siv)?;
        Ok(FileJob {
            key,
            context: BytesLike::new(context)?.into_snapshot().to_vec(),
            aead,
            options: Options {
                threads,
                backend: None,
            },
        })
    }
}

/// Encrypts the file `src` into `dst` as one C2SP message (Cobblestone-128 or -256 by the
/// key's length; AES-GCM-SIV with `siv=True`) on every core; returns the plaintext length.
/// `dst` is written as `combsiv.encrypt_file` writes: complete, or not at all.
#[pyfunction]
#[pyo3(name = "_c2sp_encrypt_file", signature = (src, dst, key, context, *, siv = false, threads = 0, overwrite = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "keyword arguments of a Python function"
)]
fn encrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    key: &Bound<'_, PyAny>,
    context: &Bound<'_, PyAny>,
    siv: bool,
    threads: usize,
    overwrite: bool,
) -> PyResult<u64> {
    let job = FileJob::new(key, context, siv, threads)?;
    py.detach(|| {
        let input = File::open(&src)?;
        let output = OutputFile::plan(&dst, Some(&input), overwrite)?;
        let message = c2sp::Message::new(job.aead, &job.key, &job.context)?;
        message.encrypt_to_file(&input, output, &job.options, |_| {})
    })
    .map_err(crate::files::to_py)
}

/// Decrypts the C2SP message in the file `src` into `dst` on every core; returns the
/// plaintext length. A wrong key or context raises `InvalidTag` before `dst` exists; on any
/// failure nothing unverified is left at `dst`.
#[pyfunction]
#[pyo3(name = "_c2sp_decrypt_file", signature = (src, dst, key, context, *, siv = false, threads = 0, overwrite = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "keyword arguments of a Python function"
)]
fn decrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    key: &Bound<'_, PyAny>,
    context: &Bound<'_, PyAny>,
    siv: bool,
    threads: usize,
    overwrite: bool,
) -> PyResult<u64> {
    let job = FileJob::new(key, context, siv, threads)?;
    py.detach(|| {
        let input = File::open(&src)?;
        let message = c2sp::Message::read(job.aead, &job.key, &job.context, &input)?;
        let output = OutputFile::plan(&dst, Some(&input), overwrite)?;
        message.decrypt_to_file(&input, output, &job.options, |_| {})
    })
    .map_err(crate::files::to_py)
}

/// The C2SP AEAD's IANA name for a key of this length (`siv`: AES-GCM-SIV), for
/// `combsiv.cobblestone.open_encrypted`.
#[pyfunction]
#[pyo3(signature = (key_len, *, siv = false))]
fn _aead_name(key_len: usize, siv: bool) -> PyResult<&'static str> {
    aead_for(&vec![0; key_len], siv).map(Aead::iana_name)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Cobblestone128Encryptor>()?;
    m.add_class::<Cobblestone128Decryptor>()?;
    m.add_class::<Cobblestone256Encryptor>()?;
    m.add_class::<Cobblestone256Decryptor>()?;
    m.add_class::<CobblestoneSiv128Encryptor>()?;
    m.add_class::<CobblestoneSiv128Decryptor>()?;
    m.add_class::<CobblestoneSiv256Encryptor>()?;
    m.add_class::<CobblestoneSiv256Decryptor>()?;
    m.add_function(wrap_pyfunction!(encrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(_aead_name, m)?)?;
    Ok(())
}
