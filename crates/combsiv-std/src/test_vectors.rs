//! What the vector-driven unit tests share: a JSON vector file and its hex strings.

use alloc::vec::Vec;

use serde_json::Value;

/// A vector file's JSON.
pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// The bytes of a hex string.
pub fn hex(value: &Value) -> Vec<u8> {
    let text = value.as_str().expect("a hex string");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}
