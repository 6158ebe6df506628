//! Ordered parallel chunk processing with bounded memory, for outputs written in order (a
//! pipe, a terminal, a device, any `Write`).
//!
//! Every worker thread loops: take the next chunk (under the input lock, which for a file or
//! memory only hands out the chunk's range: the worker reads it itself), seal or open it
//! without any lock, then wait for its turn and write it. Writes happen in stream order, so
//! the output is ordered, while reading, computing and writing of different chunks overlap on
//! all cores. A waiting worker sleeps on the wakeup of its own turn (chunk `i` on wakeup
//! `i mod threads`: the chunks in flight are `threads` consecutive indices, so no two waiters
//! share one), and the writer of chunk `i` wakes only the worker holding `i + 1`. The write
//! itself runs outside the turn lock. Each worker holds one chunk buffer, so memory is
//! `threads` chunks. The first chunk that carries an error stops the stream after every chunk
//! before it has been written.
//!
//! A worker that cannot be started (the OS refuses a thread) ends the stream with that
//! error. A panic anywhere in a worker (reading, the work, writing, or the progress report the
//! writer makes) is caught and recorded as the stream's outcome, which wakes and stops every
//! other worker: the call returns [`StreamError::Panicked`] instead of leaving the others
//! waiting forever for the chunk that never comes.

use alloc::vec::Vec;
use core::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use zeroize::Zeroizing;

use super::StreamError;
use crate::parallel::run_workers;

/// One chunk on its way through the pipeline.
pub(super) struct Slot {
    /// The chunk's position in the stream.
    pub(super) index: u64,
    /// Whether it is the final chunk.
    pub(super) last: bool,
    /// Input bytes on arrival, output bytes after the work; plaintext is wiped when the
    /// buffer is dropped.
    pub(super) data: Zeroizing<Vec<u8>>,
    /// Input bytes consumed, for progress reports.
    pub(super) input_len: usize,
    /// Where the input is, for inputs the worker fetches itself (in memory or a file; then
    /// `data` receives only the output, or the fetched copy).
    pub(super) input: Option<Range<u64>>,
    /// Set by the reader (truncation, I/O error) or the worker (authentication failure).
    pub(super) error: Option<StreamError>,
}

struct Reader<R> {
    input: R,
    next_index: u64,
    done: bool,
}

struct Turn {
    /// The chunk whose turn it is to be written.
    next_index: u64,
    outcome: Option<Result<(), StreamError>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `read` -> `work` -> `write` over the whole stream on `threads` workers. `read` fills
/// a slot and marks it `last` at the end of the input (or sets an error); `write` gets the
/// slots in stream order.
pub(super) fn run<R: Send, W: Send>(
    threads: usize,
    buffer_capacity: usize,
    input: R,
    output: W,
    read: impl Fn(&mut R, &mut Slot) + Sync,
    work: impl Fn(&mut Slot) + Sync,
    write: impl Fn(&mut W, &Slot) -> Result<(), StreamError> + Sync,
) -> Result<(), StreamError> {
    let threads = threads.max(1);
    let reader = Mutex::new(Reader {
        input,
        next_index: 0,
        done: false,
    });
    // Only the worker whose turn it is locks the output: never contended.
    let output = Mutex::new(output);
    let turn = Mutex::new(Turn {
        next_index: 0,
        outcome: None,
    });
    let wakeups: Vec<Condvar> = (0..threads).map(|_| Condvar::new()).collect();
    let wakeup = |index: u64| &wakeups[(index % threads as u64) as usize];
    let stop = AtomicBool::new(false);
    let finish = |turn: &mut Turn, outcome: Result<(), StreamError>| {
        if turn.outcome.is_none() {
            turn.outcome = Some(outcome);
        }
        stop.store(true, Ordering::Release);
        wakeups.iter().for_each(Condvar::notify_all);
    };
    let worker = || {
        let mut buffer = Zeroizing::new(Vec::with_capacity(buffer_capacity));
        while !stop.load(Ordering::Acquire) {
            let mut slot = {
                let mut reader = lock(&reader);
                if reader.done {
                    return;
                }
                let mut slot = Slot {
                    index: reader.next_index,
                    last: false,
                    data: core::mem::take(&mut buffer),
                    input_len: 0,
                    input: None,
                    error: None,
                };
                reader.next_index = reader.next_index.wrapping_add(1);
                read(&mut reader.input, &mut slot);
                reader.done = slot.last || slot.error.is_some();
                slot
            };
            if slot.error.is_none() {
                work(&mut slot);
            }
            {
                let mut turn = lock(&turn);
                while turn.next_index != slot.index && turn.outcome.is_none() {
                    turn = wakeup(slot.index)
                        .wait(turn)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if turn.outcome.is_some() {
                    return;
                }
            }
            // This chunk's turn: no other worker writes until it passes the turn on.
            let result = match slot.error.take() {
                Some(error) => Err(error),
                None => write(&mut lock(&output), &slot),
            };
            let mut turn = lock(&turn);
            turn.next_index = turn.next_index.wrapping_add(1);
            if result.is_err() || slot.last {
                finish(&mut turn, result);
            } else {
                wakeup(turn.next_index).notify_all();
            }
            drop(turn);
            buffer = slot.data;
        }
    };
    run_workers(threads, worker, |failure| {
        finish(&mut lock(&turn), Err(failure.into()));
    });
    let outcome = turn
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .outcome;
    // Every path that ends the stream records an outcome: the workers stop only once the
    // reader is done, which takes a final chunk or an error, and whichever worker holds that
    // chunk writes it (or the error) and records the outcome.
    outcome.unwrap_or_else(|| unreachable!("the stream ended without an outcome"))
}
