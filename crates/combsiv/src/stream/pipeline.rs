//! Ordered parallel chunk processing with bounded memory: while worker threads seal or open
//! one batch of chunks, the calling thread writes the previous batch and reads the next, so
//! reading, computing and writing overlap and at most three batches are held at once.

use alloc::vec::Vec;
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
    /// Set by the reader (truncation, I/O error) or the worker (authentication failure); the
    /// writer stops at the first slot that carries an error.
    pub(super) error: Option<StreamError>,
}

/// How the pipeline is sized.
pub(super) struct Shape {
    pub(super) threads: usize,
    pub(super) batch_len: usize,
    pub(super) buffer_capacity: usize,
}

/// Runs `read` -> `work` (in parallel) -> `write` over the whole stream, in order. `read`
/// fills a slot and marks it `last` at the end of the input; the first slot with an error
/// ends the stream after the slots before it are written.
pub(super) fn run(
    shape: &Shape,
    mut read: impl FnMut(&mut Slot),
    work: impl Fn(&mut Slot) + Sync,
    mut write: impl FnMut(&Slot) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    let mut pool: Vec<Zeroizing<Vec<u8>>> = Vec::new();
    let mut next_index = 0u64;
    let mut read_batch = |pool: &mut Vec<Zeroizing<Vec<u8>>>| -> Vec<Slot> {
        let mut batch = Vec::with_capacity(shape.batch_len);
        while batch.len() < shape.batch_len {
            let mut slot = Slot {
                index: next_index,
                last: false,
                data: pool
                    .pop()
                    .unwrap_or_else(|| Zeroizing::new(Vec::with_capacity(shape.buffer_capacity))),
                input_len: 0,
                error: None,
            };
            next_index = next_index.wrapping_add(1);
            read(&mut slot);
            let end = slot.last || slot.error.is_some();
            batch.push(slot);
            if end {
                break;
            }
        }
        batch
    };
    let mut previous: Vec<Slot> = Vec::new();
    let mut current = read_batch(&mut pool);
    loop {
        let finished = current
            .last()
            .is_none_or(|slot| slot.last || slot.error.is_some());
        let per_thread = current.len().div_ceil(shape.threads.max(1)).max(1);
        let (written, next) = thread::scope(|scope| {
            for part in current.chunks_mut(per_thread) {
                let work = &work;
                scope.spawn(move || {
                    for slot in part.iter_mut().filter(|slot| slot.error.is_none()) {
                        work(slot);
                    }
                });
            }
            let written = write_batch(&mut previous, &mut write);
            let next = if finished || written.is_err() {
                Vec::new()
            } else {
                read_batch(&mut pool)
            };
            (written, next)
        });
        written?;
        pool.extend(previous.drain(..).map(|slot| slot.data));
        previous = core::mem::replace(&mut current, next);
        if finished {
            return write_batch(&mut previous, &mut write);
        }
    }
}

/// Writes the slots in order, stopping at the first error.
fn write_batch(
    batch: &mut [Slot],
    write: &mut impl FnMut(&Slot) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    for slot in batch.iter_mut() {
        if let Some(error) = slot.error.take() {
            return Err(error);
        }
        write(slot)?;
    }
    Ok(())
}
