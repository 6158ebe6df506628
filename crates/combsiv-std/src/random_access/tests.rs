use alloc::vec::Vec;
use std::io::{Cursor, Read, Seek, SeekFrom};

use super::*;
use crate::c2sp::{Aead, Encryptor as C2spEncryptor};
use crate::stream::{Algorithm, Encryptor, KeySource};

/// A stream-format chunk small enough that short plaintexts span many chunks.
const STREAM_CHUNK: u32 = 100;

fn plaintext(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn stream_sealed(key: &MasterKey, plaintext: &[u8]) -> Vec<u8> {
    let encryptor = Encryptor::new(Algorithm::Aes128GcmSiv, STREAM_CHUNK, KeySource::KeyFile)
        .expect("encryptor");
    let mut sealed = Vec::new();
    encryptor
        .encrypt(key, plaintext, &mut sealed, &Options::default(), |_| {})
        .expect("encrypt");
    sealed
}

fn c2sp_sealed(aead: Aead, key: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let mut encryptor = C2spEncryptor::new(aead, key, b"ctx").expect("encryptor");
    let mut sealed = encryptor.update(plaintext).expect("update");
    sealed.extend(encryptor.finalize().expect("finalize"));
    sealed
}

/// Every read that starts and ends at or near a chunk boundary returns the plaintext.
fn check_ranges<S: ReadAt>(file: &SeekableDecryptor<S>, plaintext: &[u8], chunk: u64) {
    assert_eq!(file.len(), plaintext.len() as u64);
    let len = plaintext.len() as u64;
    let mut offsets = vec![0, 1, len.saturating_sub(1), len, len + 5];
    for k in 1..=len / chunk {
        offsets.extend([k * chunk - 1, k * chunk, k * chunk + 1]);
    }
    for &start in &offsets {
        for &end in &offsets {
            let want = end.saturating_sub(start) as usize;
            let mut buf = vec![0xaa; want];
            let n = file.read_at(start, &mut buf).expect("read_at");
            let from = (start.min(len)) as usize;
            let expected = &plaintext[from..(from + want).min(plaintext.len())];
            assert_eq!(&buf[..n], expected, "read_at({start}, {want})");
        }
    }
}

#[test]
fn reads_every_range_of_a_stream() {
    let key = MasterKey::new([3; 32]);
    for len in [0, 1, 99, 100, 101, 1000, 1234] {
        let plaintext = plaintext(len);
        let sealed = stream_sealed(&key, &plaintext);
        let file = SeekableDecryptor::stream(&sealed[..], &key).expect("open");
        check_ranges(&file, &plaintext, u64::from(STREAM_CHUNK));
    }
}

#[test]
fn reads_every_range_of_a_c2sp_message() {
    for aead in Aead::ALL {
        let key = vec![9; aead.key_size().key_len()];
        for len in [0, 1, 16383, 16384, 16385, 40_000] {
            let plaintext = plaintext(len);
            let sealed = c2sp_sealed(aead, &key, &plaintext);
            let file = SeekableDecryptor::c2sp(&sealed[..], aead, &key, b"ctx").expect("open");
            check_ranges(&file, &plaintext, c2sp::CHUNK_LEN as u64);
        }
    }
}

#[test]
fn reads_and_seeks_like_a_file() {
    let key = vec![1; 16];
    let plaintext = plaintext(50_000);
    let sealed = c2sp_sealed(Aead::Aes128Gcm, &key, &plaintext);
    // Through a `Read + Seek` source, as a `Read + Seek`.
    let source = SeekSource::new(Cursor::new(sealed));
    let mut file = SeekableDecryptor::c2sp(source, Aead::Aes128Gcm, &key, b"ctx").expect("open");
    let mut all = Vec::new();
    file.read_to_end(&mut all).expect("read");
    assert_eq!(all, plaintext);
    assert_eq!(file.seek(SeekFrom::End(-20_000)).expect("seek"), 30_000);
    let mut piece = [0u8; 3];
    file.read_exact(&mut piece).expect("read");
    assert_eq!(piece[..], plaintext[30_000..30_003]);
    assert_eq!(file.seek(SeekFrom::Current(-30_003)).expect("seek"), 0);
    assert!(file.seek(SeekFrom::Current(-1)).is_err());
    assert_eq!(file.seek(SeekFrom::Start(60_000)).expect("seek"), 60_000);
    assert_eq!(file.read(&mut piece).expect("read"), 0);
}

#[test]
fn refuses_a_wrong_key_or_context() {
    let key = vec![1; 32];
    let sealed = c2sp_sealed(Aead::Aes256GcmSiv, &key, &plaintext(10));
    let wrong = |result: Result<SeekableDecryptor<&[u8]>, StreamError>| {
        assert!(matches!(result, Err(StreamError::WrongKey)), "{result:?}");
    };
    wrong(SeekableDecryptor::c2sp(
        &sealed[..],
        Aead::Aes256GcmSiv,
        &[2; 32],
        b"ctx",
    ));
    wrong(SeekableDecryptor::c2sp(
        &sealed[..],
        Aead::Aes256GcmSiv,
        &key,
        b"other",
    ));
    wrong(SeekableDecryptor::c2sp(
        &sealed[..],
        Aead::Aes256Gcm,
        &key,
        b"ctx",
    ));
    let stream = stream_sealed(&MasterKey::new([3; 32]), &plaintext(10));
    let opened = SeekableDecryptor::stream(&stream[..], &MasterKey::new([4; 32]));
    assert!(matches!(opened, Err(StreamError::WrongKey)));
}

#[test]
fn a_truncated_or_extended_file_does_not_open() {
    let key = MasterKey::new([3; 32]);
    let stream = stream_sealed(&key, &plaintext(1000));
    let c2sp_key = vec![5; 16];
    let message = c2sp_sealed(Aead::Aes128GcmSiv, &c2sp_key, &plaintext(40_000));
    for cut in [1, 15, 16, 17, 100, 116, 117] {
        let opened = SeekableDecryptor::stream(&stream[..stream.len() - cut], &key);
        assert!(
            matches!(
                opened,
                Err(StreamError::Truncated { .. } | StreamError::Corrupted { .. })
            ),
            "cut {cut}: {opened:?}"
        );
    }
    for cut in [1, 16, 7000, 7248, 7249, 16_400 + 7248] {
        let cut = &message[..message.len() - cut];
        let opened = SeekableDecryptor::c2sp(cut, Aead::Aes128GcmSiv, &c2sp_key, b"ctx");
        assert!(opened.is_err(), "{opened:?}");
    }
    let mut longer = message.clone();
    longer.extend([0; 16]);
    assert!(SeekableDecryptor::c2sp(&longer[..], Aead::Aes128GcmSiv, &c2sp_key, b"ctx").is_err());
}

#[test]
fn a_damaged_chunk_fails_only_the_reads_that_touch_it() {
    let key = vec![5; 16];
    let plaintext = plaintext(60_000);
    let mut sealed = c2sp_sealed(Aead::Aes128Gcm, &key, &plaintext);
    let chunk = c2sp::CHUNK_LEN as u64;
    sealed[c2sp::HEADER_LEN + c2sp::SEALED_CHUNK_LEN + 10] ^= 1; // chunk 1
    let file = SeekableDecryptor::c2sp(&sealed[..], Aead::Aes128Gcm, &key, b"ctx").expect("open");
    let mut buf = [0u8; 4096];
    assert_eq!(file.read_at(0, &mut buf).expect("chunk 0"), 4096);
    assert_eq!(
        file.read_at(2 * chunk + 5, &mut buf).expect("chunk 2"),
        4096
    );
    let failed = file.read_at(chunk - 100, &mut buf);
    assert!(
        matches!(failed, Err(StreamError::Corrupted { chunk: 1 })),
        "{failed:?}"
    );
    assert!(buf.iter().all(|&b| b == 0), "the output is zeroed");
}

#[test]
fn fetching_the_ciphertext_range_is_enough() {
    /// Answers only inside the allowed ranges.
    struct Ranges<'a>(&'a [u8], Vec<Range<u64>>);
    impl ReadAt for Ranges<'_> {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            let end = offset + buf.len() as u64;
            if self
                .1
                .iter()
                .any(|r| r.start <= offset && end.min(self.0.len() as u64) <= r.end)
            {
                self.0.read_at(buf, offset)
            } else {
                Err(io::Error::other(format!("fetched {offset}..{end}")))
            }
        }
        fn size(&self) -> io::Result<u64> {
            self.0.size()
        }
    }
    let key = vec![5; 32];
    let plaintext = plaintext(100_000);
    let sealed = c2sp_sealed(Aead::Aes256Gcm, &key, &plaintext);
    let len = sealed.len() as u64;
    let wanted = 40_000..44_096;
    let fetch = c2sp::ciphertext_range(wanted.clone());
    let final_chunk = c2sp::ciphertext_range(99_999..100_000);
    let header = 0..c2sp::HEADER_LEN as u64;
    let source = Ranges(
        &sealed,
        vec![header, fetch.start..fetch.end.min(len), final_chunk],
    );
    let file = SeekableDecryptor::c2sp(source, Aead::Aes256Gcm, &key, b"ctx").expect("open");
    let mut buf = vec![0; 4096];
    file.read_at(wanted.start, &mut buf).expect("read");
    assert_eq!(buf, plaintext[40_000..44_096]);
    assert_eq!(file.ciphertext_range(wanted.clone()), fetch);
    assert!(
        file.read_at(0, &mut buf).is_err(),
        "chunk 0 was not fetched"
    );

    let stream_key = MasterKey::new([3; 32]);
    let stream = stream_sealed(&stream_key, &plaintext[..1000]);
    let file = SeekableDecryptor::stream(&stream[..], &stream_key).expect("open");
    assert_eq!(
        file.ciphertext_range(250..350),
        stream::ciphertext_range(STREAM_CHUNK, 250..350)
    );
    assert_eq!(
        stream::ciphertext_range(STREAM_CHUNK, 250..350),
        80 + 2 * 116..80 + 4 * 116
    );
}
