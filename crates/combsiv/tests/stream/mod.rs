//! The stream format (docs/FORMAT.md) against an independent encoder written from the spec
//! with RustCrypto's `cmac` and `aes-gcm-siv`, the stored format vectors, and every tampering
//! case the format claims to detect.

mod output;

use crate::common::{Rng, available_backends, hex, load_vectors};
use aes_gcm_siv::aead::{AeadInOut, KeyInit};
use cmac::Mac;
use combsiv::Backend;
use combsiv::stream::{
    self, Algorithm, Decryptor, Encryptor, HEADER_LEN, Header, KdfLimits, KeySource, MasterKey,
    Options, OutputFile, StreamError, TAG_LEN,
};

/// FORMAT.md section 3: K(i) = AES-256-CMAC(MK, BE32(i) || label || 0x00 || salt || BE32(bits)).
fn reference_file_key(master: &[u8; 32], salt: &[u8; 32], key_len: usize) -> Vec<u8> {
    let mut key = Vec::new();
    for i in 1u32..=2 {
        let mut mac = <cmac::Cmac<aes::Aes256> as KeyInit>::new_from_slice(master).unwrap();
        mac.update(&i.to_be_bytes());
        mac.update(b"combsiv stream v1 file key");
        mac.update(&[0]);
        mac.update(salt);
        mac.update(&(8 * key_len as u32).to_be_bytes());
        key.extend_from_slice(&mac.finalize().into_bytes());
    }
    key.truncate(key_len);
    key
}

/// FORMAT.md section 4, with the RustCrypto AEAD.
fn reference_seal_one(key: &[u8], nonce: &[u8; 12], aad: &[u8], buf: &mut Vec<u8>) {
    let tag = match key.len() {
        16 => aes_gcm_siv::Aes128GcmSiv::new_from_slice(key)
            .unwrap()
            .encrypt_inout_detached(nonce.into(), aad, buf.as_mut_slice().into())
            .unwrap(),
        _ => aes_gcm_siv::Aes256GcmSiv::new_from_slice(key)
            .unwrap()
            .encrypt_inout_detached(nonce.into(), aad, buf.as_mut_slice().into())
            .unwrap(),
    };
    buf.extend_from_slice(&tag);
}

/// A whole stream, encoded from FORMAT.md alone.
fn reference_seal(master: &[u8; 32], header: &[u8; HEADER_LEN], plaintext: &[u8]) -> Vec<u8> {
    let key_len = if header[9] == 1 { 16 } else { 32 };
    let chunk = u32::from_le_bytes(header[12..16].try_into().unwrap()) as usize;
    let salt: [u8; 32] = header[28..60].try_into().unwrap();
    let key = reference_file_key(master, &salt, key_len);
    let mut out = header.to_vec();
    let mut header_tag = Vec::new();
    reference_seal_one(&key, &[0xff; 12], header, &mut header_tag);
    out.extend_from_slice(&header_tag);
    let full = plaintext.len() / chunk;
    for i in 0..=full {
        let body = &plaintext[i * chunk..((i + 1) * chunk).min(plaintext.len())];
        let mut nonce = [0u8; 12];
        nonce[..8].copy_from_slice(&(i as u64).to_le_bytes());
        nonce[8] = u8::from(i == full);
        let mut buf = body.to_vec();
        reference_seal_one(&key, &nonce, header, &mut buf);
        out.extend_from_slice(&buf);
    }
    out
}

fn header(algorithm: Algorithm, chunk_size: u32, salt: [u8; 32]) -> Header {
    Header {
        algorithm,
        chunk_size,
        key_source: KeySource::KeyFile,
        salt,
    }
}

fn seal(
    master: &[u8; 32],
    header: &Header,
    plaintext: &[u8],
    (threads, backend): (usize, Backend),
) -> Vec<u8> {
    let mut out = Vec::new();
    let options = Options {
        threads,
        backend: Some(backend),
    };
    let key = MasterKey::new(*master);
    let encryptor = || Encryptor::with_salt_hazmat(header.clone()).unwrap();
    encryptor()
        .encrypt(&key, plaintext, &mut out, &options, |_| {})
        .unwrap();
    // The in-memory path (out-of-place sealing, no copy) writes the same stream.
    let mut from_slice = Vec::new();
    encryptor()
        .encrypt_slice(&key, plaintext, &mut from_slice, &options, |_| {})
        .unwrap();
    assert_eq!(from_slice, out, "encrypt_slice differs from encrypt");
    // The file path (positional reads by every worker) writes the same stream.
    let file = file_holding(plaintext);
    let mut from_file = Vec::new();
    encryptor()
        .encrypt_file(&key, file.as_file(), &mut from_file, &options, |_| {})
        .unwrap();
    assert_eq!(from_file, out, "encrypt_file differs from encrypt");
    // The positional paths: into memory of the exact size, and file to file (every chunk
    // read and written at its place).
    let mut into = vec![0; out.len()];
    encryptor()
        .encrypt_into(&key, plaintext, &mut into, &options)
        .unwrap();
    assert_eq!(into, out, "encrypt_into differs from encrypt");
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("sealed");
    let planned = OutputFile::plan(&target, Some(file.as_file()), false).unwrap();
    let len = encryptor()
        .encrypt_to_file(&key, file.as_file(), planned, &options, |_| {})
        .unwrap();
    assert_eq!(len, plaintext.len() as u64);
    assert_eq!(
        std::fs::read(&target).unwrap(),
        out,
        "encrypt_to_file differs"
    );
    out
}

/// The positional decryptions (into memory, file to file) end as `sequential` (the in-order
/// result) ended: the same plaintext, or an error and no output at all (zeroed memory, no
/// file). A stream that is both damaged and cut may be reported cut (the positional paths
/// look at its length first) where the in-order path reports the damage it meets first.
fn open_positional(
    key: &MasterKey,
    sealed: &[u8],
    options: &Options,
    sequential: &Result<u64, StreamError>,
    plaintext: &[u8],
) {
    let same_end = |name: &str, result: &Result<u64, StreamError>| match (result, sequential) {
        (Ok(n), Ok(m)) => assert_eq!(n, m, "{name}"),
        (Err(StreamError::Truncated { chunks }), Err(StreamError::Corrupted { chunk })) => {
            assert!(chunk < chunks, "{name}: {result:?} but {sequential:?}")
        }
        (result, sequential) => assert_eq!(
            format!("{result:?}"),
            format!("{sequential:?}"),
            "{name} ended otherwise than decrypt"
        ),
    };
    let into = Decryptor::new(sealed).and_then(|d| {
        let mut output = vec![0xA5; d.plaintext_len().unwrap_or(0) as usize];
        let result = d.decrypt_into(key, &mut output, options);
        match &result {
            Ok(_) => assert_eq!(output, plaintext, "decrypt_into"),
            Err(_) => assert!(output.iter().all(|&b| b == 0), "decrypt_into left data"),
        }
        result
    });
    same_end("decrypt_into", &into);
    let file = file_holding(sealed);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("opened");
    let to_file = Decryptor::new(file.as_file()).and_then(|d| {
        let planned = OutputFile::plan(&target, Some(file.as_file()), false)?;
        d.decrypt_to_file(key, planned, options, |_| {})
    });
    same_end("decrypt_to_file", &to_file);
    match to_file {
        Ok(_) => assert_eq!(std::fs::read(&target).unwrap(), plaintext),
        Err(_) => assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "decrypt_to_file left a file"
        ),
    }
}

/// A temporary file holding `bytes`.
fn file_holding(bytes: &[u8]) -> tempfile::NamedTempFile {
    use std::io::{Seek, Write};
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file.rewind().unwrap();
    file
}

/// Decrypts, through a reader and from memory, which must agree; returns what was written
/// and the result.
fn open(
    master: &[u8; 32],
    sealed: &[u8],
    (threads, backend): (usize, Backend),
) -> (Vec<u8>, Result<u64, StreamError>) {
    let mut out = Vec::new();
    let key = MasterKey::new(*master);
    let options = Options {
        threads,
        backend: Some(backend),
    };
    let result = Decryptor::new(sealed).and_then(|d| d.decrypt(&key, &mut out, &options, |_| {}));
    let mut from_slice = Vec::new();
    let slice_result = Decryptor::new(sealed)
        .and_then(|d| d.decrypt_slice(&key, &mut from_slice, &options, |_| {}));
    assert_eq!(
        from_slice, out,
        "decrypt_slice wrote other bytes than decrypt"
    );
    assert_eq!(
        format!("{slice_result:?}"),
        format!("{result:?}"),
        "decrypt_slice ended otherwise than decrypt"
    );
    let file = file_holding(sealed);
    let mut from_file = Vec::new();
    let file_result = Decryptor::new(file.as_file())
        .and_then(|d| d.decrypt_file(&key, &mut from_file, &options, |_| {}));
    assert_eq!(
        from_file, out,
        "decrypt_file wrote other bytes than decrypt"
    );
    assert_eq!(
        format!("{file_result:?}"),
        format!("{result:?}"),
        "decrypt_file ended otherwise than decrypt"
    );
    let plaintext = result.as_ref().map_or(&[][..], |_| &out[..]);
    open_positional(&key, sealed, &options, &result, plaintext);
    (out, result)
}

#[test]
fn matches_the_independent_encoder_around_chunk_boundaries() {
    let mut rng = Rng::new(81);
    for algorithm in [Algorithm::Aes128GcmSiv, Algorithm::Aes256GcmSiv] {
        for chunk in [16u32, 17, 64, 1000] {
            let c = chunk as usize;
            let lengths = [0, 1, c - 1, c, c + 1, 2 * c, 5 * c - 1, 5 * c + 3, 4200];
            for len in lengths {
                let master: [u8; 32] = rng.array();
                let h = header(algorithm, chunk, rng.array());
                let plaintext = rng.bytes(len);
                let expected = reference_seal(&master, &h.to_bytes(), &plaintext);
                let runs = [1, 2, 3].into_iter().flat_map(|threads| {
                    available_backends()
                        .into_iter()
                        .map(move |backend| (threads, backend))
                });
                for run in runs {
                    let context = format!("{algorithm:?} chunk {chunk} len {len} {run:?}");
                    assert_eq!(seal(&master, &h, &plaintext, run), expected, "{context}");
                    let (opened, result) = open(&master, &expected, run);
                    assert_eq!(result.ok(), Some(len as u64), "{context}");
                    assert_eq!(opened, plaintext, "{context}");
                }
                assert_eq!(expected.len() as u64, stream::sealed_len(len as u64, chunk));
            }
        }
    }
}

#[test]
fn stored_format_vectors() {
    let file = load_vectors("stream.json");
    let vectors = file["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 6);
    for v in vectors {
        let field = |name: &str| hex(&v[name]);
        let master: [u8; 32] = field("master_key").try_into().unwrap();
        let header_bytes: [u8; HEADER_LEN] = field("header").try_into().unwrap();
        let (plaintext, sealed) = (field("plaintext"), field("stream"));
        assert_eq!(reference_seal(&master, &header_bytes, &plaintext), sealed);
        let parsed = Header::parse(&header_bytes).unwrap();
        assert_eq!(parsed.to_bytes(), header_bytes);
        for backend in available_backends() {
            assert_eq!(seal(&master, &parsed, &plaintext, (2, backend)), sealed);
            let (opened, result) = open(&master, &sealed, (2, backend));
            assert_eq!(result.ok(), Some(plaintext.len() as u64));
            assert_eq!(opened, plaintext);
        }
    }
}

/// How a tampered stream may fail: its output must be a prefix of the plaintext ending on a
/// chunk boundary before the damage, and the error must say why.
fn assert_rejected(
    name: &str,
    master: &[u8; 32],
    sealed: &[u8],
    plaintext: &[u8],
    chunk: usize,
) -> StreamError {
    let (opened, result) = open(master, sealed, (2, Backend::detected()));
    let error = match result {
        Err(error) => error,
        Ok(_) => panic!("{name}: accepted"),
    };
    assert!(
        opened.len().is_multiple_of(chunk),
        "{name}: partial chunk released"
    );
    assert_eq!(
        opened,
        plaintext[..opened.len()],
        "{name}: unverified data released"
    );
    error
}

#[test]
fn every_tampering_is_detected() {
    let chunk = 64usize;
    let master = [7u8; 32];
    let plaintext = Rng::new(5).bytes(chunk * 6 + 20);
    let h = header(Algorithm::Aes256GcmSiv, chunk as u32, [1; 32]);
    let sealed = seal(&master, &h, &plaintext, (2, Backend::detected()));
    let start = HEADER_LEN + TAG_LEN;
    let sealed_chunk = chunk + TAG_LEN;
    let chunk_range = |i: usize| {
        let from = start + i * sealed_chunk;
        from..(from + sealed_chunk).min(sealed.len())
    };
    let chunks: Vec<&[u8]> = (0..7).map(|i| &sealed[chunk_range(i)]).collect();
    let rebuild = |order: &[usize]| {
        let mut out = sealed[..start].to_vec();
        for &i in order {
            out.extend_from_slice(chunks[i]);
        }
        out
    };
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for position in (0..sealed.len()).step_by(7) {
        let mut bad = sealed.clone();
        bad[position] ^= 0x20;
        cases.push((format!("flip byte {position}"), bad));
    }
    cases.push((
        "swap chunks 1 and 2".into(),
        rebuild(&[0, 2, 1, 3, 4, 5, 6]),
    ));
    cases.push(("drop chunk 3".into(), rebuild(&[0, 1, 2, 4, 5, 6])));
    cases.push((
        "duplicate chunk 2".into(),
        rebuild(&[0, 1, 2, 2, 3, 4, 5, 6]),
    ));
    cases.push(("drop the final chunk".into(), rebuild(&[0, 1, 2, 3, 4, 5])));
    cases.push(("final chunk moved first".into(), rebuild(&[6])));
    for cut in 0..sealed.len() {
        cases.push((format!("truncate to {cut} bytes"), sealed[..cut].to_vec()));
    }
    for extra in [&[0u8][..], &[0; 16], chunks[1], chunks[6]] {
        let mut longer = sealed.clone();
        longer.extend_from_slice(extra);
        cases.push((format!("append {} bytes", extra.len()), longer));
    }
    // Another stream under the same key: same layout, its own salt and so its own file key.
    let other = seal(
        &master,
        &header(Algorithm::Aes256GcmSiv, chunk as u32, [2; 32]),
        &plaintext,
        (1, Backend::Portable),
    );
    let mut spliced = sealed.clone();
    spliced[chunk_range(2)].copy_from_slice(&other[chunk_range(2)]);
    cases.push(("splice chunk 2 from another stream".into(), spliced));
    let mut other_header = other[..start].to_vec();
    other_header.extend_from_slice(&sealed[start..]);
    cases.push(("another stream's header".into(), other_header));

    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (name, bad) in &cases {
        let error = assert_rejected(name, &master, bad, &plaintext, chunk);
        let kind = format!("{error:?}");
        let kind = kind
            .split([' ', '(', '{'])
            .next()
            .unwrap_or_default()
            .to_owned();
        *counts.entry(kind).or_default() += 1;
    }
    // The wrong key fails at the header, before any chunk.
    let error = assert_rejected("wrong key", &[8; 32], &sealed, &plaintext, chunk);
    assert!(matches!(error, StreamError::WrongKey));
    assert!(cases.len() > 600, "{} cases", cases.len());
    for kind in ["Corrupted", "Truncated", "WrongKey", "NotCombsiv"] {
        assert!(
            counts.contains_key(kind),
            "no case failed as {kind}: {counts:?}"
        );
    }
}

#[test]
fn headers_are_validated() {
    let good = header(Algorithm::Aes128GcmSiv, 64, [3; 32]).to_bytes();
    let mutate = |at: usize, value: u8| {
        let mut bad = good;
        bad[at] = value;
        Header::parse(&bad)
    };
    assert!(matches!(mutate(0, b'C'), Err(StreamError::NotCombsiv)));
    assert!(matches!(
        mutate(8, 2),
        Err(StreamError::UnsupportedVersion(2))
    ));
    assert!(matches!(mutate(9, 3), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(10, 2), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(11, 1), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(63, 1), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(16, 1), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(12, 15), Err(StreamError::InvalidHeader(_))));
    assert!(matches!(mutate(15, 8), Err(StreamError::InvalidHeader(_))));
    // Argon2id with a zero parameter.
    let mut argon = header(Algorithm::Aes128GcmSiv, 64, [3; 32]);
    argon.key_source = KeySource::Argon2id {
        memory_kib: 8,
        iterations: 0,
        parallelism: 1,
    };
    assert!(matches!(
        Header::parse(&argon.to_bytes()),
        Err(StreamError::InvalidHeader(_))
    ));
    // Headers built field by field are checked before any output: a zero chunk size would
    // never reach a final chunk.
    let zero = Header {
        chunk_size: 0,
        ..header(Algorithm::Aes256GcmSiv, 64, [3; 32])
    };
    assert!(matches!(
        Encryptor::with_salt_hazmat(zero),
        Err(StreamError::InvalidHeader(_))
    ));
    assert!(matches!(
        Encryptor::new(Algorithm::Aes256GcmSiv, 8, KeySource::KeyFile),
        Err(StreamError::InvalidHeader(_))
    ));
    // A cut header is truncated; anything without the magic is not a stream.
    assert!(matches!(
        Decryptor::new(&good[..10]),
        Err(StreamError::Truncated { chunks: 0 })
    ));
    assert!(matches!(
        Decryptor::new(&b"hello"[..]),
        Err(StreamError::NotCombsiv)
    ));
}

/// Every stream gets its own salt, so two encryptions of the same data under the same key
/// share nothing; the only way to pick a salt is the hazardous constructor.
#[test]
fn every_encryptor_draws_a_fresh_salt() {
    let key = MasterKey::new([9; 32]);
    let mut salts = std::collections::HashSet::new();
    let mut streams = Vec::new();
    for _ in 0..16 {
        let encryptor = Encryptor::new(Algorithm::Aes256GcmSiv, 64, KeySource::KeyFile).unwrap();
        assert!(salts.insert(encryptor.header().salt));
        let mut sealed = Vec::new();
        encryptor
            .encrypt(
                &key,
                &[5u8; 100][..],
                &mut sealed,
                &Options::default(),
                |_| {},
            )
            .unwrap();
        streams.push(sealed);
    }
    for (i, a) in streams.iter().enumerate() {
        for b in &streams[i + 1..] {
            assert_ne!(a[HEADER_LEN..], b[HEADER_LEN..]);
        }
    }
}

/// A header may not ask a reader for more Argon2id work than its limits allow: refused while
/// parsing, before any key is derived. Raising the limits lets it through.
#[test]
fn argon2_parameters_in_a_header_are_capped() {
    let mut h = header(Algorithm::Aes256GcmSiv, 64, [4; 32]);
    let mut bytes_with = |memory_kib, iterations, parallelism| {
        h.key_source = KeySource::Argon2id {
            memory_kib,
            iterations,
            parallelism,
        };
        let mut bytes = h.to_bytes().to_vec();
        bytes.extend_from_slice(&[0; TAG_LEN + TAG_LEN]);
        bytes
    };
    let within = bytes_with(1024 * 1024, 10, 4);
    assert!(Decryptor::new(&within[..]).is_ok());
    for hostile in [
        bytes_with(4 * 1024 * 1024, 3, 1),
        bytes_with(64 * 1024, 64, 1),
        bytes_with(64 * 1024, 3, 16),
        bytes_with(u32::MAX, u32::MAX, u32::MAX),
    ] {
        let error = Decryptor::new(&hostile[..]).unwrap_err();
        assert!(
            matches!(error, StreamError::KdfTooExpensive { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("more than this reader allows"));
        let raised = KdfLimits {
            max_memory_kib: u32::MAX,
            max_iterations: u32::MAX,
            max_parallelism: u32::MAX,
        };
        assert!(Decryptor::with_limits(&hostile[..], &raised).is_ok());
    }
    // Key-file streams have no Argon2id work to cap.
    let key_file = header(Algorithm::Aes256GcmSiv, 64, [4; 32]);
    let tight = KdfLimits {
        max_memory_kib: 0,
        max_iterations: 0,
        max_parallelism: 0,
    };
    let mut bytes = key_file.to_bytes().to_vec();
    bytes.extend_from_slice(&[0; TAG_LEN]);
    assert!(Decryptor::with_limits(&bytes[..], &tight).is_ok());
}

/// `check_key` finds a wrong key from the header alone, before any output.
#[test]
fn the_key_is_checked_before_any_output() {
    let h = header(Algorithm::Aes128GcmSiv, 64, [6; 32]);
    let sealed = seal(&[1; 32], &h, b"secret", (1, Backend::detected()));
    let decryptor = Decryptor::new(&sealed[..]).unwrap();
    assert!(decryptor.check_key(&MasterKey::new([1; 32])).is_ok());
    assert!(matches!(
        decryptor.check_key(&MasterKey::new([2; 32])),
        Err(StreamError::WrongKey)
    ));
}

/// A reader, writer or progress callback that panics at any chunk ends the whole stream with
/// an error, on any number of threads; nothing hangs.
#[test]
fn a_panic_anywhere_in_the_pipeline_ends_the_stream_with_an_error() {
    use std::io::{self, Read, Write};

    struct PanickingReader {
        left: usize,
        panic_after: usize,
    }
    impl Read for PanickingReader {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            assert!(self.panic_after > 0, "reader panics");
            let n = buf.len().min(self.left).min(16);
            self.left -= n;
            self.panic_after -= 1;
            Ok(n)
        }
    }
    struct PanickingWriter {
        panic_after: usize,
    }
    impl Write for PanickingWriter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            assert!(self.panic_after > 0, "writer panics");
            self.panic_after -= 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let key = MasterKey::new([3; 32]);
    let plaintext = vec![1u8; 64 * 20];
    let encryptor = || Encryptor::new(Algorithm::Aes256GcmSiv, 64, KeySource::KeyFile).unwrap();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for threads in [1, 2, 4] {
        let options = Options {
            threads,
            backend: None,
        };
        for at in [0, 1, 7, 19] {
            let reader = PanickingReader {
                left: plaintext.len(),
                panic_after: at,
            };
            let result = encryptor().encrypt(&key, reader, io::sink(), &options, |_| {});
            assert!(
                matches!(result, Err(StreamError::Panicked(_))),
                "reader {at}"
            );
            // (The header and its tag are written before the pipeline starts, by the caller's
            // thread: a panic there is the caller's own.)
            let writer = PanickingWriter {
                panic_after: at + 2,
            };
            let result = encryptor().encrypt_slice(&key, &plaintext, writer, &options, |_| {});
            assert!(
                matches!(result, Err(StreamError::Panicked(_))),
                "writer {at}"
            );
            let result =
                encryptor().encrypt_slice(&key, &plaintext, io::sink(), &options, |done| {
                    assert!(done < 64 * (at as u64 + 1), "progress panics");
                });
            let error = result.unwrap_err();
            assert!(error.to_string().contains("progress panics"), "{error}");
            // Chunks by position: a panicking progress report stops the workers, and the
            // output file is removed.
            let file = file_holding(&plaintext);
            let dir = tempfile::tempdir().unwrap();
            let planned = OutputFile::plan(&dir.path().join("out"), None, false).unwrap();
            let result =
                encryptor().encrypt_to_file(&key, file.as_file(), planned, &options, |done| {
                    assert!(done < 64 * (at as u64 + 1), "progress panics");
                });
            let error = result.unwrap_err();
            assert!(error.to_string().contains("progress panics"), "{error}");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }
    std::panic::set_hook(hook);
}

/// A file that another writer truncates, or rewrites in place, while it is encrypted or
/// decrypted is refused: each chunk is sealed from the worker's own copy, and the size and
/// modification time are compared at the end.
#[test]
fn a_file_that_changes_while_it_is_read_is_refused() {
    use std::os::unix::fs::FileExt;
    let key = MasterKey::new([3; 32]);
    let options = Options {
        threads: 1,
        backend: None,
    };
    let plaintext = vec![5u8; 64 * 1024];
    let encryptor = || Encryptor::new(Algorithm::Aes256GcmSiv, 1024, KeySource::KeyFile).unwrap();
    let mut sealed = Vec::new();
    encryptor()
        .encrypt(&key, &plaintext[..], &mut sealed, &options, |_| {})
        .unwrap();
    // The file's time must move: modification times tick in steps of a few milliseconds.
    let wait = || std::thread::sleep(std::time::Duration::from_millis(30));
    for data in [&plaintext, &sealed] {
        let changes: [&(dyn Fn(&std::fs::File) + Sync); 2] =
            [&|file| file.set_len(10_000).unwrap(), &|file| {
                file.write_all_at(b"changed", 20_000).unwrap()
            }];
        for (change, to_file) in changes.into_iter().flat_map(|c| [(c, false), (c, true)]) {
            let file = file_holding(data);
            wait();
            let writer = file.reopen().unwrap();
            let mut changed = false;
            let progress = move |done: u64| {
                if done > 4096 && !changed {
                    changed = true;
                    change(&writer);
                }
            };
            let dir = tempfile::tempdir().unwrap();
            let planned = OutputFile::plan(&dir.path().join("out"), Some(file.as_file()), false);
            let planned = planned.unwrap();
            let result = match (data == &plaintext, to_file) {
                (true, false) => {
                    encryptor().encrypt_file(&key, file.as_file(), Vec::new(), &options, progress)
                }
                (true, true) => {
                    encryptor().encrypt_to_file(&key, file.as_file(), planned, &options, progress)
                }
                (false, false) => Decryptor::new(file.as_file())
                    .and_then(|d| d.decrypt_file(&key, Vec::new(), &options, progress)),
                (false, true) => Decryptor::new(file.as_file())
                    .and_then(|d| d.decrypt_to_file(&key, planned, &options, progress)),
            };
            // Decrypting, bytes changed before they are read fail their chunk's tag.
            assert!(
                matches!(result, Err(StreamError::InputChanged))
                    || (data != &plaintext && matches!(result, Err(StreamError::Corrupted { .. }))),
                "{result:?}"
            );
            let left = std::fs::read_dir(dir.path()).unwrap().count();
            assert_eq!(left, 0, "an output was left behind");
        }
    }
}

/// `encrypt_file` starts at the file's offset: one past the end (a file truncated after it
/// was opened and read) gives the stream of nothing, not an overflow.
#[test]
fn a_file_read_from_past_its_end_seals_nothing() {
    use std::io::{Seek, SeekFrom};
    let key = MasterKey::new([4; 32]);
    let mut file = file_holding(&[1; 100]);
    file.seek(SeekFrom::Start(200)).unwrap();
    let encryptor = Encryptor::new(Algorithm::Aes256GcmSiv, 64, KeySource::KeyFile).unwrap();
    let mut sealed = Vec::new();
    let len = encryptor
        .encrypt_file(
            &key,
            file.as_file(),
            &mut sealed,
            &Options::default(),
            |_| {},
        )
        .unwrap();
    assert_eq!(len, 0);
    let mut opened = Vec::new();
    let decryptor = Decryptor::new(&sealed[..]).unwrap();
    decryptor
        .decrypt(&key, &mut opened, &Options::default(), |_| {})
        .unwrap();
    assert!(opened.is_empty());
}

/// The positional paths hand out runs of chunks (about 64 KiB each): streams of many small
/// chunks that end inside, at and just past a run, on more threads than runs, open and seal
/// as the in-order path does; an output of the wrong length is refused before any work.
#[test]
fn positional_runs_cover_every_chunk() {
    let mut rng = Rng::new(82);
    let key = MasterKey::new(rng.array());
    let run = 64 * 1024;
    for (chunk, len) in [
        (16u32, run - 1),
        (16, run),
        (16, run + 16),
        (48, 3 * run + 5),
    ] {
        let h = header(Algorithm::Aes128GcmSiv, chunk, rng.array());
        let plaintext = rng.bytes(len);
        for threads in [1, 2, 5] {
            let options = Options {
                threads,
                backend: None,
            };
            let encryptor = || Encryptor::with_salt_hazmat(h.clone()).unwrap();
            let mut expected = Vec::new();
            encryptor()
                .encrypt_slice(&key, &plaintext, &mut expected, &options, |_| {})
                .unwrap();
            let mut sealed = vec![0; expected.len()];
            encryptor()
                .encrypt_into(&key, &plaintext, &mut sealed, &options)
                .unwrap();
            assert_eq!(
                sealed, expected,
                "chunk {chunk} len {len} threads {threads}"
            );
            let decryptor = Decryptor::new(&sealed[..]).unwrap();
            let mut opened = vec![0; decryptor.plaintext_len().unwrap() as usize];
            decryptor.decrypt_into(&key, &mut opened, &options).unwrap();
            assert_eq!(opened, plaintext);
            let mut short = vec![0; sealed.len() - 1];
            assert!(matches!(
                encryptor().encrypt_into(&key, &plaintext, &mut short, &options),
                Err(StreamError::WrongOutputLength { given, .. }) if given == short.len() as u64
            ));
            let mut long = vec![0; plaintext.len() + 1];
            assert!(matches!(
                Decryptor::new(&sealed[..])
                    .unwrap()
                    .decrypt_into(&key, &mut long, &options),
                Err(StreamError::WrongOutputLength { .. })
            ));
        }
    }
}

/// The ordered writer (a `Write` output) with more workers than cores and an output that
/// stalls now and then: workers run ahead until the window is full, then wait; the stream is
/// the one a single thread writes.
#[test]
fn ordered_output_with_many_workers_and_a_slow_writer() {
    use std::io::{self, Write};
    struct Stalling(Vec<u8>);
    impl Write for Stalling {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0.len() % 7 == 3 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut rng = Rng::new(83);
    let master: [u8; 32] = rng.array();
    let key = MasterKey::new(master);
    let h = header(Algorithm::Aes256GcmSiv, 16, rng.array());
    let plaintext = rng.bytes(16 * 300 + 5);
    let one = seal(&master, &h, &plaintext, (1, Backend::detected()));
    for threads in [4, 9, 16] {
        let options = Options {
            threads,
            backend: None,
        };
        let mut out = Stalling(Vec::new());
        Encryptor::with_salt_hazmat(h.clone())
            .unwrap()
            .encrypt_slice(&key, &plaintext, &mut out, &options, |_| {})
            .unwrap();
        assert_eq!(out.0, one, "threads {threads}");
        let mut opened = Stalling(Vec::new());
        Decryptor::new(&one[..])
            .unwrap()
            .decrypt(&key, &mut opened, &options, |_| {})
            .unwrap();
        assert_eq!(opened.0, plaintext, "threads {threads}");
    }
}
