//! `AESGCMSIV` and `AESGCM`: the surface of `cryptography`'s classes of the same names, plus
//! out-of-buffer and batch calls. One implementation ([`Cipher`]) serves both classes.

use combsiv::parallel::for_each_part;
use combsiv::{Backend, DynAesGcm, DynAesGcmSiv, Error, SivJob};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use zeroize::Zeroize;

use crate::buffer::{Buffer, BytesLike, FreshBytes, Snapshot};
use crate::{InvalidTag, backend_from_name};

/// The tag length of both AEADs.
pub const TAG_LEN: usize = 16;

/// Calls that move at least this many bytes run without the GIL, so that other Python
/// threads run meanwhile; below it, giving the GIL up and taking it back costs more than it
/// lets others do (`hashlib` draws the line at 2 KiB).
const DETACH_AT: usize = 4096;

/// `cryptography`'s limit on data and associated data, kept so that code that works with one
/// works with the other.
pub const MAX_LEN: usize = (1 << 31) - 1;

/// One AEAD with a key, behind the Python classes.
pub trait Cipher: Send + Sync {
    /// Whether a nonce must never repeat under one key (AES-GCM), so that a batch that
    /// repeats one is refused.
    const UNIQUE_NONCES: bool;
    /// The error for a nonce this AEAD does not take.
    fn check_nonce(nonce: &[u8]) -> PyResult<()>;
    /// Seals `plaintext` into `out` (as long), or `out` in place when `plaintext` is `None`,
    /// and returns the tag. `plaintext` is read once (each AEAD's `encrypt_to_detached`), as
    /// [`open`](Self::open) reads `ciphertext` once: another thread writing it meanwhile can
    /// change what is sealed or opened, not make the result inconsistent.
    fn seal(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: Option<&[u8]>,
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error>;
    /// Opens `ciphertext` into `out` (as long), or `out` in place when `ciphertext` is
    /// `None`, if `tag` authenticates it; zeroes `out` if not.
    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: Option<&[u8]>,
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error>;

    /// Seals every job in place (12-byte nonces) on `threads` threads (0: as many as pay,
    /// see [`for_each_part`]). Lengths are checked by the caller.
    fn seal_jobs(&self, jobs: &mut [SivJob<'_>], threads: usize) -> Result<(), Error> {
        let failed = std::sync::Mutex::new(None);
        for_each_part(jobs, job_weight, threads, |part| {
            for job in part.iter_mut() {
                match self.seal(&job.nonce, job.aad, None, job.data) {
                    Ok(tag) => job.tag = tag,
                    Err(error) => *lock(&failed) = Some(error),
                }
            }
        });
        failed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .map_or(Ok(()), Err)
    }

    /// Opens every job in place and sets its `authentic`; a job that fails is zeroed.
    fn open_jobs(&self, jobs: &mut [SivJob<'_>], threads: usize) {
        for_each_part(jobs, job_weight, threads, |part| {
            for job in part.iter_mut() {
                job.authentic = self
                    .open(&job.nonce, job.aad, None, job.data, &job.tag)
                    .is_ok();
            }
        });
    }
}

/// A job's share of a batch, for cutting it across threads: its bytes plus 64 for the
/// per-message work (as the library weighs its batches).
fn job_weight(job: &SivJob<'_>) -> usize {
    job.aad.len() + job.data.len() + 64
}

fn nonce96(nonce: &[u8]) -> Result<&[u8; 12], Error> {
    nonce.try_into().map_err(|_| Error::InvalidNonceLength)
}

/// One call on an AEAD type: out of place from `input` into `out`, or in place on `out`.
macro_rules! seal_with {
    ($cipher:expr, $nonce:expr, $aad:expr, $input:expr, $out:expr) => {
        match $input {
            Some(input) => $cipher.encrypt_to_detached($nonce, $aad, input, $out),
            None => $cipher.encrypt_in_place_detached($nonce, $aad, $out),
        }
    };
}

macro_rules! open_with {
    ($cipher:expr, $nonce:expr, $aad:expr, $input:expr, $out:expr, $tag:expr) => {
        match $input {
            Some(input) => $cipher.decrypt_to_detached($nonce, $aad, input, $out, $tag),
            None => $cipher.decrypt_in_place_detached($nonce, $aad, $out, $tag),
        }
    };
}

impl Cipher for DynAesGcmSiv {
    const UNIQUE_NONCES: bool = false;

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
        plaintext: Option<&[u8]>,
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error> {
        let nonce = nonce96(nonce)?;
        seal_with!(self, nonce, aad, plaintext, out)
    }

    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: Option<&[u8]>,
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        let nonce = nonce96(nonce)?;
        open_with!(self, nonce, aad, ciphertext, out, tag)
    }

    fn seal_jobs(&self, jobs: &mut [SivJob<'_>], threads: usize) -> Result<(), Error> {
        self.seal_batch_with_threads(jobs, threads)
    }

    fn open_jobs(&self, jobs: &mut [SivJob<'_>], threads: usize) {
        // Every job carries its verdict; the batch's summary error adds nothing.
        let _ = self.open_batch_with_threads(jobs, threads);
    }
}

impl Cipher for DynAesGcm {
    const UNIQUE_NONCES: bool = true;

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
        plaintext: Option<&[u8]>,
        out: &mut [u8],
    ) -> Result<[u8; TAG_LEN], Error> {
        if let Ok(nonce) = nonce96(nonce) {
            return seal_with!(self, nonce, aad, plaintext, out);
        }
        // Other IV lengths (SP 800-38D derives J0 with GHASH): the allocating API.
        let mut sealed = {
            let plaintext = plaintext.unwrap_or(out);
            self.encrypt_with_iv(nonce, aad, plaintext)?
        };
        let (body, tag) = sealed.split_at(out.len());
        out.copy_from_slice(body);
        let tag = tag.try_into().map_err(|_| Error::InvalidLength);
        sealed.zeroize();
        tag
    }

    fn open(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: Option<&[u8]>,
        out: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        if let Ok(nonce) = nonce96(nonce) {
            return open_with!(self, nonce, aad, ciphertext, out, tag);
        }
        let mut sealed = Vec::with_capacity(out.len() + TAG_LEN);
        sealed.extend_from_slice(ciphertext.unwrap_or(out));
        sealed.extend_from_slice(tag);
        let opened = self.decrypt_with_iv(nonce, aad, &sealed);
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
    let key = key.snapshot();
    if key.len() != 16 && key.len() != 32 {
        return Err(PyValueError::new_err(
            "combsiv keys must be 128 or 256 bits (16 or 32 bytes)",
        ));
    }
    let backend = match backend {
        Some(name) => backend_from_name(name)?,
        None => Backend::detected(),
    };
    new(&key, backend).map_err(|e| PyValueError::new_err(e.to_string()))
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
pub fn maybe_detach<T: Send>(py: Python<'_>, bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    if bytes >= DETACH_AT {
        py.detach(f)
    } else {
        f()
    }
}

pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A call's Python arguments: nonce(s), data and associated data.
type Args<'a, 'py> = (
    &'a Bound<'py, PyAny>,
    &'a Bound<'py, PyAny>,
    Option<&'a Bound<'py, PyAny>>,
);

/// The arguments every call checks the same way: nonce, data and associated data. The nonce
/// and the associated data are read once, here; the data by the call, into its output.
struct Call<'py> {
    nonce: Snapshot<'py>,
    data: BytesLike<'py>,
    aad: Option<Snapshot<'py>>,
}

impl<'py> Call<'py> {
    fn new<C: Cipher>(
        nonce: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        aad: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Call<'py>> {
        let call = Call {
            nonce: BytesLike::new(nonce)?.into_snapshot(),
            data: BytesLike::new(data)?,
            aad: BytesLike::optional(aad)?.map(BytesLike::into_snapshot),
        };
        C::check_nonce(&call.nonce)?;
        check_len(call.data.len())?;
        check_len(call.aad().len())?;
        Ok(call)
    }

    fn aad(&self) -> &[u8] {
        self.aad.as_deref().unwrap_or(&[])
    }

    /// The data's last 16 bytes as a tag, read once; `InvalidTag` if it is shorter.
    fn tag(&self) -> PyResult<[u8; TAG_LEN]> {
        let body = self
            .data
            .len()
            .checked_sub(TAG_LEN)
            .ok_or_else(|| InvalidTag::new_err(()))?;
        let mut tag = [0; TAG_LEN];
        if let Some(bytes) = self.data.read_or_copy_into(body, &mut tag) {
            tag.copy_from_slice(bytes);
        }
        Ok(tag)
    }
}

pub fn encrypt<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
) -> PyResult<Bound<'py, PyBytes>> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let len = call.data.len();
    PyBytes::new_with(py, len + TAG_LEN, |out| {
        let (body, tag) = out.split_at_mut(len);
        let plaintext = call.data.read_or_copy_into(0, body);
        let (nonce, aad) = (&*call.nonce, call.aad());
        let sealed = maybe_detach(py, len, || cipher.seal(nonce, aad, plaintext, body));
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
    let tag = call.tag()?;
    let len = call.data.len() - TAG_LEN;
    PyBytes::new_with(py, len, |out| {
        let ciphertext = call.data.read_or_copy_into(0, out);
        let (nonce, aad) = (&*call.nonce, call.aad());
        maybe_detach(py, len, || cipher.open(nonce, aad, ciphertext, out, &tag)).map_err(to_py)
    })
}

fn wrong_size(expected: usize) -> PyErr {
    PyValueError::new_err(format!("buffer must be {expected} bytes"))
}

/// `encrypt_into` and `decrypt_into` write the caller's own buffer, which Python threads
/// could write too if the GIL were released: they keep it for the whole call. The output may
/// be a view of the same memory as the data (in place, or shifted: `memoryview(buf)[16:]` as
/// the output of decrypting `buf`): the data (the tag first) is read once, into the output,
/// before anything is written there.
pub fn encrypt_into<'py, C: Cipher>(
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let len = call.data.len();
    let mut buffer = Buffer::writable(buf)?;
    if buffer.len() != len + TAG_LEN {
        return Err(wrong_size(len + TAG_LEN));
    }
    let plaintext = call.data.read_or_copy_into_buffer(0, &mut buffer, len);
    let (body, tag) = buffer.bytes_mut().split_at_mut(len);
    let sealed = cipher
        .seal(&call.nonce, call.aad(), plaintext, body)
        .map_err(to_py)?;
    tag.copy_from_slice(&sealed);
    Ok(len + TAG_LEN)
}

pub fn decrypt_into<'py, C: Cipher>(
    cipher: &C,
    (nonce, data, aad): Args<'_, 'py>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let call = Call::new::<C>(nonce, data, aad)?;
    let tag = call.tag()?;
    let len = call.data.len() - TAG_LEN;
    let mut buffer = Buffer::writable(buf)?;
    if buffer.len() != len {
        return Err(wrong_size(len));
    }
    let ciphertext = call.data.read_or_copy_into_buffer(0, &mut buffer, len);
    let out = buffer.bytes_mut();
    cipher
        .open(&call.nonce, call.aad(), ciphertext, out, &tag)
        .map_err(to_py)?;
    Ok(len)
}

/// The arguments of a batch: one nonce and one message each, and associated data that is
/// absent, shared (one bytes-like object) or per message (a sequence as long). Nonces and
/// associated data are read once, here; each message by the call, into its output.
struct Batch<'py> {
    nonces: Vec<Snapshot<'py>>,
    messages: Vec<BytesLike<'py>>,
    aads: Aads<'py>,
}

enum Aads<'py> {
    None,
    Shared(Snapshot<'py>),
    Each(Vec<Snapshot<'py>>),
}

fn bytes_likes<'py>(seq: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<BytesLike<'py>>> {
    if seq.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of bytes-like objects, not one bytes object"
        )));
    }
    // A loop, not `collect`: collecting asks the iterator's size hint, which on the limited
    // API pyo3 gets from `operator.length_hint`, imported into a lazily initialized static on
    // first use. The import can give up the GIL, and a `fork()` by another thread meanwhile
    // leaves the child waiting forever on an initialization none of its threads runs.
    let mut items = Vec::new();
    for item in seq.try_iter()? {
        items.push(BytesLike::from_owned(item?)?);
    }
    Ok(items)
}

fn snapshots<'py>(seq: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<Snapshot<'py>>> {
    Ok(bytes_likes(seq, what)?
        .into_iter()
        .map(BytesLike::into_snapshot)
        .collect())
}

impl<'py> Batch<'py> {
    fn new<C: Cipher>(
        nonces: &Bound<'py, PyAny>,
        messages: &Bound<'py, PyAny>,
        aad: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Batch<'py>> {
        let nonces = snapshots(nonces, "nonces")?;
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
                Ok(shared) => Aads::Shared(shared.into_snapshot()),
                Err(_) => {
                    let each = snapshots(aad, "associated_data")?;
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
        let batch = Batch {
            nonces,
            messages,
            aads,
        };
        for i in 0..batch.messages.len() {
            C::check_nonce(&batch.nonces[i])?;
            check_len(batch.messages[i].len())?;
            check_len(batch.aad(i).len())?;
        }
        Ok(batch)
    }

    /// Every message's nonce and associated data, for the part of the call without the GIL.
    fn nonces_and_aads(&self) -> (Vec<&[u8]>, Vec<&[u8]>) {
        let nonces = self.nonces.iter().map(|nonce| &**nonce).collect();
        let aads = (0..self.nonces.len()).map(|i| self.aad(i)).collect();
        (nonces, aads)
    }

    fn aad(&self, i: usize) -> &[u8] {
        match &self.aads {
            Aads::None => &[],
            Aads::Shared(aad) => aad,
            Aads::Each(aads) => &aads[i],
        }
    }
}

/// Every message sealed from its input into its output `bytes` object (out of place from a
/// `bytes` message, in place on the output for any other, which is copied there first), in
/// one call without the GIL. The library's `seal_batch` runs the same kernel per message but
/// in place, which for `bytes` messages would cost a copy of every message first (7 % of
/// the time on the Internet mix).
pub fn encrypt_many<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonces, messages, aad): Args<'_, 'py>,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let batch = Batch::new::<C>(nonces, messages, aad)?;
    if C::UNIQUE_NONCES {
        refuse_repeated(&batch.nonces)?;
    }
    let lens: Vec<usize> = batch.messages.iter().map(|m| m.len() + TAG_LEN).collect();
    let mut outputs = FreshBytes::new(py, &lens)?;
    let mut contents = outputs.contents_mut();
    let inputs: Vec<Option<&[u8]>> = batch
        .messages
        .iter()
        .zip(contents.iter_mut())
        .map(|(message, out)| message.read_or_copy_into(0, &mut out[..message.len()]))
        .collect();
    let (nonces, aads) = batch.nonces_and_aads();
    let mut items: Vec<(usize, &mut [u8])> =
        contents.iter_mut().map(|o| &mut **o).enumerate().collect();
    let failed = std::sync::Mutex::new(None);
    maybe_detach(py, lens.iter().sum(), || {
        for_each_part(
            &mut items,
            |(_, out)| out.len() + 64,
            threads,
            |part| {
                for (i, out) in part.iter_mut() {
                    let (body, tag) = out.split_at_mut(out.len() - TAG_LEN);
                    match cipher.seal(nonces[*i], aads[*i], inputs[*i], body) {
                        Ok(sealed) => tag.copy_from_slice(&sealed),
                        Err(error) => *lock(&failed) = Some(error),
                    }
                }
            },
        );
    });
    if let Some(error) = failed
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        return Err(to_py(error));
    }
    drop(items);
    drop(contents);
    PyList::new(py, outputs.into_objects())
}

/// `ValueError` if a nonce appears twice: under AES-GCM, two messages with one nonce reveal
/// the XOR of their plaintexts and let anyone forge tags.
fn refuse_repeated(nonces: &[Snapshot<'_>]) -> PyResult<()> {
    let mut seen = std::collections::HashMap::with_capacity(nonces.len());
    for (i, nonce) in nonces.iter().enumerate() {
        if let Some(first) = seen.insert(&**nonce, i) {
            return Err(PyValueError::new_err(format!(
                "messages {first} and {i} have the same nonce: AES-GCM must never reuse a \
                 nonce under one key (AESGCMSIV tolerates it)"
            )));
        }
    }
    Ok(())
}

/// Every message opened into its output `bytes` object (copied there first unless it is a
/// `bytes` object); the ones that fail are zeroed by the library and never returned.
pub fn decrypt_many<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    (nonces, messages, aad): Args<'_, 'py>,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let batch = Batch::new::<C>(nonces, messages, aad)?;
    // A message shorter than a tag cannot be authentic: it fails alone.
    let tags: Vec<Option<[u8; TAG_LEN]>> = batch
        .messages
        .iter()
        .map(|message| {
            let body = message.len().checked_sub(TAG_LEN)?;
            let mut tag = [0; TAG_LEN];
            if let Some(bytes) = message.read_or_copy_into(body, &mut tag) {
                tag.copy_from_slice(bytes);
            }
            Some(tag)
        })
        .collect();
    let lens: Vec<usize> = batch
        .messages
        .iter()
        .map(|m| m.len().saturating_sub(TAG_LEN))
        .collect();
    let mut outputs = FreshBytes::new(py, &lens)?;
    let mut contents = outputs.contents_mut();
    let inputs: Vec<Option<&[u8]>> = batch
        .messages
        .iter()
        .zip(contents.iter_mut())
        .map(|(message, out)| message.read_or_copy_into(0, out))
        .collect();
    let (nonces, aads) = batch.nonces_and_aads();
    let mut items: Vec<(usize, &mut [u8], bool)> = contents
        .iter_mut()
        .enumerate()
        .map(|(i, out)| (i, &mut **out, false))
        .collect();
    maybe_detach(py, lens.iter().sum(), || {
        for_each_part(
            &mut items,
            |(_, out, _)| out.len() + 64,
            threads,
            |part| {
                for (i, out, authentic) in part.iter_mut() {
                    *authentic = tags[*i].is_some_and(|tag| {
                        cipher
                            .open(nonces[*i], aads[*i], inputs[*i], out, &tag)
                            .is_ok()
                    });
                }
            },
        );
    });
    let authentic: Vec<bool> = items.iter().map(|(_, _, ok)| *ok).collect();
    drop(items);
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
    Err(not_authentic(
        py,
        "messages",
        failed,
        authentic.len(),
        list.into_any(),
    )?)
}

/// `InvalidTag` for the `failed` of `total` messages (or rows) of a batch: `failed` lists
/// them, `results` holds the call's result with them missing.
pub fn not_authentic<'py>(
    py: Python<'py>,
    what: &str,
    failed: Vec<usize>,
    total: usize,
    results: Bound<'py, PyAny>,
) -> PyResult<PyErr> {
    let error = InvalidTag::new_err(format!(
        "{} of {total} {what} are not authentic (the first: {:?})",
        failed.len(),
        &failed[..failed.len().min(10)]
    ));
    let value = error.value(py);
    value.setattr("failed", failed)?;
    value.setattr("results", results)?;
    Ok(error)
}
