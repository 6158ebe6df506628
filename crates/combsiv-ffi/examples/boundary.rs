//! The cost of the C API's boundary, the Rust side: nanoseconds per 16-byte AES-GCM-SIV seal
//! through the Rust API (`encrypt_to_detached`) and through `combsiv_aead_seal` called from
//! Rust (its checks, no dynamic call). `benches/boundary.c` times the same call through the
//! installed shared library.
//!
//! Each row is the median of 15 runs of 200 000 seals, each under a fresh nonce.

use std::hint::black_box;
use std::time::Instant;

use combsiv::{DynAesGcmSiv, SivJob};
use combsiv_ffi::{
    COMBSIV_TAG_LEN, combsiv_aead, combsiv_aead_free, combsiv_aead_new, combsiv_aead_seal,
    combsiv_aead_seal_batch, combsiv_algorithm, combsiv_job,
};

const SEALS: u32 = 200_000;
const BATCH: usize = 1000;

fn nonce_of(i: u32) -> [u8; 12] {
    let mut nonce = [0; 12];
    nonce[..4].copy_from_slice(&i.to_le_bytes());
    nonce
}

/// As [`median_ns`] for batches of [`BATCH`] messages: `seal` seals the batch whose first
/// nonce is its argument.
fn median_ns_batch(mut seal: impl FnMut(u32)) -> f64 {
    let mut runs: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            for first in (0..SEALS).step_by(BATCH) {
                seal(first);
            }
            start.elapsed().as_nanos() as f64 / f64::from(SEALS)
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn median_ns(mut seal: impl FnMut(&[u8; 12])) -> f64 {
    let mut runs: Vec<f64> = (0..15)
        .map(|_| {
            let mut nonce = [0u8; 12];
            let start = Instant::now();
            for i in 0..SEALS {
                nonce[..4].copy_from_slice(&i.to_le_bytes());
                seal(&nonce);
            }
            start.elapsed().as_nanos() as f64 / f64::from(SEALS)
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() -> Result<(), combsiv::Error> {
    for (name, alg, key_len) in [
        (
            "AES-128-GCM-SIV",
            combsiv_algorithm::COMBSIV_AES_128_GCM_SIV,
            16,
        ),
        (
            "AES-256-GCM-SIV",
            combsiv_algorithm::COMBSIV_AES_256_GCM_SIV,
            32,
        ),
    ] {
        let key = vec![0x42; key_len];
        let cipher = DynAesGcmSiv::new(&key)?;
        let message = [7u8; 16];
        let mut out = [0u8; 16 + COMBSIV_TAG_LEN];
        // Lengths hidden from the optimizer, as a caller's are: the kernel must not be
        // specialized for 16 bytes and no associated data.
        let (len, aad): (usize, &[u8]) = black_box((16, &[]));
        let rust = median_ns(|nonce| {
            let (body, tag) = out.split_at_mut(len);
            if let Ok(t) = cipher.encrypt_to_detached(nonce, aad, &message[..len], body) {
                tag[..COMBSIV_TAG_LEN].copy_from_slice(&t);
            }
            black_box(&out);
        });

        let mut context: *mut combsiv_aead = std::ptr::null_mut();
        // SAFETY: a key of the length passed; `context` is writable.
        let status =
            unsafe { combsiv_aead_new(alg.into(), key.as_ptr(), key.len(), &raw mut context) };
        assert_eq!(status, 0);
        let mut written = 0usize;
        let api = median_ns(|nonce| {
            // SAFETY: every buffer is live and as long as passed; `context` is live.
            unsafe {
                combsiv_aead_seal(
                    context,
                    out.as_mut_ptr(),
                    &raw mut written,
                    out.len(),
                    nonce.as_ptr(),
                    12,
                    black_box(message.as_ptr()),
                    len,
                    aad.as_ptr(),
                    aad.len(),
                );
            }
            black_box(&out);
        });
        // The same messages as batches of 1000, on one thread: per message.
        let mut data = vec![[7u8; 16]; BATCH];
        let rust_batch = median_ns_batch(|first| {
            let mut jobs: Vec<SivJob<'_>> = data
                .iter_mut()
                .zip(first..)
                .map(|(data, i)| SivJob {
                    nonce: nonce_of(i),
                    aad: &[],
                    data,
                    tag: [0; 16],
                    authentic: false,
                })
                .collect();
            let _ = cipher.seal_batch_with_threads(&mut jobs, 1);
            black_box(&jobs);
        });
        let mut data = vec![[7u8; 16]; BATCH];
        let mut jobs: Vec<combsiv_job> = data
            .iter_mut()
            .map(|data| combsiv_job {
                nonce: [0; 12],
                ad: std::ptr::null(),
                ad_len: 0,
                data: data.as_mut_ptr(),
                data_len: 16,
                tag: [0; 16],
                status: 0,
            })
            .collect();
        let api_batch = median_ns_batch(|first| {
            for (job, i) in jobs.iter_mut().zip(first..) {
                job.nonce = nonce_of(i);
            }
            // SAFETY: every job's buffers are live and as long as passed; `context` is live.
            unsafe { combsiv_aead_seal_batch(context, jobs.as_mut_ptr(), jobs.len(), 1) };
            black_box(&jobs);
        });
        // SAFETY: made above, freed once.
        unsafe { combsiv_aead_free(context) };
        println!(
            "{name} 16-byte seal, Rust API ({}): {rust:.1} ns",
            cipher.backend()
        );
        println!("{name} 16-byte seal, combsiv_aead_seal called from Rust: {api:.1} ns");
        println!(
            "{name} 16-byte seal, Rust seal_batch_with_threads, 1000 to a call, one thread: {rust_batch:.1} ns"
        );
        println!(
            "{name} 16-byte seal, combsiv_aead_seal_batch called from Rust, 1000 to a call, one thread: {api_batch:.1} ns"
        );
    }
    Ok(())
}
