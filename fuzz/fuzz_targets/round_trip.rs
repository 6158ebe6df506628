//! Encrypting arbitrary inputs gives exactly what the RustCrypto `aes-gcm-siv` crate gives,
//! on every backend, and decrypting it gives the plaintext back.
#![no_main]

use aes_gcm_siv::aead::{Aead, KeyInit, Payload};
use combsiv::{Aes128GcmSiv, Aes256GcmSiv, Backend};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: 1 byte selector, 32 key bytes, 12 nonce bytes, 2 AAD length bytes, AAD, plaintext.
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Some((key, rest)) = rest.split_first_chunk::<32>() else {
        return;
    };
    let Some((nonce, rest)) = rest.split_first_chunk::<12>() else {
        return;
    };
    let Some((aad_len, rest)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let (aad, plaintext) = rest.split_at(usize::from(u16::from_le_bytes(*aad_len)).min(rest.len()));
    let payload = || Payload {
        msg: plaintext,
        aad,
    };

    for backend in Backend::available() {
        if selector % 2 == 0 {
            let key: &[u8; 16] = key[..16].try_into().unwrap();
            let expected = aes_gcm_siv::Aes128GcmSiv::new(key.into())
                .encrypt(nonce.into(), payload())
                .unwrap();
            let ours = Aes128GcmSiv::with_backend(key, backend).unwrap();
            let sealed = ours.encrypt(nonce, aad, plaintext).unwrap();
            assert_eq!(sealed, expected, "{backend}");
            assert_eq!(
                ours.decrypt(nonce, aad, &sealed).unwrap(),
                plaintext,
                "{backend}"
            );
        } else {
            let expected = aes_gcm_siv::Aes256GcmSiv::new(key.into())
                .encrypt(nonce.into(), payload())
                .unwrap();
            let ours = Aes256GcmSiv::with_backend(key, backend).unwrap();
            let sealed = ours.encrypt(nonce, aad, plaintext).unwrap();
            assert_eq!(sealed, expected, "{backend}");
            assert_eq!(
                ours.decrypt(nonce, aad, &sealed).unwrap(),
                plaintext,
                "{backend}"
            );
        }
    }
});
