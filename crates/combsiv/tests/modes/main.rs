//! Integration tests of the single-message modes. Every test runs through every backend this
//! CPU has (`Backend::available()`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test that cannot proceed should fail loudly"
)]

#[path = "../common/mod.rs"]
mod common;

mod comb;
mod differential;
mod vectors;
