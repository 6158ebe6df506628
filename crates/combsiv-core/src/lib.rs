//! combsiv's `no_std` core: CPU tiers, AES, GF(2^128), AES-GCM-SIV (RFC 8452) and AES-GCM
//! (SP 800-38D), their batches, and (with `std`) the usage bounds.
//!
//! Users depend on the `combsiv` crate, which re-exports everything public here under the
//! same names. The modules marked hidden (`aes`, `aead`, `cpu`, `layout`, `verdict`) are the
//! kernel interface of the layers above (the modes and the comb engine build on the tiers
//! and the AES schedules); they are not an API and may change in any release.
//!
//! Without features the crate needs neither `std` nor an allocator (it builds for
//! `thumbv7em-none-eabihf`); `alloc` adds the `Vec` returning calls and the batches, `std`
//! the helper threads of large batches, `COMBSIV_BACKEND` and the usage bounds.

#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]
// The hidden kernel interface's docs link the private items they explain.
#![allow(rustdoc::private_intra_doc_links)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[doc(hidden)]
pub mod aead;
#[doc(hidden)]
pub mod aes;
#[cfg(feature = "std")]
pub mod bounds;
mod clmul;
#[doc(hidden)]
pub mod cpu;
mod error;
mod field;
#[doc(hidden)]
pub mod layout;
#[cfg(test)]
mod test_vectors;
#[doc(hidden)]
pub mod verdict;

pub use crate::aead::gcm::AesGcm;
pub use crate::aead::gcm_siv::AesGcmSiv;
pub use crate::aead::{Aes128, Aes256, DynAesGcm, DynAesGcmSiv, KeySize, SivJob};
pub use crate::aes::{Aes, AesKeySize};
pub use crate::cpu::Backend;
pub use crate::error::Error;
/// The RustCrypto `aead` crate whose traits the ciphers implement.
pub use ::aead as traits;

/// AES-GCM-SIV with a 128-bit key (RFC 8452 AEAD_AES_128_GCM_SIV).
pub type Aes128GcmSiv = AesGcmSiv<Aes128>;
/// AES-GCM-SIV with a 256-bit key (RFC 8452 AEAD_AES_256_GCM_SIV).
pub type Aes256GcmSiv = AesGcmSiv<Aes256>;
/// AES-GCM with a 128-bit key.
pub type Aes128Gcm = AesGcm<Aes128>;
/// AES-GCM with a 256-bit key.
pub type Aes256Gcm = AesGcm<Aes256>;
