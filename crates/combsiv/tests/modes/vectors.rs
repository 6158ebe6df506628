//! SP 800-38A, RFC 4493 / SP 800-38B and RFC 3610 / SP 800-38C / IEEE P1619.1 vectors
//! (provenance in tests/vectors/README.md), on every backend.

use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Error};

use crate::common::{available_backends, hex, load_vectors};

#[test]
fn sp800_38a_cbc_cfb_ofb_ctr() {
    let file = load_vectors("sp800-38a.json");
    let mut runs = 0;
    for backend in available_backends() {
        for v in file["vectors"].as_array().unwrap() {
            let key = Aes::with_backend(&hex(&v["key"]), backend).unwrap();
            let iv: [u8; 16] = hex(&v["iv"]).try_into().unwrap();
            let (plaintext, ciphertext) = (hex(&v["plaintext"]), hex(&v["ciphertext"]));
            type Mode = fn(&Aes, &[u8; 16], &mut [u8]) -> Result<(), Error>;
            let (encrypt, decrypt): (Mode, Mode) = match v["mode"].as_str().unwrap() {
                "CBC" => (modes::cbc_encrypt, modes::cbc_decrypt),
                "CFB128" => (infallible!(modes::cfb_encrypt), modes::cfb_decrypt),
                "OFB" => (infallible!(modes::ofb_apply), infallible!(modes::ofb_apply)),
                "CTR" => (infallible!(modes::ctr_apply), infallible!(modes::ctr_apply)),
                other => panic!("unexpected mode {other}"),
            };
            let mut buf = plaintext.clone();
            encrypt(&key, &iv, &mut buf).unwrap();
            assert_eq!(buf, ciphertext, "{} {backend} encrypt", v["id"]);
            decrypt(&key, &iv, &mut buf).unwrap();
            assert_eq!(buf, plaintext, "{} {backend} decrypt", v["id"]);
            runs += 1;
        }
    }
    assert_eq!(runs, 8 * available_backends().len());
}

#[test]
fn rfc4493_and_sp800_38b_cmac() {
    let file = load_vectors("rfc4493-cmac.json");
    let mut runs = 0;
    for backend in available_backends() {
        for v in file["vectors"].as_array().unwrap() {
            let key = Aes::with_backend(&hex(&v["key"]), backend).unwrap();
            let (message, tag) = (hex(&v["message"]), hex(&v["tag"]));
            assert_eq!(
                modes::cmac(&key, &message).to_vec(),
                tag,
                "{} {backend}",
                v["id"]
            );
            let tag: [u8; 16] = tag.try_into().unwrap();
            assert_eq!(modes::cmac_verify(&key, &message, &tag), Ok(()));
            let mut forged = tag;
            forged[15] ^= 1;
            assert_eq!(
                modes::cmac_verify(&key, &message, &forged),
                Err(Error::Authentication)
            );
            runs += 1;
        }
    }
    assert_eq!(runs, 10 * available_backends().len());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "ccm.json takes minutes to read under Miri; CCM's AES runs through the ECB and CTR kernels the other tests cover"
)]
fn rfc3610_sp800_38c_and_ieee_ccm() {
    let file = load_vectors("ccm.json");
    let vectors: Vec<_> = ["vectors", "vectors_aes256_ieee_p1619_1"]
        .iter()
        .flat_map(|array| file[array].as_array().unwrap().iter())
        .collect();
    assert_eq!(vectors.len(), 28 + 9);
    for backend in available_backends() {
        for v in &vectors {
            let (nonce, aad, plaintext) = (hex(&v["nonce"]), hex(&v["aad"]), hex(&v["plaintext"]));
            let sealed = hex(&v["ciphertext_and_tag"]);
            let tag_len = v["tag_len"].as_u64().unwrap() as usize;
            let ccm = Ccm::with_backend(&hex(&v["key"]), nonce.len(), tag_len, backend).unwrap();
            assert_eq!(
                ccm.encrypt(&nonce, &aad, &plaintext).unwrap(),
                sealed,
                "{} {backend}",
                v["id"]
            );
            assert_eq!(
                ccm.decrypt(&nonce, &aad, &sealed).unwrap(),
                plaintext,
                "{} {backend}",
                v["id"]
            );
            // In place and detached, and a forged tag leaves a zeroed buffer.
            let mut buf = plaintext.clone();
            let tag = ccm
                .encrypt_in_place_detached(&nonce, &aad, &mut buf)
                .unwrap();
            assert_eq!(&tag[..tag_len], &sealed[plaintext.len()..]);
            let mut forged = tag[..tag_len].to_vec();
            forged[0] ^= 0x40;
            let result = ccm.decrypt_in_place_detached(&nonce, &aad, &mut buf, &forged);
            assert_eq!(result, Err(Error::Authentication));
            assert!(buf.iter().all(|&b| b == 0));
        }
    }
}

#[test]
fn parameters_and_lengths_are_checked() {
    assert_eq!(
        Ccm::new(&[0; 16], 6, 8).err(),
        Some(Error::InvalidNonceLength)
    );
    assert_eq!(
        Ccm::new(&[0; 16], 14, 8).err(),
        Some(Error::InvalidNonceLength)
    );
    for tag_len in [0, 2, 3, 5, 17, 18] {
        assert_eq!(
            Ccm::new(&[0; 16], 13, tag_len).err(),
            Some(Error::InvalidTagLength)
        );
    }
    assert_eq!(
        Ccm::new(&[0; 24], 13, 8).err(),
        Some(Error::InvalidKeyLength)
    );
    let ccm = Ccm::new(&[0; 16], 13, 8).unwrap();
    assert_eq!(ccm.max_plaintext_len(), 65535);
    assert_eq!(
        ccm.encrypt(&[0; 13], b"", &vec![0; 65536]).err(),
        Some(Error::InvalidLength)
    );
    if !cfg!(miri) {
        // 64 KiB of CCM: a minute under Miri, for a length check.
        assert!(ccm.encrypt(&[0; 13], b"", &vec![0; 65535]).is_ok());
    }
    assert_eq!(
        ccm.encrypt(&[0; 12], b"", b"x").err(),
        Some(Error::InvalidNonceLength)
    );
    assert_eq!(
        ccm.decrypt(&[0; 13], b"", &[0; 7]).err(),
        Some(Error::CiphertextTooShort)
    );
    assert_eq!(
        Ccm::new(&[0; 16], 7, 16).unwrap().max_plaintext_len(),
        u64::MAX
    );

    let key = Aes::new(&[0; 16]).unwrap();
    for len in [1, 15, 17, 31] {
        let mut buf = vec![0u8; len];
        assert_eq!(
            modes::cbc_encrypt(&key, &[0; 16], &mut buf),
            Err(Error::InvalidLength)
        );
        assert_eq!(
            modes::cbc_decrypt(&key, &[0; 16], &mut buf),
            Err(Error::InvalidLength)
        );
    }
    assert_eq!(Aes::new(&[0; 24]).err(), Some(Error::InvalidKeyLength));
    assert!(!format!("{key:?}").contains('0'.to_string().repeat(8).as_str()));
}

#[test]
fn pkcs7_round_trips_and_rejects_bad_padding() {
    for len in 0..=48 {
        let data: Vec<u8> = (0..len as u8).collect();
        let padded = modes::pkcs7_pad(&data);
        assert_eq!(padded.len() % 16, 0);
        assert!(padded.len() > data.len() && padded.len() <= data.len() + 16);
        assert_eq!(modes::pkcs7_unpad(&padded).unwrap(), &data[..]);
    }
    let bad: [&[u8]; 6] = [
        b"",
        &[1; 15],
        &[0; 16],
        &[17; 16],
        &[2; 17],
        &[[1u8; 14].as_slice(), &[3, 2]].concat(),
    ];
    for input in bad {
        assert_eq!(
            modes::pkcs7_unpad(input),
            Err(Error::InvalidPadding),
            "{input:?}"
        );
    }
    assert_eq!(modes::pkcs7_unpad(&[16; 16]).unwrap(), b"");
}
