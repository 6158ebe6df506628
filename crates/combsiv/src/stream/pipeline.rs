//! Ordered parallel chunk processing with bounded memory.
//!
//! Every worker thread loops: take the input lock and read the next chunk, seal or open it
//! without any lock, then wait for its turn and write it. Reads happen in stream order (one
//! at a time, under the lock) and writes happen in stream order (each worker waits until
//! every earlier chunk is out), so the output is ordered, while reading, computing and
//! writing of different chunks overlap on all cores. Each worker holds one chunk buffer, so
//! memory is `threads` chunks. The first chunk that carries an error stops the stream after
//! every chunk before it has been written.
//!
//! A worker that cannot be started (the OS refuses a thread) ends the stream with that
//! error.
//!
//! A panic anywhere in a worker (reading, the work, writing, or the progress report the
//! writer makes) is caught in that worker and recorded as the stream's outcome, which wakes
//! and stops every other worker: the call returns [`StreamError::Panicked`] instead of
//! leaving the others waiting forever for the chunk that never comes.

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use zeroize::Zeroizing;

use super::StreamError;

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

struct Writer<W> {
    output: W,
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
    let reader = Mutex::new(Reader {
        input,
        next_index: 0,
        done: false,
    });
    let writer = Mutex::new(Writer {
        output,
        next_index: 0,
        outcome: None,
    });
    let turn = Condvar::new();
    let stop = AtomicBool::new(false);
    let work_through = || {
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
            let mut writer = lock(&writer);
            while writer.next_index != slot.index && writer.outcome.is_none() {
                writer = turn.wait(writer).unwrap_or_else(PoisonError::into_inner);
            }
            if writer.outcome.is_none() {
                let result = match slot.error.take() {
                    Some(error) => Err(error),
                    None => write(&mut writer.output, &slot),
                };
                writer.next_index = writer.next_index.wrapping_add(1);
                if result.is_err() || slot.last {
                    writer.outcome = Some(result);
                    stop.store(true, Ordering::Release);
                }
            }
            turn.notify_all();
            drop(writer);
            buffer = slot.data;
        }
    };
    let worker = || {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(work_through)) {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| String::from(*s))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| String::from("a panic"));
            let mut writer = lock(&writer);
            if writer.outcome.is_none() {
                writer.outcome = Some(Err(StreamError::Panicked(alloc::format!(
                    "a stream thread panicked: {what}"
                ))));
            }
            stop.store(true, Ordering::Release);
            turn.notify_all();
        }
    };
    thread::scope(|scope| {
        for _ in 1..threads.max(1) {
            if let Err(e) = thread::Builder::new().spawn_scoped(scope, worker) {
                // The workers already running stop at their next chunk; this thread does
                // not start: the stream fails with the reason.
                let mut writer = lock(&writer);
                if writer.outcome.is_none() {
                    writer.outcome = Some(Err(StreamError::Io(e)));
                }
                stop.store(true, Ordering::Release);
                turn.notify_all();
                return;
            }
        }
        worker();
    });
    let outcome = writer
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .outcome;
    // Every path that ends the stream records an outcome: the workers stop only once the
    // reader is done, which takes a final chunk or an error, and whichever worker holds that
    // chunk writes it (or the error) and records the outcome.
    outcome.unwrap_or_else(|| unreachable!("the stream ended without an outcome"))
}
