//! The portable backend: RustCrypto's `aes` crate (bitsliced constant-time code, or ARMv8
//! and x86 AES instructions where that crate detects them; built with
//! `RUSTFLAGS='--cfg aes_backend="soft"'` it always runs the bitsliced code, which is how the
//! tests reach that code on a CPU with AES instructions).
//!
//! Keys hold the encryption schedule only, like the x86 backend's: CBC decryption, the only
//! user of the inverse cipher, derives a decryption schedule per call and drops it (wiped)
//! after.

use aes::cipher::array::Array;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use aes::{Aes128Dec, Aes128Enc, Aes256Dec, Aes256Enc};
use zeroize::Zeroize;

use super::{AesKeySize, KeyBytes};
use crate::layout::Counter32;

/// Blocks of keystream generated per call into the cipher; the bitsliced code works on
/// several blocks at once, so batching is what makes it fast.
const BATCH: usize = 8;

// The `aes` crate zeroizes its key schedules on drop (its `zeroize` feature).
#[derive(Clone)]
pub enum RustCryptoAes {
    /// An AES-128 key.
    Aes128(Aes128Enc),
    /// An AES-256 key.
    Aes256(Aes256Enc),
}

/// Nothing of the schedule: it is key material.
impl core::fmt::Debug for RustCryptoAes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RustCryptoAes").finish_non_exhaustive()
    }
}

impl RustCryptoAes {
    pub fn new(key: KeyBytes<'_>) -> Self {
        match key {
            KeyBytes::Aes128(key) => {
                RustCryptoAes::Aes128(Aes128Enc::new(<&Array<u8, _>>::from(key)))
            }
            KeyBytes::Aes256(key) => {
                RustCryptoAes::Aes256(Aes256Enc::new(<&Array<u8, _>>::from(key)))
            }
        }
    }

    pub fn encrypt_blocks(&self, blocks: &mut [[u8; 16]]) {
        let blocks = Array::cast_slice_from_core_mut(blocks);
        match self {
            RustCryptoAes::Aes128(aes) => aes.encrypt_blocks(blocks),
            RustCryptoAes::Aes256(aes) => aes.encrypt_blocks(blocks),
        }
    }

    pub fn decrypt_blocks(&self, blocks: &mut [[u8; 16]]) {
        let blocks = Array::cast_slice_from_core_mut(blocks);
        match self {
            RustCryptoAes::Aes128(aes) => Aes128Dec::from(aes).decrypt_blocks(blocks),
            RustCryptoAes::Aes256(aes) => Aes256Dec::from(aes).decrypt_blocks(blocks),
        }
    }

    pub fn size(&self) -> AesKeySize {
        match self {
            RustCryptoAes::Aes128(_) => AesKeySize::Aes128,
            RustCryptoAes::Aes256(_) => AesKeySize::Aes256,
        }
    }

    pub fn apply_keystream(&self, counter: &[u8; 16], order: Counter32, data: &mut [u8]) {
        let mut counter = *counter;
        let mut keystream = [[0u8; 16]; BATCH];
        for chunk in data.chunks_mut(16 * BATCH) {
            let blocks = chunk.len().div_ceil(16);
            for block in &mut keystream[..blocks] {
                *block = counter;
                counter = order.advance(&counter, 1);
            }
            self.encrypt_blocks(&mut keystream[..blocks]);
            for (byte, key) in chunk.iter_mut().zip(keystream.as_flattened()) {
                *byte ^= key;
            }
        }
        keystream.zeroize();
    }
}
