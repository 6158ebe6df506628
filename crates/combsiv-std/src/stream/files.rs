//! A chunked format's files, for any [`ChunkCipher`]: sealed or opened in order through the
//! pipeline (any reader and writer), and file to file by position on every core, with the
//! input's change stamp checked and the output written by the [`OutputFile`](super::OutputFile)
//! policy. The stream format and C2SP differ only in their prefix and chunk size.

#[cfg(unix)]
use std::fs::File;
#[cfg(unix)]
use std::io;
use std::io::{Read, Write};

#[cfg(unix)]
use super::PlannedOutput;
use super::chunk_cipher::ChunkCipher;
use super::chunk_cipher::TAG_LEN;
use super::chunks::{Sink, Source, open_slot, seal_slot, sealed_chunk_read};
use super::error::StreamError;
#[cfg(unix)]
use super::positional::{self, ChunkMap};
#[cfg(unix)]
use super::stamp::Stamp;
use super::{Options, pipeline};

/// Seals the chunks of `chunk_size` bytes `source` gives into `output`, in order, on the
/// options' threads; returns the plaintext bytes consumed. The prefix is the caller's.
pub(crate) fn seal_in_order(
    cipher: &impl ChunkCipher,
    chunk_size: u32,
    source: Source<'_, impl Read + Send>,
    mut output: impl Write + Send,
    options: &Options,
    mut progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let chunk = chunk_size as usize;
    let fetch = source.fetch();
    let mut sink = Sink::new(&mut output, &mut progress);
    pipeline::run(
        options.threads(),
        chunk + TAG_LEN,
        source,
        &mut sink,
        |source, slot| match source.next(chunk, slot) {
            Ok(n) => {
                slot.input_len = n;
                slot.last = n < chunk;
            }
            Err(e) => slot.error = Some(e.into()),
        },
        |slot| seal_slot(cipher, fetch, slot),
        |sink, slot| sink.write(slot),
    )?;
    let total = sink.consumed;
    output.flush()?;
    Ok(total)
}

/// Opens the sealed chunks `source` gives (after the prefix) into `output`, in order, each
/// written only once verified; returns the plaintext bytes.
pub(crate) fn open_in_order(
    cipher: &impl ChunkCipher,
    chunk_size: u32,
    source: Source<'_, impl Read + Send>,
    mut output: impl Write + Send,
    options: &Options,
    mut progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let sealed_chunk = chunk_size as usize + TAG_LEN;
    let fetch = source.fetch();
    let mut sink = Sink::new(&mut output, &mut progress);
    pipeline::run(
        options.threads(),
        sealed_chunk,
        source,
        &mut sink,
        |source, slot| match source.next(sealed_chunk, slot) {
            Ok(n) => sealed_chunk_read(n, sealed_chunk, slot),
            Err(e) => slot.error = Some(e.into()),
        },
        |slot| open_slot(cipher, fetch, slot),
        |sink, slot| sink.write(slot),
    )?;
    let total = sink.produced;
    output.flush()?;
    Ok(total)
}

#[cfg(unix)]
/// The source for `input` from its current offset: by position for a regular file (with
/// its stamp, to check after), in order otherwise.
fn file_source(mut input: &File) -> io::Result<(Source<'_, &File>, Option<Stamp>)> {
    match Stamp::of_regular(input)? {
        Some(stamp) => {
            let source = Source::File {
                file: input,
                len: stamp.len,
                position: io::Seek::stream_position(&mut input)?,
            };
            Ok((source, Some(stamp)))
        }
        None => Ok((Source::Reader(input), None)),
    }
}

#[cfg(unix)]
/// Writes `prefix`, then seals `input` from its current offset into `output` in order;
/// [`StreamError::InputChanged`] if a regular input changed meanwhile.
pub(crate) fn seal_file(
    (cipher, prefix, chunk_size): (&impl ChunkCipher, &[u8], u32),
    input: &File,
    mut output: impl Write + Send,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    output.write_all(prefix)?;
    let (source, stamp) = file_source(input)?;
    let total = seal_in_order(cipher, chunk_size, source, output, options, progress)?;
    stamp.map_or(Ok(()), |stamp| stamp.check(input))?;
    Ok(total)
}

#[cfg(unix)]
/// Opens `input` from its current offset (just after the prefix) into `output` in order.
pub(crate) fn open_file(
    (cipher, chunk_size): (&impl ChunkCipher, u32),
    input: &File,
    output: impl Write + Send,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let (source, stamp) = file_source(input)?;
    let total = open_in_order(cipher, chunk_size, source, output, options, progress)?;
    stamp.map_or(Ok(()), |stamp| stamp.check(input))?;
    Ok(total)
}

#[cfg(unix)]
/// [`seal_file`] into the output `output` plans: from a regular file into a regular file
/// every chunk is read, sealed and written at its place on every core; otherwise in order.
/// The output gets its name only once complete.
pub(crate) fn seal_file_to(
    (cipher, prefix, chunk_size): (&impl ChunkCipher, &[u8], u32),
    mut input: &File,
    output: PlannedOutput,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let mut output = output.create()?;
    let stamp = Stamp::of_regular(input)?;
    let len = match (stamp, output.positional()) {
        (Some(stamp), Some(file)) => {
            let from = io::Seek::stream_position(&mut input)?;
            let layout = ChunkMap::of_plaintext(stamp.len.saturating_sub(from), chunk_size);
            positional::seal_file(
                (cipher, prefix),
                (input, from),
                layout,
                file,
                options,
                progress,
            )?;
            stamp.check(input)?;
            layout.plaintext_len()
        }
        _ => seal_file(
            (cipher, prefix, chunk_size),
            input,
            output.file(),
            options,
            progress,
        )?,
    };
    output.commit()?;
    Ok(len)
}

#[cfg(unix)]
/// [`open_file`] into the output `output` plans; a regular input's length is checked before
/// the output is created (a truncated file leaves nothing behind).
pub(crate) fn open_file_to(
    (cipher, chunk_size): (&impl ChunkCipher, u32),
    mut input: &File,
    output: PlannedOutput,
    options: &Options,
    progress: impl FnMut(u64) + Send,
) -> Result<u64, StreamError> {
    let stamp = Stamp::of_regular(input)?;
    let from = io::Seek::stream_position(&mut input)?;
    let layout = stamp
        .as_ref()
        .map(|stamp| ChunkMap::of_sealed(stamp.len.saturating_sub(from), chunk_size))
        .transpose()?;
    let mut output = output.create()?;
    let len = match (stamp, layout, output.positional()) {
        (Some(stamp), Some(layout), Some(file)) => {
            positional::open_file(cipher, (input, from), layout, file, options, progress)?;
            stamp.check(input)?;
            layout.plaintext_len()
        }
        _ => open_file(
            (cipher, chunk_size),
            input,
            output.file(),
            options,
            progress,
        )?,
    };
    output.commit()?;
    Ok(len)
}
