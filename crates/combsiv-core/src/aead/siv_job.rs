//! A message of an AES-GCM-SIV batch: what the batch calls, their kernels and the comb
//! engine's batches share.

/// A message of an AES-GCM-SIV batch, for [`AesGcmSiv`](crate::AesGcmSiv)'s `seal_batch` and
/// `open_batch` (with the `alloc` feature; also `combsiv::comb::SivJob`).
#[derive(Debug)]
pub struct SivJob<'a> {
    /// The nonce.
    pub nonce: [u8; 12],
    /// Associated data.
    pub aad: &'a [u8],
    /// Plaintext or ciphertext, in place.
    pub data: &'a mut [u8],
    /// The tag: output of seal, input of open.
    pub tag: [u8; 16],
    /// Output of open: whether this message was authentic.
    pub authentic: bool,
}
