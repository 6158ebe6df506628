//! The comb paper's tables on this machine, one column per x86 tier (AES-NI, VAES, AVX-512):
//! (a) CBC by lane count, (b) every mode sequential versus comb, (c) AES-GCM-SIV batch versus
//! one message at a time, (d) records back to back in one buffer versus apart.
//!
//! Workloads: 64 messages of 2 KiB, the Internet mix (CBC rounds each length up to whole
//! blocks), 64 messages of 64 bytes; for (c) also 64 x 576 and 64 x 1500 bytes. One shared
//! AES-128 key, a fresh IV/nonce per message. Each cell is the median of the repeats, in TSC
//! cycles per byte; every table is also returned as JSON rows.

use std::cell::RefCell;
use std::fmt::Write as _;

use aes::cipher::array::Array;
use aes::cipher::{BlockModeEncrypt, InnerIvInit, KeyInit};
use combsiv::comb::{CbcJob, CcmJob, CfbJob, CmacJob, Comb, OfbJob, Schedule, SivJob};
use combsiv::modes::{self, Ccm};
use combsiv::{Aes, Aes128GcmSiv, Backend};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;
use serde_json::{Value, json};

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

fn workloads(whole_blocks: bool) -> [Messages; 3] {
    [
        Messages::new("2 KiB", &[2048; 64], whole_blocks),
        Messages::new("mix", &Workload::internet_mix().sizes, whole_blocks),
        Messages::new("64 x 64 B", &[64; 64], whole_blocks),
    ]
}

/// A table's title and header row: the `leading` columns (name, alignment), each tier's
/// `per_tier` columns, then the `trailing` ones (right-aligned numbers).
fn header(
    title: &str,
    leading: &[(&str, &str)],
    (tiers, per_tier): (&[Backend], &[&str]),
    trailing: &[&str],
) -> String {
    let mut names: Vec<String> = leading.iter().map(|(name, _)| name.to_string()).collect();
    let mut aligns: Vec<&str> = leading.iter().map(|(_, align)| *align).collect();
    for tier in tiers {
        for column in per_tier {
            names.push(format!("{tier} {column}"));
            aligns.push("---:");
        }
    }
    names.extend(trailing.iter().map(|name| name.to_string()));
    aligns.extend(trailing.iter().map(|_| "---:"));
    format!(
        "{title}\n\n| {} |\n|{}|\n",
        names.join(" | "),
        aligns.join("|")
    )
}

/// A table as markdown and as JSON rows.
pub struct Table {
    pub markdown: String,
    pub rows: Vec<Value>,
}

/// (a): CBC encryption by lane count with the comb's windows, one column per tier; the
/// greedy refill scheduler for comparison on the first tier.
pub fn cbc_by_lanes(effort: Effort, tiers: &[Backend], max_lanes: usize) -> Table {
    let keys: Vec<(Backend, Aes)> = tiers
        .iter()
        .filter_map(|&tier| {
            Aes::with_backend(&[0x2b; 16], tier)
                .ok()
                .map(|key| (tier, key))
        })
        .collect();
    let Some((_, sequential_key)) = keys.first() else {
        return skipped("(a) skipped: no AES key could be set up");
    };
    let tier_names: Vec<Backend> = keys.iter().map(|(tier, _)| *tier).collect();
    let mut markdown = header(
        "(a) CBC encryption by parallelism P (comb windows), AES-128, TSC c/B; speed-up over one message at a time",
        &[("workload", "---"), ("P", "---:")],
        (&tier_names, &["c/B", "x"]),
        &["greedy c/B", "idle slots"],
    );
    let mut rows = Vec::new();
    for messages in workloads(true) {
        let bytes = messages.bytes() as f64;
        let ivs = messages.ivs.clone();
        let shared = RefCell::new(messages.data.clone());
        let sequential = median_cycles(
            effort,
            &mut [&mut || {
                for (m, iv) in shared.borrow_mut().iter_mut().zip(&ivs) {
                    let _ = modes::cbc_encrypt(sequential_key, iv, m);
                }
            }],
        )[0];
        for lanes in 1..=max_lanes {
            let mut engines: Vec<Comb> = keys.iter().map(|_| Comb::with_lanes(lanes)).collect();
            let mut greedy = Comb::with_lanes(lanes).with_schedule(Schedule::Greedy);
            let run = |comb: &mut Comb, key: &Aes| {
                let mut data = shared.borrow_mut();
                let mut jobs: Vec<CbcJob> = data
                    .iter_mut()
                    .zip(&ivs)
                    .map(|(m, iv)| CbcJob {
                        key,
                        iv: *iv,
                        data: m,
                    })
                    .collect();
                let _ = comb.cbc_encrypt(&mut jobs);
            };
            let mut passes: Vec<Box<dyn FnMut() + '_>> = Vec::new();
            for (comb, (_, key)) in engines.iter_mut().zip(&keys) {
                passes.push(Box::new(move || run(comb, key)));
            }
            passes.push(Box::new(|| run(&mut greedy, sequential_key)));
            let mut refs: Vec<&mut dyn FnMut()> = passes
                .iter_mut()
                .map(|pass| &mut **pass as &mut dyn FnMut())
                .collect();
            let cycles = median_cycles(effort, &mut refs);
            drop(refs);
            drop(passes);
            let idle = engines
                .first()
                .map_or(0.0, |comb| comb.last_stats().idle_fraction());
            let _ = write!(markdown, "| {} | {lanes} |", messages.label);
            let mut row = json!({"table": "cbc_by_lanes", "workload": messages.label,
                "lanes": lanes, "sequential_cpb": sequential / bytes, "idle": idle});
            for ((tier, _), &c) in keys.iter().zip(&cycles) {
                let _ = write!(markdown, " {:.3} | {:.2} |", c / bytes, sequential / c);
                row[tier.name()] = json!({"cpb": c / bytes, "speedup": sequential / c});
            }
            let greedy_cycles = cycles[keys.len()];
            row["greedy_cpb"] = json!(greedy_cycles / bytes);
            let _ = writeln!(
                markdown,
                " {:.3} | {:.1} % |",
                greedy_cycles / bytes,
                100.0 * idle
            );
            rows.push(row);
        }
    }
    Table { markdown, rows }
}

fn skipped(why: &str) -> Table {
    Table {
        markdown: why.to_string(),
        rows: Vec::new(),
    }
}

/// The comb's modes, by name.
const MODES: [&str; 6] = ["CBC", "CFB", "OFB", "CMAC", "CCM seal", "CTR"];

/// One pass of `mode` over `data`: one message at a time (`comb` None) or as one batch.
fn pass<M: AsMut<[u8]>>(
    mode: &str,
    (key, ccm): (&Aes, &Ccm),
    comb: Option<&mut Comb>,
    data: &mut [M],
    ivs: &[[u8; 16]],
) {
    let nonce = [7u8; 13];
    let Some(comb) = comb else {
        for (m, iv) in data.iter_mut().map(AsMut::as_mut).zip(ivs) {
            match mode {
                "CBC" => {
                    let _ = modes::cbc_encrypt(key, iv, m);
                }
                "CFB" => modes::cfb_encrypt(key, iv, m),
                "OFB" => modes::ofb_apply(key, iv, m),
                "CMAC" => {
                    let _tag = modes::cmac(key, m);
                }
                "CCM seal" => {
                    let _ = ccm.encrypt_in_place_detached(&nonce, &[], m);
                }
                _ => modes::ctr_apply(key, iv, m),
            }
        }
        return;
    };
    let jobs = data.iter_mut().map(AsMut::as_mut).zip(ivs);
    match mode {
        "CBC" => {
            let mut jobs: Vec<CbcJob> = jobs
                .map(|(m, iv)| CbcJob {
                    key,
                    iv: *iv,
                    data: m,
                })
                .collect();
            let _ = comb.cbc_encrypt(&mut jobs);
        }
        "CFB" => {
            let mut jobs: Vec<CfbJob> = jobs
                .map(|(m, iv)| CfbJob {
                    key,
                    iv: *iv,
                    data: m,
                })
                .collect();
            comb.cfb_encrypt(&mut jobs);
        }
        "OFB" => {
            let mut jobs: Vec<OfbJob> = jobs
                .map(|(m, iv)| OfbJob {
                    key,
                    iv: *iv,
                    data: m,
                })
                .collect();
            comb.ofb(&mut jobs);
        }
        "CMAC" => {
            let mut jobs: Vec<CmacJob> = jobs
                .map(|(m, _)| CmacJob {
                    key,
                    message: m,
                    tag: [0; 16],
                })
                .collect();
            comb.cmac(&mut jobs);
        }
        "CCM seal" => {
            let mut jobs: Vec<CcmJob> = jobs
                .map(|(m, _)| CcmJob {
                    ccm,
                    nonce: &nonce,
                    aad: &[],
                    data: m,
                    tag: [0; 16],
                    authentic: false,
                })
                .collect();
            let _ = comb.ccm_seal(&mut jobs);
        }
        // CTR needs no comb: the engine-less loop is the batch.
        _ => pass(mode, (key, ccm), None, data, ivs),
    }
}

/// The AES-128 key and CCM (13-byte nonces, 16-byte tags) of the mode tables, per tier that
/// can set them up.
fn mode_keys(tiers: &[Backend]) -> Vec<(Backend, Aes, Ccm)> {
    tiers
        .iter()
        .filter_map(|&tier| {
            let key = Aes::with_backend(&[0x2b; 16], tier).ok()?;
            let ccm = Ccm::with_backend(&[0x2b; 16], 13, 16, tier).ok()?;
            Some((tier, key, ccm))
        })
        .collect()
}

/// (b): each mode one message at a time and through the comb engine (default lanes per
/// tier), with RustCrypto and OpenSSL CBC and ring AES-128-GCM (measured interleaved with
/// CCM) as references.
pub fn modes_table(effort: Effort, tiers: &[Backend]) -> Table {
    let keys = mode_keys(tiers);
    let Some((_, sequential_key, sequential_ccm)) = keys.first() else {
        return skipped("(b) skipped: no AES/CCM key could be set up");
    };
    let tier_names: Vec<Backend> = keys.iter().map(|(tier, ..)| *tier).collect();
    let mut markdown = header(
        "(b) Modes, one message at a time vs comb (default lanes per tier), AES-128, TSC c/B",
        &[("mode", "---"), ("workload", "---"), ("sequential", "---:")],
        (&tier_names, &["comb", "x"]),
        &["RustCrypto", "OpenSSL"],
    );
    let mut rows = Vec::new();
    let mut engines: Vec<Comb> = keys
        .iter()
        .map(|(tier, ..)| Comb::for_backend(*tier))
        .collect();
    for messages in workloads(true) {
        let bytes = messages.bytes() as f64;
        let ivs = &messages.ivs;
        let shared = RefCell::new(messages.data.clone());
        let (mut ring_cycles, mut ccm_cycles) = (None, Vec::new());
        for mode in MODES {
            let mut passes: Vec<Box<dyn FnMut() + '_>> = vec![Box::new(|| {
                pass(
                    mode,
                    (sequential_key, sequential_ccm),
                    None,
                    &mut shared.borrow_mut(),
                    ivs,
                )
            })];
            for (comb, (_, key, ccm)) in engines.iter_mut().zip(&keys) {
                let shared = &shared;
                passes.push(Box::new(move || {
                    pass(mode, (key, ccm), Some(comb), &mut shared.borrow_mut(), ivs)
                }));
            }
            // CCM's yardstick, ring's AES-128-GCM, runs interleaved with it: this host swings
            // between a fast and a slow state, and a ratio of two separate measurements can
            // straddle the two.
            let mut ring = if mode == "CCM seal" {
                ring_gcm_pass(messages.data.clone())
            } else {
                None
            };
            let mut refs: Vec<&mut dyn FnMut()> = passes
                .iter_mut()
                .map(|pass| &mut **pass as &mut dyn FnMut())
                .collect();
            if let Some(ring) = ring.as_mut() {
                refs.push(ring);
            }
            let mut cycles = median_cycles(effort, &mut refs);
            drop(refs);
            drop(passes);
            if ring.is_some() {
                ring_cycles = cycles.pop();
                ccm_cycles = cycles[1..].to_vec();
            }
            let sequential = cycles[0];
            let _ = write!(
                markdown,
                "| {mode} | {} | {:.3} |",
                messages.label,
                sequential / bytes
            );
            let mut row = json!({"table": "modes", "mode": mode, "workload": messages.label,
                "sequential_cpb": sequential / bytes});
            for ((tier, ..), &c) in keys.iter().zip(&cycles[1..]) {
                let _ = write!(markdown, " {:.3} | {:.2} |", c / bytes, sequential / c);
                row[tier.name()] = json!({"cpb": c / bytes, "speedup": sequential / c});
            }
            let peers = if mode == "CBC" {
                let [rustcrypto, openssl] = peer_cbc(effort, &messages);
                row["rustcrypto_cpb"] = json!(rustcrypto / bytes);
                row["openssl_cpb"] = json!(openssl / bytes);
                format!(" {:.3} | {:.3} |", rustcrypto / bytes, openssl / bytes)
            } else {
                " | |".to_string()
            };
            let _ = writeln!(markdown, "{peers}");
            rows.push(row);
        }
        // Ring's time over each tier's comb CCM time: above 1, comb CCM is faster.
        let ring = ring_cycles.unwrap_or(f64::NAN);
        let _ = write!(
            markdown,
            "| ring AES-128-GCM seal (reference, interleaved with CCM) | {} | {:.3} |",
            messages.label,
            ring / bytes
        );
        let mut row = json!({"table": "modes", "mode": "ring AES-128-GCM seal", "workload": messages.label, "cpb": ring / bytes});
        for ((tier, ..), &ccm) in keys.iter().zip(&ccm_cycles) {
            let _ = write!(markdown, " | {:.2} vs CCM |", ring / ccm);
            row[tier.name()] = json!({"ring_over_ccm": ring / ccm});
        }
        let _ = writeln!(markdown, " | |");
        rows.push(row);
    }
    Table { markdown, rows }
}

/// One pass of ring's AES-128-GCM over its own copy of the messages, one at a time; `None` if
/// ring refuses the key.
fn ring_gcm_pass(mut data: Vec<Vec<u8>>) -> Option<impl FnMut()> {
    let key = ring::aead::UnboundKey::new(&ring::aead::AES_128_GCM, &[0x42; 16])
        .map(ring::aead::LessSafeKey::new)
        .ok()?;
    Some(move || {
        for (i, m) in data.iter_mut().enumerate() {
            let nonce = ring::aead::Nonce::assume_unique_for_key([i as u8; 12]);
            let _ = key.seal_in_place_separate_tag(nonce, ring::aead::Aad::empty(), m);
        }
    })
}

/// RustCrypto `cbc` and OpenSSL EVP AES-128-CBC, one message at a time.
fn peer_cbc(effort: Effort, messages: &Messages) -> [f64; 2] {
    let key = [0x2b; 16];
    let cipher = aes::Aes128::new_from_slice(&key).ok();
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
                // The key schedule is expanded once (as our keys are) and cloned per message.
                let Some(cipher) = cipher.as_ref() else {
                    return;
                };
                for (m, iv) in shared.borrow_mut().iter_mut().zip(&messages.ivs) {
                    let mut encryptor = cbc::Encryptor::<aes::Aes128>::inner_iv_init(
                        cipher.clone(),
                        &Array::from(*iv),
                    );
                    encryptor
                        .encrypt_blocks(Array::cast_slice_from_core_mut(m.as_chunks_mut::<16>().0));
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
    [cycles[0], cycles[1]]
}

/// (c): AES-128-GCM-SIV `seal_batch` versus one message at a time per tier, with ring's
/// AES-128-GCM (one message at a time) as the nonce-based reference, all three interleaved in
/// one measurement so that their ratios are same-run ratios.
pub fn siv_batch_table(effort: Effort, tiers: &[Backend]) -> Table {
    let ciphers: Vec<(Backend, Aes128GcmSiv)> = tiers
        .iter()
        .filter_map(|&tier| {
            Aes128GcmSiv::with_backend(&[0x42; 16], tier)
                .ok()
                .map(|c| (tier, c))
        })
        .collect();
    let mut markdown = String::from(
        "(c) AES-128-GCM-SIV seal, one message at a time vs seal_batch, TSC c/B\n\n| workload | tier | single | batch | batch x | ring AES-128-GCM | single vs ring | batch vs ring |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut rows = Vec::new();
    let workloads = [
        ("mix", Workload::internet_mix().sizes),
        ("64 x 64 B", vec![64; 64]),
        ("64 x 576 B", vec![576; 64]),
        ("64 x 1500 B", vec![1500; 64]),
    ];
    for (label, sizes) in workloads {
        let messages = Messages::new(label, &sizes, false);
        let bytes = messages.bytes() as f64;
        let mut ring = ring_gcm_pass(messages.data.clone());
        let shared = RefCell::new(messages.data);
        let nonces: Vec<[u8; 12]> = (0..sizes.len()).map(|i| [i as u8; 12]).collect();
        for (tier, cipher) in &ciphers {
            let mut single = || {
                for (m, n) in shared.borrow_mut().iter_mut().zip(&nonces) {
                    let _ = cipher.encrypt_in_place_detached(n, &[], m);
                }
            };
            let mut batch = || {
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
            };
            let mut passes: Vec<&mut dyn FnMut()> = vec![&mut single, &mut batch];
            if let Some(ring) = ring.as_mut() {
                passes.push(ring);
            }
            let cycles = median_cycles(effort, &mut passes);
            let (single, batch) = (cycles[0], cycles[1]);
            let ring = cycles.get(2).copied().unwrap_or(f64::NAN);
            let _ = writeln!(
                markdown,
                "| {label} | {tier} | {:.3} | {:.3} | {:.2} | {:.3} | {:.2} | {:.2} |",
                single / bytes,
                batch / bytes,
                single / batch,
                ring / bytes,
                ring / single,
                ring / batch
            );
            rows.push(
                json!({"table": "gcm_siv_batch", "workload": label, "tier": tier.name(),
                "single_cpb": single / bytes, "batch_cpb": batch / bytes,
                "ring_aes128_gcm_cpb": ring / bytes}),
            );
        }
    }
    Table { markdown, rows }
}

/// (d): records laid out back to back in one buffer (the usual layout of fixed-size records),
/// 64 of 512 B, 1, 2 and 4 KiB, through every comb mode and AES-128-GCM-SIV's `seal_batch`
/// per tier, against the same records 64 bytes apart: lanes whose blocks lie a multiple of
/// 4 KiB / 2^k apart share L1 sets, which the engine staggers. Both layouts interleaved in
/// one measurement.
pub fn back_to_back_table(effort: Effort, tiers: &[Backend]) -> Table {
    let keys: Vec<(Backend, Aes, Ccm, Aes128GcmSiv)> = mode_keys(tiers)
        .into_iter()
        .filter_map(|(tier, key, ccm)| {
            let siv = Aes128GcmSiv::with_backend(&[0x2b; 16], tier).ok()?;
            Some((tier, key, ccm, siv))
        })
        .collect();
    let tier_names: Vec<Backend> = keys.iter().map(|(tier, ..)| *tier).collect();
    let mut markdown = header(
        "(d) 64 records back to back in one buffer vs 64 bytes apart, batches, AES-128, TSC c/B",
        &[("mode", "---"), ("record", "---:")],
        (&tier_names, &["back to back", "apart", "x"]),
        &[],
    );
    let mut rows = Vec::new();
    let ivs = &(0..64).map(|i| [i as u8; 16]).collect::<Vec<_>>();
    let nonces = &(0..64).map(|i| [i as u8; 12]).collect::<Vec<_>>();
    for mode in [
        "CBC",
        "CFB",
        "OFB",
        "CMAC",
        "CCM seal",
        "GCM-SIV seal_batch",
    ] {
        for record in [512usize, 1024, 2048, 4096] {
            let _ = write!(markdown, "| {mode} | {record} B |");
            let mut row = json!({"table": "back_to_back", "mode": mode, "record": record});
            for (tier, key, ccm, siv) in &keys {
                let mut combs = [Comb::for_backend(*tier), Comb::for_backend(*tier)];
                let mut buffers =
                    [0usize, 64].map(|gap| (gap, vec![0x5au8; 64 * (record + gap) + 4096]));
                let mut passes: Vec<Box<dyn FnMut() + '_>> = Vec::new();
                for ((gap, buffer), comb) in buffers.iter_mut().zip(&mut combs) {
                    let stride = record + *gap;
                    // From a page boundary: the layout, not the allocator, decides the sets.
                    let start = buffer.as_ptr().align_offset(4096);
                    passes.push(Box::new(move || {
                        let mut records: Vec<&mut [u8]> = buffer[start..]
                            .chunks_mut(stride)
                            .take(64)
                            .map(|r| &mut r[..record])
                            .collect();
                        if mode == "GCM-SIV seal_batch" {
                            let mut jobs: Vec<SivJob> = records
                                .iter_mut()
                                .zip(nonces)
                                .map(|(m, n)| SivJob {
                                    nonce: *n,
                                    aad: &[],
                                    data: m,
                                    tag: [0; 16],
                                    authentic: false,
                                })
                                .collect();
                            let _ = siv.seal_batch_with_threads(&mut jobs, 1);
                        } else {
                            pass(mode, (key, ccm), Some(&mut *comb), &mut records, ivs);
                        }
                    }));
                }
                let mut refs: Vec<&mut dyn FnMut()> = passes
                    .iter_mut()
                    .map(|p| &mut **p as &mut dyn FnMut())
                    .collect();
                let cycles = median_cycles(effort, &mut refs);
                let bytes = (64 * record) as f64;
                let (together, apart) = (cycles[0] / bytes, cycles[1] / bytes);
                let _ = write!(
                    markdown,
                    " {together:.3} | {apart:.3} | {:.2} |",
                    together / apart
                );
                row[tier.name()] = json!({"back_to_back_cpb": together, "apart_cpb": apart});
            }
            markdown.push('\n');
            rows.push(row);
        }
    }
    Table { markdown, rows }
}
