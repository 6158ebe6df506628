//! How a chunk moves: where it comes from (a reader, memory or a file by position), how
//! a slot is sealed or opened, and where the output goes with its running counts.

#[cfg(unix)]
use std::fs::File;
use std::io::{self, Read, Write};

use super::chunk_cipher::{ChunkCipher, TAG_LEN};
use super::error::StreamError;
use super::pipeline::Slot;

/// Where the pipeline's output goes, with the running counts for progress reports.
pub(super) struct Sink<'a, O, P> {
    output: &'a mut O,
    progress: &'a mut P,
    pub(super) consumed: u64,
    pub(super) produced: u64,
}

impl<'a, O: Write, P: FnMut(u64)> Sink<'a, O, P> {
    pub(super) fn new(output: &'a mut O, progress: &'a mut P) -> Self {
        Sink {
            output,
            progress,
            consumed: 0,
            produced: 0,
        }
    }

    pub(super) fn write(&mut self, slot: &Slot) -> Result<(), StreamError> {
        self.output.write_all(&slot.data)?;
        self.consumed += slot.input_len as u64;
        self.produced += slot.data.len() as u64;
        (self.progress)(self.consumed);
        Ok(())
    }
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
pub(crate) fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Where a stream's chunks come from: a reader, each chunk copied into its slot's buffer
/// by whoever holds the input; bytes in memory, each slot naming its range (nothing is
/// copied; the AEAD reads the range and writes the slot's buffer); or a file, each slot
/// naming its range for the worker to read into its own buffer with a positional read.
pub(crate) enum Source<'m, R> {
    Reader(R),
    Memory {
        bytes: &'m [u8],
        position: usize,
    },
    #[cfg(unix)]
    File {
        file: &'m File,
        len: u64,
        position: u64,
    },
}

/// Where a worker fetches a slot's input that is not in its buffer (see [`Source`]).
#[derive(Clone, Copy)]
pub(crate) enum Fetch<'m> {
    InBuffer,
    Memory(&'m [u8]),
    #[cfg(unix)]
    File(&'m File),
}

impl<'m, R: Read> Source<'m, R> {
    pub(super) fn fetch(&self) -> Fetch<'m> {
        match self {
            Source::Reader(_) => Fetch::InBuffer,
            Source::Memory { bytes, .. } => Fetch::Memory(bytes),
            #[cfg(unix)]
            Source::File { file, .. } => Fetch::File(file),
        }
    }

    /// Takes the next `want` bytes (fewer at the end) into the slot; returns how many.
    pub(super) fn next(&mut self, want: usize, slot: &mut Slot) -> io::Result<usize> {
        match self {
            Source::Reader(input) => {
                slot.data.resize(want, 0);
                let n = read_full(input, &mut slot.data)?;
                slot.data.truncate(n);
                Ok(n)
            }
            Source::Memory { bytes, position } => {
                let n = want.min(bytes.len() - *position);
                slot.input = Some(*position as u64..(*position + n) as u64);
                *position += n;
                Ok(n)
            }
            #[cfg(unix)]
            Source::File { len, position, .. } => {
                // An offset at or past the end (a file shorter than where it was opened)
                // reads nothing: the final, empty chunk.
                let left = len.saturating_sub(*position);
                let n = usize::try_from(left).map_or(want, |left| left.min(want));
                slot.input = Some(*position..*position + n as u64);
                *position += n as u64;
                Ok(n)
            }
        }
    }
}

impl Fetch<'_> {
    /// The slot's input: `Some` to read in place (in memory), or `None` once it is in the
    /// slot's buffer (it was read there, or is now fetched from the file, whose bytes another
    /// process may change: the worker seals its own copy, so the output always opens to what
    /// was read).
    pub(super) fn input<'a>(self, slot: &mut Slot) -> Result<Option<&'a [u8]>, StreamError>
    where
        Self: 'a,
    {
        let Some(range) = slot.input.clone() else {
            return Ok(None);
        };
        match self {
            Fetch::InBuffer => Ok(None),
            Fetch::Memory(memory) => {
                let at = |offset: u64| usize::try_from(offset).unwrap_or(usize::MAX);
                memory
                    .get(at(range.start)..at(range.end))
                    .map(Some)
                    .ok_or(StreamError::InputChanged)
            }
            #[cfg(unix)]
            Fetch::File(file) => {
                let len = usize::try_from(range.end - range.start)
                    .map_err(|_| StreamError::InputChanged)?;
                slot.data.resize(len, 0);
                read_file_at(file, &mut slot.data, range.start).map(|()| None)
            }
        }
    }
}

/// Fills `buffer` from `file` at `offset`: [`StreamError::InputChanged`] if the file ends
/// first (it was shorter than when its size was read).
#[cfg(unix)]
pub(super) fn read_file_at(file: &File, buffer: &mut [u8], offset: u64) -> Result<(), StreamError> {
    use std::os::unix::fs::FileExt;
    match file.read_exact_at(buffer, offset) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(StreamError::InputChanged),
        Err(e) => Err(StreamError::Io(e)),
    }
}

/// The stream's chunk `slot` sealed: from its input in memory into the buffer in one pass,
/// or in its own buffer (read from a reader or fetched from a file). The tag goes after the
/// chunk.
pub(super) fn seal_slot(cipher: &impl ChunkCipher, fetch: Fetch<'_>, slot: &mut Slot) {
    let sealed = fetch.input(slot).and_then(|plaintext| {
        let len = plaintext.map_or(slot.data.len(), <[u8]>::len);
        slot.data.resize(len + TAG_LEN, 0);
        Ok(cipher.seal_chunk((slot.index, slot.last), plaintext, &mut slot.data)?)
    });
    if let Err(e) = sealed {
        slot.data.clear();
        slot.error = Some(e);
    }
}

/// The stream's chunk `slot` opened (body then tag): from its input in memory into the
/// buffer in one pass, or in its own buffer. The buffer ends up holding the plaintext, or
/// nothing on failure.
pub(super) fn open_slot(cipher: &impl ChunkCipher, fetch: Fetch<'_>, slot: &mut Slot) {
    let body_len = slot.input_len - TAG_LEN;
    let opened = fetch.input(slot).and_then(|sealed| {
        if sealed.is_some() {
            slot.data.resize(body_len, 0);
        }
        cipher.open_chunk((slot.index, slot.last), sealed, &mut slot.data)
    });
    slot.data.truncate(body_len);
    if let Err(e) = opened {
        slot.data.clear();
        slot.error = Some(e);
    }
}

/// [`StreamError::WrongOutputLength`] unless `output` is `len` bytes long.
pub(crate) fn check_output_len(output: &[u8], len: u64) -> Result<(), StreamError> {
    match output.len() as u64 {
        given if given == len => Ok(()),
        given => Err(StreamError::WrongOutputLength { needed: len, given }),
    }
}

/// What `n` bytes read of a sealed chunk mean: a whole chunk, the final (shorter) one, or,
/// with less than a tag, a stream cut before its final chunk.
pub(super) fn sealed_chunk_read(n: usize, sealed_chunk: usize, slot: &mut Slot) {
    if n >= TAG_LEN {
        slot.input_len = n;
        slot.last = n < sealed_chunk;
    } else {
        slot.data.clear();
        slot.error = Some(StreamError::Truncated { chunks: slot.index });
    }
}
