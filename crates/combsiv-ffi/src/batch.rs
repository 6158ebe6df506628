//! Batches: many messages sealed or opened in place by one call, as the Rust library's
//! `seal_batch` and `open_batch`. AES-GCM-SIV runs its batch kernels (several messages'
//! blocks interleaved in the vector registers); AES-GCM seals and opens one message after
//! another. Both spread a large batch over the helper threads.

use core::ffi::c_int;
use std::sync::{Mutex, PoisonError};
use std::vec::Vec;

use combsiv::SivJob;
use combsiv::parallel::for_each_part;

use crate::aead::{Cipher, combsiv_aead};
use crate::buffers::Region;
use crate::status::{COMBSIV_EAUTH, COMBSIV_EINVAL, COMBSIV_EOVERLAP, COMBSIV_OK, code, guard};
use crate::{COMBSIV_NONCE_LEN, COMBSIV_TAG_LEN};

/// One message of a batch, sealed or opened in place.
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types, reason = "a C type")]
pub struct combsiv_job {
    /// The nonce (12 bytes: batches take only the standard length).
    pub nonce: [u8; COMBSIV_NONCE_LEN],
    /// The associated data (NULL if `ad_len` is 0); must not overlap `data`.
    pub ad: *const u8,
    pub ad_len: usize,
    /// The plaintext, replaced by the ciphertext (seal), or the reverse (open).
    pub data: *mut u8,
    pub data_len: usize,
    /// The tag: written by seal, read by open.
    pub tag: [u8; COMBSIV_TAG_LEN],
    /// Written by open: `COMBSIV_OK`, or `COMBSIV_EAUTH` with `data` zeroed.
    pub status: c_int,
}

/// Seals every job in place (`data` becomes its ciphertext, `tag` its tag) on up to `threads`
/// threads (0: as many as pay for themselves). Every job is checked before any is sealed:
/// if one is invalid (a NULL with a length, associated data overlapping its data, a message
/// too long), nothing is written.
///
/// # Safety
///
/// `jobs` points to `count` jobs (or is NULL with `count` 0), each with valid buffers; no two
/// jobs' `data` overlap each other or another job's `ad`; `ctx` is a live context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_aead_seal_batch(
    ctx: *const combsiv_aead,
    jobs: *mut combsiv_job,
    count: usize,
    threads: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promises on `ctx` and `jobs`.
        let (context, jobs) = unsafe { checked(ctx, jobs, count)? };
        // SAFETY: each job's buffers are valid and disjoint by the caller's promise and
        // the checks in `checked`.
        let mut messages = unsafe { messages(jobs) };
        match &context.cipher {
            Cipher::GcmSiv(cipher) => cipher
                .seal_batch_with_threads(&mut messages, threads)
                .map_err(code)?,
            Cipher::Gcm(cipher) => {
                let failed = Mutex::new(None);
                for_each_part(&mut messages, weight, threads, |part| {
                    for message in part {
                        match cipher.encrypt_in_place_detached(
                            &message.nonce,
                            message.aad,
                            message.data,
                        ) {
                            Ok(tag) => message.tag = tag,
                            Err(error) => {
                                *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(error)
                            }
                        }
                    }
                });
                if let Some(error) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
                    return Err(code(error));
                }
            }
        }
        for (job, message) in jobs.iter_mut().zip(&messages) {
            job.tag = message.tag;
        }
        Ok(())
    })
}

/// Opens every job in place and sets its `status`: `COMBSIV_OK`, or `COMBSIV_EAUTH` with
/// its `data` zeroed. Returns `COMBSIV_EAUTH` if any job failed, `COMBSIV_OK` if all opened.
///
/// # Safety
///
/// As `combsiv_aead_seal_batch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn combsiv_aead_open_batch(
    ctx: *const combsiv_aead,
    jobs: *mut combsiv_job,
    count: usize,
    threads: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promises on `ctx` and `jobs`.
        let (context, jobs) = unsafe { checked(ctx, jobs, count)? };
        // SAFETY: as in combsiv_aead_seal_batch.
        let mut messages = unsafe { messages(jobs) };
        match &context.cipher {
            Cipher::GcmSiv(cipher) => {
                // Every message carries its verdict; the batch's summary adds nothing.
                let _ = cipher.open_batch_with_threads(&mut messages, threads);
            }
            Cipher::Gcm(cipher) => for_each_part(&mut messages, weight, threads, |part| {
                for message in part {
                    message.authentic = cipher
                        .decrypt_in_place_detached(
                            &message.nonce,
                            message.aad,
                            message.data,
                            &message.tag,
                        )
                        .is_ok();
                }
            }),
        }
        let mut all_authentic = true;
        for (job, message) in jobs.iter_mut().zip(&messages) {
            job.status = if message.authentic {
                COMBSIV_OK
            } else {
                COMBSIV_EAUTH
            };
            all_authentic &= message.authentic;
        }
        if all_authentic {
            Ok(())
        } else {
            Err(COMBSIV_EAUTH)
        }
    })
}

/// The context and the jobs, each job's buffers checked.
///
/// # Safety
///
/// `ctx` is NULL or live; `jobs` points to `count` writable jobs or is NULL with `count` 0.
unsafe fn checked<'a>(
    ctx: *const combsiv_aead,
    jobs: *mut combsiv_job,
    count: usize,
) -> Result<(&'a combsiv_aead, &'a mut [combsiv_job]), c_int> {
    // SAFETY: NULL or a live context by the caller's promise.
    let context = unsafe { ctx.as_ref() }.ok_or(COMBSIV_EINVAL)?;
    if count == 0 {
        return Ok((context, &mut []));
    }
    if jobs.is_null() || count > isize::MAX as usize / size_of::<combsiv_job>() {
        return Err(COMBSIV_EINVAL);
    }
    // SAFETY: `count` writable jobs at `jobs` by the caller's promise (non-NULL, checked).
    let jobs = unsafe { core::slice::from_raw_parts_mut(jobs, count) };
    for job in jobs.iter() {
        let ad = Region::new(job.ad, job.ad_len)?;
        let data = Region::new(job.data, job.data_len)?;
        if ad.overlaps(data) {
            return Err(COMBSIV_EOVERLAP);
        }
    }
    Ok((context, jobs))
}

/// The jobs as the library's batch messages, borrowing their buffers.
///
/// # Safety
///
/// Each job's buffers are valid (checked non-NULL where they have a length) and disjoint
/// from every other job's data.
unsafe fn messages<'a>(jobs: &[combsiv_job]) -> Vec<SivJob<'a>> {
    jobs.iter()
        .map(|job| SivJob {
            nonce: job.nonce,
            // SAFETY: readable for ad_len bytes and not written meanwhile (disjoint from
            // every job's data) by the caller's promise and `checked`.
            aad: unsafe {
                Region {
                    ptr: job.ad,
                    len: job.ad_len,
                }
                .as_slice()
            },
            // SAFETY: writable for data_len bytes, reached through no other slice.
            data: unsafe {
                Region {
                    ptr: job.data,
                    len: job.data_len,
                }
                .as_mut_slice()
            },
            tag: job.tag,
            authentic: false,
        })
        .collect()
}

/// A message's share of a batch when it is cut across threads: its bytes plus 64 for the
/// per-message work (as the library weighs its own batches).
fn weight(message: &SivJob<'_>) -> usize {
    message.aad.len() + message.data.len() + 64
}
