//! The caller's buffers as slices: NULL allowed where the length is 0, and the overlap rules
//! (an output may be exactly an input, never partly).

use core::ffi::c_int;
use core::slice;

use crate::status::{COMBSIV_EINVAL, COMBSIV_EOVERLAP};

/// A caller's buffer: `len` bytes at `ptr`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub ptr: *const u8,
    pub len: usize,
}

impl Region {
    /// Checks that `ptr` may be read or written for `len` bytes as far as this side can tell:
    /// not NULL unless `len` is 0, and no longer than a Rust slice may be.
    pub fn new(ptr: *const u8, len: usize) -> Result<Region, c_int> {
        if (ptr.is_null() && len != 0) || len > isize::MAX as usize {
            return Err(COMBSIV_EINVAL);
        }
        Ok(Region { ptr, len })
    }

    /// Whether the two share a byte.
    pub fn overlaps(self, other: Region) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        self.len != 0
            && other.len != 0
            && a < b.wrapping_add(other.len)
            && b < a.wrapping_add(self.len)
    }

    /// Whether `output` is exactly this buffer (in place) rather than a separate one;
    /// [`COMBSIV_EOVERLAP`] if it is partly.
    pub fn is_in_place(self, output: Region) -> Result<bool, c_int> {
        if self.len != 0 && self.ptr == output.ptr {
            Ok(true)
        } else if self.overlaps(output) {
            Err(COMBSIV_EOVERLAP)
        } else {
            Ok(false)
        }
    }

    /// The bytes.
    ///
    /// # Safety
    ///
    /// The caller's promise: `len` readable bytes at `ptr` (checked non-NULL by
    /// [`new`](Self::new)), not written through any other slice while this one lives.
    pub unsafe fn as_slice<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: non-NULL and at most isize::MAX long (new); readable and not written
        // meanwhile by the function's contract.
        unsafe { slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, writable.
    ///
    /// # Safety
    ///
    /// The caller's promise: `len` writable bytes at `ptr`, reached through no other slice
    /// while this one lives.
    pub unsafe fn as_mut_slice<'a>(self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: non-NULL and at most isize::MAX long (new); writable and not aliased by
        // the function's contract and the overlap checks made before.
        unsafe { slice::from_raw_parts_mut(self.ptr.cast_mut(), self.len) }
    }
}

/// Writes `value` through an out-pointer, if the caller gave one.
///
/// # Safety
///
/// `ptr` is NULL or valid for a write of `T`.
pub(crate) unsafe fn set<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-NULL, and valid for a write by the function's contract.
        unsafe { ptr.write(value) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: usize, len: usize) -> Region {
        Region {
            ptr: core::ptr::without_provenance(start),
            len,
        }
    }

    #[test]
    fn overlap_is_a_shared_byte() {
        assert!(region(100, 10).overlaps(region(109, 1)));
        assert!(!region(100, 10).overlaps(region(110, 5)));
        assert!(region(110, 5).overlaps(region(100, 11)));
        assert!(!region(100, 0).overlaps(region(100, 10)));
    }

    #[test]
    fn in_place_is_the_same_start() {
        assert_eq!(region(100, 10).is_in_place(region(100, 26)), Ok(true));
        assert_eq!(region(100, 10).is_in_place(region(200, 26)), Ok(false));
        assert_eq!(
            region(100, 10).is_in_place(region(101, 26)),
            Err(COMBSIV_EOVERLAP)
        );
        assert_eq!(
            region(100, 10).is_in_place(region(90, 11)),
            Err(COMBSIV_EOVERLAP)
        );
    }

    #[test]
    fn null_only_when_empty() {
        assert!(Region::new(core::ptr::null(), 0).is_ok());
        assert_eq!(
            Region::new(core::ptr::null(), 1).err(),
            Some(COMBSIV_EINVAL)
        );
    }
}
