//! The usage bounds (docs/BOUNDS.md): log2 of the advantage an adversary can have against a
//! key used as described, as the Rust `combsiv::bounds` functions compute it. A key is within
//! a target of 2^-32 while the result is at most -32.

use core::ffi::c_int;

use combsiv::bounds::{self, Bound, NonceProfile, RandomNonceProfile};

use crate::buffers::set;
use crate::status::{COMBSIV_EINVAL, COMBSIV_ETOOLONG, guard};

/// AES-GCM-SIV with chosen nonces: `nonces` distinct nonces, each encrypting at most
/// `messages_per_nonce` messages of at most `max_message_bytes` bytes. `COMBSIV_ETOOLONG` if
/// such a message is over AES-GCM-SIV's limit.
///
/// # Safety
///
/// `log2_advantage` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_bound_gcm_siv_nonce_based(
    nonces: f64,
    messages_per_nonce: f64,
    max_message_bytes: u64,
    log2_advantage: *mut f64,
) -> c_int {
    let bound = || {
        counts(&[nonces, messages_per_nonce])?;
        Ok(bounds::gcm_siv_nonce_based(&NonceProfile {
            nonces,
            per_nonce: messages_per_nonce,
            max_blocks: bounds::blocks(max_message_bytes),
        }))
    };
    // SAFETY: the caller's promise, passed on.
    unsafe { answer(bound, log2_advantage) }
}

/// AES-GCM-SIV with random 96-bit nonces: `messages` messages of at most `max_message_bytes`
/// bytes.
///
/// # Safety
///
/// As `combsiv_bound_gcm_siv_nonce_based`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_bound_gcm_siv_random_nonces(
    messages: f64,
    max_message_bytes: u64,
    log2_advantage: *mut f64,
) -> c_int {
    let bound = || {
        counts(&[messages])?;
        Ok(bounds::gcm_siv_random_nonces(&RandomNonceProfile {
            messages,
            max_blocks: bounds::blocks(max_message_bytes),
        }))
    };
    // SAFETY: the caller's promise, passed on.
    unsafe { answer(bound, log2_advantage) }
}

/// AES-GCM with random 96-bit nonces, for comparison: `messages` messages of at most
/// `max_message_bytes` bytes.
///
/// # Safety
///
/// As `combsiv_bound_gcm_siv_nonce_based`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_bound_gcm_random_nonces(
    messages: f64,
    max_message_bytes: u64,
    log2_advantage: *mut f64,
) -> c_int {
    let bound = || {
        counts(&[messages])?;
        Ok(bounds::gcm_random_nonces(
            messages,
            bounds::blocks(max_message_bytes),
        ))
    };
    // SAFETY: the caller's promise, passed on.
    unsafe { answer(bound, log2_advantage) }
}

/// Counts are finite and not negative.
fn counts(values: &[f64]) -> Result<(), c_int> {
    if values.iter().all(|v| v.is_finite() && *v >= 0.0) {
        Ok(())
    } else {
        Err(COMBSIV_EINVAL)
    }
}

/// # Safety
///
/// `log2_advantage` is NULL or valid for a write.
unsafe fn answer(bound: impl FnOnce() -> Result<Bound, c_int>, log2_advantage: *mut f64) -> c_int {
    guard(|| {
        if log2_advantage.is_null() {
            return Err(COMBSIV_EINVAL);
        }
        let bound = bound()?;
        if bound.exceeds_length_limit() {
            return Err(COMBSIV_ETOOLONG);
        }
        // SAFETY: non-NULL (checked) and writable by the caller's promise.
        unsafe { set(log2_advantage, bound.log2()) };
        Ok(())
    })
}
