//! `combsiv bounds`: the AES-GCM-SIV advantage bound for a usage profile, and the published
//! usage tables recomputed from the formulas.

use std::fmt::Write as _;

use combsiv::bounds::{
    self, Bound, NONCE_TABLE, NonceProfile, RANDOM_NONCE_TABLE, RandomNonceProfile,
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

fn advantage(log2: f64) -> String {
    if log2 >= 0.0 {
        format!("2^{log2:.1} (>= 1: no guarantee)")
    } else {
        format!("2^{log2:.1}")
    }
}

fn terms(out: &mut String, bound: &Bound) {
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
            advantage(term.log2)
        );
    }
}

fn verdict(bound: &Bound, limit_log2: f64) -> String {
    let within = if bound.within(limit_log2) {
        "yes"
    } else {
        "NO"
    };
    format!(
        "{}; within 2^{limit_log2}: {within}",
        advantage(bound.log2())
    )
}

/// The report for one profile.
pub fn report(profile: Profile, max_blocks: f64, limit_log2: f64) -> String {
    let mut out = String::new();
    let bytes = max_blocks * 16.0;
    let (bound, messages) = match profile {
        Profile::Nonces { nonces, per_nonce } => {
            let _ = writeln!(
                out,
                "AES-GCM-SIV, {} nonces x {} messages per nonce, messages of up to {} blocks ({} bytes)",
                count(nonces),
                count(per_nonce),
                count(max_blocks),
                count(bytes)
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
                "AES-GCM-SIV, {} messages under random 96-bit nonces, messages of up to {} blocks ({} bytes)",
                count(messages),
                count(max_blocks),
                count(bytes)
            );
            let bound = bounds::gcm_siv_random_nonces(&RandomNonceProfile {
                messages,
                max_blocks,
            });
            (bound, messages)
        }
    };
    terms(&mut out, &bound);
    let _ = writeln!(out, "  advantage bound: {}", verdict(&bound, limit_log2));
    let gcm = bounds::gcm_random_nonces(messages, max_blocks);
    let _ = writeln!(
        out,
        "AES-GCM with random nonces, same {} messages: {} (the {} term dominates)",
        count(messages),
        verdict(&gcm, limit_log2),
        gcm.dominant().map_or("", |t| t.name)
    );
    out
}

/// Both published tables, recomputed.
pub fn tables(limit_log2: f64) -> String {
    let mut out = String::new();
    let exponent = |k: Option<u32>| k.map_or("-".to_string(), |k| format!("2^{k}"));
    let _ = writeln!(
        out,
        "Nonce-based usage bounds (AES-GCM-SIV web page), advantage limit 2^{limit_log2}\n\n\
         | nonces | repeats per nonce | max blocks, published | page's reading, recomputed | full bound at published length | max blocks, full bound |\n\
         |---:|---:|---:|---:|---:|---:|"
    );
    let mut all_match = true;
    for row in NONCE_TABLE {
        let recomputed = bounds::page_max_blocks_nonce(row.nonces, row.per_nonce, limit_log2);
        all_match &= recomputed == Some(row.max_blocks);
        let full = bounds::gcm_siv_nonce_based(&NonceProfile {
            nonces: f64::from(row.nonces).exp2(),
            per_nonce: f64::from(row.per_nonce).exp2(),
            max_blocks: f64::from(row.max_blocks).exp2(),
        });
        let _ = writeln!(
            out,
            "| 2^{} | 2^{} | 2^{} | {} | {} | {} |",
            row.nonces,
            row.per_nonce,
            row.max_blocks,
            exponent(recomputed),
            advantage(full.log2()),
            exponent(bounds::max_blocks_nonce(
                row.nonces,
                row.per_nonce,
                limit_log2
            )),
        );
    }
    let _ = writeln!(
        out,
        "\nRandom nonces\n\n\
         | messages | max blocks, published | page's reading, recomputed | full bound at published length | max blocks, full bound |\n\
         |---:|---:|---:|---:|---:|"
    );
    for (messages, max_blocks) in RANDOM_NONCE_TABLE {
        let recomputed = bounds::page_max_blocks_random(messages, limit_log2);
        all_match &= recomputed == Some(max_blocks);
        let full = bounds::gcm_siv_random_nonces(&RandomNonceProfile {
            messages: f64::from(messages).exp2(),
            max_blocks: f64::from(max_blocks).exp2(),
        });
        let _ = writeln!(
            out,
            "| 2^{messages} | 2^{max_blocks} | {} | {} | {} |",
            exponent(recomputed),
            advantage(full.log2()),
            exponent(bounds::max_blocks_random(messages, limit_log2)),
        );
    }
    let _ = writeln!(
        out,
        "\n{}\n\
         Reading: one fixed nonce bounds N*Bmax^2/2^129 + N*Q^2/2^(126-m); many nonces bound only\n\
         N*Q^2/2^(126-m); random nonces bound N*(8*2^m)^2/2^129; the 3N/2^96 key-derivation term is\n\
         left out. The full bound (every term) is stricter: the page's many-nonce rows exceed it.\n\
         \"-\": no length fits (3N/2^96 alone exceeds the limit at 2^64 nonces or messages).",
        if all_match {
            "Every published length is reproduced."
        } else {
            "Some published lengths are NOT reproduced at this limit."
        }
    );
    out
}
