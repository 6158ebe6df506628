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
//! The backend (portable, AES-NI, VAES) is chosen once per key from the CPU; see [`Backend`].
//! The types also implement the RustCrypto `aead` traits, as drop-in replacements for the
//! `aes-gcm-siv` and `aes-gcm` crates.

#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod aead;
mod aes;
#[cfg(feature = "std")]
pub mod bounds;
#[cfg(feature = "alloc")]
pub mod comb;
mod cpu;
mod error;
mod field;
mod layout;
pub mod modes;
#[cfg(feature = "std")]
pub mod parallel;
#[cfg(feature = "std")]
pub mod sealer;
#[cfg(feature = "std")]
pub mod stream;
#[cfg(test)]
mod test_vectors;
mod verdict;

pub use crate::aead::gcm::AesGcm;
pub use crate::aead::gcm_siv::{AesGcmSiv, SivJob};
pub use crate::aead::{Aes128, Aes256, DynAesGcm, DynAesGcmSiv, KeySize};
pub use crate::aes::{Aes, AesKeySize};
pub use crate::cpu::Backend;
pub use crate::error::Error;
#[cfg(feature = "std")]
pub use crate::sealer::Sealer;
/// The RustCrypto `aead` crate whose traits the ciphers implement.
pub use ::aead as traits;

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// AES-GCM-SIV with a 128-bit key (RFC 8452 AEAD_AES_128_GCM_SIV).
pub type Aes128GcmSiv = AesGcmSiv<Aes128>;
/// AES-GCM-SIV with a 256-bit key (RFC 8452 AEAD_AES_256_GCM_SIV).
pub type Aes256GcmSiv = AesGcmSiv<Aes256>;
/// AES-GCM with a 128-bit key.
pub type Aes128Gcm = AesGcm<Aes128>;
/// AES-GCM with a 256-bit key.
pub type Aes256Gcm = AesGcm<Aes256>;
