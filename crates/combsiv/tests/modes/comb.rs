//! The comb engine: batch results equal per-message results (which `differential.rs` checks
//! against RustCrypto), for every schedule, several lane counts and every backend, with mixed
//! lengths, shared and per-job keys, and AES-128 and AES-256 in one call.

use combsiv::comb::{CbcJob, CcmJob, CfbJob, CmacJob, Comb, OfbJob, Schedule, SivJob};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Backend, Error};

use crate::common::{Rng, backends_under_test, hex, load_vectors};

const SCHEDULES: [Schedule; 2] = [Schedule::Windows, Schedule::Greedy];

/// Every schedule with 1, 3, 8, 12, 16 and 19 lanes (one VAES call holds 16 lanes, an AES-NI
/// call 8: full calls, partial ones, and odd counts that put one lane in both halves of a YMM
/// register); under Miri (which runs an SIMD instruction in about 0.2 ms) windows with 3 and
/// 13 lanes (the schedules differ only in safe code).
fn engines() -> impl Iterator<Item = Comb> {
    let (schedules, lanes): (&[Schedule], &[usize]) = if cfg!(miri) {
        (&SCHEDULES[..1], &[3, 13])
    } else {
        (&SCHEDULES, &[1, 3, 8, 12, 16, 19])
    };
    schedules.iter().flat_map(move |&schedule| {
        lanes
            .iter()
            .map(move |&lanes| Comb::with_lanes(lanes).with_schedule(schedule))
    })
}

/// Random messages: 1..=3x lanes of them, lengths 0..=5000 (300 under Miri) with empty and
/// one-block ones, and one just past the 512 bytes that the engine copies into scratch (CCM,
/// CMAC; longer ones it reads in place), also under Miri.
fn messages(rng: &mut Rng, lanes: usize, whole_blocks: bool) -> Vec<Vec<u8>> {
    let count = 1 + rng.below(3 * lanes);
    let longest = if cfg!(miri) { 300 } else { 5000 };
    let mut lengths: Vec<usize> = (0..count)
        .map(|_| match rng.below(5) {
            0 => 0,
            1 => 16,
            2 => rng.below(48),
            _ => rng.below(longest + 1),
        })
        .collect();
    lengths.insert(rng.below(count + 1), 528 + rng.below(32));
    lengths
        .into_iter()
        .map(|len| rng.bytes(if whole_blocks { len / 16 * 16 } else { len }))
        .collect()
}

/// A pool of keys of both sizes; jobs pick shared or individual ones.
fn keys(rng: &mut Rng, backend: Backend) -> Vec<Aes> {
    (0..5)
        .map(|i| Aes::with_backend(&rng.bytes(if i % 2 == 0 { 16 } else { 32 }), backend).unwrap())
        .collect()
}

#[test]
fn chained_modes_match_single_message() {
    let mut rng = Rng::new(41);
    for backend in backends_under_test() {
        let pool = keys(&mut rng, backend);
        for mut comb in engines() {
            let context = format!("{backend} {:?}", comb);
            for whole in [true, false] {
                let originals = messages(&mut rng, comb.lanes(), whole);
                // Every job under one key in a third of the rounds: the kernels broadcast a
                // shared schedule instead of packing one per lane.
                let one_key = rng.below(3) == 0;
                let picks: Vec<(usize, [u8; 16])> = originals
                    .iter()
                    .map(|_| {
                        let key = if one_key { 0 } else { rng.below(pool.len()) };
                        (key, rng.array())
                    })
                    .collect();
                type Single = fn(&Aes, &[u8; 16], &mut [u8]) -> Result<(), Error>;
                let expect = |single: Single| -> Vec<Vec<u8>> {
                    originals
                        .iter()
                        .zip(&picks)
                        .map(|(m, (k, iv))| {
                            let mut m = m.clone();
                            single(&pool[*k], iv, &mut m).unwrap();
                            m
                        })
                        .collect()
                };
                if whole {
                    let mut data = originals.clone();
                    let mut jobs: Vec<CbcJob> = data
                        .iter_mut()
                        .zip(&picks)
                        .map(|(d, (k, iv))| CbcJob {
                            key: &pool[*k],
                            iv: *iv,
                            data: d,
                        })
                        .collect();
                    comb.cbc_encrypt(&mut jobs).unwrap();
                    assert_eq!(data, expect(modes::cbc_encrypt), "cbc {context}");
                    let stats = comb.last_stats();
                    assert!(
                        stats.busy <= stats.slots && (0.0..=1.0).contains(&stats.idle_fraction())
                    );
                }
                let mut data = originals.clone();
                let mut jobs: Vec<CfbJob> = data
                    .iter_mut()
                    .zip(&picks)
                    .map(|(d, (k, iv))| CfbJob {
                        key: &pool[*k],
                        iv: *iv,
                        data: d,
                    })
                    .collect();
                comb.cfb_encrypt(&mut jobs);
                assert_eq!(
                    data,
                    expect(infallible!(modes::cfb_encrypt)),
                    "cfb {context}"
                );
                let mut data = originals.clone();
                let mut jobs: Vec<OfbJob> = data
                    .iter_mut()
                    .zip(&picks)
                    .map(|(d, (k, iv))| OfbJob {
                        key: &pool[*k],
                        iv: *iv,
                        data: d,
                    })
                    .collect();
                comb.ofb(&mut jobs);
                assert_eq!(data, expect(infallible!(modes::ofb_apply)), "ofb {context}");
                let mut jobs: Vec<CmacJob> = originals
                    .iter()
                    .zip(&picks)
                    .map(|(m, (k, _))| CmacJob {
                        key: &pool[*k],
                        message: m,
                        tag: [0; 16],
                    })
                    .collect();
                comb.cmac(&mut jobs);
                for (job, (m, (k, _))) in jobs.iter().zip(originals.iter().zip(&picks)) {
                    assert_eq!(job.tag, modes::cmac(&pool[*k], m), "cmac {context}");
                }
            }
        }
    }
}

/// Records laid out back to back in one buffer, every 512 B, 1, 2 and 4 KiB: the layouts that
/// put every lane's current block in one or two L1 sets, which the engine staggers where more
/// than 8 lanes share one (32 records: a full AVX-512 call, two VAES calls; an AES-NI call of
/// 8 lanes never needs it). CBC, CFB, OFB, CMAC and CCM (sealed and opened) in batches equal one message at a
/// time, on every backend. Under Miri, 16 records of 512 bytes every 4 KiB (as crowded, with
/// fewer blocks: 16 lanes share one set), CBC and CMAC.
#[test]
fn records_back_to_back_match_single_message() {
    let mut rng = Rng::new(43);
    let (layouts, all_modes, records_count): (&[(usize, usize)], bool, usize) = if cfg!(miri) {
        (&[(512, 4096)], false, 16)
    } else {
        (
            &[(512, 512), (1024, 1024), (2048, 2048), (4096, 4096)],
            true,
            32,
        )
    };
    for backend in backends_under_test() {
        let key = Aes::with_backend(&rng.bytes(16), backend).unwrap();
        let ccm = Ccm::with_backend(&rng.bytes(16), 12, 16, backend).unwrap();
        let mut comb = Comb::for_backend(backend);
        for &(len, stride) in layouts {
            let context = format!("{backend}, {len} bytes every {stride}");
            let original = rng.bytes(records_count * stride);
            fn records(buf: &mut [u8], (len, stride): (usize, usize)) -> Vec<&mut [u8]> {
                buf.chunks_mut(stride)
                    .map(|record| &mut record[..len])
                    .collect()
            }
            let ivs: Vec<[u8; 16]> = (0..records_count).map(|_| rng.array()).collect();
            type Single = fn(&Aes, &[u8; 16], &mut [u8]) -> Result<(), Error>;
            let expect = |single: Single| -> Vec<u8> {
                let mut buf = original.clone();
                for (record, iv) in records(&mut buf, (len, stride)).into_iter().zip(&ivs) {
                    single(&key, iv, record).unwrap();
                }
                buf
            };
            // CBC, CFB and OFB jobs have the same fields: one batch over the records each.
            macro_rules! through_comb {
                ($job:ident, $run:ident) => {{
                    let mut buf = original.clone();
                    let mut jobs: Vec<$job> = records(&mut buf, (len, stride))
                        .into_iter()
                        .zip(&ivs)
                        .map(|(data, iv)| $job {
                            key: &key,
                            iv: *iv,
                            data,
                        })
                        .collect();
                    let _ = comb.$run(&mut jobs);
                    buf
                }};
            }
            let cbc = through_comb!(CbcJob, cbc_encrypt);
            assert!(cbc == expect(modes::cbc_encrypt), "cbc {context}");
            let mut jobs: Vec<CmacJob> = original
                .chunks(stride)
                .map(|record| CmacJob {
                    key: &key,
                    message: &record[..len],
                    tag: [0; 16],
                })
                .collect();
            comb.cmac(&mut jobs);
            for (job, record) in jobs.iter().zip(original.chunks(stride)) {
                assert_eq!(job.tag, modes::cmac(&key, &record[..len]), "cmac {context}");
            }
            if !all_modes {
                continue;
            }
            let cfb = through_comb!(CfbJob, cfb_encrypt);
            assert!(
                cfb == expect(infallible!(modes::cfb_encrypt)),
                "cfb {context}"
            );
            let ofb = through_comb!(OfbJob, ofb);
            assert!(
                ofb == expect(infallible!(modes::ofb_apply)),
                "ofb {context}"
            );
            let mut buf = original.clone();
            let nonces: Vec<Vec<u8>> = (0..records_count).map(|_| rng.bytes(12)).collect();
            let mut jobs: Vec<CcmJob> = records(&mut buf, (len, stride))
                .into_iter()
                .zip(&nonces)
                .map(|(data, nonce)| CcmJob {
                    ccm: &ccm,
                    nonce,
                    aad: b"",
                    data,
                    tag: [0; 16],
                    authentic: false,
                })
                .collect();
            comb.ccm_seal(&mut jobs).unwrap();
            for (job, (record, nonce)) in jobs.iter().zip(original.chunks(stride).zip(&nonces)) {
                let single = ccm.encrypt(nonce, b"", &record[..len]).unwrap();
                assert!(
                    [&job.data[..], &job.tag[..]].concat() == single,
                    "ccm {context}"
                );
            }
            comb.ccm_open(&mut jobs).unwrap();
            for (job, record) in jobs.iter().zip(original.chunks(stride)) {
                assert!(
                    job.authentic && job.data[..] == record[..len],
                    "ccm open {context}"
                );
            }
        }
    }
}

#[test]
fn cbc_rejects_partial_blocks_before_any_work() {
    let key = Aes::new(&[1; 16]).unwrap();
    let (mut a, mut b) = (vec![5u8; 32], vec![5u8; 33]);
    let mut jobs = [
        CbcJob {
            key: &key,
            iv: [0; 16],
            data: &mut a,
        },
        CbcJob {
            key: &key,
            iv: [0; 16],
            data: &mut b,
        },
    ];
    assert_eq!(
        Comb::new().cbc_encrypt(&mut jobs),
        Err(Error::InvalidLength)
    );
    assert_eq!(a, vec![5u8; 32], "no job may be touched");
    assert!(Comb::new().cbc_encrypt(&mut []).is_ok());
    assert!(Comb::new().lanes() >= 1);
}

#[test]
fn ccm_batches_match_single_message_and_fail_alone() {
    let mut rng = Rng::new(42);
    for backend in backends_under_test() {
        let ccms = [
            Ccm::with_backend(&rng.bytes(16), 13, 8, backend).unwrap(),
            Ccm::with_backend(&rng.bytes(32), 12, 16, backend).unwrap(),
            Ccm::with_backend(&rng.bytes(16), 7, 4, backend).unwrap(),
        ];
        for mut comb in engines() {
            let originals = messages(&mut rng, comb.lanes(), false);
            let params: Vec<(usize, Vec<u8>, Vec<u8>)> = originals
                .iter()
                .map(|_| {
                    let c = rng.below(ccms.len());
                    (c, rng.bytes(ccms[c].nonce_len()), {
                        let aad_len = [0, 1, 16, 17, 300][rng.below(5)];
                        rng.bytes(aad_len)
                    })
                })
                .collect();
            let mut data = originals.clone();
            let mut jobs: Vec<CcmJob> = data
                .iter_mut()
                .zip(&params)
                .map(|(d, (c, n, a))| CcmJob {
                    ccm: &ccms[*c],
                    nonce: n,
                    aad: a,
                    data: d,
                    tag: [0; 16],
                    authentic: false,
                })
                .collect();
            comb.ccm_seal(&mut jobs).unwrap();
            for (job, (m, (c, n, a))) in jobs.iter().zip(originals.iter().zip(&params)) {
                let single = ccms[*c].encrypt(n, a, m).unwrap();
                assert_eq!(
                    [&job.data[..], &job.tag[..ccms[*c].tag_len()]].concat(),
                    single,
                    "{backend} {comb:?}"
                );
            }
            // Tamper with every third job: exactly those fail, are zeroed, the rest open.
            let tampered: Vec<bool> = (0..jobs.len()).map(|i| i % 3 == 1).collect();
            for (job, &bad) in jobs.iter_mut().zip(&tampered) {
                if bad {
                    job.tag[0] ^= 1;
                }
            }
            let result = comb.ccm_open(&mut jobs);
            assert_eq!(result.is_err(), tampered.iter().any(|&b| b));
            for ((job, &bad), m) in jobs.iter().zip(&tampered).zip(&originals) {
                assert_eq!(job.authentic, !bad);
                if bad {
                    assert!(job.data.iter().all(|&b| b == 0));
                } else {
                    assert_eq!(&job.data[..], &m[..]);
                }
            }
        }
    }
}

/// Short messages only: lengths 0..=120 (whole blocks a quarter of the time) with AAD of
/// 0..=48 bytes, so that most jobs take the grouped short-message kernel (at most 8 hashed
/// blocks) and a few just miss it; enough jobs for several full groups and a partial one.
fn short_messages(rng: &mut Rng) -> Vec<Vec<u8>> {
    let count = if cfg!(miri) {
        9 + rng.below(8)
    } else {
        1 + rng.below(48)
    };
    (0..count)
        .map(|_| {
            let len = match rng.below(4) {
                0 => 16 * rng.below(8),
                _ => rng.below(121),
            };
            rng.bytes(len)
        })
        .collect()
}

/// Messages without AAD (`siv_batches` gives a few some) whose text is mostly one number of
/// blocks, with every length of a last block, and otherwise one block more: groups whose
/// messages all hash as many blocks (the benchmark's shape) next to groups that straddle two
/// counts. The number of blocks is short (0..=6) or, outside Miri, two times in three around
/// the most a group takes (the limits are 23 text blocks on AES-NI and 63 with VAES:
/// 19..=28 and 44..=66 blocks), so that a batch splits between the groups and the pipeline
/// at the limit.
fn uniform_messages(rng: &mut Rng) -> Vec<Vec<u8>> {
    let count = if cfg!(miri) {
        8 + rng.below(9)
    } else {
        1 + rng.below(48)
    };
    let blocks = match if cfg!(miri) { 0 } else { rng.below(3) } {
        0 => rng.below(7),
        1 => 19 + rng.below(10),
        _ => 44 + rng.below(23),
    };
    (0..count)
        .map(|_| match blocks + usize::from(rng.below(4) == 0) {
            0 => Vec::new(),
            blocks => {
                let len = 16 * (blocks - 1) + 1 + rng.below(16);
                rng.bytes(len)
            }
        })
        .collect()
}

/// What a round of `siv_batches` seals.
#[derive(Clone, Copy, PartialEq)]
enum SivRound {
    /// `messages`: 0..=5000 bytes, AAD up to 200 bytes.
    Any,
    /// `short_messages`, AAD up to 48 bytes.
    Short,
    /// `uniform_messages`, one in 16 with 1..=16 bytes of AAD.
    Uniform,
    /// `uniform_messages` in order of length, no AAD, a third of the time all as long as the
    /// first: a batch that the groups take in the order it comes.
    InOrder,
}

/// Batches of 1..=48 jobs (three VAES groups), lengths 0..=5000 with empty and one-block
/// messages and two past the group limit, AAD from none to longer than the message (so that
/// POLYVAL and the counter mode of one job take different paths), then batches of short
/// messages (`short_messages`), of short messages of nearly one length (`uniform_messages`)
/// and of those in order, both key sizes; every sealed job equals the single-message result,
/// and forged jobs fail alone and are zeroed.
fn siv_batches<K: combsiv::KeySize>(rng: &mut Rng) {
    let rounds = if cfg!(miri) { 1 } else { 12 };
    for backend in backends_under_test() {
        for round in 0..4 * rounds {
            let kind = [
                SivRound::Any,
                SivRound::Short,
                SivRound::Uniform,
                SivRound::InOrder,
            ][round % 4];
            let key = K::Key::try_from(&rng.bytes(K::KEY_LEN)[..]).ok().unwrap();
            let cipher = combsiv::AesGcmSiv::<K>::with_backend(&key, backend).unwrap();
            let mut originals = match kind {
                SivRound::Any => messages(rng, 16, false),
                SivRound::Short => short_messages(rng),
                SivRound::Uniform => uniform_messages(rng),
                SivRound::InOrder => {
                    let mut messages = uniform_messages(rng);
                    messages.sort_by_key(Vec::len);
                    if rng.below(3) == 0 {
                        let len = messages.first().map_or(0, Vec::len);
                        messages.iter_mut().for_each(|m| m.truncate(len));
                    }
                    messages
                }
            };
            if kind == SivRound::Any {
                // Two messages past the most a group takes (63 text blocks with VAES), also
                // under Miri, so that the pipeline runs with a message pending.
                for _ in 0..2 {
                    let at = rng.below(originals.len() + 1);
                    let len = 1009 + rng.below(100);
                    originals.insert(at, rng.bytes(len));
                }
            }
            let params: Vec<([u8; 12], Vec<u8>)> = originals
                .iter()
                .map(|_| {
                    let aad_len = match (
                        kind,
                        rng.below(if kind == SivRound::Uniform { 16 } else { 4 }),
                    ) {
                        (SivRound::Uniform, 0) => 1 + rng.below(16),
                        (SivRound::Uniform | SivRound::InOrder, _) | (_, 0) => 0,
                        (SivRound::Short, _) => rng.below(49),
                        (SivRound::Any, 1) => rng.below(200),
                        (SivRound::Any, _) => rng.below(40),
                    };
                    (rng.array(), rng.bytes(aad_len))
                })
                .collect();
            let mut data = originals.clone();
            let mut jobs: Vec<SivJob> = data
                .iter_mut()
                .zip(&params)
                .map(|(d, (n, a))| SivJob {
                    nonce: *n,
                    aad: a,
                    data: d,
                    tag: [0; 16],
                    authentic: false,
                })
                .collect();
            cipher.seal_batch(&mut jobs).unwrap();
            for (i, (job, (m, (n, a)))) in
                jobs.iter().zip(originals.iter().zip(&params)).enumerate()
            {
                assert_eq!(
                    [&job.data[..], &job.tag[..]].concat(),
                    cipher.encrypt(n, a, m).unwrap(),
                    "{backend} job {i} of {}: {} bytes, {} of AAD",
                    jobs.len(),
                    m.len(),
                    a.len()
                );
            }
            let forged: Vec<bool> = jobs.iter().map(|_| rng.below(4) == 0).collect();
            for (job, &forge) in jobs.iter_mut().zip(&forged) {
                if forge {
                    let byte = rng.below(16);
                    job.tag[byte] ^= 1 << rng.below(8);
                }
            }
            let result = cipher.open_batch(&mut jobs);
            let expected = if forged.contains(&true) {
                Err(Error::Authentication)
            } else {
                Ok(())
            };
            assert_eq!(result, expected, "{backend}");
            for (i, (job, m)) in jobs.iter().zip(&originals).enumerate() {
                assert_eq!(job.authentic, !forged[i], "{backend} job {i}");
                if forged[i] {
                    assert!(job.data.iter().all(|&b| b == 0), "{backend} job {i}");
                } else {
                    assert_eq!(&job.data[..], &m[..], "{backend} job {i}");
                }
            }
        }
    }
}

#[test]
fn siv_batches_match_single_message_and_fail_alone() {
    let mut rng = Rng::new(43);
    siv_batches::<combsiv::Aes128>(&mut rng);
    siv_batches::<combsiv::Aes256>(&mut rng);
}

#[test]
fn official_vectors_through_the_batch_apis() {
    let modes_file = load_vectors("sp800-38a.json");
    let cmac_file = load_vectors("rfc4493-cmac.json");
    for backend in backends_under_test() {
        for mut comb in engines() {
            for v in modes_file["vectors"].as_array().unwrap() {
                let key = Aes::with_backend(&hex(&v["key"]), backend).unwrap();
                let iv: [u8; 16] = hex(&v["iv"]).try_into().unwrap();
                let mut data = hex(&v["plaintext"]);
                match v["mode"].as_str().unwrap() {
                    "CBC" => comb
                        .cbc_encrypt(&mut [CbcJob {
                            key: &key,
                            iv,
                            data: &mut data,
                        }])
                        .unwrap(),
                    "CFB128" => comb.cfb_encrypt(&mut [CfbJob {
                        key: &key,
                        iv,
                        data: &mut data,
                    }]),
                    "OFB" => comb.ofb(&mut [OfbJob {
                        key: &key,
                        iv,
                        data: &mut data,
                    }]),
                    _ => continue,
                }
                assert_eq!(data, hex(&v["ciphertext"]), "{} {backend}", v["id"]);
            }
            let keys: Vec<Aes> = cmac_file["vectors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| Aes::with_backend(&hex(&v["key"]), backend).unwrap())
                .collect();
            let messages: Vec<Vec<u8>> = cmac_file["vectors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| hex(&v["message"]))
                .collect();
            let mut jobs: Vec<CmacJob> = keys
                .iter()
                .zip(&messages)
                .map(|(key, message)| CmacJob {
                    key,
                    message,
                    tag: [0; 16],
                })
                .collect();
            comb.cmac(&mut jobs);
            for (job, v) in jobs.iter().zip(cmac_file["vectors"].as_array().unwrap()) {
                assert_eq!(job.tag.to_vec(), hex(&v["tag"]), "{} {backend}", v["id"]);
            }
        }
    }
}

/// A job whose nonce or length is out of range fails the whole open before any work, as a
/// failed decryption does: every `authentic` false (even one a caller left true) and every
/// job zeroed.
#[test]
fn a_refused_ccm_open_leaves_no_job_authentic() {
    let ccm = Ccm::new(&[9; 16], 12, 16).unwrap();
    let mut data = [vec![1u8; 40], vec![2u8; 40]];
    let nonces = [[0u8; 12].to_vec(), [0u8; 11].to_vec()];
    let mut jobs: Vec<CcmJob> = data
        .iter_mut()
        .zip(&nonces)
        .map(|(data, nonce)| CcmJob {
            ccm: &ccm,
            nonce,
            aad: b"",
            data,
            tag: [0; 16],
            authentic: true,
        })
        .collect();
    assert!(Comb::new().ccm_open(&mut jobs).is_err());
    assert!(jobs.iter().all(|job| !job.authentic));
    assert!(data.iter().flatten().all(|&b| b == 0));
}

/// A batch cut across threads (explicit counts, more threads than jobs, and the automatic
/// count on a batch big enough to be cut) seals and opens exactly as on one thread; a forged
/// job fails alone, whichever part it is in.
#[test]
fn siv_batches_on_several_threads_match_one_thread() {
    let mut rng = Rng::new(44);
    let big = if cfg!(miri) { 0 } else { 3 * 1024 };
    for backend in backends_under_test() {
        let key = rng.bytes(32);
        let cipher =
            combsiv::Aes256GcmSiv::with_backend(&key[..].try_into().unwrap(), backend).unwrap();
        for (count, threads) in [(9, 2), (9, 3), (5, 7), (big, 0), (big, 4)] {
            let originals: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = rng.below(600);
                    rng.bytes(len)
                })
                .collect();
            let nonces: Vec<[u8; 12]> = (0..count).map(|_| rng.array()).collect();
            let aad_len = rng.below(40);
            let aad = rng.bytes(aad_len);
            let run =
                |data: &mut Vec<Vec<u8>>, threads: Option<usize>, tags: Option<&[[u8; 16]]>| {
                    let mut jobs: Vec<SivJob> = data
                        .iter_mut()
                        .zip(&nonces)
                        .enumerate()
                        .map(|(i, (d, n))| SivJob {
                            nonce: *n,
                            aad: &aad,
                            data: d,
                            tag: tags.map_or([0; 16], |t| t[i]),
                            authentic: false,
                        })
                        .collect();
                    let result = match (threads, tags) {
                        (None, None) => cipher.seal_batch_with_threads(&mut jobs, 1),
                        (Some(t), None) => cipher.seal_batch_with_threads(&mut jobs, t),
                        (_, Some(_)) => cipher.open_batch_with_threads(&mut jobs, threads.unwrap()),
                    };
                    let tags: Vec<[u8; 16]> = jobs.iter().map(|j| j.tag).collect();
                    let authentic: Vec<bool> = jobs.iter().map(|j| j.authentic).collect();
                    (result, tags, authentic)
                };
            let mut one = originals.clone();
            let (_, one_tags, _) = run(&mut one, None, None);
            let mut many = originals.clone();
            let (result, tags, _) = run(&mut many, Some(threads), None);
            assert_eq!(result, Ok(()));
            assert_eq!(
                (&many, &tags),
                (&one, &one_tags),
                "{backend} {count} {threads}"
            );
            let mut forged_tags = tags.clone();
            let forged = (count > 0).then(|| rng.below(count));
            if let Some(f) = forged {
                forged_tags[f][0] ^= 1;
            }
            let (result, _, authentic) = run(&mut many, Some(threads), Some(&forged_tags));
            assert_eq!(
                result.is_err(),
                forged.is_some(),
                "{backend} {count} {threads}"
            );
            for (i, message) in many.iter().enumerate() {
                assert_eq!(authentic[i], Some(i) != forged, "{backend} job {i}");
                if Some(i) == forged {
                    assert!(message.iter().all(|&b| b == 0));
                } else {
                    assert_eq!(message, &originals[i]);
                }
            }
        }
    }
}
