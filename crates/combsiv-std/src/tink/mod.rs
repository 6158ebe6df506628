//! Tink's AEAD wire format under a cleartext Tink keyset: what Tink (and BigQuery's AEAD
//! functions, which use Tink keysets) write and read, for `AesGcmKey` and `AesGcmSivKey`
//! keys.
//!
//! A ciphertext is `prefix || nonce (12) || ciphertext || tag (16)`, the prefix being
//! `0x01 || key id (4, big-endian)` for a key whose output prefix is TINK and nothing for
//! RAW. The keyset's primary key encrypts; decryption tries the enabled keys whose prefix the
//! ciphertext starts with, then the enabled RAW keys, as Tink does. Keysets are read from
//! Tink's binary (`tink.proto`'s `Keyset`) and JSON forms, unencrypted: keysets encrypted
//! under a KMS key are out of scope (decrypt them with Tink or the KMS first). Anything
//! else a keyset may hold (another key type, the LEGACY or CRUNCHY prefix, AES-192) is a
//! [`TinkError`] that names it.
//!
//! ```
//! use combsiv::tink::Keyset;
//!
//! // `tinkey create-keyset --key-template AES256_GCM_SIV --out-format json` writes this form.
//! let keyset = Keyset::from_json(r#"{
//!   "primaryKeyId": 492875772,
//!   "key": [{
//!     "keyData": {
//!       "typeUrl": "type.googleapis.com/google.crypto.tink.AesGcmSivKey",
//!       "value": "GiAy/C6IFukdwe84IyTFhUDDwamkszIoKVI2GDV0EV8RyQ==",
//!       "keyMaterialType": "SYMMETRIC"
//!     },
//!     "status": "ENABLED", "keyId": 492875772, "outputPrefixType": "TINK"
//!   }]
//! }"#)?;
//! let sealed = keyset.encrypt(b"hello", b"row 7")?;
//! assert_eq!(sealed[..5], [0x01, 0x1d, 0x60, 0xaf, 0xfc]);
//! assert_eq!(keyset.decrypt(&sealed, b"row 7")?, b"hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod keyset;
#[cfg(test)]
mod tests;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use combsiv_core::{DynAesGcm, DynAesGcmSiv, Error};

use keyset::{AES_GCM_KEY, AES_GCM_SIV_KEY, RawKey};

/// Length of a TINK prefix: `0x01` and the key id.
pub const PREFIX_LEN: usize = 5;
/// Length of the random nonce after the prefix.
pub const NONCE_LEN: usize = 12;
/// Length of the tag at the end.
pub const TAG_LEN: usize = 16;

/// What can go wrong reading a keyset or using it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TinkError {
    /// The keyset's bytes or JSON are not a keyset.
    Malformed(&'static str),
    /// An enabled key of a type other than `AesGcmKey` and `AesGcmSivKey` (its type URL).
    UnsupportedKeyType(String),
    /// An enabled key with an output prefix other than TINK and RAW (its name).
    UnsupportedOutputPrefix(&'static str),
    /// A key message of a version other than 0.
    UnsupportedVersion(u64),
    /// An AES key of this many bytes: AES-128 and AES-256 only (combsiv has no AES-192).
    UnsupportedKeySize(usize),
    /// The primary key is missing from the keyset or not enabled.
    NoPrimaryKey(u32),
    /// No enabled key decrypts the ciphertext: a wrong keyset or associated data, or a
    /// changed ciphertext.
    Decryption,
    /// Encryption failed (no randomness, a message over the AEAD's limit).
    Crypto(Error),
}

impl fmt::Display for TinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TinkError::Malformed(what) => write!(f, "not a Tink keyset: {what}"),
            TinkError::UnsupportedKeyType(url) => write!(f, "unsupported Tink key type {url}"),
            TinkError::UnsupportedOutputPrefix(name) => {
                write!(
                    f,
                    "unsupported output prefix {name} (TINK and RAW are read)"
                )
            }
            TinkError::UnsupportedVersion(v) => write!(f, "unsupported key version {v}"),
            TinkError::UnsupportedKeySize(len) => write!(
                f,
                "unsupported AES key of {len} bytes (AES-128 and AES-256 only; combsiv has no AES-192)"
            ),
            TinkError::NoPrimaryKey(id) => write!(f, "primary key {id} is missing or not enabled"),
            TinkError::Decryption => f.write_str("decryption failed"),
            TinkError::Crypto(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TinkError {}

impl From<Error> for TinkError {
    fn from(error: Error) -> Self {
        TinkError::Crypto(error)
    }
}

/// One enabled key: its id, whether its ciphertexts carry the TINK prefix, its AEAD.
struct Key {
    id: u32,
    prefixed: bool,
    aead: KeyAead,
}

/// Boxed: an AES-GCM key holds its table of hash powers.
enum KeyAead {
    Gcm(Box<DynAesGcm>),
    GcmSiv(Box<DynAesGcmSiv>),
}

/// A cleartext Tink keyset of AES-GCM and AES-GCM-SIV keys; see the [module docs](self).
pub struct Keyset {
    keys: Vec<Key>,
    /// The index of the primary key in `keys`.
    primary: usize,
}

impl fmt::Debug for Keyset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyset")
            .field("primary_key_id", &self.primary_key_id())
            .field("enabled_keys", &self.keys.len())
            .finish_non_exhaustive()
    }
}

impl Keyset {
    /// Reads a keyset in Tink's binary form (a serialized `Keyset` message).
    pub fn from_binary(bytes: &[u8]) -> Result<Keyset, TinkError> {
        let (primary, keys) = keyset::parse_binary(bytes)?;
        Keyset::new(primary, keys)
    }

    /// Reads a keyset in Tink's JSON form.
    pub fn from_json(text: &str) -> Result<Keyset, TinkError> {
        let (primary, keys) = keyset::parse_json(text)?;
        Keyset::new(primary, keys)
    }

    fn new(primary: u32, raw: Vec<RawKey>) -> Result<Keyset, TinkError> {
        let mut keys = Vec::new();
        let mut primary_index = None;
        for key in raw.iter().filter(|key| key.status == 1) {
            let prefixed = match key.output_prefix {
                1 => true,
                3 => false,
                2 => return Err(TinkError::UnsupportedOutputPrefix("LEGACY")),
                4 => return Err(TinkError::UnsupportedOutputPrefix("CRUNCHY")),
                _ => return Err(TinkError::UnsupportedOutputPrefix("UNKNOWN")),
            };
            let value = keyset::aes_key_value(&key.value)?;
            if !matches!(value.len(), 16 | 32) {
                return Err(TinkError::UnsupportedKeySize(value.len()));
            }
            let aead = match key.type_url.as_str() {
                AES_GCM_KEY => KeyAead::Gcm(Box::new(DynAesGcm::new(&value)?)),
                AES_GCM_SIV_KEY => KeyAead::GcmSiv(Box::new(DynAesGcmSiv::new(&value)?)),
                other => return Err(TinkError::UnsupportedKeyType(other.into())),
            };
            if key.key_id == primary {
                primary_index = Some(keys.len());
            }
            keys.push(Key {
                id: key.key_id,
                prefixed,
                aead,
            });
        }
        let primary = primary_index.ok_or(TinkError::NoPrimaryKey(primary))?;
        Ok(Keyset { keys, primary })
    }

    /// The primary key's id: the key that encrypts.
    pub fn primary_key_id(&self) -> u32 {
        self.keys[self.primary].id
    }

    /// The length of the ciphertext of `plaintext_len` bytes under the primary key.
    pub fn ciphertext_len(&self, plaintext_len: usize) -> usize {
        let prefix = if self.keys[self.primary].prefixed {
            PREFIX_LEN
        } else {
            0
        };
        prefix + NONCE_LEN + plaintext_len + TAG_LEN
    }

    /// Encrypts under the primary key with a random nonce: `prefix || nonce || ciphertext
    /// || tag`.
    pub fn encrypt(&self, plaintext: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, TinkError> {
        let key = &self.keys[self.primary];
        let mut out = Vec::with_capacity(self.ciphertext_len(plaintext.len()));
        if key.prefixed {
            out.push(0x01);
            out.extend_from_slice(&key.id.to_be_bytes());
        }
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| Error::RandomnessUnavailable)?;
        out.extend_from_slice(&nonce);
        let body = out.len();
        out.resize(body + plaintext.len(), 0);
        let tag = match &key.aead {
            KeyAead::Gcm(c) => {
                c.encrypt_to_detached(&nonce, associated_data, plaintext, &mut out[body..])
            }
            KeyAead::GcmSiv(c) => {
                c.encrypt_to_detached(&nonce, associated_data, plaintext, &mut out[body..])
            }
        }?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Decrypts a ciphertext of any enabled key: those whose TINK prefix it starts with,
    /// then the RAW ones. [`TinkError::Decryption`] if none verifies it.
    pub fn decrypt(&self, ciphertext: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, TinkError> {
        let prefix = ciphertext.get(..PREFIX_LEN);
        let candidates = self
            .keys
            .iter()
            .filter(|key| {
                key.prefixed
                    && prefix.is_some_and(|p| p[0] == 0x01 && p[1..] == key.id.to_be_bytes())
            })
            .map(|key| (key, &ciphertext[PREFIX_LEN..]))
            .chain(
                self.keys
                    .iter()
                    .filter(|key| !key.prefixed)
                    .map(|key| (key, ciphertext)),
            );
        for (key, sealed) in candidates {
            if let Some(plaintext) = open(key, sealed, associated_data) {
                return Ok(plaintext);
            }
        }
        Err(TinkError::Decryption)
    }
}

/// `nonce || ciphertext || tag` opened under `key`, or `None`.
fn open(key: &Key, sealed: &[u8], associated_data: &[u8]) -> Option<Vec<u8>> {
    let (nonce, rest) = sealed.split_first_chunk::<NONCE_LEN>()?;
    let (body, tag) = rest.split_last_chunk::<TAG_LEN>()?;
    let mut plaintext = vec![0u8; body.len()];
    let opened = match &key.aead {
        KeyAead::Gcm(c) => c.decrypt_to_detached(nonce, associated_data, body, &mut plaintext, tag),
        KeyAead::GcmSiv(c) => {
            c.decrypt_to_detached(nonce, associated_data, body, &mut plaintext, tag)
        }
    };
    opened.ok().map(|()| plaintext)
}
