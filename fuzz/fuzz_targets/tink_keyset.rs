//! Tink keysets and ciphertexts from arbitrary bytes: parsing either keyset form never
//! panics, and a keyset that parses never decrypts a ciphertext it did not make.
#![no_main]

use combsiv::tink::Keyset;
use libfuzzer_sys::fuzz_target;

/// A keyset Tink made (one AES-128-GCM-SIV key, TINK prefix), to decrypt arbitrary bytes.
const KEYSET: &str = r#"{"primaryKeyId": 492875772, "key": [{"keyData": {"typeUrl":
"type.googleapis.com/google.crypto.tink.AesGcmSivKey", "value":
"GiAy/C6IFukdwe84IyTFhUDDwamkszIoKVI2GDV0EV8RyQ==", "keyMaterialType": "SYMMETRIC"},
"status": "ENABLED", "keyId": 492875772, "outputPrefixType": "TINK"}]}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            if let Ok(keyset) = Keyset::from_binary(rest) {
                let sealed = keyset.encrypt(b"probe", b"").unwrap();
                assert_eq!(keyset.decrypt(&sealed, b"").unwrap(), b"probe");
            }
        }
        1 => {
            if let Ok(text) = core::str::from_utf8(rest) {
                let _ = Keyset::from_json(text);
            }
        }
        _ => {
            let keyset = Keyset::from_json(KEYSET).unwrap();
            assert!(keyset.decrypt(rest, b"").is_err(), "a forgery was accepted");
        }
    }
});
