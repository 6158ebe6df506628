//! Every length from 0 to 300 bytes, and one byte either side of the 8-, 16- and 32-block
//! stride boundaries up to 2,048 bytes (the two x86 tiers' strides, and the 32 blocks after
//! which the stitched loops hash their own output), through every backend, in place (even
//! lengths) and out of place (odd lengths), against RustCrypto.
//!
//! This is the part of the differential tests that Miri runs, which executes the VAES kernels
//! on CPUs without VAES and checks every `unsafe` block. RustCrypto's constant-time software
//! AES would take hours there, so each algorithm's sealed messages are folded into a digest
//! that must equal the one recorded below; the native run compares every message with
//! RustCrypto directly and checks that the recorded digests are RustCrypto's. The backends
//! must also agree message by message, so a mismatch under Miri still names its length.
//!
//! Miri runs an SIMD intrinsic in about 0.2 ms, so there the AVX-512 tier takes every message (its
//! keys run GCM-SIV messages shorter than 1 to 1.5 KiB on the VAES kernels; its own kernels at
//! those lengths are checked by the library's unit tests), and the AES-NI and VAES tiers (more
//! instructions per block, tested natively on most x86 machines, VAES's width-2 kernels natively
//! everywhere as the test-only tier) every eighth short length and the boundaries of AES-NI's
//! 8-block stride, and the boundaries stop at 1,024 bytes (two strides past the point where the
//! stitched loops start hashing their own output; the longer ones only repeat those loops, and took
//! a third of Miri's time here). That set has digests of its own, checked against RustCrypto
//! natively like the full set's.

use aes_gcm_siv::aead::consts::U12;
use aes_gcm_siv::aead::{Aead, AeadCore, KeyInit, Payload};
use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv, Backend, Error};

use super::support::{Entry, Rng, Subject, backends_under_test};

/// The digest of every sealed message (ciphertext || tag) of each algorithm, in order, as
/// RustCrypto seals them (`recorded_digests_are_rustcrypto_outputs` checks it): over the
/// native run's messages, then over Miri's.
const RECORDED: [(&str, u64, u64); 4] = [
    (
        "AES-128-GCM-SIV",
        0x8e8d_b2be_3959_279d,
        0x8b07_ad07_516e_b472,
    ),
    (
        "AES-256-GCM-SIV",
        0x82ea_61fb_f452_8221,
        0xd775_36a4_04d0_b9d1,
    ),
    ("AES-128-GCM", 0xfa69_3be1_4639_ed97, 0xf3ca_02ca_3905_3ed9),
    ("AES-256-GCM", 0xc727_4780_804e_a489, 0x590c_dfc8_00bc_f748),
];

/// The longest stride boundary Miri's run takes (see the module comment).
const MIRI_LONGEST_BOUNDARY: usize = 1024;

/// The messages of an algorithm: every length up to 300 (every fifth for AES-256, whose
/// kernels differ from AES-128's only in the round count and the derivation), and the
/// stride boundaries (with `miri`, up to [`MIRI_LONGEST_BOUNDARY`]).
fn lengths(aes256: bool, miri: bool) -> Vec<usize> {
    let mut lengths: Vec<usize> = (0..=300).filter(|len| !aes256 || len % 5 == 0).collect();
    let boundaries = [128, 256, 384, 512, 768, 1024, 1280, 1536, 1792, 2048];
    for boundary in boundaries {
        if !miri || boundary <= MIRI_LONGEST_BOUNDARY {
            lengths.extend([boundary - 1, boundary, boundary + 1]);
        }
    }
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

/// Whether `backend` seals the message of length `len` in this run (see the module comment).
fn runs_on(backend: Backend, len: usize) -> bool {
    let sample = len.is_multiple_of(8) || (300..=520).contains(&len);
    !cfg!(miri) || !matches!(backend, Backend::Aesni | Backend::Vaes) || sample
}

/// One message: nonce, AAD (empty for half of them, up to three blocks otherwise) and
/// plaintext, from a generator seeded by the algorithm and the length.
struct Message {
    nonce: [u8; 12],
    aad: Vec<u8>,
    plaintext: Vec<u8>,
}

impl Message {
    fn new(seed: u64, len: usize) -> Message {
        let mut rng = Rng::new(seed << 16 | len as u64);
        let aad_len = if rng.below(2) == 0 { 0 } else { rng.below(49) };
        Message {
            nonce: rng.array(),
            aad: rng.bytes(aad_len),
            plaintext: rng.bytes(len),
        }
    }
}

/// The key of an algorithm's messages (one key, so that Miri builds each cipher once).
fn key(seed: u64, key_len: usize) -> Vec<u8> {
    Rng::new(seed).bytes(key_len)
}

/// FNV-1a over 64-bit words, with each message's length mixed in first.
#[derive(Clone, Copy)]
struct Digest(u64);

impl Digest {
    const PRIME: u64 = 0x0000_0100_0000_01B3;

    fn new() -> Digest {
        Digest(0xCBF2_9CE4_8422_2325)
    }

    fn add(&mut self, message: &[u8]) {
        self.word(message.len() as u64);
        let (words, tail) = message.as_chunks::<8>();
        for word in words {
            self.word(u64::from_le_bytes(*word));
        }
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        self.word(u64::from_le_bytes(last));
    }

    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(Self::PRIME);
    }
}

fn rustcrypto_seal<Peer: Aead + AeadCore<NonceSize = U12>>(
    peer: &Peer,
    message: &Message,
) -> Vec<u8> {
    let payload = Payload {
        msg: &message.plaintext,
        aad: &message.aad,
    };
    peer.encrypt((&message.nonce).into(), payload).unwrap()
}

/// Seals and opens every message of `S` on every backend; returns the digest of the sealed
/// messages.
fn check_every_length<S: Subject, Peer: Aead + KeyInit + AeadCore<NonceSize = U12>>(
    seed: u64,
) -> u64 {
    let key = key(seed, S::KEY_LEN);
    let ciphers: Vec<(Backend, S)> = backends_under_test()
        .into_iter()
        .map(|backend| (backend, S::with_backend(&key, backend)))
        .collect();
    let peer = Peer::new_from_slice(&key).unwrap();
    let mut digest = Digest::new();
    for len in lengths(S::KEY_LEN == 32, cfg!(miri)) {
        let message = Message::new(seed, len);
        let (nonce, aad, plaintext) = (&message.nonce, &message.aad, &message.plaintext);
        let mut first: Option<Vec<u8>> = None;
        // Odd lengths go through the out-of-place kernels (a separate output buffer).
        let entry = if len % 2 == 0 {
            Entry::InPlaceDetached
        } else {
            Entry::OutOfPlaceDetached
        };
        for (backend, cipher) in ciphers.iter().filter(|(b, _)| runs_on(*b, len)) {
            let context = format!("{} {backend} len {len} aad {}", S::NAME, aad.len());
            let sealed = cipher.seal(entry, nonce, aad, plaintext);
            match &first {
                None => {
                    digest.add(&sealed);
                    first = Some(sealed.clone());
                }
                Some(first) => assert_eq!(&sealed, first, "{context}: backends disagree"),
            }
            let opened = cipher.open(entry, nonce, aad, &sealed);
            assert_eq!(
                (opened.result, &opened.output),
                (Ok(()), plaintext),
                "{context}"
            );
        }
        assert!(
            first.is_some(),
            "{} len {len}: no backend sealed it",
            S::NAME
        );
        if !cfg!(miri) {
            let expected = rustcrypto_seal(&peer, &message);
            assert_eq!(first, Some(expected), "{} len {len}", S::NAME);
        }
    }
    digest.0
}

fn recorded(name: &str) -> u64 {
    RECORDED
        .iter()
        .find(|(algorithm, _, _)| *algorithm == name)
        .map(|&(_, native, miri)| if cfg!(miri) { miri } else { native })
        .unwrap()
}

#[test]
fn aes128_gcm_siv_every_length() {
    let digest = check_every_length::<Aes128GcmSiv, aes_gcm_siv::Aes128GcmSiv>(1);
    assert_eq!(digest, recorded("AES-128-GCM-SIV"), "digest {digest:#018x}");
}

#[test]
fn aes256_gcm_siv_every_length() {
    let digest = check_every_length::<Aes256GcmSiv, aes_gcm_siv::Aes256GcmSiv>(2);
    assert_eq!(digest, recorded("AES-256-GCM-SIV"), "digest {digest:#018x}");
}

#[test]
fn aes128_gcm_every_length() {
    let digest = check_every_length::<Aes128Gcm, aes_gcm::Aes128Gcm>(3);
    assert_eq!(digest, recorded("AES-128-GCM"), "digest {digest:#018x}");
}

#[test]
fn aes256_gcm_every_length() {
    let digest = check_every_length::<Aes256Gcm, aes_gcm::Aes256Gcm>(4);
    assert_eq!(digest, recorded("AES-256-GCM"), "digest {digest:#018x}");
}

/// The recorded digests are those of RustCrypto's outputs for the same messages (so that
/// Miri's run, which cannot afford RustCrypto, is still a comparison with it).
#[test]
#[cfg_attr(miri, ignore = "RustCrypto's software AES takes hours under Miri")]
fn recorded_digests_are_rustcrypto_outputs() {
    fn digests<Peer: Aead + KeyInit + AeadCore<NonceSize = U12>>(
        name: &'static str,
        seed: u64,
        key_len: usize,
    ) -> (&'static str, u64, u64) {
        let peer = Peer::new_from_slice(&key(seed, key_len)).unwrap();
        let digest_of = |miri: bool| {
            let mut digest = Digest::new();
            for len in lengths(key_len == 32, miri) {
                digest.add(&rustcrypto_seal(&peer, &Message::new(seed, len)));
            }
            digest.0
        };
        (name, digest_of(false), digest_of(true))
    }
    let computed = [
        digests::<aes_gcm_siv::Aes128GcmSiv>("AES-128-GCM-SIV", 1, 16),
        digests::<aes_gcm_siv::Aes256GcmSiv>("AES-256-GCM-SIV", 2, 32),
        digests::<aes_gcm::Aes128Gcm>("AES-128-GCM", 3, 16),
        digests::<aes_gcm::Aes256Gcm>("AES-256-GCM", 4, 32),
    ];
    assert_eq!(computed, RECORDED, "update RECORDED to: {:#x?}", computed);
}

/// Out-of-place buffers of different lengths are refused before any work, and a refused
/// decryption leaves its output zeroed.
#[test]
fn out_of_place_buffers_must_be_equally_long() {
    let key = [7u8; 32];
    let nonce = [1u8; 12];
    for backend in backends_under_test() {
        let siv = Aes256GcmSiv::with_backend(&key, backend).unwrap();
        let gcm = Aes256Gcm::with_backend(&key, backend).unwrap();
        let mut out = [0xA5u8; 9];
        assert_eq!(
            siv.encrypt_to_detached(&nonce, b"", &[0u8; 10], &mut out),
            Err(Error::InvalidLength)
        );
        assert_eq!(
            gcm.encrypt_to_detached(&nonce, b"", &[0u8; 8], &mut out),
            Err(Error::InvalidLength)
        );
        assert_eq!(
            siv.decrypt_to_detached(&nonce, b"", &[0u8; 10], &mut out, &[0; 16]),
            Err(Error::InvalidLength)
        );
        assert_eq!(out, [0; 9], "{backend}");
        let mut out = [0xA5u8; 9];
        assert_eq!(
            gcm.decrypt_to_detached(&nonce, b"", &[0u8; 8], &mut out, &[0; 16]),
            Err(Error::InvalidLength)
        );
        assert_eq!(out, [0; 9], "{backend}");
    }
}
