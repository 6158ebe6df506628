//! Forgeries are rejected with one opaque error and leave no plaintext behind.

use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Error};

use super::support::{ENTRIES, Entry, Rng, Subject, available_backends, backends_under_test};

/// Every bit natively; under Miri a sample (every 61st bit), which still reaches the
/// ciphertext, the tag, the nonce and the AAD.
const BIT_STEP: usize = if cfg!(miri) { 61 } else { 1 };

/// Every single-bit flip of the tag, ciphertext, nonce and AAD must fail authentication and
/// leave the caller's buffer all zero.
fn every_bit_flip_is_rejected<S: Subject>(seed: u64) {
    let mut rng = Rng::new(seed);
    let key = rng.bytes(S::KEY_LEN);
    let nonce: [u8; 12] = rng.array();
    let (aad, plaintext) = (rng.bytes(19), rng.bytes(37));
    for backend in backends_under_test() {
        let cipher = S::with_backend(&key, backend);
        let sealed = cipher.seal(Entry::InPlaceDetached, &nonce, &aad, &plaintext);
        for entry in ENTRIES {
            let rejected = |nonce: &[u8; 12], aad: &[u8], sealed: &[u8], what: &str| {
                let opened = cipher.open(entry, nonce, aad, sealed);
                assert_eq!(
                    opened.result,
                    Err(Error::Authentication),
                    "{} {backend} {entry:?} {what}",
                    S::NAME
                );
                assert!(
                    opened.output.iter().all(|&b| b == 0),
                    "{} {backend} {entry:?} {what}: output not zeroed",
                    S::NAME
                );
            };
            for bit in (0..sealed.len() * 8).step_by(BIT_STEP) {
                let mut forged = sealed.clone();
                forged[bit / 8] ^= 1 << (bit % 8);
                let what = if bit / 8 >= plaintext.len() {
                    "tag"
                } else {
                    "ciphertext"
                };
                rejected(&nonce, &aad, &forged, &format!("{what} bit {bit}"));
            }
            for bit in (0..96).step_by(BIT_STEP) {
                let mut forged = nonce;
                forged[bit / 8] ^= 1 << (bit % 8);
                rejected(&forged, &aad, &sealed, &format!("nonce bit {bit}"));
            }
            for bit in (0..aad.len() * 8).step_by(BIT_STEP) {
                let mut forged = aad.clone();
                forged[bit / 8] ^= 1 << (bit % 8);
                rejected(&nonce, &forged, &sealed, &format!("aad bit {bit}"));
            }
            // Appended or removed bytes are not authentic either.
            rejected(&nonce, &aad, &[&sealed[..], &[0]].concat(), "appended byte");
            rejected(&nonce, &aad, &sealed[1..], "removed byte");
            rejected(&nonce, &[&aad[..], &[0]].concat(), &sealed, "longer aad");
        }
    }
}

/// Forgeries of messages long enough for the fused multi-stride kernels: a flipped bit in
/// every 16-byte block of the ciphertext and in the tag.
fn long_message_forgeries_are_rejected<S: Subject>(seed: u64) {
    let mut rng = Rng::new(seed);
    let key = rng.bytes(S::KEY_LEN);
    let nonce: [u8; 12] = rng.array();
    let (aad, plaintext) = (rng.bytes(40), rng.bytes(16 * 16 * 3 + 5));
    for backend in backends_under_test() {
        let cipher = S::with_backend(&key, backend);
        let sealed = cipher.seal(Entry::InPlaceDetached, &nonce, &aad, &plaintext);
        // Under Miri one entry point: they share the kernel, and each forgery is a long open.
        let entries = if cfg!(miri) {
            &ENTRIES[1..2]
        } else {
            &ENTRIES[..]
        };
        for &entry in entries {
            let step = if cfg!(miri) { 16 * 17 } else { 16 };
            for byte in (0..sealed.len()).step_by(step).chain([sealed.len() - 1]) {
                let mut forged = sealed.clone();
                forged[byte] ^= 0x80;
                let opened = cipher.open(entry, &nonce, &aad, &forged);
                assert_eq!(
                    opened.result,
                    Err(Error::Authentication),
                    "{} {backend} {entry:?} byte {byte}",
                    S::NAME
                );
                assert!(
                    opened.output.iter().all(|&b| b == 0),
                    "{} {backend} {entry:?} byte {byte}",
                    S::NAME
                );
            }
        }
    }
}

#[test]
fn long_messages_reject_forgeries() {
    long_message_forgeries_are_rejected::<Aes128GcmSiv>(16);
    long_message_forgeries_are_rejected::<Aes256GcmSiv>(17);
    long_message_forgeries_are_rejected::<Aes128Gcm>(18);
    long_message_forgeries_are_rejected::<Aes256Gcm>(19);
}

#[test]
fn aes128_gcm_siv_rejects_every_bit_flip() {
    every_bit_flip_is_rejected::<Aes128GcmSiv>(11);
}

#[test]
fn aes256_gcm_siv_rejects_every_bit_flip() {
    every_bit_flip_is_rejected::<Aes256GcmSiv>(12);
}

#[test]
fn aes128_gcm_rejects_every_bit_flip() {
    every_bit_flip_is_rejected::<Aes128Gcm>(13);
}

#[test]
fn aes256_gcm_rejects_every_bit_flip() {
    every_bit_flip_is_rejected::<Aes256Gcm>(14);
}

#[test]
fn inputs_shorter_than_a_tag_are_too_short() {
    for backend in available_backends() {
        let siv = Aes128GcmSiv::with_backend(&[1; 16], backend).unwrap();
        let gcm = Aes256Gcm::with_backend(&[1; 32], backend).unwrap();
        for len in 0..16 {
            let input = vec![0u8; len];
            assert_eq!(
                siv.decrypt(&[0; 12], b"", &input),
                Err(Error::CiphertextTooShort)
            );
            assert_eq!(
                gcm.decrypt(&[0; 12], b"", &input),
                Err(Error::CiphertextTooShort)
            );
            assert_eq!(
                gcm.decrypt_with_iv(&[0; 8], b"", &input),
                Err(Error::CiphertextTooShort)
            );
        }
        // Exactly a tag is an empty message, and a wrong tag is then an authentication error.
        assert_eq!(
            siv.decrypt(&[0; 12], b"", &[0; 16]),
            Err(Error::Authentication)
        );
    }
}

#[test]
fn wrong_key_lengths_are_rejected() {
    for len in [0, 1, 15, 17, 24, 31, 33, 64] {
        let key = vec![0u8; len];
        assert_eq!(
            Aes128GcmSiv::new_from_slice(&key).err(),
            Some(Error::InvalidKeyLength)
        );
        assert_eq!(
            Aes128Gcm::new_from_slice(&key).err(),
            Some(Error::InvalidKeyLength)
        );
        assert_eq!(
            Aes256GcmSiv::new_from_slice(&key).err(),
            Some(Error::InvalidKeyLength)
        );
        assert_eq!(
            Aes256Gcm::new_from_slice(&key).err(),
            Some(Error::InvalidKeyLength)
        );
    }
    // The right length for one size is the wrong one for the other.
    assert_eq!(
        Aes256GcmSiv::new_from_slice(&[0; 16]).err(),
        Some(Error::InvalidKeyLength)
    );
    assert_eq!(
        Aes128GcmSiv::new_from_slice(&[0; 32]).err(),
        Some(Error::InvalidKeyLength)
    );
    assert!(Aes128GcmSiv::new_from_slice(&[0; 16]).is_ok());
    assert!(Aes256Gcm::new_from_slice(&[0; 32]).is_ok());
}

#[test]
fn gcm_rejects_an_empty_iv() {
    let cipher = Aes128Gcm::new(&[0; 16]);
    assert_eq!(
        cipher.encrypt_with_iv(&[], b"", b"x"),
        Err(Error::InvalidNonceLength)
    );
    assert_eq!(
        cipher.decrypt_with_iv(&[], b"", &[0; 17]),
        Err(Error::InvalidNonceLength)
    );
}

#[test]
fn a_wrong_key_fails_like_any_forgery() {
    let mut rng = Rng::new(15);
    for backend in available_backends() {
        let sealed = Aes128GcmSiv::with_backend(&[7; 16], backend)
            .unwrap()
            .encrypt(&[0; 12], b"", &rng.bytes(50))
            .unwrap();
        let other = Aes128GcmSiv::with_backend(&[8; 16], backend).unwrap();
        let mut buf = sealed[..50].to_vec();
        let tag: [u8; 16] = sealed[50..].try_into().unwrap();
        assert_eq!(
            other.decrypt_in_place_detached(&[0; 12], b"", &mut buf, &tag),
            Err(Error::Authentication)
        );
        assert!(buf.iter().all(|&b| b == 0));
    }
}
