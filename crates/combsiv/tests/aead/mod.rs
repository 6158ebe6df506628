//! Integration tests of the AEADs. Every test runs through every backend this CPU has
//! (`Backend::available()`, see `COMBSIV_REQUIRE_BACKENDS` in the README) and, where it
//! seals or opens, every public entry point.

mod backends;
mod differential;
mod lengths;
mod support;
mod tamper;
mod vectors;
mod wrap;
mod wycheproof;
