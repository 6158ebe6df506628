//! [`ChunkCipher`]: what a chunked format seals each chunk under, the one thing the stream
//! format and C2SP differ in once their keys are derived.

use combsiv_core::Error;
use combsiv_core::aead::{InOutBuf, in_out};

use super::error::StreamError;

/// Length of the header tag and of every chunk's tag (both formats).
pub const TAG_LEN: usize = 16;

/// A chunked format's AEAD for one message: what each chunk is sealed under (the stream
/// format: its index and final flag as the nonce, the header as associated data; C2SP: the
/// base nonce XOR its index, no associated data). Everything that moves chunks (in order,
/// by position, at random) is written once over it.
pub(crate) trait ChunkCipher: Sync {
    /// Seals `buf`'s input into its output as chunk `index` (`last`: the final chunk);
    /// returns the tag.
    fn seal_inout(
        &self,
        index: u64,
        last: bool,
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<[u8; TAG_LEN], Error>;

    /// Opens `buf`'s input into its output as chunk `index` if `tag` verifies; the output is
    /// zeroed otherwise.
    fn open_inout(
        &self,
        index: u64,
        last: bool,
        buf: InOutBuf<'_, '_, u8>,
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error>;

    /// Seals chunk `index` into `sealed` (body, then tag): from `plaintext`, or in place
    /// from the body when `plaintext` is `None`.
    fn seal_chunk(
        &self,
        (index, last): (u64, bool),
        plaintext: Option<&[u8]>,
        sealed: &mut [u8],
    ) -> Result<(), Error> {
        let body_len = sealed
            .len()
            .checked_sub(TAG_LEN)
            .ok_or(Error::InvalidLength)?;
        let (body, tag) = sealed.split_at_mut(body_len);
        let buf = match plaintext {
            Some(plaintext) => in_out(plaintext, body)?,
            None => body.into(),
        };
        tag.copy_from_slice(&self.seal_inout(index, last, buf)?);
        Ok(())
    }

    /// Opens chunk `index`: from `sealed` (body, then tag) into `data`, or, when `sealed` is
    /// `None`, in place in `data` (body, then tag; the plaintext ends up in the body).
    /// Nothing unverified is left on failure, which is [`StreamError::Corrupted`].
    fn open_chunk(
        &self,
        (index, last): (u64, bool),
        sealed: Option<&[u8]>,
        data: &mut [u8],
    ) -> Result<(), StreamError> {
        let corrupted = |_| StreamError::Corrupted { chunk: index };
        let (body_len, tag) = match sealed {
            Some(sealed) => (sealed.len(), sealed),
            None => (data.len(), &*data),
        };
        let body_len = body_len
            .checked_sub(TAG_LEN)
            .ok_or(Error::Authentication)
            .map_err(corrupted)?;
        let tag: [u8; TAG_LEN] = tag[body_len..]
            .try_into()
            .map_err(|_| StreamError::Corrupted { chunk: index })?;
        let buf = match sealed {
            Some(sealed) => in_out(&sealed[..body_len], data).map_err(corrupted)?,
            None => (&mut data[..body_len]).into(),
        };
        self.open_inout(index, last, buf, &tag).map_err(corrupted)
    }
}
