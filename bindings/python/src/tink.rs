//! `combsiv.tink.Keyset`: a cleartext Tink keyset (JSON or binary form) and Tink's AEAD wire
//! format under it, over `combsiv::tink`. The column functions are in
//! python/combsiv/tink.py.

use combsiv::tink::{Keyset, TinkError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::InvalidTag;
use crate::buffer::BytesLike;

/// `InvalidTag` when no key decrypts; `ValueError` naming what a keyset holds that is not
/// read (a key type, an output prefix, AES-192) or why it is not a keyset.
fn to_py(error: TinkError) -> PyErr {
    match error {
        TinkError::Decryption => InvalidTag::new_err(()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A cleartext Tink keyset of AES-GCM and AES-GCM-SIV keys: the primary key encrypts
/// (`prefix || nonce || ciphertext || tag`), any enabled key decrypts by its id.
#[pyclass(module = "combsiv.tink", name = "Keyset", frozen)]
#[derive(Debug)]
pub struct KeysetClass {
    inner: Keyset,
}

#[pymethods]
impl KeysetClass {
    /// Reads Tink's JSON form (`tinkey ... --out-format json`, `json_proto_keyset_format`).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Keyset::from_json(text)
            .map(|inner| Self { inner })
            .map_err(to_py)
    }

    /// Reads Tink's binary form (a serialized `Keyset` message).
    #[staticmethod]
    fn from_binary(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let data = BytesLike::new(data)?.into_snapshot();
        Keyset::from_binary(&data)
            .map(|inner| Self { inner })
            .map_err(to_py)
    }

    /// The id of the key that encrypts.
    #[getter]
    fn primary_key_id(&self) -> u32 {
        self.inner.primary_key_id()
    }

    /// Encrypts under the primary key with a random nonce.
    #[pyo3(signature = (plaintext, associated_data = None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        plaintext: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let plaintext = BytesLike::new(plaintext)?.into_snapshot();
        let ad = BytesLike::optional(associated_data)?.map(BytesLike::into_snapshot);
        let sealed = self
            .inner
            .encrypt(&plaintext, ad.as_deref().unwrap_or_default())
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &sealed))
    }

    /// Decrypts a ciphertext of any enabled key; `InvalidTag` if none verifies it.
    #[pyo3(signature = (ciphertext, associated_data = None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ciphertext: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ciphertext = BytesLike::new(ciphertext)?.into_snapshot();
        let ad = BytesLike::optional(associated_data)?.map(BytesLike::into_snapshot);
        let opened = zeroize::Zeroizing::new(
            self.inner
                .decrypt(&ciphertext, ad.as_deref().unwrap_or_default())
                .map_err(to_py)?,
        );
        Ok(PyBytes::new(py, &opened))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<KeysetClass>()?;
    Ok(())
}
