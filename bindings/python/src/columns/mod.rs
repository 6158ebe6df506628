//! `encrypt_column` and `decrypt_column`: a column of binary or string values in Arrow's
//! layout (any object with the Arrow PyCapsule interface) sealed row by row into one new
//! binary array, with no Python object per row.
//!
//! Each row is one message. Randomized (no nonce given): a fresh random nonce per row and
//! the row `nonce || ciphertext || tag`, the `Sealer` format. Deterministic (one 12-byte
//! nonce for the column, AES-GCM-SIV only): the row `ciphertext || tag`. Nulls stay null and
//! cost nothing; empty values are sealed like any other.
//!
//! The rows are cut into runs of [`RUN_ROWS`], and the runs into parts of about equal bytes,
//! which the threads take in turn. A run copies its short values into their places in the output and then
//! seals (or opens) them as one batch, so that the copied bytes are still in the core's cache
//! when the cipher reads them; long values are sealed or opened from the input straight into
//! the output ([`UNCOPIED_FROM`]). Nothing is allocated per row.

mod budget;
mod values;

use std::ops::Range;

use arrow_array::ArrayRef;
use combsiv::modes::ctr_apply;
use combsiv::parallel::for_each_part;
use combsiv::{Aes, Error, SivJob};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3_arrow::input::AnyArray;
use zeroize::Zeroizing;

pub use self::budget::{Budget, Scheme};
use self::values::{Output, RowOffsets, Source, validity};
use crate::aead::{Cipher, MAX_LEN, TAG_LEN, lock, maybe_detach, not_authentic, to_py};
use crate::buffer::{BytesLike, Snapshot};

/// Rows copied and then sealed together: 256 rows of the Internet mix (about 90 KB in and
/// out) stay in a core's L2 cache between the copy and the cipher.
const RUN_ROWS: usize = 256;

/// The shortest value (plaintext or ciphertext) that a column call seals or opens straight
/// from the Arrow buffer into its output, one row per call, rather than copied there first
/// and then sealed or opened in a batch. Either reads each byte of its input once (AES-GCM-SIV's
/// seal writes what its POLYVAL pass read into the output, where counter mode then runs; an
/// open reads the ciphertext by its counter mode's XOR), so the input needs no snapshot. 1M
/// Internet-mix rows on a Zen 4, one core, against every row copied: `encrypt_column` 0.282 to
/// 0.249 s from 256 or 512 bytes up (1 KiB: 0.256; 16 bytes: 0.303, short rows need the
/// batch), `decrypt_column` 0.297 to 0.245 s, every threshold from 16 bytes to 1 KiB within
/// 1 % of that.
const UNCOPIED_FROM: usize = 512;

/// The nonce of a column call's rows.
#[derive(Clone, Copy)]
pub enum Nonces {
    /// A fresh random nonce per row, stored in front of the row.
    Random,
    /// One nonce for every row (deterministic encryption), not stored.
    Fixed([u8; 12]),
}

impl Nonces {
    /// `nonce=None` or 12 bytes.
    pub fn new<C: Cipher>(nonce: Option<&Bound<'_, PyAny>>) -> PyResult<Nonces> {
        let Some(nonce) = BytesLike::optional(nonce)? else {
            return Ok(Nonces::Random);
        };
        if C::UNIQUE_NONCES {
            return Err(PyValueError::new_err(
                "AESGCM columns are randomized only (nonce=None): one nonce for many rows \
                 would reveal their XOR and let anyone forge tags; AESGCMSIV has a \
                 deterministic mode",
            ));
        }
        let nonce: [u8; 12] = (*nonce.snapshot())
            .try_into()
            .map_err(|_| PyValueError::new_err("Nonce must be 12 bytes long"))?;
        Ok(Nonces::Fixed(nonce))
    }

    /// The bytes in front of each sealed row: its nonce, if random.
    fn prefix(self) -> usize {
        match self {
            Nonces::Random => 12,
            Nonces::Fixed(_) => 0,
        }
    }

    /// A sealed row's bytes beyond its plaintext.
    fn overhead(self) -> usize {
        self.prefix() + TAG_LEN
    }
}

/// The random nonces of a randomized call: AES-256 in counter mode under a key drawn from
/// the operating system for this call (the construction of NIST SP 800-90A's CTR_DRBG), so
/// that a million rows cost one system call, not 3 KiB of the kernel's ChaCha20 per 256
/// rows (7 % of a 1M-row call). Every row's nonce is a distinct 12-byte slice of the
/// keystream: chunk `c`, row `i` take the 12 bytes from byte `12 i` of the stream numbered
/// `c`.
struct RandomNonces {
    aes: Aes,
}

impl RandomNonces {
    fn new() -> Result<RandomNonces, Error> {
        let mut key = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut *key).map_err(|_| Error::RandomnessUnavailable)?;
        Ok(RandomNonces {
            aes: Aes::new(&*key)?,
        })
    }

    /// The nonces of rows `rows` of chunk number `chunk`, 12 bytes each, into `out`.
    fn fill(&self, chunk: usize, rows: &Range<usize>, out: &mut [u8]) {
        // Runs start at multiples of RUN_ROWS rows, 12 * RUN_ROWS / 16 whole blocks apart.
        let first_block = (chunk as u128) << 64 | (rows.start as u128 * 12 / 16);
        out.fill(0);
        ctr_apply(&self.aes, &first_block.to_be_bytes(), out);
    }
}

/// A column argument, every chunk in memory.
struct Column {
    chunks: Vec<ArrayRef>,
    /// Whether it came as a stream (`__arrow_c_stream__`): the result is chunked as it was.
    stream: bool,
}

impl Column {
    fn new(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Column> {
        let any: AnyArray = obj.extract().map_err(|e: PyErr| {
            PyTypeError::new_err(format!(
                "{what} must be an Arrow array or stream (an object with __arrow_c_array__ \
                 or __arrow_c_stream__: pyarrow, Polars, pandas with Arrow dtypes, DuckDB \
                 results): {e}"
            ))
        })?;
        Ok(match any {
            AnyArray::Array(array) => Column {
                chunks: vec![array.into_inner().0],
                stream: false,
            },
            AnyArray::Stream(stream) => Column {
                chunks: stream
                    .into_reader()?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?,
                stream: true,
            },
        })
    }

    fn sources(&self, what: &str) -> PyResult<Vec<Source<'_>>> {
        self.chunks
            .iter()
            .map(|chunk| Source::new(chunk, what))
            .collect()
    }
}

/// A column call's arguments, checked: nonce, values and associated data.
struct ColumnCall<'py> {
    nonces: Nonces,
    column: Column,
    aad: AadArg<'py>,
}

impl<'py> ColumnCall<'py> {
    fn new<C: Cipher>((values, nonce, aad): ColumnArgs<'_, 'py>) -> PyResult<ColumnCall<'py>> {
        Ok(ColumnCall {
            nonces: Nonces::new::<C>(nonce)?,
            column: Column::new(values, "values")?,
            aad: AadArg::new(aad)?,
        })
    }

    /// Every chunk's rows and every row's associated data, checked.
    fn rows(&self) -> PyResult<(Vec<Source<'_>>, Aads<'_>)> {
        let chunks = self.column.sources("values")?;
        let aads = self.aad.of_rows(&chunks)?;
        Ok((chunks, aads))
    }
}

/// The associated data of a column call, as given.
enum AadArg<'py> {
    Shared(Option<Snapshot<'py>>),
    PerRow(Column),
}

impl<'py> AadArg<'py> {
    fn new(obj: Option<&Bound<'py, PyAny>>) -> PyResult<AadArg<'py>> {
        let Some(obj) = obj.filter(|obj| !obj.is_none()) else {
            return Ok(AadArg::Shared(None));
        };
        let py = obj.py();
        if obj.hasattr(intern!(py, "__arrow_c_array__"))?
            || obj.hasattr(intern!(py, "__arrow_c_stream__"))?
        {
            return Ok(AadArg::PerRow(Column::new(obj, "associated_data")?));
        }
        let shared = BytesLike::new(obj).map_err(|_| {
            PyTypeError::new_err(
                "associated_data must be None, a bytes-like object for every row, or an \
                 Arrow array with one value per row",
            )
        })?;
        if shared.len() > MAX_LEN {
            return Err(to_py(Error::AadTooLong));
        }
        Ok(AadArg::Shared(Some(shared.into_snapshot())))
    }

    /// The associated data of every row of `values`, checked: as many rows, none too long,
    /// and none null where the value is not.
    fn of_rows<'a>(&'a self, values: &[Source<'_>]) -> PyResult<Aads<'a>> {
        let column = match self {
            AadArg::Shared(shared) => return Ok(Aads::Shared(shared.as_deref().unwrap_or(&[]))),
            AadArg::PerRow(column) => column,
        };
        let sources = column.sources("associated_data")?;
        let rows = values.iter().map(Source::len).sum::<usize>();
        let aad_rows = sources.iter().map(Source::len).sum::<usize>();
        if aad_rows != rows {
            return Err(PyValueError::new_err(format!(
                "{aad_rows} associated data for {rows} rows"
            )));
        }
        let values = values.iter().flat_map(Source::iter);
        let aads = sources.iter().flat_map(Source::iter);
        values
            .zip(aads)
            .enumerate()
            .map(|(i, (value, aad))| match (value, aad) {
                (_, Some(aad)) if aad.len() > MAX_LEN => Err(to_py(Error::AadTooLong)),
                (_, Some(aad)) => Ok(aad),
                (None, None) => Ok(&[][..]),
                (Some(_), None) => Err(PyValueError::new_err(format!(
                    "associated_data is null at row {i}, whose value is not"
                ))),
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Aads::PerRow)
    }
}

/// Every row's associated data.
enum Aads<'a> {
    Shared(&'a [u8]),
    PerRow(Vec<&'a [u8]>),
}

impl Aads<'_> {
    /// Row `i`'s (numbered across the column).
    fn get(&self, i: usize) -> &[u8] {
        match self {
            Aads::Shared(aad) => aad,
            Aads::PerRow(aads) => aads.get(i).copied().unwrap_or_default(),
        }
    }
}

/// The output arrays' layouts: one per chunk, all large binary if the input was or if any
/// chunk's output does not fit 32-bit offsets (a chunked result has one type).
fn layouts(chunks: &[Source<'_>], len_of: impl Fn(&[u8]) -> usize) -> Vec<RowOffsets> {
    let mut layouts: Vec<RowOffsets> = chunks
        .iter()
        .map(|chunk| RowOffsets::new(chunk.iter().map(|row| row.map(&len_of)), chunk.large))
        .collect();
    let large = layouts.iter().any(|l| l.large || !l.fits_binary());
    for layout in &mut layouts {
        layout.large = large;
    }
    layouts
}

/// [`RUN_ROWS`] rows of a chunk and their place in its output (and, for opening, their
/// verdicts: whether each is a valid row of the result).
struct Run<'a> {
    rows: Range<usize>,
    out: &'a mut [u8],
    valid: &'a mut [bool],
}

/// The runs of a chunk whose output `layout` lays out in `out`.
fn runs<'a>(layout: &RowOffsets, mut out: &'a mut [u8], mut valid: &'a mut [bool]) -> Vec<Run<'a>> {
    let rows = layout.offsets.len() - 1;
    (0..rows)
        .step_by(RUN_ROWS)
        .map(|start| {
            let end = (start + RUN_ROWS).min(rows);
            let bytes = layout.offsets[end] - layout.offsets[start];
            let (run_out, later) = std::mem::take(&mut out).split_at_mut(bytes);
            out = later;
            let (run_valid, later) = std::mem::take(&mut valid).split_at_mut(end - start);
            valid = later;
            Run {
                rows: start..end,
                out: run_out,
                valid: run_valid,
            }
        })
        .collect()
}

/// `encrypt_column` of either AEAD.
pub fn encrypt_column<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    budget: &Budget,
    args: ColumnArgs<'_, 'py>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let call = ColumnCall::new::<C>(args)?;
    let (nonces, (chunks, aads)) = (call.nonces, call.rows()?);
    // Every length checked and the budget granted before any work.
    let mut count = 0u64;
    let mut max_blocks = 0u64;
    for (i, row) in chunks.iter().flat_map(Source::iter).enumerate() {
        if let Some(value) = row {
            if value.len() > MAX_LEN {
                return Err(to_py(Error::PlaintextTooLong));
            }
            count += 1;
            let blocks = aads.get(i).len().div_ceil(16) + value.len().div_ceil(16);
            max_blocks = max_blocks.max(blocks.max(1) as u64);
        }
    }
    budget
        .reserve(&budget::Rows {
            count,
            max_blocks,
            nonce: match nonces {
                Nonces::Random => None,
                Nonces::Fixed(nonce) => Some(nonce),
            },
        })
        .map_err(to_py)?;
    let overhead = nonces.overhead();
    let layouts = layouts(&chunks, |value| value.len() + overhead);
    let random = match nonces {
        Nonces::Random => Some(RandomNonces::new().map_err(to_py)?),
        Nonces::Fixed(_) => None,
    };
    let output = Output::new(py);
    let mut arrays = Vec::with_capacity(chunks.len());
    let mut first_row = 0;
    for (index, (chunk, layout)) in chunks.iter().zip(&layouts).enumerate() {
        let mut values = output.buffer(layout.total())?;
        let valid: Vec<bool> = chunk.iter().map(|row| row.is_some()).collect();
        let mut unused = vec![false; chunk.len()];
        let mut runs = runs(layout, values.bytes_mut(), &mut unused);
        let bytes = layout.total();
        let failed = std::sync::Mutex::new(None);
        maybe_detach(py, bytes, || {
            for_each_part(
                &mut runs,
                |run| run.out.len(),
                threads,
                |part| {
                    for run in part {
                        let random = random.as_ref().map(|random| (random, index));
                        let rows = (chunk, &aads, first_row);
                        if let Err(error) = seal_run(cipher, nonces, random, rows, run) {
                            *lock(&failed) = Some(error);
                        }
                    }
                },
            );
        });
        if let Some(error) = failed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            return Err(to_py(error));
        }
        drop(runs);
        arrays.push(output.array(layout, values, validity(&valid))?);
        first_row += chunk.len();
    }
    let large = layouts.first().is_some_and(|l| l.large);
    output.finish(arrays, large, call.column.stream)
}

/// Seals one run of a chunk (whose first row is row `first_row` of the column): each row's
/// nonce (stored in front if random, from the call's `random_nonces` and the chunk's
/// number), value and tag. Values of [`UNCOPIED_FROM`] bytes or more are sealed one at a
/// time from where Arrow keeps them into their output; shorter ones are copied there and
/// sealed as one batch.
fn seal_run<C: Cipher>(
    cipher: &C,
    nonces: Nonces,
    random_nonces: Option<(&RandomNonces, usize)>,
    (chunk, aads, first_row): (&Source<'_>, &Aads<'_>, usize),
    run: &mut Run<'_>,
) -> Result<(), Error> {
    let mut random = [0u8; 12 * RUN_ROWS];
    if let Some((random_nonces, chunk_index)) = random_nonces {
        random_nonces.fill(chunk_index, &run.rows, &mut random);
    }
    let prefix = nonces.prefix();
    let mut jobs = Vec::with_capacity(run.rows.len());
    let mut tags = Vec::with_capacity(run.rows.len());
    let mut rest = &mut *run.out;
    for (k, i) in run.rows.clone().enumerate() {
        let Some(value) = chunk.get(i) else { continue };
        let (out, later) = std::mem::take(&mut rest).split_at_mut(prefix + value.len() + TAG_LEN);
        rest = later;
        let nonce = match nonces {
            Nonces::Random => random[12 * k..12 * k + 12].try_into().unwrap_or_default(),
            Nonces::Fixed(nonce) => nonce,
        };
        let (stored_nonce, out) = out.split_at_mut(prefix);
        stored_nonce.copy_from_slice(&nonce[..prefix]);
        let (body, tag) = out.split_at_mut(value.len());
        let aad = aads.get(first_row + i);
        if value.len() >= UNCOPIED_FROM {
            tag.copy_from_slice(&cipher.seal(&nonce, aad, Some(value), body)?);
            continue;
        }
        body.copy_from_slice(value);
        tags.push(tag);
        jobs.push(SivJob {
            nonce,
            aad,
            data: body,
            tag: [0; TAG_LEN],
            authentic: false,
        });
    }
    cipher.seal_jobs(&mut jobs, 1)?;
    for (tag, job) in tags.iter_mut().zip(&jobs) {
        tag.copy_from_slice(&job.tag);
    }
    Ok(())
}

/// `decrypt_column` of either AEAD. Rows that fail are null in the result and zeroed in
/// its buffer; if any fails, `InvalidTag` with `failed` (their row numbers) and `results`
/// (the result with those rows null).
pub fn decrypt_column<'py, C: Cipher>(
    py: Python<'py>,
    cipher: &C,
    args: ColumnArgs<'_, 'py>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let call = ColumnCall::new::<C>(args)?;
    let (nonces, (chunks, aads)) = (call.nonces, call.rows()?);
    let overhead = nonces.overhead();
    let layouts = layouts(&chunks, |sealed| sealed.len().saturating_sub(overhead));
    let output = Output::new(py);
    let mut arrays = Vec::with_capacity(chunks.len());
    let mut failed = Vec::new();
    let mut first_row = 0;
    for (chunk, layout) in chunks.iter().zip(&layouts) {
        let mut values = output.buffer(layout.total())?;
        let mut valid = vec![false; chunk.len()];
        let mut runs = runs(layout, values.bytes_mut(), &mut valid);
        maybe_detach(py, layout.total(), || {
            for_each_part(
                &mut runs,
                |run| run.out.len(),
                threads,
                |part| {
                    for run in part {
                        open_run(cipher, nonces, chunk, &aads, first_row, run);
                    }
                },
            );
        });
        drop(runs);
        for (i, row) in chunk.iter().enumerate() {
            if row.is_some() && !valid[i] {
                failed.push(first_row + i);
            }
        }
        arrays.push(output.array(layout, values, validity(&valid))?);
        first_row += chunk.len();
    }
    let large = layouts.first().is_some_and(|l| l.large);
    let result = output.finish(arrays, large, call.column.stream)?;
    if failed.is_empty() {
        return Ok(result);
    }
    Err(not_authentic(py, "rows", failed, first_row, result)?)
}

/// Opens one run and sets each row's verdict. A row shorter than its nonce and tag fails
/// alone, with an empty output. Rows of [`UNCOPIED_FROM`] bytes or more are opened one at a
/// time from where Arrow keeps them into their output; shorter ones are copied there and
/// opened as one batch.
fn open_run<C: Cipher>(
    cipher: &C,
    nonces: Nonces,
    chunk: &Source<'_>,
    aads: &Aads<'_>,
    first_row: usize,
    run: &mut Run<'_>,
) {
    let prefix = nonces.prefix();
    let mut jobs = Vec::with_capacity(run.rows.len());
    let mut opened = Vec::with_capacity(run.rows.len());
    let mut rest = &mut *run.out;
    for (k, i) in run.rows.clone().enumerate() {
        let Some(sealed) = chunk.get(i) else { continue };
        let (out, later) =
            std::mem::take(&mut rest).split_at_mut(sealed.len().saturating_sub(prefix + TAG_LEN));
        rest = later;
        let Some((rest_of_row, tag)) = sealed.split_last_chunk::<TAG_LEN>() else {
            continue;
        };
        let Some((stored_nonce, body)) = rest_of_row.split_at_checked(prefix) else {
            continue;
        };
        let nonce = match nonces {
            Nonces::Random => stored_nonce.try_into().unwrap_or_default(),
            Nonces::Fixed(nonce) => nonce,
        };
        let aad = aads.get(first_row + i);
        if body.len() >= UNCOPIED_FROM {
            run.valid[k] = cipher.open(&nonce, aad, Some(body), out, tag).is_ok();
            continue;
        }
        out.copy_from_slice(body);
        opened.push(k);
        jobs.push(SivJob {
            nonce,
            aad,
            data: out,
            tag: *tag,
            authentic: false,
        });
    }
    cipher.open_jobs(&mut jobs, 1);
    for (k, job) in opened.into_iter().zip(&jobs) {
        run.valid[k] = job.authentic;
    }
}

/// A column call's Python arguments: values, nonce and associated data.
pub type ColumnArgs<'a, 'py> = (
    &'a Bound<'py, PyAny>,
    Option<&'a Bound<'py, PyAny>>,
    Option<&'a Bound<'py, PyAny>>,
);
