//! Official known-answer vectors (tests/vectors/README.md gives their provenance), through
//! every backend and every entry point. Under Miri the portable backend (safe code that Miri
//! runs a thousand times slower) takes every eighth vector through one entry point, and the
//! x86 backends take every vector through the in-place and the out-of-place entry points
//! (the two kernels every entry point ends in) and every third through the other three
//! (wrappers that copy or allocate around those two), which saves CI's Miri run about a
//! minute and a half.

use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend};
use serde_json::Value;

use super::support::{
    Entry, Subject, backends_under_test, for_every_backend_and_entry, hex, load_vectors,
};

/// Whether vector number `index` runs on `backend` through `entry` in this run.
fn runs(index: usize, backend: Backend, entry: Entry) -> bool {
    let kernel_entry = matches!(entry, Entry::InPlaceDetached | Entry::OutOfPlaceDetached);
    match backend {
        _ if !cfg!(miri) => true,
        Backend::Portable => index.is_multiple_of(8) && entry == Entry::InPlaceDetached,
        _ => kernel_entry || index.is_multiple_of(3),
    }
}

/// Seals and opens vector number `index` with `S`; returns how many (backend, entry) pairs
/// ran.
fn check_vector<S: Subject>(index: usize, vector: &Value) -> usize {
    let (key, aad, plaintext) = (
        hex(&vector["key"]),
        hex(&vector["aad"]),
        hex(&vector["plaintext"]),
    );
    let nonce: [u8; 12] = hex(&vector["nonce"]).try_into().expect("96-bit nonce");
    let sealed = hex(&vector["ciphertext_and_tag"]);
    let id = &vector["id"];
    let mut count = 0;
    for_every_backend_and_entry(|backend, entry| {
        if !runs(index, backend, entry) {
            return;
        }
        let cipher = S::with_backend(&key, backend);
        assert_eq!(
            cipher.seal(entry, &nonce, &aad, &plaintext),
            sealed,
            "{id} {backend} {entry:?}"
        );
        let opened = cipher.open(entry, &nonce, &aad, &sealed);
        assert_eq!(opened.result, Ok(()), "{id} {backend} {entry:?}");
        assert_eq!(opened.output, plaintext, "{id} {backend} {entry:?}");
        count += 1;
    });
    count
}

/// How many (backend, entry) pairs `count` vectors run on in this run.
fn expected_runs(count: usize) -> usize {
    let mut total = 0;
    for index in 0..count {
        for_every_backend_and_entry(|backend, entry| {
            total += usize::from(runs(index, backend, entry))
        });
    }
    total
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
    let mut runs = 0;
    for (index, vector) in vectors.enumerate() {
        runs += match vector["algorithm"].as_str().unwrap() {
            "AES-128-GCM-SIV" => {
                counts[0] += 1;
                check_vector::<Aes128GcmSiv>(index, vector)
            }
            "AES-256-GCM-SIV" => {
                counts[1] += 1;
                check_vector::<Aes256GcmSiv>(index, vector)
            }
            other => panic!("unexpected algorithm {other}"),
        };
    }
    // 24 C.1 vectors + the Section 8 example; 24 C.2 + 2 C.3 (counter wrap).
    assert_eq!(counts, [25, 26]);
    assert_eq!(runs, expected_runs(51));
}

#[test]
fn gcm_spec_test_cases_with_96_bit_ivs() {
    let file = load_vectors("gcm.json");
    let mut runs = 0;
    for (index, vector) in file["vectors"].as_array().unwrap().iter().enumerate() {
        runs += match vector["key_bits"].as_u64().unwrap() {
            128 => check_vector::<Aes128Gcm>(index, vector),
            256 => check_vector::<Aes256Gcm>(index, vector),
            other => panic!("unexpected key size {other}"),
        };
    }
    assert_eq!(runs, expected_runs(8));
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
        for backend in backends_under_test() {
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
    assert_eq!(runs, 4 * backends_under_test().len());
}

/// The vector files' reader (written for Miri's speed) reads every file as `serde_json` does.
#[test]
#[cfg_attr(
    miri,
    ignore = "serde_json takes minutes under Miri; one native run suffices"
)]
fn vector_reader_agrees_with_serde_json() {
    for file in [
        "rfc8452.json",
        "gcm.json",
        "sp800-38a.json",
        "rfc4493-cmac.json",
        "ccm.json",
        "stream.json",
    ] {
        let path = format!("{}/tests/vectors/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let reference: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(*load_vectors(file), reference, "{file}");
    }
}
