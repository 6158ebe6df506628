//! The C API on arbitrary arguments: any algorithm number, key, nonce, associated data and
//! message, opened from and into buffers laid out in one allocation at arbitrary offsets
//! (separate, the same, partly overlapping) with arbitrary room. No call panics or reads or
//! writes outside the buffers it was given (AddressSanitizer), a failed open leaves its whole
//! output zeroed, and what seal writes opens back to the message.
#![no_main]

use combsiv_ffi::{
    AlgorithmArg, COMBSIV_OK, COMBSIV_TAG_LEN, combsiv_aead_free, combsiv_aead_new,
    combsiv_aead_open, combsiv_aead_seal,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: algorithm, key length, nonce length, AD length, output offset, output room,
    // input offset (one byte each), then key, nonce, AD, and the rest as the message.
    let Some((header, rest)) = data.split_first_chunk::<7>() else {
        return;
    };
    let [alg, key_len, nonce_len, ad_len, out_at, room, in_at] = header.map(usize::from);
    let (key, rest) = rest.split_at((key_len % 40).min(rest.len()));
    let (nonce, rest) = rest.split_at((nonce_len % 20).min(rest.len()));
    let (ad, message) = rest.split_at(ad_len.min(rest.len()));

    let mut ctx = core::ptr::null_mut();
    // SAFETY: `key` is a slice; `ctx` is writable.
    let status = unsafe {
        combsiv_aead_new(
            AlgorithmArg((alg % 6) as u32),
            key.as_ptr(),
            key.len(),
            &raw mut ctx,
        )
    };
    if status != COMBSIV_OK {
        assert!(ctx.is_null());
        return;
    }

    // One allocation holds the input at `in_at` and the output at `out_at`, with `room` bytes
    // more or fewer than the call needs: they may be apart, the same, or overlap.
    let out_len = (message.len() + COMBSIV_TAG_LEN + room % 40).saturating_sub(20);
    let mut arena = vec![0u8; 64 + message.len() + out_len + 64];
    let in_at = in_at % 64;
    let out_at = (out_at % 64).min(arena.len() - out_len);
    arena[in_at..in_at + message.len()].copy_from_slice(message);
    let base = arena.as_mut_ptr();
    let mut written = usize::MAX;
    // SAFETY: both ranges lie inside `arena`; `ad` and `nonce` are slices.
    let sealed = unsafe {
        combsiv_aead_seal(
            ctx,
            base.add(out_at),
            &raw mut written,
            out_len,
            nonce.as_ptr(),
            nonce.len(),
            base.add(in_at),
            message.len(),
            ad.as_ptr(),
            ad.len(),
        )
    };
    if sealed == COMBSIV_OK {
        assert_eq!(written, message.len() + COMBSIV_TAG_LEN);
        let sealed_bytes = arena[out_at..out_at + written].to_vec();
        let mut opened = vec![0xa5u8; message.len()];
        // SAFETY: separate buffers of the lengths passed.
        let status = unsafe {
            combsiv_aead_open(
                ctx,
                opened.as_mut_ptr(),
                &raw mut written,
                opened.len(),
                nonce.as_ptr(),
                nonce.len(),
                sealed_bytes.as_ptr(),
                sealed_bytes.len(),
                ad.as_ptr(),
                ad.len(),
            )
        };
        assert_eq!(
            (status, written, opened.as_slice()),
            (COMBSIV_OK, message.len(), message)
        );
    }
    // The message itself opened in the arena's layout: almost never authentic; on any failure
    // the output, all `out_len` bytes of it, is zeroed.
    arena[in_at..in_at + message.len()].copy_from_slice(message);
    let base = arena.as_mut_ptr();
    // SAFETY: as for the seal.
    let status = unsafe {
        combsiv_aead_open(
            ctx,
            base.add(out_at),
            &raw mut written,
            out_len,
            nonce.as_ptr(),
            nonce.len(),
            base.add(in_at),
            message.len(),
            ad.as_ptr(),
            ad.len(),
        )
    };
    if status != COMBSIV_OK {
        assert_eq!(written, 0);
        assert!(arena[out_at..out_at + out_len].iter().all(|&b| b == 0));
    }
    // SAFETY: made above, freed once.
    unsafe { combsiv_aead_free(ctx) };
});
