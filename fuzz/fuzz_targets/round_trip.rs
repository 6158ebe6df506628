//! Encrypting arbitrary inputs gives exactly what the RustCrypto `aes-gcm-siv` crate gives,
//! on every backend, and decrypting it gives the plaintext back.
#![no_main]

use aes_gcm_siv::aead::consts::U12;
use aes_gcm_siv::aead::{Aead, KeyInit, Payload};
use combsiv::{Aes128GcmSiv, Aes256GcmSiv, AesGcmSiv, Backend, KeySize};
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

    if selector % 2 == 0 {
        let key: &[u8; 16] = key[..16].try_into().unwrap();
        let peer = aes_gcm_siv::Aes128GcmSiv::new(key.into());
        agree(
            &peer,
            |backend| Aes128GcmSiv::with_backend(key, backend).unwrap(),
            nonce,
            aad,
            plaintext,
        );
    } else {
        let peer = aes_gcm_siv::Aes256GcmSiv::new(key.into());
        agree(
            &peer,
            |backend| Aes256GcmSiv::with_backend(key, backend).unwrap(),
            nonce,
            aad,
            plaintext,
        );
    }
});

/// Our cipher on every backend seals exactly as the peer does and opens what it sealed.
fn agree<K: KeySize>(
    peer: &impl Aead<NonceSize = U12>,
    ours: impl Fn(Backend) -> AesGcmSiv<K>,
    nonce: &[u8; 12],
    aad: &[u8],
    plaintext: &[u8],
) {
    let expected = peer
        .encrypt(
            nonce.into(),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .unwrap();
    for backend in Backend::available() {
        let cipher = ours(backend);
        let sealed = cipher.encrypt(nonce, aad, plaintext).unwrap();
        assert_eq!(sealed, expected, "{backend}");
        assert_eq!(
            cipher.decrypt(nonce, aad, &sealed).unwrap(),
            plaintext,
            "{backend}"
        );
    }
}
