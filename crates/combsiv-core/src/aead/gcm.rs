//! AES-GCM, NIST SP 800-38D.
//!
//! Each step quotes the section of SP 800-38D it implements. GHASH is computed with POLYVAL
//! (RFC 8452 Appendix A; see the `field` module), so both AEADs share one field
//! implementation. Unlike AES-GCM-SIV, a repeated nonce here reveals the XOR of the two
//! plaintexts and lets an attacker forge tags: nonces must never repeat under one key.

use core::marker::PhantomData;

use aead::inout::InOutBuf;

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use zeroize::Zeroize;

use super::{
    Hashed, KeySize, apply_keystream_and_hash, check_message_lengths, check_tag, open_or_wipe,
    within,
};
use crate::Error;
#[cfg(vector_tiers)]
use crate::aes::kernels::RoundKeys;
use crate::aes::{BlockCipher, KeyBytes};
use crate::cpu::Isa;
#[cfg(vector_tiers)]
use crate::cpu::{Kernel, TierToken};
use crate::field::{Ghash, HashKey, PolyvalKey};
use crate::layout::{GcmLayout, Layout};

/// Section 5.2.1.1: len(P) <= 2^39 - 256 bits.
const MAX_PLAINTEXT_LEN: u64 = (1 << 36) - 32;
/// Section 5.2.1.1: len(A) <= 2^64 - 1 bits, so at most 2^61 - 1 whole bytes.
const MAX_AAD_LEN: u64 = (1 << 61) - 1;
/// Section 5.2.1.1: 1 <= len(IV) <= 2^64 - 1 bits.
const MAX_IV_LEN: u64 = (1 << 61) - 1;

/// AES-GCM (SP 800-38D) with a 128- or 256-bit key: [`crate::Aes128Gcm`] or
/// [`crate::Aes256Gcm`].
///
/// ```
/// use combsiv::Aes128Gcm;
///
/// let cipher = Aes128Gcm::new(&[0x42; 16]);
/// let nonce = [1u8; 12]; // must NEVER repeat under one key
/// let sealed = cipher.encrypt(&nonce, b"", b"hello")?;
/// assert_eq!(cipher.decrypt(&nonce, b"", &sealed)?, b"hello");
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone)]
pub struct AesGcm<K: KeySize> {
    key: GcmKey,
    key_size: PhantomData<K>,
}

/// A key of one tier: the AES schedule and, Section 6.4, H = CIPH_K(0^128) as the POLYVAL key
/// that computes GHASH_H, built together on one instruction set.
#[derive(Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "boxing would need an allocator; a key lives in one place and is not moved often"
)]
enum GcmKey {
    /// The reference composition of AES and GHASH, on the portable backend.
    Portable { aes: BlockCipher, ghash: PolyvalKey },
    /// A vector tier: one pass of counter mode fused with GHASH.
    #[cfg(vector_tiers)]
    Vector {
        token: TierToken,
        aes: RoundKeys,
        ghash: crate::field::kernels::PowerTable,
    },
}

impl GcmKey {
    fn ghash(&self) -> HashKey<'_> {
        match self {
            GcmKey::Portable { ghash, .. } => ghash.as_hash_key(),
            #[cfg(vector_tiers)]
            GcmKey::Vector { token, ghash, .. } => HashKey::Vector(ghash, *token),
        }
    }

    fn encrypt_block(&self, block: &[u8; 16]) -> [u8; 16] {
        match self {
            GcmKey::Portable { aes, .. } => aes.encrypt_block(block),
            #[cfg(vector_tiers)]
            GcmKey::Vector { token, aes, .. } => {
                let mut out = *block;
                aes.encrypt_blocks(*token, core::slice::from_mut(&mut out));
                out
            }
        }
    }
}

impl<K: KeySize> AesGcm<K> {
    pub(crate) fn from_key_bytes(key: KeyBytes<'_>, isa: Isa) -> Self {
        let key = match isa {
            Isa::Portable => {
                let aes = BlockCipher::new(key, isa);
                let mut h = aes.encrypt_block(&[0; 16]);
                let ghash = PolyvalKey::for_ghash(&h, isa);
                h.zeroize();
                GcmKey::Portable { aes, ghash }
            }
            #[cfg(vector_tiers)]
            Isa::Vector(token) => {
                let aes = RoundKeys::new(token, key);
                let mut h = [0; 16];
                aes.encrypt_blocks(token, core::slice::from_mut(&mut h));
                let mut polyval_h = crate::field::polyval_key_for_ghash(&h);
                let ghash = crate::field::kernels::PowerTable::new(token, &polyval_h, usize::MAX);
                h.zeroize();
                polyval_h.zeroize();
                GcmKey::Vector { token, aes, ghash }
            }
        };
        AesGcm {
            key,
            key_size: PhantomData,
        }
    }

    /// The instruction set the key runs on.
    pub(crate) fn isa(&self) -> Isa {
        match &self.key {
            GcmKey::Portable { aes, .. } => aes.isa(),
            #[cfg(vector_tiers)]
            GcmKey::Vector { token, .. } => Isa::Vector(*token),
        }
    }

    /// Encrypts with a 96-bit nonce and returns `ciphertext || tag`.
    #[cfg(feature = "alloc")]
    pub fn encrypt(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        self.encrypt_with_iv(nonce, aad, plaintext)
    }

    /// Decrypts `ciphertext || tag` sealed with a 96-bit nonce.
    #[cfg(feature = "alloc")]
    pub fn decrypt(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<Vec<u8>, Error> {
        self.decrypt_with_iv(nonce, aad, ciphertext_and_tag)
    }

    /// Encrypts with an IV of any non-empty length (Section 7.1 derives J0 from it with GHASH
    /// when it is not 96 bits). Prefer 96-bit nonces: other lengths are slower and, if random,
    /// collide sooner.
    #[cfg(feature = "alloc")]
    pub fn encrypt_with_iv(
        &self,
        iv: &[u8],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        check_lengths(iv.len(), aad.len(), plaintext.len())?;
        super::seal_to_vec(plaintext, |buf| self.seal_inout(iv, aad, buf.into()))
    }

    /// Decrypts `ciphertext || tag` sealed with [`encrypt_with_iv`](Self::encrypt_with_iv).
    #[cfg(feature = "alloc")]
    pub fn decrypt_with_iv(
        &self,
        iv: &[u8],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let ciphertext_len = ciphertext_and_tag.len().saturating_sub(super::TAG_LEN);
        check_lengths(iv.len(), aad.len(), ciphertext_len)?;
        super::open_to_vec(ciphertext_and_tag, |buf, tag| {
            self.open_inout(iv, aad, buf.into(), tag)
        })
    }

    /// Algorithm 4 (GCM-AE): C = GCTR(inc32(J0), P), T = GCTR(J0, S). Encryption and GHASH
    /// over the ciphertext run as one pass where the backend fuses them.
    pub(crate) fn seal_inout(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<[u8; 16], Error> {
        check_lengths(iv.len(), aad.len(), buf.len())?;
        let j0 = self.pre_counter_block(iv);
        Ok(self.encrypt_or_decrypt(&j0, aad, buf, Hashed::Output))
    }

    /// [`seal_inout`](Self::seal_inout) from `plaintext` into `ciphertext`, which reads
    /// each plaintext byte once as it is: GHASH reads the ciphertext it wrote.
    pub(crate) fn seal_to(
        &self,
        iv: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        ciphertext: &mut [u8],
    ) -> Result<[u8; 16], Error> {
        self.seal_inout(iv, aad, super::in_out(plaintext, ciphertext)?)
    }

    /// Algorithm 5 (GCM-AD), in one pass: GHASH reads the ciphertext while it is decrypted,
    /// and on a tag mismatch `open_or_wipe` zeroes the decrypted buffer.
    pub(crate) fn open_inout(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: InOutBuf<'_, '_, u8>,
        tag: &[u8; 16],
    ) -> Result<(), Error> {
        open_or_wipe(buf, |buf| {
            check_lengths(iv.len(), aad.len(), buf.len())?;
            let j0 = self.pre_counter_block(iv);
            check_tag(&self.encrypt_or_decrypt(&j0, aad, buf, Hashed::Input), tag)
        })
    }

    /// GCTR from inc32(J0) over `buf` (input side to output side), and the tag of the
    /// ciphertext side (`hashed`).
    fn encrypt_or_decrypt(
        &self,
        j0: &PreCounterBlock,
        aad: &[u8],
        buf: InOutBuf<'_, '_, u8>,
        hashed: Hashed,
    ) -> [u8; 16] {
        // Step 6's mask GCTR_K(J0) first: it does not depend on the data, so its AES latency
        // overlaps the pass over the data instead of following it.
        let mask = self.key.encrypt_block(&j0.block);
        let mut ghash = Ghash::new(self.key.ghash());
        ghash.update_padded(aad);
        let counter = j0.first_counter();
        let lengths = length_block(aad.len(), buf.len());
        match &self.key {
            GcmKey::Portable { aes, .. } => {
                apply_keystream_and_hash(aes, &mut ghash, (&counter.0, hashed), buf, &lengths);
            }
            #[cfg(vector_tiers)]
            GcmKey::Vector {
                token,
                aes,
                ghash: key,
            } => {
                let start = (&counter.0, counter.1, hashed);
                let state = ghash.state();
                // The table holds the powers of every width.
                let token = token.for_message(Kernel::Gcm, buf.len());
                if token.schoolbook_stitched() {
                    let ctr_and_hash = super::kernels::ctr_and_hash::<GcmLayout, true>;
                    ctr_and_hash(token, aes, key, state, start, buf, &lengths);
                } else {
                    let ctr_and_hash = super::kernels::ctr_and_hash::<GcmLayout, false>;
                    ctr_and_hash(token, aes, key, state, start, buf, &lengths);
                }
            }
        }
        tag_from_ghash(ghash, mask)
    }

    /// Algorithm 4 step 2: J0 = IV || 0^31 || 1 for a 96-bit IV, otherwise
    /// J0 = GHASH_H(IV || 0^s || [0]_64 || [len(IV)]_64).
    fn pre_counter_block(&self, iv: &[u8]) -> PreCounterBlock {
        let mut block = [0u8; 16];
        let mut public_count = None;
        if iv.len() == 12 {
            block[..12].copy_from_slice(iv);
            block[15] = 1;
            public_count = Some(1);
        } else {
            let mut ghash = Ghash::new(self.key.ghash());
            ghash.update_padded(iv);
            let mut length = [0u8; 16];
            length[8..].copy_from_slice(&(iv.len() as u64 * 8).to_be_bytes());
            ghash.update_block(&length);
            block = ghash.finish();
        }
        PreCounterBlock {
            block,
            public_count,
        }
    }
}

/// J0, and its 32-bit count (the last four bytes, big-endian) where that is public: from a
/// 96-bit IV the count is 1 whatever the IV, so that block i of the plaintext counts 2 + i;
/// from another IV length J0 is a GHASH under the key, which no branch may depend on.
struct PreCounterBlock {
    block: [u8; 16],
    public_count: Option<u32>,
}

impl PreCounterBlock {
    /// inc32(J0), the first counter block of the plaintext, and its count where public.
    fn first_counter(&self) -> ([u8; 16], Option<u32>) {
        let block = GcmLayout::COUNTER.advance(&self.block, 1);
        (block, self.public_count.map(|count| count.wrapping_add(1)))
    }
}

/// Algorithm 4 step 6: T = MSB_t(GCTR_K(J0, S)) with t = 128, where `mask` is CIPH_K(J0) and
/// `ghash` has absorbed everything S covers. (As 16-byte integers: one XOR and one store to
/// wipe, not sixteen.)
fn tag_from_ghash(ghash: Ghash<'_>, mask: [u8; 16]) -> [u8; 16] {
    let mut mask = u128::from_ne_bytes(mask);
    let tag = u128::from_ne_bytes(ghash.finish()) ^ mask;
    mask.zeroize();
    tag.to_ne_bytes()
}

/// Algorithm 4 step 5: the block [len(A)]_64 || [len(C)]_64 that ends GHASH's input
/// S = GHASH_H(A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64).
fn length_block(aad_len: usize, ciphertext_len: usize) -> [u8; 16] {
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad_len as u64 * 8).to_be_bytes());
    lengths[8..].copy_from_slice(&(ciphertext_len as u64 * 8).to_be_bytes());
    lengths
}

/// Section 5.2.1.1, checked before any work.
pub(crate) fn check_lengths(
    iv_len: usize,
    aad_len: usize,
    plaintext_len: usize,
) -> Result<(), Error> {
    if iv_len == 0 || !within(iv_len, MAX_IV_LEN) {
        return Err(Error::InvalidNonceLength);
    }
    check_message_lengths((aad_len, MAX_AAD_LEN), (plaintext_len, MAX_PLAINTEXT_LEN))
}

super::impl_common_surface!(AesGcm);
super::impl_rustcrypto_traits!(AesGcm);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aead::probe;

    /// Open must hash and decrypt each ciphertext block from one fetch: a writer that flips a
    /// ciphertext bit after the hash read it must not get the flipped block decrypted and
    /// accepted (the XOR of the flip with the plaintext, returned as authentic). Either the
    /// open fails or it returns exactly the plaintext. Lengths: width 1 (one partial
    /// stride), and whole strides plus a tail on the wide x86 tiers (700 bytes: more than a
    /// stride of 32 blocks).
    #[test]
    fn open_decrypts_what_it_hashed() {
        for isa in crate::cpu::isas_under_test() {
            let cipher = AesGcm::<crate::Aes128>::with_isa(&[7; 16], isa);
            for len in [40, 300, 700] {
                let plaintext: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let mut buf = plaintext.clone();
                let nonce = [len as u8; 12];
                let tag = cipher
                    .encrypt_in_place_detached(&nonce, b"ad", &mut buf)
                    .unwrap();
                let flip = |buf: &mut [u8], offset: usize| buf[offset] ^= 1;
                let (opened, fetches) = probe::with_hook(flip, || {
                    cipher.decrypt_in_place_detached(&nonce, b"ad", &mut buf, &tag)
                });
                assert!(fetches > 0, "{isa:?} {len}: the probe never ran");
                assert!(
                    opened.is_err() || buf == plaintext,
                    "{isa:?} {len}: a block changed after its fetch was decrypted and accepted"
                );
            }
        }
    }

    /// Every backend seals what the first one seals and opens it, at every length through
    /// four strides of the widest tier (under Miri a sample, and the vector backends only:
    /// the portable one's software AES is slow there), with each choice of the stitched
    /// loops' products (the stitched loop runs from the second stride on), and with short
    /// messages on the tier the length picks and on the key's own.
    #[test]
    fn every_backend_seals_alike_at_every_length() {
        crate::cpu::with_and_without_length_dispatch(every_backend_at_every_length);
    }

    fn every_backend_at_every_length() {
        use alloc::{format, vec};
        let lengths: Vec<usize> = if cfg!(miri) {
            vec![0, 17, 1024, 1551]
        } else {
            (0..=2100).collect()
        };
        let plaintext: Vec<u8> = (0..2100).map(|i| (i * 13) as u8).collect();
        crate::cpu::for_each_stitched_product(|_| {
            let ciphers: Vec<_> = crate::cpu::isas_under_test()
                .into_iter()
                .filter(|&isa| !cfg!(miri) || !matches!(isa, Isa::Portable))
                .map(|isa| AesGcm::<crate::Aes128>::with_isa(&[9; 16], isa))
                .collect();
            for &len in &lengths {
                let (nonce, aad) = ([len as u8; 12], &b"associated data"[..len % 16]);
                let mut first: Option<(Vec<u8>, [u8; 16])> = None;
                for cipher in &ciphers {
                    let context = format!("{:?} len {len}", cipher.backend());
                    let mut buf = plaintext[..len].to_vec();
                    let tag = cipher
                        .encrypt_in_place_detached(&nonce, aad, &mut buf)
                        .unwrap();
                    let sealed = (buf.clone(), tag);
                    match &first {
                        None => first = Some(sealed),
                        Some(first) => assert_eq!(&sealed, first, "{context}"),
                    }
                    let opened = cipher.decrypt_in_place_detached(&nonce, aad, &mut buf, &tag);
                    assert_eq!((opened, &buf[..]), (Ok(()), &plaintext[..len]), "{context}");
                }
            }
        });
    }

    /// With a 96-bit IV the count is public, and the vector tiers add to GCM's big-endian
    /// counter without byte swaps while byte 15 does not carry. Starting `k` blocks below each
    /// carry of the count (into bytes 14, 13 and 12, and the wrap of all 32 bits), for every
    /// `k` up to two strides of the widest tier and a register more, every backend's
    /// ciphertext is the plaintext XOR AES of inc32's counter blocks (the block cipher alone,
    /// no counter code), and every backend's tag is the first one's. A carry lost on the
    /// fast path would repeat a counter block: keystream reuse. Under Miri, the wrap alone,
    /// at the distances where each tier's stride ends exactly at it or a register past it.
    #[test]
    fn a_public_count_carries_into_every_byte() {
        let (boundaries, distances, blocks): (&[u64], Vec<u64>, usize) = if cfg!(miri) {
            (&[1 << 32], alloc::vec![8, 9, 16, 18, 32, 36], 48)
        } else {
            (
                &[1 << 8, 1 << 16, 1 << 24, 1 << 32],
                (0..=68).collect(),
                5 * 32,
            )
        };
        let key = [0x3Cu8; 16];
        let plaintext: Vec<u8> = (0..blocks * 16 + 7).map(|i| (i * 7) as u8).collect();
        let isas = crate::cpu::isas_under_test()
            .into_iter()
            .filter(|&isa| !cfg!(miri) || !matches!(isa, Isa::Portable));
        let mut first_tags = Vec::new();
        for (i, isa) in isas.enumerate() {
            let cipher = AesGcm::<crate::Aes128>::with_isa(&key, isa);
            let block_cipher = BlockCipher::new(KeyBytes::Aes128(&key), isa);
            let starts = boundaries
                .iter()
                .flat_map(|b| distances.iter().map(move |k| (b, k)));
            for (n, (&boundary, &k)) in starts.enumerate() {
                let count = (boundary - k) as u32;
                let mut block = [0xA5u8; 16];
                block[12..].copy_from_slice(&count.wrapping_sub(1).to_be_bytes());
                let j0 = PreCounterBlock {
                    block,
                    public_count: Some(count.wrapping_sub(1)),
                };
                let mut buf = plaintext.clone();
                let tag = cipher.encrypt_or_decrypt(
                    &j0,
                    b"ad",
                    buf.as_mut_slice().into(),
                    Hashed::Output,
                );
                let mut counter = j0.first_counter().0;
                for (at, (sealed, plain)) in buf.chunks(16).zip(plaintext.chunks(16)).enumerate() {
                    let keystream = block_cipher.encrypt_block(&counter);
                    let expected: Vec<u8> =
                        plain.iter().zip(keystream).map(|(p, k)| p ^ k).collect();
                    assert_eq!(
                        sealed,
                        &expected[..],
                        "{isa:?}: count {count:#x}, block {at}"
                    );
                    counter = GcmLayout::COUNTER.advance(&counter, 1);
                }
                match i {
                    0 => first_tags.push(tag),
                    _ => assert_eq!(tag, first_tags[n], "{isa:?}: count {count:#x}"),
                }
            }
        }
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn length_limits_match_sp_800_38d() {
        let max_plaintext = (1usize << 36) - 32;
        let max_aad = (1usize << 61) - 1;
        assert_eq!(check_lengths(12, max_aad, max_plaintext), Ok(()));
        assert_eq!(
            check_lengths(12, 0, max_plaintext + 1),
            Err(Error::PlaintextTooLong)
        );
        assert_eq!(check_lengths(12, max_aad + 1, 0), Err(Error::AadTooLong));
        assert_eq!(check_lengths(0, 0, 0), Err(Error::InvalidNonceLength));
        assert_eq!(check_lengths(max_aad, 0, 0), Ok(()));
        assert_eq!(
            check_lengths(max_aad + 1, 0, 0),
            Err(Error::InvalidNonceLength)
        );
    }
}
