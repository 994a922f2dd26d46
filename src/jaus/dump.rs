//! Renderings of decoded datagrams for people and tools: the JSON shape of `jaus-ocu decode
//! --json` / `inspect --json`, and the one-line-per-block human dump. Pure functions.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::error::DecodeError;
use super::judp::{AckNak, Broadcast, DataFlags, Datagram, Header, Priority};
use super::message::{Message, hex_string};
use super::wire::DecodeContext;

/// The caller's stateful multi-packet reassembly: takes one fragment (header and payload),
/// returns the message it completes, if any.
pub type Defragment<'a> = &'a mut dyn FnMut(&Header, &[u8]) -> Option<Vec<u8>>;

/// One block of a datagram, decoded as far as it goes.
#[derive(Debug, Clone)]
pub struct DecodedBlock {
    /// Offset of the block in the datagram.
    pub offset: usize,
    /// Its header.
    pub header: Header,
    /// Its payload bytes.
    pub payload: Vec<u8>,
    /// The message: `None` for ACK/NAK blocks and fragments, `Some(Err)` when it did not decode.
    pub message: Option<Result<Message, DecodeError>>,
    /// A message completed by this fragment (multi-packet reassembly), when a reassembler is used.
    pub reassembled: Option<Result<Message, DecodeError>>,
}

/// A datagram decoded as far as it goes: the blocks that framed, then the framing error if any.
#[derive(Debug, Clone)]
pub struct DecodedDatagram {
    /// Transport version.
    pub version: u8,
    /// The blocks that framed correctly.
    pub blocks: Vec<DecodedBlock>,
    /// The framing error that stopped the walk, if any.
    pub error: Option<DecodeError>,
}

/// Decodes a datagram. A datagram-level error (version, empty) is `Err`; errors inside a block
/// are kept with the block so nothing decodable is lost. With a `reassembler` (the caller's
/// stateful fragment sink, e.g. `net::reassembly::Reassembler::defragmenter`), each
/// multi-packet fragment is handed to it and a message it completes is attached to the
/// fragment that completed it.
pub fn decode_datagram(
    buf: &[u8],
    ctx: &DecodeContext,
    mut reassembler: Option<Defragment<'_>>,
) -> Result<DecodedDatagram, DecodeError> {
    let dg = Datagram::new_checked(buf)?;
    let mut blocks = Vec::new();
    let mut error = None;
    // An ACK carrying a payload is shown, not an error (§9 C11; the receivers count it).
    for b in dg.blocks_tolerant() {
        let b = match b {
            Ok(b) => b,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        let header = Header::parse(&b.block);
        let payload = b.block.payload();
        let is_ack = matches!(header.ack_nak, AckNak::Ack | AckNak::Nak);
        let message = if is_ack || header.data_flags != DataFlags::Single {
            None
        } else {
            Some(Message::parse_at(payload, b.payload_offset(), ctx))
        };
        let reassembled = match (&mut reassembler, header.data_flags) {
            (Some(push), DataFlags::First | DataFlags::Middle | DataFlags::Last) => {
                push(&header, payload).map(|m| Message::parse_with(&m, ctx))
            }
            _ => None,
        };
        blocks.push(DecodedBlock {
            offset: b.offset,
            header,
            payload: payload.to_vec(),
            message,
            reassembled,
        });
    }
    Ok(DecodedDatagram {
        version: dg.version(),
        blocks,
        error,
    })
}

fn error_json(e: &DecodeError) -> Value {
    json!({ "error": e.to_string(), "offset": e.offset })
}

fn message_result_json(
    m: &Result<Message, DecodeError>,
    payload: &[u8],
) -> (Value, Map<String, Value>) {
    match m {
        Ok(m) => (m.to_json(), Map::new()),
        Err(e) => {
            let mut extra = Map::new();
            extra.insert("error".into(), e.to_string().into());
            extra.insert("offset".into(), e.offset.into());
            extra.insert("payload".into(), hex_string(payload).into());
            (Value::Null, extra)
        }
    }
}

impl DecodedBlock {
    /// The block as JSON: header fields (flags as their wire numbers), then `message`.
    pub fn to_json(&self) -> Value {
        let h = &self.header;
        let mut o = Map::new();
        o.insert("offset".into(), self.offset.into());
        o.insert("priority".into(), h.priority.raw().into());
        o.insert("broadcast".into(), h.broadcast.raw().into());
        o.insert("ack_nak".into(), h.ack_nak.raw().into());
        o.insert("data_flags".into(), h.data_flags.raw().into());
        o.insert("destination".into(), h.destination.to_string().into());
        o.insert("source".into(), h.source.to_string().into());
        o.insert("sequence".into(), h.sequence.into());
        match &self.message {
            Some(m) => {
                let (msg, extra) = message_result_json(m, &self.payload);
                o.insert("message".into(), msg);
                o.extend(extra);
            }
            None => {
                o.insert("message".into(), Value::Null);
                if h.data_flags != DataFlags::Single {
                    let mut f = Map::new();
                    f.insert("bytes".into(), self.payload.len().into());
                    if h.data_flags == DataFlags::First && self.payload.len() >= 2 {
                        let id = u16::from_le_bytes([self.payload[0], self.payload[1]]);
                        f.insert("message_id".into(), format!("0x{id:04X}").into());
                    }
                    o.insert("fragment".into(), Value::Object(f));
                }
            }
        }
        if let Some(r) = &self.reassembled {
            let v = match r {
                Ok(m) => m.to_json(),
                Err(e) => error_json(e),
            };
            o.insert("reassembled".into(), v);
        }
        Value::Object(o)
    }

    /// One line for people: addresses, sequence, unusual flags, message and fields.
    pub fn to_line(&self) -> String {
        let h = &self.header;
        let mut s = format!("{} -> {} seq {}", h.source, h.destination, h.sequence);
        let mut flags = Vec::new();
        if h.priority != Priority::Standard {
            flags.push(format!("prio={}", h.priority));
        }
        if h.broadcast != Broadcast::None {
            flags.push(format!("bcast={}", h.broadcast));
        }
        if h.ack_nak != AckNak::None {
            flags.push(format!("ack={}", h.ack_nak));
        }
        if h.data_flags != DataFlags::Single {
            flags.push(format!(
                "fragment={} ({} bytes)",
                h.data_flags,
                self.payload.len()
            ));
        }
        if !flags.is_empty() {
            let _ = write!(s, " [{}]", flags.join(" "));
        }
        match &self.message {
            Some(Ok(m)) => {
                s.push_str("  ");
                s.push_str(&message_line(m));
            }
            Some(Err(e)) => {
                let _ = write!(
                    s,
                    "  UNDECODABLE {e}; payload {}",
                    hex_string(&self.payload)
                );
            }
            None if matches!(h.ack_nak, AckNak::Ack | AckNak::Nak) => {
                let _ = write!(s, "  {}", h.ack_nak);
            }
            None => {}
        }
        match &self.reassembled {
            Some(Ok(m)) => {
                let _ = write!(s, "  => reassembled {}", message_line(m));
            }
            Some(Err(e)) => {
                let _ = write!(s, "  => reassembled message UNDECODABLE {e}");
            }
            None => {}
        }
        s
    }
}

/// `Name (0xIDID) field=value ...` with nested values as compact JSON.
pub fn message_line(m: &Message) -> String {
    let mut s = format!("{} (0x{:04X})", m.name(), m.id());
    if let Value::Object(o) = m.to_json() {
        for (k, v) in o.iter().filter(|(k, _)| *k != "id" && *k != "name") {
            let v = match v {
                Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            let _ = write!(s, " {k}={v}");
        }
    }
    s
}

impl DecodedDatagram {
    /// `{"version": 2, "blocks": [...]}`, plus `error`/`offset` when framing stopped early.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("version".into(), self.version.into());
        o.insert(
            "blocks".into(),
            self.blocks.iter().map(DecodedBlock::to_json).collect(),
        );
        if let Some(e) = &self.error {
            o.insert("error".into(), e.to_string().into());
            o.insert("offset".into(), e.offset.into());
        }
        Value::Object(o)
    }

    /// One line per block, then a line for the framing error if any.
    pub fn to_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.blocks.iter().map(DecodedBlock::to_line).collect();
        if let Some(e) = &self.error {
            lines.push(format!("FRAMING ERROR {e}"));
        }
        lines
    }

    /// Whether every block framed and decoded.
    pub fn is_clean(&self) -> bool {
        self.error.is_none()
            && self
                .blocks
                .iter()
                .all(|b| !matches!(b.message, Some(Err(_))))
    }
}

/// The JSON for a datagram that could not be decoded at all.
pub fn datagram_error_json(e: &DecodeError) -> Value {
    error_json(e)
}
