//! CMAC (NIST SP 800-38B, RFC 4493): CBC-MAC with the last block masked by a subkey, so that
//! messages of every length, including empty and block-multiple ones, are safe.

use zeroize::Zeroize;

use super::cbc_mac;
use combsiv_core::verdict::check_tag;
use combsiv_core::{Aes, Error};

/// Multiplication by x in GF(2^128) with the big-endian, x^128 = x^7 + x^2 + x + 1 convention
/// of SP 800-38B 6.1 (the 0x87 constant), in constant time.
fn double(block: &[u8; 16]) -> [u8; 16] {
    let value = u128::from_be_bytes(*block);
    let carry = 0u128.wrapping_sub(value >> 127);
    ((value << 1) ^ (carry & 0x87)).to_be_bytes()
}

/// CMAC's two subkeys, K1 and K2, wiped when dropped.
pub(crate) struct Subkeys {
    k1: [u8; 16],
    k2: [u8; 16],
}

impl Drop for Subkeys {
    fn drop(&mut self) {
        self.k1.zeroize();
        self.k2.zeroize();
    }
}

/// RFC 4493 2.3: K1 = dbl(AES(0)), K2 = dbl(K1).
pub(crate) fn subkeys(key: &Aes) -> Subkeys {
    let mut l = key.block_cipher().encrypt_block(&[0; 16]);
    let k1 = double(&l);
    let k2 = double(&k1);
    l.zeroize();
    Subkeys { k1, k2 }
}

/// RFC 4493 2.4 steps 3-4: the message split into the blocks CBC-MAC runs over unchanged,
/// which it returns, and the last block, padded with 10* if incomplete and masked with K1 or
/// K2, which it writes to `last_block`.
///
/// The last block is built as an integer: a byte buffer would need sixteen volatile stores
/// to wipe, which showed in profiles of the comb engine's CMAC over many short messages.
pub(crate) fn split_final_block<'m>(
    Subkeys { k1, k2 }: &Subkeys,
    message: &'m [u8],
    last_block: &mut [u8; 16],
) -> &'m [[u8; 16]] {
    let last_len = match message.len() % 16 {
        0 if !message.is_empty() => 16,
        partial => partial,
    };
    let (body, last) = message.split_at(message.len() - last_len);
    let (mut value, mask) = match <[u8; 16]>::try_from(last) {
        Ok(whole) => (u128::from_le_bytes(whole), k1),
        Err(_) => {
            let mut value = 0x80 << (8 * last.len());
            for (i, &byte) in last.iter().enumerate() {
                value |= u128::from(byte) << (8 * i);
            }
            (value, k2)
        }
    };
    value ^= u128::from_le_bytes(*mask);
    *last_block = value.to_le_bytes();
    value.zeroize();
    body.as_chunks::<16>().0
}

/// The 16-byte AES-CMAC of `message` (RFC 4493 2.4).
pub fn cmac(key: &Aes, message: &[u8]) -> [u8; 16] {
    let mut final_block = [0u8; 16];
    let body = split_final_block(&subkeys(key), message, &mut final_block);
    let mut state = [0u8; 16];
    cbc_mac(key, &mut state, body);
    cbc_mac(key, &mut state, &[final_block]);
    final_block.zeroize();
    state
}

/// Writes the blocks CMAC's CBC-MAC runs over (`max(1, ceil(len / 16))` of them) into `out`,
/// for the comb engine's lanes, given the key's [`subkeys`].
///
/// # Panics
///
/// If `out` is not exactly that many blocks: the caller sized it with the same formula, and a
/// mismatch would MAC the wrong blocks.
#[cfg(feature = "alloc")]
pub(crate) fn cmac_blocks(subkeys: &Subkeys, message: &[u8], out: &mut [[u8; 16]]) {
    let Some((last, body_out)) = out.split_last_mut() else {
        unreachable!("CMAC runs over at least one block");
    };
    let body = split_final_block(subkeys, message, last);
    body_out.copy_from_slice(body);
}

/// Checks a CMAC tag in constant time: [`Error::Authentication`] if it does not match.
pub fn cmac_verify(key: &Aes, message: &[u8], tag: &[u8; 16]) -> Result<(), Error> {
    check_tag(&cmac(key, message), tag)
}
