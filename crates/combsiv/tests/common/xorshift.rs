//! xorshift64: a small deterministic generator for unit tests, so that failures reproduce.
//! Included by path into the unit tests of each library crate that needs it.

/// The generator's next value on each call.
pub(crate) fn xorshift() -> impl FnMut() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
