//! AES encryption (FIPS 197), forward direction only, per backend.
//!
//! Both AEADs only ever run AES forwards: GCM-SIV and GCM decrypt with the same counter
//! keystream they encrypt with, and the key derivation and tag blocks are encryptions too.
//! So no backend keeps a decryption key schedule.

#[cfg(vector_tiers)]
pub mod ctr;
#[cfg(vector_tiers)]
pub mod kernels;
#[cfg(vector_tiers)]
pub mod key_expansion;
pub mod portable;

use aead::inout::InOutBuf;

use crate::Error;
use crate::cpu::{Backend, Isa};
use crate::layout::Counter32;

/// AES-128 or AES-256, chosen at run time: the one key-size type of the crate (the
/// [`KeySize`](crate::KeySize) types [`Aes128`](crate::Aes128) and [`Aes256`](crate::Aes256)
/// choose it at compile time, and each names its `AesKeySize`).
///
/// ```
/// use combsiv::AesKeySize;
///
/// let size = AesKeySize::of_key_len(32)?;
/// assert_eq!((size, size.key_len(), size.bits()), (AesKeySize::Aes256, 32, 256));
/// assert!(AesKeySize::of_key_len(24).is_err()); // AES-192 is not supported
/// assert_eq!(AesKeySize::of_bits(128)?, AesKeySize::Aes128);
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AesKeySize {
    /// A 16-byte key, 10 rounds.
    Aes128,
    /// A 32-byte key, 14 rounds.
    Aes256,
}

impl AesKeySize {
    /// The key size of a key `len` bytes long: [`Error::InvalidKeyLength`] unless 16 or 32.
    pub fn of_key_len(len: usize) -> Result<AesKeySize, Error> {
        match len {
            16 => Ok(AesKeySize::Aes128),
            32 => Ok(AesKeySize::Aes256),
            _ => Err(Error::InvalidKeyLength),
        }
    }

    /// The key size of `bits` bits: [`Error::InvalidKeyLength`] unless 128 or 256.
    pub fn of_bits(bits: u32) -> Result<AesKeySize, Error> {
        match bits {
            128 => Ok(AesKeySize::Aes128),
            256 => Ok(AesKeySize::Aes256),
            _ => Err(Error::InvalidKeyLength),
        }
    }

    /// The key length in bytes: 16 or 32.
    pub const fn key_len(self) -> usize {
        match self {
            AesKeySize::Aes128 => 16,
            AesKeySize::Aes256 => 32,
        }
    }

    /// The key length in bits: 128 or 256.
    pub const fn bits(self) -> u32 {
        match self {
            AesKeySize::Aes128 => 128,
            AesKeySize::Aes256 => 256,
        }
    }

    /// "AES-128" or "AES-256".
    pub const fn name(self) -> &'static str {
        match self {
            AesKeySize::Aes128 => "AES-128",
            AesKeySize::Aes256 => "AES-256",
        }
    }

    /// The number of rounds, FIPS 197 Table 3: 10 or 14.
    #[cfg(vector_tiers)]
    pub(crate) const fn rounds(self) -> usize {
        match self {
            AesKeySize::Aes128 => 10,
            AesKeySize::Aes256 => 14,
        }
    }
}

/// An AES key of a length FIPS 197 defines and combsiv supports.
///
/// `pub` only so that the sealed [`crate::KeySize`] trait can name it; the module is private.
#[derive(Clone, Copy)]
pub enum KeyBytes<'a> {
    /// AES-128: 10 rounds.
    Aes128(&'a [u8; 16]),
    /// AES-256: 14 rounds.
    Aes256(&'a [u8; 32]),
}

impl core::fmt::Debug for KeyBytes<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            KeyBytes::Aes128(_) => "KeyBytes::Aes128(..)",
            KeyBytes::Aes256(_) => "KeyBytes::Aes256(..)",
        })
    }
}

impl<'a> KeyBytes<'a> {
    #[cfg(vector_tiers)]
    pub(crate) fn size(self) -> AesKeySize {
        match self {
            KeyBytes::Aes128(_) => AesKeySize::Aes128,
            KeyBytes::Aes256(_) => AesKeySize::Aes256,
        }
    }

    pub(crate) fn from_slice(key: &'a [u8]) -> Result<Self, Error> {
        if let Ok(key) = <&[u8; 16]>::try_from(key) {
            Ok(KeyBytes::Aes128(key))
        } else if let Ok(key) = <&[u8; 32]>::try_from(key) {
            Ok(KeyBytes::Aes256(key))
        } else {
            Err(Error::InvalidKeyLength)
        }
    }
}

/// An expanded AES-128 or AES-256 key for the block-cipher modes of `combsiv::modes`.
///
/// It keeps the encryption key schedule only; the modes that need the inverse cipher (CBC
/// decryption) derive its schedule from this one for the duration of the call.
///
/// ```
/// use combsiv::{Aes, modes};
///
/// let key = Aes::new(&[0x2b; 16])?;
/// let mut data = *b"sixteen byte msg";
/// modes::cbc_encrypt(&key, &[0; 16], &mut data)?;
/// modes::cbc_decrypt(&key, &[0; 16], &mut data)?;
/// assert_eq!(&data, b"sixteen byte msg");
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone)]
pub struct Aes {
    pub(crate) cipher: BlockCipher,
}

impl Aes {
    /// The expanded key of its tier, for the modes built on it.
    #[doc(hidden)]
    pub fn block_cipher(&self) -> &BlockCipher {
        &self.cipher
    }

    /// Expands a 16-byte (AES-128) or 32-byte (AES-256) key on the detected backend.
    pub fn new(key: &[u8]) -> Result<Aes, Error> {
        Ok(Aes {
            cipher: BlockCipher::new(KeyBytes::from_slice(key)?, Isa::detected()),
        })
    }

    /// Like [`Aes::new`] on a chosen backend: [`Error::BackendUnavailable`] if this CPU
    /// cannot run it.
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Aes, Error> {
        let isa = Isa::for_backend(backend)?;
        Ok(Aes {
            cipher: BlockCipher::new(KeyBytes::from_slice(key)?, isa),
        })
    }

    /// The backend this key runs on.
    pub fn backend(&self) -> Backend {
        self.cipher.isa().backend()
    }

    /// 128 or 256.
    pub fn key_bits(&self) -> usize {
        self.cipher.size().bits() as usize
    }

    /// AES-128 or AES-256.
    pub fn key_size(&self) -> AesKeySize {
        self.cipher.size()
    }
}

impl core::fmt::Debug for Aes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Aes")
            .field("key_bits", &self.key_bits())
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

/// An expanded AES encryption key of one tier: the portable cipher's, or a vector tier's
/// schedule with the token of the tier it was expanded on and runs on.
#[derive(Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "boxing would need an allocator; a key lives in one place and is not moved often"
)]
pub enum BlockCipher {
    /// RustCrypto's constant-time AES.
    Portable(portable::RustCryptoAes),
    /// A vector tier's schedule and the tier's token.
    #[cfg(vector_tiers)]
    Vector(kernels::RoundKeys, crate::cpu::TierToken),
}

/// The backend only: the schedule is key material.
impl core::fmt::Debug for BlockCipher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BlockCipher")
            .field("backend", &self.isa().backend())
            .finish_non_exhaustive()
    }
}

impl BlockCipher {
    pub fn new(key: KeyBytes<'_>, isa: Isa) -> Self {
        match isa {
            Isa::Portable => BlockCipher::Portable(portable::RustCryptoAes::new(key)),
            #[cfg(vector_tiers)]
            Isa::Vector(token) => BlockCipher::Vector(kernels::RoundKeys::new(token, key), token),
        }
    }

    /// The instruction set the key runs on.
    pub fn isa(&self) -> Isa {
        match self {
            BlockCipher::Portable(_) => Isa::Portable,
            #[cfg(vector_tiers)]
            BlockCipher::Vector(_, token) => Isa::Vector(*token),
        }
    }

    /// Encrypts each block in place (ECB over independent blocks, e.g. key derivation).
    pub fn encrypt_blocks(&self, blocks: &mut [[u8; 16]]) {
        match self {
            BlockCipher::Portable(aes) => aes.encrypt_blocks(blocks),
            #[cfg(vector_tiers)]
            BlockCipher::Vector(keys, token) => keys.encrypt_blocks(*token, blocks),
        }
    }

    /// Decrypts each block in place with the inverse cipher (ECB over independent blocks).
    pub fn decrypt_blocks(&self, blocks: &mut [[u8; 16]]) {
        match self {
            BlockCipher::Portable(aes) => aes.decrypt_blocks(blocks),
            #[cfg(vector_tiers)]
            BlockCipher::Vector(keys, token) => keys.decrypt_blocks(*token, blocks),
        }
    }

    pub fn size(&self) -> AesKeySize {
        match self {
            BlockCipher::Portable(aes) => aes.size(),
            #[cfg(vector_tiers)]
            BlockCipher::Vector(keys, _) => keys.size(),
        }
    }

    /// AES of one block. The result is written straight into the returned value, with no
    /// copy left behind: callers deriving secrets (GCM's H, CMAC's L) wipe that one value.
    pub fn encrypt_block(&self, block: &[u8; 16]) -> [u8; 16] {
        let mut out = *block;
        self.encrypt_blocks(core::slice::from_mut(&mut out));
        out
    }

    /// XORs the input side of `data` with the keystream AES(counter), AES(counter + 1), ...
    /// into its output side (the same bytes, or a separate buffer of the same length).
    pub fn apply_keystream(
        &self,
        counter: &[u8; 16],
        order: Counter32,
        data: InOutBuf<'_, '_, u8>,
    ) {
        match self {
            BlockCipher::Portable(aes) => {
                aes.apply_keystream(counter, order, data.into_out_with_copied_in());
            }
            #[cfg(vector_tiers)]
            BlockCipher::Vector(keys, token) => keys.apply_keystream(*token, counter, order, data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI run built with `--cfg aes_backend="soft"` must really run RustCrypto's bitsliced
    /// code (its constant-time path), not the AES instructions it would otherwise pick.
    #[test]
    #[cfg(aes_backend = "soft")]
    fn portable_backend_runs_the_bitsliced_cipher() {
        assert!(!aes::hardware_accelerated());
    }

    /// The keystream of every backend equals one block at a time through the portable cipher,
    /// with counters that wrap modulo 2^32 mid-stream, for both counter layouts, at lengths
    /// around both tiers' strides (8 and 16 blocks). Under Miri, a sample of them on the
    /// vector tiers (the portable backend is safe code, checked natively): on AArch64, whose
    /// AES rounds Miri runs in software at about 40 ms a round, the wrap in the first and
    /// the second stride of a message of one block and a tail, and of two strides and a tail.
    #[test]
    fn keystream_wraps_the_32_bit_counter_without_carry() {
        const MAX: usize = 513;
        let (distances, lengths): (&[u32], &[usize]) = if cfg!(all(miri, target_arch = "aarch64")) {
            (&[0, 9], &[17, 300])
        } else if cfg!(miri) {
            (&[0, 9, 17], &[1, 17, 129, 300])
        } else {
            (
                &[0, 1, 2, 7, 8, 9, 15, 16, 17],
                &[1, 15, 16, 17, 127, 128, 129, 255, 256, 257, 300, MAX],
            )
        };
        let key = [0x5Au8; 32];
        let reference = BlockCipher::new(KeyBytes::Aes256(&key), Isa::Portable);
        let ciphers: std::vec::Vec<_> = crate::cpu::isas_under_test()
            .into_iter()
            .filter(|&isa| !cfg!(miri) || !matches!(isa, Isa::Portable))
            .map(|isa| (isa, BlockCipher::new(KeyBytes::Aes256(&key), isa)))
            .collect();
        for order in [Counter32::LittleEndianFirst, Counter32::BigEndianLast] {
            for &distance_to_wrap in distances {
                let mut counter = [0xC3u8; 16];
                counter = order.advance(&counter, 0u32.wrapping_sub(u32::from_le_bytes([0xC3; 4])));
                counter = order.advance(&counter, 0xFFFF_FFFF - distance_to_wrap);
                let longest = lengths.iter().copied().max().unwrap_or(0);
                let mut expected = [0u8; MAX];
                let mut block_counter = counter;
                for chunk in expected[..longest].chunks_mut(16) {
                    let keystream = reference.encrypt_block(&block_counter);
                    chunk.copy_from_slice(&keystream[..chunk.len()]);
                    block_counter = order.advance(&block_counter, 1);
                }
                for (backend, cipher) in &ciphers {
                    for &len in lengths {
                        let mut data = [0u8; MAX];
                        cipher.apply_keystream(&counter, order, data[..len].as_mut().into());
                        assert_eq!(
                            data[..len],
                            expected[..len],
                            "{backend:?} {order:?} {distance_to_wrap} {len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn counters_wrap_within_their_32_bits() {
        let all_ones = [0xFFu8; 16];
        let mut wrapped = all_ones;
        wrapped[..4].fill(0);
        assert_eq!(Counter32::LittleEndianFirst.advance(&all_ones, 1), wrapped);
        let mut wrapped = all_ones;
        wrapped[12..].fill(0);
        assert_eq!(Counter32::BigEndianLast.advance(&all_ones, 1), wrapped);
    }
}
