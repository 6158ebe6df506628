//! PKCS#7 unpadding, CBC and CFB decryption and CMAC verification of arbitrary bytes never
//! panic, and CBC and CFB decrypt exactly as RustCrypto's `cbc` and `cfb-mode` do, on every
//! backend; unpadding accepts exactly the well-formed paddings.
#![no_main]

use aes::cipher::{BlockModeDecrypt, KeyIvInit};
use combsiv::{Aes, Backend, modes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: 16 key bytes, 16 IV bytes, 16 tag bytes, message.
    let Some((key, rest)) = data.split_first_chunk::<16>() else { return };
    let Some((iv, rest)) = rest.split_first_chunk::<16>() else { return };
    let Some((tag, message)) = rest.split_first_chunk::<16>() else { return };

    let unpadded = modes::pkcs7_unpad(message);
    let well_formed = message.len() >= 16
        && message.len() % 16 == 0
        && (1..=16).contains(&message[message.len() - 1])
        && message[message.len() - usize::from(message[message.len() - 1])..]
            .iter()
            .all(|&b| b == message[message.len() - 1]);
    assert_eq!(unpadded.is_ok(), well_formed);
    if let Ok(kept) = unpadded {
        assert_eq!(kept, &message[..message.len() - usize::from(message[message.len() - 1])]);
    }

    let whole = &message[..message.len() - message.len() % 16];
    let mut cbc_expected = whole.to_vec();
    cbc::Decryptor::<aes::Aes128>::new(key.into(), iv.into())
        .decrypt_padded::<aes::cipher::block_padding::NoPadding>(&mut cbc_expected)
        .unwrap();
    let mut cfb_expected = message.to_vec();
    cfb_mode::Decryptor::<aes::Aes128>::new(key.into(), iv.into()).decrypt(&mut cfb_expected);

    for backend in Backend::available() {
        let aes = Aes::with_backend(key, backend).unwrap();
        let mut buf = message.to_vec();
        assert_eq!(modes::cbc_decrypt(&aes, iv, &mut buf).is_ok(), message.len() % 16 == 0);
        let mut buf = whole.to_vec();
        modes::cbc_decrypt(&aes, iv, &mut buf).unwrap();
        assert_eq!(buf, cbc_expected, "cbc {backend}");
        let mut buf = message.to_vec();
        modes::cfb_decrypt(&aes, iv, &mut buf).unwrap();
        assert_eq!(buf, cfb_expected, "cfb {backend}");
        let verdict = modes::cmac_verify(&aes, message, tag).is_ok();
        assert_eq!(verdict, modes::cmac(&aes, message) == *tag, "cmac {backend}");
    }
});
