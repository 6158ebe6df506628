//! Regular input files mapped into memory: the one place the CLI talks to the OS below
//! `std`, so the one place it needs `unsafe`.

#![allow(
    unsafe_code,
    reason = "mmap(2): the mapping's soundness rests on how the file is used, stated below"
)]

use std::fs::File;

use memmap2::{Advice, Mmap, MmapOptions};

/// A read-only, private mapping of a whole regular file.
#[derive(Debug)]
pub struct Mapped {
    map: Mmap,
}

impl Mapped {
    /// Maps the first `len` bytes of `file` (its size when opened); `None` if the OS refuses,
    /// and the caller reads with read(2) instead.
    pub fn new(file: &File, len: u64) -> Option<Mapped> {
        let len = usize::try_from(len).ok()?;
        // SAFETY: the mapping is read-only and private, and combsiv never writes the input
        // (plan_output refuses an output that is the input file). Another process could
        // still change the file while it is mapped: a change in place alters the bytes that
        // are read (the output then fails to match the input, as with read(2) of a changing
        // file), and a truncation raises SIGBUS, which ends the process before any result is
        // committed. `unchanged` reports a size change that happened before the end.
        let map = unsafe { MmapOptions::new().len(len).map(file) }.ok()?;
        // Chunks are read front to back: let the kernel read ahead and map large runs of
        // pages per fault.
        let _ = map.advise(Advice::Sequential);
        Some(Mapped { map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether `file` still has the size it was mapped with.
    pub fn unchanged(&self, file: &File) -> bool {
        file.metadata()
            .is_ok_and(|meta| meta.len() == self.map.len() as u64)
    }
}
