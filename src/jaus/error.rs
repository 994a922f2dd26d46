//! The codec's one error pair: what went wrong, in which field, at which offset.

use thiserror::Error;

/// Why a decode failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DecodeErrorKind {
    /// The buffer ended inside a field.
    #[error("truncated: needed {needed} bytes, {available} available")]
    Truncated {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the buffer.
        available: usize,
    },
    /// A presence vector has bits set that the message does not define.
    #[error(
        "presence vector 0x{bits:02x} sets bits the message does not define (known: 0x{known:02x})"
    )]
    UnknownPresenceBits {
        /// The presence vector as received.
        bits: u32,
        /// The bits this record defines.
        known: u32,
    },
    /// A variant tag that names no alternative (the alternative's length is unknowable).
    #[error("variant tag {0} names no alternative")]
    BadVariantTag(u8),
    /// A type-and-units code of a variable field that no dialect defines.
    #[error("type-and-units code {0} is not defined (expected 1 or 2, or OpenJAUS 0 or 1)")]
    BadUnitCode(u8),
    /// Bytes left after the last field of a message.
    #[error("{0} unexpected bytes after the last field")]
    TrailingBytes(usize),
    /// The datagram's transport version byte is not AS5669A (2).
    #[error("JUDP transport version {0} is not supported (only version 2, AS5669A)")]
    UnsupportedVersion(u8),
    /// The datagram uses the legacy OPC/RA-3 "JAUS01.0" framing.
    #[error("legacy JAUS01.0 (OPC / RA 3.x) framing is not supported; only AS5669A JUDP version 2")]
    LegacyFraming,
    /// The datagram is empty.
    #[error("empty datagram")]
    Empty,
    /// The block's message-type/header-compression byte is not 0.
    #[error(
        "message type / header compression byte 0x{0:02x} is not supported (only 0x00: plain JAUS message, no header compression)"
    )]
    UnsupportedMessageType(u8),
    /// A block's data size is smaller than the header or larger than what remains.
    #[error("data size {size} is invalid (must be 14..={max})")]
    BadDataSize {
        /// The data size field.
        size: u16,
        /// The largest size that fits.
        max: usize,
    },
    /// An ACK/NAK block that carries a payload.
    #[error("ACK/NAK block carries {0} payload bytes (must be empty)")]
    AckWithPayload(usize),
    /// A block that should carry a message carries none.
    #[error("block carries no message (payload shorter than a message ID)")]
    NoMessage,
}

/// A decode failure with its context, in the manner of etherparse's `LenError`.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{field} at offset {offset}: {kind}")]
pub struct DecodeError {
    /// The field being read (spec name).
    pub field: &'static str,
    /// Byte offset of the field from the start of the buffer handed to the decoder.
    pub offset: usize,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// Builds an error for `field` at `offset`.
    pub fn new(field: &'static str, offset: usize, kind: DecodeErrorKind) -> Self {
        Self {
            field,
            offset,
            kind,
        }
    }

    /// The same error with its offset moved by `base` (for errors inside an embedded buffer).
    pub fn shifted(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }
}

/// Why an encode failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EncodeErrorKind {
    /// A real value outside the field's scaled range.
    #[error("value {value} is outside the field's range {lo} ..= {hi}")]
    OutOfRange {
        /// The value given.
        value: f64,
        /// The lowest encodable value.
        lo: f64,
        /// The highest encodable value.
        hi: f64,
    },
    /// NaN or infinity.
    #[error("value {0} is not a finite number")]
    NotFinite(f64),
    /// A list longer than its count field can say.
    #[error("{count} elements do not fit a count of at most {max}")]
    TooMany {
        /// Elements given.
        count: usize,
        /// The count field's maximum.
        max: usize,
    },
    /// A string longer than its count field (or fixed length) allows.
    #[error("string of {len} bytes is longer than the {max} bytes the field holds")]
    StringTooLong {
        /// Bytes in the string.
        len: usize,
        /// The field's maximum.
        max: usize,
    },
    /// A message too large for one JUDP block.
    #[error("payload of {len} bytes does not fit one JUDP block (at most {max})")]
    PayloadTooLarge {
        /// Payload bytes.
        len: usize,
        /// The largest payload one block carries.
        max: usize,
    },
}

/// An encode failure and the field it happened in.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{field}: {kind}")]
pub struct EncodeError {
    /// The field being written (spec name).
    pub field: &'static str,
    /// What went wrong.
    pub kind: EncodeErrorKind,
}

impl EncodeError {
    /// Builds an error for `field`.
    pub fn new(field: &'static str, kind: EncodeErrorKind) -> Self {
        Self { field, kind }
    }
}
