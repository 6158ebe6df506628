//! Differential tests against RustCrypto's `cbc`, `cfb-mode`, `ofb`, `ctr`, `cmac` and `ccm`
//! on random keys (AES-128 and AES-256), IVs and data, lengths weighted to block boundaries.

use aes::cipher::array::{Array, ArraySize};
use aes::cipher::{BlockModeEncrypt, KeyInit, KeyIvInit, StreamCipher};
use aes::{Aes128, Aes256};
use ccm::aead::AeadInOut;
use ccm::consts::{U4, U7, U8, U10, U12, U13, U16};
use cmac::Mac;
use combsiv::Aes;
use combsiv::modes::{self, Ccm};

use crate::common::{Rng, available_backends, boundary_lengths};

/// Lengths 0..=1100 at block boundaries plus random ones up to 5000.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut lengths = boundary_lengths(1100);
    lengths.extend((0..40).map(|_| rng.below(5001)));
    lengths
}

/// The peer's result for one mode, key size picked from the key length.
macro_rules! peer {
    ($key:expr, |$cipher:ident| $body:expr) => {
        if $key.len() == 16 {
            type $cipher = Aes128;
            $body
        } else {
            type $cipher = Aes256;
            $body
        }
    };
}

#[test]
#[cfg_attr(miri, ignore = "RustCrypto's software AES takes hours under Miri")]
fn confidentiality_modes_match_rustcrypto() {
    let mut rng = Rng::new(31);
    for len in lengths(&mut rng) {
        let key_len = if rng.below(2) == 0 { 16 } else { 32 };
        let key_bytes = rng.bytes(key_len);
        let iv: [u8; 16] = rng.array();
        let data = rng.bytes(len);
        let whole = &data[..len / 16 * 16];

        let cbc = peer!(key_bytes, |C| {
            let mut buf = whole.to_vec();
            let blocks = Array::cast_slice_from_core_mut(buf.as_chunks_mut::<16>().0);
            cbc::Encryptor::<C>::new_from_slices(&key_bytes, &iv)
                .unwrap()
                .encrypt_blocks(blocks);
            buf
        });
        let mut cfb = data.clone();
        peer!(key_bytes, |C| cfb_mode::Encryptor::<C>::new_from_slices(
            &key_bytes, &iv
        )
        .unwrap()
        .encrypt(&mut cfb));
        let mut ofb = data.clone();
        peer!(key_bytes, |C| ofb::Ofb::<C>::new_from_slices(
            &key_bytes, &iv
        )
        .unwrap()
        .apply_keystream(&mut ofb));
        let mut ctr = data.clone();
        peer!(key_bytes, |C| ctr::Ctr128BE::<C>::new_from_slices(
            &key_bytes, &iv
        )
        .unwrap()
        .apply_keystream(&mut ctr));

        for backend in available_backends() {
            let key = Aes::with_backend(&key_bytes, backend).unwrap();
            let context = format!("{backend} len {len} key {}", key_bytes.len());
            let mut buf = whole.to_vec();
            modes::cbc_encrypt(&key, &iv, &mut buf).unwrap();
            assert_eq!(buf, cbc, "cbc {context}");
            modes::cbc_decrypt(&key, &iv, &mut buf).unwrap();
            assert_eq!(buf, whole, "cbc decrypt {context}");
            for (encrypt, decrypt, expected, name) in [
                (
                    infallible!(modes::cfb_encrypt) as fn(&Aes, &[u8; 16], &mut [u8]) -> _,
                    modes::cfb_decrypt as fn(&Aes, &[u8; 16], &mut [u8]) -> _,
                    &cfb,
                    "cfb",
                ),
                (
                    infallible!(modes::ofb_apply),
                    infallible!(modes::ofb_apply),
                    &ofb,
                    "ofb",
                ),
                (
                    infallible!(modes::ctr_apply),
                    infallible!(modes::ctr_apply),
                    &ctr,
                    "ctr",
                ),
            ] {
                let mut buf = data.clone();
                encrypt(&key, &iv, &mut buf).unwrap();
                assert_eq!(&buf, expected, "{name} {context}");
                decrypt(&key, &iv, &mut buf).unwrap();
                assert_eq!(buf, data, "{name} decrypt {context}");
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "RustCrypto's software AES takes hours under Miri")]
fn ctr_wraps_the_128_bit_counter() {
    let mut rng = Rng::new(32);
    let key_bytes: [u8; 16] = rng.array();
    let data = rng.bytes(16 * 40 + 3);
    for start in [u128::MAX, u128::MAX - 5, u128::MAX - 32] {
        let counter = start.to_be_bytes();
        let mut expected = data.clone();
        ctr::Ctr128BE::<Aes128>::new_from_slices(&key_bytes, &counter)
            .unwrap()
            .apply_keystream(&mut expected);
        for backend in available_backends() {
            let mut buf = data.clone();
            modes::ctr_apply(
                &Aes::with_backend(&key_bytes, backend).unwrap(),
                &counter,
                &mut buf,
            );
            assert_eq!(buf, expected, "{backend} start {start:x}");
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "RustCrypto's software AES takes hours under Miri")]
fn cmac_matches_rustcrypto() {
    let mut rng = Rng::new(33);
    for len in lengths(&mut rng) {
        let key_len = if rng.below(2) == 0 { 16 } else { 32 };
        let key_bytes = rng.bytes(key_len);
        let message = rng.bytes(len);
        let expected: Vec<u8> = peer!(key_bytes, |C| {
            let mut mac = <cmac::Cmac<C> as KeyInit>::new_from_slice(&key_bytes).unwrap();
            mac.update(&message);
            mac.finalize().into_bytes().to_vec()
        });
        for backend in available_backends() {
            let key = Aes::with_backend(&key_bytes, backend).unwrap();
            assert_eq!(
                modes::cmac(&key, &message).to_vec(),
                expected,
                "{backend} len {len}"
            );
        }
    }
}

/// Our CCM against `ccm::Ccm<C, TagSize, NonceSize>` for one parameter set.
fn ccm_agrees<
    C: aes::cipher::BlockCipherEncrypt + aes::cipher::BlockSizeUser<BlockSize = U16> + KeyInit,
    M,
    N,
>(
    rng: &mut Rng,
    key_len: usize,
) where
    M: ArraySize + ccm::TagSize,
    N: ArraySize + ccm::NonceSize,
{
    for len in [0, 1, 15, 16, 17, 100, 255, 256, 257, 1000, 4099] {
        let key_bytes = rng.bytes(key_len);
        let nonce = rng.bytes(N::USIZE);
        let aad_len = [0, 1, 14, 15, 16, 17, 300][rng.below(7)];
        let (aad, plaintext) = (rng.bytes(aad_len), rng.bytes(len));
        let peer = ccm::Ccm::<C, M, N>::new_from_slice(&key_bytes).unwrap();
        let mut expected = plaintext.clone();
        let tag = peer
            .encrypt_inout_detached(
                &Array::try_from(&nonce[..]).unwrap(),
                &aad,
                expected.as_mut_slice().into(),
            )
            .unwrap();
        expected.extend_from_slice(&tag);
        for backend in available_backends() {
            let ours = Ccm::with_backend(&key_bytes, N::USIZE, M::USIZE, backend).unwrap();
            let sealed = ours.encrypt(&nonce, &aad, &plaintext).unwrap();
            assert_eq!(
                sealed,
                expected,
                "{backend} len {len} aad {aad_len} M {} N {}",
                M::USIZE,
                N::USIZE
            );
            assert_eq!(ours.decrypt(&nonce, &aad, &sealed).unwrap(), plaintext);
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "RustCrypto's software AES takes hours under Miri")]
fn ccm_matches_rustcrypto() {
    let mut rng = Rng::new(34);
    ccm_agrees::<Aes128, U4, U7>(&mut rng, 16);
    ccm_agrees::<Aes128, U8, U13>(&mut rng, 16);
    ccm_agrees::<Aes128, U16, U12>(&mut rng, 16);
    ccm_agrees::<Aes256, U10, U13>(&mut rng, 32);
    ccm_agrees::<Aes256, U16, U7>(&mut rng, 32);
}
