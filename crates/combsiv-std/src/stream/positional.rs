//! Chunks by position, for inputs and outputs that can be addressed at any offset (a regular
//! file, memory): the format fixes where every chunk lies (after the header, chunk `i` of
//! the sealed stream starts at `i x (chunk + tag)`, its plaintext at `i x chunk`), so no
//! chunk waits for another.
//!
//! Workers claim runs of chunks in increasing order (files: about 256 KiB from an atomic
//! counter; memory: about 64 KiB, each run with its own part of the output), read their
//! input into their own buffer (files, one positional read per run) or straight from memory,
//! seal or open each chunk, and write the run at its place (files, one positional write;
//! memory, into their part). Nothing is ordered, locked or woken per chunk. The first error stops further claims; the chunks in flight
//! finish, so the error reported is the one of the lowest failing index, as in order.

use alloc::vec::Vec;
use core::ops::Range;
#[cfg(unix)]
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use zeroize::Zeroizing;

use super::Options;
use super::chunk_cipher::ChunkCipher;
use super::chunk_cipher::TAG_LEN;
#[cfg(unix)]
use super::chunks::read_file_at;
use super::error::StreamError;
use combsiv_parallel::run_workers;

/// Where every chunk of a stream lies, from its plaintext length and chunk size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkMap {
    chunk_size: u64,
    chunks: u64,
    plaintext_len: u64,
}

impl ChunkMap {
    /// The layout of a stream that encrypts `plaintext_len` bytes.
    pub(crate) fn of_plaintext(plaintext_len: u64, chunk_size: u32) -> ChunkMap {
        let chunk_size = u64::from(chunk_size.max(1));
        ChunkMap {
            chunk_size,
            chunks: plaintext_len / chunk_size + 1,
            plaintext_len,
        }
    }

    /// The layout of a stream whose chunks (everything after the header and its tag) are
    /// `sealed_len` bytes: [`StreamError::Truncated`] if they end without a final chunk
    /// (fewer bytes after the last whole chunk than a tag).
    pub(crate) fn of_sealed(sealed_len: u64, chunk_size: u32) -> Result<ChunkMap, StreamError> {
        let chunk_size = u64::from(chunk_size.max(1));
        let sealed_chunk = chunk_size + TAG_LEN as u64;
        let whole = sealed_len / sealed_chunk;
        if sealed_len % sealed_chunk < TAG_LEN as u64 {
            return Err(StreamError::Truncated { chunks: whole });
        }
        let chunks = whole + 1;
        Ok(ChunkMap {
            chunk_size,
            chunks,
            plaintext_len: sealed_len - chunks * TAG_LEN as u64,
        })
    }

    /// The plaintext length.
    pub(crate) fn plaintext_len(&self) -> u64 {
        self.plaintext_len
    }

    /// The length of the chunks, tags included (the stream without its header).
    pub(crate) fn sealed_len(&self) -> u64 {
        self.plaintext_len + self.chunks * TAG_LEN as u64
    }

    /// Chunk `index`'s plaintext, as offsets in the plaintext.
    pub(crate) fn plaintext(&self, index: u64) -> Range<u64> {
        let start = index * self.chunk_size;
        start..(start + self.chunk_size).min(self.plaintext_len)
    }

    /// Chunk `index` sealed (body and tag), as offsets after the header.
    pub(crate) fn sealed(&self, index: u64) -> Range<u64> {
        let start = index * (self.chunk_size + TAG_LEN as u64);
        let plaintext = self.plaintext(index);
        start..start + (plaintext.end - plaintext.start) + TAG_LEN as u64
    }

    /// How many chunks there are (the final one included, even when empty).
    pub(crate) fn chunks(&self) -> u64 {
        self.chunks
    }

    /// The chunk that holds plaintext byte `offset` (at or past the end: the final chunk).
    pub(crate) fn chunk_at(&self, offset: u64) -> u64 {
        (offset / self.chunk_size).min(self.chunks - 1)
    }

    /// Chunk `index` and whether it is the final chunk: what its nonce is made of.
    pub(crate) fn position(&self, index: u64) -> (u64, bool) {
        (index, index + 1 == self.chunks)
    }

    /// How many chunks make a claim of about 64 KiB, so that claiming costs nothing next to
    /// the work even for the smallest chunks.
    fn chunks_per_run(&self) -> u64 {
        (64 * 1024 / self.chunk_size).max(1)
    }

    /// How many runs of [`chunks_per_run`](Self::chunks_per_run) chunks there are.
    fn runs(&self) -> u64 {
        self.chunks.div_ceil(self.chunks_per_run())
    }
}

/// The sealed bytes that hold `plaintext` in a file whose chunks start at `chunks_from`
/// and hold `chunk_size` bytes each: whole sealed chunks, ending where the last chunk the
/// range touches would end if it were whole (clip at the file's length). Empty ranges map to
/// an empty range at the first chunk.
pub(crate) fn chunk_span(chunks_from: u64, chunk_size: u64, plaintext: Range<u64>) -> Range<u64> {
    let sealed_chunk = chunk_size + TAG_LEN as u64;
    if plaintext.start >= plaintext.end {
        return chunks_from..chunks_from;
    }
    let first = plaintext.start / chunk_size;
    let last = (plaintext.end - 1) / chunk_size;
    let at = |chunk: u64| chunks_from.saturating_add(chunk.saturating_mul(sealed_chunk));
    at(first)..at(last + 1)
}

/// No more workers than there are claims.
fn threads(workers: usize, claims: u64) -> usize {
    usize::try_from(claims).map_or(workers, |claims| workers.min(claims))
}

/// Running progress: workers add what they finished; whoever finds the report free calls
/// it with the total so far (never waiting for it), and the end reports the total.
struct Progress<P> {
    done: AtomicU64,
    report: Mutex<P>,
}

impl<P: FnMut(u64)> Progress<P> {
    fn new(report: P) -> Self {
        Progress {
            done: AtomicU64::new(0),
            report: Mutex::new(report),
        }
    }

    fn add(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
        if let Ok(mut report) = self.report.try_lock() {
            // Read under the lock, so that the reports never go down.
            report(self.done.load(Ordering::Relaxed));
        }
    }

    fn report_final(self) {
        let done = self.done.into_inner();
        (self
            .report
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner))(done);
    }
}

/// Runs `work` on every claim `next` hands out, on `threads` workers, each with a buffer of
/// `buffer_capacity` bytes. A failing claim names its chunk; the lowest one is returned.
fn run<C, B: Default>(
    threads: usize,
    next: impl Fn() -> Option<C> + Sync,
    work: impl Fn(C, &mut B) -> Result<(), (u64, StreamError)> + Sync,
) -> Result<(), StreamError> {
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<(u64, StreamError)>> = Mutex::new(None);
    let fail = |index: u64, error: StreamError| {
        stop.store(true, Ordering::Release);
        let mut first = first_error.lock().unwrap_or_else(PoisonError::into_inner);
        if first.as_ref().is_none_or(|(at, _)| index < *at) {
            *first = Some((index, error));
        }
    };
    let worker = || {
        let mut buffer = B::default();
        while !stop.load(Ordering::Acquire) {
            let Some(claim) = next() else { return };
            if let Err((index, error)) = work(claim, &mut buffer) {
                fail(index, error);
            }
        }
    };
    // A panic or a refused thread outranks any chunk's error.
    run_workers(threads, worker, |failure| fail(0, failure.into()));
    match first_error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

/// Runs of `layout.chunks_per_run()` chunks, claimed in order: (the run's first chunk,
/// the run's part of `memory`, which holds `piece(i)` of every chunk `i` after each other).
/// A run past the end of `memory` (the final chunk when it is empty) gets an empty part.
fn runs(
    memory: &mut [u8],
    layout: ChunkMap,
    piece_len: u64,
) -> Mutex<impl Iterator<Item = (u64, &mut [u8])>> {
    let per_run = layout.chunks_per_run();
    let run_bytes = usize::try_from(piece_len * per_run).unwrap_or(usize::MAX);
    let parts = memory
        .chunks_mut(run_bytes.max(1))
        .chain(core::iter::repeat_with(<&mut [u8]>::default));
    Mutex::new((0..layout.chunks).step_by(per_run as usize).zip(parts))
}

/// The chunks of the run that starts at `first`, each with its piece of the run's `part`
/// (`piece` gives a chunk's range in the whole, `part` starts at the run's first piece).
fn pieces(
    layout: ChunkMap,
    (first, part): (u64, &mut [u8]),
    piece: impl Fn(u64) -> Range<u64>,
) -> impl Iterator<Item = (u64, &mut [u8])> {
    let end = (first + layout.chunks_per_run()).min(layout.chunks);
    let mut rest = part;
    (first..end).map(move |index| {
        let len = ((piece(index).end - piece(index).start) as usize).min(rest.len());
        let (this, later) = core::mem::take(&mut rest).split_at_mut(len);
        rest = later;
        (index, this)
    })
}

/// Plaintext bytes a file worker reads (or writes) per system call: runs of chunks of about
/// 256 KiB, so that the small chunks of C2SP (16 KiB) do not pay two system calls each.
#[cfg(unix)]
const FILE_RUN_BYTES: u64 = 256 * 1024;

impl ChunkMap {
    /// The chunks of file run `run`.
    #[cfg(unix)]
    fn file_run(&self, run: u64) -> Range<u64> {
        let per_run = (FILE_RUN_BYTES / self.chunk_size).max(1);
        let first = run * per_run;
        first..(first + per_run).min(self.chunks)
    }

    /// How many file runs there are.
    #[cfg(unix)]
    fn file_runs(&self) -> u64 {
        self.chunks
            .div_ceil((FILE_RUN_BYTES / self.chunk_size).max(1))
    }

    /// The offsets that chunks `chunks` span in the plaintext (`sealed`: in the chunks
    /// after the header).
    #[cfg(unix)]
    fn span(&self, chunks: &Range<u64>, sealed: bool) -> Range<u64> {
        let at = |index| {
            if sealed {
                self.sealed(index)
            } else {
                self.plaintext(index)
            }
        };
        at(chunks.start).start..at(chunks.end - 1).end
    }
}

/// `range` of `file` (counted from `from`) into `buffer`, resized to hold it, with one
/// positional read.
#[cfg(unix)]
fn read_at(
    file: &File,
    from: u64,
    range: &Range<u64>,
    buffer: &mut Vec<u8>,
) -> Result<(), StreamError> {
    let len = usize::try_from(range.end - range.start).map_err(|_| StreamError::InputChanged)?;
    buffer.resize(len, 0);
    read_file_at(file, buffer, from + range.start)
}

/// Seals the `layout.plaintext_len()` bytes of `input` from offset `from` into `output`
/// after its first `prefix.len()` bytes (the header and its tag, written here): the output
/// is sized first, then every run of chunks read with one positional read, its chunks sealed
/// into the worker's output buffer, and written at its place with one positional write.
#[cfg(unix)]
pub(super) fn seal_file(
    (cipher, prefix): (&impl ChunkCipher, &[u8]),
    (input, from): (&File, u64),
    layout: ChunkMap,
    output: &File,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<(), StreamError> {
    use std::os::unix::fs::FileExt;
    let body = prefix.len() as u64;
    output.set_len(body + layout.sealed_len())?;
    output.write_all_at(prefix, 0)?;
    each_file_run(layout, options, progress, |chunks, (plaintext, sealed)| {
        let plaintext_span = layout.span(&chunks, false);
        let sealed_span = layout.span(&chunks, true);
        let at = |chunk: Range<u64>, span: &Range<u64>| {
            (chunk.start - span.start) as usize..(chunk.end - span.start) as usize
        };
        if chunks.end - chunks.start == 1 {
            // A run of one (large) chunk is sealed in place: one chunk of memory.
            read_at(input, from, &plaintext_span, sealed).map_err(|e| (chunks.start, e))?;
            sealed.resize(sealed.len() + TAG_LEN, 0);
            cipher
                .seal_chunk(layout.position(chunks.start), None, sealed)
                .map_err(|e| (chunks.start, e.into()))?;
        } else {
            read_at(input, from, &plaintext_span, plaintext).map_err(|e| (chunks.start, e))?;
            sealed.resize((sealed_span.end - sealed_span.start) as usize, 0);
            for index in chunks.clone() {
                let input = &plaintext[at(layout.plaintext(index), &plaintext_span)];
                let into = &mut sealed[at(layout.sealed(index), &sealed_span)];
                cipher
                    .seal_chunk(layout.position(index), Some(input), into)
                    .map_err(|e| (index, e.into()))?;
            }
        }
        output
            .write_all_at(sealed, body + sealed_span.start)
            .map_err(|e| (chunks.start, e.into()))?;
        Ok(plaintext_span.end - plaintext_span.start)
    })
}

/// Opens the chunks of `input` from offset `from` (just after the header) into `output` at
/// offset 0: the output is sized first, then every run of chunks read with one positional
/// read, its chunks opened into the worker's plaintext buffer and (all verified) written at
/// their place with one positional write.
#[cfg(unix)]
pub(super) fn open_file(
    cipher: &impl ChunkCipher,
    (input, from): (&File, u64),
    layout: ChunkMap,
    output: &File,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<(), StreamError> {
    use std::os::unix::fs::FileExt;
    output.set_len(layout.plaintext_len())?;
    each_file_run(layout, options, progress, |chunks, (plaintext, sealed)| {
        let plaintext_span = layout.span(&chunks, false);
        let sealed_span = layout.span(&chunks, true);
        let at = |chunk: Range<u64>, span: &Range<u64>| {
            (chunk.start - span.start) as usize..(chunk.end - span.start) as usize
        };
        read_at(input, from, &sealed_span, sealed).map_err(|e| (chunks.start, e))?;
        let opened = if chunks.end - chunks.start == 1 {
            // A run of one (large) chunk is opened in place: one chunk of memory.
            cipher
                .open_chunk(layout.position(chunks.start), None, sealed)
                .map_err(|e| (chunks.start, e))?;
            &sealed[..sealed.len() - TAG_LEN]
        } else {
            plaintext.resize((plaintext_span.end - plaintext_span.start) as usize, 0);
            for index in chunks.clone() {
                let input = &sealed[at(layout.sealed(index), &sealed_span)];
                let into = &mut plaintext[at(layout.plaintext(index), &plaintext_span)];
                cipher
                    .open_chunk(layout.position(index), Some(input), into)
                    .map_err(|e| (index, e))?;
            }
            &plaintext[..]
        };
        output
            .write_all_at(opened, plaintext_span.start)
            .map_err(|e| (chunks.start, e.into()))?;
        Ok(sealed_span.end - sealed_span.start)
    })
}

/// Runs `work` on every file run of `layout` (its chunks), claimed from an atomic counter
/// by the options' threads, each with a plaintext and a sealed buffer of one run; `work`
/// returns the input bytes it consumed, for `progress`, or the failing chunk and its error.
#[cfg(unix)]
fn each_file_run(
    layout: ChunkMap,
    options: &Options,
    progress: impl FnMut(u64) + Send,
    work: impl Fn(Range<u64>, (&mut Vec<u8>, &mut Vec<u8>)) -> Result<u64, (u64, StreamError)> + Sync,
) -> Result<(), StreamError> {
    let progress = Progress::new(progress);
    let claims = AtomicU64::new(0);
    let runs = layout.file_runs();
    let next = || {
        let run = claims.fetch_add(1, Ordering::Relaxed);
        (run < runs).then(|| layout.file_run(run))
    };
    let workers = threads(options.threads(), runs);
    // Each worker's plaintext and sealed buffers, wiped when it ends.
    type Buffers = (Zeroizing<Vec<u8>>, Zeroizing<Vec<u8>>);
    run(
        workers,
        next,
        |chunks, (plaintext, sealed): &mut Buffers| {
            progress.add(work(chunks, (plaintext, sealed))?);
            Ok(())
        },
    )?;
    progress.report_final();
    Ok(())
}

/// Seals `input` (its `layout`) into `output`, which holds exactly the chunks: each run of
/// chunks is sealed from `input` straight into its part of `output`.
pub(crate) fn seal_memory(
    cipher: &impl ChunkCipher,
    input: &[u8],
    layout: ChunkMap,
    output: &mut [u8],
    workers: usize,
) -> Result<(), StreamError> {
    let sealed_chunk = layout.chunk_size + TAG_LEN as u64;
    let pieces = (sealed_chunk, |i| layout.sealed(i));
    each_run(layout, output, pieces, workers, |index, sealed| {
        let plaintext = part(input, layout.plaintext(index));
        Ok(cipher.seal_chunk(layout.position(index), Some(plaintext), sealed)?)
    })
}

/// Opens the chunks `input` holds (its `layout`) into `output`, which holds exactly the
/// plaintext: each run of chunks is opened from `input` straight into its part of `output`.
/// On failure the caller wipes `output`.
pub(crate) fn open_memory(
    cipher: &impl ChunkCipher,
    input: &[u8],
    layout: ChunkMap,
    output: &mut [u8],
    workers: usize,
) -> Result<(), StreamError> {
    let pieces = (layout.chunk_size, |i| layout.plaintext(i));
    each_run(layout, output, pieces, workers, |index, plaintext| {
        let sealed = part(input, layout.sealed(index));
        cipher.open_chunk(layout.position(index), Some(sealed), plaintext)
    })
}

/// `range` of `memory` (empty if out of bounds, which the layout rules out).
fn part(memory: &[u8], range: Range<u64>) -> &[u8] {
    memory
        .get(range.start as usize..range.end as usize)
        .unwrap_or_default()
}

/// Runs `chunk` on every chunk of `layout` with its piece of `output` (`piece(i)` is chunk
/// `i`'s range there, `piece_len` a whole chunk's length), in runs claimed by `workers`
/// threads.
fn each_run<P: Fn(u64) -> Range<u64> + Sync>(
    layout: ChunkMap,
    output: &mut [u8],
    (piece_len, piece): (u64, P),
    workers: usize,
    chunk: impl Fn(u64, &mut [u8]) -> Result<(), StreamError> + Sync,
) -> Result<(), StreamError> {
    let claims = runs(output, layout, piece_len);
    let next = || claims.lock().unwrap_or_else(PoisonError::into_inner).next();
    run(threads(workers, layout.runs()), next, |run, _: &mut ()| {
        for (index, piece) in pieces(layout, run, &piece) {
            chunk(index, piece).map_err(|error| (index, error))?;
        }
        Ok(())
    })
}
