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
//! With N distinct nonces, Q messages per nonce, messages of at most 2^m blocks (16 bytes) and
//! Bmax = Q * 2^m blocks encrypted under any one nonce:
//!
//! | term | formula | what it pays for |
//! |---|---|---|
//! | key derivation | 3N / 2^96 | the per-nonce keys are AES outputs, not random keys |
//! | per-nonce keys | N * Bmax^2 / 2^129 | AES-CTR and POLYVAL under each derived key: a birthday bound over the blocks one nonce encrypts |
//! | repeated nonces | N * Q^2 / 2^(126 - m) | two messages under one nonce whose synthetic IVs collide |
//!
//! The per-nonce term dominates almost always: it is quadratic in the blocks one nonce
//! encrypts, so long messages or heavy nonce reuse exhaust it first. The repeated-nonce term
//! matters only for very short messages repeated under one nonce. The key-derivation term is
//! what finally limits the *number* of nonces (about 2^62). With random 96-bit nonces
//! (section 6.2) the repeated-nonce term disappears (a random nonce repeats at most a few
//! times) and Bmax is taken as 8 * 2^m, the reading that reproduces the paper's Table 2.
//!
//! For comparison, AES-GCM with random 96-bit nonces is limited by nonce collisions
//! (M^2 / 2^97 for M messages): about 2^32 messages in total, whatever their length.
//!
//! # The published tables
//!
//! [`NONCE_TABLE`] and [`RANDOM_NONCE_TABLE`] are the usage-bounds tables of the AES-GCM-SIV
//! web page (Gueron, Langley, Lindell). [`page_max_blocks_nonce`] and
//! [`page_max_blocks_random`] recompute their last column from the formulas. The extracted
//! seed text is ambiguous about which terms the page bounded, and the reading that
//! reproduces it is: rows with one fixed nonce bound the per-nonce and repeated-nonce terms;
//! rows with many nonces bound **only the repeated-nonce term**; random-nonce rows bound only
//! the per-nonce term (Bmax = 8 * 2^m). The key-derivation term is left out everywhere. Under
//! the full bound (every term, as [`gcm_siv_nonce_based`] computes it), the many-nonce rows
//! are far beyond 2^-32 (2^7 for 2^32 nonces, 2^10 repeats, 2^42-block messages): treat those
//! rows of the page as wrong, and use the calculator.
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

    /// Whether the bound is at most 2^`limit_log2`.
    pub fn within(&self, limit_log2: f64) -> bool {
        self.log2() <= limit_log2
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

const KEY_DERIVATION: &str = "key derivation";
const PER_NONCE_KEYS: &str = "per-nonce keys";
const REPEATED_NONCES: &str = "repeated nonces";

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
    let m = log2_count(profile.max_blocks);
    Bound {
        terms: vec![
            key_derivation(n),
            per_nonce_keys(n, q + m, "N * Bmax^2 / 2^129, Bmax = Q * 2^m"),
            Term {
                name: REPEATED_NONCES,
                formula: "N * Q^2 / 2^(126 - m)",
                log2: n + 2.0 * q + m - 126.0,
            },
        ],
    }
}

/// log2 of the most messages one random nonce is assumed to serve: 8, the reading that
/// reproduces the random-IV rows of the paper's Table 2.
const RANDOM_NONCE_REPEATS_LOG2: f64 = 3.0;

/// AES-GCM-SIV with random 96-bit nonces (section 6.2, the paper's Theorem 6.4).
pub fn gcm_siv_random_nonces(profile: &RandomNonceProfile) -> Bound {
    let n = log2_count(profile.messages);
    let m = log2_count(profile.max_blocks);
    Bound {
        terms: vec![
            key_derivation(n),
            per_nonce_keys(
                n,
                RANDOM_NONCE_REPEATS_LOG2 + m,
                "N * Bmax^2 / 2^129, Bmax = 8 * 2^m",
            ),
        ],
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
    }
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

/// The nonce-based usage-bounds table of the AES-GCM-SIV web page (seed 003), all within
/// 2^-32 by the page's account.
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

/// The web page's reading of the nonce-based bound (see the module documentation): the
/// largest power-of-two message length, in blocks, for `2^nonces` nonces each repeated
/// `2^per_nonce` times.
pub fn page_max_blocks_nonce(nonces: u32, per_nonce: u32, limit_log2: f64) -> Option<u32> {
    largest_exponent(limit_log2, |m| {
        let full = gcm_siv_nonce_based(&NonceProfile {
            nonces: pow2(nonces),
            per_nonce: pow2(per_nonce),
            max_blocks: pow2(m),
        });
        let counted = |term: &&Term| match term.name {
            REPEATED_NONCES => true,
            PER_NONCE_KEYS => nonces == 0,
            _ => false,
        };
        Bound {
            terms: full.terms().iter().filter(counted).copied().collect(),
        }
    })
}

/// The web page's reading of the random-nonce bound: the largest power-of-two message
/// length, in blocks, for `2^messages` messages.
pub fn page_max_blocks_random(messages: u32, limit_log2: f64) -> Option<u32> {
    largest_exponent(limit_log2, |m| {
        let full = gcm_siv_random_nonces(&RandomNonceProfile {
            messages: pow2(messages),
            max_blocks: pow2(m),
        });
        Bound {
            terms: full
                .terms()
                .iter()
                .filter(|term| term.name == PER_NONCE_KEYS)
                .copied()
                .collect(),
        }
    })
}

/// The largest power-of-two message length (log2, in blocks) the **full** nonce-based bound
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

/// The largest power-of-two message length (log2, in blocks) the **full** random-nonce bound
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
mod tests {
    use super::*;

    #[test]
    fn the_page_reading_reproduces_the_published_tables() {
        for row in NONCE_TABLE {
            let reproduced = page_max_blocks_nonce(row.nonces, row.per_nonce, DEFAULT_LIMIT_LOG2);
            assert_eq!(reproduced, Some(row.max_blocks), "{row:?}");
        }
        for (messages, max_blocks) in RANDOM_NONCE_TABLE {
            let reproduced = page_max_blocks_random(messages, DEFAULT_LIMIT_LOG2);
            assert_eq!(reproduced, Some(max_blocks), "2^{messages} random nonces");
        }
    }

    #[test]
    fn the_paper_examples_hold() {
        // Section 6.1: 2^64 nonces with Bmax = 2^16, 2^48 with 2^24, 2^32 with 2^32 blocks
        // are all within 2^-32 through the per-nonce term (2^-33 each).
        for (nonces, bmax) in [(64, 16), (48, 24), (32, 32)] {
            let bound = gcm_siv_nonce_based(&NonceProfile {
                nonces: pow2(nonces),
                per_nonce: 1.0,
                max_blocks: pow2(bmax),
            });
            let per_nonce = bound.terms()[1];
            assert_eq!(per_nonce.log2, -33.0);
        }
        // A fixed nonce for 2^32 messages of 2^32 blocks: Bmax = 2^64, the term is 1/2 and
        // there is no guarantee.
        let fixed = gcm_siv_nonce_based(&NonceProfile {
            nonces: 1.0,
            per_nonce: pow2(32),
            max_blocks: pow2(32),
        });
        assert_eq!(fixed.terms()[1].log2, -1.0);
        // Random IVs: 2^48 messages of 2^20 blocks give 2^-35 in the per-nonce term.
        let random = gcm_siv_random_nonces(&RandomNonceProfile {
            messages: pow2(48),
            max_blocks: pow2(20),
        });
        assert_eq!(random.terms()[1].log2, -35.0);
        assert!(random.within(DEFAULT_LIMIT_LOG2));
    }

    #[test]
    fn many_nonce_rows_of_the_page_exceed_the_full_bound() {
        let bound = gcm_siv_nonce_based(&NonceProfile {
            nonces: pow2(32),
            per_nonce: pow2(10),
            max_blocks: pow2(42),
        });
        assert_eq!(bound.dominant().map(|t| t.name), Some(PER_NONCE_KEYS));
        assert!((bound.log2() - 7.0).abs() < 0.01);
        assert_eq!(max_blocks_nonce(32, 10, DEFAULT_LIMIT_LOG2), Some(22));
    }

    #[test]
    fn gcm_with_random_nonces_stops_near_two_to_the_32_messages() {
        assert!(gcm_random_nonces(pow2(32), 1.0).within(DEFAULT_LIMIT_LOG2));
        assert!(!gcm_random_nonces(pow2(33), 1.0).within(DEFAULT_LIMIT_LOG2));
    }

    #[test]
    fn sums_add_in_the_linear_domain() {
        let bound = Bound {
            terms: vec![
                Term {
                    name: "a",
                    formula: "",
                    log2: -33.0,
                },
                Term {
                    name: "b",
                    formula: "",
                    log2: -33.0,
                },
            ],
        };
        assert!((bound.log2() + 32.0).abs() < 1e-12);
    }
}
