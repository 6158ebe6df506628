//! How much data one AES-GCM-SIV key may encrypt: the security bounds of Gueron, Langley and
//! Lindell, "AES-GCM-SIV: Specification and Analysis", sections 6.1-6.3, as a calculator.
//!
//! An advantage bound is an upper limit on the probability that an adversary who sees every
//! ciphertext (and may ask for decryptions) can tell AES-GCM-SIV from an ideal scheme. NIST's
//! customary ceiling, and our default, is 2^-32. Every term is computed as a base-2 logarithm
//! from counts given as `f64`, because the interesting counts (2^64 nonces) do not fit a `u64`.
//!
//! # The terms
//!
//! With N distinct nonces, Q messages per nonce, messages of at most L blocks (16 bytes),
//! m = ceil(log2(L + 1)) (the paper's messages have at most 2^m - 1 blocks) and Bmax = Q * L
//! blocks encrypted under any one nonce:
//!
//! | term | formula | what it pays for |
//! |---|---|---|
//! | key derivation | 3N / 2^96 | the per-nonce keys are AES outputs, not random keys |
//! | per-nonce keys | N * Bmax^2 / 2^129 | AES-CTR and POLYVAL under each derived key: a birthday bound over the blocks one nonce encrypts |
//! | repeated nonces | N * Q^2 / 2^(126 - m) | two different messages under one nonce whose tags (synthetic IVs) collide: they share a keystream, so this event breaks confidentiality outright, not just by a distinguishing margin |
//!
//! The per-nonce term dominates almost always: it is quadratic in the blocks one nonce
//! encrypts, so long messages or heavy nonce reuse exhaust it first. The repeated-nonce term
//! matters only for very short messages repeated under one nonce. The key-derivation term is
//! what finally limits the *number* of nonces (about 2^62). With random 96-bit nonces
//! (section 6.2) the repeated-nonce term disappears (a random nonce repeats at most a few
//! times) and Bmax is taken as 8 * L, the reading that reproduces the paper's Table 2.
//!
//! Assumptions of every figure here: no forgery attempts are counted (each decryption
//! query an adversary makes adds to the bound), there is no associated data (AAD adds to
//! the blocks POLYVAL hashes), and every message has the full length L. A profile whose
//! messages exceed RFC 8452's limit of 2^36 bytes (2^32 blocks) is outside the scheme:
//! [`Bound::within`] is false for it whatever the terms say.
//!
//! For comparison, AES-GCM with random 96-bit nonces is limited by nonce collisions
//! (M^2 / 2^97 for M messages): about 2^32 messages in total, whatever their length.
//!
//! # The published tables
//!
//! [`NONCE_TABLE`] and [`RANDOM_NONCE_TABLE`] are the usage-bounds tables of the AES-GCM-SIV
//! web page (Gueron, Langley, Lindell), which states every row to be within 2^-32. Checked
//! against the formula above (the tests do), the random-nonce rows hold in the per-nonce term
//! (2^-33 each; the last fails by the key-derivation term, 2^-30.4 at 2^64 messages),
//! but the many-nonce rows omit the dominant per-nonce term: 2^64 nonces x 2^10 repeats x
//! 2^10 blocks is 2^-25 (the paper's own Table 2 says the same), and 2^32 x 2^10 x 2^42 is
//! 2^7. Their repeated-nonce term is exactly 2^-32 only with m = log2(L); messages of L =
//! 2^k blocks need m = k + 1, which makes it 2^-31. The last fixed-nonce row is exactly at
//! the limit (2^-33 + 2^-33). Five rows also allow messages of 2^34 to
//! 2^56 blocks, beyond the 2^32-block limit of RFC 8452. Use the calculator, not the rows.
//!
//! ```
//! use combsiv::bounds::{NonceProfile, gcm_siv_nonce_based};
//!
//! // 2^32 nonces, each used for up to 2^6 messages of at most 2^16 blocks (1 MiB).
//! let bound = gcm_siv_nonce_based(&NonceProfile {
//!     nonces: 2f64.powi(32),
//!     per_nonce: 64.0,
//!     max_blocks: 65536.0,
//! });
//! assert!(bound.within(combsiv::bounds::DEFAULT_LIMIT_LOG2));
//! assert!(bound.log2() < -32.0);
//! ```

use alloc::vec;
use alloc::vec::Vec;

/// log2 of the default advantage limit, 2^-32 (NIST's customary ceiling).
pub const DEFAULT_LIMIT_LOG2: f64 = -32.0;

/// RFC 8452's longest plaintext, 2^36 bytes, in 16-byte blocks.
pub const MAX_MESSAGE_BLOCKS: f64 = 4_294_967_296.0;

/// One term of an advantage bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Term {
    /// What the term pays for.
    pub name: &'static str,
    /// The formula, in the notation of the module documentation.
    pub formula: &'static str,
    /// log2 of the term's value.
    pub log2: f64,
}

/// An advantage bound: a sum of terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    terms: Vec<Term>,
    over_length_limit: bool,
}

impl Bound {
    /// The terms, in the order of the module documentation.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// log2 of the whole bound (the sum of the terms).
    pub fn log2(&self) -> f64 {
        let largest = self.terms.iter().map(|t| t.log2).fold(f64::MIN, f64::max);
        let sum: f64 = self.terms.iter().map(|t| (t.log2 - largest).exp2()).sum();
        largest + sum.log2()
    }

    /// The largest term.
    pub fn dominant(&self) -> Option<&Term> {
        self.terms.iter().max_by(|a, b| a.log2.total_cmp(&b.log2))
    }

    /// Whether the profile's messages are longer than RFC 8452 allows
    /// ([`MAX_MESSAGE_BLOCKS`]): then no bound applies.
    pub fn exceeds_length_limit(&self) -> bool {
        self.over_length_limit
    }

    /// Whether the bound is at most 2^`limit_log2` and the messages are within RFC 8452's
    /// length limit.
    pub fn within(&self, limit_log2: f64) -> bool {
        !self.over_length_limit && self.log2() <= limit_log2
    }
}

/// A nonce-based usage profile for one key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NonceProfile {
    /// N: how many distinct nonces are used.
    pub nonces: f64,
    /// Q: how many messages each nonce encrypts (at most).
    pub per_nonce: f64,
    /// The longest message, in 16-byte blocks.
    pub max_blocks: f64,
}

/// A random-nonce usage profile for one key (nonces drawn uniformly from 2^96).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomNonceProfile {
    /// How many messages the key encrypts.
    pub messages: f64,
    /// The longest message, in 16-byte blocks.
    pub max_blocks: f64,
}

/// The number of 16-byte blocks a message of `bytes` bytes occupies (at least one, so that
/// empty messages still count).
pub fn blocks(bytes: u64) -> f64 {
    bytes.div_ceil(16).max(1) as f64
}

fn log2_count(count: f64) -> f64 {
    count.max(1.0).log2()
}

/// m = ceil(log2(L + 1)) for messages of at most L blocks: the paper bounds messages of at
/// most 2^m - 1 blocks.
fn length_exponent(max_blocks: f64) -> f64 {
    // ceil(log2(L + 1)) is the bit length of L. In integers where L fits: in floating point,
    // log2(2^50 + 1) rounds to exactly 50.
    let blocks = max_blocks.max(1.0).floor();
    if blocks < 18_446_744_073_709_551_616.0 {
        f64::from(u64::BITS - (blocks as u64).leading_zeros())
    } else {
        blocks.log2().floor() + 1.0
    }
}

/// Name of the key-derivation term.
pub const KEY_DERIVATION: &str = "key derivation";
/// Name of the per-nonce-keys term.
pub const PER_NONCE_KEYS: &str = "per-nonce keys";
/// Name of the repeated-nonce term: the one whose event (two messages under one nonce with
/// the same tag) breaks confidentiality outright.
pub const REPEATED_NONCES: &str = "repeated nonces";

/// 3N / 2^96, for N = 2^`n` nonces.
fn key_derivation(n: f64) -> Term {
    Term {
        name: KEY_DERIVATION,
        formula: "3N / 2^96",
        log2: 3f64.log2() + n - 96.0,
    }
}

/// N * Bmax^2 / 2^129, for N = 2^`n` nonces and Bmax = 2^`bmax` blocks.
fn per_nonce_keys(n: f64, bmax: f64, formula: &'static str) -> Term {
    Term {
        name: PER_NONCE_KEYS,
        formula,
        log2: n + 2.0 * bmax - 129.0,
    }
}

/// AES-GCM-SIV with chosen nonces (section 6.1, the paper's Corollary 6.3).
pub fn gcm_siv_nonce_based(profile: &NonceProfile) -> Bound {
    let n = log2_count(profile.nonces);
    let q = log2_count(profile.per_nonce);
    let l = log2_count(profile.max_blocks);
    let m = length_exponent(profile.max_blocks);
    Bound {
        terms: vec![
            key_derivation(n),
            per_nonce_keys(n, q + l, "N * Bmax^2 / 2^129, Bmax = Q * L"),
            Term {
                name: REPEATED_NONCES,
                formula: "N * Q^2 / 2^(126 - m)",
                log2: n + 2.0 * q + m - 126.0,
            },
        ],
        over_length_limit: profile.max_blocks > MAX_MESSAGE_BLOCKS,
    }
}

/// log2 of the most messages one random nonce is assumed to serve: 8, the reading that
/// reproduces the random-IV rows of the paper's Table 2.
const RANDOM_NONCE_REPEATS_LOG2: f64 = 3.0;

/// AES-GCM-SIV with random 96-bit nonces (section 6.2, the paper's Theorem 6.4).
pub fn gcm_siv_random_nonces(profile: &RandomNonceProfile) -> Bound {
    let n = log2_count(profile.messages);
    let l = log2_count(profile.max_blocks);
    Bound {
        terms: vec![
            key_derivation(n),
            per_nonce_keys(
                n,
                RANDOM_NONCE_REPEATS_LOG2 + l,
                "N * Bmax^2 / 2^129, Bmax = 8 * L",
            ),
        ],
        over_length_limit: profile.max_blocks > MAX_MESSAGE_BLOCKS,
    }
}

/// AES-GCM with random 96-bit nonces, for comparison: `messages` messages of at most
/// `max_blocks` blocks (SP 800-38D's collision bound plus the PRP/PRF switch).
pub fn gcm_random_nonces(messages: f64, max_blocks: f64) -> Bound {
    let n = log2_count(messages);
    let sigma = n + log2_count(max_blocks + 1.0);
    Bound {
        terms: vec![
            Term {
                name: "nonce collisions",
                formula: "M^2 / 2^97",
                log2: 2.0 * n - 97.0,
            },
            Term {
                name: "AES as a random function",
                formula: "sigma^2 / 2^129, sigma = M * (L + 1) blocks",
                log2: 2.0 * sigma - 129.0,
            },
        ],
        // SP 800-38D's plaintext limit, 2^39 - 256 bits: just under 2^32 blocks.
        over_length_limit: max_blocks > MAX_MESSAGE_BLOCKS - 2.0,
    }
}

/// How a key is used, for [`worker_limit_log2`]: which bound its budget keeps, and so how
/// that bound grows with the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyUse {
    /// AES-GCM-SIV with random nonces: every term of [`gcm_siv_random_nonces`] is linear in
    /// the messages.
    GcmSivRandomNonces,
    /// AES-GCM-SIV with chosen nonces that several users of the key may share (a
    /// deterministic column's one nonce): the per-nonce and repeated-nonce terms of
    /// [`gcm_siv_nonce_based`] grow with the square of the messages under a nonce.
    GcmSivChosenNonces,
    /// AES-GCM with random nonces: both terms of [`gcm_random_nonces`] grow with the square
    /// of the messages (nonce collisions, and the blocks of all of them).
    GcmRandomNonces,
}

impl KeyUse {
    /// The highest power of the message count among the bound's terms.
    fn growth(self) -> f64 {
        match self {
            KeyUse::GcmSivRandomNonces => 1.0,
            KeyUse::GcmSivChosenNonces | KeyUse::GcmRandomNonces => 2.0,
        }
    }
}

/// log2 of the limit to give each of `workers` users of one key that keep their budgets
/// apart (processes, say), so that everything they encrypt together stays within
/// 2^`total_limit_log2`: `total_limit_log2 - g * log2(workers)`, where g is the highest power
/// of the message count in the bound (1 for AES-GCM-SIV with random nonces, 2 for AES-GCM
/// and for AES-GCM-SIV's chosen nonces).
///
/// Why: every term of these bounds is a count of messages (or of their blocks, which scale
/// with them) raised to at most the power g, times factors the workers do not change. If each
/// worker's use has a bound of at most 2^limit, the workers together used at most `workers`
/// times the messages of the busiest one, and the bound of that is at most `workers^g`
/// times 2^limit. With g taken as 1 for AES-GCM, 64 workers would reach 2^-26 where 2^-32
/// was meant.
///
/// ```
/// use combsiv::bounds::{KeyUse, worker_limit_log2};
///
/// assert_eq!(worker_limit_log2(-32.0, 64, KeyUse::GcmSivRandomNonces), -38.0);
/// assert_eq!(worker_limit_log2(-32.0, 64, KeyUse::GcmRandomNonces), -44.0);
/// ```
pub fn worker_limit_log2(total_limit_log2: f64, workers: u64, key_use: KeyUse) -> f64 {
    total_limit_log2 - key_use.growth() * (workers.max(1) as f64).log2()
}

/// One row of the web page's nonce-based table, as exponents of two: nonces, repeats per
/// nonce, and the published maximum message length in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonceRow {
    /// log2 of the number of distinct nonces.
    pub nonces: u32,
    /// log2 of the maximum nonce repetition.
    pub per_nonce: u32,
    /// log2 of the published maximum message length, in blocks.
    pub max_blocks: u32,
}

/// The nonce-based usage-bounds table of the AES-GCM-SIV web page, all within 2^-32 by the
/// page's account (see the module documentation for what the formula says).
pub const NONCE_TABLE: [NonceRow; 12] = {
    const fn row(nonces: u32, per_nonce: u32, max_blocks: u32) -> NonceRow {
        NonceRow {
            nonces,
            per_nonce,
            max_blocks,
        }
    }
    [
        row(32, 10, 42),
        row(48, 10, 26),
        row(64, 10, 10),
        row(32, 6, 50),
        row(48, 6, 34),
        row(64, 6, 18),
        row(32, 3, 56),
        row(48, 3, 40),
        row(64, 3, 24),
        row(0, 32, 16),
        row(0, 38, 10),
        row(0, 44, 4),
    ]
};

/// The random-nonce table of the web page: (log2 messages, log2 maximum blocks).
pub const RANDOM_NONCE_TABLE: [(u32, u32); 3] = [(32, 29), (48, 21), (64, 13)];

/// The largest `k` in 0..=128 for which `bound(k)` is within `limit_log2`.
fn largest_exponent(limit_log2: f64, bound: impl Fn(u32) -> Bound) -> Option<u32> {
    (0..=128).rev().find(|&k| bound(k).within(limit_log2))
}

fn pow2(exponent: u32) -> f64 {
    f64::from(exponent).exp2()
}

/// The largest power-of-two message length (log2, in blocks) the full nonce-based bound
/// allows for `2^nonces` nonces repeated `2^per_nonce` times; `None` if not even one block.
pub fn max_blocks_nonce(nonces: u32, per_nonce: u32, limit_log2: f64) -> Option<u32> {
    largest_exponent(limit_log2, |m| {
        gcm_siv_nonce_based(&NonceProfile {
            nonces: pow2(nonces),
            per_nonce: pow2(per_nonce),
            max_blocks: pow2(m),
        })
    })
}

/// The largest power-of-two message length (log2, in blocks) the full random-nonce bound
/// allows for `2^messages` messages; `None` if not even one block.
pub fn max_blocks_random(messages: u32, limit_log2: f64) -> Option<u32> {
    largest_exponent(limit_log2, |m| {
        gcm_siv_random_nonces(&RandomNonceProfile {
            messages: pow2(messages),
            max_blocks: pow2(m),
        })
    })
}

#[cfg(test)]
mod tests;
