//! combsiv: fast AES-GCM-SIV (RFC 8452) and AES-GCM (SP 800-38D).
//!
//! AES-GCM-SIV stays secure when a nonce repeats: the only thing a repeat reveals is that the
//! same message (with the same associated data) was sent again. It is not key-committing: a
//! ciphertext can be made to decrypt under two different keys, so do not use it where that
//! matters (e.g. as a commitment or with password-derived keys chosen by an attacker).
//!
//! ```
//! use combsiv::Aes128GcmSiv;
//!
//! let cipher = Aes128GcmSiv::new(&[0x11; 16]);
//! let sealed = cipher.encrypt(&[0; 12], b"aad", b"plaintext")?;
//! assert_eq!(sealed.len(), 9 + 16);
//! assert_eq!(cipher.decrypt(&[0; 12], b"aad", &sealed)?, b"plaintext");
//! # Ok::<(), combsiv::Error>(())
//! ```
//!
//! The backend is chosen once per key from the CPU: portable, AES-NI, VAES, AVX-512 or ARMv8;
//! see [`Backend`]. The types also implement the RustCrypto `aead` traits ([`traits`]), as
//! drop-in replacements for the `aes-gcm-siv` and `aes-gcm` crates.
//!
//! Where to look:
//!
//! - one message: [`Aes128GcmSiv`], [`Aes256GcmSiv`], [`Aes128Gcm`], [`Aes256Gcm`], or
//!   [`DynAesGcmSiv`] and [`DynAesGcm`] when the key size is known only at run time;
//! - many messages: [`AesGcmSiv::seal_batch`] and [`AesGcmSiv::open_batch`] with [`SivJob`]s;
//! - files and streams: [`stream`] (chunked, on every core);
//! - how much one key may encrypt: [`bounds`], and [`Sealer`], which enforces it;
//! - other modes of AES: [`modes`] (one message) and [`comb`] (many at once).
//!
//! The library is built in layers, each a crate that depends only on those below it
//! (`combsiv-core`, no_std; `combsiv-modes`; `combsiv-std`); this crate re-exports their
//! public paths, so depend on it alone. Without default features it is `no_std` (the
//! `alloc` feature adds what needs a heap).

#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]

#[cfg(feature = "std")]
pub use combsiv_core::bounds;
pub use combsiv_core::{
    Aes, Aes128, Aes128Gcm, Aes128GcmSiv, Aes256, Aes256Gcm, Aes256GcmSiv, AesGcm, AesGcmSiv,
    AesKeySize, Backend, DynAesGcm, DynAesGcmSiv, Error, KeySize, SivJob, traits,
};
#[cfg(feature = "alloc")]
pub use combsiv_modes::comb;
pub use combsiv_modes::modes;
/// Work spread over threads: how many to use, and running one worker function on each.
#[cfg(feature = "std")]
pub use combsiv_parallel as parallel;
#[cfg(feature = "std")]
pub use combsiv_std::{Sealer, c2sp, random_access, sealer, stream, tink};

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
