//! The harness: every AEAD type, through every backend and every public entry point.

use combsiv::traits::inout::InOutBuf;
use combsiv::traits::{Aead, AeadInOut, Payload};
use combsiv::{AesGcm, AesGcmSiv, Backend, Error, KeySize};

pub use crate::common::{
    Rng, available_backends, backends_under_test, boundary_lengths, hex, load_vectors,
};

/// The ways a caller can reach an AEAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `encrypt` / `decrypt` returning a `Vec`.
    Allocating,
    /// `encrypt_in_place_detached` / `decrypt_in_place_detached`.
    InPlaceDetached,
    /// `encrypt_to_detached` / `decrypt_to_detached` into a distinct (garbage-filled) buffer.
    OutOfPlaceDetached,
    /// RustCrypto `AeadInOut` with distinct input and (garbage-filled) output buffers.
    RustCryptoInOut,
    /// RustCrypto `Aead` (allocating, through the trait's blanket impl).
    RustCryptoAead,
}

pub const ENTRIES: [Entry; 5] = [
    Entry::Allocating,
    Entry::InPlaceDetached,
    Entry::OutOfPlaceDetached,
    Entry::RustCryptoInOut,
    Entry::RustCryptoAead,
];

/// Bytes that output buffers are filled with before use, so that stale output shows.
pub const GARBAGE: u8 = 0xA5;

/// The outcome of an open: the result, and what the caller's output buffer holds afterwards
/// (for the allocating entry points, the returned plaintext or nothing).
pub struct Opened {
    pub result: Result<(), Error>,
    pub output: Vec<u8>,
}

impl Opened {
    /// An allocating open: the plaintext on success, no buffer to inspect on failure.
    fn from_allocating(result: Result<Vec<u8>, Error>) -> Opened {
        match result {
            Ok(plaintext) => Opened {
                result: Ok(()),
                output: plaintext,
            },
            Err(error) => Opened {
                result: Err(error),
                output: Vec::new(),
            },
        }
    }
}

/// One AEAD type under test.
pub trait Subject: Sized {
    const NAME: &'static str;
    const KEY_LEN: usize;
    fn with_backend(key: &[u8], backend: Backend) -> Self;
    fn seal(&self, entry: Entry, nonce: &[u8; 12], aad: &[u8], plaintext: &[u8]) -> Vec<u8>;
    fn open(&self, entry: Entry, nonce: &[u8; 12], aad: &[u8], sealed: &[u8]) -> Opened;
}

/// Trait errors are opaque; in-place errors are ours. Both become ours here.
fn opaque<T>(result: combsiv::traits::Result<T>) -> Result<T, Error> {
    result.map_err(|_| Error::Authentication)
}

macro_rules! subject {
    ($aead:ident, $name:literal) => {
        impl<K: KeySize> Subject for $aead<K> {
            const NAME: &'static str = $name;
            const KEY_LEN: usize = core::mem::size_of::<K::Key>();

            fn with_backend(key: &[u8], backend: Backend) -> Self {
                let key = K::Key::try_from(key).ok().expect("key length");
                $aead::<K>::with_backend(&key, backend).expect("backend available")
            }

            fn seal(
                &self,
                entry: Entry,
                nonce: &[u8; 12],
                aad: &[u8],
                plaintext: &[u8],
            ) -> Vec<u8> {
                match entry {
                    Entry::Allocating => self.encrypt(nonce, aad, plaintext).unwrap(),
                    Entry::InPlaceDetached => {
                        let mut buf = plaintext.to_vec();
                        let tag = self
                            .encrypt_in_place_detached(nonce, aad, &mut buf)
                            .unwrap();
                        buf.extend_from_slice(&tag);
                        buf
                    }
                    Entry::OutOfPlaceDetached => {
                        let mut out = vec![GARBAGE; plaintext.len()];
                        let tag = self
                            .encrypt_to_detached(nonce, aad, plaintext, &mut out)
                            .unwrap();
                        out.extend_from_slice(&tag);
                        out
                    }
                    Entry::RustCryptoInOut => {
                        let mut out = vec![GARBAGE; plaintext.len()];
                        let buf = InOutBuf::new(plaintext, &mut out).unwrap();
                        let tag = self.encrypt_inout_detached(nonce.into(), aad, buf).unwrap();
                        out.extend_from_slice(&tag);
                        out
                    }
                    Entry::RustCryptoAead => {
                        let payload = Payload {
                            msg: plaintext,
                            aad,
                        };
                        Aead::encrypt(self, nonce.into(), payload).unwrap()
                    }
                }
            }

            fn open(&self, entry: Entry, nonce: &[u8; 12], aad: &[u8], sealed: &[u8]) -> Opened {
                let split = sealed.len().saturating_sub(16);
                let (ciphertext, tag) = sealed.split_at(split);
                let tag: Option<[u8; 16]> = tag.try_into().ok();
                match (entry, tag) {
                    (Entry::Allocating, _) | (_, None) => {
                        Opened::from_allocating(self.decrypt(nonce, aad, sealed))
                    }
                    (Entry::InPlaceDetached, Some(tag)) => {
                        let mut buf = ciphertext.to_vec();
                        let result = self.decrypt_in_place_detached(nonce, aad, &mut buf, &tag);
                        Opened {
                            result,
                            output: buf,
                        }
                    }
                    (Entry::OutOfPlaceDetached, Some(tag)) => {
                        let mut out = vec![GARBAGE; ciphertext.len()];
                        let result =
                            self.decrypt_to_detached(nonce, aad, ciphertext, &mut out, &tag);
                        Opened {
                            result,
                            output: out,
                        }
                    }
                    (Entry::RustCryptoInOut, Some(tag)) => {
                        let mut out = vec![GARBAGE; ciphertext.len()];
                        let buf = InOutBuf::new(ciphertext, &mut out).unwrap();
                        let result = opaque(self.decrypt_inout_detached(
                            nonce.into(),
                            aad,
                            buf,
                            (&tag).into(),
                        ));
                        Opened {
                            result,
                            output: out,
                        }
                    }
                    (Entry::RustCryptoAead, Some(_)) => {
                        let payload = Payload { msg: sealed, aad };
                        Opened::from_allocating(opaque(Aead::decrypt(self, nonce.into(), payload)))
                    }
                }
            }
        }
    };
}

subject!(AesGcmSiv, "AES-GCM-SIV");
subject!(AesGcm, "AES-GCM");

/// Runs `check` for every available backend and every entry point.
pub fn for_every_backend_and_entry(mut check: impl FnMut(Backend, Entry)) {
    for backend in available_backends() {
        for entry in ENTRIES {
            check(backend, entry);
        }
    }
}
