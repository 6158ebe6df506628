//! Test-only support: the official vectors in `tests/vectors/` (see its README) and a seeded
//! generator.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "bad vector data must fail the test that reads it"
)]

extern crate std;

use std::vec::Vec;

use serde_json::Value;

#[path = "../../combsiv/tests/common/json.rs"]
mod json;
#[path = "../../combsiv/tests/common/xorshift.rs"]
mod xorshift;
pub(crate) use xorshift::xorshift;

/// Under Miri, which runs the portable backend's safe code about a thousand times slower than
/// natively, a backend checks every this-many-th vector: the portable backend every eighth,
/// AES-NI and VAES every other one (VAES's width-2 kernels also run natively everywhere, as
/// the test-only tier), AVX-512 all, the test-only tier of two blocks per register every
/// fourth, AArch64's every fourth (Miri runs its AES rounds in software, about 40 ms a round;
/// qemu runs them all).
pub(crate) fn miri_sample(isa: crate::cpu::Isa) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let crate::cpu::Isa::Vector(crate::cpu::TierToken::Pair(_)) = isa {
        return 4;
    }
    match isa.backend() {
        crate::Backend::Portable => 8,
        crate::Backend::Aesni | crate::Backend::Vaes => 2,
        crate::Backend::Avx512 => 1,
        crate::Backend::Armv8 => 4,
    }
}

/// Bad vector data fails the test that reads it, rather than testing a default.
pub(crate) fn hex(value: &Value) -> Vec<u8> {
    json::decode_hex(value.as_str().expect("a hex string"))
}

pub(crate) fn hex16(value: &Value) -> [u8; 16] {
    hex(value).try_into().expect("16 bytes")
}

/// RFC 8452's vectors, parsed once per test run.
pub(crate) fn rfc8452() -> &'static Value {
    static PARSED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| json::parse(include_str!("../../combsiv/tests/vectors/rfc8452.json")))
}

pub(crate) fn rfc8452_vectors() -> &'static [Value] {
    rfc8452()["vectors"].as_array().expect("a vectors array")
}
