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

/// A header, record or block a read is part of: what its error says when the data ends inside
/// it ([`CaptureError::Truncated`]) or the reader fails ([`CaptureError::Io`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    /// Frame being read.
    pub(super) frame: u64,
    /// Byte offset where the header, record or block begins.
    pub(super) offset: u64,
    /// What wants the bytes, e.g. "record header says" or "block header needs".
    pub(super) what: &'static str,
    /// Bytes it wants, as the error counts them.
    pub(super) needed: u64,
    /// Bytes of those read before this read (a magic number, a block header).
    pub(super) before: u64,
}

impl Part {
    fn truncated(self, got: usize) -> CaptureError {
        CaptureError::Truncated {
            frame: self.frame,
            offset: self.offset,
            what: self.what,
            needed: self.needed,
            available: self.before + got as u64,
        }
    }
}

impl<R: Read> Input<R> {
    /// Fills `buf`, a piece of `part`; the data ending before it is full is an error.
    pub(super) fn fill(&mut self, buf: &mut [u8], part: Part) -> Result<(), CaptureError> {
        if self.fill_or_end(buf, part)? {
            Ok(())
        } else {
            Err(part.truncated(0))
        }
    }

    /// [`Input::fill`], but `Ok(false)` when the data ends before the first byte of `buf` (a
    /// clean end of file between records).
    pub(super) fn fill_or_end(&mut self, buf: &mut [u8], part: Part) -> Result<bool, CaptureError> {
        let got = self
            .read_full(buf)
            .map_err(|e| io_error(part.frame, part.offset, e))?;
        match got {
            0 if !buf.is_empty() => Ok(false),
            got if got < buf.len() => Err(part.truncated(got)),
            _ => Ok(true),
        }
    }

    /// Replaces `buf` with the next `len` bytes, a piece of `part` ([`Input::read_vec`]); the
    /// data ending before them is an error.
    pub(super) fn fill_vec(
        &mut self,
        buf: &mut Vec<u8>,
        len: usize,
        part: Part,
    ) -> Result<(), CaptureError> {
        let got = self
            .read_vec(buf, len)
            .map_err(|e| io_error(part.frame, part.offset, e))?;
        if got < len {
            return Err(part.truncated(got));
        }
        Ok(())
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
