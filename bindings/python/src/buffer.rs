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
use zeroize::Zeroizing;

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
/// `bytearray` refuses to resize). Its contents are not ours: another thread (or, for a
/// mapped file, another process) can write them at any time, so inputs are copied out of
/// it ([`BytesLike`]) and outputs are written into it with the GIL held.
pub struct Buffer<'py> {
    raw: RawBuffer,
    /// With debug assertions: whether `bytes_mut` registered the bytes as handed out.
    #[cfg(debug_assertions)]
    handed_out: bool,
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
            #[cfg(debug_assertions)]
            handed_out: false,
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
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Buffer<'py>> {
        Buffer::get(obj, SIMPLE)
    }

    /// A writable view of a bytes-like object (`bytearray`, a writable `memoryview`, ...).
    pub fn writable(obj: &Bound<'py, PyAny>) -> PyResult<Buffer<'py>> {
        Buffer::get(obj, WRITABLE)
    }

    pub fn len(&self) -> usize {
        self.raw.len as usize
    }

    /// The addresses of bytes `start..start + len`; panics past the end (callers check
    /// lengths first).
    fn range(&self, start: usize, len: usize) -> core::ops::Range<usize> {
        assert!(
            start.checked_add(len).is_some_and(|end| end <= self.len()),
            "a copy past the end of an exported buffer"
        );
        let first = self.raw.buf as usize + start;
        first..first + len
    }

    /// Copies `out.len()` bytes from `start` into `out`, which must not be bytes of any
    /// exported buffer (a slice of one is a reference that this copy's reads would alias:
    /// [`Buffer::copy_to`] copies between two of them).
    fn copy_into(&self, start: usize, out: &mut [u8]) {
        let source = self.range(start, out.len());
        #[cfg(debug_assertions)]
        writable::assert_unborrowed(&source);
        if !out.is_empty() {
            // SAFETY: a successful PyBUF_SIMPLE export is `len` contiguous bytes at `buf`,
            // valid until the buffer is released in `drop`, and the range is within them
            // (`range` asserts it), so it is readable; `out` is writable, and `ptr::copy`
            // allows the two to overlap. No reference to the exporter's bytes is made:
            // another thread may write them meanwhile, and the copy is what the call then
            // uses.
            unsafe { core::ptr::copy(source.start as *const u8, out.as_mut_ptr(), out.len()) }
        }
    }

    /// Copies `len` bytes from `start` into the first `len` bytes of `out`, a writable
    /// buffer that may be a view of the same memory (a caller's buffer passed as the data
    /// and, shifted or not, as the output of `decrypt_into`): the copy has `memmove`'s
    /// meaning, and is made before `out` hands out its bytes.
    fn copy_to(&self, start: usize, out: &mut Buffer<'_>, len: usize) {
        let source = self.range(start, len);
        let target = out.range(0, len);
        #[cfg(debug_assertions)]
        writable::assert_unborrowed(&source);
        if len > 0 {
            // SAFETY: both ranges lie within their exports (`range` asserts it), valid until
            // the buffers are released in `drop`; `out` was exported writable. Only raw
            // pointers are used, no reference to either side exists (`out`'s bytes are handed
            // out by `bytes_mut` only after this), and `ptr::copy` allows the ranges to
            // overlap.
            unsafe { core::ptr::copy(source.start as *const u8, target.start as *mut u8, len) }
        }
    }

    /// The bytes, writable; only for a buffer got with [`Buffer::writable`]. From here on
    /// they are a `&mut` for as long as this buffer lives: nothing else may read them.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        if self.raw.len == 0 || self.raw.readonly != 0 {
            return &mut [];
        }
        #[cfg(debug_assertions)]
        if !core::mem::replace(&mut self.handed_out, true) {
            writable::borrow(self.range(0, self.len()));
        }
        // SAFETY: as in `bytes`, and the exporter granted PyBUF_WRITABLE (readonly is 0);
        // `&mut self` makes this the only view we hand out.
        unsafe { core::slice::from_raw_parts_mut(self.raw.buf.cast::<u8>(), self.len()) }
    }
}

/// With debug assertions: the address ranges of exported buffers that handed out their bytes
/// as `&mut` ([`Buffer::bytes_mut`]) and are not yet released, so that a raw read of any of
/// them, which would alias that reference (undefined behaviour, whatever the bytes turn out
/// to be), fails loudly in the tests instead. Per thread: a call holds the GIL throughout.
#[cfg(debug_assertions)]
mod writable {
    use core::cell::RefCell;
    use core::ops::Range;

    std::thread_local! {
        static BORROWED: RefCell<Vec<Range<usize>>> = const { RefCell::new(Vec::new()) };
    }

    pub fn borrow(range: Range<usize>) {
        BORROWED.with_borrow_mut(|borrowed| borrowed.push(range));
    }

    pub fn release(range: &Range<usize>) {
        BORROWED.with_borrow_mut(|borrowed| {
            if let Some(i) = borrowed.iter().position(|r| r == range) {
                borrowed.swap_remove(i);
            }
        });
    }

    pub fn assert_unborrowed(read: &Range<usize>) {
        BORROWED.with_borrow(|borrowed| {
            let overlapping = borrowed
                .iter()
                .find(|r| r.start < read.end && read.start < r.end);
            assert!(
                overlapping.is_none(),
                "a read of bytes handed out as &mut: {read:x?} overlaps {overlapping:x?}"
            );
        });
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        if self.handed_out {
            writable::release(&self.range(0, self.len()));
        }
        // SAFETY: `raw` was filled by a successful PyObject_GetBuffer and is released once.
        // The lifetime ties the buffer to a GIL-holding scope, and buffers are only dropped
        // there (never inside a `detach` closure, which only borrows their bytes).
        unsafe { PyBuffer_Release(&mut self.raw) }
    }
}

/// Any bytes-like argument. A `bytes` object is immutable and read in place. Anything else
/// (`bytearray`, `memoryview`, `array`, `mmap`, NumPy arrays) another thread or process
/// can write at any time, so a call reads it exactly once, into memory of its own: a
/// [`Snapshot`] for small arguments, or the call's output, where the work then runs in place
/// ([`BytesLike::read_or_copy_into`]; the copy replaces the zeroing a new output gets anyway).
/// Read twice, a changing plaintext gives AES-GCM-SIV a ciphertext that never opens, and a
/// changing ciphertext could be decrypted other than it was authenticated.
pub enum BytesLike<'py> {
    Bytes(Bound<'py, PyBytes>),
    Exported(Buffer<'py>),
}

impl<'py> BytesLike<'py> {
    pub fn new(obj: &Bound<'py, PyAny>) -> PyResult<BytesLike<'py>> {
        BytesLike::from_owned(obj.clone())
    }

    /// As [`BytesLike::new`], keeping the reference it is given.
    pub fn from_owned(obj: Bound<'py, PyAny>) -> PyResult<BytesLike<'py>> {
        match obj.cast_into::<PyBytes>() {
            Ok(bytes) => Ok(BytesLike::Bytes(bytes)),
            Err(e) => Buffer::read(&e.into_inner()).map(BytesLike::Exported),
        }
    }

    /// `None` as empty, like `cryptography`'s `associated_data=None`.
    pub fn optional(obj: Option<&Bound<'py, PyAny>>) -> PyResult<Option<BytesLike<'py>>> {
        obj.filter(|obj| !obj.is_none())
            .map(BytesLike::new)
            .transpose()
    }

    pub fn len(&self) -> usize {
        match self {
            BytesLike::Bytes(bytes) => bytes.as_bytes().len(),
            BytesLike::Exported(buffer) => buffer.len(),
        }
    }

    /// The bytes, read once: in place for `bytes`, otherwise copied (and wiped after use).
    pub fn snapshot(&self) -> Snapshot<'py> {
        match self {
            BytesLike::Bytes(bytes) => Snapshot::Bytes(bytes.clone()),
            BytesLike::Exported(buffer) => {
                let mut copy = Zeroizing::new(vec![0; buffer.len()]);
                buffer.copy_into(0, &mut copy);
                Snapshot::Copied(copy)
            }
        }
    }

    /// [`BytesLike::snapshot`], releasing an exported buffer at once.
    pub fn into_snapshot(self) -> Snapshot<'py> {
        self.snapshot()
    }

    /// The bytes from `start` to read in place (`bytes`), or `None` once `out.len()` of them
    /// are copied into `out` (anything else), for the call to work on in place.
    pub fn read_or_copy_into(&self, start: usize, out: &mut [u8]) -> Option<&[u8]> {
        match self {
            BytesLike::Bytes(bytes) => Some(&bytes.as_bytes()[start..start + out.len()]),
            BytesLike::Exported(buffer) => {
                buffer.copy_into(start, out);
                None
            }
        }
    }

    /// [`BytesLike::read_or_copy_into`] into the first `len` bytes of a caller's writable
    /// buffer, which may be a view of the same memory as these bytes (then this is the only
    /// read of them, made before `out`'s bytes are handed out, with `memmove`'s meaning): a
    /// `bytes` object is immutable, so never the memory of a writable buffer.
    pub fn read_or_copy_into_buffer(
        &self,
        start: usize,
        out: &mut Buffer<'_>,
        len: usize,
    ) -> Option<&[u8]> {
        match self {
            BytesLike::Bytes(bytes) => Some(&bytes.as_bytes()[start..start + len]),
            BytesLike::Exported(buffer) => {
                buffer.copy_to(start, out, len);
                None
            }
        }
    }
}

/// Bytes a call reads: a `bytes` object's own, or a copy wiped when dropped (it may be a key
/// or plaintext).
pub enum Snapshot<'py> {
    Bytes(Bound<'py, PyBytes>),
    Copied(Zeroizing<Vec<u8>>),
}

impl core::ops::Deref for Snapshot<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Snapshot::Bytes(bytes) => bytes.as_bytes(),
            Snapshot::Copied(copy) => copy,
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
