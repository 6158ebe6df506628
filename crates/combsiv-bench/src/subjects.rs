//! What is measured: one AEAD implementation of one algorithm behind a uniform in-place
//! interface, ours on every backend and each peer through its own fastest reusable-key API.

use aws_lc_rs::aead as awslc;
use combsiv::traits::{AeadInOut, KeyInit};
use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use ring::aead as ring_aead;

/// The algorithms of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Aes128GcmSiv,
    Aes256GcmSiv,
    Aes128Gcm,
    Aes256Gcm,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Aes128GcmSiv,
        Algorithm::Aes256GcmSiv,
        Algorithm::Aes128Gcm,
        Algorithm::Aes256Gcm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Aes128GcmSiv => "AES-128-GCM-SIV",
            Algorithm::Aes256GcmSiv => "AES-256-GCM-SIV",
            Algorithm::Aes128Gcm => "AES-128-GCM",
            Algorithm::Aes256Gcm => "AES-256-GCM",
        }
    }

    pub fn key_len(self) -> usize {
        match self {
            Algorithm::Aes128GcmSiv | Algorithm::Aes128Gcm => 16,
            Algorithm::Aes256GcmSiv | Algorithm::Aes256Gcm => 32,
        }
    }
}

/// Seals and opens in place with a detached 16-byte tag and no associated data.
pub trait Subject {
    /// Encrypts `buf` and returns the tag.
    fn seal(&mut self, nonce: &[u8; 12], buf: &mut [u8]) -> [u8; 16];
    /// Decrypts `buf` if `tag` authenticates it; false otherwise.
    fn open(&mut self, nonce: &[u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool;
}

/// One implementation of one algorithm, ready to run.
pub struct Implementation {
    /// "combsiv/aesni", "ring", ...
    pub name: String,
    /// Our backend, for our rows.
    pub backend: Option<Backend>,
    pub algorithm: Algorithm,
    pub subject: Box<dyn Subject>,
}

/// Every implementation of every algorithm, ours first. `backends` limits ours.
pub fn all(backends: &[Backend], key: &[u8; 32]) -> Vec<Implementation> {
    let mut list = Vec::new();
    for &backend in backends {
        for algorithm in Algorithm::ALL {
            if let Some(subject) = ours(algorithm, backend, key) {
                list.push(Implementation {
                    name: format!("combsiv/{backend}"),
                    backend: Some(backend),
                    algorithm,
                    subject,
                });
            }
        }
    }
    let mut peer = |name: &str, algorithm, subject: Option<Box<dyn Subject>>| {
        if let Some(subject) = subject {
            list.push(Implementation {
                name: name.to_string(),
                backend: None,
                algorithm,
                subject,
            });
        }
    };
    for algorithm in Algorithm::ALL {
        peer("rustcrypto", algorithm, rustcrypto(algorithm, key));
    }
    for algorithm in Algorithm::ALL {
        peer(
            "aws-lc-rs",
            algorithm,
            RingLike::<awslc::LessSafeKey>::boxed(algorithm, key),
        );
    }
    for algorithm in [Algorithm::Aes128Gcm, Algorithm::Aes256Gcm] {
        peer(
            "ring",
            algorithm,
            RingLike::<ring_aead::LessSafeKey>::boxed(algorithm, key),
        );
    }
    for algorithm in [Algorithm::Aes128Gcm, Algorithm::Aes256Gcm] {
        peer("openssl", algorithm, OpensslGcm::boxed(algorithm, key));
    }
    list
}

struct Combsiv<A>(A);

macro_rules! ours_subject {
    ($aead:ty) => {
        impl Subject for Combsiv<$aead> {
            fn seal(&mut self, nonce: &[u8; 12], buf: &mut [u8]) -> [u8; 16] {
                self.0
                    .encrypt_in_place_detached(nonce, &[], buf)
                    .unwrap_or_default()
            }
            fn open(&mut self, nonce: &[u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
                self.0
                    .decrypt_in_place_detached(nonce, &[], buf, tag)
                    .is_ok()
            }
        }
    };
}
ours_subject!(Aes128GcmSiv);
ours_subject!(Aes256GcmSiv);
ours_subject!(Aes128Gcm);
ours_subject!(Aes256Gcm);

fn ours(algorithm: Algorithm, backend: Backend, key: &[u8; 32]) -> Option<Box<dyn Subject>> {
    let key_128: &[u8; 16] = key[..16].try_into().ok()?;
    Some(match algorithm {
        Algorithm::Aes128GcmSiv => {
            Box::new(Combsiv(Aes128GcmSiv::with_backend(key_128, backend).ok()?))
        }
        Algorithm::Aes256GcmSiv => {
            Box::new(Combsiv(Aes256GcmSiv::with_backend(key, backend).ok()?))
        }
        Algorithm::Aes128Gcm => Box::new(Combsiv(Aes128Gcm::with_backend(key_128, backend).ok()?)),
        Algorithm::Aes256Gcm => Box::new(Combsiv(Aes256Gcm::with_backend(key, backend).ok()?)),
    })
}

/// RustCrypto through the `aead` traits (the same traits our types implement).
struct RustCrypto<A>(A);

impl<A: AeadInOut<NonceSize = combsiv::traits::consts::U12, TagSize = combsiv::traits::consts::U16>>
    Subject for RustCrypto<A>
{
    fn seal(&mut self, nonce: &[u8; 12], buf: &mut [u8]) -> [u8; 16] {
        self.0
            .encrypt_inout_detached(nonce.into(), &[], buf.into())
            .map(|tag| tag.0)
            .unwrap_or_default()
    }
    fn open(&mut self, nonce: &[u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        self.0
            .decrypt_inout_detached(nonce.into(), &[], buf.into(), tag.into())
            .is_ok()
    }
}

fn rustcrypto(algorithm: Algorithm, key: &[u8; 32]) -> Option<Box<dyn Subject>> {
    let key = &key[..algorithm.key_len()];
    Some(match algorithm {
        Algorithm::Aes128GcmSiv => Box::new(RustCrypto(
            aes_gcm_siv::Aes128GcmSiv::new_from_slice(key).ok()?,
        )),
        Algorithm::Aes256GcmSiv => Box::new(RustCrypto(
            aes_gcm_siv::Aes256GcmSiv::new_from_slice(key).ok()?,
        )),
        Algorithm::Aes128Gcm => Box::new(RustCrypto(aes_gcm::Aes128Gcm::new_from_slice(key).ok()?)),
        Algorithm::Aes256Gcm => Box::new(RustCrypto(aes_gcm::Aes256Gcm::new_from_slice(key).ok()?)),
    })
}

/// ring and aws-lc-rs share one API shape (`LessSafeKey`), and each opens in place with a
/// separate tag (`open_in_place_separate_tag`), as our rows do: no copy on either side.
struct RingLike<K> {
    key: K,
}

macro_rules! ring_like {
    ($module:ident, $key:ty) => {
        impl RingLike<$key> {
            fn boxed(algorithm: Algorithm, key: &[u8; 32]) -> Option<Box<dyn Subject>> {
                let spec = match algorithm {
                    Algorithm::Aes128Gcm => &$module::AES_128_GCM,
                    Algorithm::Aes256Gcm => &$module::AES_256_GCM,
                    Algorithm::Aes128GcmSiv | Algorithm::Aes256GcmSiv => {
                        ring_like!(@siv $module, algorithm)?
                    }
                };
                let unbound = $module::UnboundKey::new(spec, &key[..algorithm.key_len()]).ok()?;
                Some(Box::new(RingLike { key: <$key>::new(unbound) }))
            }
        }

        impl Subject for RingLike<$key> {
            fn seal(&mut self, nonce: &[u8; 12], buf: &mut [u8]) -> [u8; 16] {
                let nonce = $module::Nonce::assume_unique_for_key(*nonce);
                let tag = self.key.seal_in_place_separate_tag(nonce, $module::Aad::empty(), buf);
                tag.ok().and_then(|tag| tag.as_ref().try_into().ok()).unwrap_or_default()
            }
            fn open(&mut self, nonce: &[u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
                let nonce = $module::Nonce::assume_unique_for_key(*nonce);
                ring_like!(@open $module, self.key, nonce, buf, tag).is_ok()
            }
        }
    };
    (@siv awslc, $algorithm:expr) => {
        Some(match $algorithm {
            Algorithm::Aes128GcmSiv => &awslc::AES_128_GCM_SIV,
            _ => &awslc::AES_256_GCM_SIV,
        })
    };
    (@siv ring_aead, $algorithm:expr) => {
        None::<&ring_aead::Algorithm>
    };
    (@open awslc, $key:expr, $nonce:expr, $buf:expr, $tag:expr) => {
        $key.open_in_place_separate_tag($nonce, awslc::Aad::empty(), $tag, $buf)
    };
    (@open ring_aead, $key:expr, $nonce:expr, $buf:expr, $tag:expr) => {
        $key.open_in_place_separate_tag(
            $nonce,
            ring_aead::Aad::empty(),
            ring_aead::Tag::from(*$tag),
            $buf,
            0..,
        )
    };
}
ring_like!(awslc, awslc::LessSafeKey);
ring_like!(ring_aead, ring_aead::LessSafeKey);

/// System OpenSSL (EVP): one context per direction with the key schedule set up once; each
/// message re-initialises only the IV.
struct OpensslGcm {
    encrypt: CipherCtx,
    decrypt: CipherCtx,
}

impl OpensslGcm {
    fn boxed(algorithm: Algorithm, key: &[u8; 32]) -> Option<Box<dyn Subject>> {
        let cipher: &CipherRef = match algorithm {
            Algorithm::Aes128Gcm => Cipher::aes_128_gcm(),
            Algorithm::Aes256Gcm => Cipher::aes_256_gcm(),
            _ => return None,
        };
        let key = &key[..algorithm.key_len()];
        let mut encrypt = CipherCtx::new().ok()?;
        encrypt.encrypt_init(Some(cipher), Some(key), None).ok()?;
        let mut decrypt = CipherCtx::new().ok()?;
        decrypt.decrypt_init(Some(cipher), Some(key), None).ok()?;
        Some(Box::new(OpensslGcm { encrypt, decrypt }))
    }
}

impl Subject for OpensslGcm {
    fn seal(&mut self, nonce: &[u8; 12], buf: &mut [u8]) -> [u8; 16] {
        let mut tag = [0u8; 16];
        let mut last = [0u8; 16];
        let ctx = &mut self.encrypt;
        let sealed = ctx.encrypt_init(None, None, Some(nonce)).is_ok()
            && ctx.cipher_update_inplace(buf, buf.len()).is_ok()
            && ctx.cipher_final(&mut last).is_ok()
            && ctx.tag(&mut tag).is_ok();
        if sealed { tag } else { [0; 16] }
    }
    fn open(&mut self, nonce: &[u8; 12], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let mut last = [0u8; 16];
        let ctx = &mut self.decrypt;
        ctx.decrypt_init(None, None, Some(nonce)).is_ok()
            && ctx.set_tag(tag).is_ok()
            && ctx.cipher_update_inplace(buf, buf.len()).is_ok()
            && ctx.cipher_final(&mut last).is_ok()
    }
}
