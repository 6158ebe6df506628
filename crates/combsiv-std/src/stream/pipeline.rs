//! Ordered parallel chunk processing with bounded memory, for outputs written in order (a
//! pipe, a terminal, a device, any `Write`).
//!
//! Every worker thread loops: take the next chunk (under the input lock, which for a file or
//! memory only hands out the chunk's range: the worker reads it itself), seal or open it
//! without any lock, and put it in the ring of finished chunks. Nobody waits for a turn: the
//! worker that finds the next chunk to be written at the ring's front (and nobody writing)
//! becomes the writer, writes every chunk that is ready in order, outside the ring's lock,
//! and goes back to work; chunks that finish meanwhile are picked up by that writer. A
//! worker sleeps only when it is `threads + 2` chunks ahead of the output (the output is
//! the bottleneck), and is woken when the writer makes room. So memory is at most
//! `threads + 2` chunks, and a fast output costs no context switch per chunk. The first chunk
//! that carries an error stops the stream after every chunk before it has been written.
//!
//! A worker that cannot be started (the OS refuses a thread) ends the stream with that
//! error. A panic anywhere in a worker (reading, the work, writing, or the progress report the
//! writer makes) is caught and recorded as the stream's outcome, which wakes and stops every
//! other worker: the call returns [`StreamError::Panicked`] instead of leaving the others
//! waiting forever for the chunk that never comes.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::ops::Range;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use zeroize::Zeroizing;

use super::error::StreamError;
use combsiv_parallel::run_workers;

/// One chunk on its way through the pipeline.
pub(crate) struct Slot {
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

/// Chunks between the input and the output.
struct Ring {
    /// The next chunk to be written.
    next_index: u64,
    /// Chunks claimed so far (at most `window` ahead of `next_index`).
    claimed: u64,
    /// The chunk at the front of `ready` (past `next_index` while the writer writes).
    front_index: u64,
    /// Finished chunks waiting to be written: `ready[k]` is chunk `front_index + k`.
    ready: VecDeque<Option<Slot>>,
    /// Whether a worker is writing the ready chunks.
    writing: bool,
    /// Buffers of written chunks, for the next claims.
    spare: Vec<Zeroizing<Vec<u8>>>,
    /// Workers asleep until there is room (a wakeup is a system call: only for them).
    waiting: usize,
    outcome: Option<Result<(), StreamError>>,
}

/// Writes `batch` (consecutive chunks) until its end, an error or the final chunk; returns how
/// many chunks were taken and, if the stream ended, its outcome.
fn write_in_order<W>(
    output: &mut W,
    batch: &mut [Slot],
    write: impl Fn(&mut W, &Slot) -> Result<(), StreamError>,
) -> (u64, Option<Result<(), StreamError>>) {
    let mut written = 0;
    for slot in batch {
        written += 1;
        let result = match slot.error.take() {
            Some(error) => Err(error),
            None => write(output, slot),
        };
        if result.is_err() || slot.last {
            return (written, Some(result));
        }
    }
    (written, None)
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
    // A larger window measured slower (Zen 5, 16 threads on 2 cores: 2 x threads cost 3 %):
    // more buffers than the caches hold.
    let window = threads as u64 + 2;
    let reader = Mutex::new(Reader {
        input,
        next_index: 0,
        done: false,
    });
    // Only the writer locks the output: never contended.
    let output = Mutex::new(output);
    let ring = Mutex::new(Ring {
        next_index: 0,
        claimed: 0,
        front_index: 0,
        ready: VecDeque::new(),
        writing: false,
        spare: Vec::new(),
        waiting: 0,
        outcome: None,
    });
    let room = Condvar::new();
    let complete = |ring: &mut Ring, outcome: Result<(), StreamError>| {
        if ring.outcome.is_none() {
            ring.outcome = Some(outcome);
        }
        room.notify_all();
    };
    let worker = || {
        loop {
            let buffer = {
                let mut chunks = lock(&ring);
                while chunks.outcome.is_none() && chunks.claimed >= chunks.next_index + window {
                    chunks.waiting += 1;
                    chunks = room.wait(chunks).unwrap_or_else(PoisonError::into_inner);
                    chunks.waiting -= 1;
                }
                if chunks.outcome.is_some() {
                    return;
                }
                chunks.claimed += 1;
                chunks.spare.pop()
            };
            let mut slot = {
                let mut reader = lock(&reader);
                if reader.done {
                    return;
                }
                let mut slot = Slot {
                    index: reader.next_index,
                    last: false,
                    data: buffer
                        .unwrap_or_else(|| Zeroizing::new(Vec::with_capacity(buffer_capacity))),
                    input_len: 0,
                    input: None,
                    error: None,
                };
                reader.next_index += 1;
                read(&mut reader.input, &mut slot);
                reader.done = slot.last || slot.error.is_some();
                slot
            };
            if slot.error.is_none() {
                work(&mut slot);
            }
            let mut chunks = lock(&ring);
            if chunks.outcome.is_some() {
                return;
            }
            // The slot is at most `window` chunks ahead of the output.
            let at = (slot.index - chunks.front_index) as usize;
            if chunks.ready.len() <= at {
                chunks.ready.resize_with(at + 1, || None);
            }
            chunks.ready[at] = Some(slot);
            if chunks.writing {
                continue;
            }
            // This worker becomes the writer: every ready chunk, in order, until none is.
            chunks.writing = true;
            while let Some(Some(_)) = chunks.ready.front() {
                let mut batch = Vec::new();
                while let Some(Some(_)) = chunks.ready.front() {
                    batch.extend(chunks.ready.pop_front().flatten());
                    chunks.front_index += 1;
                }
                drop(chunks);
                let (written, end) = write_in_order(&mut *lock(&output), &mut batch, &write);
                chunks = lock(&ring);
                chunks.next_index += written;
                chunks.spare.extend(batch.into_iter().map(|slot| slot.data));
                for _ in 0..written.min(chunks.waiting as u64) {
                    room.notify_one();
                }
                if let Some(result) = end {
                    complete(&mut chunks, result);
                    return;
                }
            }
            chunks.writing = false;
        }
    };
    run_workers(threads, worker, |failure| {
        complete(&mut lock(&ring), Err(failure.into()));
    });
    let outcome = ring
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .outcome;
    // Every path that ends the stream records an outcome: the workers stop only once the
    // reader is done, which takes a final chunk or an error, and that chunk (or the error)
    // is written, in order, by whichever worker writes it, which records the outcome.
    outcome.unwrap_or_else(|| unreachable!("the stream ended without an outcome"))
}
