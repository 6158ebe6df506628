//! The `combsiv` Python package's extension module (`combsiv._combsiv`): PyO3 classes over
//! the combsiv library. The Python-facing documentation is in `python/combsiv/__init__.pyi`.

#![deny(unsafe_code)]

mod aead;
mod buffer;
mod cobblestone;
mod columns;
mod files;
mod random_access;
mod tink;

use combsiv::bounds::{self, NonceProfile, RandomNonceProfile};
use combsiv::{Backend, DynAesGcm, DynAesGcmSiv};
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyType};
use pyo3::{PyErrArguments, create_exception};
use zeroize::Zeroize;

use crate::aead::{key_of, to_py};
use crate::buffer::BytesLike;

/// An exception type of ours named as one of `cryptography.exceptions`, and where
/// `cryptography` is installed a subclass of it, so that code written for `cryptography`
/// catches ours with its own `except`; of `Exception` otherwise. Made on first use (the
/// module's import makes it).
fn mirrored_exception<'py>(
    py: Python<'py>,
    made: &'static PyOnceLock<Py<PyType>>,
    name: &'static std::ffi::CStr,
    doc: &'static std::ffi::CStr,
) -> PyResult<&'py Bound<'py, PyType>> {
    let made = made.get_or_try_init(py, || {
        let short = name
            .to_str()
            .unwrap_or_default()
            .trim_start_matches("combsiv.");
        let cryptography = py
            .import("cryptography.exceptions")
            .and_then(|module| module.getattr(short))
            .and_then(|base| Ok(base.cast_into::<PyType>()?));
        let base = match cryptography {
            Ok(base) => base,
            Err(_) => py.get_type::<PyException>(),
        };
        PyErr::new_type(py, name, Some(doc), Some(&base), None)
    })?;
    Ok(made.bind(py))
}

/// A new exception of a type [`mirrored_exception`] made, with `args`.
fn mirrored_err<A: PyErrArguments + Send + Sync + 'static>(
    type_object: for<'py> fn(Python<'py>) -> PyResult<&'py Bound<'py, PyType>>,
    args: A,
) -> PyErr {
    Python::attach(|py| match type_object(py) {
        Ok(made) => PyErr::from_type(made.clone(), args),
        Err(error) => error,
    })
}

/// `combsiv.InvalidTag`: the data is not authentic (`cryptography.exceptions.InvalidTag`'s
/// subclass where it is installed).
#[derive(Debug)]
pub struct InvalidTag;

static INVALID_TAG: PyOnceLock<Py<PyType>> = PyOnceLock::new();

impl InvalidTag {
    fn type_object(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        mirrored_exception(
            py,
            &INVALID_TAG,
            c"combsiv.InvalidTag",
            c"The data is not authentic under this key, nonce and associated data.",
        )
    }

    /// The exception, with `args`.
    pub fn new_err<A: PyErrArguments + Send + Sync + 'static>(args: A) -> PyErr {
        mirrored_err(InvalidTag::type_object, args)
    }
}

/// `combsiv.AlreadyFinalized`: an incremental encryptor or decryptor used after `finalize` or
/// after a failure (`cryptography.exceptions.AlreadyFinalized`'s subclass where it is
/// installed).
#[derive(Debug)]
pub struct AlreadyFinalized;

static ALREADY_FINALIZED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

impl AlreadyFinalized {
    fn type_object(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        mirrored_exception(
            py,
            &ALREADY_FINALIZED,
            c"combsiv.AlreadyFinalized",
            c"The context was already finalized, or failed: it takes no more data.",
        )
    }

    /// The exception, with `args`.
    pub fn new_err<A: PyErrArguments + Send + Sync + 'static>(args: A) -> PyErr {
        mirrored_err(AlreadyFinalized::type_object, args)
    }
}

create_exception!(
    combsiv,
    KeyExhausted,
    PyException,
    "A Sealer refused to encrypt: one more message would pass its key's usage bound."
);

fn backend_from_name(name: &str) -> PyResult<Backend> {
    let backend = Backend::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown backend {name:?}")))?;
    if !backend.is_available() {
        return Err(PyValueError::new_err(format!(
            "backend {name:?} is not available on this CPU"
        )));
    }
    Ok(backend)
}

fn new_siv(key: &[u8], backend: Backend) -> Result<DynAesGcmSiv, combsiv::Error> {
    DynAesGcmSiv::with_backend(key, backend)
}

fn new_gcm(key: &[u8], backend: Backend) -> Result<DynAesGcm, combsiv::Error> {
    DynAesGcm::with_backend(key, backend)
}

/// The methods both AEAD classes share, written once.
macro_rules! aead_class {
    ($class:ident, $name:literal, $cipher:ty, $new:ident, $scheme:expr, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(frozen, module = "combsiv", name = $name)]
        struct $class {
            cipher: $cipher,
            /// What the column calls have sealed under the key, and their limit.
            budget: columns::Budget,
        }

        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (key, backend = None, *, limit_log2 = bounds::DEFAULT_LIMIT_LOG2))]
            fn new(
                key: &Bound<'_, PyAny>,
                backend: Option<&str>,
                limit_log2: f64,
            ) -> PyResult<Self> {
                Ok($class {
                    cipher: key_of(key, backend, $new)?,
                    budget: columns::Budget::new($scheme, limit_log2),
                })
            }

            /// A new random key of `bit_length` (128 or 256) bits from the OS.
            #[staticmethod]
            fn generate_key<'py>(
                py: Python<'py>,
                bit_length: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                aead::generate_key(py, bit_length)
            }

            /// The backend this object runs on: "portable", "aesni", "vaes", "avx512" or "armv8".
            #[getter]
            fn backend(&self) -> &'static str {
                self.backend_of().name()
            }

            /// `ciphertext || tag` of `data` under `nonce`, authenticating `associated_data`.
            #[pyo3(signature = (nonce, data, associated_data = None))]
            fn encrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                aead::encrypt(py, &self.cipher, (nonce, data, associated_data))
            }

            /// The plaintext of `data` (`ciphertext || tag`); `InvalidTag` if it is not
            /// authentic.
            #[pyo3(signature = (nonce, data, associated_data = None))]
            fn decrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                aead::decrypt(py, &self.cipher, (nonce, data, associated_data))
            }

            /// `encrypt` into the writable `buf` of exactly `len(data) + 16` bytes; returns
            /// the length written. Holds the GIL throughout: `buf` is the caller's.
            #[pyo3(signature = (nonce, data, associated_data, buf))]
            fn encrypt_into<'py>(
                &self,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                buf: &Bound<'py, PyAny>,
            ) -> PyResult<usize> {
                aead::encrypt_into(&self.cipher, (nonce, data, associated_data), buf)
            }

            /// `decrypt` into the writable `buf` of exactly `len(data) - 16` bytes, which is
            /// zeroed if the data is not authentic; returns the length written. Holds the
            /// GIL throughout: `buf` is the caller's.
            #[pyo3(signature = (nonce, data, associated_data, buf))]
            fn decrypt_into<'py>(
                &self,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                buf: &Bound<'py, PyAny>,
            ) -> PyResult<usize> {
                aead::decrypt_into(&self.cipher, (nonce, data, associated_data), buf)
            }

            /// `encrypt` of every message under its nonce, in one call. `associated_data` is
            /// None, one bytes-like object for all, or a sequence with one per message.
            /// `threads`: None (or 0) for one per core on batches big enough to pay (at least
            /// 256 KiB per thread), else that many.
            #[pyo3(signature = (nonces, messages, associated_data = None, *, threads = None))]
            fn encrypt_many<'py>(
                &self,
                py: Python<'py>,
                nonces: &Bound<'py, PyAny>,
                messages: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyList>> {
                let threads = threads.unwrap_or(0);
                aead::encrypt_many(
                    py,
                    &self.cipher,
                    (nonces, messages, associated_data),
                    threads,
                )
            }

            /// `decrypt` of every message. If any fails, raises `InvalidTag` with `failed`
            /// (their indices) and `results` (the others' plaintexts, None for failures).
            #[pyo3(signature = (nonces, messages, associated_data = None, *, threads = None))]
            fn decrypt_many<'py>(
                &self,
                py: Python<'py>,
                nonces: &Bound<'py, PyAny>,
                messages: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyList>> {
                let threads = threads.unwrap_or(0);
                aead::decrypt_many(
                    py,
                    &self.cipher,
                    (nonces, messages, associated_data),
                    threads,
                )
            }

            /// Every row of an Arrow column sealed, each under a fresh random nonce
            /// (`nonce || ciphertext || tag`) or, deterministically, under `nonce`
            /// (`ciphertext || tag`); nulls stay null. Counted against the key's budget:
            /// `KeyExhausted` before any work if the rows would pass it.
            #[pyo3(signature = (values, nonce = None, associated_data = None, *, threads = None))]
            fn encrypt_column<'py>(
                &self,
                py: Python<'py>,
                values: &Bound<'py, PyAny>,
                nonce: Option<&Bound<'py, PyAny>>,
                associated_data: Option<&Bound<'py, PyAny>>,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let args = (values, nonce, associated_data);
                columns::encrypt_column(py, &self.cipher, &self.budget, args, threads.unwrap_or(0))
            }

            /// Every row of an Arrow column of sealed values opened. If any fails, raises
            /// `InvalidTag` with `failed` (their row numbers) and `results` (the other rows'
            /// plaintexts, null for those).
            #[pyo3(signature = (values, nonce = None, associated_data = None, *, threads = None))]
            fn decrypt_column<'py>(
                &self,
                py: Python<'py>,
                values: &Bound<'py, PyAny>,
                nonce: Option<&Bound<'py, PyAny>>,
                associated_data: Option<&Bound<'py, PyAny>>,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let args = (values, nonce, associated_data);
                columns::decrypt_column(py, &self.cipher, args, threads.unwrap_or(0))
            }

            /// The `limit_log2` to give each of `workers` processes (Spark or Dask workers)
            /// that use this key with budgets of their own, so that together they stay
            /// within `limit_log2`. `deterministic`: for fixed-nonce columns (or both kinds).
            #[staticmethod]
            #[pyo3(signature = (workers, *, deterministic = false, limit_log2 = bounds::DEFAULT_LIMIT_LOG2))]
            fn worker_limit_log2(workers: u64, deterministic: bool, limit_log2: f64) -> PyResult<f64> {
                worker_limit_log2($scheme, workers, deterministic, limit_log2)
            }

            /// What the column calls have sealed under this object's key: a dict of
            /// `random_nonce_rows`, `fixed_nonce_rows`, `fixed_nonces`, `max_blocks`,
            /// `bound_log2` (the advantage bound so far) and `limit_log2`.
            #[getter]
            fn column_usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                let usage = self.budget.usage();
                let dict = PyDict::new(py);
                dict.set_item("random_nonce_rows", usage.random_rows)?;
                dict.set_item("fixed_nonce_rows", usage.fixed_rows.values().sum::<u64>())?;
                dict.set_item("fixed_nonces", usage.fixed_rows.len())?;
                dict.set_item(
                    "max_blocks",
                    usage.random_max_blocks.max(usage.fixed_max_blocks),
                )?;
                dict.set_item("bound_log2", usage.bound_log2(self.budget.scheme()))?;
                dict.set_item("limit_log2", self.budget.limit_log2())?;
                Ok(dict)
            }

            fn __repr__(&self) -> String {
                format!("<combsiv.{} backend={}>", $name, self.backend_of().name())
            }
        }
    };
}

aead_class!(
    AesGcmSivClass,
    "AESGCMSIV",
    DynAesGcmSiv,
    new_siv,
    columns::Scheme::AesGcmSiv,
    "AES-GCM-SIV (RFC 8452) with a 128- or 256-bit key: cryptography's AESGCMSIV surface. A \
     repeated nonce only reveals whether two messages were equal."
);
aead_class!(
    AesGcmClass,
    "AESGCM",
    DynAesGcm,
    new_gcm,
    columns::Scheme::AesGcm,
    "AES-GCM (NIST SP 800-38D) with a 128- or 256-bit key: cryptography's AESGCM surface. \
     Never repeat a nonce under one key."
);

/// [`bounds::worker_limit_log2`] for a class's columns: linear for AES-GCM-SIV's randomized
/// ones, quadratic for its deterministic ones and for AES-GCM's.
fn worker_limit_log2(
    scheme: columns::Scheme,
    workers: u64,
    deterministic: bool,
    limit_log2: f64,
) -> PyResult<f64> {
    if workers == 0 || !limit_log2.is_finite() {
        return Err(PyValueError::new_err(
            "workers must be at least 1 and limit_log2 a finite number",
        ));
    }
    let key_use = match (scheme, deterministic) {
        (columns::Scheme::AesGcmSiv, false) => bounds::KeyUse::GcmSivRandomNonces,
        (columns::Scheme::AesGcmSiv, true) => bounds::KeyUse::GcmSivChosenNonces,
        (columns::Scheme::AesGcm, false) => bounds::KeyUse::GcmRandomNonces,
        (columns::Scheme::AesGcm, true) => {
            return Err(PyValueError::new_err(
                "AES-GCM columns are randomized only: deterministic=True does not apply",
            ));
        }
    };
    Ok(bounds::worker_limit_log2(limit_log2, workers, key_use))
}

impl AesGcmSivClass {
    fn backend_of(&self) -> Backend {
        self.cipher.backend()
    }
}

impl AesGcmClass {
    fn backend_of(&self) -> Backend {
        self.cipher.backend()
    }
}

/// AES-GCM-SIV with a random nonce per message and a usage budget: `seal` returns
/// `nonce || ciphertext || tag` and raises `KeyExhausted` once one more message would take
/// the random-nonce bound past 2**limit_log2.
#[pyclass(frozen, module = "combsiv", name = "Sealer")]
struct SealerClass {
    sealer: combsiv::Sealer,
}

#[pymethods]
impl SealerClass {
    #[new]
    #[pyo3(signature = (key, limit_log2 = -32.0))]
    fn new(key: &Bound<'_, PyAny>, limit_log2: f64) -> PyResult<Self> {
        let cipher = key_of(key, None, new_siv)?;
        Ok(SealerClass {
            sealer: combsiv::Sealer::with_limit(cipher, limit_log2),
        })
    }

    /// `nonce || ciphertext || tag` of `data` under a fresh random nonce.
    #[pyo3(signature = (data, associated_data = None))]
    fn seal<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = BytesLike::new(data)?.into_snapshot();
        let aad = BytesLike::optional(associated_data)?.map(BytesLike::into_snapshot);
        let aad = aad.as_deref().unwrap_or(&[]);
        let sealed = self.sealer.seal(aad, &data).map_err(to_py)?;
        Ok(PyBytes::new(py, &sealed))
    }

    /// The plaintext of `nonce || ciphertext || tag`; `InvalidTag` if it is not authentic.
    /// Opening does not count against the budget.
    #[pyo3(signature = (sealed, associated_data = None))]
    fn open<'py>(
        &self,
        py: Python<'py>,
        sealed: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sealed = BytesLike::new(sealed)?.into_snapshot();
        let aad = BytesLike::optional(associated_data)?.map(BytesLike::into_snapshot);
        let aad = aad.as_deref().unwrap_or(&[]);
        let mut opened = self.sealer.open(aad, &sealed).map_err(to_py)?;
        let bytes = PyBytes::new(py, &opened);
        opened.zeroize();
        Ok(bytes)
    }

    /// `(messages, blocks, max_blocks)` sealed so far.
    #[getter]
    fn usage(&self) -> (u64, u64, u64) {
        let usage = self.sealer.usage();
        (usage.messages, usage.blocks, usage.max_blocks)
    }

    /// log2 of the random-nonce advantage bound of the usage so far.
    #[getter]
    fn bound_log2(&self) -> f64 {
        self.sealer.usage().bound_log2()
    }
}

/// An advantage bound: its terms and their sum.
#[pyclass(frozen, module = "combsiv", name = "Bound")]
struct BoundClass {
    bound: bounds::Bound,
}

#[pymethods]
impl BoundClass {
    /// log2 of the whole bound.
    #[getter]
    fn log2(&self) -> f64 {
        self.bound.log2()
    }

    /// `(name, formula, log2)` of every term.
    #[getter]
    fn terms(&self) -> Vec<(&'static str, &'static str, f64)> {
        self.bound
            .terms()
            .iter()
            .map(|t| (t.name, t.formula, t.log2))
            .collect()
    }

    /// The name of the largest term.
    #[getter]
    fn dominant(&self) -> Option<&'static str> {
        self.bound.dominant().map(|t| t.name)
    }

    /// Whether the messages are longer than RFC 8452 allows (then no bound applies).
    #[getter]
    fn exceeds_length_limit(&self) -> bool {
        self.bound.exceeds_length_limit()
    }

    /// Whether the bound is at most 2**limit_log2 (and the messages within RFC 8452's limit).
    #[pyo3(signature = (limit_log2 = -32.0))]
    fn within(&self, limit_log2: f64) -> bool {
        self.bound.within(limit_log2)
    }

    fn __repr__(&self) -> String {
        format!("<combsiv.Bound 2^{:.4}>", self.bound.log2())
    }
}

/// A count for a bound: finite and not negative (`ValueError` otherwise; a NaN would
/// otherwise make every comparison with the bound false).
fn count(name: &str, value: f64) -> PyResult<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(PyValueError::new_err(format!(
            "{name} must be a finite number >= 0, not {value}"
        )))
    }
}

/// The AES-GCM-SIV bound for `nonces` distinct nonces, each encrypting at most `per_nonce`
/// messages of at most `max_bytes` bytes.
#[pyfunction]
fn nonce_bound(nonces: f64, per_nonce: f64, max_bytes: u64) -> PyResult<BoundClass> {
    Ok(BoundClass {
        bound: bounds::gcm_siv_nonce_based(&NonceProfile {
            nonces: count("nonces", nonces)?,
            per_nonce: count("per_nonce", per_nonce)?,
            max_blocks: bounds::blocks(max_bytes),
        }),
    })
}

/// The AES-GCM-SIV bound for `messages` messages of at most `max_bytes` bytes under random
/// 96-bit nonces.
#[pyfunction]
fn random_nonce_bound(messages: f64, max_bytes: u64) -> PyResult<BoundClass> {
    Ok(BoundClass {
        bound: bounds::gcm_siv_random_nonces(&RandomNonceProfile {
            messages: count("messages", messages)?,
            max_blocks: bounds::blocks(max_bytes),
        }),
    })
}

/// Whether this build of the extension checks Rust's debug assertions and overflows (CI runs
/// the tests once with them).
#[pyfunction]
fn _debug_assertions() -> bool {
    cfg!(debug_assertions)
}

/// The backend new ciphers use on this CPU: "avx512", "vaes", "aesni", "armv8" or "portable".
#[pyfunction]
fn backend() -> &'static str {
    Backend::detected().name()
}

/// Every backend this CPU can run, slowest first.
#[pyfunction]
fn available_backends() -> Vec<&'static str> {
    Backend::available()
        .into_iter()
        .map(Backend::name)
        .collect()
}

#[pymodule]
fn _combsiv(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<AesGcmSivClass>()?;
    m.add_class::<AesGcmClass>()?;
    m.add_class::<SealerClass>()?;
    m.add_class::<BoundClass>()?;
    m.add("InvalidTag", InvalidTag::type_object(py)?)?;
    m.add("AlreadyFinalized", AlreadyFinalized::type_object(py)?)?;
    m.add("KeyExhausted", py.get_type::<KeyExhausted>())?;
    m.add_function(wrap_pyfunction!(_debug_assertions, m)?)?;
    m.add_function(wrap_pyfunction!(backend, m)?)?;
    m.add_function(wrap_pyfunction!(available_backends, m)?)?;
    m.add_function(wrap_pyfunction!(nonce_bound, m)?)?;
    m.add_function(wrap_pyfunction!(random_nonce_bound, m)?)?;
    files::register(m)?;
    cobblestone::register(m)?;
    random_access::register(m)?;
    tink::register(m)?;
    Ok(())
}
