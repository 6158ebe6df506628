//! The one error type of the crate.

use core::fmt;

/// Everything that can go wrong in combsiv.
///
/// `Display` says what went wrong and what to do about it. [`Error::Authentication`] is
/// deliberately uninformative: a failed decryption does not say whether the key, the nonce,
/// the associated data, the ciphertext or the tag was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The key is not 16 bytes (AES-128) or 32 bytes (AES-256) as the type requires.
    InvalidKeyLength,
    /// The nonce or IV has a length the algorithm does not accept.
    InvalidNonceLength,
    /// The plaintext (or ciphertext) is longer than the algorithm allows.
    PlaintextTooLong,
    /// The associated data is longer than the algorithm allows.
    AadTooLong,
    /// The input is shorter than the authentication tag, so it cannot be a ciphertext.
    CiphertextTooShort,
    /// The ciphertext is not authentic under this key, nonce and associated data.
    Authentication,
    /// The requested backend cannot run on this CPU.
    BackendUnavailable,
    /// The data length is not one the mode accepts (CBC: a multiple of 16 bytes; CCM: within
    /// the length its nonce size allows).
    InvalidLength,
    /// The tag length is not one the mode accepts (CCM: 4, 6, ..., 16 bytes).
    InvalidTagLength,
    /// PKCS#7 padding is malformed.
    InvalidPadding,
    /// A `Sealer` (`combsiv::Sealer`) refused to encrypt: one more message would take the key
    /// past its configured advantage bound.
    KeyExhausted,
    /// The operating system's random number generator failed.
    RandomnessUnavailable,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidKeyLength => {
                "invalid key length: use a 16-byte key for AES-128 or a 32-byte key for AES-256"
            }
            Error::InvalidNonceLength => {
                "invalid nonce length: AES-GCM-SIV takes exactly 12 bytes; AES-GCM takes a \
                 non-empty IV (12 bytes recommended)"
            }
            Error::PlaintextTooLong => {
                "plaintext too long: split the data into messages of at most 2^36 bytes \
                 (AES-GCM: 2^36 - 32 bytes)"
            }
            Error::AadTooLong => {
                "associated data too long: AES-GCM-SIV allows at most 2^36 bytes, AES-GCM \
                 less than 2^61 bytes"
            }
            Error::CiphertextTooShort => {
                "ciphertext too short: it must include the 16-byte tag; check that the whole \
                 message was received"
            }
            Error::Authentication => "decryption failed: the message is not authentic",
            Error::BackendUnavailable => {
                "backend unavailable: this CPU cannot run it; use Backend::available() to choose"
            }
            Error::InvalidLength => {
                "invalid data length: CBC needs a multiple of 16 bytes (pad with pkcs7_pad); \
                 CCM limits the message length by its nonce size (use a shorter nonce)"
            }
            Error::InvalidTagLength => {
                "invalid tag length: CCM tags are 4, 6, 8, 10, 12, 14 or 16 bytes"
            }
            Error::InvalidPadding => {
                "invalid padding: the data is not PKCS#7 padded; authenticate before unpadding"
            }
            Error::KeyExhausted => {
                "key exhausted: this key has encrypted as much as its security bound allows; \
                 switch to a new key"
            }
            Error::RandomnessUnavailable => {
                "the operating system's random number generator failed; check that /dev/urandom \
                 (or getrandom(2)) is available"
            }
        })
    }
}

impl core::error::Error for Error {}

impl From<Error> for aead::Error {
    fn from(_: Error) -> Self {
        aead::Error
    }
}
