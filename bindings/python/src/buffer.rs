//! Python's buffer protocol for any bytes-like object (`bytes`, `bytearray`, `memoryview`,
//! `array`, NumPy arrays of bytes, ...).
//!
//! PyO3 offers the protocol only for the stable ABI of Python 3.11 and later; this package is
//! one abi3 wheel for Python 3.9 and later, so it declares the two functions itself. Both have
//! been exported by every CPython 3 with the same signatures, and `Py_buffer` has had this
//! layout since Python 3.0 (PEP 3118).

#![allow(
    unsafe_code,
    reason = "the buffer protocol's C functions; each unsafe block says why it is sound"
)]

use core::ffi::{c_char, c_int, c_void};
use core::marker::PhantomData;

use pyo3::exceptions::PyBufferError;
use pyo3::ffi::{Py_ssize_t, PyObject};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `Py_buffer` from CPython's `Include/pybuffer.h`.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut PyObject,
    len: Py_ssize_t,
    itemsize: Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut Py_ssize_t,
    strides: *mut Py_ssize_t,
    suboffsets: *mut Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_SIMPLE`: one contiguous run of bytes, or an error.
const SIMPLE: c_int = 0;
/// `PyBUF_WRITABLE`: as [`SIMPLE`], and writable.
const WRITABLE: c_int = 1;

unsafe extern "C" {
    fn PyObject_GetBuffer(obj: *mut PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// An exported buffer: while it lives the exporter keeps the memory where it is (a
/// `bytearray` refuses to resize), so the bytes can be used without the GIL. The data itself
/// is the caller's: one that mutates a buffer while a call reads it gets an unspecified
/// result, as with `hashlib`.
pub struct Buffer<'py> {
    raw: RawBuffer,
    _py: PhantomData<Python<'py>>,
}

impl<'py> Buffer<'py> {
    fn get(obj: &Bound<'py, PyAny>, flags: c_int) -> PyResult<Buffer<'py>> {
        let mut raw = RawBuffer {
            buf: core::ptr::null_mut(),
            obj: core::ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: core::ptr::null_mut(),
            shape: core::ptr::null_mut(),
            strides: core::ptr::null_mut(),
            suboffsets: core::ptr::null_mut(),
            internal: core::ptr::null_mut(),
        };
        // SAFETY: `obj` is a live object (we hold the GIL, as `Bound` proves) and `raw` is a
        // properly laid out `Py_buffer` for the call to fill.
        if unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut raw, flags) } != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        let buffer = Buffer {
            raw,
            _py: PhantomData,
        };
        if buffer.raw.len < 0 || (buffer.raw.buf.is_null() && buffer.raw.len != 0) {
            return Err(PyBufferError::new_err(
                "the object exported an invalid buffer",
            ));
        }
        Ok(buffer)
    }

    /// A read-only view of a bytes-like object.
    pub fn read(obj: &Bound<'py, PyAny>) -> PyResult<Buffer<'py>> {
        Buffer::get(obj, SIMPLE)
    }

    /// A writable view of a bytes-like object (`bytearray`, a writable `memoryview`, ...).
    pub fn writable(obj: &Bound<'py, PyAny>) -> PyResult<Buffer<'py>> {
        Buffer::get(obj, WRITABLE)
    }

    pub fn len(&self) -> usize {
        self.raw.len as usize
    }

    pub fn bytes(&self) -> &[u8] {
        if self.raw.len == 0 {
            return &[];
        }
        // SAFETY: a successful PyBUF_SIMPLE export is `len` contiguous bytes at `buf`, which
        // stay valid until the buffer is released in `drop`.
        unsafe { core::slice::from_raw_parts(self.raw.buf.cast::<u8>(), self.len()) }
    }

    /// Whether `bytes` shares memory with this buffer (compared as addresses, without
    /// making a reference to this buffer's contents).
    pub fn overlaps(&self, bytes: &[u8]) -> bool {
        let start = self.raw.buf as usize;
        let end = start + self.len();
        let other = bytes.as_ptr() as usize;
        !bytes.is_empty() && self.len() != 0 && other < end && start < other + bytes.len()
    }

    /// The bytes, writable; only for a buffer got with [`Buffer::writable`].
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        if self.raw.len == 0 || self.raw.readonly != 0 {
            return &mut [];
        }
        // SAFETY: as in `bytes`, and the exporter granted PyBUF_WRITABLE (readonly is 0);
        // `&mut self` makes this the only view we hand out.
        unsafe { core::slice::from_raw_parts_mut(self.raw.buf.cast::<u8>(), self.len()) }
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` was filled by a successful PyObject_GetBuffer and is released once.
        // The lifetime ties the buffer to a GIL-holding scope, and buffers are only dropped
        // there (never inside a `detach` closure, which only borrows their bytes).
        unsafe { PyBuffer_Release(&mut self.raw) }
    }
}

/// Any bytes-like argument: `bytes` read directly (the common case, without exporting a
/// buffer), anything else through the buffer protocol.
pub enum BytesLike<'py> {
    Bytes(Bound<'py, PyBytes>),
    Buffer(Buffer<'py>),
}

impl<'py> BytesLike<'py> {
    pub fn new(obj: &Bound<'py, PyAny>) -> PyResult<BytesLike<'py>> {
        BytesLike::from_owned(obj.clone())
    }

    /// As [`BytesLike::new`], keeping the reference it is given.
    pub fn from_owned(obj: Bound<'py, PyAny>) -> PyResult<BytesLike<'py>> {
        match obj.cast_into::<PyBytes>() {
            Ok(bytes) => Ok(BytesLike::Bytes(bytes)),
            Err(e) => Buffer::read(&e.into_inner()).map(BytesLike::Buffer),
        }
    }

    /// `None` as empty, like `cryptography`'s `associated_data=None`.
    pub fn optional(obj: Option<&Bound<'py, PyAny>>) -> PyResult<Option<BytesLike<'py>>> {
        obj.filter(|obj| !obj.is_none())
            .map(BytesLike::new)
            .transpose()
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            BytesLike::Bytes(bytes) => bytes.as_bytes(),
            BytesLike::Buffer(buffer) => buffer.bytes(),
        }
    }
}

/// New `bytes` objects written in place before anyone else sees them: a batch fills its
/// outputs directly, with no intermediate buffer and no copy out.
pub struct FreshBytes<'py> {
    objects: Vec<(Bound<'py, PyBytes>, usize)>,
}

impl<'py> FreshBytes<'py> {
    /// Objects of `lens` bytes, zeroed.
    pub fn new(py: Python<'py>, lens: &[usize]) -> PyResult<FreshBytes<'py>> {
        let objects = lens
            .iter()
            .map(|&len| PyBytes::new_with(py, len, |_| Ok(())).map(|object| (object, len)))
            .collect::<PyResult<_>>()?;
        Ok(FreshBytes { objects })
    }

    /// Every object's contents, writable.
    pub fn contents_mut(&mut self) -> Vec<&mut [u8]> {
        self.objects
            .iter()
            .map(|(object, len)| {
                let len = *len;
                if len == 0 {
                    return &mut [][..];
                }
                // SAFETY: `object` is a live `bytes` object; PyBytes_AsString returns its
                // contents' address (a raw pointer: no Rust reference to them exists).
                let data = unsafe { pyo3::ffi::PyBytes_AsString(object.as_ptr()) }.cast::<u8>();
                // SAFETY: each object was created by `new` and never handed out: this
                // struct holds the only reference, so nothing can observe the writes, and
                // `&mut self` keeps these slices the only views of the contents until they
                // end. The objects are distinct, so the slices do not overlap; a bytes
                // object's contents stay where they are for its lifetime.
                unsafe { core::slice::from_raw_parts_mut(data, len) }
            })
            .collect()
    }

    /// The objects, for the caller to share.
    pub fn into_objects(self) -> Vec<Bound<'py, PyBytes>> {
        self.objects.into_iter().map(|(object, _)| object).collect()
    }
}
