//! combsiv's `std` layer: the chunked stream format and its files ([`stream`]: sources,
//! sinks, the output-file policy, key files) and [`Sealer`], a key with a random-nonce
//! budget.
//!
//! Users depend on the `combsiv` crate, which re-exports these as `combsiv::stream`,
//! `combsiv::sealer` and `combsiv::Sealer`.

#![deny(missing_docs)]
#![deny(unsafe_code)]

extern crate alloc;

pub mod c2sp;
pub mod random_access;
pub mod sealer;
pub mod stream;
pub mod tink;

#[cfg(test)]
mod test_vectors;

pub use crate::sealer::Sealer;
