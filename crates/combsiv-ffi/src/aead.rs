//! One AEAD with its key: `combsiv_aead_new`, `_seal`, `_open`, `_free`, and the backend it
//! runs on.
//!
//! Sealing writes `ciphertext || tag`; opening reads the same. The output may be exactly the
//! input (in place) or a separate buffer; any other overlap is refused before any work, as is
//! associated data that overlaps the output. The nonce is copied before the output is
//! written, so it may lie anywhere.

use core::ffi::{CStr, c_char, c_int};
use std::boxed::Box;
use std::vec::Vec;

use combsiv::{Backend, DynAesGcm, DynAesGcmSiv, Error};
use zeroize::{Zeroize, Zeroizing};

use crate::COMBSIV_TAG_LEN;
use crate::buffers::{Region, set};
use crate::status::{
    COMBSIV_EALGORITHM, COMBSIV_EAUTH, COMBSIV_EBACKEND, COMBSIV_EBUFFER, COMBSIV_EINVAL,
    COMBSIV_EKEYLEN, COMBSIV_ENONCELEN, COMBSIV_EOVERLAP, COMBSIV_ETOOLONG, code, guard,
};

/// The algorithms of a context.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, reason = "a C type")]
pub enum combsiv_algorithm {
    /// AES-128-GCM-SIV (RFC 8452): a 16-byte key, 12-byte nonces.
    COMBSIV_AES_128_GCM_SIV = 1,
    /// AES-256-GCM-SIV (RFC 8452): a 32-byte key, 12-byte nonces.
    COMBSIV_AES_256_GCM_SIV = 2,
    /// AES-128-GCM (NIST SP 800-38D): a 16-byte key, nonces of any length from 1 byte
    /// (12 recommended).
    COMBSIV_AES_128_GCM = 3,
    /// AES-256-GCM (NIST SP 800-38D): a 32-byte key, nonces as AES-128-GCM's.
    COMBSIV_AES_256_GCM = 4,
}

/// A `combsiv_algorithm` as C passes it: any integer, so that an unknown value is refused
/// rather than read as an enum it is not. The header names it `combsiv_algorithm`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmArg(pub u32);

impl From<combsiv_algorithm> for AlgorithmArg {
    fn from(algorithm: combsiv_algorithm) -> Self {
        AlgorithmArg(algorithm as u32)
    }
}

impl AlgorithmArg {
    fn parse(self) -> Result<combsiv_algorithm, c_int> {
        use combsiv_algorithm::*;
        Ok(match self.0 {
            1 => COMBSIV_AES_128_GCM_SIV,
            2 => COMBSIV_AES_256_GCM_SIV,
            3 => COMBSIV_AES_128_GCM,
            4 => COMBSIV_AES_256_GCM,
            _ => return Err(COMBSIV_EALGORITHM),
        })
    }
}

impl combsiv_algorithm {
    fn key_len(self) -> usize {
        use combsiv_algorithm::*;
        match self {
            COMBSIV_AES_128_GCM_SIV | COMBSIV_AES_128_GCM => 16,
            COMBSIV_AES_256_GCM_SIV | COMBSIV_AES_256_GCM => 32,
        }
    }
}

/// An AEAD and its key (opaque). Immutable once made: threads may share it.
#[allow(non_camel_case_types, reason = "a C type")]
#[derive(Debug)]
pub struct combsiv_aead {
    pub(crate) cipher: Cipher,
}

/// The cipher inside a context. Dropping it wipes the key schedule.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per context, on the heap already; a second box would cost a pointer chase"
)]
pub(crate) enum Cipher {
    GcmSiv(DynAesGcmSiv),
    Gcm(DynAesGcm),
}

/// Makes a context for `alg` with a key of `key_len` bytes (16 for AES-128, 32 for AES-256)
/// on the fastest backend this CPU runs, or the one the environment variable
/// `COMBSIV_BACKEND` names (`portable`, `aesni`, `vaes`, `avx512`, `armv8`) if this CPU runs
/// it. The key is copied: the caller may wipe its own copy. `*out` is set to the context on
/// success and to NULL on failure; free it with `combsiv_aead_free`.
///
/// # Safety
///
/// `key` points to `key_len` readable bytes (or is NULL with `key_len` 0); `out` is NULL
/// or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_aead_new(
    alg: AlgorithmArg,
    key: *const u8,
    key_len: usize,
    out: *mut *mut combsiv_aead,
) -> c_int {
    // SAFETY: the caller's promise on `key` and `out`, passed on.
    unsafe { new_context(alg, key, key_len, None, out) }
}

/// `combsiv_aead_new` on the backend named `backend` (`portable`, `aesni`, `vaes`, `avx512`,
/// `armv8`): `COMBSIV_EBACKEND` if the name is unknown or this CPU cannot run it. For tests
/// and measurements; `COMBSIV_BACKEND` is ignored.
///
/// # Safety
///
/// As `combsiv_aead_new`; `backend` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_aead_new_with_backend(
    alg: AlgorithmArg,
    key: *const u8,
    key_len: usize,
    backend: *const c_char,
    out: *mut *mut combsiv_aead,
) -> c_int {
    let backend = if backend.is_null() {
        Err(COMBSIV_EINVAL)
    } else {
        // SAFETY: a NUL-terminated string by the caller's promise.
        backend_from_name(unsafe { CStr::from_ptr(backend) })
    };
    match backend {
        // SAFETY: the caller's promise on `key` and `out`, passed on.
        Ok(backend) => unsafe { new_context(alg, key, key_len, Some(backend), out) },
        Err(status) => {
            // SAFETY: `out` is NULL or writable by the caller's promise.
            unsafe { set(out, core::ptr::null_mut()) };
            status
        }
    }
}

/// # Safety
///
/// As `combsiv_aead_new`.
unsafe fn new_context(
    alg: AlgorithmArg,
    key: *const u8,
    key_len: usize,
    backend: Option<Backend>,
    out: *mut *mut combsiv_aead,
) -> c_int {
    // SAFETY: `out` is NULL or writable by the caller's promise.
    unsafe { set(out, core::ptr::null_mut()) };
    let mut context = None;
    let status = guard(|| {
        if out.is_null() {
            return Err(COMBSIV_EINVAL);
        }
        let alg = alg.parse()?;
        let key = Region::new(key, key_len)?;
        if key.len != alg.key_len() {
            return Err(COMBSIV_EKEYLEN);
        }
        // SAFETY: `key_len` readable bytes by the caller's promise.
        let key = unsafe { key.as_slice() };
        let backend = backend.unwrap_or_else(Backend::detected);
        use combsiv_algorithm::*;
        let cipher = match alg {
            COMBSIV_AES_128_GCM_SIV | COMBSIV_AES_256_GCM_SIV => {
                Cipher::GcmSiv(DynAesGcmSiv::with_backend(key, backend).map_err(code)?)
            }
            COMBSIV_AES_128_GCM | COMBSIV_AES_256_GCM => {
                Cipher::Gcm(DynAesGcm::with_backend(key, backend).map_err(code)?)
            }
        };
        context = Some(Box::new(combsiv_aead { cipher }));
        Ok(())
    });
    if let Some(context) = context {
        // SAFETY: `out` is non-NULL (checked above) and writable by the caller's promise.
        unsafe { set(out, Box::into_raw(context)) };
    }
    status
}

/// Frees a context and wipes its key. NULL is a no-op.
///
/// # Safety
///
/// `ctx` is NULL or a context from `combsiv_aead_new` not freed before, which no other
/// thread uses any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_aead_free(ctx: *mut combsiv_aead) {
    if !ctx.is_null() {
        // SAFETY: made by Box::into_raw in new_context and not freed (the caller's promise).
        let context = unsafe { Box::from_raw(ctx) };
        // Dropping the ciphers wipes their key schedules; a panic there must not unwind.
        let _ = guard(|| {
            drop(context);
            Ok(())
        });
    }
}

/// The name of the backend a context runs on (`portable`, `aesni`, `vaes`, `avx512` or
/// `armv8`): a static string; NULL if `ctx` is NULL.
///
/// # Safety
///
/// `ctx` is NULL or a live context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_backend_name(ctx: *const combsiv_aead) -> *const c_char {
    // SAFETY: NULL or a live context by the caller's promise.
    match unsafe { ctx.as_ref() } {
        Some(context) => backend_c_name(context.cipher.backend()).as_ptr(),
        None => core::ptr::null(),
    }
}

/// 1 if this CPU runs the backend named `name`, 0 if not or if the name is unknown.
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_backend_available(name: *const c_char) -> c_int {
    if name.is_null() {
        return 0;
    }
    // SAFETY: a NUL-terminated string by the caller's promise.
    let name = unsafe { CStr::from_ptr(name) };
    c_int::from(backend_from_name(name).is_ok())
}

/// The backend a name gives, if this CPU runs it.
fn backend_from_name(name: &CStr) -> Result<Backend, c_int> {
    let backend = name
        .to_str()
        .ok()
        .and_then(Backend::from_name)
        .ok_or(COMBSIV_EBACKEND)?;
    if backend.is_available() {
        Ok(backend)
    } else {
        Err(COMBSIV_EBACKEND)
    }
}

fn backend_c_name(backend: Backend) -> &'static CStr {
    match backend {
        Backend::Portable => c"portable",
        Backend::Aesni => c"aesni",
        Backend::Vaes => c"vaes",
        Backend::Avx512 => c"avx512",
        Backend::Armv8 => c"armv8",
        _ => c"unknown",
    }
}

/// Encrypts `in_len` bytes at `in` with `nonce` and associated data `ad` into `out`:
/// `ciphertext || tag`, `in_len + COMBSIV_TAG_LEN` bytes, the length written to `*out_len`.
/// `COMBSIV_EBUFFER` if `max_out_len` is shorter; `out` may be `in` (in place, with room for
/// the tag after it). On failure nothing is written.
///
/// # Safety
///
/// Each pointer is valid for its length (or NULL with length 0): `out` writable for
/// `max_out_len` bytes, `in`, `nonce` and `ad` readable; `out_len` valid for a write;
/// `ctx` a live context. Another thread must not write `in` or `ad` meanwhile.
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "the C API's buffers, each with its length"
)]
pub unsafe extern "C" fn combsiv_aead_seal(
    ctx: *const combsiv_aead,
    out: *mut u8,
    out_len: *mut usize,
    max_out_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    r#in: *const u8,
    in_len: usize,
    ad: *const u8,
    ad_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: NULL or a live context by the caller's promise.
        let context = unsafe { ctx.as_ref() }.ok_or(COMBSIV_EINVAL)?;
        if out_len.is_null() {
            return Err(COMBSIV_EINVAL);
        }
        let sealed_len = in_len
            .checked_add(COMBSIV_TAG_LEN)
            .ok_or(COMBSIV_ETOOLONG)?;
        if max_out_len < sealed_len {
            return Err(COMBSIV_EBUFFER);
        }
        // SAFETY: the caller's promise on the nonce, passed on.
        let Buffers {
            output,
            input,
            ad,
            in_place,
            nonce,
        } = unsafe {
            buffers(
                context,
                out,
                max_out_len,
                nonce,
                nonce_len,
                r#in,
                in_len,
                ad,
                ad_len,
            )?
        };
        // SAFETY: `ad` is readable and overlaps neither output nor (being read only) anything
        // written; `output` is writable for max_out_len bytes and, unless in place, overlaps
        // no input; in place, `input` is read only through `output`.
        let (ad, output) = unsafe { (ad.as_slice(), output.as_mut_slice()) };
        let (body, rest) = output.split_at_mut(in_len);
        let plaintext = if in_place {
            None
        } else {
            // SAFETY: readable, and disjoint from `output` (is_in_place).
            Some(unsafe { input.as_slice() })
        };
        let tag = context
            .cipher
            .seal(&nonce, ad, plaintext, body)
            .map_err(code)?;
        rest[..COMBSIV_TAG_LEN].copy_from_slice(&tag);
        // SAFETY: non-NULL (checked) and writable by the caller's promise.
        unsafe { set(out_len, sealed_len) };
        Ok(())
    })
}

/// Decrypts `ciphertext || tag` (`in_len` bytes at `in`) into `out` if the tag authenticates
/// it with `nonce` and `ad`; the plaintext length, `in_len - COMBSIV_TAG_LEN`, is written to
/// `*out_len`. `COMBSIV_EAUTH` if the message is not authentic (or shorter than a tag);
/// `out` may be `in` (in place). On any failure the first `max_out_len` bytes of `out` are
/// zeroed and `*out_len` is 0.
///
/// # Safety
///
/// As `combsiv_aead_seal`.
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "the C API's buffers, each with its length"
)]
pub unsafe extern "C" fn combsiv_aead_open(
    ctx: *const combsiv_aead,
    out: *mut u8,
    out_len: *mut usize,
    max_out_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    r#in: *const u8,
    in_len: usize,
    ad: *const u8,
    ad_len: usize,
) -> c_int {
    let status = guard(|| {
        // SAFETY: NULL or a live context by the caller's promise.
        let context = unsafe { ctx.as_ref() }.ok_or(COMBSIV_EINVAL)?;
        if out_len.is_null() {
            return Err(COMBSIV_EINVAL);
        }
        // SAFETY: the caller's promise on the nonce, passed on.
        let Buffers {
            output,
            input,
            ad,
            in_place,
            nonce,
        } = unsafe {
            buffers(
                context,
                out,
                max_out_len,
                nonce,
                nonce_len,
                r#in,
                in_len,
                ad,
                ad_len,
            )?
        };
        let plaintext_len = in_len.checked_sub(COMBSIV_TAG_LEN).ok_or(COMBSIV_EAUTH)?;
        if max_out_len < plaintext_len {
            return Err(COMBSIV_EBUFFER);
        }
        let mut tag = [0; COMBSIV_TAG_LEN];
        // SAFETY: readable; read before `output` is made, so in place it is read once,
        // before anything is written over it.
        tag.copy_from_slice(&unsafe { input.as_slice() }[plaintext_len..]);
        // SAFETY: as in combsiv_aead_seal.
        let (ad, output) = unsafe { (ad.as_slice(), output.as_mut_slice()) };
        let ciphertext = if in_place {
            None
        } else {
            // SAFETY: readable, and disjoint from `output` (is_in_place).
            Some(&unsafe { input.as_slice() }[..plaintext_len])
        };
        let body = &mut output[..plaintext_len];
        context
            .cipher
            .open(&nonce, ad, ciphertext, body, &tag)
            .map_err(code)?;
        // SAFETY: non-NULL (checked) and writable by the caller's promise.
        unsafe { set(out_len, plaintext_len) };
        Ok(())
    });
    if status != 0 {
        // SAFETY: the caller's promise: NULL or writable.
        unsafe { set(out_len, 0) };
        if let Ok(output) = Region::new(out, max_out_len) {
            // SAFETY: writable for max_out_len bytes by the caller's promise; no other
            // slice of it lives any more.
            unsafe { output.as_mut_slice() }.zeroize();
        }
    }
    status
}

/// A seal's or open's buffers, checked: the output, the input (or the output itself, in
/// place), the associated data (overlapping no output), and the nonce, copied.
struct Buffers {
    output: Region,
    input: Region,
    ad: Region,
    in_place: bool,
    nonce: Nonce,
}

/// Checks a call's buffers before any work. Inlined: the nonce it copies must not go through
/// the stack on its way back (a return through memory cost two store-forwarding stalls, 34 ns
/// per 16-byte seal).
///
/// # Safety
///
/// `nonce` is readable for `nonce_len` bytes (or NULL with length 0).
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "the C API's buffers, each with its length"
)]
unsafe fn buffers(
    context: &combsiv_aead,
    out: *mut u8,
    max_out_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    input: *const u8,
    in_len: usize,
    ad: *const u8,
    ad_len: usize,
) -> Result<Buffers, c_int> {
    let output = Region::new(out, max_out_len)?;
    let input = Region::new(input, in_len)?;
    let ad = Region::new(ad, ad_len)?;
    let in_place = input.is_in_place(output)?;
    if ad.overlaps(output) {
        return Err(COMBSIV_EOVERLAP);
    }
    // SAFETY: readable for nonce_len bytes by the caller's promise; copied before `output`
    // is written.
    let nonce = Nonce::copy(unsafe { Region::new(nonce, nonce_len)?.as_slice() })?;
    context.cipher.check_nonce(&nonce)?;
    Ok(Buffers {
        output,
        input,
        ad,
        in_place,
        nonce,
    })
}

/// A nonce, copied out of the caller's memory: 12 bytes inline, other lengths (AES-GCM)
/// on the heap.
enum Nonce {
    Standard([u8; 12]),
    Other(Vec<u8>),
}

impl Nonce {
    #[inline(always)]
    fn copy(bytes: &[u8]) -> Result<Nonce, c_int> {
        match <[u8; 12]>::try_from(bytes) {
            Ok(nonce) => Ok(Nonce::Standard(nonce)),
            Err(_) if bytes.is_empty() => Err(COMBSIV_ENONCELEN),
            Err(_) => Ok(Nonce::Other(bytes.to_vec())),
        }
    }
}

impl Cipher {
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Cipher::GcmSiv(cipher) => cipher.backend(),
            Cipher::Gcm(cipher) => cipher.backend(),
        }
    }

    /// AES-GCM-SIV takes only 12-byte nonces.
    fn check_nonce(&self, nonce: &Nonce) -> Result<(), c_int> {
        match (self, nonce) {
            (Cipher::GcmSiv(_), Nonce::Other(_)) => Err(COMBSIV_ENONCELEN),
            _ => Ok(()),
        }
    }

    /// Seals `plaintext` into `body` (as long), or `body` in place, and returns the tag.
    fn seal(
        &self,
        nonce: &Nonce,
        ad: &[u8],
        plaintext: Option<&[u8]>,
        body: &mut [u8],
    ) -> Result<[u8; COMBSIV_TAG_LEN], Error> {
        match (self, nonce) {
            (Cipher::GcmSiv(cipher), Nonce::Standard(nonce)) => match plaintext {
                Some(plaintext) => cipher.encrypt_to_detached(nonce, ad, plaintext, body),
                None => cipher.encrypt_in_place_detached(nonce, ad, body),
            },
            (Cipher::Gcm(cipher), Nonce::Standard(nonce)) => match plaintext {
                Some(plaintext) => cipher.encrypt_to_detached(nonce, ad, plaintext, body),
                None => cipher.encrypt_in_place_detached(nonce, ad, body),
            },
            (Cipher::Gcm(cipher), Nonce::Other(iv)) => {
                // Other IV lengths (SP 800-38D derives the counter block with GHASH): the
                // allocating call, its result copied and wiped.
                let sealed =
                    Zeroizing::new(cipher.encrypt_with_iv(iv, ad, plaintext.unwrap_or(body))?);
                let (ciphertext, tag) = sealed.split_at(body.len());
                body.copy_from_slice(ciphertext);
                tag.try_into().map_err(|_| Error::InvalidLength)
            }
            (Cipher::GcmSiv(_), Nonce::Other(_)) => Err(Error::InvalidNonceLength),
        }
    }

    /// Opens `ciphertext` into `body` (as long), or `body` in place, if `tag` authenticates
    /// it; `body` is zeroed if not.
    fn open(
        &self,
        nonce: &Nonce,
        ad: &[u8],
        ciphertext: Option<&[u8]>,
        body: &mut [u8],
        tag: &[u8; COMBSIV_TAG_LEN],
    ) -> Result<(), Error> {
        match (self, nonce) {
            (Cipher::GcmSiv(cipher), Nonce::Standard(nonce)) => match ciphertext {
                Some(ciphertext) => cipher.decrypt_to_detached(nonce, ad, ciphertext, body, tag),
                None => cipher.decrypt_in_place_detached(nonce, ad, body, tag),
            },
            (Cipher::Gcm(cipher), Nonce::Standard(nonce)) => match ciphertext {
                Some(ciphertext) => cipher.decrypt_to_detached(nonce, ad, ciphertext, body, tag),
                None => cipher.decrypt_in_place_detached(nonce, ad, body, tag),
            },
            (Cipher::Gcm(cipher), Nonce::Other(iv)) => {
                let sealed = Zeroizing::new([ciphertext.unwrap_or(body), tag].concat());
                let opened = Zeroizing::new(cipher.decrypt_with_iv(iv, ad, &sealed)?);
                body.copy_from_slice(&opened);
                Ok(())
            }
            (Cipher::GcmSiv(_), Nonce::Other(_)) => Err(Error::InvalidNonceLength),
        }
    }
}
