use super::*;

/// The bound of one key's use by W workers, each of which used as many messages as its
/// [`worker_limit_log2`] allows (the most, found by bisection, with messages of 1 and
/// of 4096 blocks), recomputed for all of them together: within the total limit, and
/// within a factor of two of it (the split does not waste the budget). The split that
/// is right for AES-GCM-SIV's random nonces would take AES-GCM past the limit.
#[test]
fn workers_within_their_split_stay_within_the_total() {
    let total = DEFAULT_LIMIT_LOG2;
    /// A bound of (messages, their longest in blocks).
    type BoundOf<'a> = &'a dyn Fn(f64, f64) -> Bound;
    let uses: [(KeyUse, BoundOf<'_>); 3] = [
        (KeyUse::GcmSivRandomNonces, &|messages, max_blocks| {
            gcm_siv_random_nonces(&RandomNonceProfile {
                messages,
                max_blocks,
            })
        }),
        (KeyUse::GcmSivChosenNonces, &|messages, max_blocks| {
            gcm_siv_nonce_based(&NonceProfile {
                nonces: 1.0,
                per_nonce: messages,
                max_blocks,
            })
        }),
        (KeyUse::GcmRandomNonces, &gcm_random_nonces),
    ];
    // The most messages whose bound is within 2^limit.
    let most = |bound: BoundOf<'_>, max_blocks: f64, limit: f64| {
        let (mut low, mut high) = (0.0f64, 128.0f64);
        for _ in 0..200 {
            let middle = (low + high) / 2.0;
            match bound(middle.exp2(), max_blocks).log2() <= limit {
                true => low = middle,
                false => high = middle,
            }
        }
        low.exp2()
    };
    for (key_use, bound) in uses {
        for max_blocks in [1.0, 4096.0] {
            for workers in [2u64, 8, 64, 1000] {
                let each = most(
                    bound,
                    max_blocks,
                    worker_limit_log2(total, workers, key_use),
                );
                let together = bound(workers as f64 * each, max_blocks).log2();
                let context = alloc::format!("{key_use:?}, {max_blocks} blocks, {workers} workers");
                assert!(together <= total + 1e-9, "{context}: 2^{together}");
                assert!(together > total - 1.0, "{context}: 2^{together}");
                if key_use == KeyUse::GcmRandomNonces {
                    let linear = total - (workers as f64).log2();
                    let each = most(bound, max_blocks, linear);
                    let together = bound(workers as f64 * each, max_blocks).log2();
                    assert!(
                        together > total + 0.9,
                        "{context}, a linear split: 2^{together}"
                    );
                }
            }
        }
    }
    assert_eq!(worker_limit_log2(-40.0, 0, KeyUse::GcmRandomNonces), -40.0);
    assert_eq!(worker_limit_log2(-40.0, 1, KeyUse::GcmRandomNonces), -40.0);
}

/// Every published row against the formula, values worked out by hand: the fixed-nonce
/// rows hold (the third exactly at 2^-32); the many-nonce rows fail by the per-nonce term and, with m = log2(L) + 1, by
/// the repeated-nonce term alone (2^-31); five rows exceed RFC 8452's message length.
#[test]
fn the_published_rows_against_the_formula() {
    // (nonces, repeats, blocks) -> (per-nonce term, repeated-nonce term, within 2^-32)
    let expected = [
        ((32, 10, 42), (7.0, -31.0, false)),
        ((48, 10, 26), (-9.0, -31.0, false)),
        ((64, 10, 10), (-25.0, -31.0, false)),
        ((32, 6, 50), (15.0, -31.0, false)),
        ((48, 6, 34), (-1.0, -31.0, false)),
        ((64, 6, 18), (-17.0, -31.0, false)),
        ((32, 3, 56), (21.0, -31.0, false)),
        ((48, 3, 40), (5.0, -31.0, false)),
        ((64, 3, 24), (-11.0, -31.0, false)),
        ((0, 32, 16), (-33.0, -45.0, true)),
        ((0, 38, 10), (-33.0, -39.0, true)),
        ((0, 44, 4), (-33.0, -33.0, true)),
    ];
    for (row, ((nonces, per_nonce, max_blocks), (per_key, repeated, within))) in
        NONCE_TABLE.iter().zip(expected)
    {
        assert_eq!(
            (row.nonces, row.per_nonce, row.max_blocks),
            (nonces, per_nonce, max_blocks)
        );
        let bound = gcm_siv_nonce_based(&NonceProfile {
            nonces: pow2(nonces),
            per_nonce: pow2(per_nonce),
            max_blocks: pow2(max_blocks),
        });
        let log2 = |name| {
            bound
                .terms()
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.log2)
        };
        assert_eq!(log2(PER_NONCE_KEYS), Some(per_key), "{row:?}");
        assert_eq!(log2(REPEATED_NONCES), Some(repeated), "{row:?}");
        assert_eq!(bound.within(DEFAULT_LIMIT_LOG2), within, "{row:?}");
        assert_eq!(bound.exceeds_length_limit(), max_blocks > 32, "{row:?}");
    }
    // The last fixed-nonce row is 2^-33 + 2^-33 = 2^-32 exactly at the limit (its 3/2^96
    // key-derivation term is below double precision there).
    let last = gcm_siv_nonce_based(&NonceProfile {
        nonces: 1.0,
        per_nonce: pow2(44),
        max_blocks: pow2(4),
    });
    assert_eq!(last.log2(), -32.0);
    // Random nonces: 2^-33 in the per-nonce term on every row; the key-derivation term
    // 3 * 2^64 / 2^96 = 2^-30.4 sinks the last.
    for ((messages, max_blocks), within) in RANDOM_NONCE_TABLE.into_iter().zip([true, true, false])
    {
        let bound = gcm_siv_random_nonces(&RandomNonceProfile {
            messages: pow2(messages),
            max_blocks: pow2(max_blocks),
        });
        assert_eq!(bound.terms()[1].log2, -33.0);
        assert_eq!(bound.within(DEFAULT_LIMIT_LOG2), within);
    }
}

#[test]
fn m_counts_the_blocks_plus_one() {
    assert_eq!(length_exponent(1.0), 1.0);
    assert_eq!(length_exponent(3.0), 2.0);
    assert_eq!(length_exponent(4.0), 3.0);
    assert_eq!(length_exponent(pow2(16) - 1.0), 16.0);
    assert_eq!(length_exponent(pow2(16)), 17.0);
    assert_eq!(length_exponent(pow2(50)), 51.0);
    assert_eq!(length_exponent(pow2(50) - 1.0), 50.0);
    assert_eq!(length_exponent(pow2(70)), 71.0);
}

#[test]
fn messages_over_the_rfc_limit_are_never_within() {
    let profile = |max_blocks| NonceProfile {
        nonces: 1.0,
        per_nonce: 1.0,
        max_blocks,
    };
    let at_limit = gcm_siv_nonce_based(&profile(MAX_MESSAGE_BLOCKS));
    assert!(!at_limit.exceeds_length_limit() && at_limit.within(DEFAULT_LIMIT_LOG2));
    let over = gcm_siv_nonce_based(&profile(pow2(40)));
    assert!(over.exceeds_length_limit());
    assert!(over.log2() < DEFAULT_LIMIT_LOG2 && !over.within(DEFAULT_LIMIT_LOG2));
    let random = gcm_siv_random_nonces(&RandomNonceProfile {
        messages: 1.0,
        max_blocks: pow2(33),
    });
    assert!(!random.within(DEFAULT_LIMIT_LOG2));
    assert_eq!(max_blocks_nonce(0, 0, DEFAULT_LIMIT_LOG2), Some(32));
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
        over_length_limit: false,
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
