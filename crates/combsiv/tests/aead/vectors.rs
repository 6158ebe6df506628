//! Official known-answer vectors (tests/vectors/README.md gives their provenance), through
//! every backend and every entry point.

use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend};
use serde_json::Value;

use crate::support::{Subject, for_every_backend_and_entry, hex, load_vectors};

/// Seals and opens one vector with `S`; returns how many (backend, entry) pairs ran.
fn check_vector<S: Subject>(vector: &Value) -> usize {
    let (key, aad, plaintext) = (
        hex(&vector["key"]),
        hex(&vector["aad"]),
        hex(&vector["plaintext"]),
    );
    let nonce: [u8; 12] = hex(&vector["nonce"]).try_into().expect("96-bit nonce");
    let sealed = hex(&vector["ciphertext_and_tag"]);
    let id = &vector["id"];
    let mut runs = 0;
    for_every_backend_and_entry(|backend, entry| {
        let cipher = S::with_backend(&key, backend);
        assert_eq!(
            cipher.seal(entry, &nonce, &aad, &plaintext),
            sealed,
            "{id} {backend} {entry:?}"
        );
        let opened = cipher.open(entry, &nonce, &aad, &sealed);
        assert_eq!(opened.result, Ok(()), "{id} {backend} {entry:?}");
        assert_eq!(opened.output, plaintext, "{id} {backend} {entry:?}");
        runs += 1;
    });
    runs
}

#[test]
fn rfc8452_appendix_c_and_section_8() {
    let file = load_vectors("rfc8452.json");
    let vectors = file["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .chain(file["worked_example_section_8"].as_array().unwrap());
    let mut counts = [0usize; 2];
    for vector in vectors {
        match vector["algorithm"].as_str().unwrap() {
            "AES-128-GCM-SIV" => counts[0] += check_vector::<Aes128GcmSiv>(vector),
            "AES-256-GCM-SIV" => counts[1] += check_vector::<Aes256GcmSiv>(vector),
            other => panic!("unexpected algorithm {other}"),
        }
    }
    let per_vector = Backend::available().len() * crate::support::ENTRIES.len();
    // 24 C.1 vectors + the Section 8 example; 24 C.2 + 2 C.3 (counter wrap).
    assert_eq!(counts, [25 * per_vector, 26 * per_vector]);
}

#[test]
fn gcm_spec_test_cases_with_96_bit_ivs() {
    let file = load_vectors("gcm.json");
    let mut runs = 0;
    for vector in file["vectors"].as_array().unwrap() {
        runs += match vector["key_bits"].as_u64().unwrap() {
            128 => check_vector::<Aes128Gcm>(vector),
            256 => check_vector::<Aes256Gcm>(vector),
            other => panic!("unexpected key size {other}"),
        };
    }
    assert_eq!(
        runs,
        8 * Backend::available().len() * crate::support::ENTRIES.len()
    );
}

#[test]
fn gcm_spec_test_cases_with_other_iv_lengths() {
    let file = load_vectors("gcm.json");
    let mut runs = 0;
    for vector in file["vectors_non_96bit_iv"].as_array().unwrap() {
        let (key, iv, aad) = (
            hex(&vector["key"]),
            hex(&vector["nonce"]),
            hex(&vector["aad"]),
        );
        let (plaintext, sealed) = (
            hex(&vector["plaintext"]),
            hex(&vector["ciphertext_and_tag"]),
        );
        assert_ne!(iv.len(), 12);
        for backend in Backend::available() {
            let (encrypted, decrypted) = match key.len() {
                16 => {
                    let cipher =
                        Aes128Gcm::with_backend(&key.clone().try_into().unwrap(), backend).unwrap();
                    (
                        cipher.encrypt_with_iv(&iv, &aad, &plaintext),
                        cipher.decrypt_with_iv(&iv, &aad, &sealed),
                    )
                }
                _ => {
                    let cipher =
                        Aes256Gcm::with_backend(&key.clone().try_into().unwrap(), backend).unwrap();
                    (
                        cipher.encrypt_with_iv(&iv, &aad, &plaintext),
                        cipher.decrypt_with_iv(&iv, &aad, &sealed),
                    )
                }
            };
            assert_eq!(encrypted.unwrap(), sealed, "{} {backend}", vector["id"]);
            assert_eq!(decrypted.unwrap(), plaintext, "{} {backend}", vector["id"]);
            runs += 1;
        }
    }
    assert_eq!(runs, 4 * Backend::available().len());
}
