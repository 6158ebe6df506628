//! Block-cipher modes for one message at a time: CBC, CFB128, OFB and CTR (SP 800-38A), CMAC
//! (SP 800-38B, RFC 4493) and CCM (SP 800-38C, RFC 3610).
//!
//! These are the sequential baseline and the reference that the multi-message comb engine is
//! measured and tested against. CBC encryption, CFB encryption, OFB, CMAC and CCM's MAC are
//! chains: each block waits for the previous block's AES, so one message leaves the AES unit
//! mostly idle. CBC and CFB decryption and CTR have no chain and run eight blocks at a time.
//!
//! CBC, CFB, OFB and CTR provide confidentiality only: nothing detects a modified ciphertext.
//! Prefer an AEAD ([`combsiv_core::Aes256GcmSiv`]) unless a protocol prescribes these, and never
//! remove CBC padding before the message has been authenticated (padding oracles).

mod ccm;
mod cmac;

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use subtle::{ConditionallySelectable, ConstantTimeEq, ConstantTimeLess};
use zeroize::Zeroize;

pub use self::ccm::Ccm;
#[cfg(feature = "alloc")]
pub(crate) use self::cmac::{
    Subkeys as CmacSubkeys, cmac_blocks, split_final_block as cmac_split, subkeys as cmac_subkeys,
};
pub use self::cmac::{cmac, cmac_verify};
use combsiv_core::layout::Counter32;
use combsiv_core::verdict::public;
use combsiv_core::{Aes, Error};

/// Blocks handed to the cipher per call where the mode is parallel: enough to amortise the
/// per-call setup (CBC decryption derives its key schedule per call) and to fill the eight
/// blocks in flight of the AES-NI kernel, small enough for the stack (512 bytes).
const BATCH: usize = 32;

/// `buf` as whole blocks, or [`Error::InvalidLength`].
fn whole_blocks(buf: &mut [u8]) -> Result<&mut [[u8; 16]], Error> {
    match buf.as_chunks_mut::<16>() {
        (blocks, []) => Ok(blocks),
        _ => Err(Error::InvalidLength),
    }
}

pub(crate) fn xor_into(target: &mut [u8], mask: &[u8]) {
    for (byte, m) in target.iter_mut().zip(mask) {
        *byte ^= m;
    }
}

/// CBC encryption (SP 800-38A 6.2): C_i = AES(P_i xor C_{i-1}), C_0 = IV. `buf` must be whole
/// blocks ([`Error::InvalidLength`] otherwise; see [`pkcs7_pad`]).
pub fn cbc_encrypt(key: &Aes, iv: &[u8; 16], buf: &mut [u8]) -> Result<(), Error> {
    let mut chain = *iv;
    for block in whole_blocks(buf)? {
        // The cipher's input is built from values, not read back from `buf` after the XOR
        // wrote it: that reload put a store-forwarding round trip on the chain (CBC of 2 KiB
        // took 1.12x as long on Zen 5 once the call had three vector tiers to dispatch to).
        let mut input = *block;
        xor_into(&mut input, &chain);
        chain = key.block_cipher().encrypt_block(&input);
        *block = chain;
    }
    Ok(())
}

/// CBC decryption (SP 800-38A 6.2): P_i = AES^-1(C_i) xor C_{i-1}, in parallel batches.
pub fn cbc_decrypt(key: &Aes, iv: &[u8; 16], buf: &mut [u8]) -> Result<(), Error> {
    let mut previous = *iv;
    let mut ciphertext = [[0u8; 16]; BATCH];
    for chunk in whole_blocks(buf)?.chunks_mut(BATCH) {
        ciphertext[..chunk.len()].copy_from_slice(chunk);
        key.block_cipher().decrypt_blocks(chunk);
        for (block, chain) in chunk
            .iter_mut()
            .zip(core::iter::once(&previous).chain(&ciphertext))
        {
            xor_into(block, chain);
        }
        previous = ciphertext[chunk.len() - 1];
    }
    Ok(())
}

/// Appends PKCS#7 padding (RFC 5652 6.3): 1 to 16 bytes, each holding the pad length, so that
/// the result is whole blocks.
#[cfg(feature = "alloc")]
pub fn pkcs7_pad(data: &[u8]) -> Vec<u8> {
    let pad = 16 - data.len() % 16;
    let mut padded = Vec::with_capacity(data.len() + pad);
    padded.extend_from_slice(data);
    padded.resize(data.len() + pad, pad as u8);
    padded
}

/// Removes PKCS#7 padding, or fails with [`Error::InvalidPadding`]. The check takes the same
/// time whatever the padding bytes hold; still, only unpad authenticated data.
pub fn pkcs7_unpad(data: &[u8]) -> Result<&[u8], Error> {
    let Some(last_block) = data.len().checked_sub(16).map(|start| &data[start..]) else {
        return Err(Error::InvalidPadding);
    };
    if !data.len().is_multiple_of(16) {
        return Err(Error::InvalidPadding);
    }
    let pad = last_block[15];
    // Valid: 1 <= pad <= 16 and the last `pad` bytes all equal `pad`; every byte is inspected.
    let mut valid = !pad.ct_eq(&0) & !16u8.ct_lt(&pad);
    // A pad over 16 wraps here; `valid` is already false for it, so the value does not matter
    // (a plain `16 - pad` would panic in builds with overflow checks).
    let unpadded = 16u8.wrapping_sub(pad);
    for (i, &byte) in last_block.iter().enumerate() {
        let in_padding = !((i as u8).ct_lt(&unpadded));
        valid &= !in_padding | byte.ct_eq(&pad);
    }
    // The verdict and, when valid, the unpadded length are returned: public from here on.
    let keep = public(u8::conditional_select(&0, &pad, valid));
    if bool::from(public(valid)) {
        Ok(&data[..data.len() - usize::from(keep)])
    } else {
        Err(Error::InvalidPadding)
    }
}

/// CFB128 encryption (SP 800-38A 6.3): C_i = P_i xor AES(C_{i-1}), C_0 = IV. Any length: a
/// final partial block uses the leading bytes of its keystream block.
pub fn cfb_encrypt(key: &Aes, iv: &[u8; 16], buf: &mut [u8]) {
    let mut chain = *iv;
    for block in buf.chunks_mut(16) {
        let keystream = key.block_cipher().encrypt_block(&chain);
        xor_into(block, &keystream);
        chain[..block.len()].copy_from_slice(block);
    }
    chain.zeroize();
}

/// CFB128 decryption: P_i = C_i xor AES(C_{i-1}); the AES inputs are all ciphertext, so the
/// keystream is computed in parallel batches.
pub fn cfb_decrypt(key: &Aes, iv: &[u8; 16], buf: &mut [u8]) -> Result<(), Error> {
    let mut previous = *iv;
    let mut keystream = [[0u8; 16]; BATCH];
    for chunk in buf.chunks_mut(16 * BATCH) {
        let blocks = chunk.len().div_ceil(16);
        keystream[0] = previous;
        for (input, ciphertext) in keystream[1..blocks].iter_mut().zip(chunk.chunks_exact(16)) {
            input.copy_from_slice(ciphertext);
        }
        if let Some(last) = chunk.chunks_exact(16).nth(blocks - 1) {
            previous.copy_from_slice(last);
        }
        key.block_cipher().encrypt_blocks(&mut keystream[..blocks]);
        xor_into(chunk, keystream.as_flattened());
    }
    keystream.zeroize();
    Ok(())
}

/// OFB (SP 800-38A 6.4): O_i = AES(O_{i-1}), O_0 = IV, data xor O_1 O_2 ...; encryption and
/// decryption are the same operation. Any length.
pub fn ofb_apply(key: &Aes, iv: &[u8; 16], buf: &mut [u8]) {
    let mut output = *iv;
    for block in buf.chunks_mut(16) {
        output = key.block_cipher().encrypt_block(&output);
        xor_into(block, &output);
    }
    output.zeroize();
}

/// CTR (SP 800-38A 6.5) with the whole 128-bit block as a big-endian counter starting at
/// `counter` and wrapping modulo 2^128; encryption and decryption are the same operation.
pub fn ctr_apply(key: &Aes, counter: &[u8; 16], buf: &mut [u8]) {
    // The AEAD keystream kernel increments the low 32 bits only; run it on each stretch in
    // which those do not wrap, and carry into the upper 96 bits between stretches.
    let mut next = u128::from_be_bytes(*counter);
    let mut rest = buf;
    while !rest.is_empty() {
        let until_wrap = (1u128 << 32) - (next & 0xFFFF_FFFF);
        let stretch = (rest.len().div_ceil(16) as u128).min(until_wrap);
        let bytes = rest
            .len()
            .min(usize::try_from(stretch * 16).unwrap_or(usize::MAX));
        let (now, later) = rest.split_at_mut(bytes);
        key.block_cipher().apply_keystream(
            &next.to_be_bytes(),
            Counter32::BigEndianLast,
            now.into(),
        );
        next = next.wrapping_add(stretch);
        rest = later;
    }
}

/// CBC-MAC state update over whole blocks: X = AES(X xor M_i). Shared by CMAC and CCM.
fn cbc_mac(key: &Aes, state: &mut [u8; 16], blocks: &[[u8; 16]]) {
    for block in blocks {
        xor_into(state, block);
        *state = key.block_cipher().encrypt_block(state);
    }
}

/// CBC-MAC over `data` zero-padded to whole blocks.
fn cbc_mac_padded(key: &Aes, state: &mut [u8; 16], data: &[u8]) {
    let (blocks, tail) = data.as_chunks::<16>();
    cbc_mac(key, state, blocks);
    if !tail.is_empty() {
        let mut last = [0u8; 16];
        last[..tail.len()].copy_from_slice(tail);
        cbc_mac(key, state, &[last]);
        last.zeroize();
    }
}
