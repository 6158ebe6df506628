//! Tink's cleartext keysets, read from their binary (protocol buffers) and JSON forms: the
//! `Keyset`, `Key` and `KeyData` messages of Tink's `tink.proto`, and the `AesGcmKey` and
//! `AesGcmSivKey` messages their key data holds. Nothing else is read: another key type, an
//! output prefix other than TINK and RAW, or a key version other than 0 is a typed error
//! that names it.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use zeroize::Zeroizing;

use super::TinkError;

/// The type URLs of the two key types read.
pub(super) const AES_GCM_KEY: &str = "type.googleapis.com/google.crypto.tink.AesGcmKey";
pub(super) const AES_GCM_SIV_KEY: &str = "type.googleapis.com/google.crypto.tink.AesGcmSivKey";

/// A keyset's key, as `tink.proto` describes it.
pub(super) struct RawKey {
    pub(super) type_url: String,
    pub(super) value: Zeroizing<Vec<u8>>,
    pub(super) status: u64,
    pub(super) key_id: u32,
    pub(super) output_prefix: u64,
}

/// `Keyset { uint32 primary_key_id = 1; repeated Key key = 2; }`.
pub(super) fn parse_binary(bytes: &[u8]) -> Result<(u32, Vec<RawKey>), TinkError> {
    let mut primary = 0;
    let mut keys = Vec::new();
    for field in Fields(bytes) {
        match field? {
            (1, Value::Varint(id)) => primary = to_u32(id)?,
            (2, Value::Bytes(key)) => keys.push(parse_key(key)?),
            _ => {}
        }
    }
    Ok((primary, keys))
}

/// `Key { KeyData key_data = 1; KeyStatusType status = 2; uint32 key_id = 3;
/// OutputPrefixType output_prefix_type = 4; }`, `KeyData { string type_url = 1; bytes value
/// = 2; KeyMaterialType key_material_type = 3; }`.
fn parse_key(bytes: &[u8]) -> Result<RawKey, TinkError> {
    let mut key = RawKey {
        type_url: String::new(),
        value: Zeroizing::new(Vec::new()),
        status: 0,
        key_id: 0,
        output_prefix: 0,
    };
    for field in Fields(bytes) {
        match field? {
            (1, Value::Bytes(data)) => {
                for field in Fields(data) {
                    match field? {
                        (1, Value::Bytes(url)) => {
                            key.type_url = core::str::from_utf8(url)
                                .map_err(|_| TinkError::Malformed("a type URL is not UTF-8"))?
                                .to_string();
                        }
                        (2, Value::Bytes(value)) => key.value = Zeroizing::new(value.to_vec()),
                        _ => {}
                    }
                }
            }
            (2, Value::Varint(status)) => key.status = status,
            (3, Value::Varint(id)) => key.key_id = to_u32(id)?,
            (4, Value::Varint(prefix)) => key.output_prefix = prefix,
            _ => {}
        }
    }
    Ok(key)
}

/// The AES key in an `AesGcmKey` or `AesGcmSivKey` (`uint32 version = 1; bytes key_value =
/// 3;`, params in field 2 having no field that matters): [`TinkError::UnsupportedVersion`]
/// unless the version is 0.
pub(super) fn aes_key_value(bytes: &[u8]) -> Result<Zeroizing<Vec<u8>>, TinkError> {
    let mut key = Zeroizing::new(Vec::new());
    for field in Fields(bytes) {
        match field? {
            (1, Value::Varint(0)) => {}
            (1, Value::Varint(version)) => return Err(TinkError::UnsupportedVersion(version)),
            (3, Value::Bytes(value)) => key = Zeroizing::new(value.to_vec()),
            _ => {}
        }
    }
    Ok(key)
}

/// The JSON form (`primaryKeyId`, `key` with `keyData.typeUrl`, base64 `keyData.value`,
/// `status`, `keyId`, `outputPrefixType` by name).
pub(super) fn parse_json(json_text: &str) -> Result<(u32, Vec<RawKey>), TinkError> {
    let json: serde_json::Value =
        serde_json::from_str(json_text).map_err(|_| TinkError::Malformed("not JSON"))?;
    let id = |value: &serde_json::Value| {
        value
            .as_u64()
            .ok_or(TinkError::Malformed("a key id is not a number"))
            .and_then(to_u32)
    };
    let primary = json.get("primaryKeyId").map(id).transpose()?.unwrap_or(0);
    let mut keys = Vec::new();
    let listed = json
        .get("key")
        .and_then(serde_json::Value::as_array)
        .ok_or(TinkError::Malformed("no key list"))?;
    for key in listed {
        let data = &key["keyData"];
        keys.push(RawKey {
            type_url: text(&data["typeUrl"]).to_string(),
            value: base64_decode(text(&data["value"]))?,
            status: match text(&key["status"]) {
                "ENABLED" => 1,
                "DISABLED" => 2,
                "DESTROYED" => 3,
                _ => 0,
            },
            key_id: id(&key["keyId"])?,
            output_prefix: match text(&key["outputPrefixType"]) {
                "TINK" => 1,
                "LEGACY" => 2,
                "RAW" => 3,
                "CRUNCHY" => 4,
                _ => 0,
            },
        });
    }
    Ok((primary, keys))
}

fn to_u32(value: u64) -> Result<u32, TinkError> {
    u32::try_from(value).map_err(|_| TinkError::Malformed("a key id over 32 bits"))
}

/// A JSON string's text, or "" for anything else.
fn text(field: &serde_json::Value) -> &str {
    field.as_str().unwrap_or_default()
}

/// Standard base64 with padding (RFC 4648 Section 4), as protobuf's JSON mapping writes
/// bytes; whitespace and a missing padding are refused with everything else unexpected.
fn base64_decode(text: &str) -> Result<Zeroizing<Vec<u8>>, TinkError> {
    let bad = TinkError::Malformed("a key value is not base64");
    let digit = |c: u8| match c {
        b'A'..=b'Z' => Ok(u32::from(c - b'A')),
        b'a'..=b'z' => Ok(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Ok(u32::from(c - b'0') + 52),
        b'+' | b'-' => Ok(62),
        b'/' | b'_' => Ok(63),
        _ => Err(TinkError::Malformed("a key value is not base64")),
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(bad);
    }
    let mut out = Zeroizing::new(Vec::with_capacity(bytes.len() / 4 * 3));
    for (i, quad) in bytes.chunks_exact(4).enumerate() {
        let last = i + 1 == bytes.len() / 4;
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return Err(bad);
        }
        let mut word = 0u32;
        for &c in &quad[..4 - padding] {
            word = word << 6 | digit(c)?;
        }
        word <<= 6 * padding;
        out.extend_from_slice(&word.to_be_bytes()[1..4 - padding]);
    }
    Ok(out)
}

/// A protocol-buffers field's value, by wire type.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of a protocol-buffers message, in order: `(number, value)`, or an error for
/// a truncated field, an over-long varint or a group (wire types 3 and 4).
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn varint(&mut self) -> Result<u64, TinkError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .0
                .split_first()
                .ok_or(TinkError::Malformed("a truncated varint"))?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(TinkError::Malformed("a varint over 64 bits"))
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], TinkError> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > self.0.len() {
            return Err(TinkError::Malformed("a field longer than its message"));
        }
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(taken)
    }

    fn field(&mut self) -> Result<(u64, Value<'a>), TinkError> {
        let tag = self.varint()?;
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => self.take(8).map(|_| Value::Fixed)?,
            2 => {
                let len = self.varint()?;
                Value::Bytes(self.take(len)?)
            }
            5 => self.take(4).map(|_| Value::Fixed)?,
            _ => return Err(TinkError::Malformed("an unsupported wire type")),
        };
        Ok((tag >> 3, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), TinkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            self.0 = &[];
        }
        Some(field)
    }
}
