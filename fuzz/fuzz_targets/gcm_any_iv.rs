//! AES-GCM through its detached in-place entry points (96-bit nonces) matches RustCrypto's
//! `aes-gcm`; with IVs of any other length (GHASHed into the initial counter) every backend
//! agrees and opening round-trips; opening arbitrary bytes never panics and zeroes on failure.
#![no_main]

use aes_gcm::aead::{AeadInOut, KeyInit};
use combsiv::{Aes128Gcm, Backend};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: IV length byte, 16 key bytes, 16 tag bytes, IV, 1 AAD length byte, AAD, text.
    let Some((&iv_len, rest)) = data.split_first() else { return };
    let Some((key, rest)) = rest.split_first_chunk::<16>() else { return };
    let Some((tag, rest)) = rest.split_first_chunk::<16>() else { return };
    let (iv, rest) = rest.split_at(usize::from(iv_len % 80).min(rest.len()));
    let Some((&aad_len, rest)) = rest.split_first() else { return };
    let (aad, text) = rest.split_at(usize::from(aad_len).min(rest.len()));

    let mut reference: Option<Result<Vec<u8>, combsiv::Error>> = None;
    for backend in Backend::available() {
        let gcm = Aes128Gcm::with_backend(key, backend).unwrap();
        if let Ok(nonce) = <&[u8; 12]>::try_from(iv) {
            let mut buf = text.to_vec();
            let ours = gcm.encrypt_in_place_detached(nonce, aad, &mut buf).unwrap();
            let mut theirs_buf = text.to_vec();
            let theirs = aes_gcm::Aes128Gcm::new(key.into())
                .encrypt_inout_detached(nonce.into(), aad, theirs_buf.as_mut_slice().into())
                .unwrap();
            assert_eq!((buf.as_slice(), ours), (theirs_buf.as_slice(), theirs.into()));
            let mut forged = text.to_vec();
            let result = gcm.decrypt_in_place_detached(nonce, aad, &mut forged, tag);
            if result.is_err() {
                assert!(forged.iter().all(|&b| b == 0));
            }
        }
        let sealed = gcm.encrypt_with_iv(iv, aad, text);
        if let Ok(sealed) = &sealed {
            assert_eq!(gcm.decrypt_with_iv(iv, aad, sealed).as_deref(), Ok(text));
        } else {
            assert!(iv.is_empty(), "only an empty IV is refused");
        }
        let opened = gcm.decrypt_with_iv(iv, aad, text);
        match &reference {
            None => reference = Some(sealed.and(opened)),
            Some(first) => assert_eq!(first, &sealed.and(opened), "{backend}"),
        }
    }
});
