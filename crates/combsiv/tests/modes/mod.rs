//! Integration tests of the single-message modes. Every test runs through every backend this
//! CPU has (`Backend::available()`, see `COMBSIV_REQUIRE_BACKENDS` in the README).

/// Wraps a mode that cannot fail as one that returns `Ok`, for tables of modes.
macro_rules! infallible {
    ($mode:path) => {
        |key: &combsiv::Aes, iv: &[u8; 16], buf: &mut [u8]| -> Result<(), combsiv::Error> {
            $mode(key, iv, buf);
            Ok(())
        }
    };
}

mod comb;
mod differential;
mod vectors;
mod wycheproof;
