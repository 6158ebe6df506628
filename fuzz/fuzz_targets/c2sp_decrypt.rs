//! C2SP messages, damaged: the incremental decryptor releases only whole verified chunks of
//! the original plaintext and accepts only the original; the seekable decryptor answers every
//! read with the original's bytes or an error; arbitrary bytes never open.
#![no_main]

use combsiv::c2sp::{self, Aead, Decryptor, Message};
use combsiv::random_access::SeekableDecryptor;
use combsiv::stream::Options;
use libfuzzer_sys::fuzz_target;

const KEY: [u8; 32] = [7; 32];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let aead = Aead::ALL[usize::from(mode & 3)];
    let key = &KEY[..aead.key_size().key_len()];
    if mode & 4 == 0 {
        // Arbitrary bytes as a message: the commitment fails, or a chunk does.
        assert!(SeekableDecryptor::c2sp(rest, aead, key, b"").is_err());
        let mut decryptor = Decryptor::new(aead, key, b"").unwrap();
        let out = decryptor.update(rest);
        assert!(out.is_err() || decryptor.finalize().is_err());
        return;
    }
    // A valid message, then edits: (op, position high, position low, value) quadruples.
    let Some((&len, rest)) = rest.split_first() else {
        return;
    };
    let plaintext: Vec<u8> = (0..usize::from(len) * 200).map(|i| i as u8).collect();
    // A fixed salt keeps the corpus reproducible; real messages draw theirs.
    let message = Message::with_salt_hazmat(aead, key, b"ctx", [1; c2sp::SALT_LEN]).unwrap();
    let mut sealed = vec![0; c2sp::ciphertext_len(plaintext.len() as u64).unwrap() as usize];
    message.encrypt_into(&plaintext, &mut sealed, &Options::default()).unwrap();
    let original = sealed.clone();
    for edit in rest.chunks_exact(4) {
        let position = usize::from(u16::from_be_bytes([edit[1], edit[2]]));
        match edit[0] % 4 {
            0 if !sealed.is_empty() => {
                let at = position % sealed.len();
                sealed[at] ^= edit[3].max(1);
            }
            1 => sealed.truncate(position % (sealed.len() + 1)),
            2 => sealed.insert(position % (sealed.len() + 1), edit[3]),
            _ => sealed.push(edit[3]),
        }
    }

    // Incremental, fed in pieces of a size the input chose.
    let piece = 1 + usize::from(mode >> 3) * 701;
    let mut decryptor = Decryptor::new(aead, key, b"ctx").unwrap();
    let mut out = Vec::new();
    let mut ok = true;
    for part in sealed.chunks(piece) {
        match decryptor.update(part) {
            Ok(opened) => out.extend(opened),
            Err(_) => {
                ok = false;
                break;
            }
        }
    }
    if ok {
        match decryptor.finalize() {
            Ok(last) => out.extend(last),
            Err(_) => ok = false,
        }
    }
    if ok {
        assert_eq!(sealed, original, "a changed message was accepted");
        assert_eq!(out, plaintext);
    } else {
        assert!(out.len() % c2sp::CHUNK_LEN == 0, "a partial chunk was released");
        assert_eq!(out[..], plaintext[..out.len()], "unverified data was released");
    }

    // At random: reads at offsets the edits chose.
    let Ok(file) = SeekableDecryptor::c2sp(&sealed[..], aead, key, b"ctx") else {
        return;
    };
    assert_eq!(file.len(), plaintext.len() as u64, "the final chunk fixes the length");
    for edit in rest.chunks_exact(4) {
        let start = usize::from(u16::from_be_bytes([edit[1], edit[2]])) % (plaintext.len() + 1);
        let mut buf = vec![0xaa; usize::from(edit[3]) * 97];
        match file.read_at(start as u64, &mut buf) {
            Ok(n) => assert_eq!(buf[..n], plaintext[start..start + n]),
            Err(_) => assert!(buf.iter().all(|&b| b == 0), "a failed read left data"),
        }
    }
});
