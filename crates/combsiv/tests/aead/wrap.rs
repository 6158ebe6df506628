//! The GCM-SIV counter block is the tag with its top bit set, and only its first 32 bits
//! count (RFC 8452 Section 4: "the counter is incremented modulo 2^32"). A tag whose low 32
//! bits sit just below 2^32 makes the counter wrap within a short message; a kernel that
//! carried into the next 32 bits, or split its stride at the wrap, would go wrong there.
//!
//! The nonces below were found by search (sealing 272 bytes under each nonce until the tag's
//! first 32 bits came within 16 of 2^32): the counter wraps 3 blocks into the message with
//! AES-128 and 13 blocks in with AES-256, inside the first 8- and 16-block strides and in the
//! partial last stride. The expected output is RustCrypto's `aes-gcm-siv`.

use aes_gcm_siv::aead::{AeadInOut, KeyInit};
use combsiv::comb::SivJob;
use combsiv::{Aes128, Aes256, AesGcmSiv, KeySize};

use super::support::{Subject, backends_under_test, for_every_backend_and_entry};

/// Key, nonce, and how many blocks before the wrap the counter starts.
const CASES: [(&[u8], &str, u32); 2] = [
    (&[0x11; 16], "b2849e020000000002000000", 3),
    (&[0x22; 32], "0188c3000000000001000000", 13),
];

fn plaintext() -> Vec<u8> {
    (0..272u32).map(|i| i as u8).collect()
}

fn reference(key: &[u8], nonce: &[u8; 12], plaintext: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let mut buf = plaintext.to_vec();
    let tag = match key.len() {
        16 => aes_gcm_siv::Aes128GcmSiv::new_from_slice(key)
            .unwrap()
            .encrypt_inout_detached(nonce.into(), b"", buf.as_mut_slice().into()),
        _ => aes_gcm_siv::Aes256GcmSiv::new_from_slice(key)
            .unwrap()
            .encrypt_inout_detached(nonce.into(), b"", buf.as_mut_slice().into()),
    }
    .unwrap();
    (buf, tag.into())
}

fn check<K: KeySize>(key: &[u8], nonce: &[u8; 12], blocks_before_wrap: u32) {
    let plaintext = plaintext();
    let (ciphertext, tag) = reference(key, nonce, &plaintext);
    let low = u32::from_le_bytes(tag[..4].try_into().unwrap());
    assert_eq!(
        u32::MAX - low + 1,
        blocks_before_wrap,
        "the vector wraps where it says"
    );
    let sealed = [ciphertext.as_slice(), &tag].concat();
    for_every_backend_and_entry(|backend, entry| {
        if !backends_under_test().contains(&backend) {
            return; // the portable backend under Miri: too slow, and no unsafe code
        }
        let cipher = <AesGcmSiv<K> as Subject>::with_backend(key, backend);
        let context = format!("{}-byte key {backend} {entry:?}", key.len());
        assert_eq!(
            cipher.seal(entry, nonce, b"", &plaintext),
            sealed,
            "{context}"
        );
        let opened = cipher.open(entry, nonce, b"", &sealed);
        assert_eq!(opened.result, Ok(()), "{context}");
        assert_eq!(opened.output, plaintext, "{context}");
    });
    // The batch entry points, with the wrapping message eight times among shorter ones:
    // enough messages of group size (at most 24 hashed blocks) to fill whole groups on both
    // tiers (4 messages on AES-NI, 8 with VAES), so that the wrap runs through the grouped
    // kernel's counter mode as well as the single-message one.
    let wrapping = [1, 2, 4, 5, 7, 8, 9, 11];
    for backend in backends_under_test() {
        let cipher = <AesGcmSiv<K> as Subject>::with_backend(key, backend);
        let mut data: Vec<Vec<u8>> = (0..12)
            .map(|i| {
                if wrapping.contains(&i) {
                    plaintext.clone()
                } else {
                    plaintext[..17 + 20 * i].to_vec()
                }
            })
            .collect();
        let mut jobs: Vec<SivJob<'_>> = data
            .iter_mut()
            .map(|data| SivJob {
                nonce: *nonce,
                aad: b"",
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        cipher.seal_batch(&mut jobs).unwrap();
        for &i in &wrapping {
            assert_eq!(
                (&*jobs[i].data, jobs[i].tag),
                (ciphertext.as_slice(), tag),
                "{backend} batch, job {i}"
            );
        }
        cipher.open_batch(&mut jobs).unwrap();
        assert!(jobs.iter().all(|job| job.authentic));
        for &i in &wrapping {
            assert_eq!(data[i], plaintext, "{backend} open_batch, job {i}");
        }
    }
}

#[test]
fn counter_wraps_modulo_2_32_through_every_entry_point() {
    for (key, nonce, blocks) in CASES {
        let nonce: [u8; 12] = super::support::hex(&serde_json::Value::from(nonce))
            .try_into()
            .unwrap();
        match key.len() {
            16 => check::<Aes128>(key, &nonce, blocks),
            _ => check::<Aes256>(key, &nonce, blocks),
        }
    }
}
