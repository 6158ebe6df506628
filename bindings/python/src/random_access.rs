//! Random access into encrypted files of either format: `combsiv.open_encrypted` and
//! `combsiv.cobblestone.open_encrypted` wrap the `_SeekableDecryptor` made here in a Python
//! `io.RawIOBase` (python/combsiv/_random_access.py); `decrypt_range` reads one range. The
//! library authenticates the final chunk when the file opens and opens only the chunks a
//! read covers.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use combsiv::c2sp::Aead;
use combsiv::random_access::{ReadAt, SeekableDecryptor};
use combsiv::stream::StreamError;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffer::BytesLike;

/// Where the sealed bytes are: a file opened by path (read with `pread`, the GIL released),
/// or a Python binary file object with `seek` and `read` (or `readinto`), called with the
/// GIL.
enum Source {
    File(File),
    Python(Py<PyAny>),
}

impl Source {
    fn new(file: &Bound<'_, PyAny>) -> PyResult<Source> {
        match file.extract::<PathBuf>() {
            Ok(path) => File::open(&path)
                .map(Source::File)
                .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display()))),
            Err(_) if file.hasattr("seek")? && file.hasattr("read")? => {
                Ok(Source::Python(file.clone().unbind()))
            }
            Err(_) => Err(PyValueError::new_err(
                "expected a path or a binary file object with seek and read",
            )),
        }
    }
}

fn io_error(error: PyErr) -> io::Error {
    io::Error::other(error.to_string())
}

impl ReadAt for Source {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match self {
            Source::File(file) => file.read_at(buf, offset),
            Source::Python(file) => Python::attach(|py| {
                let file = file.bind(py);
                file.call_method1("seek", (offset,))?;
                let data = file.call_method1("read", (buf.len(),))?;
                let data = BytesLike::new(&data)?.into_snapshot();
                let n = data.len().min(buf.len());
                buf[..n].copy_from_slice(&data[..n]);
                Ok(n)
            })
            .map_err(io_error),
        }
    }

    fn size(&self) -> io::Result<u64> {
        match self {
            Source::File(file) => file.size(),
            Source::Python(file) => {
                Python::attach(|py| file.bind(py).call_method1("seek", (0, 2))?.extract::<u64>())
                    .map_err(io_error)
            }
        }
    }
}

/// An encrypted file opened for reads at any offset.
#[pyclass(module = "combsiv", name = "_SeekableDecryptor")]
#[derive(Debug)]
pub struct SeekableDecryptorClass {
    inner: SeekableDecryptor<Source>,
}

#[pymethods]
impl SeekableDecryptorClass {
    /// The plaintext length (the final chunk is authenticated).
    fn __len__(&self) -> usize {
        usize::try_from(self.inner.len()).unwrap_or(usize::MAX)
    }

    /// The plaintext length as an int of any size.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.len()
    }

    /// Up to `length` plaintext bytes from `offset` (fewer at the end), decrypted straight
    /// into the new bytes object (the GIL released meanwhile).
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        length: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let available = self.inner.len().saturating_sub(offset).min(length);
        let len = usize::try_from(available)
            .map_err(|_| PyValueError::new_err("the range does not fit in memory"))?;
        PyBytes::new_with(py, len, |out| {
            py.detach(|| self.inner.read_at(offset, out))
                .map(|_| ())
                .map_err(crate::files::to_py)
        })
    }

    /// The ciphertext byte range (start, end) that holds plaintext bytes
    /// `start..start + length`: what to fetch from an object store.
    fn ciphertext_range(&self, start: u64, length: u64) -> (u64, u64) {
        let range = self
            .inner
            .ciphertext_range(start..start.saturating_add(length));
        (range.start, range.end)
    }
}

/// Opens a combsiv stream (the CLI's format) under a 32-byte master key.
#[pyfunction]
fn _open_stream(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    key: &Bound<'_, PyAny>,
) -> PyResult<SeekableDecryptorClass> {
    let key = crate::files::master_key(key)?;
    let source = Source::new(file)?;
    open(py, || SeekableDecryptor::stream(source, &key))
}

/// Opens a C2SP message sealed with the AEAD named `aead` (its IANA name) under `key` and
/// `context`.
#[pyfunction]
fn _open_c2sp(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    aead: &str,
    key: &Bound<'_, PyAny>,
    context: &Bound<'_, PyAny>,
) -> PyResult<SeekableDecryptorClass> {
    let aead = Aead::ALL
        .into_iter()
        .find(|known| known.iana_name() == aead)
        .ok_or_else(|| PyValueError::new_err(format!("unknown AEAD {aead:?}")))?;
    let key = Zeroizing::new(BytesLike::new(key)?.into_snapshot().to_vec());
    crate::cobblestone::check_key(aead, &key)?;
    let context = BytesLike::new(context)?.into_snapshot().to_vec();
    let source = Source::new(file)?;
    open(py, || SeekableDecryptor::c2sp(source, aead, &key, &context))
}

fn open(
    py: Python<'_>,
    open: impl FnOnce() -> Result<SeekableDecryptor<Source>, StreamError> + Send,
) -> PyResult<SeekableDecryptorClass> {
    py.detach(open)
        .map(|inner| SeekableDecryptorClass { inner })
        .map_err(crate::files::to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SeekableDecryptorClass>()?;
    m.add_function(wrap_pyfunction!(_open_stream, m)?)?;
    m.add_function(wrap_pyfunction!(_open_c2sp, m)?)?;
    Ok(())
}
