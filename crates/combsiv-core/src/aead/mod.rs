//! The AEADs, and the policy they share: key sizes, length checks before work, and the one
//! failure path of every decryption.

#[cfg(all(vector_tiers, feature = "alloc"))]
mod batch;
mod dynamic;
pub(crate) mod gcm;
pub mod gcm_siv;
#[cfg(vector_tiers)]
mod kernels;
mod siv_job;

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

pub use self::dynamic::{DynAesGcm, DynAesGcmSiv};
pub use self::siv_job::SivJob;
pub(crate) use crate::verdict::check_tag;
pub use aead::inout::InOutBuf;
use zeroize::Zeroize;

use crate::Error;
use crate::aes::{AesKeySize, BlockCipher, KeyBytes};
use crate::field::UniversalHash;
use crate::layout::Layout;

/// The AES key sizes the AEADs come in: [`Aes128`] and [`Aes256`]. Sealed.
pub trait KeySize: sealed::Sealed + Clone + Send + Sync + 'static {
    /// The key as a byte array: `[u8; 16]` or `[u8; 32]`.
    type Key: AsRef<[u8]> + AsMut<[u8]> + Copy + Default + Zeroize + for<'a> TryFrom<&'a [u8]>;
    /// The key length as a `typenum` number, for the RustCrypto traits.
    type KeyLength: aead::array::ArraySize;
    /// The key size as a value.
    const SIZE: AesKeySize;
    /// "AES-128" or "AES-256".
    const NAME: &'static str = Self::SIZE.name();
    /// The key length in bytes: 16 or 32.
    const KEY_LEN: usize = Self::SIZE.key_len();
    #[doc(hidden)]
    fn key_bytes(key: &Self::Key) -> KeyBytes<'_>;
    #[doc(hidden)]
    fn rustcrypto_key_bytes(key: &aead::array::Array<u8, Self::KeyLength>) -> KeyBytes<'_>;
}

/// AES with a 128-bit key.
#[derive(Clone, Copy, Debug)]
pub enum Aes128 {}

/// AES with a 256-bit key.
#[derive(Clone, Copy, Debug)]
pub enum Aes256 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Aes128 {}
    impl Sealed for super::Aes256 {}
}

impl KeySize for Aes128 {
    type Key = [u8; 16];
    type KeyLength = aead::consts::U16;
    const SIZE: AesKeySize = AesKeySize::Aes128;
    fn key_bytes(key: &[u8; 16]) -> KeyBytes<'_> {
        KeyBytes::Aes128(key)
    }
    fn rustcrypto_key_bytes(key: &aead::array::Array<u8, Self::KeyLength>) -> KeyBytes<'_> {
        KeyBytes::Aes128(&key.0)
    }
}

impl KeySize for Aes256 {
    type Key = [u8; 32];
    type KeyLength = aead::consts::U32;
    const SIZE: AesKeySize = AesKeySize::Aes256;
    fn key_bytes(key: &[u8; 32]) -> KeyBytes<'_> {
        KeyBytes::Aes256(key)
    }
    fn rustcrypto_key_bytes(key: &aead::array::Array<u8, Self::KeyLength>) -> KeyBytes<'_> {
        KeyBytes::Aes256(&key.0)
    }
}

/// Parses a key of exactly the length `K` wants.
pub(crate) fn key_from_slice<K: KeySize>(key: &[u8]) -> Result<K::Key, Error> {
    K::Key::try_from(key).map_err(|_| Error::InvalidKeyLength)
}

/// The tag length of both AEADs.
#[cfg(feature = "alloc")]
pub(crate) const TAG_LEN: usize = 16;

/// `len <= max`, for lengths that are `usize` in memory and bounded in `u64` by a spec.
pub(crate) fn within(len: usize, max: u64) -> bool {
    u64::try_from(len).is_ok_and(|len| len <= max)
}

/// The plaintext (or ciphertext) and AAD limits of a spec, checked before any work.
pub(crate) fn check_message_lengths(
    (aad_len, max_aad_len): (usize, u64),
    (text_len, max_text_len): (usize, u64),
) -> Result<(), Error> {
    if !within(text_len, max_text_len) {
        return Err(Error::PlaintextTooLong);
    }
    if !within(aad_len, max_aad_len) {
        return Err(Error::AadTooLong);
    }
    Ok(())
}

/// Which side of the keystream XOR a hash absorbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hashed {
    /// The data before the XOR (GCM open hashes the ciphertext it decrypts).
    Input,
    /// The data after the XOR (GCM-SIV open hashes the plaintext, GCM seal the ciphertext).
    Output,
}

/// The reference composition of both AEADs' main pass, for keys without fused kernels:
/// counter mode from the input side of `data` to its output side (the same bytes, or a
/// separate buffer) from `counter`, and `hash` over the `hashed` side of it (zero padded)
/// followed by the block `last` (both AEADs end with a length block): GHASH with GCM's
/// big-endian counter, or POLYVAL with GCM-SIV's little-endian one, as two passes.
pub(crate) fn apply_keystream_and_hash<L: Layout>(
    cipher: &BlockCipher,
    hash: &mut UniversalHash<'_, L>,
    (counter, hashed): (&[u8; 16], Hashed),
    mut data: InOutBuf<'_, '_, u8>,
    last: &[u8; 16],
) {
    let order = L::COUNTER;
    match hashed {
        Hashed::Input => {
            // Each piece is fetched once, into a copy that both the hash and the counter mode
            // read: bytes another thread changes meanwhile cannot be decrypted unhashed.
            const PIECE: usize = 256;
            let mut piece = [0u8; PIECE];
            let mut counter = *counter;
            for start in (0..data.len()).step_by(PIECE) {
                let end = data.len().min(start + PIECE);
                let piece = &mut piece[..end - start];
                piece.copy_from_slice(&data.get_in()[start..end]);
                hash.update_padded(piece);
                #[cfg(all(test, feature = "std"))]
                probe::after_fetch(data.get_out(), start);
                let Ok(piece) = InOutBuf::new(&*piece, &mut data.get_out()[start..end]) else {
                    unreachable!("a piece and its output range are equally long");
                };
                cipher.apply_keystream(&counter, order, piece);
                counter = order.advance(&counter, (PIECE / 16) as u32);
            }
        }
        Hashed::Output => {
            cipher.apply_keystream(counter, order, data.reborrow());
            hash.update_padded(data.get_out());
        }
    }
    hash.update_block(last);
}

/// A test's window into GCM open: the code calls [`probe::after_fetch`] once per piece of
/// ciphertext, after the piece was fetched and before it is decrypted, with the in-place
/// buffer and the piece's offset. A test that changes the buffer there plays a thread that
/// writes the ciphertext while it is being opened: with one fetch per piece, the change
/// cannot reach the decryption without reaching the hash too.
#[cfg(all(test, feature = "std"))]
pub(crate) mod probe {
    use core::cell::Cell;

    /// A hook: the in-place buffer and the offset of the piece just fetched.
    type Hook = fn(&mut [u8], usize);

    std::thread_local! {
        static AFTER_FETCH: Cell<Option<Hook>> = const { Cell::new(None) };
        static CALLS: Cell<usize> = const { Cell::new(0) };
    }

    /// Runs the installed hook, if any.
    pub(crate) fn after_fetch(buf: &mut [u8], offset: usize) {
        if let Some(hook) = AFTER_FETCH.get() {
            CALLS.set(CALLS.get() + 1);
            hook(buf, offset);
        }
    }

    /// Runs `f` with `hook` installed on this thread; returns `f`'s result and how many
    /// times the hook ran.
    pub(crate) fn with_hook<T>(hook: Hook, f: impl FnOnce() -> T) -> (T, usize) {
        AFTER_FETCH.set(Some(hook));
        CALLS.set(0);
        let result = f();
        AFTER_FETCH.set(None);
        (result, CALLS.get())
    }
}

/// The one failure path of every decryption: runs `open` on `buf` and, if it fails for any
/// reason, zeroes the output side of `buf` before returning the error, so that no
/// unauthenticated plaintext (and nothing else) is left behind.
pub fn open_or_wipe(
    mut buf: InOutBuf<'_, '_, u8>,
    open: impl FnOnce(InOutBuf<'_, '_, u8>) -> Result<(), Error>,
) -> Result<(), Error> {
    let result = open(buf.reborrow());
    if result.is_err() {
        buf.get_out().zeroize();
    }
    result
}

/// A decryption that fails before it starts (its lengths do not fit): `output` is zeroed
/// through [`open_or_wipe`] like any other failure's.
pub fn refuse_wiped(output: &mut [u8], error: Error) -> Error {
    match open_or_wipe(output.into(), |_| Err(error)) {
        Err(error) => error,
        Ok(()) => unreachable!("the opening always fails"),
    }
}

/// `input` and `output` as one [`InOutBuf`]: [`Error::InvalidLength`] unless they are equally
/// long.
pub fn in_out<'i, 'o>(
    input: &'i [u8],
    output: &'o mut [u8],
) -> Result<InOutBuf<'i, 'o, u8>, Error> {
    InOutBuf::new(input, output).map_err(|_| Error::InvalidLength)
}

/// `plaintext || tag` from an in-place sealing function.
#[cfg(feature = "alloc")]
pub(crate) fn seal_to_vec(
    plaintext: &[u8],
    seal: impl FnOnce(&mut [u8]) -> Result<[u8; TAG_LEN], Error>,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
    out.extend_from_slice(plaintext);
    let tag = seal(&mut out)?;
    out.extend_from_slice(&tag);
    Ok(out)
}

/// The plaintext from `ciphertext || tag` and an in-place opening function. On failure the
/// partial output is wiped by `open` (through [`open_or_wipe`]) before it is freed.
#[cfg(feature = "alloc")]
pub(crate) fn open_to_vec(
    ciphertext_and_tag: &[u8],
    open: impl FnOnce(&mut [u8], &[u8; TAG_LEN]) -> Result<(), Error>,
) -> Result<Vec<u8>, Error> {
    let Some((ciphertext, tag)) = ciphertext_and_tag.split_last_chunk::<TAG_LEN>() else {
        return Err(Error::CiphertextTooShort);
    };
    let mut out = ciphertext.to_vec();
    open(&mut out, tag)?;
    Ok(out)
}

/// The constructors and detached entry points every AEAD type has (the public API the crate
/// promises), in terms of the type's own `from_key_bytes(KeyBytes, Isa)`, `isa()`,
/// `seal_inout` and `open_inout`, and a `Debug` without keys.
macro_rules! impl_common_surface {
    ($aead:ident) => {
        impl<K: $crate::aead::KeySize> $aead<K> {
            /// A cipher on the fastest backend this CPU has ([`Backend::detected`]).
            ///
            /// [`Backend::detected`]: crate::Backend::detected
            pub fn new(key: &K::Key) -> Self {
                Self::from_key_bytes(K::key_bytes(key), $crate::cpu::Isa::detected())
            }

            /// Like [`new`](Self::new) with the key as a slice:
            /// [`Error::InvalidKeyLength`](crate::Error::InvalidKeyLength) unless it has
            /// exactly the key size of the type.
            pub fn new_from_slice(key: &[u8]) -> Result<Self, $crate::Error> {
                Ok(Self::new(&$crate::aead::key_from_slice::<K>(key)?))
            }

            /// A cipher on a chosen backend:
            /// [`Error::BackendUnavailable`](crate::Error::BackendUnavailable) if this CPU
            /// cannot run it.
            pub fn with_backend(
                key: &K::Key,
                backend: $crate::Backend,
            ) -> Result<Self, $crate::Error> {
                let isa = $crate::cpu::Isa::for_backend(backend)?;
                Ok(Self::from_key_bytes(K::key_bytes(key), isa))
            }

            /// A cipher on `isa`, for the library's own tests (the test-only tier has no
            /// [`Backend`]).
            #[cfg(test)]
            pub(crate) fn with_isa(key: &K::Key, isa: $crate::cpu::Isa) -> Self {
                Self::from_key_bytes(K::key_bytes(key), isa)
            }

            /// The backend this cipher runs on.
            pub fn backend(&self) -> $crate::Backend {
                self.isa().backend()
            }

            /// Encrypts `buf` in place and returns the tag.
            pub fn encrypt_in_place_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: &mut [u8],
            ) -> Result<[u8; 16], $crate::Error> {
                self.seal_inout(nonce, aad, buf.into())
            }

            /// Decrypts `buf` in place if `tag` authenticates it. On any error `buf` is
            /// zeroed.
            pub fn decrypt_in_place_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; 16],
            ) -> Result<(), $crate::Error> {
                self.open_inout(nonce, aad, buf.into(), tag)
            }

            /// Encrypts `plaintext` into `ciphertext` (which must be exactly as long) and
            /// returns the tag, reading each byte of `plaintext` once, so that a buffer another
            /// thread writes meanwhile still gives a ciphertext that opens (to what was read).
            /// [`Error::InvalidLength`](crate::Error::InvalidLength) if the lengths differ.
            pub fn encrypt_to_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                plaintext: &[u8],
                ciphertext: &mut [u8],
            ) -> Result<[u8; 16], $crate::Error> {
                self.seal_to(nonce, aad, plaintext, ciphertext)
            }

            /// Decrypts `ciphertext` into `plaintext` (which must be exactly as long) if `tag`
            /// authenticates it. On any error `plaintext` is zeroed.
            pub fn decrypt_to_detached(
                &self,
                nonce: &[u8; 12],
                aad: &[u8],
                ciphertext: &[u8],
                plaintext: &mut [u8],
                tag: &[u8; 16],
            ) -> Result<(), $crate::Error> {
                let buf = match $crate::aead::in_out(ciphertext, plaintext) {
                    Ok(buf) => buf,
                    Err(e) => return Err($crate::aead::refuse_wiped(plaintext, e)),
                };
                self.open_inout(nonce, aad, buf, tag)
            }
        }

        impl<K: $crate::aead::KeySize> core::fmt::Debug for $aead<K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($aead))
                    .field("key_size", &K::NAME)
                    .field("backend", &self.backend())
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use impl_common_surface;

/// The RustCrypto `aead` 0.6 traits, so that our types drop in for `aes-gcm-siv`/`aes-gcm`.
macro_rules! impl_rustcrypto_traits {
    ($aead:ident) => {
        impl<K: $crate::aead::KeySize> ::aead::KeySizeUser for $aead<K> {
            type KeySize = K::KeyLength;
        }

        impl<K: $crate::aead::KeySize> ::aead::KeyInit for $aead<K> {
            fn new(key: &::aead::Key<Self>) -> Self {
                $aead::from_key_bytes(K::rustcrypto_key_bytes(key), $crate::cpu::Isa::detected())
            }
        }

        impl<K: $crate::aead::KeySize> ::aead::AeadCore for $aead<K> {
            type NonceSize = ::aead::consts::U12;
            type TagSize = ::aead::consts::U16;
            const TAG_POSITION: ::aead::TagPosition = ::aead::TagPosition::Postfix;
        }

        impl<K: $crate::aead::KeySize> ::aead::AeadInOut for $aead<K> {
            fn encrypt_inout_detached(
                &self,
                nonce: &::aead::Nonce<Self>,
                associated_data: &[u8],
                buffer: ::aead::inout::InOutBuf<'_, '_, u8>,
            ) -> ::aead::Result<::aead::Tag<Self>> {
                let tag = self.seal_inout(&nonce.0, associated_data, buffer)?;
                Ok(::aead::array::Array(tag))
            }

            fn decrypt_inout_detached(
                &self,
                nonce: &::aead::Nonce<Self>,
                associated_data: &[u8],
                buffer: ::aead::inout::InOutBuf<'_, '_, u8>,
                tag: &::aead::Tag<Self>,
            ) -> ::aead::Result<()> {
                Ok(self.open_inout(&nonce.0, associated_data, buffer, &tag.0)?)
            }
        }
    };
}
pub(crate) use impl_rustcrypto_traits;
