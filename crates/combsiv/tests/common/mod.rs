//! Test support shared by the integration test crates: a seeded generator, the boundary
//! lengths worth weighting, and the official vector files.

#![allow(dead_code, reason = "each test crate uses a different part")]

mod json;

use combsiv::Backend;
use serde_json::Value;

/// The backends the heavier tests run on: every available one natively; under Miri the x86
/// ones, whose kernels hold every `unsafe` block. (The portable backend is RustCrypto's
/// software AES and our integer POLYVAL, safe code that Miri runs a thousand times slower;
/// it runs a sample of the official vectors there.)
pub fn backends_under_test() -> Vec<Backend> {
    let mut backends = available_backends();
    if cfg!(miri) {
        backends.retain(|&backend| backend != Backend::Portable);
    }
    assert!(!backends.is_empty(), "no backend to test");
    backends
}

/// Every backend this CPU has. A run that expects a backend names it in
/// `COMBSIV_REQUIRE_BACKENDS` (comma-separated: `portable,aesni,vaes`) and fails where it is
/// missing, instead of passing by testing fewer.
pub fn available_backends() -> Vec<Backend> {
    let backends = Backend::available();
    let required = std::env::var("COMBSIV_REQUIRE_BACKENDS").unwrap_or_default();
    for name in required
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        assert!(
            backends.iter().any(|backend| backend.name() == name),
            "COMBSIV_REQUIRE_BACKENDS requires {name}; available: {backends:?}"
        );
    }
    backends
}

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

    /// Eight bytes per step, so that long inputs stay cheap under Miri.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(len + 8);
        while bytes.len() < len {
            bytes.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        bytes.truncate(len);
        bytes
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        core::array::from_fn(|_| self.next_u64() as u8)
    }
}

/// The lengths weighted most: 0, 1, 15, 16, 17, 127, 128, 129, and every multiple
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
    json::decode_hex(value.as_str().expect("hex string"))
}

/// A file of `tests/vectors/`, compiled in (so that Miri needs no file system access) and
/// parsed once per test binary.
pub fn load_vectors(file: &str) -> &'static Value {
    static PARSED: std::sync::Mutex<Vec<(&'static str, &'static Value)>> =
        std::sync::Mutex::new(Vec::new());
    let mut parsed = PARSED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&(_, value)) = parsed.iter().find(|(name, _)| *name == file) {
        return value;
    }
    let (name, text) = match file {
        "rfc8452.json" => ("rfc8452.json", include_str!("../vectors/rfc8452.json")),
        "gcm.json" => ("gcm.json", include_str!("../vectors/gcm.json")),
        "sp800-38a.json" => ("sp800-38a.json", include_str!("../vectors/sp800-38a.json")),
        "rfc4493-cmac.json" => (
            "rfc4493-cmac.json",
            include_str!("../vectors/rfc4493-cmac.json"),
        ),
        "ccm.json" => ("ccm.json", include_str!("../vectors/ccm.json")),
        "stream.json" => ("stream.json", include_str!("../vectors/stream.json")),
        other => panic!("no vector file {other}"),
    };
    let value: &'static Value = Box::leak(Box::new(json::parse(text)));
    parsed.push((name, value));
    value
}
