//! The comb paper's tables on this machine: (a) CBC by lane count, (b) every mode sequential
//! versus comb, (c) AES-GCM-SIV batch versus one message at a time.
//!
//! Workloads: 64 messages of 2 KiB, and the Internet mix (CBC rounds each length up to whole
//! blocks). One shared AES-128 key, a fresh IV/nonce per message. Each cell is the median of
//! the repeats, in TSC cycles per byte.

use std::cell::RefCell;
use std::fmt::Write as _;

use aes::cipher::array::Array;
use aes::cipher::{BlockModeEncrypt, KeyIvInit};
use combsiv::comb::{CbcJob, CcmJob, CfbJob, CmacJob, Comb, OfbJob, Schedule, SivJob};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Aes128GcmSiv};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;

use crate::measure::Effort;
use crate::tsc;
use crate::workloads::Workload;

/// Median TSC cycles of one call of `pass`, batches interleaved across the closures given.
fn median_cycles(effort: Effort, passes: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let batches: Vec<u64> = passes
        .iter_mut()
        .map(|pass| {
            pass();
            let start = tsc::now();
            pass();
            (effort.batch_ticks / tsc::now().wrapping_sub(start).max(1)).clamp(1, 10_000)
        })
        .collect();
    let mut samples = vec![Vec::new(); passes.len()];
    for _ in 0..effort.repeats {
        for ((pass, &batch), samples) in passes.iter_mut().zip(&batches).zip(&mut samples) {
            let start = tsc::now();
            for _ in 0..batch {
                pass();
            }
            samples.push(tsc::now().wrapping_sub(start) as f64 / batch as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect()
}

struct Messages {
    label: &'static str,
    data: Vec<Vec<u8>>,
    ivs: Vec<[u8; 16]>,
}

impl Messages {
    fn new(label: &'static str, sizes: &[usize], whole_blocks: bool) -> Messages {
        let data = sizes
            .iter()
            .map(|&s| vec![0x5a; if whole_blocks { s.div_ceil(16) * 16 } else { s }])
            .collect();
        let ivs = (0..sizes.len()).map(|i| [i as u8; 16]).collect();
        Messages { label, data, ivs }
    }

    fn bytes(&self) -> usize {
        self.data.iter().map(Vec::len).sum()
    }
}

fn workloads(whole_blocks: bool) -> [Messages; 2] {
    [
        Messages::new("2 KiB", &[2048; 64], whole_blocks),
        Messages::new("mix", &Workload::internet_mix().sizes, whole_blocks),
    ]
}

/// (a): CBC encryption by lane count, both schedules.
pub fn cbc_by_lanes(effort: Effort, max_lanes: usize) -> String {
    let Ok(key) = Aes::new(&[0x2b; 16]) else {
        return "(a) skipped: the AES key could not be set up".to_string();
    };
    let mut out = String::from(
        "(a) CBC encryption by parallelism P (comb windows; greedy refill for comparison), AES-128\n\n\
         | workload | P | comb c/B | speed-up | latency x | greedy c/B | idle slots (comb / greedy) |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for mut messages in workloads(true) {
        let bytes = messages.bytes() as f64;
        let count = messages.data.len();
        let ivs = messages.ivs.clone();
        let sequential = {
            let data = &mut messages.data;
            median_cycles(
                effort,
                &mut [&mut || {
                    for (m, iv) in data.iter_mut().zip(&ivs) {
                        let _ = modes::cbc_encrypt(&key, iv, m);
                    }
                }],
            )[0]
        };
        let _ = writeln!(
            out,
            "| {} | seq | {:.3} | 1.00 | 1.00 | | |",
            messages.label,
            sequential / bytes
        );
        for lanes in 1..=max_lanes {
            let mut engines = [
                Comb::with_lanes(lanes),
                Comb::with_lanes(lanes).with_schedule(Schedule::Greedy),
            ];
            let (mut idle_windows, mut idle_greedy) = (0.0, 0.0);
            let cycles = {
                let [windows, greedy] = &mut engines;
                let run = |comb: &mut Comb, data: &mut Vec<Vec<u8>>| {
                    let mut jobs: Vec<CbcJob> = data
                        .iter_mut()
                        .zip(&ivs)
                        .map(|(m, iv)| CbcJob {
                            key: &key,
                            iv: *iv,
                            data: m,
                        })
                        .collect();
                    let _ = comb.cbc_encrypt(&mut jobs);
                    comb.last_stats().idle_fraction()
                };
                let shared = RefCell::new(messages.data.clone());
                median_cycles(
                    effort,
                    &mut [
                        &mut || idle_windows = run(windows, &mut shared.borrow_mut()),
                        &mut || idle_greedy = run(greedy, &mut shared.borrow_mut()),
                    ],
                )
            };
            let idle = [idle_windows, idle_greedy];
            // Every message of a group finishes with its group, so its latency is the group's
            // time; sequentially it is the message's own time.
            let groups = count.div_ceil(lanes) as f64;
            let latency = (cycles[0] / groups) / (sequential / count as f64);
            let _ = writeln!(
                out,
                "| {} | {lanes} | {:.3} | {:.2} | {:.2} | {:.3} | {:.1} % / {:.1} % |",
                messages.label,
                cycles[0] / bytes,
                sequential / cycles[0],
                latency,
                cycles[1] / bytes,
                100.0 * idle[0],
                100.0 * idle[1]
            );
        }
    }
    out
}

/// (b): each mode sequential (one message at a time) and through the comb engine.
pub fn modes_table(effort: Effort) -> String {
    let (Ok(key), Ok(ccm)) = (Aes::new(&[0x2b; 16]), Ccm::new(&[0x2b; 16], 13, 16)) else {
        return "(b) skipped: the AES/CCM keys could not be set up".to_string();
    };
    let nonce = [7u8; 13];
    let mut out = String::from(
        "(b) Modes, sequential vs comb (default lanes and schedule), AES-128, TSC c/B\n\n\
         | mode | workload | sequential | comb | speed-up | RustCrypto | OpenSSL |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    let mut comb = Comb::new();
    for messages in workloads(true) {
        let bytes = messages.bytes() as f64;
        let ivs = messages.ivs.clone();
        let shared = RefCell::new(messages.data.clone());
        macro_rules! row {
            ($name:literal, |$m:ident, $iv:ident| $single:expr, |$d:ident| $batch:expr $(, $peers:expr)?) => {{
                let cycles = median_cycles(effort, &mut [
                    &mut || for ($m, $iv) in shared.borrow_mut().iter_mut().zip(&ivs) { let _ = $single; },
                    &mut || { let $d = &mut *shared.borrow_mut(); let _ = $batch; },
                ]);
                #[allow(unused_mut, unused_assignments)]
                let mut peers = String::from(" | |");
                $( peers = $peers; )?
                let _ = writeln!(out, "| {} | {} | {:.3} | {:.3} | {:.2}{peers}", $name, messages.label,
                    cycles[0] / bytes, cycles[1] / bytes, cycles[0] / cycles[1]);
            }};
        }
        row!("CTR", |m, iv| modes::ctr_apply(&key, iv, m), |d| {
            for (m, iv) in d.iter_mut().zip(&ivs) {
                modes::ctr_apply(&key, iv, m);
            }
        });
        row!(
            "CBC",
            |m, iv| modes::cbc_encrypt(&key, iv, m),
            |d| {
                let mut jobs: Vec<CbcJob> = d
                    .iter_mut()
                    .zip(&ivs)
                    .map(|(m, iv)| CbcJob {
                        key: &key,
                        iv: *iv,
                        data: m,
                    })
                    .collect();
                comb.cbc_encrypt(&mut jobs)
            },
            peer_cbc(effort, &messages, bytes)
        );
        row!("CFB", |m, iv| modes::cfb_encrypt(&key, iv, m), |d| {
            let mut jobs: Vec<CfbJob> = d
                .iter_mut()
                .zip(&ivs)
                .map(|(m, iv)| CfbJob {
                    key: &key,
                    iv: *iv,
                    data: m,
                })
                .collect();
            comb.cfb_encrypt(&mut jobs)
        });
        row!("OFB", |m, iv| modes::ofb_apply(&key, iv, m), |d| {
            let mut jobs: Vec<OfbJob> = d
                .iter_mut()
                .zip(&ivs)
                .map(|(m, iv)| OfbJob {
                    key: &key,
                    iv: *iv,
                    data: m,
                })
                .collect();
            comb.ofb(&mut jobs)
        });
        row!("CMAC", |m, _iv| modes::cmac(&key, m), |d| {
            let mut jobs: Vec<CmacJob> = d
                .iter()
                .map(|m| CmacJob {
                    key: &key,
                    message: m,
                    tag: [0; 16],
                })
                .collect();
            comb.cmac(&mut jobs)
        });
        row!(
            "CCM seal",
            |m, _iv| ccm.encrypt_in_place_detached(&nonce, &[], m),
            |d| {
                let mut jobs: Vec<CcmJob> = d
                    .iter_mut()
                    .map(|m| CcmJob {
                        ccm: &ccm,
                        nonce: &nonce,
                        aad: &[],
                        data: m,
                        tag: [0; 16],
                        authentic: false,
                    })
                    .collect();
                comb.ccm_seal(&mut jobs)
            }
        );
    }
    out
}

/// RustCrypto `cbc` and OpenSSL EVP AES-128-CBC, one message at a time.
fn peer_cbc(effort: Effort, messages: &Messages, bytes: f64) -> String {
    let key = [0x2b; 16];
    let shared = RefCell::new(messages.data.clone());
    let mut ctx = CipherCtx::new().ok();
    if let Some(ctx) = ctx.as_mut() {
        let _ = ctx.encrypt_init(Some(Cipher::aes_128_cbc()), Some(&key), None);
        ctx.set_padding(false);
    }
    let mut out = vec![0u8; 2048 * 2];
    let cycles = median_cycles(
        effort,
        &mut [
            &mut || {
                for (m, iv) in shared.borrow_mut().iter_mut().zip(&messages.ivs) {
                    if let Ok(mut encryptor) =
                        cbc::Encryptor::<aes::Aes128>::new_from_slices(&key, iv)
                    {
                        encryptor.encrypt_blocks(Array::cast_slice_from_core_mut(
                            m.as_chunks_mut::<16>().0,
                        ));
                    }
                }
            },
            &mut || {
                for (m, iv) in shared.borrow_mut().iter_mut().zip(&messages.ivs) {
                    if let Some(ctx) = ctx.as_mut() {
                        out.resize(m.len() + 16, 0);
                        let _ = ctx.encrypt_init(None, None, Some(iv));
                        let _ = ctx.cipher_update(m, Some(&mut out));
                    }
                }
            },
        ],
    );
    format!(" | {:.3} | {:.3} |", cycles[0] / bytes, cycles[1] / bytes)
}

/// (c): AES-128-GCM-SIV seal_batch versus one message at a time, with ring as reference.
pub fn siv_batch_table(effort: Effort) -> String {
    let cipher = Aes128GcmSiv::new(&[0x42; 16]);
    let ring_key = ring::aead::UnboundKey::new(&ring::aead::AES_128_GCM, &[0x42; 16])
        .map(ring::aead::LessSafeKey::new)
        .ok();
    let mix = Workload::internet_mix();
    let bytes = mix.bytes() as f64;
    let shared = RefCell::new(Messages::new("mix", &mix.sizes, false).data);
    let nonces: Vec<[u8; 12]> = (0..shared.borrow().len()).map(|i| [i as u8; 12]).collect();
    let cycles = median_cycles(
        effort,
        &mut [
            &mut || {
                for (m, n) in shared.borrow_mut().iter_mut().zip(&nonces) {
                    let _ = cipher.encrypt_in_place_detached(n, &[], m);
                }
            },
            &mut || {
                let mut batch = shared.borrow_mut();
                let mut jobs: Vec<SivJob> = batch
                    .iter_mut()
                    .zip(&nonces)
                    .map(|(m, n)| SivJob {
                        nonce: *n,
                        aad: &[],
                        data: m,
                        tag: [0; 16],
                        authentic: false,
                    })
                    .collect();
                let _ = cipher.seal_batch(&mut jobs);
            },
            &mut || {
                if let Some(key) = ring_key.as_ref() {
                    for (m, n) in shared.borrow_mut().iter_mut().zip(&nonces) {
                        let nonce = ring::aead::Nonce::assume_unique_for_key(*n);
                        let _ = key.seal_in_place_separate_tag(nonce, ring::aead::Aad::empty(), m);
                    }
                }
            },
        ],
    );
    format!(
        "(c) AES-128-GCM-SIV on the Internet mix, TSC c/B\n\n| implementation | c/B | vs single |\n|---|---:|---:|\n\
         | combsiv single-message | {:.3} | 1.00 |\n| combsiv seal_batch | {:.3} | {:.2} |\n| ring AES-128-GCM single-message | {:.3} | {:.2} |\n",
        cycles[0] / bytes,
        cycles[1] / bytes,
        cycles[0] / cycles[1],
        cycles[2] / bytes,
        cycles[0] / cycles[2]
    )
}
