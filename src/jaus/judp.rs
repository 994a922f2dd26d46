//! JUDP transport framing, AS5669A version 2 (wire reference §4).
//!
//! A datagram is one version byte then one or more blocks; each block is a 12-byte header,
//! a payload (one JAUS message or a fragment of one) and a u16 sequence number:
//!
//! ```text
//! | 0x02 | type/HC | data size u16 | flags | dst ID | src ID | payload | seq u16 | block 2 ...
//! ```
//!
//! [`Block`] is a zero-copy checked view (no allocation); [`Header`] is its owned repr.
//! [`DatagramWriter`] builds datagrams and [`fragment`] cuts large messages into multi-packet
//! blocks. Pure framing only: putting fragments back together, duplicate suppression and the
//! rest of a receiver's state live in the network side (`net::reassembly`, `net::endpoint`).

use std::net::Ipv4Addr;

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use super::id::JausId;

/// The transport version byte of AS5669A JUDP.
pub const VERSION: u8 = 2;
/// The IANA "jaus" UDP port.
pub const PORT: u16 = 3794;
/// The multicast group every implementation uses for broadcasts and discovery.
pub const MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);
/// Bytes of a block besides its payload: type/HC, size, flags, two IDs, sequence number.
pub const BLOCK_OVERHEAD: usize = 14;
/// The largest payload we put in one block (Junior's limit, §9 C5).
pub const MAX_BLOCK_PAYLOAD: usize = 4079;
/// The payload size we fragment at so datagrams stay under ~1400 bytes (no IP fragmentation).
pub const PREFERRED_BLOCK_PAYLOAD: usize = 1400 - 1 - BLOCK_OVERHEAD;

mod field {
    pub const TYPE_HC: usize = 0;
    pub const DATA_SIZE: std::ops::Range<usize> = 1..3;
    pub const FLAGS: usize = 3;
    pub const DESTINATION: std::ops::Range<usize> = 4..8;
    pub const SOURCE: std::ops::Range<usize> = 8..12;
    pub const PAYLOAD: usize = 12;
}

wire_enum! {
    /// Flags bits 0–1: priority.
    pub enum Priority: u8 {
        /// 0.
        Low = 0 => "low",
        /// 1, the usual value.
        Standard = 1 => "standard",
        /// 2.
        High = 2 => "high",
        /// 3.
        SafetyCritical = 3 => "safety-critical",
    }
}

wire_enum! {
    /// Flags bits 2–3: broadcast.
    pub enum Broadcast: u8 {
        /// 0: unicast.
        None = 0 => "none",
        /// 1: local broadcast.
        Local = 1 => "local",
        /// 2: global broadcast.
        Global = 2 => "global",
    }
}

wire_enum! {
    /// Flags bits 4–5: ACK/NAK.
    pub enum AckNak: u8 {
        /// 0: no acknowledgement.
        None = 0 => "none",
        /// 1: the sender asks for an ACK.
        Request = 1 => "request",
        /// 2: NAK (semantics unconfirmed, §4.4).
        Nak = 2 => "nak",
        /// 3: this block is an ACK.
        Ack = 3 => "ack",
    }
}

wire_enum! {
    /// Flags bits 6–7: data flags (multi-packet position).
    pub enum DataFlags: u8 {
        /// 0: the whole message.
        Single = 0 => "single",
        /// 1: first fragment.
        First = 1 => "first",
        /// 2: middle fragment.
        Middle = 2 => "middle",
        /// 3: last fragment.
        Last = 3 => "last",
    }
}

/// A read view of one JUDP block. The buffer starts at the block's type/HC byte and may run
/// past the block (the rest of the datagram); the data size field delimits the block.
#[derive(Debug, Clone, Copy)]
pub struct Block<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Block<T> {
    /// Wraps a buffer without checking it; accessors may panic until [`Block::check_len`] passes.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps a buffer and checks it holds a whole, supported block.
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let b = Self::new_unchecked(buffer);
        b.check_len()?;
        Ok(b)
    }

    /// Checks the header fits, the type byte is supported, the data size is sane and fits,
    /// and ACK/NAK blocks carry no payload. After this no accessor panics.
    pub fn check_len(&self) -> Result<(), DecodeError> {
        self.check(false)
    }

    /// [`Block::check_len`], except that an ACK/NAK block carrying a payload is accepted when
    /// its data size is consistent (§9 C11: a peer copies the acknowledged payload into its
    /// ACK); [`Block::ack_payload_len`] says how many bytes were tolerated.
    pub fn check_len_tolerant(&self) -> Result<(), DecodeError> {
        self.check(true)
    }

    /// Payload bytes of an ACK/NAK block (0 for every conforming block).
    pub fn ack_payload_len(&self) -> usize {
        if matches!(self.ack_nak(), AckNak::Ack | AckNak::Nak) {
            self.block_len().saturating_sub(BLOCK_OVERHEAD)
        } else {
            0
        }
    }

    fn check(&self, tolerate_ack_payload: bool) -> Result<(), DecodeError> {
        let buf = self.buffer.as_ref();
        if buf.len() < BLOCK_OVERHEAD {
            return Err(DecodeError::new(
                "JUDP header",
                0,
                DecodeErrorKind::Truncated {
                    needed: BLOCK_OVERHEAD,
                    available: buf.len(),
                },
            ));
        }
        // §4.2 / §9 C3: the type/HC bit placement is disputed; everyone sends 0x00.
        if buf[field::TYPE_HC] != 0 {
            return Err(DecodeError::new(
                "MessageType/HC",
                field::TYPE_HC,
                DecodeErrorKind::UnsupportedMessageType(buf[field::TYPE_HC]),
            ));
        }
        let size = u16::from_le_bytes([buf[1], buf[2]]);
        if usize::from(size) < BLOCK_OVERHEAD || usize::from(size) > buf.len() {
            return Err(DecodeError::new(
                "DataSize",
                field::DATA_SIZE.start,
                DecodeErrorKind::BadDataSize {
                    size,
                    max: buf.len(),
                },
            ));
        }
        let payload = usize::from(size) - BLOCK_OVERHEAD;
        if (buf[field::FLAGS] >> 4) & 3 >= 2 && payload != 0 && !tolerate_ack_payload {
            return Err(DecodeError::new(
                "DataSize",
                field::DATA_SIZE.start,
                DecodeErrorKind::AckWithPayload(payload),
            ));
        }
        Ok(())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The message type / header compression byte (0 for everything we accept).
    pub fn type_hc(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE_HC]
    }

    /// Data size: bytes of this block from the type byte through the sequence number.
    pub fn data_size(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_le_bytes([b[field::DATA_SIZE.start], b[field::DATA_SIZE.start + 1]])
    }

    /// Length of this block in the buffer.
    pub fn block_len(&self) -> usize {
        usize::from(self.data_size())
    }

    /// The raw flags byte.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// Priority (flags bits 0–1).
    pub fn priority(&self) -> Priority {
        Priority::from_raw(self.flags() & 3)
    }

    /// Broadcast (flags bits 2–3).
    pub fn broadcast(&self) -> Broadcast {
        Broadcast::from_raw((self.flags() >> 2) & 3)
    }

    /// ACK/NAK (flags bits 4–5).
    pub fn ack_nak(&self) -> AckNak {
        AckNak::from_raw((self.flags() >> 4) & 3)
    }

    /// Data flags (flags bits 6–7).
    pub fn data_flags(&self) -> DataFlags {
        DataFlags::from_raw(self.flags() >> 6)
    }

    fn id_at(&self, r: std::ops::Range<usize>) -> JausId {
        let b = &self.buffer.as_ref()[r];
        JausId::from_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Destination JAUS ID.
    pub fn destination(&self) -> JausId {
        self.id_at(field::DESTINATION)
    }

    /// Source JAUS ID.
    pub fn source(&self) -> JausId {
        self.id_at(field::SOURCE)
    }

    /// The payload: a whole JAUS message, a fragment of one, or nothing (ACK/NAK).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..self.block_len() - 2]
    }

    /// Sequence number.
    pub fn sequence(&self) -> u16 {
        let b = self.buffer.as_ref();
        let at = self.block_len() - 2;
        u16::from_le_bytes([b[at], b[at + 1]])
    }
}

impl<'a> Block<&'a [u8]> {
    /// The payload, borrowed for as long as the datagram (not just the view).
    pub fn payload_slice(&self) -> &'a [u8] {
        let buffer: &'a [u8] = self.buffer;
        &buffer[field::PAYLOAD..self.block_len() - 2]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Block<T> {
    /// Sets the type/HC byte.
    pub fn set_type_hc(&mut self, v: u8) {
        self.buffer.as_mut()[field::TYPE_HC] = v;
    }

    /// Sets the data size.
    pub fn set_data_size(&mut self, v: u16) {
        self.buffer.as_mut()[field::DATA_SIZE].copy_from_slice(&v.to_le_bytes());
    }

    /// Sets the flags byte.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }

    /// Sets the destination.
    pub fn set_destination(&mut self, id: JausId) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&id.to_bytes());
    }

    /// Sets the source.
    pub fn set_source(&mut self, id: JausId) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&id.to_bytes());
    }

    /// Sets the sequence number (the data size must be set first).
    pub fn set_sequence(&mut self, v: u16) {
        let at = self.block_len() - 2;
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }

    /// The payload, writable (the data size must be set first).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.block_len() - 2;
        &mut self.buffer.as_mut()[field::PAYLOAD..end]
    }
}

/// The owned header of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Priority.
    pub priority: Priority,
    /// Broadcast.
    pub broadcast: Broadcast,
    /// ACK/NAK.
    pub ack_nak: AckNak,
    /// Data flags.
    pub data_flags: DataFlags,
    /// Destination.
    pub destination: JausId,
    /// Source.
    pub source: JausId,
    /// Sequence number.
    pub sequence: u16,
}

impl Header {
    /// A standard-priority, unicast, single-packet header.
    pub const fn new(destination: JausId, source: JausId, sequence: u16) -> Self {
        Self {
            priority: Priority::Standard,
            broadcast: Broadcast::None,
            ack_nak: AckNak::None,
            data_flags: DataFlags::Single,
            destination,
            source,
            sequence,
        }
    }

    /// Reads the header of a checked block.
    pub fn parse<T: AsRef<[u8]>>(block: &Block<T>) -> Self {
        Self {
            priority: block.priority(),
            broadcast: block.broadcast(),
            ack_nak: block.ack_nak(),
            data_flags: block.data_flags(),
            destination: block.destination(),
            source: block.source(),
            sequence: block.sequence(),
        }
    }

    /// The flags byte.
    pub fn flags(&self) -> u8 {
        (self.priority.raw() & 3)
            | (self.broadcast.raw() & 3) << 2
            | (self.ack_nak.raw() & 3) << 4
            | (self.data_flags.raw() & 3) << 6
    }

    /// The ACK block answering this one (§4.4): IDs swapped, same sequence number, no payload.
    pub fn ack(&self) -> Header {
        Header {
            ack_nak: AckNak::Ack,
            data_flags: DataFlags::Single,
            broadcast: Broadcast::None,
            destination: self.source,
            source: self.destination,
            ..*self
        }
    }

    /// Bytes this header and `payload_len` bytes of payload take as a block.
    pub const fn block_len(payload_len: usize) -> usize {
        BLOCK_OVERHEAD + payload_len
    }

    /// Appends one block (this header around `payload`) to `out`.
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let size = Self::block_len(payload.len());
        let size16 = u16::try_from(size).map_err(|_| {
            EncodeError::new(
                "DataSize",
                EncodeErrorKind::PayloadTooLarge {
                    len: payload.len(),
                    max: usize::from(u16::MAX) - BLOCK_OVERHEAD,
                },
            )
        })?;
        let start = out.len();
        out.resize(start + size, 0);
        let mut b = Block::new_unchecked(&mut out[start..]);
        b.set_type_hc(0);
        b.set_data_size(size16);
        b.set_flags(self.flags());
        b.set_destination(self.destination);
        b.set_source(self.source);
        b.payload_mut().copy_from_slice(payload);
        b.set_sequence(self.sequence);
        Ok(())
    }
}

/// A checked view of a whole JUDP datagram.
#[derive(Debug, Clone, Copy)]
pub struct Datagram<'a> {
    buf: &'a [u8],
}

impl<'a> Datagram<'a> {
    /// Checks the version byte; blocks are checked one by one as [`Datagram::blocks`] walks them.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, DecodeError> {
        match buf.first() {
            None => Err(DecodeError::new("Version", 0, DecodeErrorKind::Empty)),
            Some(_) if buf.starts_with(b"JAUS01.0") => Err(DecodeError::new(
                "Version",
                0,
                DecodeErrorKind::LegacyFraming,
            )),
            Some(&v) if v != VERSION => Err(DecodeError::new(
                "Version",
                0,
                DecodeErrorKind::UnsupportedVersion(v),
            )),
            Some(_) if buf.len() < 1 + BLOCK_OVERHEAD => Err(DecodeError::new(
                "JUDP header",
                1,
                DecodeErrorKind::Truncated {
                    needed: BLOCK_OVERHEAD,
                    available: buf.len() - 1,
                },
            )),
            Some(_) => Ok(Self { buf }),
        }
    }

    /// The transport version byte.
    pub fn version(&self) -> u8 {
        self.buf[0]
    }

    /// The blocks, each with its offset in the datagram. Stops after the first bad block.
    pub fn blocks(&self) -> Blocks<'a> {
        Blocks {
            buf: self.buf,
            pos: 1,
            done: false,
            tolerant: false,
        }
    }

    /// [`Datagram::blocks`], tolerating an ACK/NAK block that carries a payload (§9 C11): its
    /// payload is skipped by the data size and the next block decoded. Receivers use this and
    /// count [`Block::ack_payload_len`] `> 0` as a tolerated deviation.
    pub fn blocks_tolerant(&self) -> Blocks<'a> {
        Blocks {
            tolerant: true,
            ..self.blocks()
        }
    }
}

/// One block of a datagram and where it starts.
#[derive(Debug, Clone, Copy)]
pub struct BlockAt<'a> {
    /// Offset of the block's first byte in the datagram.
    pub offset: usize,
    /// The block.
    pub block: Block<&'a [u8]>,
}

impl BlockAt<'_> {
    /// Offset of the payload in the datagram.
    pub fn payload_offset(&self) -> usize {
        self.offset + field::PAYLOAD
    }
}

/// Iterator over the blocks of a datagram (allocates nothing).
#[derive(Debug, Clone)]
pub struct Blocks<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
    tolerant: bool,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Result<BlockAt<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.buf.len() {
            return None;
        }
        let offset = self.pos;
        let block = Block::new_unchecked(&self.buf[offset..]);
        let checked = if self.tolerant {
            block.check_len_tolerant()
        } else {
            block.check_len()
        };
        match checked.map(|()| block) {
            Ok(block) => {
                self.pos += block.block_len();
                Some(Ok(BlockAt { offset, block }))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.shifted(offset)))
            }
        }
    }
}

/// Builds a datagram block by block.
#[derive(Debug, Clone)]
pub struct DatagramWriter {
    buf: Vec<u8>,
}

impl Default for DatagramWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl DatagramWriter {
    /// A datagram holding only the version byte.
    pub fn new() -> Self {
        Self { buf: vec![VERSION] }
    }

    /// Appends one block.
    pub fn push(&mut self, header: &Header, payload: &[u8]) -> Result<(), EncodeError> {
        header.emit(payload, &mut self.buf)
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether only the version byte is there.
    pub fn is_empty(&self) -> bool {
        self.buf.len() <= 1
    }

    /// The datagram.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// One datagram carrying one message in one block.
pub fn single(header: &Header, message: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let mut w = DatagramWriter::new();
    w.push(header, message)?;
    Ok(w.finish())
}

/// Cuts `message` into blocks of at most `max_payload` bytes: one Single block when it fits,
/// otherwise First, Middle…, Last with consecutive sequence numbers from `header.sequence`
/// and the message ID only at the start of the first fragment (§4.6, the majority form).
/// Returns the headers with their payload slices; the caller sends one block per datagram.
pub fn fragment<'m>(
    header: &Header,
    message: &'m [u8],
    max_payload: usize,
) -> Vec<(Header, &'m [u8])> {
    let max_payload = max_payload.clamp(1, MAX_BLOCK_PAYLOAD);
    if message.len() <= max_payload {
        return vec![(
            Header {
                data_flags: DataFlags::Single,
                ..*header
            },
            message,
        )];
    }
    let chunks: Vec<&[u8]> = message.chunks(max_payload).collect();
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let data_flags = match i {
                0 => DataFlags::First,
                i if i == last => DataFlags::Last,
                _ => DataFlags::Middle,
            };
            let h = Header {
                data_flags,
                sequence: header.sequence.wrapping_add(i as u16),
                ..*header
            };
            (h, chunk)
        })
        .collect()
}

/// Whether a datagram-level error means another JUDP version or framing (not garbage).
pub fn is_foreign(e: &DecodeError) -> bool {
    matches!(
        e.kind,
        DecodeErrorKind::UnsupportedVersion(_) | DecodeErrorKind::LegacyFraming
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: JausId = JausId::new(126, 1, 20);
    const S: JausId = JausId::new(126, 1, 10);

    #[test]
    fn parses_pcap_request_control_header() {
        let d = [
            0x02, 0x00, 0x11, 0x00, 0x19, 0x0a, 0x01, 0x7e, 0x00, 0x14, 0x01, 0x7e, 0x00, 0x0d,
            0x00, 0xc8, 0x01, 0x00,
        ];
        let dg = Datagram::new_checked(&d).unwrap();
        let blocks: Vec<_> = dg.blocks().collect::<Result<_, _>>().unwrap();
        assert_eq!(blocks.len(), 1);
        let b = &blocks[0].block;
        assert_eq!(b.data_size(), 17);
        assert_eq!(b.priority(), Priority::Standard);
        assert_eq!(b.broadcast(), Broadcast::Global);
        assert_eq!(b.ack_nak(), AckNak::Request);
        assert_eq!(b.data_flags(), DataFlags::Single);
        assert_eq!(b.destination(), S);
        assert_eq!(b.source(), C);
        assert_eq!(b.payload(), &[0x0d, 0x00, 0xc8]);
        assert_eq!(b.sequence(), 1);
        // Re-emit byte for byte.
        let h = Header::parse(b);
        assert_eq!(single(&h, b.payload()).unwrap(), d);
    }

    #[test]
    fn ack_answers_with_swapped_ids_and_same_sequence() {
        let h = Header {
            ack_nak: AckNak::Request,
            broadcast: Broadcast::Global,
            ..Header::new(S, C, 1)
        };
        let ack = single(&h.ack(), &[]).unwrap();
        assert_eq!(
            ack,
            [
                0x02, 0x00, 0x0e, 0x00, 0x31, 0x14, 0x01, 0x7e, 0x00, 0x0a, 0x01, 0x7e, 0x00, 0x01,
                0x00
            ]
        );
    }

    #[test]
    fn rejects_other_versions_and_legacy_framing() {
        assert_eq!(
            Datagram::new_checked(&[]).unwrap_err().kind,
            DecodeErrorKind::Empty
        );
        assert_eq!(
            Datagram::new_checked(&[1; 20]).unwrap_err().kind,
            DecodeErrorKind::UnsupportedVersion(1)
        );
        assert_eq!(
            Datagram::new_checked(b"JAUS01.0 and more bytes")
                .unwrap_err()
                .kind,
            DecodeErrorKind::LegacyFraming
        );
    }

    #[test]
    fn rejects_data_size_beyond_datagram_with_offset() {
        let mut d = single(&Header::new(S, C, 1), &[0x02, 0x20]).unwrap();
        d[2] = 0x40;
        let e = Datagram::new_checked(&d)
            .unwrap()
            .blocks()
            .next()
            .unwrap()
            .unwrap_err();
        assert!(matches!(
            e.kind,
            DecodeErrorKind::BadDataSize { size: 0x40, .. }
        ));
        assert_eq!(e.offset, 2);
    }

    #[test]
    fn rejects_header_compression_and_ack_with_payload() {
        let mut d = single(&Header::new(S, C, 1), &[0x02, 0x20]).unwrap();
        d[1] = 0x01;
        let e = Datagram::new_checked(&d)
            .unwrap()
            .blocks()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::UnsupportedMessageType(1));
        let ack_with_payload = single(&Header::new(S, C, 1).ack(), &[1, 2]).unwrap();
        let e = Datagram::new_checked(&ack_with_payload)
            .unwrap()
            .blocks()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::AckWithPayload(2));
    }

    #[test]
    fn walks_several_blocks_in_one_datagram() {
        let mut w = DatagramWriter::new();
        w.push(&Header::new(C, S, 6), &[0xf3, 0x01, 7, 0, 0x2c, 0x01])
            .unwrap();
        w.push(
            &Header::new(C, S, 7),
            &[0xf1, 0x41, 0, 0, 2, 0, 0, 0, 0x02, 0x42],
        )
        .unwrap();
        let d = w.finish();
        let blocks: Vec<_> = Datagram::new_checked(&d)
            .unwrap()
            .blocks()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1].offset, 1 + 14 + 6);
        assert_eq!(blocks[1].block.sequence(), 7);
    }
}
