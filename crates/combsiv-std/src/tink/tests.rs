//! Keysets and ciphertexts Tink made (`scripts/tink-vectors`, tink 1.16.1): both keyset forms
//! read alike, every key's ciphertexts decrypt, what we encrypt decrypts under the same
//! keyset (Tink decrypts it in the Python tests), and what we do not read is named.

use serde_json::Value;

use crate::test_vectors::{hex, parse};

use super::*;

fn vectors() -> Value {
    parse(include_str!("../../../combsiv/tests/vectors/tink.json"))
}

#[test]
fn tinks_ciphertexts_decrypt_from_either_keyset_form() {
    for entry in vectors()["keysets"].as_array().unwrap() {
        let from_json = Keyset::from_json(entry["json"].as_str().unwrap()).unwrap();
        let from_binary = Keyset::from_binary(&hex(&entry["binary"])).unwrap();
        let primary = entry["primary_key_id"].as_u64().unwrap() as u32;
        assert_eq!(from_json.primary_key_id(), primary);
        assert_eq!(from_binary.primary_key_id(), primary);
        for message in entry["messages"].as_array().unwrap() {
            let ad = hex(&message["associated_data"]);
            let sealed = hex(&message["ciphertext"]);
            for keyset in [&from_json, &from_binary] {
                assert_eq!(
                    keyset.decrypt(&sealed, &ad).unwrap(),
                    hex(&message["plaintext"])
                );
                assert_eq!(
                    keyset.decrypt(&sealed, b"other"),
                    Err(TinkError::Decryption)
                );
                let mut changed = sealed.clone();
                *changed.last_mut().unwrap() ^= 1;
                assert_eq!(keyset.decrypt(&changed, &ad), Err(TinkError::Decryption));
            }
        }
        let sealed = from_json.encrypt(b"ours", b"ad").unwrap();
        assert_eq!(sealed.len(), from_json.ciphertext_len(4));
        assert_eq!(from_binary.decrypt(&sealed, b"ad").unwrap(), b"ours");
    }
}

#[test]
fn unsupported_keysets_are_named() {
    for entry in vectors()["refused"].as_array().unwrap() {
        let error = Keyset::from_binary(&hex(&entry["binary"])).unwrap_err();
        let name = format!("{error:?}");
        assert!(name.starts_with(entry["error"].as_str().unwrap()), "{name}");
    }
    assert!(matches!(
        Keyset::from_json("[]"),
        Err(TinkError::Malformed(_))
    ));
    assert!(matches!(
        Keyset::from_binary(&[0x12, 0x05]),
        Err(TinkError::Malformed(_))
    ));
    assert!(matches!(
        Keyset::from_binary(&[]),
        Err(TinkError::NoPrimaryKey(0))
    ));
    let json = r#"{"primaryKeyId": 1, "key": [{"keyData": {"typeUrl":
        "type.googleapis.com/google.crypto.tink.AesGcmKey", "value": "GhA=!"},
        "status": "ENABLED", "keyId": 1, "outputPrefixType": "TINK"}]}"#;
    assert!(matches!(
        Keyset::from_json(json),
        Err(TinkError::Malformed(_))
    ));
}
