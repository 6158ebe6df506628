//! Where a secret-dependent value becomes public.
//!
//! Every check on secret data (a tag comparison, a padding check) runs in constant time and
//! ends in a [`subtle::Choice`]; only its final verdict may steer a branch (and only a length
//! that is returned anyway may index memory), and it passes through [`public`] first, the one
//! place in the library where secret-derived values become public.
//!
//! The constant-time harness (`crates/combsiv-ct`) checks this under valgrind's memcheck: it
//! marks keys, nonces, plaintexts and received tags as undefined, so that memcheck reports
//! any branch or memory address that depends on them, and it builds the library with
//! `--cfg combsiv_valgrind`, in which [`public`] tells memcheck that its value is defined
//! (the harness provides that hook). In every other build [`public`] returns its argument.

use subtle::ConstantTimeEq;

use crate::Error;

/// The one comparison of a computed tag with a received one (every AEAD, CMAC, CCM and the
/// comb engine's), in constant time: [`Error::Authentication`] unless they are equal. Their
/// lengths are public (a mismatch fails without looking at the bytes).
pub fn check_tag(expected: &[u8], received: &[u8]) -> Result<(), Error> {
    if bool::from(public(expected.ct_eq(received))) {
        Ok(())
    } else {
        Err(Error::Authentication)
    }
}

/// A value computed from secrets that is public from here on: a verdict (a
/// [`subtle::Choice`]) about to steer a branch, or a length about to be returned.
#[inline(always)]
pub fn public<T: Copy>(value: T) -> T {
    #[cfg(combsiv_valgrind)]
    let value = declassify(value);
    value
}

/// Passes `value` through memory that memcheck marks defined. The hook gets a mutable
/// pointer, so the compiler must reload the value after it rather than reuse a register
/// copy whose shadow state is still "undefined".
#[cfg(combsiv_valgrind)]
#[allow(
    unsafe_code,
    reason = "the harness's declassification hook is a foreign function"
)]
fn declassify<T: Copy>(mut value: T) -> T {
    unsafe extern "C" {
        /// Marks `len` bytes at `addr` as defined for memcheck (the harness's C shim).
        fn combsiv_ct_public(addr: *mut u8, len: usize);
    }
    // SAFETY: the hook only tells valgrind about the range it is given, which is `value`,
    // live for the call; it writes nothing.
    unsafe { combsiv_ct_public(core::ptr::from_mut(&mut value).cast(), size_of::<T>()) };
    value
}
