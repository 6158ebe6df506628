//! Seals `count` messages of `size` bytes with AES-128-GCM-SIV, each under a fresh nonce, and
//! prints a checksum of the tags: the workload whose instructions `scripts/count-instructions`
//! counts under qemu (run once with `count` 0 and once with more; the difference divided by
//! the count is the cost of one message).
//!
//! ```text
//! cargo run --release -p combsiv --example seal_messages -- combsiv 1024 8
//! ```
//!
//! The first argument picks the implementation: `combsiv`, or `rustcrypto` (the
//! `aes-gcm-siv` crate) for comparison.

use aes_gcm_siv::aead::{AeadInOut, KeyInit};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [implementation, size, count] = args.as_slice() else {
        return Err("usage: seal_messages <combsiv|rustcrypto> <size> <count>".into());
    };
    let size: usize = size.parse()?;
    let count: u32 = count.parse()?;
    let key = [0x42u8; 16];
    let mut message = vec![0x5Au8; size];
    let mut checksum = 0u8;
    match implementation.as_str() {
        "combsiv" => {
            let cipher = combsiv::Aes128GcmSiv::new(&key);
            for i in 0..count {
                let nonce = nonce(i);
                let tag = cipher.encrypt_in_place_detached(&nonce, b"", &mut message)?;
                checksum ^= tag[0];
            }
        }
        "rustcrypto" => {
            let cipher = aes_gcm_siv::Aes128GcmSiv::new(&key.into());
            for i in 0..count {
                let nonce = nonce(i);
                let tag = cipher
                    .encrypt_inout_detached(&nonce.into(), b"", message.as_mut_slice().into())
                    .map_err(|_| "aes-gcm-siv refused the message")?;
                checksum ^= tag[0];
            }
        }
        other => return Err(format!("unknown implementation {other}").into()),
    }
    println!("{checksum:02x}");
    Ok(())
}

fn nonce(i: u32) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[..4].copy_from_slice(&i.to_le_bytes());
    nonce
}
