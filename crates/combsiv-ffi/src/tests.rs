//! The exported functions called as C calls them, through raw pointers into one buffer: in
//! place, out of place, overlapping, failing. Natively these check the results; under Miri
//! (.ci/miri) they also check that the slices made from the caller's pointers never alias
//! one another.

use core::ffi::c_int;
use core::ptr::{null, null_mut};

use crate::*;

const NONCE: [u8; 12] = [3; 12];
const AD: &[u8] = b"ad";

/// A buffer a call reads or writes: its start and length, as C passes them.
#[derive(Clone, Copy)]
struct Raw(*mut u8, usize);

impl Raw {
    fn of(bytes: &mut [u8]) -> Raw {
        Raw(bytes.as_mut_ptr(), bytes.len())
    }

    /// `len` bytes from `offset` into this buffer.
    fn part(self, offset: usize, len: usize) -> Raw {
        assert!(offset + len <= self.1);
        Raw(self.0.wrapping_add(offset), len)
    }
}

const NONE: Raw = Raw(null_mut(), 0);

fn context(alg: combsiv_algorithm) -> *mut combsiv_aead {
    use combsiv_algorithm::*;
    let mut ctx = null_mut();
    let key = [7u8; 32];
    let len = match alg {
        COMBSIV_AES_128_GCM_SIV | COMBSIV_AES_128_GCM => 16,
        COMBSIV_AES_256_GCM_SIV | COMBSIV_AES_256_GCM => 32,
    };
    // SAFETY: a key of the length passed; `ctx` is writable.
    let status = unsafe { combsiv_aead_new(alg.into(), key.as_ptr(), len, &raw mut ctx) };
    assert_eq!(status, COMBSIV_OK);
    ctx
}

fn free(ctx: *mut combsiv_aead) {
    // SAFETY: made by combsiv_aead_new, freed once, by the test that made it.
    unsafe { combsiv_aead_free(ctx) };
}

/// `combsiv_aead_seal` or `_open` on raw buffers: the status and the length written.
fn call(
    seal: bool,
    ctx: *const combsiv_aead,
    out: Raw,
    nonce: &[u8],
    input: Raw,
    ad: &[u8],
) -> (c_int, usize) {
    let mut len = usize::MAX;
    let function = if seal {
        combsiv_aead_seal
    } else {
        combsiv_aead_open
    };
    // SAFETY: every Raw the tests make points into a live buffer for its length (or is NULL
    // with length 0); `nonce` and `ad` are slices.
    let status = unsafe {
        function(
            ctx,
            out.0,
            &raw mut len,
            out.1,
            nonce.as_ptr(),
            nonce.len(),
            input.0,
            input.1,
            ad.as_ptr(),
            ad.len(),
        )
    };
    (status, len)
}

/// Seals `message` out of place; returns ciphertext || tag.
fn seal(ctx: *const combsiv_aead, message: &mut [u8]) -> Vec<u8> {
    let mut out = vec![0; message.len() + COMBSIV_TAG_LEN];
    let result = call(true, ctx, Raw::of(&mut out), &NONCE, Raw::of(message), AD);
    assert_eq!(result, (COMBSIV_OK, out.len()));
    out
}

#[test]
fn in_place_equals_out_of_place_and_opens() {
    for alg in [
        combsiv_algorithm::COMBSIV_AES_128_GCM_SIV,
        combsiv_algorithm::COMBSIV_AES_256_GCM,
    ] {
        let ctx = context(alg);
        let mut message = *b"seventeen bytes!!";
        let sealed = seal(ctx, &mut message);
        let mut buffer = [0u8; 17 + COMBSIV_TAG_LEN];
        buffer[..17].copy_from_slice(&message);
        let whole = Raw::of(&mut buffer);
        assert_eq!(
            call(true, ctx, whole, &NONCE, whole.part(0, 17), AD),
            (COMBSIV_OK, whole.1)
        );
        assert_eq!(&buffer[..], &sealed[..]);
        let whole = Raw::of(&mut buffer);
        assert_eq!(call(false, ctx, whole, &NONCE, whole, AD), (COMBSIV_OK, 17));
        assert_eq!(&buffer[..17], &message);
        free(ctx);
    }
}

#[test]
fn partial_overlap_and_failures_zero_the_output() {
    let ctx = context(combsiv_algorithm::COMBSIV_AES_128_GCM_SIV);
    let sealed = seal(ctx, &mut b"0123456789".to_vec());
    let mut buffer = [0xa5u8; 64];
    buffer[8..8 + sealed.len()].copy_from_slice(&sealed);
    let whole = Raw::of(&mut buffer);
    // The output starts 8 bytes before the input: refused, the output zeroed.
    let result = call(
        false,
        ctx,
        whole.part(0, 20),
        &NONCE,
        whole.part(8, sealed.len()),
        AD,
    );
    assert_eq!(result, (COMBSIV_EOVERLAP, 0));
    assert!(buffer[..20].iter().all(|&b| b == 0));
    // A wrong tag, out of place: every byte of the output zeroed.
    let mut forged = sealed.clone();
    forged[12] ^= 1;
    let mut out = [0xa5u8; 40];
    let result = call(
        false,
        ctx,
        Raw::of(&mut out),
        &NONCE,
        Raw::of(&mut forged),
        AD,
    );
    assert_eq!(result, (COMBSIV_EAUTH, 0));
    assert!(out.iter().all(|&b| b == 0));
    // Seal refuses overlap before writing anything.
    let mut buffer = [1u8; 64];
    let whole = Raw::of(&mut buffer);
    let result = call(true, ctx, whole.part(1, 40), &NONCE, whole.part(0, 10), &[]);
    assert_eq!(result.0, COMBSIV_EOVERLAP);
    assert!(buffer.iter().all(|&b| b == 1));
    free(ctx);
}

#[test]
fn batches_match_single_messages() {
    for alg in [
        combsiv_algorithm::COMBSIV_AES_256_GCM_SIV,
        combsiv_algorithm::COMBSIV_AES_128_GCM,
    ] {
        let ctx = context(alg);
        let mut data: Vec<Vec<u8>> = (0..3).map(|i| vec![i as u8; 5 * i]).collect();
        let expected: Vec<Vec<u8>> = data.iter_mut().map(|m| seal(ctx, m)).collect();
        let mut jobs: Vec<combsiv_job> = data
            .iter_mut()
            .map(|m| combsiv_job {
                nonce: NONCE,
                ad: AD.as_ptr(),
                ad_len: AD.len(),
                data: if m.is_empty() {
                    null_mut()
                } else {
                    m.as_mut_ptr()
                },
                data_len: m.len(),
                tag: [0; COMBSIV_TAG_LEN],
                status: 1,
            })
            .collect();
        // SAFETY: each job's buffers are live, as long as passed, and disjoint.
        let status = unsafe { combsiv_aead_seal_batch(ctx, jobs.as_mut_ptr(), jobs.len(), 1) };
        assert_eq!(status, COMBSIV_OK);
        for (job, want) in jobs.iter().zip(&expected) {
            assert_eq!(&job.tag[..], &want[want.len() - COMBSIV_TAG_LEN..]);
        }
        jobs[1].tag[0] ^= 1;
        // SAFETY: as above.
        let status = unsafe { combsiv_aead_open_batch(ctx, jobs.as_mut_ptr(), jobs.len(), 1) };
        assert_eq!(status, COMBSIV_EAUTH);
        let statuses = [jobs[0].status, jobs[1].status, jobs[2].status];
        assert_eq!(statuses, [COMBSIV_OK, COMBSIV_EAUTH, COMBSIV_OK]);
        assert_eq!(data, [vec![], vec![0; 5], vec![2; 10]]);
        free(ctx);
    }
}

#[test]
fn arguments_are_checked_before_any_work() {
    let mut ctx = null_mut();
    // SAFETY: NULL key with length 0 and a writable `ctx`.
    let status = unsafe {
        combsiv_aead_new(
            combsiv_algorithm::COMBSIV_AES_128_GCM.into(),
            null(),
            0,
            &raw mut ctx,
        )
    };
    assert_eq!(status, COMBSIV_EKEYLEN);
    assert!(ctx.is_null());
    let ctx = context(combsiv_algorithm::COMBSIV_AES_128_GCM_SIV);
    let mut out = [0u8; 17];
    let out = Raw::of(&mut out);
    let tag_room = out.part(0, 16);
    assert_eq!(
        call(true, ctx, tag_room, &NONCE, NONE, &[]),
        (COMBSIV_OK, 16)
    );
    assert_eq!(
        call(true, ctx, out.part(0, 15), &NONCE, NONE, &[]).0,
        COMBSIV_EBUFFER
    );
    assert_eq!(
        call(true, ctx, tag_room, &NONCE[..11], NONE, &[]).0,
        COMBSIV_ENONCELEN
    );
    assert_eq!(
        call(true, ctx, out, &NONCE, Raw(null_mut(), 1), &[]).0,
        COMBSIV_EINVAL
    );
    assert_eq!(
        call(false, ctx, NONE, &NONCE, tag_room, &[]),
        (COMBSIV_OK, 0)
    );
    free(ctx);
}
