//! Differential tests against the RustCrypto `aes-gcm-siv` and `aes-gcm` crates on random
//! keys, nonces, AAD and plaintexts, weighted to block and stride boundaries.

use aes_gcm_siv::aead::consts::U12;
use aes_gcm_siv::aead::{Aead, AeadCore, KeyInit, Payload};
use combsiv::{Aes128Gcm, Aes128GcmSiv, Aes256Gcm, Aes256GcmSiv};

use super::support::{ENTRIES, Rng, Subject, available_backends, boundary_lengths};

const MAX_LEN: usize = 4200;

/// One message through ours (every backend, every entry) and the peer, both directions.
fn agree<S: Subject, Peer: Aead + KeyInit + AeadCore<NonceSize = U12>>(
    rng: &mut Rng,
    plaintext_len: usize,
    aad_len: usize,
) {
    let key = rng.bytes(S::KEY_LEN);
    let nonce: [u8; 12] = rng.array();
    let (aad, plaintext) = (rng.bytes(aad_len), rng.bytes(plaintext_len));
    let peer = Peer::new_from_slice(&key).unwrap();
    let expected = peer
        .encrypt(
            (&nonce).into(),
            Payload {
                msg: &plaintext,
                aad: &aad,
            },
        )
        .unwrap();
    for backend in available_backends() {
        let ours = S::with_backend(&key, backend);
        for entry in ENTRIES {
            let context = format!(
                "{} {backend} {entry:?} len {plaintext_len} aad {aad_len}",
                S::NAME
            );
            assert_eq!(
                ours.seal(entry, &nonce, &aad, &plaintext),
                expected,
                "{context}"
            );
            let opened = ours.open(entry, &nonce, &aad, &expected);
            assert_eq!(
                (opened.result, opened.output),
                (Ok(()), plaintext.clone()),
                "{context}"
            );
        }
    }
}

fn aad_len_for(rng: &mut Rng) -> usize {
    match rng.below(6) {
        0 => 0,
        1 => 1 + rng.below(16),
        2 => 16 * (1 + rng.below(4)),
        _ => rng.below(300),
    }
}

fn boundaries_and_random<S: Subject, Peer: Aead + KeyInit + AeadCore<NonceSize = U12>>(seed: u64) {
    let mut rng = Rng::new(seed);
    for len in boundary_lengths(MAX_LEN) {
        let aad_len = aad_len_for(&mut rng);
        agree::<S, Peer>(&mut rng, len, aad_len);
    }
    for _ in 0..300 {
        let (len, aad_len) = (rng.below(MAX_LEN + 1), aad_len_for(&mut rng));
        agree::<S, Peer>(&mut rng, len, aad_len);
    }
    // Long AAD with short plaintexts (the hash runs over both).
    for len in [0, 1, 16, 129] {
        let aad_len = rng.below(MAX_LEN + 1);
        agree::<S, Peer>(&mut rng, len, aad_len);
    }
}

/// Every length through two full strides of the fused kernels on the widest tier (8 ZMM
/// registers of 4 blocks = 512 bytes) and beyond, and random long messages across many strides.
fn every_stride_boundary<S: Subject, Peer: Aead + KeyInit + AeadCore<NonceSize = U12>>(seed: u64) {
    let mut rng = Rng::new(seed);
    for len in 0..=1100 {
        let aad_len = aad_len_for(&mut rng);
        agree::<S, Peer>(&mut rng, len, aad_len);
    }
    for _ in 0..24 {
        let (len, aad_len) = (rng.below(70_001), aad_len_for(&mut rng));
        agree::<S, Peer>(&mut rng, len, aad_len);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn every_stride_boundary_matches_rustcrypto() {
    every_stride_boundary::<Aes128GcmSiv, aes_gcm_siv::Aes128GcmSiv>(21);
    every_stride_boundary::<Aes256GcmSiv, aes_gcm_siv::Aes256GcmSiv>(22);
    every_stride_boundary::<Aes128Gcm, aes_gcm::Aes128Gcm>(23);
    every_stride_boundary::<Aes256Gcm, aes_gcm::Aes256Gcm>(24);
}

/// AES-GCM with a 96-bit IV counts from 2, and the last byte of its counter first wraps at
/// block 254 (bytes 4064..4080), where the counter stops being incremented in place: every
/// length whose last stride (8 to 32 blocks), tail or partial block meets that block.
#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn gcm_counter_byte_wrap_matches_rustcrypto() {
    let mut rng = Rng::new(25);
    let around_wrap = (4064 - 32 * 16..=4080 + 32 * 16).step_by(7);
    for len in around_wrap.chain(4060..=4100) {
        let aad_len = aad_len_for(&mut rng);
        agree::<Aes128Gcm, aes_gcm::Aes128Gcm>(&mut rng, len, aad_len);
        agree::<Aes256Gcm, aes_gcm::Aes256Gcm>(&mut rng, len, aad_len);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn aes128_gcm_siv_matches_rustcrypto() {
    boundaries_and_random::<Aes128GcmSiv, aes_gcm_siv::Aes128GcmSiv>(1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn aes256_gcm_siv_matches_rustcrypto() {
    boundaries_and_random::<Aes256GcmSiv, aes_gcm_siv::Aes256GcmSiv>(2);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn aes128_gcm_matches_rustcrypto() {
    boundaries_and_random::<Aes128Gcm, aes_gcm::Aes128Gcm>(3);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn aes256_gcm_matches_rustcrypto() {
    boundaries_and_random::<Aes256Gcm, aes_gcm::Aes256Gcm>(4);
}

/// GCM with IVs other than 96 bits against the peer crate's generic-nonce-size type.
#[test]
#[cfg_attr(
    miri,
    ignore = "RustCrypto's software AES takes hours under Miri; see lengths.rs"
)]
fn gcm_other_iv_lengths_match_rustcrypto() {
    use aes_gcm::aead::consts::{U1, U8, U16, U60};
    type Peer<N> = aes_gcm::AesGcm<aes::Aes128, N>;
    use aes_gcm::aead::array::{Array, ArraySize};
    fn check<N: ArraySize>(rng: &mut Rng) {
        let key: [u8; 16] = rng.array();
        let iv = rng.bytes(N::USIZE);
        for len in [0, 1, 16, 100, 1000] {
            let (aad, plaintext) = (rng.bytes(len / 3), rng.bytes(len));
            let peer = Peer::<N>::new_from_slice(&key).unwrap();
            let nonce = Array::<u8, N>::try_from(&iv[..]).unwrap();
            let expected = peer
                .encrypt(
                    &nonce,
                    Payload {
                        msg: &plaintext,
                        aad: &aad,
                    },
                )
                .unwrap();
            for backend in available_backends() {
                let ours = Aes128Gcm::with_backend(&key, backend).unwrap();
                assert_eq!(
                    ours.encrypt_with_iv(&iv, &aad, &plaintext).unwrap(),
                    expected
                );
                assert_eq!(
                    ours.decrypt_with_iv(&iv, &aad, &expected).unwrap(),
                    plaintext
                );
            }
        }
    }
    let mut rng = Rng::new(5);
    check::<U1>(&mut rng);
    check::<U8>(&mut rng);
    check::<U16>(&mut rng);
    check::<U60>(&mut rng);
}
