//! The AEADs with the key size chosen at run time, from the key's length: what a file format,
//! a command line or a binding holds when the size comes from data or from the user.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

#[cfg(feature = "std")]
use aead::inout::InOutBuf;

use super::key_from_slice;
use crate::aes::AesKeySize;
use crate::{Aes128, Aes256, AesGcm, AesGcmSiv, Backend, Error};

/// Runs `$call` on the cipher inside either variant.
macro_rules! on_either {
    ($value:expr, $cipher:ident => $call:expr) => {
        match $value {
            Self::Aes128($cipher) => $call,
            Self::Aes256($cipher) => $call,
        }
    };
}

/// The constructors and methods both runtime types share, delegated to the typed cipher.
macro_rules! runtime_key_size {
    ($name:ident, $typed:ident) => {
        impl $name {
            /// A cipher for a 16-byte (AES-128) or 32-byte (AES-256) key on the detected
            /// backend: [`Error::InvalidKeyLength`] for any other length.
            pub fn new(key: &[u8]) -> Result<Self, Error> {
                Ok(match AesKeySize::of_key_len(key.len())? {
                    AesKeySize::Aes128 => Self::Aes128($typed::new_from_slice(key)?),
                    AesKeySize::Aes256 => Self::Aes256($typed::new_from_slice(key)?),
                })
            }

            /// Like [`new`](Self::new) on a chosen backend:
            /// [`Error::BackendUnavailable`] if this CPU cannot run it.
            pub fn with_backend(key: &[u8], backend: Backend) -> Result<Self, Error> {
                Ok(match AesKeySize::of_key_len(key.len())? {
                    AesKeySize::Aes128 => {
                        Self::Aes128($typed::with_backend(&key_from_slice::<Aes128>(key)?, backend)?)
                    }
                    AesKeySize::Aes256 => {
                        Self::Aes256($typed::with_backend(&key_from_slice::<Aes256>(key)?, backend)?)
                    }
                })
            }

            /// AES-128 or AES-256.
            pub fn key_size(&self) -> AesKeySize {
                match self {
                    Self::Aes128(_) => AesKeySize::Aes128,
                    Self::Aes256(_) => AesKeySize::Aes256,
                }
            }

            /// The backend this cipher runs on.
            pub fn backend(&self) -> Backend {
                on_either!(self, cipher => cipher.backend())
            }

            /// Encrypts `buf` in place and returns the tag.
            pub fn encrypt_in_place_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: &mut [u8],
            ) -> Result<[u8; 16], Error> {
                on_either!(self, cipher => cipher.encrypt_in_place_detached(nonce, aad, buf))
            }

            /// Decrypts `buf` in place if `tag` authenticates it; on any error `buf` is zeroed.
            pub fn decrypt_in_place_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; 16],
            ) -> Result<(), Error> {
                on_either!(self, cipher => cipher.decrypt_in_place_detached(nonce, aad, buf, tag))
            }

            /// Seals `buf`'s input into its output (the chunked formats' chunks).
            #[doc(hidden)]
            #[cfg(feature = "std")]
            pub fn seal_inout(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: InOutBuf<'_, '_, u8>,
            ) -> Result<[u8; 16], Error> {
                on_either!(self, cipher => cipher.seal_inout(nonce, aad, buf))
            }

            /// Opens `buf`'s input into its output, which is zeroed on failure.
            #[doc(hidden)]
            #[cfg(feature = "std")]
            pub fn open_inout(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: InOutBuf<'_, '_, u8>,
                tag: &[u8; 16],
            ) -> Result<(), Error> {
                on_either!(self, cipher => cipher.open_inout(nonce, aad, buf, tag))
            }

            /// Encrypts `input` into `output` (equally long) in one pass and returns the tag.
            pub fn encrypt_to_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                input: &[u8],
                output: &mut [u8],
            ) -> Result<[u8; 16], Error> {
                on_either!(self, cipher => cipher.encrypt_to_detached(nonce, aad, input, output))
            }

            /// Decrypts `input` into `output` (equally long) if `tag` authenticates it; on any
            /// error `output` is zeroed.
            pub fn decrypt_to_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                input: &[u8],
                output: &mut [u8],
                tag: &[u8; 16],
            ) -> Result<(), Error> {
                on_either!(self, cipher => cipher.decrypt_to_detached(nonce, aad, input, output, tag))
            }

            /// Encrypts `plaintext` and returns `ciphertext || tag`.
            #[cfg(feature = "alloc")]
            pub fn encrypt(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                plaintext: &[u8],
            ) -> Result<Vec<u8>, Error> {
                on_either!(self, cipher => cipher.encrypt(nonce, aad, plaintext))
            }

            /// Decrypts `ciphertext || tag` and returns the plaintext.
            #[cfg(feature = "alloc")]
            pub fn decrypt(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                ciphertext_and_tag: &[u8],
            ) -> Result<Vec<u8>, Error> {
                on_either!(self, cipher => cipher.decrypt(nonce, aad, ciphertext_and_tag))
            }
        }

        impl From<$typed<Aes128>> for $name {
            fn from(cipher: $typed<Aes128>) -> Self {
                Self::Aes128(cipher)
            }
        }

        impl From<$typed<Aes256>> for $name {
            fn from(cipher: $typed<Aes256>) -> Self {
                Self::Aes256(cipher)
            }
        }
    };
}

/// AES-GCM-SIV (RFC 8452) with the key size taken from the key: [`Aes128GcmSiv`] or
/// [`Aes256GcmSiv`] behind one type.
///
/// [`Aes128GcmSiv`]: crate::Aes128GcmSiv
/// [`Aes256GcmSiv`]: crate::Aes256GcmSiv
///
/// ```
/// use combsiv::{AesKeySize, DynAesGcmSiv};
///
/// let key = vec![0x42; 16]; // from a file, say
/// let cipher = DynAesGcmSiv::new(&key)?;
/// assert_eq!(cipher.key_size(), AesKeySize::Aes128);
/// let sealed = cipher.encrypt(&[0; 12], b"", b"hello")?;
/// assert_eq!(cipher.decrypt(&[0; 12], b"", &sealed)?, b"hello");
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum DynAesGcmSiv {
    /// A 16-byte key.
    Aes128(AesGcmSiv<Aes128>),
    /// A 32-byte key.
    Aes256(AesGcmSiv<Aes256>),
}

runtime_key_size!(DynAesGcmSiv, AesGcmSiv);

impl DynAesGcmSiv {
    /// [`AesGcmSiv::seal_batch`].
    #[cfg(feature = "alloc")]
    pub fn seal_batch(&self, jobs: &mut [super::SivJob<'_>]) -> Result<(), Error> {
        on_either!(self, cipher => cipher.seal_batch(jobs))
    }

    /// [`AesGcmSiv::open_batch`].
    #[cfg(feature = "alloc")]
    pub fn open_batch(&self, jobs: &mut [super::SivJob<'_>]) -> Result<(), Error> {
        on_either!(self, cipher => cipher.open_batch(jobs))
    }

    /// [`AesGcmSiv::seal_batch_with_threads`].
    #[cfg(feature = "std")]
    pub fn seal_batch_with_threads(
        &self,
        jobs: &mut [super::SivJob<'_>],
        threads: usize,
    ) -> Result<(), Error> {
        on_either!(self, cipher => cipher.seal_batch_with_threads(jobs, threads))
    }

    /// [`AesGcmSiv::open_batch_with_threads`].
    #[cfg(feature = "std")]
    pub fn open_batch_with_threads(
        &self,
        jobs: &mut [super::SivJob<'_>],
        threads: usize,
    ) -> Result<(), Error> {
        on_either!(self, cipher => cipher.open_batch_with_threads(jobs, threads))
    }
}

/// AES-GCM (SP 800-38D) with the key size taken from the key: [`Aes128Gcm`] or
/// [`Aes256Gcm`] behind one type.
///
/// [`Aes128Gcm`]: crate::Aes128Gcm
/// [`Aes256Gcm`]: crate::Aes256Gcm
#[derive(Clone, Debug)]
pub enum DynAesGcm {
    /// A 16-byte key.
    Aes128(AesGcm<Aes128>),
    /// A 32-byte key.
    Aes256(AesGcm<Aes256>),
}

runtime_key_size!(DynAesGcm, AesGcm);

impl DynAesGcm {
    /// [`AesGcm::encrypt_with_iv`].
    #[cfg(feature = "alloc")]
    pub fn encrypt_with_iv(
        &self,
        iv: &[u8],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        on_either!(self, cipher => cipher.encrypt_with_iv(iv, aad, plaintext))
    }

    /// [`AesGcm::decrypt_with_iv`].
    #[cfg(feature = "alloc")]
    pub fn decrypt_with_iv(
        &self,
        iv: &[u8],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<Vec<u8>, Error> {
        on_either!(self, cipher => cipher.decrypt_with_iv(iv, aad, ciphertext_and_tag))
    }
}
