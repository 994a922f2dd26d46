//! Streams an MCAP recording: the summary first (time range, datagram count, metadata), then
//! the data section front to back, chunk by chunk, each through its own sans-I/O reader, with
//! the byte offset of every top-level record for the problems and the stop it reports.

use std::fs::File;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;

use mcap::read::parse_record;
use mcap::records::{Record, op};
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

use super::{Log, MAX_RECORD_LEN, MCAP_MAGIC, SourceInfo};
use crate::net::tap::{Direction, WireRecord};
use crate::record::format;

/// Bytes asked of the file per read.
const READ_SIZE: usize = 1024 * 1024;

/// Most metadata records read through the summary's index when a file is opened (jaus-ocu
/// writes three); the rest are still merged as the data section is read.
const MAX_METADATA_RECORDS: usize = 64;
/// Most bytes of metadata records read through the summary's index when a file is opened.
const MAX_METADATA_BYTES: u64 = 1 << 20;
/// The largest summary section read at open (a one-hour 1 kHz recording has well under 1 MiB).
const MAX_SUMMARY_LEN: u64 = 64 * 1024 * 1024;

/// What a channel's messages are.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ChannelKind {
    /// No channel record seen (yet).
    Unknown,
    /// Messages on an unknown channel were met and reported; skip the rest silently.
    Reported,
    /// A raw datagram channel.
    Raw(Direction, SocketAddr),
    /// The operator's notes ([`format::NOTES_TOPIC`]).
    Notes,
    /// Anything else (decoded JSON, foreign topics).
    Other,
}

/// The chunk being read: its own sans-I/O reader holding the whole chunk record.
pub(super) struct Chunk {
    reader: LinearReader,
    /// Byte offset of the chunk record in the file.
    offset: u64,
    /// Its length, opcode and length fields included.
    len: u64,
}

/// Streams an MCAP file.
pub(super) struct McapReader {
    file: File,
    /// Reads the top level of the file, handing over chunks whole.
    outer: LinearReader,
    pub(super) chunk: Option<Chunk>,
    /// Channels by ID.
    channels: Vec<ChannelKind>,
    /// Offset of the next top-level record: everything before it has been handled.
    pub(super) offset: u64,
    /// Bytes given to `outer` so far.
    fed: u64,
    /// File size, refreshed when a record seems to reach past it.
    total: u64,
    /// The data section ended (or reading stopped).
    done: bool,
}

impl McapReader {
    /// Reads the summary, if the file has one, into `info` and the channel table.
    pub(super) fn open(file: File, info: &mut SourceInfo, log: &mut Log) -> McapReader {
        let mut m = McapReader {
            file,
            outer: LinearReader::new_with_options(
                LinearReaderOptions::default()
                    .with_emit_chunks(true)
                    .with_record_length_limit(MAX_RECORD_LEN),
            ),
            chunk: None,
            channels: Vec::new(),
            // The outer reader checks the magic itself; records start after it.
            offset: MCAP_MAGIC.len() as u64,
            fed: 0,
            total: info.total_bytes,
            done: false,
        };
        if let Err(why) = m.read_summary(info) {
            log.problem(format!(
                "the summary at the end of the file is unreadable ({why}); reading the whole \
                 file instead"
            ));
        }
        m
    }

    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let end = offset.checked_add(len).filter(|&e| e <= self.total);
        if end.is_none() {
            return Err(format!(
                "{len} bytes at byte {offset} reach past the end of the file ({} bytes)",
                self.total
            ));
        }
        let mut buf = vec![0; len as usize];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| format!("reading {len} bytes at byte {offset}: {e}"))?;
        Ok(buf)
    }

    /// The footer, then the summary section it points to: channels, statistics, metadata
    /// (through the metadata indexes). A file without footer (killed recorder) is not an
    /// error: `info.complete` stays false.
    fn read_summary(&mut self, info: &mut SourceInfo) -> Result<(), String> {
        // Footer record: opcode, length (20), summary start, summary offset start, CRC; then
        // the magic.
        const FOOTER_LEN: u64 = 1 + 8 + 20;
        let tail_len = FOOTER_LEN + MCAP_MAGIC.len() as u64;
        if self.total < MCAP_MAGIC.len() as u64 + tail_len {
            return Ok(());
        }
        let footer_at = self.total - tail_len;
        let tail = self.read_at(footer_at, tail_len)?;
        if &tail[FOOTER_LEN as usize..] != MCAP_MAGIC
            || tail[0] != op::FOOTER
            || tail[1..9] != 20u64.to_le_bytes()
        {
            return Ok(());
        }
        info.complete = true;
        let summary_start = u64::from_le_bytes(tail[9..17].try_into().unwrap_or_default());
        if summary_start == 0 {
            return Ok(());
        }
        if summary_start < MCAP_MAGIC.len() as u64 || summary_start > footer_at {
            return Err(format!(
                "the footer puts it at byte {summary_start}, outside the file"
            ));
        }
        if footer_at - summary_start > MAX_SUMMARY_LEN {
            return Err(format!(
                "it is {} bytes long, more than the {MAX_SUMMARY_LEN} read at open",
                footer_at - summary_start
            ));
        }
        let summary = self.read_at(summary_start, footer_at - summary_start)?;
        let mut stats = None;
        let mut metadata_indexes = Vec::new();
        let mut pos = 0usize;
        while pos < summary.len() {
            let at = summary_start + pos as u64;
            let (opcode, body) = split_record(&summary[pos..])
                .ok_or_else(|| format!("the record at byte {at} runs past the summary"))?;
            pos += 9 + body.len();
            let record = parse_record(opcode, body)
                .map_err(|e| format!("the record at byte {at} does not parse: {e}"))?;
            match record {
                Record::Channel(c) => {
                    let kind = channel_kind(&c);
                    self.set_channel(c.id, kind);
                }
                Record::Statistics(s) => stats = Some(s),
                Record::MetadataIndex(i) => metadata_indexes.push(i),
                _ => {}
            }
        }
        // A hostile index could point at thousands of huge records; this runs on the
        // caller's thread (the UI's when a file is opened), so read a bounded amount.
        let mut budget = MAX_METADATA_BYTES;
        for index in metadata_indexes.into_iter().take(MAX_METADATA_RECORDS) {
            let length = index.length.min(budget);
            if length == 0 {
                break;
            }
            budget -= length;
            let bytes = self.read_at(index.offset, length)?;
            let Some((op::METADATA, body)) = split_record(&bytes) else {
                return Err(format!(
                    "its metadata index \"{}\" points at byte {}, where there is no metadata \
                     record",
                    index.name, index.offset
                ));
            };
            if let Ok(Record::Metadata(m)) = parse_record(op::METADATA, body) {
                info.metadata.entry(m.name).or_default().extend(m.metadata);
            }
        }
        if let Some(s) = stats {
            if s.message_count > 0 {
                info.start_ns = Some(s.message_start_time);
                info.end_ns = Some(s.message_end_time);
            }
            info.datagram_count = Some(
                s.channel_message_counts
                    .iter()
                    .filter(|(id, _)| matches!(self.channel(**id), ChannelKind::Raw(..)))
                    .map(|(_, n)| n)
                    .sum(),
            );
        }
        Ok(())
    }

    fn channel(&self, id: u16) -> ChannelKind {
        self.channels
            .get(usize::from(id))
            .copied()
            .unwrap_or(ChannelKind::Unknown)
    }

    fn set_channel(&mut self, id: u16, kind: ChannelKind) {
        let i = usize::from(id);
        if self.channels.len() <= i {
            self.channels.resize(i + 1, ChannelKind::Unknown);
        }
        self.channels[i] = kind;
    }

    pub(super) fn next(&mut self, info: &mut SourceInfo, log: &mut Log) -> Option<WireRecord> {
        loop {
            if let Some(chunk) = &mut self.chunk {
                match chunk.reader.next_event() {
                    None => self.chunk = None,
                    // The whole chunk record was given to the reader: wanting more means the
                    // chunk is over (or ends inside a record, which the end of input reports).
                    Some(Ok(LinearReadEvent::ReadRequest(_))) => chunk.reader.notify_read(0),
                    Some(Ok(LinearReadEvent::Record { opcode, data })) => {
                        if let Some(rec) =
                            record(&mut self.channels, opcode, data, chunk.offset, log)
                        {
                            return Some(rec);
                        }
                    }
                    Some(Err(e)) => {
                        log.problem(format!(
                            "the chunk at byte {} ({} bytes) is damaged ({e}): skipped, its \
                             datagrams are lost",
                            chunk.offset, chunk.len
                        ));
                        self.chunk = None;
                    }
                }
                continue;
            }
            if self.done {
                return None;
            }
            match self.outer.next_event() {
                None => self.done = true,
                Some(Ok(LinearReadEvent::ReadRequest(need))) => {
                    let remaining = self.total.saturating_sub(self.fed);
                    if need as u64 > remaining {
                        // The file may have grown since it was opened (a live recording).
                        self.total = self.file.metadata().map_or(self.total, |m| m.len());
                    }
                    let remaining = self.total.saturating_sub(self.fed);
                    if need as u64 > remaining {
                        // Cut: the record in progress cannot complete.
                        self.outer.notify_read(0);
                        continue;
                    }
                    let want = need.max(READ_SIZE).min(remaining as usize);
                    let buf = self.outer.insert(want);
                    let got = loop {
                        match self.file.read_at(buf, self.fed) {
                            Err(e) if e.kind() == ErrorKind::Interrupted => {}
                            other => break other,
                        }
                    };
                    match got {
                        Ok(n) => {
                            self.outer.notify_read(n);
                            self.fed += n as u64;
                        }
                        Err(e) => {
                            self.outer.notify_read(0);
                            self.stop(log, &format!("read error at byte {}: {e}", self.fed));
                        }
                    }
                }
                Some(Ok(LinearReadEvent::Record { opcode, data })) => {
                    let at = self.offset;
                    self.offset += 9 + data.len() as u64;
                    match opcode {
                        op::CHUNK => {
                            // The chunk's own reader gets the chunk record as a one-record
                            // stream and checks its CRC before yielding anything from it.
                            let mut reader = LinearReader::new_with_options(
                                LinearReaderOptions::default()
                                    .with_skip_start_magic(true)
                                    .with_skip_end_magic(true)
                                    .with_prevalidate_chunk_crcs(true)
                                    .with_record_length_limit(MAX_RECORD_LEN),
                            );
                            let len = 9 + data.len();
                            let buf = reader.insert(len);
                            buf[0] = opcode;
                            buf[1..9].copy_from_slice(&(data.len() as u64).to_le_bytes());
                            buf[9..].copy_from_slice(data);
                            reader.notify_read(len);
                            self.chunk = Some(Chunk {
                                reader,
                                offset: at,
                                len: len as u64,
                            });
                        }
                        op::DATA_END | op::FOOTER => self.done = true,
                        op::METADATA => match parse_record(opcode, data) {
                            Ok(Record::Metadata(m)) => {
                                info.metadata.entry(m.name).or_default().extend(m.metadata);
                            }
                            _ => log.problem(format!(
                                "the metadata record at byte {at} does not parse: skipped"
                            )),
                        },
                        // Records replay does not need; and private records (0x80 and up), someone's
                        // extension, ignored as the specification says. A reserved opcode is
                        // more likely damage (the last arm).
                        op::HEADER
                        | op::SCHEMA
                        | op::MESSAGE_INDEX
                        | op::CHUNK_INDEX
                        | op::ATTACHMENT
                        | op::ATTACHMENT_INDEX
                        | op::STATISTICS
                        | op::METADATA_INDEX
                        | op::SUMMARY_OFFSET
                        | 0x80.. => {}
                        op::CHANNEL | op::MESSAGE => {
                            if let Some(rec) = record(&mut self.channels, opcode, data, at, log) {
                                return Some(rec);
                            }
                        }
                        other => log.problem(format!(
                            "unknown record type 0x{other:02x} at byte {at} ({} bytes): \
                             skipped (damage?)",
                            9 + data.len()
                        )),
                    }
                }
                Some(Err(e)) => {
                    let why = self.explain(&e);
                    self.stop(log, &why);
                }
            }
        }
    }

    fn stop(&mut self, log: &mut Log, why: &str) {
        self.done = true;
        self.chunk = None;
        log.stopped = Some(format!("{why}; {} datagrams read", log.yielded));
    }

    /// Where and why the top level of the file could not be read further.
    fn explain(&self, e: &mcap::McapError) -> String {
        const ABRUPT: &str = "the recorder probably stopped abruptly";
        let at = self.offset;
        let total = self.total;
        let mut head = [0u8; 9];
        let head = match self.file.read_exact_at(&mut head, at) {
            Ok(()) => Some((
                head[0],
                u64::from_le_bytes(head[1..9].try_into().unwrap_or_default()),
            )),
            Err(_) => None,
        };
        let what = |opcode: u8| match opcode {
            op::CHUNK => "a chunk".to_owned(),
            op::MESSAGE => "a message".to_owned(),
            op::METADATA => "a metadata record".to_owned(),
            op::CHANNEL => "a channel record".to_owned(),
            other => format!("a record of type 0x{other:02x}"),
        };
        match (e, head) {
            (_, _) if at >= total => format!(
                "the recording ends at byte {total} without its summary: {ABRUPT} (or is still \
                 running)"
            ),
            (mcap::McapError::RecordTooLarge { .. }, Some((op::CHUNK, u64::MAX))) => format!(
                "truncated at byte {total} inside a chunk that starts at byte {at} and was never \
                 finished: {ABRUPT}"
            ),
            (_, Some((opcode, len))) if at.saturating_add(9).saturating_add(len) > total => {
                format!(
                    "truncated at byte {total} inside {} that starts at byte {at} and needs {} \
                     bytes ({} remain): {ABRUPT} (or that length is damaged)",
                    what(opcode),
                    len.saturating_add(9),
                    total - at
                )
            }
            (_, None) => format!(
                "truncated at byte {total} inside a record header that starts at byte {at}: \
                 {ABRUPT}"
            ),
            (mcap::McapError::RecordTooLarge { opcode, len }, _) => format!(
                "damaged at byte {at}: {} claims {len} bytes, more than the {MAX_RECORD_LEN} \
                 accepted",
                what(*opcode)
            ),
            (e, Some((opcode, _))) => {
                format!("damaged at byte {at} ({}): {e}", what(opcode))
            }
        }
    }
}

/// Splits `opcode, length, body` off the front of `bytes`; `None` when the length reaches
/// past the end.
fn split_record(bytes: &[u8]) -> Option<(u8, &[u8])> {
    let (&opcode, rest) = bytes.split_first()?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    Some((opcode, rest.get(..len)?))
}

fn channel_kind(c: &mcap::records::Channel) -> ChannelKind {
    if c.topic == format::NOTES_TOPIC && c.message_encoding == format::JSON_ENCODING {
        return ChannelKind::Notes;
    }
    if c.message_encoding != format::RAW_ENCODING {
        return ChannelKind::Other;
    }
    match format::parse_raw_channel(&c.topic, &c.metadata) {
        Some((d, p)) => ChannelKind::Raw(d, p),
        None => ChannelKind::Other,
    }
}

/// A channel or message record from inside a chunk or at the top level; messages on raw
/// channels become wire records. `at` is the offset of the enclosing top-level record.
fn record(
    channels: &mut Vec<ChannelKind>,
    opcode: u8,
    data: &[u8],
    at: u64,
    log: &mut Log,
) -> Option<WireRecord> {
    match opcode {
        op::MESSAGE => {
            // Message: channel ID u16, sequence u32, log time u64, publish time u64, data.
            // Parsed here rather than by `parse_record`: this runs millions of times a second.
            let Some((head, payload)) = data.split_first_chunk::<22>() else {
                log.problem(format!(
                    "a message in the record at byte {at} is {} bytes, shorter than a message \
                     header: skipped",
                    data.len()
                ));
                return None;
            };
            let id = u16::from_le_bytes([head[0], head[1]]);
            let mut t = [0u8; 8];
            t.copy_from_slice(&head[6..14]);
            let mut published = [0u8; 8];
            published.copy_from_slice(&head[14..22]);
            let (log_time, publish_time) = (u64::from_le_bytes(t), u64::from_le_bytes(published));
            let kind = channels
                .get(usize::from(id))
                .copied()
                .unwrap_or(ChannelKind::Unknown);
            match kind {
                ChannelKind::Raw(direction, peer) => Some(WireRecord {
                    t_ns: log_time,
                    direction,
                    peer,
                    bytes: payload.to_vec(),
                    // Latched datagrams are written at the recording's start with their own
                    // time as the publish time (net::latch).
                    latched: (publish_time < log_time).then_some(publish_time),
                }),
                ChannelKind::Unknown => {
                    log.problem(format!(
                        "messages on channel {id} (first in the record at byte {at}) have no \
                         channel record (lost in a damaged chunk?): skipped"
                    ));
                    set(channels, id, ChannelKind::Reported);
                    None
                }
                ChannelKind::Notes => {
                    match format::parse_note(payload) {
                        Some(note) => log.note(note),
                        None => log.problem(format!(
                            "a note in the record at byte {at} does not parse: skipped"
                        )),
                    }
                    None
                }
                ChannelKind::Reported | ChannelKind::Other => None,
            }
        }
        op::CHANNEL => {
            match parse_record(opcode, data) {
                Ok(Record::Channel(c)) => {
                    let kind = channel_kind(&c);
                    set(channels, c.id, kind);
                }
                _ => log.problem(format!(
                    "a channel record in the record at byte {at} does not parse: skipped"
                )),
            }
            None
        }
        _ => None,
    }
}

fn set(channels: &mut Vec<ChannelKind>, id: u16, kind: ChannelKind) {
    let i = usize::from(id);
    if channels.len() <= i {
        channels.resize(i + 1, ChannelKind::Unknown);
    }
    channels[i] = kind;
}
