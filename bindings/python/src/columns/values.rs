//! Arrow arrays of bytes: reading binary and string arrays (32- and 64-bit offsets, and
//! views) row by row where Arrow keeps them, and making the binary arrays the column calls
//! return.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryViewArray, GenericBinaryArray, OffsetSizeTrait, StringViewArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3_arrow::{PyArray, PyChunkedArray};

use crate::buffer::Buffer;

/// One array's rows, read in place: each row's bytes, or `None` for a null.
pub struct Source<'a> {
    bytes: Bytes<'a>,
    nulls: Option<&'a NullBuffer>,
    len: usize,
    /// Whether the array's offsets are 64-bit (large binary or large string).
    pub large: bool,
}

/// Where a [`Source`]'s bytes are.
enum Bytes<'a> {
    Offsets32(&'a [i32], &'a [u8]),
    Offsets64(&'a [i64], &'a [u8]),
    BinaryViews(&'a BinaryViewArray),
    StringViews(&'a StringViewArray),
}

impl<'a> Source<'a> {
    /// The rows of `array`, checked before any is read: the producer of an imported array
    /// is not trusted to have sent offsets (or views) inside its data. `what` names the
    /// argument in errors.
    pub fn new(array: &'a ArrayRef, what: &str) -> PyResult<Source<'a>> {
        let (bytes, large) = match array.data_type() {
            DataType::Binary => {
                let a = array.as_binary::<i32>();
                (Bytes::Offsets32(a.value_offsets(), a.value_data()), false)
            }
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                (Bytes::Offsets32(a.value_offsets(), a.value_data()), false)
            }
            DataType::LargeBinary => {
                let a = array.as_binary::<i64>();
                (Bytes::Offsets64(a.value_offsets(), a.value_data()), true)
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                (Bytes::Offsets64(a.value_offsets(), a.value_data()), true)
            }
            DataType::BinaryView | DataType::Utf8View => {
                let data = array.to_data();
                data.validate_full()
                    .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?;
                let views = match array.data_type() {
                    DataType::Utf8View => Bytes::StringViews(array.as_string_view()),
                    _ => Bytes::BinaryViews(array.as_binary_view()),
                };
                (views, false)
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "{what} must hold binary or string values (binary, large_binary, string, \
                     large_string or their views), not {other}"
                )));
            }
        };
        let source = Source {
            bytes,
            nulls: array.nulls(),
            len: array.len(),
            large,
        };
        source.check_offsets(what)?;
        Ok(source)
    }

    fn check_offsets(&self, what: &str) -> PyResult<()> {
        let inside = match &self.bytes {
            Bytes::Offsets32(offsets, data) => offsets_inside(offsets, data.len(), self.len),
            Bytes::Offsets64(offsets, data) => offsets_inside(offsets, data.len(), self.len),
            Bytes::BinaryViews(_) | Bytes::StringViews(_) => true,
        };
        if inside {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "{what}: the array's offsets are not inside its data"
            )))
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Row `i`'s bytes, `None` if it is null (or past the end).
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.len || self.nulls.is_some_and(|nulls| nulls.is_null(i)) {
            return None;
        }
        match &self.bytes {
            Bytes::Offsets32(offsets, data) => slice(offsets, data, i),
            Bytes::Offsets64(offsets, data) => slice(offsets, data, i),
            Bytes::BinaryViews(views) => Some(views.value(i)),
            Bytes::StringViews(views) => Some(views.value(i).as_bytes()),
        }
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a [u8]>> + '_ {
        (0..self.len).map(|i| self.get(i))
    }
}

/// Whether `offsets` has `len + 1` entries that never decrease and stay within `data_len`.
fn offsets_inside<O: OffsetSizeTrait>(offsets: &[O], data_len: usize, len: usize) -> bool {
    offsets.len() == len + 1
        && offsets.windows(2).all(|pair| pair[0] <= pair[1])
        && offsets.first().and_then(|o| o.to_usize()).is_some()
        && offsets
            .last()
            .and_then(|o| o.to_usize())
            .is_some_and(|end| end <= data_len)
}

/// Row `i` of checked offsets (empty should the check have been skipped).
fn slice<'a, O: OffsetSizeTrait>(offsets: &[O], data: &'a [u8], i: usize) -> Option<&'a [u8]> {
    let start = offsets.get(i)?.to_usize()?;
    let end = offsets.get(i + 1)?.to_usize()?;
    Some(data.get(start..end).unwrap_or_default())
}

/// Where each row of a binary array will start, before its bytes are written, and the total.
pub struct RowOffsets {
    /// Each row's start in the values buffer, and the end of the last.
    pub offsets: Vec<usize>,
    /// Whether the array is a large binary one (64-bit offsets).
    pub large: bool,
}

impl RowOffsets {
    /// The layout of rows of `lens` bytes (`None` for a null, which takes none).
    pub fn new(lens: impl Iterator<Item = Option<usize>>, large: bool) -> RowOffsets {
        let mut offsets = vec![0];
        let mut end = 0usize;
        for len in lens {
            end = end.saturating_add(len.unwrap_or(0));
            offsets.push(end);
        }
        RowOffsets { offsets, large }
    }

    /// The bytes the values buffer needs.
    pub fn total(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Whether 32-bit offsets can address the values.
    pub fn fits_binary(&self) -> bool {
        i32::try_from(self.total()).is_ok()
    }

    /// The offsets as Arrow stores them, 32- or 64-bit little-endian, written into `out`
    /// ([`RowOffsets::offsets_len`] bytes).
    fn write_offsets(&self, out: &mut [u8]) -> PyResult<()> {
        let too_large = || PyValueError::new_err("the result is too large for its offsets");
        let width = if self.large { 8 } else { 4 };
        for (&offset, out) in self.offsets.iter().zip(out.chunks_exact_mut(width)) {
            if self.large {
                let offset = i64::try_from(offset).map_err(|_| too_large())?;
                out.copy_from_slice(&offset.to_le_bytes());
            } else {
                let offset = i32::try_from(offset).map_err(|_| too_large())?;
                out.copy_from_slice(&offset.to_le_bytes());
            }
        }
        Ok(())
    }

    fn offsets_len(&self) -> usize {
        self.offsets.len() * if self.large { 8 } else { 4 }
    }
}

/// Where a result's arrays are made. With pyarrow installed, their buffers come from
/// pyarrow's memory pool, which keeps freed memory for reuse: a new 711 MB buffer is written
/// at memory speed (18 ms on Zen 5) instead of faulting in fresh pages (275 ms), which would
/// cost more than sealing it. Without pyarrow, in Rust's heap, exported through the C data
/// interface.
pub struct Output<'py> {
    py: Python<'py>,
    pyarrow: Option<Bound<'py, PyModule>>,
}

/// A result array's buffer, written before the array is made.
pub enum OutBuffer<'py> {
    /// A `pyarrow.Buffer` from `pyarrow.allocate_buffer` and our writable view of it.
    Pyarrow(Bound<'py, PyAny>, Buffer<'py>),
    Rust(Vec<u8>),
}

impl OutBuffer<'_> {
    /// The bytes to write. A pyarrow buffer comes uninitialized: every caller writes every
    /// byte (the column calls: nonce, value and tag of each row, or its plaintext, zeroed
    /// if not authentic) and reads none before.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            OutBuffer::Pyarrow(_, view) => view.bytes_mut(),
            OutBuffer::Rust(bytes) => bytes,
        }
    }
}

impl<'py> Output<'py> {
    pub fn new(py: Python<'py>) -> Output<'py> {
        Output {
            py,
            pyarrow: py.import(intern!(py, "pyarrow")).ok(),
        }
    }

    /// A buffer of `len` bytes.
    pub fn buffer(&self, len: usize) -> PyResult<OutBuffer<'py>> {
        let Some(pyarrow) = &self.pyarrow else {
            return Ok(OutBuffer::Rust(vec![0; len]));
        };
        let buffer = pyarrow
            .getattr(intern!(self.py, "allocate_buffer"))?
            .call1((len,))?;
        let view = Buffer::writable(&buffer)?;
        if view.len() != len {
            return Err(PyValueError::new_err(
                "pyarrow allocated a buffer of another size",
            ));
        }
        Ok(OutBuffer::Pyarrow(buffer, view))
    }

    /// The array of `values` as `layout` lays them out, the rows `valid` says (or all)
    /// non-null: a `pyarrow.Array`, or without pyarrow an object with `__arrow_c_array__`.
    pub fn array(
        &self,
        layout: &RowOffsets,
        values: OutBuffer<'py>,
        valid: Option<NullBuffer>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let bytes = match (&self.pyarrow, values) {
            (Some(pyarrow), OutBuffer::Pyarrow(values, view)) => {
                drop(view);
                let mut offsets = self.buffer(layout.offsets_len())?;
                layout.write_offsets(offsets.bytes_mut())?;
                let (validity, null_count) = match &valid {
                    Some(nulls) => {
                        let bits = nulls.inner().sliced();
                        let mut validity = self.buffer(bits.len())?;
                        validity.bytes_mut().copy_from_slice(bits.as_slice());
                        (validity.into_object(py), nulls.null_count())
                    }
                    None => (py.None().into_bound(py), 0),
                };
                let buffers = vec![validity, offsets.into_object(py), values];
                let rows = layout.offsets.len() - 1;
                return pyarrow.getattr(intern!(py, "Array"))?.call_method1(
                    intern!(py, "from_buffers"),
                    (self.data_type(layout.large)?, rows, buffers, null_count),
                );
            }
            (_, OutBuffer::Pyarrow(_, mut view)) => view.bytes_mut().to_vec(),
            (_, OutBuffer::Rust(bytes)) => bytes,
        };
        let array = if layout.large {
            binary_array::<i64>(&layout.offsets, bytes, valid)?
        } else {
            binary_array::<i32>(&layout.offsets, bytes, valid)?
        };
        let field = Arc::new(Field::new("", array.data_type().clone(), true));
        let array =
            PyArray::try_new(array, field).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Bound::new(py, array)?.into_any())
    }

    /// The result: the one array, or for a stream argument its arrays as one chunked array.
    pub fn finish(
        &self,
        mut arrays: Vec<Bound<'py, PyAny>>,
        large: bool,
        stream: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !stream {
            return arrays
                .pop()
                .ok_or_else(|| PyValueError::new_err("an array argument without an array"));
        }
        if let Some(pyarrow) = &self.pyarrow {
            return pyarrow
                .getattr(intern!(self.py, "chunked_array"))?
                .call1((arrays, self.data_type(large)?));
        }
        let chunks = arrays
            .iter()
            .map(|array| Ok(array.extract::<PyArray>()?.into_inner().0))
            .collect::<PyResult<Vec<_>>>()?;
        let data_type = if large {
            DataType::LargeBinary
        } else {
            DataType::Binary
        };
        let chunked = PyChunkedArray::try_new(chunks, Arc::new(Field::new("", data_type, true)))?;
        Ok(Bound::new(self.py, chunked)?.into_any())
    }

    /// `pyarrow.binary()` or `pyarrow.large_binary()`.
    fn data_type(&self, large: bool) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = self
            .pyarrow
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("pyarrow is not installed"))?;
        let name = if large {
            intern!(self.py, "large_binary")
        } else {
            intern!(self.py, "binary")
        };
        pyarrow.getattr(name)?.call0()
    }
}

impl<'py> OutBuffer<'py> {
    /// The pyarrow buffer (a `bytes` object of a Rust one, for pyarrow to take).
    fn into_object(self, py: Python<'py>) -> Bound<'py, PyAny> {
        match self {
            OutBuffer::Pyarrow(object, _) => object,
            OutBuffer::Rust(bytes) => pyo3::types::PyBytes::new(py, &bytes).into_any(),
        }
    }
}

fn binary_array<O: OffsetSizeTrait>(
    offsets: &[usize],
    data: Vec<u8>,
    valid: Option<NullBuffer>,
) -> PyResult<ArrayRef> {
    let offsets: Vec<O> = offsets
        .iter()
        .map(|&offset| O::from_usize(offset))
        .collect::<Option<_>>()
        .ok_or_else(|| PyValueError::new_err("the result is too large for its offsets"))?;
    // The offsets start at 0 and never decrease (RowOffsets::new), as `OffsetBuffer` requires.
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let array =
        GenericBinaryArray::<O>::try_new(offsets, arrow_buffer::Buffer::from_vec(data), valid)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Arc::new(array))
}

/// The validity of rows, or `None` when every row is valid (Arrow's cheaper form).
pub fn validity(valid: &[bool]) -> Option<NullBuffer> {
    if valid.iter().all(|&v| v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}
