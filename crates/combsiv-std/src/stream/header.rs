//! The header of a combsiv stream and the keys derived from it (docs/FORMAT.md, sections 2
//! and 3).

use zeroize::Zeroize;

use super::chunk_cipher::{ChunkCipher, TAG_LEN};
use super::error::StreamError;
use super::kdf::KeySource;
use combsiv_core::aead::InOutBuf;
use combsiv_core::{Aes, AesKeySize, Backend, DynAesGcmSiv, Error};
use combsiv_modes::modes;

/// The first eight bytes of every combsiv stream.
pub const MAGIC: [u8; 8] = *b"combsiv\0";
/// The format version this library writes and reads.
pub const VERSION: u8 = 1;
/// Length of the header, in bytes; the 16-byte header tag follows it.
pub const HEADER_LEN: usize = 64;
/// The default chunk size: 256 KiB of plaintext per chunk.
pub const DEFAULT_CHUNK_SIZE: u32 = 256 * 1024;
/// The smallest chunk size the format allows.
pub const MIN_CHUNK_SIZE: u32 = 16;
/// The largest chunk size the format allows (64 MiB), which bounds a reader's memory.
pub const MAX_CHUNK_SIZE: u32 = 64 * 1024 * 1024;

/// The AEAD that seals the chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// AES-128-GCM-SIV (RFC 8452).
    Aes128GcmSiv,
    /// AES-256-GCM-SIV (RFC 8452), the default.
    Aes256GcmSiv,
}

impl Algorithm {
    fn code(self) -> u8 {
        match self {
            Algorithm::Aes128GcmSiv => 1,
            Algorithm::Aes256GcmSiv => 2,
        }
    }

    /// The AES key size of the algorithm.
    pub fn key_size(self) -> AesKeySize {
        match self {
            Algorithm::Aes128GcmSiv => AesKeySize::Aes128,
            Algorithm::Aes256GcmSiv => AesKeySize::Aes256,
        }
    }

    /// AES-GCM-SIV with `size`.
    pub fn gcm_siv(size: AesKeySize) -> Algorithm {
        match size {
            AesKeySize::Aes128 => Algorithm::Aes128GcmSiv,
            AesKeySize::Aes256 => Algorithm::Aes256GcmSiv,
        }
    }

    /// The RFC 8452 name, e.g. `AEAD_AES_256_GCM_SIV`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Aes128GcmSiv => "AEAD_AES_128_GCM_SIV",
            Algorithm::Aes256GcmSiv => "AEAD_AES_256_GCM_SIV",
        }
    }
}

/// A stream header: everything a reader needs besides the key. It is authenticated by the
/// header tag and bound into every chunk.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// The chunk AEAD.
    pub algorithm: Algorithm,
    /// Plaintext bytes per chunk (every chunk but the last holds exactly this many).
    pub chunk_size: u32,
    /// Where the master key came from.
    pub key_source: KeySource,
    /// Random per stream: the file key is derived from it, and Argon2id salts with it.
    pub salt: [u8; 32],
}

impl Header {
    /// Checks what [`Header::parse`] checks, for headers built field by field.
    ///
    /// A header is plain data: building one does not make a stream. Streams are encrypted
    /// through [`Encryptor`](super::Encryptor), which draws each one's salt itself.
    pub fn validate(&self) -> Result<(), StreamError> {
        if !(MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&self.chunk_size) {
            return Err(StreamError::InvalidHeader(
                "chunk size outside 16 bytes..=64 MiB",
            ));
        }
        if let KeySource::Argon2id {
            memory_kib,
            iterations,
            parallelism,
        } = self.key_source
            && (memory_kib == 0 || iterations == 0 || parallelism == 0)
        {
            return Err(StreamError::InvalidHeader("Argon2id parameters of zero"));
        }
        Ok(())
    }

    /// The 64 header bytes (docs/FORMAT.md section 2).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut bytes = [0u8; HEADER_LEN];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8] = VERSION;
        bytes[9] = self.algorithm.code();
        let (source, params) = match self.key_source {
            KeySource::KeyFile => (0, [0; 3]),
            KeySource::Argon2id {
                memory_kib,
                iterations,
                parallelism,
            } => (1, [memory_kib, iterations, parallelism]),
        };
        bytes[10] = source;
        bytes[12..16].copy_from_slice(&self.chunk_size.to_le_bytes());
        for (slot, value) in bytes[16..28].chunks_exact_mut(4).zip(params) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        bytes[28..60].copy_from_slice(&self.salt);
        bytes
    }

    /// Parses and checks 64 header bytes.
    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Result<Header, StreamError> {
        if bytes[..8] != MAGIC {
            return Err(StreamError::NotCombsiv);
        }
        if bytes[8] != VERSION {
            return Err(StreamError::UnsupportedVersion(bytes[8]));
        }
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let algorithm = match bytes[9] {
            1 => Algorithm::Aes128GcmSiv,
            2 => Algorithm::Aes256GcmSiv,
            _ => return Err(StreamError::InvalidHeader("unknown algorithm")),
        };
        let key_source = match bytes[10] {
            0 if bytes[16..28].iter().all(|&b| b == 0) => KeySource::KeyFile,
            1 => KeySource::Argon2id {
                memory_kib: word(16),
                iterations: word(20),
                parallelism: word(24),
            },
            _ => return Err(StreamError::InvalidHeader("unknown key source")),
        };
        if bytes[11] != 0 || bytes[60..].iter().any(|&b| b != 0) {
            return Err(StreamError::InvalidHeader("reserved bytes are not zero"));
        }
        let mut salt = [0u8; 32];
        salt.copy_from_slice(&bytes[28..60]);
        let header = Header {
            algorithm,
            chunk_size: word(12),
            key_source,
            salt,
        };
        header.validate()?;
        Ok(header)
    }
}

/// The 32-byte secret a stream is encrypted under: a key file's contents or a passphrase's
/// Argon2id output. Zeroized on drop.
#[derive(Clone)]
pub struct MasterKey([u8; 32]);

impl Drop for MasterKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl MasterKey {
    /// Wraps 32 secret bytes.
    pub fn new(bytes: [u8; 32]) -> MasterKey {
        MasterKey(bytes)
    }

    /// A fresh random key from the operating system.
    pub fn generate() -> Result<MasterKey, Error> {
        let mut key = MasterKey([0; 32]);
        getrandom::fill(&mut key.0).map_err(|_| Error::RandomnessUnavailable)?;
        Ok(key)
    }

    /// The secret bytes (to store in a key file).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key in a combsiv key file's text (what `combsiv keygen` writes): lines starting
    /// with `#` are comments, and exactly one other line holds the key as 64 hex digits
    /// (strictly: no sign, no prefix, no separators); blank lines are ignored. `None` for
    /// anything else.
    pub fn from_key_file_text(text: &str) -> Option<MasterKey> {
        let mut lines = text
            .lines()
            .filter(|line| !line.trim_start().starts_with('#') && !line.trim().is_empty());
        let encoded = lines.next()?.trim().as_bytes();
        if lines.next().is_some() || encoded.len() != 64 {
            return None;
        }
        let mut key = MasterKey([0; 32]);
        let mut valid = 1;
        for (byte, pair) in key.0.iter_mut().zip(encoded.chunks_exact(2)) {
            let (high, high_valid) = hex_digit(pair[0]);
            let (low, low_valid) = hex_digit(pair[1]);
            *byte = high << 4 | low;
            valid &= high_valid & low_valid;
        }
        // Only whether the whole file is valid is branched on.
        (valid == 1).then_some(key)
    }
}

/// A hex digit's value and 1, or 0 and 0 for any other byte, without branching on the
/// (secret) byte.
fn hex_digit(c: u8) -> (u8, u8) {
    let c = i16::from(c);
    // 1 if lo <= c <= hi: both differences are non-negative exactly then.
    let within = |lo: i16, hi: i16| (!((c - lo) | (hi - c)) >> 15) & 1;
    let (digit, lower, upper) = (within(0x30, 0x39), within(0x61, 0x66), within(0x41, 0x46));
    let value = digit * (c - 0x30) + lower * (c - 0x57) + upper * (c - 0x37);
    (value as u8, (digit | lower | upper) as u8)
}

impl core::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MasterKey(..)")
    }
}

/// The label of the file-key derivation (docs/FORMAT.md section 3).
const FILE_KEY_LABEL: &[u8] = b"combsiv stream v1 file key";

/// SP 800-108r1 KDF in counter mode with AES-256-CMAC as the PRF:
/// K(i) = CMAC(master, [i]_32 || label || 0x00 || salt || [bits]_32), i = 1, 2, ...
fn derive_file_key(master: &MasterKey, header: &Header, out: &mut [u8]) -> Result<(), Error> {
    let prf = Aes::new(&master.0)?;
    let bits = (out.len() as u32) * 8;
    // [i]_32 || label || 0x00 || salt || [bits]_32; only the counter changes per block.
    let mut input = [0u8; 4 + FILE_KEY_LABEL.len() + 1 + 32 + 4];
    let salt_at = 4 + FILE_KEY_LABEL.len() + 1;
    input[4..salt_at - 1].copy_from_slice(FILE_KEY_LABEL);
    input[salt_at..salt_at + 32].copy_from_slice(&header.salt);
    input[salt_at + 32..].copy_from_slice(&bits.to_be_bytes());
    for (i, block) in (1u32..).zip(out.chunks_mut(16)) {
        input[..4].copy_from_slice(&i.to_be_bytes());
        let mut mac = modes::cmac(&prf, &input);
        block.copy_from_slice(&mac[..block.len()]);
        mac.zeroize();
    }
    Ok(())
}

/// The per-stream AEAD, keyed with the file key, with the header its chunks and header tag
/// authenticate.
#[derive(Clone)]
pub(crate) struct FileCipher {
    aead: DynAesGcmSiv,
    header: [u8; HEADER_LEN],
}

/// The nonce of the header tag: never a chunk nonce, whose last four bytes are 0 or 1.
const HEADER_TAG_NONCE: [u8; 12] = [0xff; 12];

/// Chunk `index`'s nonce: the index (64-bit little-endian), then 1 for the final chunk and 0
/// otherwise (32-bit little-endian).
fn chunk_nonce(index: u64, last: bool) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[..8].copy_from_slice(&index.to_le_bytes());
    nonce[8..].copy_from_slice(&u32::from(last).to_le_bytes());
    nonce
}

impl FileCipher {
    pub(super) fn new(
        master: &MasterKey,
        header: &Header,
        backend: Backend,
    ) -> Result<FileCipher, Error> {
        let mut key = [0u8; 32];
        let key = &mut key[..header.algorithm.key_size().key_len()];
        derive_file_key(master, header, key)?;
        let cipher = DynAesGcmSiv::with_backend(key, backend).map(|aead| FileCipher {
            aead,
            header: header.to_bytes(),
        });
        key.zeroize();
        cipher
    }

    /// The header tag: the AEAD of nothing, with the header as associated data.
    pub(super) fn header_tag(&self) -> Result<[u8; TAG_LEN], Error> {
        self.aead
            .seal_inout(&HEADER_TAG_NONCE, &self.header, (&mut [][..]).into())
    }

    pub(super) fn check_header_tag(&self, tag: &[u8; TAG_LEN]) -> Result<(), Error> {
        self.aead
            .open_inout(&HEADER_TAG_NONCE, &self.header, (&mut [][..]).into(), tag)
    }
}

/// Chunk `index` is sealed under its nonce with the header as associated data.
impl ChunkCipher for FileCipher {
    fn seal_inout(
        &self,
        index: u64,
        last: bool,
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<[u8; TAG_LEN], Error> {
        self.aead
            .seal_inout(&chunk_nonce(index, last), &self.header, buf)
    }

    fn open_inout(
        &self,
        index: u64,
        last: bool,
        buf: InOutBuf<'_, '_, u8>,
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Error> {
        self.aead
            .open_inout(&chunk_nonce(index, last), &self.header, buf, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::format;
    use alloc::string::String;

    #[test]
    fn key_file_text_is_strict_hex_with_comments() {
        let hex = "00ff10Aa".repeat(8);
        let key = MasterKey::from_key_file_text(&format!("# comment\n\n{hex}\n")).unwrap();
        assert_eq!(key.as_bytes()[..4], [0x00, 0xff, 0x10, 0xaa]);
        for bad in [
            String::new(),
            "+f".repeat(32),
            format!("{hex}0"),
            hex[..62].to_owned(),
            format!("{hex}\n{hex}"),
            hex.replace('A', "g"),
            hex.replace('0', " "),
        ] {
            assert!(MasterKey::from_key_file_text(&bad).is_none(), "{bad:?}");
        }
        // Every byte value: the 22 hex digits and nothing else.
        let digits = (0..=255u8).filter(|&c| hex_digit(c).1 == 1).count();
        assert_eq!(digits, 22);
        for c in 0..=255u8 {
            let expected = char::from(c).to_digit(16).map(|d| d as u8);
            let (value, valid) = hex_digit(c);
            assert_eq!((valid == 1).then_some(value), expected, "{c}");
        }
    }
}
