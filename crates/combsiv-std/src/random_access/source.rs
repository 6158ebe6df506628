//! Where sealed bytes are read from by position: [`ReadAt`] and its implementations.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Mutex, PoisonError};

/// A source read by position: a file, bytes in memory, or a client that fetches byte ranges
/// of a remote object. Reads at different offsets must not disturb each other, so that one
/// source can be shared by threads ([`&File`](std::fs::File) reads with `pread`).
pub trait ReadAt {
    /// Reads into `buf` from byte `offset`; returns how many bytes were read, which is 0 at
    /// or past the end and may be fewer than asked anywhere.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// The source's length in bytes.
    fn size(&self) -> io::Result<u64>;

    /// Fills `buf` from `offset`: [`io::ErrorKind::UnexpectedEof`] if the source ends first.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset).map_or(self.len(), |at| at.min(self.len()));
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.as_slice().read_at(buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

/// Forwards to the source behind each pointer.
macro_rules! read_at_through {
    ($($pointer:ty),*) => {$(
        impl<T: ReadAt + ?Sized> ReadAt for $pointer {
            fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
                (**self).read_at(buf, offset)
            }

            fn size(&self) -> io::Result<u64> {
                (**self).size()
            }
        }
    )*};
}

read_at_through!(&T, Box<T>, Arc<T>);

/// Any [`Read`] + [`Seek`] as a [`ReadAt`]: each read seeks and reads under a lock (reads
/// from several threads take turns).
#[derive(Debug)]
pub struct SeekSource<R>(Mutex<R>);

impl<R: Read + Seek> SeekSource<R> {
    /// Wraps `inner`; its position is changed by every read.
    pub fn new(inner: R) -> Self {
        SeekSource(Mutex::new(inner))
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<R: Read + Seek> ReadAt for SeekSource<R> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        inner.seek(SeekFrom::Start(offset))?;
        inner.read(buf)
    }

    fn size(&self) -> io::Result<u64> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        inner.seek(SeekFrom::End(0))
    }
}
