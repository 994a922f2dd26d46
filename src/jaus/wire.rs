//! The encoding toolkit: a little-endian cursor pair (`Reader`/`Writer`) that names every field
//! in its errors, and scaled integers (wire reference §3.2).
//!
//! Contract: no `Reader` method panics on any input; every read is bounds-checked and a short
//! buffer yields [`DecodeErrorKind::Truncated`] with the field name and offset.

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};

/// JSIDL's value of π (`BasicConstants.xml`), which is `f64`'s π.
pub const PI: f64 = std::f64::consts::PI;

/// A real value carried as an unsigned integer of 1, 2 or 4 bytes over `[lo, hi]` (§3.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Real lower limit.
    pub lo: f64,
    /// Real upper limit.
    pub hi: f64,
    /// Integer size on the wire in bytes (1, 2 or 4).
    pub bytes: u8,
}

impl Scale {
    /// A scale over `[lo, hi]` carried in `bytes` bytes.
    pub const fn new(lo: f64, hi: f64, bytes: u8) -> Self {
        Self { lo, hi, bytes }
    }

    /// The largest integer on the wire, `2^(8N) - 1`.
    pub const fn max_int(&self) -> u32 {
        match self.bytes {
            1 => u8::MAX as u32,
            2 => u16::MAX as u32,
            _ => u32::MAX,
        }
    }

    /// The real value of one least significant bit.
    pub fn lsb(&self) -> f64 {
        (self.hi - self.lo) / f64::from(self.max_int())
    }

    /// Encodes with round-half-up (`floor(x + 0.5)`). A value outside `[lo, hi]` is an error,
    /// never a silent clamp: we do not send what we cannot say.
    pub fn encode(&self, v: f64) -> Result<u32, EncodeErrorKind> {
        if !v.is_finite() {
            return Err(EncodeErrorKind::NotFinite(v));
        }
        if v < self.lo || v > self.hi {
            return Err(EncodeErrorKind::OutOfRange {
                value: v,
                lo: self.lo,
                hi: self.hi,
            });
        }
        let x = ((v - self.lo) / self.lsb() + 0.5).floor();
        // `x` is in 0..=M+0.5 by the range check; the min guards the upper rounding edge.
        Ok((x as u64).min(u64::from(self.max_int())) as u32)
    }

    /// Decodes `lo + i * scale`. Peers that floor (JTS, OpenJAUS) land up to one LSB low;
    /// that is within the tolerance callers must allow.
    pub fn decode(&self, i: u32) -> f64 {
        self.lo + f64::from(i) * self.lsb()
    }

    /// The value a peer will read back after we send `v` (`decode(encode(v))`).
    pub fn quantize(&self, v: f64) -> Result<f64, EncodeErrorKind> {
        self.encode(v).map(|i| self.decode(i))
    }

    /// `v` clamped into the range, for producers that saturate before encoding.
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.lo, self.hi)
    }
}

/// The scaled ranges used by the messages we speak (§3.2, §6.3, §7, §8.4).
pub mod scales {
    use super::{PI, Scale};

    /// Revolute joint position, rad.
    pub const JOINT_POSITION_RAD: Scale = Scale::new(-8.0 * PI, 8.0 * PI, 4);
    /// Prismatic joint position, m.
    pub const JOINT_POSITION_M: Scale = Scale::new(-10.0, 10.0, 4);
    /// Revolute joint velocity, rad/s.
    pub const JOINT_VELOCITY_RAD: Scale = Scale::new(-10.0 * PI, 10.0 * PI, 4);
    /// Prismatic joint velocity, m/s.
    pub const JOINT_VELOCITY_M: Scale = Scale::new(-5.0, 5.0, 4);
    /// Joint torque, N·m.
    pub const JOINT_TORQUE: Scale = Scale::new(-1000.0, 1000.0, 4);
    /// Joint force, N.
    pub const JOINT_FORCE: Scale = Scale::new(-500.0, 500.0, 4);
    /// End-effector / manipulator-frame position, m.
    pub const POSITION_30M: Scale = Scale::new(-30.0, 30.0, 4);
    /// Unit quaternion component.
    pub const QUATERNION: Scale = Scale::new(-1.0, 1.0, 4);
    /// Joint or end-effector effort, percent.
    pub const EFFORT: Scale = Scale::new(-100.0, 100.0, 2);
    /// Tool offset, m.
    pub const TOOL_OFFSET: Scale = Scale::new(-15.0, 15.0, 4);
    /// Event periodic rate, Hz.
    pub const EVENT_RATE: Scale = Scale::new(0.0, 1092.0, 2);
    /// IOP end-effector force, N.
    pub const IOP_FORCE: Scale = Scale::new(-100_000.0, 100_000.0, 4);
    /// IOP end-effector torque, N·m.
    pub const IOP_TORQUE: Scale = Scale::new(-1_000_000.0, 1_000_000.0, 4);
    /// Specification: link length and joint offset, m (u16).
    pub const LENGTH_U16: Scale = Scale::new(-10.0, 10.0, 2);
    /// Specification: twist and prismatic joint angle, rad (u16); also stabilizer position.
    pub const ANGLE_U16: Scale = Scale::new(-PI, PI, 2);
    /// Specification: revolute min/max, rad.
    pub const LIMIT_RAD: Scale = Scale::new(-8.0 * PI, 8.0 * PI, 4);
    /// Specification: prismatic min/max, m.
    pub const LIMIT_M: Scale = Scale::new(-10.0, 10.0, 4);
    /// Specification: revolute max speed, rad/s.
    pub const MAX_SPEED_RAD: Scale = Scale::new(0.0, 10.0 * PI, 4);
    /// Specification: prismatic max speed, m/s (the JSIDL range is signed).
    pub const MAX_SPEED_M: Scale = Scale::new(-5.0, 5.0, 4);
    /// Specification: max torque (N·m) or max force (N).
    pub const MAX_EFFORT: Scale = Scale::new(0.0, 5000.0, 4);
    /// Specification: bounding cylinder radius, m (u16).
    pub const RADIUS: Scale = Scale::new(0.0, 10.0, 2);
    /// Motion profile: revolute max speed (rad/s), acceleration and deceleration (rad/s²).
    pub const PROFILE_RAD: Scale = Scale::new(0.0, 10.0 * PI, 4);
    /// Motion profile: prismatic max speed, m/s.
    pub const PROFILE_SPEED_M: Scale = Scale::new(0.0, 5.0, 4);
    /// Motion profile: prismatic acceleration and deceleration, m/s².
    pub const PROFILE_ACCEL_M: Scale = Scale::new(0.0, 20.0, 4);
    /// End-effector velocity state: angular velocity component, rad/s.
    pub const EE_ANGULAR_VELOCITY: Scale = Scale::new(-20.0 * PI, 20.0 * PI, 4);
    /// End-effector velocity state: linear velocity component, m/s.
    pub const EE_LINEAR_VELOCITY: Scale = Scale::new(-10.0, 10.0, 4);
}

/// Which type-and-units codes and `JointNamesList` form an encoder writes (wire reference §9 C1, C2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// SAE JSIDL / JTS / FKIE: unit codes 1 (rotary) and 2 (linear); `JointNamesList` under PV bit 1.
    #[default]
    Jsidl,
    /// OpenJAUS: unit codes 0 (rotary) and 1 (linear); `JointNamesList` always present, PV bit 1 clear.
    OpenJaus,
}

/// The two kinds of joint (and so of the units of a joint value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    /// Rotary joint: rad, rad/s, N·m.
    Revolute,
    /// Linear joint: m, m/s, N.
    Prismatic,
}

/// What a decoder knows beyond the bytes: the joint types from `ReportManipulatorSpecifications`,
/// used to resolve the ambiguous unit code 1 (§9 C1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecodeContext {
    /// Joint types base to tip, when the specification is known.
    pub joint_kinds: Option<Vec<JointKind>>,
}

impl DecodeContext {
    /// No context: unit code 1 decodes as rotary (SAE JSIDL) unless the list says otherwise.
    pub const NONE: DecodeContext = DecodeContext { joint_kinds: None };

    /// The kind of joint `index` (0-based), if known.
    pub fn joint_kind(&self, index: usize) -> Option<JointKind> {
        self.joint_kinds
            .as_ref()
            .and_then(|k| k.get(index).copied())
    }
}

/// A message body: its fields in declaration order, no length, no padding.
pub trait Body: Sized {
    /// Reads the body. The reader is positioned just after the message ID.
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
    /// Writes the body. Fails on a value the field cannot carry.
    fn emit(&self, w: &mut Writer) -> Result<(), EncodeError>;
}

/// A bounds-checked little-endian cursor over a message.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    ctx: &'a DecodeContext,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; error offsets are reported as `base + position`.
    pub fn new(buf: &'a [u8], base: usize, ctx: &'a DecodeContext) -> Self {
        Self {
            buf,
            pos: 0,
            base,
            ctx,
        }
    }

    /// The decode context.
    pub fn ctx(&self) -> &'a DecodeContext {
        self.ctx
    }

    /// Absolute offset of the next byte (for errors).
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// An error for `field` at the current offset.
    pub fn error(&self, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(field, self.offset(), kind)
    }

    /// Takes `n` raw bytes.
    pub fn bytes(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if n > available {
            return Err(self.error(
                field,
                DecodeErrorKind::Truncated {
                    needed: n,
                    available,
                },
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// The next `n` bytes without consuming them, if there are that many.
    pub fn peek(&self, n: usize) -> Option<&'a [u8]> {
        self.buf.get(self.pos..self.pos.checked_add(n)?)
    }

    /// Takes the rest of the buffer.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let b = self.bytes(N, field)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    /// Reads a u8.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(field)?[0])
    }

    /// Reads a little-endian u16.
    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.array(field).map(u16::from_le_bytes)
    }

    /// Reads a little-endian u32.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.array(field).map(u32::from_le_bytes)
    }

    /// Reads a scaled integer of `scale.bytes` bytes and returns its real value.
    pub fn scaled(&mut self, scale: Scale, field: &'static str) -> Result<f64, DecodeError> {
        let raw = match scale.bytes {
            1 => u32::from(self.u8(field)?),
            2 => u32::from(self.u16(field)?),
            _ => self.u32(field)?,
        };
        Ok(scale.decode(raw))
    }

    /// Reads a u8 presence vector and rejects bits outside `known`.
    pub fn presence_u8(&mut self, known: u8, field: &'static str) -> Result<u8, DecodeError> {
        let at = self.offset();
        let pv = self.u8(field)?;
        if pv & !known != 0 {
            return Err(DecodeError::new(
                field,
                at,
                DecodeErrorKind::UnknownPresenceBits {
                    bits: u32::from(pv),
                    known: u32::from(known),
                },
            ));
        }
        Ok(pv)
    }

    /// Reads a variant tag and rejects tags `>= alternatives`.
    pub fn tag(&mut self, alternatives: u8, field: &'static str) -> Result<u8, DecodeError> {
        let at = self.offset();
        let tag = self.u8(field)?;
        if tag >= alternatives {
            return Err(DecodeError::new(
                field,
                at,
                DecodeErrorKind::BadVariantTag(tag),
            ));
        }
        Ok(tag)
    }

    /// Reads a string with a u8 count. Text that is not UTF-8 is kept, with replacement
    /// characters, rather than losing the whole message.
    pub fn string_u8(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let n = usize::from(self.u8(field)?);
        let b = self.bytes(n, field)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// Reads a fixed-length string, dropping the NUL padding.
    pub fn string_fixed(&mut self, len: usize, field: &'static str) -> Result<String, DecodeError> {
        let b = self.bytes(len, field)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }

    /// Reads a u32-counted byte field (an embedded JAUS message).
    pub fn bytes_u32(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let n = self.u32(field)? as usize;
        self.bytes(n, field)
    }

    /// Reads a u8 list count. Each element needs at least `min_element` bytes, so an absurd
    /// count fails here instead of reserving memory for elements that cannot exist.
    pub fn count_u8(
        &mut self,
        min_element: usize,
        field: &'static str,
    ) -> Result<usize, DecodeError> {
        let n = usize::from(self.u8(field)?);
        self.check_count(n, min_element, field)
    }

    /// Reads a u16 list count (see [`Reader::count_u8`]).
    pub fn count_u16(
        &mut self,
        min_element: usize,
        field: &'static str,
    ) -> Result<usize, DecodeError> {
        let n = usize::from(self.u16(field)?);
        self.check_count(n, min_element, field)
    }

    fn check_count(
        &self,
        n: usize,
        min_element: usize,
        field: &'static str,
    ) -> Result<usize, DecodeError> {
        let needed = n.saturating_mul(min_element);
        if needed > self.remaining() {
            return Err(self.error(
                field,
                DecodeErrorKind::Truncated {
                    needed,
                    available: self.remaining(),
                },
            ));
        }
        Ok(n)
    }

    /// Fails if bytes remain after the last field.
    pub fn finish(&self, field: &'static str) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(field, DecodeErrorKind::TrailingBytes(n))),
        }
    }
}

/// A little-endian writer that checks ranges and counts as it goes.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    buf: Vec<u8>,
    dialect: Dialect,
}

impl Writer {
    /// A writer for `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            // Most messages fit; saves the early doublings of a growing Vec.
            buf: Vec::with_capacity(64),
            dialect,
        }
    }

    /// A writer appending to `buf`.
    pub fn with_buffer(buf: Vec<u8>, dialect: Dialect) -> Self {
        Self { buf, dialect }
    }

    /// The dialect being written.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The bytes written.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Writes a u8.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes a little-endian u16.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a little-endian u32.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a scaled integer; out-of-range values are an error naming `field`.
    pub fn scaled(&mut self, scale: Scale, v: f64, field: &'static str) -> Result<(), EncodeError> {
        let i = scale.encode(v).map_err(|k| EncodeError::new(field, k))?;
        match scale.bytes {
            1 => self.u8(i as u8),
            2 => self.u16(i as u16),
            _ => self.u32(i),
        }
        Ok(())
    }

    /// Writes a u8 list count.
    pub fn count_u8(&mut self, n: usize, field: &'static str) -> Result<(), EncodeError> {
        let n = u8::try_from(n).map_err(|_| {
            EncodeError::new(field, EncodeErrorKind::TooMany { count: n, max: 255 })
        })?;
        self.u8(n);
        Ok(())
    }

    /// Writes a u16 list count.
    pub fn count_u16(&mut self, n: usize, field: &'static str) -> Result<(), EncodeError> {
        let n = u16::try_from(n).map_err(|_| {
            EncodeError::new(
                field,
                EncodeErrorKind::TooMany {
                    count: n,
                    max: 65535,
                },
            )
        })?;
        self.u16(n);
        Ok(())
    }

    /// Writes a string with a u8 count.
    pub fn string_u8(&mut self, s: &str, field: &'static str) -> Result<(), EncodeError> {
        let n = u8::try_from(s.len()).map_err(|_| {
            EncodeError::new(
                field,
                EncodeErrorKind::StringTooLong {
                    len: s.len(),
                    max: 255,
                },
            )
        })?;
        self.u8(n);
        self.bytes(s.as_bytes());
        Ok(())
    }

    /// Writes a fixed-length string padded with NULs.
    pub fn string_fixed(
        &mut self,
        s: &str,
        len: usize,
        field: &'static str,
    ) -> Result<(), EncodeError> {
        if s.len() > len {
            return Err(EncodeError::new(
                field,
                EncodeErrorKind::StringTooLong {
                    len: s.len(),
                    max: len,
                },
            ));
        }
        self.bytes(s.as_bytes());
        self.buf.resize(self.buf.len() + len - s.len(), 0);
        Ok(())
    }

    /// Writes a u32-counted byte field.
    pub fn bytes_u32(&mut self, b: &[u8], field: &'static str) -> Result<(), EncodeError> {
        let n = u32::try_from(b.len()).map_err(|_| {
            EncodeError::new(
                field,
                EncodeErrorKind::TooMany {
                    count: b.len(),
                    max: u32::MAX as usize,
                },
            )
        })?;
        self.u32(n);
        self.bytes(b);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_decode_matches_format_py_third_party_vector() {
        // §5.4: 0x800346DC over ±100000 m reads 10.0000063 m; 0x80000000 reads 2.3e-5 m.
        let s = Scale::new(-100_000.0, 100_000.0, 4);
        assert!((s.decode(0x8003_46DC) - 10.000_006_3).abs() < 1e-6);
        assert!((s.decode(0x8000_0000) - 2.328e-5).abs() < 1e-8);
    }

    #[test]
    fn scaled_encode_rounds_half_up_and_refuses_out_of_range() {
        let s = scales::EFFORT;
        // 0 % is not representable: round-half-up gives 32768 (+0.0015 %).
        assert_eq!(s.encode(0.0), Ok(32768));
        assert_eq!(s.encode(-100.0), Ok(0));
        assert_eq!(s.encode(100.0), Ok(65535));
        assert!(matches!(
            s.encode(100.0001),
            Err(EncodeErrorKind::OutOfRange { .. })
        ));
        assert!(matches!(
            s.encode(f64::NAN),
            Err(EncodeErrorKind::NotFinite(_))
        ));
    }

    #[test]
    fn reader_reports_field_and_offset_when_truncated() {
        let ctx = DecodeContext::NONE;
        let mut r = Reader::new(&[1, 2, 3], 10, &ctx);
        r.u16("A").unwrap();
        let e = r.u32("B").unwrap_err();
        assert_eq!(e.field, "B");
        assert_eq!(e.offset, 12);
        assert_eq!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 4,
                available: 1
            }
        );
    }

    #[test]
    fn presence_vector_rejects_unknown_bits() {
        let ctx = DecodeContext::NONE;
        let mut r = Reader::new(&[0b100], 0, &ctx);
        assert!(matches!(
            r.presence_u8(0b011, "PresenceVector").unwrap_err().kind,
            DecodeErrorKind::UnknownPresenceBits { bits: 4, known: 3 }
        ));
    }

    #[test]
    fn absurd_list_count_fails_before_allocating() {
        let ctx = DecodeContext::NONE;
        let mut r = Reader::new(&[0xff, 0xff, 1, 2], 0, &ctx);
        assert!(r.count_u16(5, "List").is_err());
    }
}
