//! combsiv's block-cipher modes over [`combsiv_core::Aes`]: single-message CBC, CFB, OFB,
//! CTR, CMAC and CCM ([`modes`]), and the comb engine, which runs many such messages at once
//! on the CPU's vector tier ([`comb`], with `alloc`).
//!
//! Users depend on the `combsiv` crate, which re-exports both modules as `combsiv::modes` and
//! `combsiv::comb`.

#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

#[cfg(feature = "alloc")]
pub mod comb;
pub mod modes;
#[cfg(test)]
#[path = "../../combsiv/tests/common/xorshift.rs"]
mod xorshift;
