//! AES-GCM-SIV, RFC 8452.
//!
//! Nonce-misuse resistant: the tag is a PRF of the nonce, the associated data and the
//! plaintext, and it is the counter-mode IV, so encrypting twice under one nonce reveals only
//! whether the two messages (and their AAD) were equal. It is not key-committing.
//!
//! Each step below quotes the RFC section it implements. This file is the reference
//! composition the fused kernels are tested against.
//!
//! Performance note: every message costs a key derivation (4 or 6 AES blocks, one key
//! expansion) and two passes over the data (POLYVAL, then CTR); see docs/ARCHITECTURE.md.

use core::marker::PhantomData;

use aead::inout::InOutBuf;

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use zeroize::Zeroize;

#[cfg(feature = "alloc")]
use super::SivJob;
#[cfg(vector_tiers)]
use super::kernels::SivMessage;
use super::{
    Hashed, KeySize, apply_keystream_and_hash, check_message_lengths, check_tag, open_or_wipe,
};
use crate::Error;
use crate::aes::{BlockCipher, KeyBytes};
use crate::cpu::Isa;
#[cfg(vector_tiers)]
use crate::cpu::Kernel;
use crate::field::{Polyval, PolyvalKey};
use crate::layout::{Layout, SivLayout};

/// Section 6: P_MAX = 2^36 bytes.
const MAX_PLAINTEXT_LEN: u64 = 1 << 36;
/// Section 6: A_MAX = 2^36 bytes.
const MAX_AAD_LEN: u64 = 1 << 36;
/// Section 4: nonces are exactly 96 bits.
const NONCE_LEN: usize = 12;

/// AES-GCM-SIV (RFC 8452) with a 128- or 256-bit key: [`crate::Aes128GcmSiv`] or
/// [`crate::Aes256GcmSiv`].
///
/// ```
/// use combsiv::Aes256GcmSiv;
///
/// let cipher = Aes256GcmSiv::new(&[0x42; 32]);
/// let nonce = [7u8; 12]; // must not repeat for different messages, but may by accident
/// let sealed = cipher.encrypt(&nonce, b"header", b"attack at dawn")?;
/// assert_eq!(cipher.decrypt(&nonce, b"header", &sealed)?, b"attack at dawn");
/// assert!(cipher.decrypt(&nonce, b"other header", &sealed).is_err());
/// # Ok::<(), combsiv::Error>(())
/// ```
#[derive(Clone)]
pub struct AesGcmSiv<K: KeySize> {
    /// Section 4: the key-generating key, from which each nonce derives its record keys. Its
    /// tier is the cipher's: the portable backend runs the reference composition below, a
    /// vector tier the fused kernels (`aead/kernels.rs`).
    key_generating_key: BlockCipher,
    key_size: PhantomData<K>,
}

/// The per-nonce keys of Section 4.
struct RecordKeys {
    authentication: [u8; 16],
    encryption: BlockCipher,
}

impl Drop for RecordKeys {
    fn drop(&mut self) {
        self.authentication.zeroize();
    }
}

impl<K: KeySize> AesGcmSiv<K> {
    pub(crate) fn from_key_bytes(key: KeyBytes<'_>, isa: Isa) -> Self {
        AesGcmSiv {
            key_generating_key: BlockCipher::new(key, isa),
            key_size: PhantomData,
        }
    }

    /// The instruction set the key runs on.
    pub(crate) fn isa(&self) -> Isa {
        self.key_generating_key.isa()
    }

    /// Encrypts `plaintext` and returns `ciphertext || tag` (16 bytes longer).
    ///
    /// Errors: [`Error::PlaintextTooLong`] or [`Error::AadTooLong`] above 2^36 bytes.
    #[cfg(feature = "alloc")]
    pub fn encrypt(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        check_lengths(aad.len(), plaintext.len())?;
        super::seal_to_vec(plaintext, |buf| {
            self.encrypt_in_place_detached(nonce, aad, buf)
        })
    }

    /// Decrypts `ciphertext || tag` and returns the plaintext.
    ///
    /// Errors: [`Error::CiphertextTooShort`] below 16 bytes, [`Error::Authentication`] if the
    /// message is not authentic, and the length errors of [`encrypt`](Self::encrypt).
    #[cfg(feature = "alloc")]
    pub fn decrypt(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        ciphertext_and_tag: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let ciphertext_len = ciphertext_and_tag.len().saturating_sub(super::TAG_LEN);
        check_lengths(aad.len(), ciphertext_len)?;
        super::open_to_vec(ciphertext_and_tag, |buf, tag| {
            self.decrypt_in_place_detached(nonce, aad, buf, tag)
        })
    }

    /// Section 4: seals the input side of `buf` into its output side (the same bytes, or a
    /// separate buffer) and returns the tag.
    pub(crate) fn seal_inout(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<[u8; 16], Error> {
        check_lengths(aad.len(), buf.len())?;
        match &self.key_generating_key {
            #[cfg(vector_tiers)]
            BlockCipher::Vector(key_generating_key, token) => {
                let message = SivMessage::new(key_generating_key, nonce, aad);
                let token = token.for_message(Kernel::SivSeal, buf.len());
                Ok(super::kernels::gcm_siv_seal(token, &message, buf))
            }
            BlockCipher::Portable(_) => {
                let keys = self.derive_record_keys(nonce);
                let tag = self.compute_tag(&keys, nonce, aad, buf.get_in());
                keys.encryption
                    .apply_keystream(&initial_counter(&tag), SivLayout::COUNTER, buf);
                Ok(tag)
            }
        }
    }

    /// Section 4 from `plaintext` into `ciphertext`, reading each plaintext byte once (the
    /// two passes, POLYVAL and counter mode, would otherwise read it twice): the vector
    /// kernels' POLYVAL pass writes what it hashed into `ciphertext` and counter mode runs
    /// there in place; the portable backend copies first.
    pub(crate) fn seal_to(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        plaintext: &[u8],
        ciphertext: &mut [u8],
    ) -> Result<[u8; 16], Error> {
        if plaintext.len() != ciphertext.len() {
            return Err(Error::InvalidLength);
        }
        check_lengths(aad.len(), plaintext.len())?;
        match &self.key_generating_key {
            #[cfg(vector_tiers)]
            BlockCipher::Vector(key_generating_key, token) => {
                let message = SivMessage::new(key_generating_key, nonce, aad);
                let token = token.for_message(Kernel::SivSeal, plaintext.len());
                let seal = super::kernels::gcm_siv_seal_copying;
                Ok(seal(token, &message, plaintext, ciphertext))
            }
            BlockCipher::Portable(_) => {
                ciphertext.copy_from_slice(plaintext);
                self.seal_inout(nonce, aad, ciphertext.into())
            }
        }
    }

    /// Section 5: opens the input side of `buf` into its output side if `tag` authenticates
    /// it. On any error the output side is zeroed.
    pub(crate) fn open_inout(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: InOutBuf<'_, '_, u8>,
        tag: &[u8; 16],
    ) -> Result<(), Error> {
        open_or_wipe(buf, |buf| {
            check_lengths(aad.len(), buf.len())?;
            let expected = match &self.key_generating_key {
                // Derivation, counter mode fused with POLYVAL, and the tag, in one kernel.
                #[cfg(vector_tiers)]
                BlockCipher::Vector(key_generating_key, token) => {
                    let message = SivMessage::new(key_generating_key, nonce, aad);
                    let token = token.for_message(Kernel::SivOpen, buf.len());
                    if token.schoolbook_stitched() {
                        super::kernels::gcm_siv_open::<true>(token, &message, buf, tag)
                    } else {
                        super::kernels::gcm_siv_open::<false>(token, &message, buf, tag)
                    }
                }
                // Section 5: decrypt with the counter taken from the received tag, then
                // recompute the tag over the resulting plaintext.
                BlockCipher::Portable(_) => {
                    let keys = self.derive_record_keys(nonce);
                    let hash_key = self.polyval_key(&keys, aad.len(), buf.len());
                    let mut polyval = Polyval::new(hash_key.as_hash_key());
                    polyval.update_padded(aad);
                    let counter = initial_counter(tag);
                    let lengths = length_block(aad.len(), buf.len());
                    apply_keystream_and_hash(
                        &keys.encryption,
                        &mut polyval,
                        (&counter, Hashed::Output),
                        buf,
                        &lengths,
                    );
                    self.tag_from_polyval(&keys, polyval.finish(), nonce)
                }
            };
            check_tag(&expected, tag)
        })
    }

    /// Seals every job in place and writes its tag. Length errors are reported before any
    /// work.
    ///
    /// Performance: on x86 the whole batch is one kernel call. Short and medium messages (up
    /// to 64 POLYVAL blocks with VAES, about 1000 bytes; 24 on AES-NI, about 370) run in
    /// groups of 4 (AES-NI) or 8 (VAES, two per register), every step of RFC 8452 across the
    /// group, so that their latency chains overlap; longer messages run the single-message
    /// kernel's steps, pipelined so that one message's key setup and tag overlap another's
    /// counter mode. Any mix of lengths, AAD and nonces is fine. Against the loop over
    /// [`encrypt_in_place_detached`](Self::encrypt_in_place_detached) it ran 64-byte messages
    /// at least 1.35x as fast with VAES on Zen 3, and was never slower beyond noise (the runs:
    /// docs/measurements/2026-11-25-zen3-aead-comb-batch.md).
    ///
    /// A batch of at least twice [`MIN_BYTES_PER_THREAD`](combsiv_parallel::MIN_BYTES_PER_THREAD)
    /// bytes runs on several cores (see [`seal_batch_with_threads`](Self::seal_batch_with_threads)).
    #[cfg(feature = "alloc")]
    pub fn seal_batch(&self, jobs: &mut [SivJob<'_>]) -> Result<(), Error> {
        #[cfg(feature = "std")]
        return self.seal_batch_with_threads(jobs, 0);
        #[cfg(not(feature = "std"))]
        {
            check_batch_lengths(jobs)?;
            self.seal_jobs(jobs)
        }
    }

    /// [`seal_batch`](Self::seal_batch) on `threads` threads (0: one per core, but only as
    /// many as give each thread [`MIN_BYTES_PER_THREAD`](combsiv_parallel::MIN_BYTES_PER_THREAD)
    /// bytes, so a small batch stays on this thread). The batch is cut into contiguous parts
    /// of about equal bytes, each sealed as `seal_batch` seals; the result is the same as on
    /// one thread.
    #[cfg(feature = "std")]
    pub fn seal_batch_with_threads(
        &self,
        jobs: &mut [SivJob<'_>],
        threads: usize,
    ) -> Result<(), Error> {
        check_batch_lengths(jobs)?;
        let failed = std::sync::Mutex::new(None);
        combsiv_parallel::for_each_part(jobs, batch_weight, threads, |part| {
            if let Err(error) = self.seal_jobs(part) {
                *failed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(error);
            }
        });
        match failed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Every job sealed on this thread; the lengths were checked.
    #[cfg(feature = "alloc")]
    fn seal_jobs(&self, jobs: &mut [SivJob<'_>]) -> Result<(), Error> {
        match &self.key_generating_key {
            #[cfg(vector_tiers)]
            BlockCipher::Vector(key_generating_key, token) => {
                super::batch::gcm_siv_seal_jobs(*token, key_generating_key, jobs);
            }
            BlockCipher::Portable(_) => {
                for job in jobs.iter_mut() {
                    job.tag = self.encrypt_in_place_detached(&job.nonce, job.aad, job.data)?;
                }
            }
        }
        Ok(())
    }

    /// Opens every job whose tag authenticates it and sets `authentic`; each job that fails is
    /// zeroed, and the call returns [`Error::Authentication`] if any failed. A job whose
    /// lengths exceed RFC 8452's limits fails the whole call before any work: every
    /// `authentic` is false and every job zeroed. A large batch runs on several cores, as
    /// [`seal_batch`](Self::seal_batch) does.
    #[cfg(feature = "alloc")]
    pub fn open_batch(&self, jobs: &mut [SivJob<'_>]) -> Result<(), Error> {
        #[cfg(feature = "std")]
        return self.open_batch_with_threads(jobs, 0);
        #[cfg(not(feature = "std"))]
        {
            self.refuse_batch_lengths(jobs)?;
            self.open_jobs(jobs);
            batch_verdict(jobs)
        }
    }

    /// [`open_batch`](Self::open_batch) on `threads` threads, cut as
    /// [`seal_batch_with_threads`](Self::seal_batch_with_threads) cuts.
    #[cfg(feature = "std")]
    pub fn open_batch_with_threads(
        &self,
        jobs: &mut [SivJob<'_>],
        threads: usize,
    ) -> Result<(), Error> {
        self.refuse_batch_lengths(jobs)?;
        combsiv_parallel::for_each_part(jobs, batch_weight, threads, |part| self.open_jobs(part));
        batch_verdict(jobs)
    }

    /// Every job marked not authentic; if any job's lengths exceed the limits, every job
    /// zeroed and the error.
    #[cfg(feature = "alloc")]
    fn refuse_batch_lengths(&self, jobs: &mut [SivJob<'_>]) -> Result<(), Error> {
        for job in jobs.iter_mut() {
            job.authentic = false;
        }
        if let Err(error) = check_batch_lengths(jobs) {
            // Nothing is opened: every job fails, zeroed as any failed decryption is.
            for job in jobs.iter_mut() {
                super::refuse_wiped(job.data, error);
            }
            return Err(error);
        }
        Ok(())
    }

    /// Every job opened on this thread; the lengths were checked.
    #[cfg(feature = "alloc")]
    fn open_jobs(&self, jobs: &mut [SivJob<'_>]) {
        match &self.key_generating_key {
            #[cfg(vector_tiers)]
            BlockCipher::Vector(key_generating_key, token) => {
                super::batch::gcm_siv_open_jobs(*token, key_generating_key, jobs);
            }
            BlockCipher::Portable(_) => {
                for job in jobs.iter_mut() {
                    job.authentic = self
                        .decrypt_in_place_detached(&job.nonce, job.aad, job.data, &job.tag)
                        .is_ok();
                }
            }
        }
    }

    /// The reference derivation; backends with whole-message kernels derive in registers.
    fn derive_record_keys(&self, nonce: &[u8; NONCE_LEN]) -> RecordKeys {
        let (authentication, mut encryption_key) = self.derive_record_key_material(nonce);
        let encryption = BlockCipher::new(K::key_bytes(&encryption_key), self.isa());
        encryption_key.zeroize();
        RecordKeys {
            authentication,
            encryption,
        }
    }

    /// Section 4: the record keys are the first halves of AES_K(LE32(i) || nonce) for
    /// i = 0, 1 (authentication key) and i = 2..4 or 2..6 (encryption key, as long as K).
    fn derive_record_key_material(&self, nonce: &[u8; NONCE_LEN]) -> ([u8; 16], K::Key) {
        let mut encryption_key = K::Key::default();
        let used = 2 + encryption_key.as_ref().len() / 8;
        let mut blocks = [[0u8; 16]; 6];
        for (i, block) in blocks.iter_mut().enumerate().take(used) {
            block[..4].copy_from_slice(&(i as u32).to_le_bytes());
            block[4..].copy_from_slice(nonce);
        }
        self.key_generating_key.encrypt_blocks(&mut blocks[..used]);
        let mut authentication = [0u8; 16];
        authentication[..8].copy_from_slice(&blocks[0][..8]);
        authentication[8..].copy_from_slice(&blocks[1][..8]);
        for (half, block) in encryption_key
            .as_mut()
            .chunks_exact_mut(8)
            .zip(&blocks[2..used])
        {
            half.copy_from_slice(&block[..8]);
        }
        blocks.zeroize();
        (authentication, encryption_key)
    }

    /// Section 4: tag = AES(record encryption key, POLYVAL result with the nonce XORed into its
    /// first 12 bytes and the top bit of byte 15 cleared).
    fn compute_tag(
        &self,
        keys: &RecordKeys,
        nonce: &[u8; 12],
        aad: &[u8],
        plaintext: &[u8],
    ) -> [u8; 16] {
        let hash_key = self.polyval_key(keys, aad.len(), plaintext.len());
        let mut polyval = Polyval::new(hash_key.as_hash_key());
        polyval.update_padded(aad);
        polyval.update_padded(plaintext);
        polyval.update_block(&length_block(aad.len(), plaintext.len()));
        self.tag_from_polyval(keys, polyval.finish(), nonce)
    }

    /// The POLYVAL key, with as many precomputed powers as the message can use.
    fn polyval_key(&self, keys: &RecordKeys, aad_len: usize, plaintext_len: usize) -> PolyvalKey {
        let blocks = aad_len.div_ceil(16) + plaintext_len.div_ceil(16) + 1;
        PolyvalKey::new(&keys.authentication, self.isa(), blocks)
    }

    fn tag_from_polyval(&self, keys: &RecordKeys, mut s: [u8; 16], nonce: &[u8; 12]) -> [u8; 16] {
        for (byte, nonce_byte) in s.iter_mut().zip(nonce) {
            *byte ^= nonce_byte;
        }
        s[15] &= 0x7f;
        let tag = keys.encryption.encrypt_block(&s);
        s.zeroize();
        tag
    }
}

/// Section 4: the length block holds the bit lengths of the AAD and the plaintext as two
/// little-endian 64-bit integers, AAD first.
fn length_block(aad_len: usize, plaintext_len: usize) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&(aad_len as u64 * 8).to_le_bytes());
    block[8..].copy_from_slice(&(plaintext_len as u64 * 8).to_le_bytes());
    block
}

/// Section 4: the counter block is the tag with the top bit of byte 15 set; its first four
/// bytes are a little-endian counter that wraps modulo 2^32.
fn initial_counter(tag: &[u8; 16]) -> [u8; 16] {
    let mut counter = *tag;
    counter[15] |= 0x80;
    counter
}

/// [`check_lengths`] for every job of a batch.
#[cfg(feature = "alloc")]
fn check_batch_lengths(jobs: &[SivJob<'_>]) -> Result<(), Error> {
    jobs.iter()
        .try_for_each(|job| check_lengths(job.aad.len(), job.data.len()))
}

/// A job's share of a batch's work, for cutting it across threads: its bytes, plus 64 for
/// the per-message work (record keys, tag), which costs about as much as 64 bytes of data.
#[cfg(feature = "std")]
fn batch_weight(job: &SivJob<'_>) -> usize {
    job.aad.len() + job.data.len() + 64
}

/// A batch open's result: [`Error::Authentication`] unless every job was authentic.
#[cfg(feature = "alloc")]
fn batch_verdict(jobs: &[SivJob<'_>]) -> Result<(), Error> {
    if jobs.iter().all(|job| job.authentic) {
        Ok(())
    } else {
        Err(Error::Authentication)
    }
}

/// Section 6, checked before any work.
pub(crate) fn check_lengths(aad_len: usize, plaintext_len: usize) -> Result<(), Error> {
    check_message_lengths((aad_len, MAX_AAD_LEN), (plaintext_len, MAX_PLAINTEXT_LEN))
}

super::impl_common_surface!(AesGcmSiv);
super::impl_rustcrypto_traits!(AesGcmSiv);

#[cfg(test)]
mod tests;
