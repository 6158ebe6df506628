//! C2SP chunked encryption against the vectors `scripts/c2sp-vectors` wrote with
//! `cryptography` 50.0.2 (known answers and Cobblestone's own output), and every way a
//! message can be cut, extended, reordered or misaddressed.

use serde_json::Value;

use crate::test_vectors::{hex, parse};
use sha2::{Digest, Sha256};

use super::*;

fn vectors() -> Value {
    parse(include_str!("../../../combsiv/tests/vectors/c2sp.json"))
}

fn aead_named(name: &str) -> Aead {
    *Aead::ALL
        .iter()
        .find(|aead| aead.iana_name() == name)
        .expect("a known AEAD")
}

/// Byte i is i % 251, as the vectors' messages.
fn plaintext(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Feeds `data` to `step` in pieces of `piece` bytes (all at once when 0).
fn in_pieces(
    data: &[u8],
    piece: usize,
    mut step: impl FnMut(&[u8]) -> Result<Vec<u8>, StreamError>,
) -> Result<Vec<u8>, StreamError> {
    let mut out = Vec::new();
    if piece == 0 {
        return step(data);
    }
    for part in data.chunks(piece) {
        out.extend(step(part)?);
    }
    Ok(out)
}

fn seal(aead: Aead, key: &[u8], context: &[u8], message: &[u8], piece: usize) -> Vec<u8> {
    let mut encryptor = Encryptor::new(aead, key, context).unwrap();
    let mut sealed = in_pieces(message, piece, |part| encryptor.update(part)).unwrap();
    sealed.extend(encryptor.finalize().unwrap());
    sealed
}

fn open(
    aead: Aead,
    key: &[u8],
    context: &[u8],
    sealed: &[u8],
    piece: usize,
) -> Result<Vec<u8>, StreamError> {
    let mut decryptor = Decryptor::new(aead, key, context)?;
    let mut opened = in_pieces(sealed, piece, |part| decryptor.update(part))?;
    opened.extend(decryptor.finalize()?);
    Ok(opened)
}

#[test]
fn known_answers_encrypt_and_decrypt() {
    for vector in vectors()["known_answers"].as_array().unwrap() {
        let aead = aead_named(vector["aead"].as_str().unwrap());
        let (key, context) = (hex(&vector["key"]), hex(&vector["context"]));
        let salt: [u8; SALT_LEN] = hex(&vector["salt"]).try_into().unwrap();
        let message = plaintext(vector["length"].as_u64().unwrap() as usize);
        for piece in [0, 1000, CHUNK_LEN, 20_000] {
            let mut encryptor = Encryptor::with_salt(aead, &key, &context, salt).unwrap();
            let mut sealed = in_pieces(&message, piece, |part| encryptor.update(part)).unwrap();
            sealed.extend(encryptor.finalize().unwrap());
            let digest: [u8; 32] = Sha256::digest(&sealed).into();
            assert_eq!(digest.as_slice(), hex(&vector["sha256"]), "{vector}");
            if let Some(expected) = vector.get("ciphertext") {
                assert_eq!(sealed, hex(expected));
            }
            assert_eq!(
                sealed.len() as u64,
                ciphertext_len(message.len() as u64).unwrap()
            );
            assert_eq!(
                plaintext_len(sealed.len() as u64).unwrap(),
                message.len() as u64
            );
            assert_eq!(open(aead, &key, &context, &sealed, piece).unwrap(), message);
        }
    }
}

#[test]
fn cobblestone_output_decrypts() {
    for vector in vectors()["from_cryptography"].as_array().unwrap() {
        let aead = aead_named(vector["aead"].as_str().unwrap());
        let (key, context) = (hex(&vector["key"]), hex(&vector["context"]));
        let sealed = hex(&vector["ciphertext"]);
        let message = plaintext(vector["length"].as_u64().unwrap() as usize);
        for piece in [0, 1, 57, SEALED_CHUNK_LEN] {
            assert_eq!(open(aead, &key, &context, &sealed, piece).unwrap(), message);
        }
    }
}

#[test]
fn every_length_round_trips_through_every_aead() {
    for aead in Aead::ALL {
        let key = aead.generate_key().unwrap();
        for len in [
            0,
            1,
            15,
            16,
            17,
            CHUNK_LEN - 1,
            CHUNK_LEN,
            CHUNK_LEN + 1,
            3 * CHUNK_LEN,
        ] {
            let message = plaintext(len);
            for piece in [0, 7, CHUNK_LEN + 3] {
                let sealed = seal(aead, &key, b"ctx", &message, piece);
                assert_eq!(sealed.len() as u64, ciphertext_len(len as u64).unwrap());
                assert_eq!(open(aead, &key, b"ctx", &sealed, piece).unwrap(), message);
            }
        }
    }
}

#[test]
fn every_truncation_is_refused() {
    let aead = Aead::Aes128Gcm;
    let key = aead.generate_key().unwrap();
    let sealed = seal(aead, &key, b"", &plaintext(2 * CHUNK_LEN + 100), 0);
    let boundaries = [
        HEADER_LEN + SEALED_CHUNK_LEN,
        HEADER_LEN + 2 * SEALED_CHUNK_LEN,
    ];
    let mut cuts: Vec<usize> = (0..=HEADER_LEN + TAG_LEN + 1).collect();
    for boundary in boundaries {
        cuts.extend(boundary - 1..=boundary + TAG_LEN + 1);
    }
    cuts.extend((sealed.len() - 20)..sealed.len());
    for cut in cuts {
        let result = open(aead, &key, b"", &sealed[..cut], 1000);
        assert!(
            matches!(
                result,
                Err(StreamError::Truncated { .. } | StreamError::Corrupted { .. })
            ),
            "cut at {cut}: {result:?}"
        );
        if boundaries.contains(&cut) || cut < HEADER_LEN {
            assert!(
                matches!(result, Err(StreamError::Truncated { .. })),
                "cut at {cut}"
            );
        }
        if boundaries.contains(&cut) || cut < HEADER_LEN + TAG_LEN {
            assert!(plaintext_len(cut as u64).is_err(), "cut at {cut}");
        }
    }
}

#[test]
fn extensions_swaps_and_wrong_commitments_are_refused() {
    let aead = Aead::Aes256Gcm;
    let key = aead.generate_key().unwrap();
    let message = plaintext(3 * CHUNK_LEN + 5);
    let sealed = seal(aead, &key, b"ctx", &message, 0);
    let corrupted = |result: Result<Vec<u8>, StreamError>| {
        matches!(
            result,
            Err(StreamError::Corrupted { .. } | StreamError::Truncated { .. })
        )
    };
    // Bytes appended: the last chunk is no longer where the length says.
    for extra in [1, TAG_LEN, SEALED_CHUNK_LEN] {
        let mut longer = sealed.clone();
        longer.extend(vec![0u8; extra]);
        assert!(
            corrupted(open(aead, &key, b"ctx", &longer, 0)),
            "{extra} bytes appended"
        );
    }
    // Two whole chunks swapped.
    let mut swapped = sealed.clone();
    let (first, second) = (HEADER_LEN, HEADER_LEN + SEALED_CHUNK_LEN);
    let chunk0 = sealed[first..second].to_vec();
    swapped.copy_within(second..second + SEALED_CHUNK_LEN, first);
    swapped[second..second + SEALED_CHUNK_LEN].copy_from_slice(&chunk0);
    assert!(matches!(
        open(aead, &key, b"ctx", &swapped, 0),
        Err(StreamError::Corrupted { chunk: 0 })
    ));
    // Any bit of the salt or the commitment, a wrong context or key: the commitment.
    for byte in [0, SALT_LEN - 1, SALT_LEN, HEADER_LEN - 1] {
        let mut changed = sealed.clone();
        changed[byte] ^= 0x80;
        assert!(matches!(
            open(aead, &key, b"ctx", &changed, 0),
            Err(StreamError::WrongKey)
        ));
    }
    assert!(matches!(
        open(aead, &key, b"ctx2", &sealed, 0),
        Err(StreamError::WrongKey)
    ));
    let other = aead.generate_key().unwrap();
    assert!(matches!(
        open(aead, &other, b"ctx", &sealed, 0),
        Err(StreamError::WrongKey)
    ));
    // The same message under the other AEAD of the same key size: its name is bound.
    assert!(matches!(
        open(Aead::Aes256GcmSiv, &key, b"ctx", &sealed, 0),
        Err(StreamError::WrongKey)
    ));
    assert!(matches!(
        Decryptor::new(aead, &key[..16], b""),
        Err(StreamError::Crypto(Error::InvalidKeyLength))
    ));
}

#[test]
fn a_failed_chunk_leaves_its_output_zeroed_and_the_decryptor_stopped() {
    let aead = Aead::Aes128GcmSiv;
    let key = aead.generate_key().unwrap();
    let mut sealed = seal(aead, &key, b"", &plaintext(2 * CHUNK_LEN), 0);
    sealed[HEADER_LEN + SEALED_CHUNK_LEN + 3] ^= 1;
    let mut decryptor = Decryptor::new(aead, &key, b"").unwrap();
    let mut out = vec![0xAAu8; decryptor.update_len(sealed.len())];
    let result = decryptor.update_into(&sealed, &mut out);
    assert!(matches!(result, Err(StreamError::Corrupted { chunk: 1 })));
    assert!(out[..2 * CHUNK_LEN].iter().all(|&b| b == 0));
    assert!(matches!(
        decryptor.update(&[]),
        Err(StreamError::Corrupted { chunk: 1 })
    ));
    assert!(matches!(
        decryptor.finalize(),
        Err(StreamError::Corrupted { chunk: 1 })
    ));
}

#[test]
fn short_output_buffers_are_refused_before_any_work() {
    let aead = Aead::Aes128Gcm;
    let key = aead.generate_key().unwrap();
    let mut encryptor = Encryptor::new(aead, &key, b"").unwrap();
    let data = plaintext(CHUNK_LEN);
    let needed = encryptor.update_len(data.len());
    assert_eq!(needed, HEADER_LEN + SEALED_CHUNK_LEN);
    let mut short = vec![0u8; needed - 1];
    assert!(matches!(
        encryptor.update_into(&data, &mut short),
        Err(StreamError::WrongOutputLength { .. })
    ));
    // Nothing was consumed: the same call with room succeeds.
    let mut out = vec![0u8; needed];
    assert_eq!(encryptor.update_into(&data, &mut out).unwrap(), needed);
    let mut tail = vec![0u8; encryptor.finalize_len()];
    assert_eq!(encryptor.finalize_into(&mut tail).unwrap(), TAG_LEN);
    out.extend(tail);
    assert_eq!(open(aead, &key, b"", &out, 0).unwrap(), data);
}

/// [`decrypt_into`] into a buffer of the right length.
fn open_whole(
    aead: Aead,
    key: &[u8],
    context: &[u8],
    sealed: &[u8],
    threads: usize,
) -> Result<Vec<u8>, StreamError> {
    let options = crate::stream::Options {
        threads,
        ..Default::default()
    };
    let mut opened = vec![0; plaintext_len(sealed.len() as u64)? as usize];
    decrypt_into(aead, key, context, sealed, &mut opened, &options)?;
    Ok(opened)
}

#[test]
fn whole_messages_on_every_core_are_the_same_format() {
    for vector in vectors()["from_cryptography"].as_array().unwrap() {
        let aead = aead_named(vector["aead"].as_str().unwrap());
        let (key, context) = (hex(&vector["key"]), hex(&vector["context"]));
        let message = plaintext(vector["length"].as_u64().unwrap() as usize);
        let opened = open_whole(aead, &key, &context, &hex(&vector["ciphertext"]), 3);
        assert_eq!(opened.unwrap(), message);
    }
    for aead in Aead::ALL {
        let key = aead.generate_key().unwrap();
        for len in [0, 1, 16_383, 16_384, 16_385, 100_000] {
            let message = plaintext(len);
            for threads in [1, 3] {
                let options = crate::stream::Options {
                    threads,
                    ..Default::default()
                };
                let mut sealed = vec![0; ciphertext_len(len as u64).unwrap() as usize];
                encrypt_into(aead, &key, b"ctx", &message, &mut sealed, &options).unwrap();
                assert_eq!(open(aead, &key, b"ctx", &sealed, 0).unwrap(), message);
                let sealed = seal(aead, &key, b"ctx", &message, 1000);
                assert_eq!(
                    open_whole(aead, &key, b"ctx", &sealed, threads).unwrap(),
                    message
                );
            }
        }
        let sealed = seal(aead, &key, b"ctx", &plaintext(40_000), 0);
        let mut opened = vec![0xaa; 40_000];
        let result = decrypt_into(
            aead,
            &key,
            b"other",
            &sealed,
            &mut opened,
            &Default::default(),
        );
        assert!(matches!(result, Err(StreamError::WrongKey)));
        assert!(opened.iter().all(|&b| b == 0), "zeroed on failure");
        let mut damaged = sealed.clone();
        damaged[HEADER_LEN + SEALED_CHUNK_LEN + 3] ^= 1;
        let result = open_whole(aead, &key, b"ctx", &damaged, 2);
        assert!(
            matches!(result, Err(StreamError::Corrupted { chunk: 1 })),
            "{result:?}"
        );
        let mut short = vec![0; 39_999];
        let result = decrypt_into(aead, &key, b"ctx", &sealed, &mut short, &Default::default());
        assert!(matches!(result, Err(StreamError::WrongOutputLength { .. })));
    }
}

#[cfg(unix)]
#[test]
fn files_round_trip_by_position_and_in_order() {
    use crate::stream::{Options, OutputFile};
    use std::fs::{self, File};

    let dir = tempfile::tempdir().unwrap();
    let (plain, sealed, opened) = (
        dir.path().join("plain"),
        dir.path().join("sealed"),
        dir.path().join("opened"),
    );
    let message = plaintext(70_000);
    fs::write(&plain, &message).unwrap();
    let aead = Aead::Aes128Gcm;
    let key = aead.generate_key().unwrap();
    let options = Options::default();
    let plan = |path: &std::path::Path| OutputFile::plan(path, None, true).unwrap();

    let input = File::open(&plain).unwrap();
    let sealer = Message::new(aead, &key, b"ctx").unwrap();
    let len = sealer.encrypt_to_file(&input, plan(&sealed), &options, |_| {});
    assert_eq!(len.unwrap(), 70_000);
    assert_eq!(
        open(aead, &key, b"ctx", &fs::read(&sealed).unwrap(), 0).unwrap(),
        message
    );

    let input = File::open(&sealed).unwrap();
    let opener = Message::read(aead, &key, b"ctx", &input).unwrap();
    opener
        .decrypt_to_file(&input, plan(&opened), &options, |_| {})
        .unwrap();
    assert_eq!(fs::read(&opened).unwrap(), message);

    // In order, into any writer.
    let mut in_order = Vec::new();
    let input = File::open(&plain).unwrap();
    let sealer = Message::new(aead, &key, b"ctx").unwrap();
    sealer
        .encrypt_file(&input, &mut in_order, &options, |_| {})
        .unwrap();
    let mut back = Vec::new();
    let input = File::open(&sealed).unwrap();
    let opener = Message::read(aead, &key, b"ctx", &input).unwrap();
    opener
        .decrypt_file(&input, &mut back, &options, |_| {})
        .unwrap();
    assert_eq!(back, message);
    assert_eq!(open(aead, &key, b"ctx", &in_order, 0).unwrap(), message);

    // A wrong context or a truncated file leaves no output behind.
    fs::remove_file(&opened).unwrap();
    let input = File::open(&sealed).unwrap();
    let result = Message::read(aead, &key, b"x", &input);
    assert!(matches!(result, Err(StreamError::WrongKey)));
    let bytes = fs::read(&sealed).unwrap();
    fs::write(&sealed, &bytes[..2 * SEALED_CHUNK_LEN + HEADER_LEN]).unwrap();
    let input = File::open(&sealed).unwrap();
    let opener = Message::read(aead, &key, b"ctx", &input).unwrap();
    let result = opener.decrypt_to_file(&input, plan(&opened), &options, |_| {});
    assert!(
        matches!(result, Err(StreamError::Truncated { chunks: 2 })),
        "{result:?}"
    );
    assert!(!opened.exists());
}
