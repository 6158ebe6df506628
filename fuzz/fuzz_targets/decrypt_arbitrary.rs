//! Decrypting arbitrary bytes never panics, never returns plaintext for a forged tag, and
//! always leaves the buffer zeroed on failure, on every backend and both AEADs.
#![no_main]

use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256GcmSiv, Backend, Error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: 1 byte selector, 32 key bytes, 12 nonce bytes, 1 AAD length byte, AAD, rest.
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Some((key, rest)) = rest.split_first_chunk::<32>() else {
        return;
    };
    let Some((nonce, rest)) = rest.split_first_chunk::<12>() else {
        return;
    };
    let Some((&aad_len, rest)) = rest.split_first() else {
        return;
    };
    let (aad, sealed) = rest.split_at(usize::from(aad_len).min(rest.len()));
    let key_128: &[u8; 16] = key[..16].try_into().unwrap();

    for backend in Backend::available() {
        let results = match selector % 3 {
            0 => {
                let cipher = Aes128GcmSiv::with_backend(key_128, backend).unwrap();
                (
                    cipher.decrypt(nonce, aad, sealed),
                    detached(sealed, |buf, tag| {
                        cipher.decrypt_in_place_detached(nonce, aad, buf, tag)
                    }),
                )
            }
            1 => {
                let cipher = Aes256GcmSiv::with_backend(key, backend).unwrap();
                (
                    cipher.decrypt(nonce, aad, sealed),
                    detached(sealed, |buf, tag| {
                        cipher.decrypt_in_place_detached(nonce, aad, buf, tag)
                    }),
                )
            }
            _ => {
                let cipher = Aes128Gcm::with_backend(key_128, backend).unwrap();
                (
                    cipher.decrypt_with_iv(&nonce[..1 + usize::from(selector) % 12], aad, sealed),
                    None,
                )
            }
        };
        // A random input is authentic with probability 2^-128: any success is a finding,
        // unless the input was made by encrypting (the round-trip target covers that).
        match results.0 {
            Ok(plaintext) => panic!(
                "forged message accepted: {} bytes of plaintext",
                plaintext.len()
            ),
            Err(error) => assert!(matches!(
                error,
                Error::Authentication | Error::CiphertextTooShort
            )),
        }
        if let Some((result, buffer)) = results.1 {
            assert_eq!(result, Err(Error::Authentication));
            assert!(
                buffer.iter().all(|&b| b == 0),
                "failed decryption left data in the buffer"
            );
        }
    }
});

/// Runs a detached in-place decryption on a copy of the ciphertext; returns the result and
/// what the buffer holds afterwards.
fn detached(
    sealed: &[u8],
    open: impl FnOnce(&mut [u8], &[u8; 16]) -> Result<(), Error>,
) -> Option<(Result<(), Error>, Vec<u8>)> {
    let (ciphertext, tag) = sealed.split_last_chunk::<16>()?;
    let mut buffer = ciphertext.to_vec();
    let result = open(&mut buffer, tag);
    Some((result, buffer))
}
