//! A key with a budget: random nonces from the operating system, and a refusal once the
//! random-nonce advantage bound ([`combsiv_core::bounds::gcm_siv_random_nonces`]) would pass its
//! limit.

use alloc::vec::Vec;
use std::sync::{Mutex, PoisonError};

use zeroize::Zeroizing;

use combsiv_core::bounds::{self, RandomNonceProfile};
use combsiv_core::{DynAesGcmSiv, Error};

/// What a [`Sealer`] has encrypted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Messages sealed.
    pub messages: u64,
    /// Blocks (16 bytes, at least one per message) sealed, in total: associated data and
    /// plaintext, each padded to whole blocks, as POLYVAL reads them.
    pub blocks: u64,
    /// The longest message sealed, in blocks, associated data included.
    pub max_blocks: u64,
}

impl Usage {
    fn after(self, message_blocks: u64) -> Usage {
        Usage {
            messages: self.messages.saturating_add(1),
            blocks: self.blocks.saturating_add(message_blocks),
            max_blocks: self.max_blocks.max(message_blocks),
        }
    }

    /// log2 of the random-nonce advantage bound for this usage.
    pub fn bound_log2(&self) -> f64 {
        bounds::gcm_siv_random_nonces(&RandomNonceProfile {
            messages: self.messages as f64,
            max_blocks: self.max_blocks as f64,
        })
        .log2()
    }
}

/// AES-GCM-SIV with random 96-bit nonces drawn from the OS and a usage budget: every seal is
/// counted (thread-safely), and a seal that would take the advantage bound past the limit
/// (2^-32 by default) fails with [`Error::KeyExhausted`] before any work.
///
/// The output of [`Sealer::seal`] is `nonce || ciphertext || tag`. Either key size: a sealer
/// takes an [`Aes128GcmSiv`](combsiv_core::Aes128GcmSiv), an [`Aes256GcmSiv`](combsiv_core::Aes256GcmSiv)
/// or a [`DynAesGcmSiv`].
///
/// ```
/// use combsiv::{Aes256GcmSiv, Sealer};
///
/// let sealer = Sealer::new(Aes256GcmSiv::new(&[7; 32]));
/// let sealed = sealer.seal(b"header", b"message")?;
/// assert_eq!(sealer.open(b"header", &sealed)?, b"message");
/// assert_eq!(sealer.usage().messages, 1);
/// # Ok::<(), combsiv::Error>(())
/// ```
pub struct Sealer {
    cipher: DynAesGcmSiv,
    limit_log2: f64,
    usage: Mutex<Usage>,
}

impl core::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sealer")
            .field("cipher", &self.cipher)
            .field("limit_log2", &self.limit_log2)
            .field("usage", &self.usage())
            .finish()
    }
}

/// Nonce length of AES-GCM-SIV.
const NONCE_LEN: usize = 12;

impl Sealer {
    /// A sealer with the default limit, 2^-32.
    pub fn new(cipher: impl Into<DynAesGcmSiv>) -> Self {
        Self::with_limit(cipher, bounds::DEFAULT_LIMIT_LOG2)
    }

    /// A sealer that refuses once the bound would exceed 2^`limit_log2`.
    pub fn with_limit(cipher: impl Into<DynAesGcmSiv>, limit_log2: f64) -> Self {
        Self::resuming(cipher, limit_log2, Usage::default())
    }

    /// A sealer for a key that has already been used as much as `usage` says (for budgets
    /// kept across restarts).
    pub fn resuming(cipher: impl Into<DynAesGcmSiv>, limit_log2: f64, usage: Usage) -> Self {
        Sealer {
            cipher: cipher.into(),
            limit_log2,
            usage: Mutex::new(usage),
        }
    }

    /// What has been sealed so far.
    pub fn usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a message of `len` bytes with `aad_len` bytes of associated data against the
    /// budget, or refuses. The bound counts what POLYVAL hashes: both, padded to blocks.
    fn reserve(&self, aad_len: usize, len: usize) -> Result<(), Error> {
        let blocks = (aad_len as u64)
            .div_ceil(16)
            .saturating_add((len as u64).div_ceil(16))
            .max(1);
        let mut usage = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
        let next = usage.after(blocks);
        // A NaN limit refuses everything rather than nothing.
        let within = matches!(
            next.bound_log2().partial_cmp(&self.limit_log2),
            Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
        );
        if !within {
            return Err(Error::KeyExhausted);
        }
        *usage = next;
        Ok(())
    }

    /// Seals `buf` in place under a fresh random nonce; returns the nonce and the tag.
    pub fn seal_in_place_detached(
        &self,
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<([u8; NONCE_LEN], [u8; 16]), Error> {
        self.reserve(aad.len(), buf.len())?;
        self.seal_reserved(aad, buf)
    }

    /// Seals `buf` whose budget [`Sealer::reserve`] has granted.
    fn seal_reserved(
        &self,
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<([u8; NONCE_LEN], [u8; 16]), Error> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| Error::RandomnessUnavailable)?;
        let tag = self.cipher.encrypt_in_place_detached(&nonce, aad, buf)?;
        Ok((nonce, tag))
    }

    /// Seals `plaintext` under a fresh random nonce: `nonce || ciphertext || tag`.
    pub fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        // Refuse before copying the plaintext; should sealing still fail, the copy is wiped.
        self.reserve(aad.len(), plaintext.len())?;
        let mut out = Zeroizing::new(Vec::with_capacity(NONCE_LEN + plaintext.len() + 16));
        out.extend_from_slice(&[0; NONCE_LEN]);
        out.extend_from_slice(plaintext);
        let (nonce, tag) = self.seal_reserved(aad, &mut out[NONCE_LEN..])?;
        out[..NONCE_LEN].copy_from_slice(&nonce);
        out.extend_from_slice(&tag);
        Ok(core::mem::take(&mut *out))
    }

    /// Opens `nonce || ciphertext || tag` as produced by [`Sealer::seal`]. Opening does not
    /// count against the budget.
    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let (nonce, rest) = sealed
            .split_first_chunk::<NONCE_LEN>()
            .ok_or(Error::CiphertextTooShort)?;
        self.cipher.decrypt(nonce, aad, rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use combsiv_core::Aes128GcmSiv;

    #[test]
    fn refuses_once_the_budget_is_spent() {
        // For one-block messages the key-derivation term 3M / 2^96 dominates: a limit of
        // log2(3 * 64) - 96 allows exactly 64 messages.
        let limit = (3.0f64 * 64.0).log2() - 96.0 + 1e-6;
        let sealer = Sealer::with_limit(Aes128GcmSiv::new(&[1; 16]), limit);
        for _ in 0..64 {
            assert!(sealer.seal(b"", b"x").is_ok());
        }
        assert_eq!(sealer.seal(b"", b"x"), Err(Error::KeyExhausted));
        assert_eq!(sealer.usage().messages, 64);
        // A long message (2^20 blocks: (8 * 2^20)^2 / 2^129 = 2^-83) is refused before any
        // work, even while short ones still fit.
        let roomy = Sealer::with_limit(Aes128GcmSiv::new(&[1; 16]), limit);
        let mut long = alloc::vec![0u8; 16 << 20];
        assert_eq!(
            roomy.seal_in_place_detached(b"", &mut long),
            Err(Error::KeyExhausted)
        );
        assert!(long.iter().all(|&b| b == 0));
        assert_eq!(roomy.usage(), Usage::default());
        let confused = Sealer::with_limit(Aes128GcmSiv::new(&[1; 16]), f64::NAN);
        assert_eq!(confused.seal(b"", b"x"), Err(Error::KeyExhausted));
    }

    /// The bound counts every block POLYVAL hashes: a small message with large associated
    /// data spends as much as a large message.
    #[test]
    fn associated_data_counts_against_the_budget() {
        let sealer = Sealer::new(Aes128GcmSiv::new(&[3; 16]));
        sealer.seal(&[0; 100], b"ten bytes!").unwrap();
        let usage = sealer.usage();
        assert_eq!((usage.blocks, usage.max_blocks), (8, 8));
        let limit = (3.0f64 * 64.0).log2() - 96.0 + 1e-6;
        let tight = Sealer::with_limit(Aes128GcmSiv::new(&[1; 16]), limit);
        let mut buf = [0u8; 1];
        assert_eq!(
            tight.seal_in_place_detached(&alloc::vec![0; 16 << 20], &mut buf),
            Err(Error::KeyExhausted)
        );
    }

    #[test]
    fn nonces_are_fresh_and_counted_across_threads() {
        let sealer = Sealer::new(Aes128GcmSiv::new(&[2; 16]));
        let sealed: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| sealer.seal(b"a", b"same").unwrap_or_default()))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        assert_eq!(sealer.usage().messages, 4);
        for (i, a) in sealed.iter().enumerate() {
            assert_eq!(sealer.open(b"a", a).as_deref(), Ok(&b"same"[..]));
            for b in &sealed[i + 1..] {
                assert_ne!(a[..12], b[..12]);
            }
        }
    }
}
