//! A message's keys: HKDF-Expand with SHA-512 (RFC 5869 Section 2.3) from the input key, and
//! the chunk AEAD under the derived key with its per-chunk nonces.

use alloc::boxed::Box;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha512;
use zeroize::{Zeroize, Zeroizing};

use super::{Aead, COMMITMENT_LEN, HEADER_LEN, MAX_CHUNKS, SALT_LEN, TAG_LEN};
use crate::stream::StreamError;
use crate::stream::chunk_cipher::ChunkCipher;
use combsiv_core::aead::InOutBuf;
use combsiv_core::verdict::check_tag;
use combsiv_core::{DynAesGcm, DynAesGcmSiv, Error};

/// The fixed start of the derivation's info string.
const INFO_PREFIX: &[u8] = b"c2sp.org/chunked-encryption@v1+";
/// Length of the AEAD nonce; the spec asks for at least 96 bits, and both AEADs take 96.
const NONCE_LEN: usize = 12;
/// SHA-512's output length: HKDF-Expand's block.
const HASH_LEN: usize = 64;

/// The chunk AEAD of one message under its derived key, with its base nonce and the
/// commitment derived beside them.
pub(crate) struct MessageKeys {
    aead: ChunkAead,
    base_nonce: [u8; NONCE_LEN],
    pub(super) commitment: [u8; COMMITMENT_LEN],
}

/// Boxed: an AES-GCM key holds its table of hash powers, 1440 bytes.
enum ChunkAead {
    Gcm(Box<DynAesGcm>),
    GcmSiv(Box<DynAesGcmSiv>),
}

impl Drop for MessageKeys {
    fn drop(&mut self) {
        self.base_nonce.zeroize();
        self.commitment.zeroize();
    }
}

/// The input key's length for `aead`, or [`Error::InvalidKeyLength`].
pub(crate) fn check_input_key(aead: Aead, input_key: &[u8]) -> Result<(), StreamError> {
    if input_key.len() == aead.key_size().key_len() {
        Ok(())
    } else {
        Err(StreamError::Crypto(Error::InvalidKeyLength))
    }
}

impl MessageKeys {
    /// `key || base nonce || commitment = HKDF-Expand(input key, info)`, info being the
    /// prefix, the AEAD's name, a zero byte, the salt and the context.
    pub(super) fn derive(
        aead: Aead,
        input_key: &[u8],
        salt: &[u8; SALT_LEN],
        context: &[u8],
    ) -> Result<MessageKeys, StreamError> {
        check_input_key(aead, input_key)?;
        let key_len = aead.key_size().key_len();
        let mut okm_buffer = Zeroizing::new([0u8; 32 + NONCE_LEN + COMMITMENT_LEN]);
        let okm = &mut okm_buffer[..key_len + NONCE_LEN + COMMITMENT_LEN];
        let info: [&[u8]; 5] = [
            INFO_PREFIX,
            aead.iana_name().as_bytes(),
            &[0],
            salt,
            context,
        ];
        hkdf_expand_sha512(input_key, &info, okm)?;
        let (key, rest) = okm.split_at(key_len);
        let (base_nonce, commitment) = rest.split_at(NONCE_LEN);
        let chunk_aead = if aead.is_gcm_siv() {
            ChunkAead::GcmSiv(Box::new(DynAesGcmSiv::new(key)?))
        } else {
            ChunkAead::Gcm(Box::new(DynAesGcm::new(key)?))
        };
        let mut keys = MessageKeys {
            aead: chunk_aead,
            base_nonce: [0; NONCE_LEN],
            commitment: [0; COMMITMENT_LEN],
        };
        keys.base_nonce.copy_from_slice(base_nonce);
        keys.commitment.copy_from_slice(commitment);
        Ok(keys)
    }

    /// The keys of the message whose header (salt, then commitment) is `header`, once its
    /// commitment matches: [`StreamError::WrongKey`] otherwise (a wrong key or context).
    pub(crate) fn of_header(
        aead: Aead,
        input_key: &[u8],
        header: &[u8; HEADER_LEN],
        context: &[u8],
    ) -> Result<MessageKeys, StreamError> {
        let (salt, commitment) = header.split_at(SALT_LEN);
        let salt = salt.try_into().map_err(|_| StreamError::WrongKey)?;
        let keys = MessageKeys::derive(aead, input_key, salt, context)?;
        check_tag(&keys.commitment, commitment).map_err(|_| StreamError::WrongKey)?;
        Ok(keys)
    }

    /// The nonce of chunk `index`: the base nonce XOR the index, big-endian.
    fn nonce(&self, index: u64) -> [u8; NONCE_LEN] {
        let mut nonce = self.base_nonce;
        for (byte, count) in nonce[NONCE_LEN - 8..].iter_mut().zip(index.to_be_bytes()) {
            *byte ^= count;
        }
        nonce
    }

    /// Seals chunk `index` from `plaintext` into `sealed` (`plaintext.len() + TAG_LEN`
    /// bytes, the tag last).
    pub(super) fn seal(
        &self,
        index: u64,
        plaintext: &[u8],
        sealed: &mut [u8],
    ) -> Result<(), StreamError> {
        Ok(self.seal_chunk((index, false), Some(plaintext), sealed)?)
    }

    /// Opens sealed chunk `index` (its ciphertext and tag) into `plaintext`
    /// (`sealed.len() - TAG_LEN` bytes), which is zeroed unless the tag verifies.
    pub(super) fn open(
        &self,
        index: u64,
        sealed: &[u8],
        plaintext: &mut [u8],
    ) -> Result<(), StreamError> {
        self.open_chunk((index, false), Some(sealed), plaintext)
    }
}

/// Chunk `index` is sealed under the base nonce XOR its index, with no associated data; the
/// final chunk is told apart by its length alone (shorter than a whole chunk), so `last` is
/// not used. An index past [`MAX_CHUNKS`] is refused.
impl ChunkCipher for MessageKeys {
    fn seal_inout(
        &self,
        index: u64,
        _last: bool,
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<[u8; TAG_LEN], Error> {
        if index >= MAX_CHUNKS {
            return Err(Error::InvalidLength);
        }
        let nonce = self.nonce(index);
        match &self.aead {
            ChunkAead::Gcm(c) => c.seal_inout(&nonce, &[], buf),
            ChunkAead::GcmSiv(c) => c.seal_inout(&nonce, &[], buf),
        }
    }

    fn open_inout(
        &self,
        index: u64,
        _last: bool,
        buf: InOutBuf<'_, '_, u8>,
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        if index >= MAX_CHUNKS {
            return Err(Error::Authentication);
        }
        let nonce = self.nonce(index);
        match &self.aead {
            ChunkAead::Gcm(c) => c.open_inout(&nonce, &[], buf, tag),
            ChunkAead::GcmSiv(c) => c.open_inout(&nonce, &[], buf, tag),
        }
    }
}

/// HKDF-Expand (RFC 5869 Section 2.3) with HMAC-SHA-512 and `prk` used as it is: C2SP skips
/// HKDF-Extract for input keys that are uniformly random already, so `prk` is the 16- or
/// 32-byte input key (shorter than the hash, which RFC 5869 allows HMAC but not HKDF's
/// usual API). `info` is given in parts; `out` is at most 255 blocks.
fn hkdf_expand_sha512(prk: &[u8], info: &[&[u8]], out: &mut [u8]) -> Result<(), StreamError> {
    let mut previous = Zeroizing::new([0u8; HASH_LEN]);
    let mut previous_len = 0;
    for (counter, block) in (1u8..).zip(out.chunks_mut(HASH_LEN)) {
        // HMAC takes a key of any length; the error cannot occur.
        let Ok(mut mac) = <Hmac<Sha512> as KeyInit>::new_from_slice(prk) else {
            return Err(StreamError::Crypto(Error::InvalidKeyLength));
        };
        mac.update(&previous[..previous_len]);
        for part in info {
            mac.update(part);
        }
        mac.update(&[counter]);
        let mut t = mac.finalize().into_bytes();
        previous.copy_from_slice(&t);
        previous_len = HASH_LEN;
        block.copy_from_slice(&t[..block.len()]);
        t.as_mut_slice().zeroize();
    }
    Ok(())
}
