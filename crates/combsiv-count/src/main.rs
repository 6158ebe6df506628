//! Seals a workload with AES-128-GCM-SIV, each message under its own nonce, and prints the
//! messages and bytes sealed and a checksum of the tags: the program whose instructions `scripts/count-instructions` counts
//! under qemu. It runs once with 0 passes and once with more; the difference divided by the
//! messages sealed is the cost of one message, setup excluded.
//!
//! ```text
//! combsiv-count <implementation> <size|mix> <passes>
//! combsiv-count combsiv 1024 8
//! combsiv-count combsiv-batch 64x64 2
//! ```
//!
//! A pass seals one message of `size` bytes, `count` messages of `size` bytes for
//! `<count>x<size>`, or the benchmark's Internet mix (1000 messages). Implementations:
//! `combsiv` (one `encrypt_in_place_detached` per message), `combsiv-batch` (one
//! `seal_batch` call per pass, on one thread), `rustcrypto` (the `aes-gcm-siv` crate),
//! `aws-lc-rs`.

use aes_gcm_siv::aead::{AeadInOut, KeyInit};
use aws_lc_rs::aead::{AES_128_GCM_SIV, Aad, LessSafeKey, Nonce, UnboundKey};

#[path = "../../combsiv-bench/src/workloads.rs"]
#[allow(
    dead_code,
    reason = "the benchmark's workloads; this program uses the mix"
)]
mod workloads;

const KEY: [u8; 16] = [0x42; 16];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [implementation, size, passes] = args.as_slice() else {
        return Err("usage: combsiv-count <implementation> <size|mix> <passes>".into());
    };
    let passes: usize = passes.parse()?;
    // A pass: the messages sealed together (a batch) or one after another.
    let (pass_sizes, passes) = match size.as_str() {
        "mix" => (workloads::Workload::internet_mix().sizes, passes),
        size => match size.split_once('x') {
            // `64x64`: 64 messages of 64 bytes per pass.
            Some((count, size)) => (vec![size.parse()?; count.parse()?], passes),
            None => (vec![size.parse()?], passes),
        },
    };
    let mut messages: Vec<Vec<u8>> = pass_sizes.iter().map(|&n| vec![0x5A; n]).collect();
    let mut checksum = 0u8;
    let mut nonce_index = 0u32;
    let mut next_nonce = || {
        nonce_index += 1;
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&nonce_index.to_le_bytes());
        nonce
    };
    match implementation.as_str() {
        "combsiv" => {
            let cipher = combsiv::Aes128GcmSiv::new(&KEY);
            for _ in 0..passes {
                for message in &mut messages {
                    let tag = cipher.encrypt_in_place_detached(&next_nonce(), b"", message)?;
                    checksum ^= tag[0];
                }
            }
        }
        "combsiv-batch" => {
            let cipher = combsiv::Aes128GcmSiv::new(&KEY);
            for _ in 0..passes {
                let mut jobs: Vec<combsiv::SivJob<'_>> = messages
                    .iter_mut()
                    .map(|data| combsiv::SivJob {
                        nonce: next_nonce(),
                        aad: b"",
                        data,
                        tag: [0; 16],
                        authentic: false,
                    })
                    .collect();
                cipher.seal_batch_with_threads(&mut jobs, 1)?;
                checksum = jobs.iter().fold(checksum, |sum, job| sum ^ job.tag[0]);
            }
        }
        "rustcrypto" => {
            let cipher = aes_gcm_siv::Aes128GcmSiv::new(&KEY.into());
            for _ in 0..passes {
                for message in &mut messages {
                    let tag = cipher
                        .encrypt_inout_detached(
                            &next_nonce().into(),
                            b"",
                            message.as_mut_slice().into(),
                        )
                        .map_err(|_| "aes-gcm-siv refused the message")?;
                    checksum ^= tag[0];
                }
            }
        }
        "aws-lc-rs" => {
            let key = LessSafeKey::new(
                UnboundKey::new(&AES_128_GCM_SIV, &KEY).map_err(|_| "aws-lc-rs refused the key")?,
            );
            for _ in 0..passes {
                for message in &mut messages {
                    let nonce = Nonce::assume_unique_for_key(next_nonce());
                    let tag = key
                        .seal_in_place_separate_tag(nonce, Aad::empty(), message)
                        .map_err(|_| "aws-lc-rs refused the message")?;
                    checksum ^= tag.as_ref()[0];
                }
            }
        }
        other => return Err(format!("unknown implementation {other}").into()),
    }
    let sealed = passes * messages.len();
    let bytes = passes * messages.iter().map(Vec::len).sum::<usize>();
    println!("{sealed} {bytes} {checksum:02x}");
    Ok(())
}
