//! CCM opening of arbitrary bytes, with every nonce length (7..=13) and tag length (4..=16,
//! even), never panics; a failure zeroes the buffer; a success means sealing the plaintext
//! gives the input back; the comb engine's verdict and output agree with the single call; all
//! backends agree.
#![no_main]

use combsiv::comb::{CcmJob, Comb};
use combsiv::modes::Ccm;
use combsiv::{Backend, Error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: selector (nonce and tag length, key size), 32 key bytes, 13 nonce bytes,
    // 1 AAD length byte, AAD, ciphertext || tag.
    let Some((&selector, rest)) = data.split_first() else { return };
    let Some((key, rest)) = rest.split_first_chunk::<32>() else { return };
    let Some((nonce, rest)) = rest.split_first_chunk::<13>() else { return };
    let Some((&aad_len, rest)) = rest.split_first() else { return };
    let (aad, sealed) = rest.split_at(usize::from(aad_len).min(rest.len()));
    let nonce_len = 7 + usize::from(selector % 7);
    let tag_len = 4 + 2 * usize::from((selector / 7) % 7);
    let key: &[u8] = if selector & 0x80 == 0 { &key[..16] } else { key };
    let nonce = &nonce[..nonce_len];

    let mut reference: Option<Result<Vec<u8>, Error>> = None;
    for backend in Backend::available() {
        let ccm = Ccm::with_backend(key, nonce_len, tag_len, backend).unwrap();
        let opened = ccm.decrypt(nonce, aad, sealed);
        if let Ok(plaintext) = &opened {
            assert_eq!(ccm.encrypt(nonce, aad, plaintext).unwrap(), sealed);
        }
        if let Some((ciphertext, tag)) = sealed.split_at_checked(sealed.len().wrapping_sub(tag_len)) {
            let mut buf = ciphertext.to_vec();
            let detached = ccm.decrypt_in_place_detached(nonce, aad, &mut buf, tag);
            assert_eq!(detached.is_ok(), opened.is_ok());
            if detached.is_err() {
                assert!(buf.iter().all(|&b| b == 0));
            }
            let mut comb_buf = ciphertext.to_vec();
            let mut padded_tag = [0u8; 16];
            padded_tag[..tag_len].copy_from_slice(tag);
            let mut jobs =
                [CcmJob { ccm: &ccm, nonce, aad, data: &mut comb_buf, tag: padded_tag, authentic: false }];
            let batch = Comb::new().ccm_open(&mut jobs);
            assert_eq!(batch.is_ok(), opened.is_ok());
            assert_eq!(jobs[0].authentic, opened.is_ok());
            assert_eq!(comb_buf, buf);
        }
        match &reference {
            None => reference = Some(opened),
            Some(first) => assert_eq!(first, &opened, "{backend}"),
        }
    }
});
