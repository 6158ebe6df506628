//! `combsiv bounds`: the AES-GCM-SIV advantage bound for a usage profile, and the published
//! usage tables recomputed from the formulas.

use std::fmt::Write as _;

use combsiv::bounds::{
    self, Bound, MAX_MESSAGE_BLOCKS, NONCE_TABLE, NonceProfile, RANDOM_NONCE_TABLE,
    REPEATED_NONCES, RandomNonceProfile,
};

/// A usage profile from the command line.
#[derive(Clone, Copy, Debug)]
pub enum Profile {
    Nonces { nonces: f64, per_nonce: f64 },
    Random { messages: f64 },
}

/// A count as a power of two when it is one, otherwise as a number.
fn count(value: f64) -> String {
    let log = value.log2();
    if value >= 1024.0 && (log - log.round()).abs() < 1e-9 {
        format!("2^{}", log.round())
    } else if value < 1e15 {
        format!("{value:.0}")
    } else {
        format!("2^{log:.2}")
    }
}

/// `count` with the noun, singular for exactly one.
fn counted(value: f64, noun: &str) -> String {
    let plural = if value == 1.0 { "" } else { "s" };
    format!("{} {noun}{plural}", count(value))
}

/// 2^x with as many decimals as it takes for the printed value to sit on the same side of
/// the limit as the exact one (2^-31.99998 must not print as 2^-32.0).
fn exponent(log2: f64, limit_log2: f64) -> String {
    let exact_within = log2 <= limit_log2;
    (1..=6)
        .map(|digits| format!("{log2:.digits$}"))
        .find(|text| {
            let printed: f64 = text.parse().unwrap_or(log2);
            (printed <= limit_log2) == exact_within && (printed != limit_log2 || log2 == limit_log2)
        })
        .unwrap_or_else(|| format!("{log2:.6}"))
}

fn advantage(log2: f64, limit_log2: f64) -> String {
    let text = exponent(log2, limit_log2);
    if log2 >= 0.0 {
        format!("2^{text} (>= 1: no guarantee)")
    } else {
        format!("2^{text}")
    }
}

fn terms(out: &mut String, bound: &Bound, limit_log2: f64) {
    let dominant = bound.dominant().map(|t| t.name);
    for term in bound.terms() {
        let mark = if Some(term.name) == dominant {
            "  <- dominates"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<16} {:<40} {}{mark}",
            term.name,
            term.formula,
            advantage(term.log2, limit_log2)
        );
        if term.name == REPEATED_NONCES {
            let _ = writeln!(
                out,
                "  {:<16} (if this event happens, two messages share a keystream: confidentiality is lost outright)",
                ""
            );
        }
    }
}

fn verdict(bound: &Bound, limit_log2: f64) -> String {
    if bound.exceeds_length_limit() {
        return format!(
            "none: messages over the 2^36-byte (2^32-block) limit; within 2^{limit_log2}: NO"
        );
    }
    let within = if bound.within(limit_log2) {
        "yes"
    } else {
        "NO"
    };
    format!(
        "{}; within 2^{limit_log2}: {within}",
        advantage(bound.log2(), limit_log2)
    )
}

/// The report for one profile. `max_bytes` is the length as given, when given in bytes.
pub fn report(
    profile: Profile,
    max_blocks: f64,
    max_bytes: Option<f64>,
    limit_log2: f64,
) -> String {
    let mut out = String::new();
    let length = match max_bytes {
        Some(bytes) => format!(
            "{} ({})",
            counted(bytes, "byte"),
            counted(max_blocks, "block")
        ),
        None => format!(
            "{} ({})",
            counted(max_blocks, "block"),
            counted(max_blocks * 16.0, "byte")
        ),
    };
    let (bound, messages) = match profile {
        Profile::Nonces { nonces, per_nonce } => {
            let _ = writeln!(
                out,
                "AES-GCM-SIV, {} x {} per nonce, messages of up to {length}",
                counted(nonces, "nonce"),
                counted(per_nonce, "message"),
            );
            let bound = bounds::gcm_siv_nonce_based(&NonceProfile {
                nonces,
                per_nonce,
                max_blocks,
            });
            (bound, nonces * per_nonce)
        }
        Profile::Random { messages } => {
            let _ = writeln!(
                out,
                "AES-GCM-SIV, {} under random 96-bit nonces, messages of up to {length}",
                counted(messages, "message"),
            );
            let bound = bounds::gcm_siv_random_nonces(&RandomNonceProfile {
                messages,
                max_blocks,
            });
            (bound, messages)
        }
    };
    terms(&mut out, &bound, limit_log2);
    let _ = writeln!(out, "  advantage bound: {}", verdict(&bound, limit_log2));
    let _ = writeln!(
        out,
        "  assumes: no forgery attempts (each decryption query adds to the bound), no associated\n  \
         data, every message at the full length; m = ceil(log2(L + 1)) for L blocks"
    );
    let gcm = bounds::gcm_random_nonces(messages, max_blocks);
    let _ = writeln!(
        out,
        "AES-GCM with random nonces, same {}: {} (the {} term dominates)",
        counted(messages, "message"),
        verdict(&gcm, limit_log2),
        gcm.dominant().map_or("", |t| t.name)
    );
    out
}

/// Both published tables, checked against the formula.
pub fn tables(limit_log2: f64) -> String {
    let mut out = String::new();
    let power = |k: Option<u32>| k.map_or("-".to_string(), |k| format!("2^{k}"));
    let yes_no = |bound: &Bound| {
        if bound.within(limit_log2) {
            "yes"
        } else {
            "NO"
        }
    };
    let length_note = |blocks: u32| {
        if f64::from(blocks).exp2() > MAX_MESSAGE_BLOCKS {
            "longer than RFC 8452 allows (2^32 blocks)"
        } else {
            ""
        }
    };
    let _ = writeln!(
        out,
        "Nonce-based usage bounds published on the AES-GCM-SIV web page (stated: every row within\n\
         2^-32), checked against the full bound at advantage limit 2^{limit_log2}\n\n\
         | nonces | repeats per nonce | max blocks, published | full bound at that length | within | max blocks, full bound | note |\n\
         |---:|---:|---:|---:|---|---:|---|"
    );
    for row in NONCE_TABLE {
        let full = bounds::gcm_siv_nonce_based(&NonceProfile {
            nonces: f64::from(row.nonces).exp2(),
            per_nonce: f64::from(row.per_nonce).exp2(),
            max_blocks: f64::from(row.max_blocks).exp2(),
        });
        let _ = writeln!(
            out,
            "| 2^{} | 2^{} | 2^{} | {} | {} | {} | {} |",
            row.nonces,
            row.per_nonce,
            row.max_blocks,
            advantage(full.log2(), limit_log2),
            yes_no(&full),
            power(bounds::max_blocks_nonce(
                row.nonces,
                row.per_nonce,
                limit_log2
            )),
            length_note(row.max_blocks),
        );
    }
    let _ = writeln!(
        out,
        "\nRandom nonces\n\n\
         | messages | max blocks, published | full bound at that length | within | max blocks, full bound |\n\
         |---:|---:|---:|---|---:|"
    );
    for (messages, max_blocks) in RANDOM_NONCE_TABLE {
        let full = bounds::gcm_siv_random_nonces(&RandomNonceProfile {
            messages: f64::from(messages).exp2(),
            max_blocks: f64::from(max_blocks).exp2(),
        });
        let _ = writeln!(
            out,
            "| 2^{messages} | 2^{max_blocks} | {} | {} | {} |",
            advantage(full.log2(), limit_log2),
            yes_no(&full),
            power(bounds::max_blocks_random(messages, limit_log2)),
        );
    }
    let _ = writeln!(
        out,
        "\nFull bound: 3N/2^96 + N*Bmax^2/2^129 + N*Q^2/2^(126-m), Bmax = Q*L (8*L for random\n\
         nonces), m = ceil(log2(L + 1)); no forgery attempts, no AAD, every message L blocks.\n\
         The page's many-nonce rows leave out the dominant N*Bmax^2/2^129 term.\n\
         \"-\": no length fits (3N/2^96 alone exceeds the limit at 2^64 nonces or messages)."
    );
    out
}
