use super::*;
use crate::test_vectors::{hex, rfc8452_vectors};

/// RFC 8452 Appendix C, intermediate values, on every backend. Under Miri a backend takes
/// a sample of them ([`crate::test_vectors::miri_sample`]).
fn check_intermediates<K: KeySize>(algorithm: &str) {
    let vectors = rfc8452_vectors();
    let vectors: Vec<_> = vectors
        .iter()
        .filter(|v| v["algorithm"] == algorithm)
        .collect();
    assert!(
        vectors.len() >= 24,
        "{algorithm}: only {} vectors",
        vectors.len()
    );
    for isa in crate::cpu::isas_under_test() {
        let sample = if cfg!(miri) {
            crate::test_vectors::miri_sample(isa)
        } else {
            1
        };
        for v in vectors.iter().step_by(sample) {
            let key = K::Key::try_from(&hex(&v["key"])[..]).ok().unwrap();
            let nonce: [u8; 12] = hex(&v["nonce"]).try_into().unwrap();
            let cipher = AesGcmSiv::<K>::with_isa(&key, isa);
            let (auth, enc) = cipher.derive_record_key_material(&nonce);
            assert_eq!(
                auth.to_vec(),
                hex(&v["record_authentication_key"]),
                "{}",
                v["id"]
            );
            assert_eq!(
                enc.as_ref(),
                hex(&v["record_encryption_key"]),
                "{}",
                v["id"]
            );

            let polyval_input = hex(&v["polyval_input"]);
            let (aad, plaintext) = (hex(&v["aad"]), hex(&v["plaintext"]));
            let length = length_block(aad.len(), plaintext.len());
            assert_eq!(polyval_input[polyval_input.len() - 16..], length);
            let hash_key = PolyvalKey::new(&auth, cipher.isa(), polyval_input.len() / 16);
            let mut polyval = Polyval::new(hash_key.as_hash_key());
            polyval.update_padded(&polyval_input);
            assert_eq!(
                polyval.finish().to_vec(),
                hex(&v["polyval_result"]),
                "{}",
                v["id"]
            );

            let keys = cipher.derive_record_keys(&nonce);
            let tag = cipher.compute_tag(&keys, &nonce, &aad, &plaintext);
            let masked = hex(&v["polyval_result_xor_nonce_masked"]);
            let masked: [u8; 16] = masked.try_into().unwrap();
            assert_eq!(keys.encryption.encrypt_block(&masked), tag, "{}", v["id"]);
            assert_eq!(tag.to_vec(), hex(&v["tag"]), "{}", v["id"]);
            assert_eq!(
                initial_counter(&tag).to_vec(),
                hex(&v["initial_counter"]),
                "{}",
                v["id"]
            );
        }
    }
}

#[test]
fn rfc8452_intermediate_values_aes128() {
    check_intermediates::<crate::Aes128>("AES-128-GCM-SIV");
}

#[test]
fn rfc8452_intermediate_values_aes256() {
    check_intermediates::<crate::Aes256>("AES-256-GCM-SIV");
}

/// Every vector tier's fused kernels, called on their own tier whatever length
/// `TierToken::for_message` would hand elsewhere, and on the tier it hands short messages
/// to (AVX-512 keys: the 256-bit tier with masked partial blocks), seal what the first
/// vector tier seals and open it, at every length through two strides of the widest tier
/// (a sample under Miri), with and without AAD, with each choice of the stitched loops'
/// products (under Miri the second only where the widest tier's open runs its stitched
/// loop, from two strides on).
#[test]
#[cfg(vector_tiers)]
fn every_tier_runs_the_fused_kernels_at_every_length() {
    crate::cpu::for_each_stitched_product(every_tier_at_every_length);
}

#[cfg(vector_tiers)]
fn every_tier_at_every_length(schoolbook: bool) {
    use alloc::{format, vec};
    let lengths: Vec<usize> = match (cfg!(miri), schoolbook) {
        (true, false) => vec![
            0, 1, 16, 17, 100, 255, 256, 383, 511, 512, 513, 700, 1024, 1100,
        ],
        (true, true) => vec![1024, 1100],
        (false, _) => (0..=1100).collect(),
    };
    let ciphers: Vec<AesGcmSiv<crate::Aes128>> = crate::cpu::isas_under_test()
        .into_iter()
        .filter(|&isa| !matches!(isa, Isa::Portable))
        .map(|isa| AesGcmSiv::with_isa(&[5; 16], isa))
        .collect();
    let mut tiers = Vec::new();
    for cipher in &ciphers {
        let BlockCipher::Vector(key_generating_key, token) = &cipher.key_generating_key else {
            unreachable!("a vector backend's key");
        };
        tiers.push((key_generating_key, *token));
        let short = token.for_message(Kernel::SivSeal, 0);
        if core::mem::discriminant(&short) != core::mem::discriminant(token) {
            tiers.push((key_generating_key, short));
        }
    }
    let plaintext: Vec<u8> = (0..1100).map(|i| (i * 7) as u8).collect();
    for len in lengths {
        let (nonce, aad) = ([len as u8; 12], &b"associated data"[..len % 16]);
        let mut first: Option<(Vec<u8>, [u8; 16])> = None;
        for (key_generating_key, token) in &tiers {
            let message = SivMessage::new(key_generating_key, &nonce, aad);
            let mut buf = plaintext[..len].to_vec();
            let tag = super::super::kernels::gcm_siv_seal(*token, &message, (&mut buf[..]).into());
            let sealed = (buf.clone(), tag);
            let context = format!("{token:?} len {len}");
            match &first {
                None => first = Some(sealed.clone()),
                Some(first) => assert_eq!(&sealed, first, "{context}"),
            }
            // Read once from the plaintext into a separate (garbage-filled) output.
            let mut copied = vec![0xA5; len];
            let seal_copying = super::super::kernels::gcm_siv_seal_copying;
            let tag = seal_copying(*token, &message, &plaintext[..len], &mut copied);
            assert_eq!((copied, tag), sealed, "{context}, copying");
            let buf_in_out = (&mut buf[..]).into();
            let expected = if token.schoolbook_stitched() {
                super::super::kernels::gcm_siv_open::<true>(*token, &message, buf_in_out, &tag)
            } else {
                super::super::kernels::gcm_siv_open::<false>(*token, &message, buf_in_out, &tag)
            };
            assert_eq!((expected, &buf[..]), (tag, &plaintext[..len]), "{context}");
        }
    }
}

#[test]
#[cfg(target_pointer_width = "64")]
fn length_limits_are_inclusive_at_two_to_the_36() {
    let max = 1usize << 36;
    assert_eq!(check_lengths(max, max), Ok(()));
    assert_eq!(check_lengths(0, max + 1), Err(Error::PlaintextTooLong));
    assert_eq!(check_lengths(max + 1, 0), Err(Error::AadTooLong));
    assert_eq!(
        check_lengths(usize::MAX, usize::MAX),
        Err(Error::PlaintextTooLong)
    );
}
