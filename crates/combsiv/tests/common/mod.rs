//! Test support shared by the integration test crates: a seeded generator, the boundary
//! lengths the issues ask for, and the official vector files.

#![allow(dead_code, reason = "each test crate uses a different part")]

use serde_json::Value;

/// xorshift64*: a small deterministic generator, so that failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        core::array::from_fn(|_| self.next_u64() as u8)
    }
}

/// The lengths the issue asks to weight: 0, 1, 15, 16, 17, 127, 128, 129, and every multiple
/// of 16 and of 128 plus or minus one, up to `max`.
pub fn boundary_lengths(max: usize) -> Vec<usize> {
    let mut lengths = vec![0, 1, 15, 16, 17, 127, 128, 129];
    for multiple in (16..=max + 1).step_by(16) {
        lengths.extend([multiple - 1, multiple, multiple + 1]);
    }
    lengths.retain(|&len| len <= max);
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

pub fn hex(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().expect("hex string")).expect("valid hex")
}

pub fn load_vectors(file: &str) -> Value {
    let path = format!("{}/tests/vectors/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}
