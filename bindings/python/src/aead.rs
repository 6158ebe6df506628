//! `AESGCMSIV` and `AESGCM`: the surface of `cryptography`'s classes of the same names, plus
//! out-of-buffer and batch calls. One implementation ([`Cipher`]) serves both classes.

use std::borrow::Cow;

use combsiv::{Aes128, Aes256, AesGcm, AesGcmSiv, Backend, Error};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use zeroize::Zeroize;

use crate::buffer::{Buffer, BytesLike, FreshBytes};
use crate::{InvalidTag, backend_from_name};

/// The tag length of both AEADs.
const TAG_LEN: usize = 16;

/// Calls that move at least this many bytes run without the GIL, so that other Python
/// threads run meanwhile; below it, giving the GIL up and taking it back costs more than it
/// lets others do (`hashlib` draws the line at 2 KiB).
const DETACH_AT: usize = 4096;

/// `cryptography`'s limit on data and associated data, kept so that code that works with one
/// works with the other.
const MAX_LEN: usize = (1 << 31) - 1;

/// One AEAD with a key, behind the Python classes.
pub trait Cipher: Send + Sync {
    /// The error for a nonce this AEAD does not take.
    fn check_nonce(nonce: &[u8]) -> PyResult<()>;
    /// Seals `plaintext` into `out` (as long) and returns the tag.
    fn seal(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error>;
    /// Opens `ciphertext` into `out` (as long) if `tag` authenticates it; zeroes `out` if not.
    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error>;
}

/// AES-GCM-SIV with either key size.
pub enum Siv {
    Aes128(AesGcmSiv<Aes128>),
    Aes256(AesGcmSiv<Aes256>),
}

/// AES-GCM with either key size.
pub enum Gcm {
    Aes128(AesGcm<Aes128>),
    Aes256(AesGcm<Aes256>),
}

fn nonce96(nonce: &[u8]) -> Result<&[u8; 12], Error> {
    nonce.try_into().map_err(|_| Error::InvalidNonceLength)
}

impl Cipher for Siv {
    fn check_nonce(nonce: &[u8]) -> PyResult<()> {
        if nonce.len() == 12 {
            Ok(())
        } else {
            Err(PyValueError::new_err("Nonce must be 12 bytes long"))
        }
    }

    fn seal(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error> {
        let nonce = nonce96(nonce)?;
        match self {
            Siv::Aes128(c) => c.encrypt_to_detached(nonce, aad, plaintext, out),
            Siv::Aes256(c) => c.encrypt_to_detached(nonce, aad, plaintext, out),
        }
    }

    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        let nonce = nonce96(nonce)?;
        match self {
            Siv::Aes128(c) => c.decrypt_to_detached(nonce, aad, ciphertext, out, tag),
            Siv::Aes256(c) => c.decrypt_to_detached(nonce, aad, ciphertext, out, tag),
        }
    }
}

impl Cipher for Gcm {
    fn check_nonce(nonce: &[u8]) -> PyResult<()> {
        if (8..=128).contains(&nonce.len()) {
            Ok(())
        } else {
            Err(PyValueError::new_err(
                "Nonce must be between 8 and 128 bytes",
            ))
        }
    }

    fn seal(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error> {
        if let Ok(nonce) = nonce96(nonce) {
            return match self {
                Gcm::Aes128(c) => c.encrypt_to_detached(nonce, aad, plaintext, out),
                Gcm::Aes256(c) => c.encrypt_to_detached(nonce, aad, plaintext, out),
            };
        }
        // Other IV lengths (SP 800-38D derives J0 with GHASH): the allocating API.
        let mut sealed = match self {
            Gcm::Aes128(c) => c.encrypt_with_iv(nonce, aad, plaintext)?,
            Gcm::Aes256(c) => c.encrypt_with_iv(nonce, aad, plaintext)?,
        };
        let (body, tag) = sealed.split_at(plaintext.len());
        out.copy_from_slice(body);
        let tag = tag.try_into().map_err(|_| Error::InvalidLength);
        sealed.zeroize();
        tag
    }

    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        if let Ok(nonce) = nonce96(nonce) {
            return match self {
                Gcm::Aes128(c) => c.decrypt_to_detached(nonce, aad, ciphertext, out, tag),
                Gcm::Aes256(c) => c.decrypt_to_detached(nonce, aad, ciphertext, out, tag),
            };
        }
        let mut sealed = Vec::with_capacity(ciphertext.len() + TAG_LEN);
        sealed.extend_from_slice(ciphertext);
        sealed.extend_from_slice(tag);
        let opened = match self {
            Gcm::Aes128(c) => c.decrypt_with_iv(nonce, aad, &sealed),
            Gcm::Aes256(c) => c.decrypt_with_iv(nonce, aad, &sealed),
        };
        match opened {
            Ok(mut plaintext) if plaintext.len() == out.len() => {
                out.copy_from_slice(&plaintext);
                plaintext.zeroize();
                Ok(())
            }
            Ok(mut plaintext) => {
                plaintext.zeroize();
                out.zeroize();
                Err(Error::InvalidLength)
            }
            Err(e) => {
                out.zeroize();
                Err(e)
            }
        }
    }
}

/// The Python exception for a library error: `InvalidTag` for anything a forger could cause,
/// `OverflowError` for lengths, `ValueError` otherwise.
pub fn to_py(error: Error) -> PyErr {
    match error {
        Error::Authentication | Error::CiphertextTooShort => InvalidTag::new_err(()),
        Error::PlaintextTooLong | Error::AadTooLong => {
            PyOverflowError::new_err("Data or associated data too long. Max 2**31 - 1 bytes")
        }
        Error::KeyExhausted => crate::KeyExhausted::new_err(error.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn check_len(len: usize) -> PyResult<()> {
    if len > MAX_LEN {
        return Err(PyOverflowError::new_err(
            "Data or associated data too long. Max 2**31 - 1 bytes",
        ));
    }
    Ok(())
}

/// The key as the cipher of its size (16 or 32 bytes), on `backend` or the detected one.
pub fn key_of<T>(
    key: &Bound<'_, PyAny>,
    backend: Option<&str>,
    new: impl FnOnce(&[u8], Backend) -> Result<T, Error>,
) -> PyResult<T> {
    let key = BytesLike::new(key)?;
    let key = key.bytes();
    if key.len() != 16 && key.len() != 32 {
        return Err(PyValueError::new_err(
            "combsiv keys must be 128 or 256 bits (16 or 32 bytes)",
        ));
    }
    let backend = match backend {
        Some(name) => backend_from_name(name)?,
        None => Backend::detected(),
    };
    new(key, backend).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `generate_key(bit_length)`: 128 or 256 random bits from the operating system.
pub fn generate_key<'py>(
    py: Python<'py>,
    bit_length: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bits: usize = bit_length
        .extract()
        .map_err(|_| PyTypeError::new_err("bit_length must be an integer"))?;
    if bits != 128 && bits != 256 {
        return Err(PyValueError::new_err("bit_length must be 128 or 256"));
    }
    PyBytes::new_with(py, bits / 8, |key| {
        combsiv::stream::MasterKey::generate()
            .map(|master| key.copy_from_slice(&master.as_bytes()[..key.len()]))
            .map_err(to_py)
    })
}

/// Runs `f` without the GIL if the call moves enough bytes to be worth it.
fn maybe_detach<T: Send>(py: Python<'_>, bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    if bytes >= DETACH_AT {
        py.detach(f)
    } else {
        f()
    }
}

/// A call's Python arguments: nonce(s), data and associated data.
type Args<'a, 'py> = (
    &'a Bound<'py, PyAny>,
    &'a Bound<'py, PyAny>,
    Option<&'a Bound<'py, PyAny>>,
);

/// The arguments every call checks the same way: nonce, data and associated data.
struct Call<'py> {
    nonce: BytesLike<'py>,
    data: BytesLike<'py>,
    aad: Option<BytesLike<'py>>,
}

impl<'py> Call<'py> {
    fn new<C: Cipher>(
        nonce: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        aad: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Call<'py>> {
        let call = Call {
            nonce: BytesLike::new(nonce)?,
            data: BytesLike::new(data)?,
            aad: BytesLike::optional(aad)?,
        };
        C::check_nonce(call.nonce.bytes())?;
        check_len(call.data.bytes().len())?;
        check_len(call.aad().len())?;
        Ok(call)
    }

    fn aad(&self) -> &[u8] {
        self.aad.as_ref().map_or(&[], BytesLike::bytes)
    }

    /// Nonce, associated data and data, copied if any of them shares memory with `out` (a
    /// caller may pass one bytearray as input and output): the kernels must not read an
    /// input while they write the output over it.
    fn apart_from(&self, out: &Buffer<'_>) -> [Cow<'_, [u8]>; 3] {
        let parts = [self.nonce.bytes(), self.aad(), self.data.bytes()];
        if parts.iter().any(|part| out.overlaps(part)) {
            parts.map(|part| Cow::Owned(part.to_vec()))
        } else {
            parts.map(Cow::Borrowed)
        }
    }
}

pub fn encrypt<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
) -> PyResult<Bound<'py, PyBytes>> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let (nonce, aad, plaintext) = (call.nonce.bytes(), call.aad(), call.data.bytes());
    PyBytes::new_with(py, plaintext.len() + TAG_LEN, |out| {
        let (body, tag) = out.split_at_mut(plaintext.len());
        let sealed = maybe_detach(py, plaintext.len(), || {
            cipher.seal(nonce, aad, plaintext, body)
        });
        tag.copy_from_slice(&sealed.map_err(to_py)?);
        Ok(())
    })
}

pub fn decrypt<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
) -> PyResult<Bound<'py, PyBytes>> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let (nonce, aad) = (call.nonce.bytes(), call.aad());
    let Some((ciphertext, tag)) = call.data.bytes().split_last_chunk::<TAG_LEN>() else {
        return Err(InvalidTag::new_err(()));
    };
    PyBytes::new_with(py, ciphertext.len(), |out| {
        maybe_detach(py, ciphertext.len(), || {
            cipher.open(nonce, aad, ciphertext, out, tag)
        })
        .map_err(to_py)
    })
}

fn wrong_size(expected: usize) -> PyErr {
    PyValueError::new_err(format!("buffer must be {expected} bytes"))
}

pub fn encrypt_into<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let mut buffer = Buffer::writable(buf)?;
    let [nonce, aad, plaintext] = call.apart_from(&buffer);
    let (nonce, aad, plaintext) = (&*nonce, &*aad, &*plaintext);
    let out = buffer.bytes_mut();
    if out.len() != plaintext.len() + TAG_LEN {
        return Err(wrong_size(plaintext.len() + TAG_LEN));
    }
    let (body, tag) = out.split_at_mut(plaintext.len());
    let sealed = maybe_detach(py, plaintext.len(), || {
        cipher.seal(nonce, aad, plaintext, body)
    })
    .map_err(to_py)?;
    tag.copy_from_slice(&sealed);
    Ok(plaintext.len() + TAG_LEN)
}

pub fn decrypt_into<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let mut buffer = Buffer::writable(buf)?;
    let [nonce, aad, data] = call.apart_from(&buffer);
    let (nonce, aad) = (&*nonce, &*aad);
    let Some((ciphertext, tag)) = data.split_last_chunk::<TAG_LEN>() else {
        return Err(InvalidTag::new_err(()));
    };
    let out = buffer.bytes_mut();
    if out.len() != ciphertext.len() {
        return Err(wrong_size(ciphertext.len()));
    }
    maybe_detach(py, ciphertext.len(), || {
        cipher.open(nonce, aad, ciphertext, out, tag)
    })
    .map_err(to_py)?;
    Ok(ciphertext.len())
}

/// The arguments of a batch: one nonce and one message each, and associated data that is
/// absent, shared (one bytes-like object) or per message (a sequence as long).
struct Batch<'py> {
    nonces: Vec<BytesLike<'py>>,
    messages: Vec<BytesLike<'py>>,
    aads: Aads<'py>,
}

enum Aads<'py> {
    None,
    Shared(BytesLike<'py>),
    Each(Vec<BytesLike<'py>>),
}

fn bytes_likes<'py>(seq: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<BytesLike<'py>>> {
    if seq.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of bytes-like objects, not one bytes object"
        )));
    }
    seq.try_iter()?
        .map(|item| BytesLike::from_owned(item?))
        .collect()
}

impl<'py> Batch<'py> {
    fn new(
        nonces: &Bound<'py, PyAny>,
        messages: &Bound<'py, PyAny>,
        aad: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Batch<'py>> {
        let nonces = bytes_likes(nonces, "nonces")?;
        let messages = bytes_likes(messages, "messages")?;
        if nonces.len() != messages.len() {
            return Err(PyValueError::new_err(format!(
                "{} nonces for {} messages",
                nonces.len(),
                messages.len()
            )));
        }
        let aads = match aad.filter(|aad| !aad.is_none()) {
            None => Aads::None,
            Some(aad) => match BytesLike::new(aad) {
                Ok(shared) => Aads::Shared(shared),
                Err(_) => {
                    let each = bytes_likes(aad, "associated_data")?;
                    if each.len() != messages.len() {
                        return Err(PyValueError::new_err(format!(
                            "{} associated data for {} messages",
                            each.len(),
                            messages.len()
                        )));
                    }
                    Aads::Each(each)
                }
            },
        };
        Ok(Batch {
            nonces,
            messages,
            aads,
        })
    }

    /// The bytes of every message, looked up once (each lookup is a call into Python's C
    /// API) and checked.
    fn plain<C: Cipher>(&self) -> PyResult<Vec<Item<'_>>> {
        let shared = match &self.aads {
            Aads::Shared(aad) => aad.bytes(),
            _ => &[],
        };
        let items: Vec<Item<'_>> = (0..self.messages.len())
            .map(|i| Item {
                nonce: self.nonces[i].bytes(),
                message: self.messages[i].bytes(),
                aad: match &self.aads {
                    Aads::Each(aads) => aads[i].bytes(),
                    _ => shared,
                },
            })
            .collect();
        for item in &items {
            C::check_nonce(item.nonce)?;
            check_len(item.message.len())?;
            check_len(item.aad.len())?;
        }
        Ok(items)
    }
}

/// One message of a batch, borrowed from the Python objects (which the [`Batch`] keeps
/// alive and exported), for the part of the call that runs without the GIL.
struct Item<'a> {
    nonce: &'a [u8],
    message: &'a [u8],
    aad: &'a [u8],
}

/// Every message sealed straight from its input into its output `bytes` object (the
/// out-of-place kernel, message after message, in one call without the GIL). The library's
/// `seal_batch` runs the same kernel per message but in place, which here would cost a copy
/// of every message first (7 % of the time on the Internet mix).
pub fn encrypt_many<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonces, messages, aad): Args<'_, 'py>,
) -> PyResult<Bound<'py, PyList>> {
    let batch = Batch::new(nonces, messages, aad)?;
    let items = batch.plain::<C>()?;
    let lens: Vec<usize> = items
        .iter()
        .map(|item| item.message.len() + TAG_LEN)
        .collect();
    let mut outputs = FreshBytes::new(py, &lens)?;
    let mut contents = outputs.contents_mut();
    maybe_detach(py, lens.iter().sum(), || -> Result<(), Error> {
        for (item, out) in items.iter().zip(contents.iter_mut()) {
            let (body, tag) = out.split_at_mut(item.message.len());
            tag.copy_from_slice(&cipher.seal(item.nonce, item.aad, item.message, body)?);
        }
        Ok(())
    })
    .map_err(to_py)?;
    drop(contents);
    PyList::new(py, outputs.into_objects())
}

/// Every message opened straight into its output `bytes` object; the ones that fail are
/// zeroed by the library and never returned.
pub fn decrypt_many<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonces, messages, aad): Args<'_, 'py>,
) -> PyResult<Bound<'py, PyList>> {
    let batch = Batch::new(nonces, messages, aad)?;
    let items = batch.plain::<C>()?;
    // A message shorter than a tag cannot be authentic: it fails alone.
    let split: Vec<Option<(&[u8], &[u8; TAG_LEN])>> = items
        .iter()
        .map(|item| item.message.split_last_chunk::<TAG_LEN>())
        .collect();
    let lens: Vec<usize> = split
        .iter()
        .map(|s| s.map_or(0, |(c, _)| c.len()))
        .collect();
    let mut outputs = FreshBytes::new(py, &lens)?;
    let mut contents = outputs.contents_mut();
    let authentic: Vec<bool> = maybe_detach(py, lens.iter().sum(), || {
        contents
            .iter_mut()
            .enumerate()
            .map(|(i, out)| {
                split[i].is_some_and(|(ciphertext, tag)| {
                    let item = &items[i];
                    cipher
                        .open(item.nonce, item.aad, ciphertext, out, tag)
                        .is_ok()
                })
            })
            .collect()
    });
    drop(contents);
    let results: Vec<Option<Bound<'py, PyBytes>>> = outputs
        .into_objects()
        .into_iter()
        .zip(&authentic)
        .map(|(object, &ok)| ok.then_some(object))
        .collect();
    let failed: Vec<usize> = (0..results.len()).filter(|&i| !authentic[i]).collect();
    let list = PyList::new(py, results)?;
    if failed.is_empty() {
        return Ok(list);
    }
    let error = InvalidTag::new_err(format!(
        "{} of {} messages are not authentic: {:?}",
        failed.len(),
        authentic.len(),
        failed
    ));
    let value = error.value(py);
    value.setattr("failed", failed)?;
    value.setattr("results", list)?;
    Err(error)
}
