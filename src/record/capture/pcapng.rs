//! Reading pcapng: length-prefixed blocks in sections of their own byte order, interfaces
//! with their own link type and timestamp resolution, three kinds of packet block. (Writing
//! pcapng is [`crate::record::pcapng`].)

use std::io::Read;

use super::input::{Endian, Input, Part};
use super::{CaptureError, MAX_FRAME_LEN, Record};
use crate::record::pcapng::block as block_type;

/// How many pcapng interfaces are remembered; each costs memory, and a file of nothing but
/// interface descriptions must not grow the reader without bound.
const MAX_INTERFACES: usize = 1024;

/// The byte-order magic as a little- and a big-endian section writes it.
const MAGIC_LE: [u8; 4] = block_type::BYTE_ORDER_MAGIC.to_le_bytes();
const MAGIC_BE: [u8; 4] = block_type::BYTE_ORDER_MAGIC.to_be_bytes();

/// The state of a pcapng section: its byte order and the interfaces described so far.
pub(super) struct NgState {
    pub(super) endian: Endian,
    /// `None` for an interface whose description block is malformed.
    pub(super) interfaces: Vec<Option<Interface>>,
    /// Interfaces described in this section, including any beyond [`MAX_INTERFACES`].
    pub(super) described: u64,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Interface {
    pub(super) link_type: u32,
    pub(super) snaplen: u32,
    /// The raw `if_tsresol` option: bit 7 clear means 10^-n seconds, set means 2^-n.
    pub(super) resolution: u8,
    /// The `if_tsoffset` option: seconds to add to every timestamp.
    pub(super) offset_seconds: i64,
}

impl Interface {
    /// Converts a pcapng timestamp to seconds since the epoch, keeping the whole seconds exact
    /// before going to floating point.
    pub(super) fn seconds(&self, timestamp: u64) -> f64 {
        let exponent = u32::from(self.resolution & 0x7f);
        let units = if self.resolution & 0x80 == 0 {
            10u64.checked_pow(exponent)
        } else {
            1u64.checked_shl(exponent)
        };
        let seconds = match units {
            Some(units) => (timestamp / units) as f64 + (timestamp % units) as f64 / units as f64,
            // A resolution finer than a u64 can count: only the float can represent it.
            None if self.resolution & 0x80 == 0 => {
                timestamp as f64 * 10f64.powi(-(exponent as i32))
            }
            None => timestamp as f64 * 2f64.powi(-(exponent as i32)),
        };
        seconds + self.offset_seconds as f64
    }
}

/// Reads the rest of a pcapng Section Header Block, whose first 12 bytes (type, length, byte
/// order magic) have been read, and returns the section's byte order.
pub(super) fn read_section_header<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    frame: u64,
    offset: u64,
    length: [u8; 4],
    byte_order: [u8; 4],
) -> Result<Endian, CaptureError> {
    // The byte-order magic is what tells how to read every other field, the length included.
    let endian = match byte_order {
        MAGIC_LE => Endian::Little,
        MAGIC_BE => Endian::Big,
        other => {
            return Err(CaptureError::Corrupt {
                frame,
                offset,
                reason: format!(
                    "section header byte-order magic is 0x{:08x}, not 0x1a2b3c4d",
                    u32::from_be_bytes(other)
                ),
            });
        }
    };
    let length = endian.u32(length);
    // Type, length, byte-order magic, version (4), section length (8), trailing length.
    check_block_length(length, 28, frame, offset)?;
    let rest = length as usize - 12;
    let part = Part {
        frame,
        offset,
        what: "section header block says",
        needed: u64::from(length),
        before: 12,
    };
    input.fill_vec(buf, rest, part)?;
    check_trailer(buf, endian, length, frame, offset)?;
    Ok(endian)
}

/// Rejects block lengths that break pcapng framing before any data is read for them.
fn check_block_length(
    length: u32,
    minimum: u32,
    frame: u64,
    offset: u64,
) -> Result<(), CaptureError> {
    let reason = if length < minimum {
        format!("block length {length} is less than the {minimum}-byte minimum")
    } else if !length.is_multiple_of(4) {
        format!("block length {length} is not a multiple of 4")
    } else if length > MAX_FRAME_LEN + 1024 {
        format!("block length {length} is more than the {MAX_FRAME_LEN}-byte limit")
    } else {
        return Ok(());
    };
    Err(CaptureError::Corrupt {
        frame,
        offset,
        reason,
    })
}

/// Checks that a block's trailing length (the last 4 bytes of `rest`) repeats its leading one:
/// a mismatch means the framing is lost.
fn check_trailer(
    rest: &[u8],
    endian: Endian,
    length: u32,
    frame: u64,
    offset: u64,
) -> Result<(), CaptureError> {
    let trailer = rest
        .len()
        .checked_sub(4)
        .and_then(|at| endian.u32_at(rest, at));
    if trailer == Some(length) {
        return Ok(());
    }
    Err(CaptureError::Corrupt {
        frame,
        offset,
        reason: format!(
            "block trailing length {} differs from its leading length {length}",
            trailer.map_or_else(|| "(missing)".to_string(), |t| t.to_string())
        ),
    })
}

fn block_name(block: u32) -> &'static str {
    match block {
        block_type::INTERFACE_DESCRIPTION => "interface description block says",
        block_type::PACKET => "packet block says",
        block_type::SIMPLE_PACKET => "simple packet block says",
        block_type::ENHANCED_PACKET => "enhanced packet block says",
        _ => "block header says",
    }
}

/// Reads pcapng blocks up to the next packet; `None` at a clean end of file.
pub(super) fn read_pcapng_record<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    ng: &mut NgState,
    frame: u64,
    last_time: f64,
) -> Result<Option<Record>, CaptureError> {
    loop {
        let offset = input.offset;
        let mut header = [0; 8];
        let part = Part {
            frame,
            offset,
            what: "block header needs",
            needed: 8,
            before: 0,
        };
        if !input.fill_or_end(&mut header, part)? {
            return Ok(None);
        }
        let block = ng.endian.u32([header[0], header[1], header[2], header[3]]);
        let length = [header[4], header[5], header[6], header[7]];
        if block == block_type::SECTION_HEADER {
            // A new section may switch byte order and starts a fresh list of interfaces.
            let mut order = [0; 4];
            let part = Part {
                what: "section header block needs",
                needed: 12,
                before: 8,
                ..part
            };
            input.fill(&mut order, part)?;
            ng.endian = read_section_header(input, buf, frame, offset, length, order)?;
            ng.interfaces.clear();
            ng.described = 0;
            continue;
        }
        let length = ng.endian.u32(length);
        check_block_length(length, 12, frame, offset)?;
        let rest = length as usize - 8;
        let part = Part {
            what: block_name(block),
            needed: u64::from(length),
            before: 8,
            ..part
        };
        input.fill_vec(buf, rest, part)?;
        check_trailer(buf, ng.endian, length, frame, offset)?;
        let body = rest - 4;
        match block {
            block_type::INTERFACE_DESCRIPTION => {
                let interface = buf.get(..body).and_then(|b| parse_interface(b, ng.endian));
                if ng.interfaces.len() < MAX_INTERFACES {
                    ng.interfaces.push(interface);
                }
                ng.described += 1;
            }
            block_type::ENHANCED_PACKET | block_type::PACKET => {
                return Ok(Some(packet_block(buf, body, block, ng, last_time)));
            }
            block_type::SIMPLE_PACKET => {
                return Ok(Some(simple_packet_block(buf, body, ng, last_time)));
            }
            // Name resolution, statistics, journal, custom...: nothing a datagram needs.
            _ => {}
        }
    }
}

/// Reads an Interface Description Block body; `None` if it is too short to hold its fields.
fn parse_interface(body: &[u8], endian: Endian) -> Option<Interface> {
    let mut interface = Interface {
        link_type: u32::from(endian.u16_at(body, 0)?),
        snaplen: endian.u32_at(body, 4)?,
        resolution: 6,
        offset_seconds: 0,
    };
    // Options: code (2), length (2), value padded to 4 bytes; code 0 ends the list.
    let mut at = 8usize;
    while let (Some(code), Some(len)) = (endian.u16_at(body, at), endian.u16_at(body, at + 2)) {
        let len = usize::from(len);
        let Some(value) = body.get(at + 4..at + 4 + len) else {
            break;
        };
        match (code, value) {
            (0, _) => break,
            (9, &[resolution]) => interface.resolution = resolution,
            (14, _) if len == 8 => {
                interface.offset_seconds = endian.u64_at(value, 0).unwrap_or(0) as i64;
            }
            _ => {}
        }
        at += 4 + len.next_multiple_of(4);
    }
    Some(interface)
}

/// Looks up the interface a packet block refers to, or says why it cannot.
fn interface(ng: &NgState, id: u32) -> Result<Interface, String> {
    match ng.interfaces.get(id as usize) {
        Some(Some(interface)) => Ok(*interface),
        Some(None) => Err(format!("interface {id} has a malformed description block")),
        None if u64::from(id) < ng.described => Err(format!(
            "interface {id} is beyond the {MAX_INTERFACES} interfaces this reader tracks"
        )),
        None => Err(format!("interface {id} has no interface description block")),
    }
}

/// Reads an Enhanced Packet Block or an obsolete Packet Block from `buf[..body]`.
fn packet_block(buf: &[u8], body: usize, block: u32, ng: &NgState, last_time: f64) -> Record {
    let e = ng.endian;
    let bytes = buf.get(..body).unwrap_or_default();
    let bad = |reason| Record::Bad {
        time: last_time,
        reason,
    };
    // Interface (4, or 2 + 2 drop count in the obsolete block), timestamp high (4) and low (4),
    // captured length (4), original length (4), data.
    let id = if block == block_type::PACKET {
        e.u16_at(bytes, 0).map(u32::from)
    } else {
        e.u32_at(bytes, 0)
    };
    let fields = (
        id,
        e.u32_at(bytes, 4),
        e.u32_at(bytes, 8),
        e.u32_at(bytes, 12),
        e.u32_at(bytes, 16),
    );
    let (Some(id), Some(high), Some(low), Some(captured), Some(original_len)) = fields else {
        return bad(format!(
            "packet block body is {body} bytes, shorter than its 20-byte header"
        ));
    };
    let interface = match interface(ng, id) {
        Ok(interface) => interface,
        Err(reason) => return bad(reason),
    };
    let time = interface.seconds((u64::from(high) << 32) | u64::from(low));
    let available = body - 20;
    if captured as usize > available {
        return Record::Bad {
            time,
            reason: format!("packet block says {captured} captured bytes, but holds {available}"),
        };
    }
    Record::Frame {
        time,
        link_type: interface.link_type,
        data: 20..20 + captured as usize,
        original_len,
    }
}

/// Reads a Simple Packet Block: interface 0, no timestamp, captured length implied.
fn simple_packet_block(buf: &[u8], body: usize, ng: &NgState, last_time: f64) -> Record {
    let bad = |reason| Record::Bad {
        time: last_time,
        reason,
    };
    let Some(original_len) = ng.endian.u32_at(buf, 0).filter(|_| body >= 4) else {
        return bad(format!(
            "simple packet block body is {body} bytes, shorter than its 4-byte header"
        ));
    };
    let interface = match interface(ng, 0) {
        Ok(interface) => interface,
        Err(reason) => return bad(reason),
    };
    // The data is padded to 4 bytes, so the real length is the original length, cut to the
    // interface's snapshot length (0 means none).
    let mut captured = (body - 4).min(original_len as usize);
    if interface.snaplen != 0 {
        captured = captured.min(interface.snaplen as usize);
    }
    // No timestamp in the block: reuse the previous frame's so times stay ordered.
    Record::Frame {
        time: last_time,
        link_type: interface.link_type,
        data: 4..4 + captured,
        original_len,
    }
}
