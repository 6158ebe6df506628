//! The RustCrypto `AeadInOut` entry points with separate input and output buffers give
//! exactly what the in-place API gives, for both AEADs and key sizes, on every backend; a
//! forged tag fails on both paths.
#![no_main]

use combsiv::traits::AeadInOut;
use combsiv::traits::inout::InOutBuf;
use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend};
use libfuzzer_sys::fuzz_target;

macro_rules! check {
    ($cipher:expr, $nonce:expr, $aad:expr, $text:expr) => {{
        let cipher = $cipher;
        let mut in_place = $text.to_vec();
        let tag = cipher.encrypt_in_place_detached($nonce, $aad, &mut in_place).unwrap();
        let mut out = vec![0xA5; $text.len()];
        let inout_tag = cipher
            .encrypt_inout_detached($nonce.into(), $aad, InOutBuf::new($text, &mut out).unwrap())
            .unwrap();
        assert_eq!((out.as_slice(), <[u8; 16]>::from(inout_tag)), (in_place.as_slice(), tag));
        let mut opened = vec![0xA5; $text.len()];
        cipher
            .decrypt_inout_detached(
                $nonce.into(),
                $aad,
                InOutBuf::new(in_place.as_slice(), &mut opened).unwrap(),
                (&tag).into(),
            )
            .unwrap();
        assert_eq!(opened, $text);
        let mut forged_tag = tag;
        forged_tag[$text.len() % 16] ^= 1;
        let mut opened = vec![0xA5; $text.len()];
        assert!(
            cipher
                .decrypt_inout_detached(
                    $nonce.into(),
                    $aad,
                    InOutBuf::new(in_place.as_slice(), &mut opened).unwrap(),
                    (&forged_tag).into(),
                )
                .is_err()
        );
        assert!(opened.iter().all(|&b| b == 0) || opened.iter().all(|&b| b == 0xA5));
    }};
}

fuzz_target!(|data: &[u8]| {
    // Layout: 32 key bytes, 12 nonce bytes, 1 AAD length byte, AAD, text.
    let Some((key, rest)) = data.split_first_chunk::<32>() else { return };
    let Some((nonce, rest)) = rest.split_first_chunk::<12>() else { return };
    let Some((&aad_len, rest)) = rest.split_first() else { return };
    let (aad, text) = rest.split_at(usize::from(aad_len).min(rest.len()));
    let key_128: &[u8; 16] = key[..16].try_into().unwrap();
    for backend in Backend::available() {
        check!(Aes128GcmSiv::with_backend(key_128, backend).unwrap(), nonce, aad, text);
        check!(Aes256GcmSiv::with_backend(key, backend).unwrap(), nonce, aad, text);
        check!(Aes128Gcm::with_backend(key_128, backend).unwrap(), nonce, aad, text);
        check!(Aes256Gcm::with_backend(key, backend).unwrap(), nonce, aad, text);
    }
});
