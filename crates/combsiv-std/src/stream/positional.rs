//! Chunks by position, for inputs and outputs that can be addressed at any offset (a regular
//! file, memory): the format fixes where every chunk lies (after the header, chunk `i` of
//! the sealed stream starts at `i x (chunk + tag)`, its plaintext at `i x chunk`), so no
//! chunk waits for another.
//!
//! Workers claim chunks in increasing order (files: from an atomic counter; memory: runs of
//! chunks, each with its own part of the output), read their input into their own buffer
//! (files, with a positional read) or straight from memory, seal or open it, and write it at
//! its place (files, with a positional write; memory, into their part). Nothing is ordered,
//! locked or woken per chunk. The first error stops further claims; the chunks in flight
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
fn run<C>(
    threads: usize,
    buffer_capacity: usize,
    next: impl Fn() -> Option<C> + Sync,
    work: impl Fn(C, &mut Zeroizing<Vec<u8>>) -> Result<(), (u64, StreamError)> + Sync,
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
        let mut buffer = Zeroizing::new(Vec::with_capacity(buffer_capacity));
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

/// A positional read of `range` of `file` (counted from `from`) into `buffer`.
#[cfg(unix)]
fn read_at(
    file: &File,
    from: u64,
    range: Range<u64>,
    buffer: &mut Zeroizing<Vec<u8>>,
) -> Result<(), StreamError> {
    let len = usize::try_from(range.end - range.start).map_err(|_| StreamError::InputChanged)?;
    buffer.resize(len, 0);
    read_file_at(file, buffer, from + range.start)
}

/// Seals the `layout.plaintext_len()` bytes of `input` from offset `from` into `output`
/// after its first `prefix.len()` bytes (the header and its tag, written here): the output
/// is sized first, then every chunk read, sealed and written at its place.
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
    each_chunk(layout, options, progress, |index, buffer| {
        let plaintext = layout.plaintext(index);
        read_at(input, from, plaintext.clone(), buffer)?;
        let len = buffer.len();
        buffer.resize(len + TAG_LEN, 0);
        cipher.seal_chunk(layout.position(index), None, buffer)?;
        output.write_all_at(buffer, body + layout.sealed(index).start)?;
        Ok(plaintext.end - plaintext.start)
    })
}

/// Opens the chunks of `input` from offset `from` (just after the header) into `output` at
/// offset 0: the output is sized first, then every chunk read, opened and (once verified)
/// written at its place.
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
    each_chunk(layout, options, progress, |index, buffer| {
        let sealed = layout.sealed(index);
        read_at(input, from, sealed.clone(), buffer)?;
        cipher.open_chunk(layout.position(index), None, buffer)?;
        let body = buffer.len() - TAG_LEN;
        output.write_all_at(&buffer[..body], layout.plaintext(index).start)?;
        Ok(sealed.end - sealed.start)
    })
}

/// Runs `chunk` on every chunk of `layout`, claimed from an atomic counter by the options'
/// threads, each with a buffer of one sealed chunk; `chunk` returns the input bytes it
/// consumed, for `progress`.
#[cfg(unix)]
fn each_chunk(
    layout: ChunkMap,
    options: &Options,
    progress: impl FnMut(u64) + Send,
    chunk: impl Fn(u64, &mut Zeroizing<Vec<u8>>) -> Result<u64, StreamError> + Sync,
) -> Result<(), StreamError> {
    let progress = Progress::new(progress);
    let claims = AtomicU64::new(0);
    let next = || {
        let index = claims.fetch_add(1, Ordering::Relaxed);
        (index < layout.chunks).then_some(index)
    };
    let sealed_chunk = layout.chunk_size as usize + TAG_LEN;
    let workers = threads(options.threads(), layout.chunks);
    run(workers, sealed_chunk, next, |index, buffer| {
        progress.add(chunk(index, buffer).map_err(|error| (index, error))?);
        Ok(())
    })?;
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
    run(threads(workers, layout.runs()), 0, next, |run, _| {
        for (index, piece) in pieces(layout, run, &piece) {
            chunk(index, piece).map_err(|error| (index, error))?;
        }
        Ok(())
    })
}
