//! The usage budget of a key's column calls: every row sealed is counted, and a call that
//! would take the key's advantage bound (`combsiv::bounds`) past its limit is refused with
//! `KeyExhausted` before any work.
//!
//! AES-GCM-SIV's bound is a sum over the nonces a key used (Gueron, Langley and Lindell,
//! "AES-GCM-SIV: Specification and Analysis", section 6), so the rows of both modes add up:
//! the random-nonce rows as the random-nonce bound of their count, the fixed-nonce rows as
//! the nonce-based bound of the nonces used, each counted with its busiest nonce's rows.
//! AES-GCM columns are randomized only and use AES-GCM's random-nonce bound.

use std::collections::HashMap;
use std::sync::Mutex;

use combsiv::Error;
use combsiv::bounds::{self, Bound, NonceProfile, RandomNonceProfile};

/// Which AEAD's bound a budget keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    AesGcmSiv,
    AesGcm,
}

/// The rows a column call seals: how many, the longest in blocks, and under which nonce.
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// Rows sealed (nulls are not).
    pub count: u64,
    /// The longest row, in 16-byte blocks of associated data and value (at least 1).
    pub max_blocks: u64,
    /// The one nonce of a deterministic call; `None` for random nonces.
    pub nonce: Option<[u8; 12]>,
}

/// What a key's column calls have sealed so far.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    pub random_rows: u64,
    pub random_max_blocks: u64,
    /// Rows per nonce of the deterministic calls.
    pub fixed_rows: HashMap<[u8; 12], u64>,
    pub fixed_max_blocks: u64,
}

impl Usage {
    fn after(&self, rows: &Rows) -> Usage {
        let mut next = self.clone();
        match rows.nonce {
            None => {
                next.random_rows = next.random_rows.saturating_add(rows.count);
                next.random_max_blocks = next.random_max_blocks.max(rows.max_blocks);
            }
            Some(nonce) => {
                let count = next.fixed_rows.entry(nonce).or_insert(0);
                *count = count.saturating_add(rows.count);
                next.fixed_max_blocks = next.fixed_max_blocks.max(rows.max_blocks);
            }
        }
        next
    }

    /// log2 of the advantage bound of this usage (minus infinity before any row).
    pub fn bound_log2(&self, scheme: Scheme) -> f64 {
        let mut parts: Vec<Bound> = Vec::new();
        if self.random_rows > 0 {
            let (messages, max_blocks) = (self.random_rows as f64, self.random_max_blocks as f64);
            parts.push(match scheme {
                Scheme::AesGcmSiv => bounds::gcm_siv_random_nonces(&RandomNonceProfile {
                    messages,
                    max_blocks,
                }),
                Scheme::AesGcm => bounds::gcm_random_nonces(messages, max_blocks),
            });
        }
        if !self.fixed_rows.is_empty() {
            parts.push(bounds::gcm_siv_nonce_based(&NonceProfile {
                nonces: self.fixed_rows.len() as f64,
                per_nonce: self.fixed_rows.values().copied().max().unwrap_or(0) as f64,
                max_blocks: self.fixed_max_blocks as f64,
            }));
        }
        if parts.iter().any(Bound::exceeds_length_limit) {
            return f64::INFINITY;
        }
        let logs: Vec<f64> = parts.iter().map(Bound::log2).collect();
        let largest = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if largest == f64::NEG_INFINITY {
            return largest;
        }
        largest
            + logs
                .iter()
                .map(|l| (l - largest).exp2())
                .sum::<f64>()
                .log2()
    }
}

/// A key's budget: its limit and what it has sealed, shared by every thread using the key.
#[derive(Debug)]
pub struct Budget {
    scheme: Scheme,
    limit_log2: f64,
    usage: Mutex<Usage>,
}

impl Budget {
    pub fn new(scheme: Scheme, limit_log2: f64) -> Budget {
        Budget {
            scheme,
            limit_log2,
            usage: Mutex::new(Usage::default()),
        }
    }

    pub fn limit_log2(&self) -> f64 {
        self.limit_log2
    }

    pub fn usage(&self) -> Usage {
        self.usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Counts `rows` against the budget, or refuses them all.
    pub fn reserve(&self, rows: &Rows) -> Result<(), Error> {
        if rows.count == 0 {
            return Ok(());
        }
        let mut usage = self
            .usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = usage.after(rows);
        // A NaN limit refuses everything rather than nothing.
        if next.bound_log2(self.scheme) <= self.limit_log2 {
            *usage = next;
            Ok(())
        } else {
            Err(Error::KeyExhausted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(count: u64, nonce: Option<[u8; 12]>) -> Rows {
        Rows {
            count,
            max_blocks: 1,
            nonce,
        }
    }

    #[test]
    fn refuses_the_call_that_would_pass_the_limit_and_counts_nothing_of_it() {
        // One-block rows under random nonces: 3M / 2^96 dominates, so this limit allows
        // exactly 64 rows.
        let limit = (3.0f64 * 64.0).log2() - 96.0 + 1e-6;
        let budget = Budget::new(Scheme::AesGcmSiv, limit);
        assert!(budget.reserve(&rows(60, None)).is_ok());
        assert_eq!(budget.reserve(&rows(5, None)), Err(Error::KeyExhausted));
        assert_eq!(budget.usage().random_rows, 60);
        assert!(budget.reserve(&rows(4, None)).is_ok());
    }

    #[test]
    fn fixed_nonce_rows_pay_the_repeated_nonce_term() {
        let budget = Budget::new(Scheme::AesGcmSiv, -32.0);
        // One nonce, Q rows of one block: Q^2 / 2^(126 - 1) <= 2^-32 allows Q <= 2^46.5.
        assert!(budget.reserve(&rows(1 << 45, Some([0; 12]))).is_ok());
        assert!(budget.reserve(&rows(1 << 45, Some([0; 12]))).is_ok());
        assert_eq!(
            budget.reserve(&rows(1 << 46, Some([0; 12]))),
            Err(Error::KeyExhausted)
        );
        // A second nonce adds to N, and is counted as if it served as many rows as the
        // busiest: N * Q^2 = 2 * 2^92 passes the limit.
        assert_eq!(
            budget.reserve(&rows(1, Some([1; 12]))),
            Err(Error::KeyExhausted)
        );
        assert_eq!(budget.usage().fixed_rows.len(), 1);
        let bound = budget.usage().bound_log2(Scheme::AesGcmSiv);
        assert!(bound <= -32.0 && bound > -33.5, "{bound}");
    }

    #[test]
    fn aes_gcm_is_limited_by_nonce_collisions() {
        let budget = Budget::new(Scheme::AesGcm, -32.0);
        // M^2 / 2^97 <= 2^-32: M <= 2^32.5.
        assert!(budget.reserve(&rows(1 << 32, None)).is_ok());
        assert_eq!(
            budget.reserve(&rows(1 << 31, None)),
            Err(Error::KeyExhausted)
        );
    }

    #[test]
    fn a_nan_limit_refuses() {
        let budget = Budget::new(Scheme::AesGcmSiv, f64::NAN);
        assert_eq!(budget.reserve(&rows(1, None)), Err(Error::KeyExhausted));
        assert!(budget.reserve(&rows(0, None)).is_ok());
    }
}
