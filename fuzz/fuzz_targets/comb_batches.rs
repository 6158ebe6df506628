//! Random job sets through the comb engine (CBC, CFB, OFB, CMAC, CCM, and AES-GCM-SIV's
//! batches) give exactly the single-message results, with mixed keys and key sizes and any
//! lane count, on every backend.
#![no_main]

use combsiv::comb::{CbcJob, CcmJob, CfbJob, CmacJob, Comb, OfbJob, SivJob};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Aes128GcmSiv, Backend};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: lane count, then jobs of (key choice, 2 length bytes, data) until the input
    // ends.
    let Some((&lanes, mut rest)) = data.split_first() else { return };
    let mut specs = Vec::new();
    while let Some((&[choice, high, low], after)) = rest.split_first_chunk::<3>() {
        let len = (usize::from(high) << 8 | usize::from(low)) % 3000;
        let (bytes, after) = after.split_at(len.min(after.len()));
        specs.push((choice, bytes.to_vec()));
        rest = after;
        if specs.len() == 40 {
            break;
        }
    }
    for backend in Backend::available() {
        let keys: Vec<Aes> = (0..4u8)
            .map(|i| Aes::with_backend(&vec![i; if i % 2 == 0 { 16 } else { 32 }], backend).unwrap())
            .collect();
        let key = |choice: u8| &keys[usize::from(choice % 4)];
        let iv = |choice: u8| [choice; 16];
        let mut comb = Comb::with_lanes(usize::from(lanes % 12) + 1);

        let mut whole: Vec<Vec<u8>> =
            specs.iter().map(|(_, m)| m[..m.len() - m.len() % 16].to_vec()).collect();
        let expected: Vec<Vec<u8>> = whole
            .iter()
            .zip(&specs)
            .map(|(m, (c, _))| {
                let mut m = m.clone();
                modes::cbc_encrypt(key(*c), &iv(*c), &mut m).unwrap();
                m
            })
            .collect();
        let mut jobs: Vec<CbcJob<'_>> = whole
            .iter_mut()
            .zip(&specs)
            .map(|(data, (c, _))| CbcJob { key: key(*c), iv: iv(*c), data })
            .collect();
        comb.cbc_encrypt(&mut jobs).unwrap();
        assert_eq!(whole, expected, "cbc {backend}");

        type Single = fn(&Aes, &[u8; 16], &mut [u8]);
        for (single, is_cfb) in [(modes::cfb_encrypt as Single, true), (modes::ofb_apply, false)] {
            let mut out: Vec<Vec<u8>> = specs.iter().map(|(_, m)| m.clone()).collect();
            let expected: Vec<Vec<u8>> = specs
                .iter()
                .map(|(c, m)| {
                    let mut m = m.clone();
                    single(key(*c), &iv(*c), &mut m);
                    m
                })
                .collect();
            if is_cfb {
                let mut jobs: Vec<CfbJob<'_>> = out
                    .iter_mut()
                    .zip(&specs)
                    .map(|(data, (c, _))| CfbJob { key: key(*c), iv: iv(*c), data })
                    .collect();
                comb.cfb_encrypt(&mut jobs);
            } else {
                let mut jobs: Vec<OfbJob<'_>> = out
                    .iter_mut()
                    .zip(&specs)
                    .map(|(data, (c, _))| OfbJob { key: key(*c), iv: iv(*c), data })
                    .collect();
                comb.ofb(&mut jobs);
            }
            assert_eq!(out, expected, "cfb/ofb {backend}");
        }

        let mut jobs: Vec<CmacJob<'_>> =
            specs.iter().map(|(c, m)| CmacJob { key: key(*c), message: m, tag: [0; 16] }).collect();
        comb.cmac(&mut jobs);
        for job in &jobs {
            assert_eq!(job.tag, modes::cmac(job.key, job.message), "cmac {backend}");
        }

        let ccm = Ccm::with_backend(&[9; 16], 12, 10, backend).unwrap();
        let mut sealed: Vec<Vec<u8>> = specs.iter().map(|(_, m)| m.clone()).collect();
        let nonces: Vec<[u8; 12]> = specs.iter().map(|(c, _)| [*c; 12]).collect();
        let mut jobs: Vec<CcmJob<'_>> = sealed
            .iter_mut()
            .zip(&nonces)
            .map(|(data, nonce)| CcmJob {
                ccm: &ccm,
                nonce,
                aad: &[],
                data,
                tag: [0; 16],
                authentic: false,
            })
            .collect();
        comb.ccm_seal(&mut jobs).unwrap();
        for (job, (c, m)) in jobs.iter().zip(&specs) {
            let single = ccm.encrypt(&[*c; 12], &[], m).unwrap();
            assert_eq!([&*job.data, &job.tag[..10]].concat(), single, "ccm {backend}");
        }

        let siv = Aes128GcmSiv::with_backend(&[5; 16], backend).unwrap();
        let mut sealed: Vec<Vec<u8>> = specs.iter().map(|(_, m)| m.clone()).collect();
        let mut jobs: Vec<SivJob<'_>> = sealed
            .iter_mut()
            .zip(&specs)
            .map(|(data, (c, _))| SivJob { nonce: [*c; 12], aad: b"", data, tag: [0; 16], authentic: false })
            .collect();
        siv.seal_batch(&mut jobs).unwrap();
        for (job, (c, m)) in jobs.iter().zip(&specs) {
            let single = siv.encrypt(&[*c; 12], b"", m).unwrap();
            assert_eq!([&*job.data, &job.tag].concat(), single, "seal_batch {backend}");
        }
        if let Some(first) = jobs.first_mut() {
            first.tag[0] ^= 1;
        }
        let all_ok = siv.open_batch(&mut jobs).is_ok();
        assert_eq!(all_ok, jobs.is_empty());
        for (i, (job, (_, m))) in jobs.iter().zip(&specs).enumerate() {
            assert_eq!(job.authentic, i != 0);
            if i == 0 {
                assert!(job.data.iter().all(|&b| b == 0));
            } else {
                assert_eq!(&*job.data, m.as_slice(), "open_batch {backend}");
            }
        }
    }
});
