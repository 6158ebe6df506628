//! Test-only support: the official vectors in `tests/vectors/` (see its README) and a seeded
//! generator.

extern crate std;

use std::vec::Vec;

use serde_json::Value;

pub(crate) fn hex(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().unwrap_or_default()).unwrap_or_default()
}

pub(crate) fn hex16(value: &Value) -> [u8; 16] {
    hex(value).try_into().unwrap_or_default()
}

pub(crate) fn rfc8452() -> Value {
    serde_json::from_str(include_str!("../tests/vectors/rfc8452.json")).unwrap_or_default()
}

pub(crate) fn rfc8452_vectors() -> Vec<Value> {
    rfc8452()["vectors"].as_array().cloned().unwrap_or_default()
}

/// xorshift64: a small deterministic generator for unit tests, so that failures reproduce.
pub(crate) fn xorshift() -> impl FnMut() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
