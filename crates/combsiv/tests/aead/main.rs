//! Integration tests of the AEADs. Every test runs through every backend this CPU has
//! (`Backend::available()`, see `COMBSIV_REQUIRE_BACKENDS` in the README) and, where it
//! seals or opens, every public entry point.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test that cannot proceed should fail loudly"
)]

#[path = "../common/mod.rs"]
mod common;

mod backends;
mod differential;
mod lengths;
mod support;
mod tamper;
mod vectors;
mod wrap;
mod wycheproof;
