//! The integration tests, one binary for the three parts (each a separate link of the whole
//! library otherwise, with the release profile's link-time optimization): the AEADs, the
//! single-message modes and the comb, and the stream format.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test that cannot proceed should fail loudly"
)]

mod aead;
mod common;
mod modes;
mod stream;
