//! Decrypting damaged streams never panics, never accepts a changed stream, and releases only
//! whole verified chunks of the original plaintext.
#![no_main]

use combsiv::stream::{Algorithm, Decryptor, Encryptor, Header, KeySource, MAGIC, MasterKey, Options};
use libfuzzer_sys::fuzz_target;

fn decrypt(sealed: &[u8], threads: usize) -> (Vec<u8>, bool) {
    let key = MasterKey::new([7; 32]);
    let mut out = Vec::new();
    let options = Options { threads, backend: None };
    let ok = Decryptor::new(sealed)
        .and_then(|d| d.decrypt(&key, &mut out, &options, |_| {}))
        .is_ok();
    (out, ok)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let threads = 1 + usize::from(mode >> 6);
    if mode & 1 == 0 {
        // Arbitrary bytes behind the magic: header parsing and everything after it.
        let mut input = MAGIC.to_vec();
        input.extend_from_slice(rest);
        let (out, ok) = decrypt(&input, threads);
        assert!(!ok && out.is_empty(), "a forged header tag was accepted");
        return;
    }
    // A valid stream, then edits: (op, position high, position low, value) quadruples.
    let Some((&len, rest)) = rest.split_first() else {
        return;
    };
    let chunk = 16 + u32::from(mode >> 1 & 31);
    let plaintext: Vec<u8> = (0..usize::from(len) * 3).map(|i| i as u8).collect();
    let header = Header {
        algorithm: if mode & 2 == 0 { Algorithm::Aes128GcmSiv } else { Algorithm::Aes256GcmSiv },
        chunk_size: chunk,
        key_source: KeySource::KeyFile,
        salt: [1; 32],
    };
    let mut sealed = Vec::new();
    let key = MasterKey::new([7; 32]);
    // A fixed salt keeps the corpus reproducible; real streams draw theirs.
    Encryptor::with_salt_hazmat(header)
        .unwrap()
        .encrypt(&key, &plaintext[..], &mut sealed, &Options::default(), |_| {})
        .unwrap();
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
    let (out, ok) = decrypt(&sealed, threads);
    if ok {
        assert_eq!(sealed, original, "a changed stream was accepted");
        assert_eq!(out, plaintext);
    } else {
        assert!(out.len() % chunk as usize == 0, "a partial chunk was released");
        assert_eq!(out[..], plaintext[..out.len()], "unverified data was released");
    }
});
