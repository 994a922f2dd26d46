//! Bytes in: a reader that counts how far into the file it is, and the byte order of the
//! fields it reads.

use std::io::{self, ErrorKind, Read};

use super::CaptureError;

/// A reader that knows how far into the file it is, for error messages.
pub(super) struct Input<R> {
    pub(super) reader: R,
    pub(super) offset: u64,
}

impl<R: Read> Input<R> {
    /// Fills `buf` as far as the data goes; fewer bytes than asked means the data ended.
    pub(super) fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
            match self.reader.read(rest) {
                Ok(0) => break,
                // `min` guards against a `Read` impl that claims more than it was given.
                Ok(n) => filled += n.min(rest.len()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.offset += filled as u64;
                    return Err(e);
                }
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Replaces `buf` with up to `len` bytes of input and returns how many arrived. The buffer
    /// grows only as data arrives, so a lying length field costs no more memory than the file
    /// really holds.
    pub(super) fn read_vec(&mut self, buf: &mut Vec<u8>, len: usize) -> io::Result<usize> {
        const STEP: usize = 64 * 1024;
        buf.clear();
        while buf.len() < len {
            let start = buf.len();
            let want = (len - start).min(STEP);
            buf.resize(start + want, 0);
            let got = match buf.get_mut(start..) {
                Some(chunk) => self.read_full(chunk),
                None => Ok(0),
            };
            let got = got.inspect_err(|_| buf.truncate(start))?;
            buf.truncate(start + got);
            if got < want {
                break;
            }
        }
        Ok(buf.len())
    }
}

pub(super) fn io_error(frame: u64, offset: u64, error: io::Error) -> CaptureError {
    CaptureError::Io {
        frame,
        offset,
        error,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u16(self, bytes: [u8; 2]) -> u16 {
        match self {
            Self::Little => u16::from_le_bytes(bytes),
            Self::Big => u16::from_be_bytes(bytes),
        }
    }

    pub(super) fn u32(self, bytes: [u8; 4]) -> u32 {
        match self {
            Self::Little => u32::from_le_bytes(bytes),
            Self::Big => u32::from_be_bytes(bytes),
        }
    }

    /// The 16-bit field at `at`, if the slice holds it.
    pub(super) fn u16_at(self, bytes: &[u8], at: usize) -> Option<u16> {
        let field = bytes.get(at..at.checked_add(2)?)?;
        Some(self.u16(field.try_into().ok()?))
    }

    /// The 32-bit field at `at`, if the slice holds it.
    pub(super) fn u32_at(self, bytes: &[u8], at: usize) -> Option<u32> {
        let field = bytes.get(at..at.checked_add(4)?)?;
        Some(self.u32(field.try_into().ok()?))
    }

    /// The 64-bit field at `at`, if the slice holds it.
    pub(super) fn u64_at(self, bytes: &[u8], at: usize) -> Option<u64> {
        let field: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(match self {
            Self::Little => u64::from_le_bytes(field),
            Self::Big => u64::from_be_bytes(field),
        })
    }
}
