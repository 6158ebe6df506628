//! Parsing an arbitrary stream header never panics, and a header that parses serializes back
//! to the same bytes.
#![no_main]

use combsiv::stream::{HEADER_LEN, Header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = data.first_chunk::<HEADER_LEN>() else { return };
    if let Ok(header) = Header::parse(bytes) {
        assert_eq!(&header.to_bytes(), bytes);
        assert!(header.validate().is_ok());
    }
});
