//! The status codes every function returns, their descriptions, and the guard that turns a
//! panic into one of them.

use core::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use combsiv::Error;

/// Success.
pub const COMBSIV_OK: c_int = 0;
/// A NULL pointer where one is needed, or a value out of its range.
pub const COMBSIV_EINVAL: c_int = -1;
/// An algorithm this library does not know.
pub const COMBSIV_EALGORITHM: c_int = -2;
/// A key of the wrong length for the algorithm.
pub const COMBSIV_EKEYLEN: c_int = -3;
/// A nonce of a length the algorithm does not take.
pub const COMBSIV_ENONCELEN: c_int = -4;
/// The output buffer is too small.
pub const COMBSIV_EBUFFER: c_int = -5;
/// The output partially overlaps an input (only exactly the same buffer is allowed).
pub const COMBSIV_EOVERLAP: c_int = -6;
/// A message or its associated data is longer than the algorithm allows.
pub const COMBSIV_ETOOLONG: c_int = -7;
/// The message is not authentic: wrong key, nonce, associated data, tag, or damaged.
pub const COMBSIV_EAUTH: c_int = -8;
/// The backend asked for is unknown or this CPU cannot run it.
pub const COMBSIV_EBACKEND: c_int = -9;
/// A file could not be read or written.
pub const COMBSIV_EIO: c_int = -10;
/// The input is not a file of the expected format, or of a version this library cannot read.
pub const COMBSIV_EFORMAT: c_int = -11;
/// The output file exists (and overwriting was not asked for).
pub const COMBSIV_EEXIST: c_int = -12;
/// The input file changed while it was read: the output must be discarded.
pub const COMBSIV_ECHANGED: c_int = -13;
/// An internal error; a bug in combsiv.
pub const COMBSIV_EINTERNAL: c_int = -14;

/// A description of a status code: a static, NUL-terminated string, never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn combsiv_error_string(code: c_int) -> *const c_char {
    description(code).as_ptr()
}

fn description(code: c_int) -> &'static CStr {
    match code {
        COMBSIV_OK => c"success",
        COMBSIV_EINVAL => c"invalid argument: a NULL pointer where one is needed, or a value out of range",
        COMBSIV_EALGORITHM => c"unknown algorithm",
        COMBSIV_EKEYLEN => {
            c"invalid key length: 16 bytes for AES-128, 32 bytes for AES-256 and the stream format"
        }
        COMBSIV_ENONCELEN => {
            c"invalid nonce length: AES-GCM-SIV takes exactly 12 bytes, AES-GCM at least 1 (12 recommended)"
        }
        COMBSIV_EBUFFER => c"output buffer too small",
        COMBSIV_EOVERLAP => c"the output partially overlaps an input: use the same buffer or separate ones",
        COMBSIV_ETOOLONG => c"message or associated data longer than the algorithm allows",
        COMBSIV_EAUTH => c"decryption failed: the message is not authentic",
        COMBSIV_EBACKEND => c"backend unknown or not available on this CPU",
        COMBSIV_EIO => c"input/output error",
        COMBSIV_EFORMAT => c"not a combsiv file, or a version or header this library cannot read",
        COMBSIV_EEXIST => c"the output file exists",
        COMBSIV_ECHANGED => c"the input file changed while it was read: discard the output",
        COMBSIV_EINTERNAL => c"internal error (a bug in combsiv)",
        _ => c"unknown status code",
    }
}

/// The status code of a library error.
pub(crate) fn code(error: Error) -> c_int {
    match error {
        Error::InvalidKeyLength => COMBSIV_EKEYLEN,
        Error::InvalidNonceLength => COMBSIV_ENONCELEN,
        Error::PlaintextTooLong | Error::AadTooLong => COMBSIV_ETOOLONG,
        Error::CiphertextTooShort | Error::Authentication => COMBSIV_EAUTH,
        Error::BackendUnavailable => COMBSIV_EBACKEND,
        _ => COMBSIV_EINTERNAL,
    }
}

/// Runs an exported function's body: its status, or [`COMBSIV_EINTERNAL`] if it panicked
/// (a panic must not unwind into C).
pub(crate) fn guard(body: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => COMBSIV_OK,
        Ok(Err(code)) => code,
        Err(_) => COMBSIV_EINTERNAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_description() {
        let codes = COMBSIV_EINTERNAL..=COMBSIV_OK;
        let mut seen: Vec<&CStr> = codes.clone().map(description).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), codes.count());
        assert_eq!(description(1), c"unknown status code");
    }

    #[test]
    fn a_panic_is_an_internal_error() {
        #[allow(clippy::panic, reason = "the panic under test")]
        let status = guard(|| panic!("inside"));
        assert_eq!(status, COMBSIV_EINTERNAL);
    }
}
