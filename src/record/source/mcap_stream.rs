//! Streams an MCAP recording: the summary first (time range, datagram count, metadata), then
//! the data section front to back, chunk by chunk, with the byte offset of every top-level
//! record for the problems and the stop it reports. An intact chunk is decompressed whole
//! into a reused buffer and its records read from there ([`Flat`]); one that does not check
//! out goes through its own sans-I/O reader ([`Chunk`]), which says what is wrong with it.

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

impl Chunk {
    /// A chunk read by its own reader, given chunk record `data` (at byte `at` of the file)
    /// as a one-record stream: it checks the CRC before yielding anything from it.
    fn streamed(data: &[u8], at: u64) -> Chunk {
        let mut reader = LinearReader::new_with_options(
            LinearReaderOptions::default()
                .with_skip_start_magic(true)
                .with_skip_end_magic(true)
                .with_prevalidate_chunk_crcs(true)
                .with_record_length_limit(MAX_RECORD_LEN),
        );
        let len = 9 + data.len();
        let buf = reader.insert(len);
        buf[0] = op::CHUNK;
        buf[1..9].copy_from_slice(&(data.len() as u64).to_le_bytes());
        buf[9..].copy_from_slice(data);
        reader.notify_read(len);
        Chunk {
            reader,
            offset: at,
            len: len as u64,
        }
    }
}

/// A chunk decompressed whole into [`McapReader::flat`], its records read from there: one
/// zstd call per chunk into a buffer reused from chunk to chunk, instead of a sans-I/O reader
/// per chunk streaming it through its own buffers (the streaming decoder copied every byte
/// once more; this is the replay reader thread's hot path). Only a chunk whose CRC and size
/// check out is read this way; any other goes through [`Chunk`], which says what is wrong.
pub(super) struct Flat {
    /// Position of the next record in `flat`.
    pos: usize,
    /// Byte offset of the chunk record in the file.
    offset: u64,
}

/// Streams an MCAP file.
pub(super) struct McapReader {
    file: File,
    /// Reads the top level of the file, handing over chunks whole.
    outer: LinearReader,
    pub(super) chunk: Option<Chunk>,
    /// Channels by ID.
    channels: Vec<ChannelKind>,
    /// The chunk being read from `flat`, when it was decompressed whole (see [`Flat`]).
    flat_chunk: Option<Flat>,
    /// The records of the chunk being read, decompressed (a buffer reused chunk after chunk).
    flat: Vec<u8>,
    /// The zstd context chunks are decompressed with (made once).
    zstd: Option<zstd::bulk::Decompressor<'static>>,
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
            flat_chunk: None,
            flat: Vec::new(),
            zstd: None,
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

    /// The next datagram of the chunk decompressed whole into `slot`: `true`, or `false` at
    /// the chunk's end (which ends [`McapReader::flat_chunk`]).
    fn next_from_flat(&mut self, log: &mut Log, slot: &mut WireRecord) -> bool {
        let Some(f) = &mut self.flat_chunk else {
            return false;
        };
        // Records: opcode u8, length u64, data (checked to tile the chunk when decompressed).
        while let Some((head, body)) = self.flat[f.pos..].split_first_chunk::<9>() {
            let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or_default());
            let len = usize::try_from(len).unwrap_or(usize::MAX).min(body.len());
            f.pos += 9 + len;
            if record(
                &mut self.channels,
                head[0],
                &body[..len],
                f.offset,
                log,
                slot,
            ) {
                return true;
            }
        }
        self.flat_chunk = None;
        false
    }

    /// The next datagram into `slot` (its byte buffer reused: no allocation per datagram once
    /// the buffers have grown); `false` at the end.
    pub(super) fn next_into(
        &mut self,
        info: &mut SourceInfo,
        log: &mut Log,
        slot: &mut WireRecord,
    ) -> bool {
        loop {
            if self.flat_chunk.is_some() {
                if self.next_from_flat(log, slot) {
                    return true;
                }
                continue;
            }
            if let Some(chunk) = &mut self.chunk {
                match chunk.reader.next_event() {
                    None => self.chunk = None,
                    // The whole chunk record was given to the reader: wanting more means the
                    // chunk is over (or ends inside a record, which the end of input reports).
                    Some(Ok(LinearReadEvent::ReadRequest(_))) => chunk.reader.notify_read(0),
                    Some(Ok(LinearReadEvent::Record { opcode, data })) => {
                        if record(&mut self.channels, opcode, data, chunk.offset, log, slot) {
                            return true;
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
                return false;
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
                        op::CHUNK if decompress_whole(&mut self.flat, &mut self.zstd, data) => {
                            self.flat_chunk = Some(Flat { pos: 0, offset: at });
                            log.whole_chunks += 1;
                        }
                        op::CHUNK => self.chunk = Some(Chunk::streamed(data, at)),
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
                            if record(&mut self.channels, opcode, data, at, log, slot) {
                                return true;
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
        self.flat_chunk = None;
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

/// Decompresses the records of chunk record `data` (zstd or uncompressed) into `flat`, with the
/// reused context `zstd`, when everything checks out: the header parses, the size is as stated and
/// within [`MAX_RECORD_LEN`], the CRC (when written) matches, and the records tile the buffer
/// exactly. `false` otherwise (and for lz4): the chunk is then read by a [`Chunk`], which reports
/// what is wrong with it.
fn decompress_whole(
    flat: &mut Vec<u8>,
    zstd: &mut Option<zstd::bulk::Decompressor<'static>>,
    data: &[u8],
) -> bool {
    fn u64_at(b: &[u8], at: usize) -> Option<u64> {
        Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
    }
    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
    }
    // Chunk: start time u64, end time u64, uncompressed size u64, uncompressed CRC u32,
    // compression (u32 length + UTF-8), records (u64 length + bytes).
    let parsed = (|| {
        let size = usize::try_from(u64_at(data, 16)?).ok()?;
        let crc = u32_at(data, 24)?;
        let name_len = u32_at(data, 28)? as usize;
        let name = data.get(32..32usize.checked_add(name_len)?)?;
        let at = 32 + name_len;
        let len = usize::try_from(u64_at(data, at)?).ok()?;
        let records = data.get(at + 8..(at + 8).checked_add(len)?)?;
        Some((size, crc, name, records))
    })();
    let Some((size, crc, name, records)) = parsed else {
        return false;
    };
    if size > MAX_RECORD_LEN {
        return false;
    }
    flat.clear();
    match name {
        b"zstd" => {
            if zstd.is_none() {
                *zstd = zstd::bulk::Decompressor::new().ok();
            }
            let Some(z) = zstd.as_mut() else {
                return false;
            };
            flat.reserve(size);
            if z.decompress_to_buffer(records, flat).is_err() {
                return false;
            }
        }
        b"" => flat.extend_from_slice(records),
        _ => return false,
    }
    if flat.len() != size || (crc != 0 && crc32fast::hash(flat) != crc) {
        return false;
    }
    // The records must tile the chunk: none may claim bytes past its end.
    let mut pos = 0usize;
    while pos < flat.len() {
        let Some(len) = u64_at(flat, pos + 1) else {
            return false;
        };
        match usize::try_from(len)
            .ok()
            .and_then(|l| (pos + 9).checked_add(l))
        {
            Some(end) if end <= flat.len() => pos = end,
            _ => return false,
        }
    }
    true
}

/// A channel or message record from inside a chunk or at the top level; messages on raw channels
/// become wire records (written into `slot`: `true`). `at` is the offset of the enclosing top-level
/// record.
fn record(
    channels: &mut Vec<ChannelKind>,
    opcode: u8,
    data: &[u8],
    at: u64,
    log: &mut Log,
    slot: &mut WireRecord,
) -> bool {
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
                return false;
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
                ChannelKind::Raw(direction, peer) => {
                    slot.t_ns = log_time;
                    slot.direction = direction;
                    slot.peer = peer;
                    slot.bytes.clear();
                    slot.bytes.extend_from_slice(payload);
                    // Latched datagrams are written at the recording's start with their own
                    // time as the publish time (net::latch).
                    slot.latched = (publish_time < log_time).then_some(publish_time);
                    true
                }
                ChannelKind::Unknown => {
                    log.problem(format!(
                        "messages on channel {id} (first in the record at byte {at}) have no \
                         channel record (lost in a damaged chunk?): skipped"
                    ));
                    set(channels, id, ChannelKind::Reported);
                    false
                }
                ChannelKind::Notes => {
                    match format::parse_note(payload) {
                        Some(note) => log.note(note),
                        None => log.problem(format!(
                            "a note in the record at byte {at} does not parse: skipped"
                        )),
                    }
                    false
                }
                ChannelKind::Reported | ChannelKind::Other => false,
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
            false
        }
        _ => false,
    }
}

fn set(channels: &mut Vec<ChannelKind>, id: u16, kind: ChannelKind) {
    let i = usize::from(id);
    if channels.len() <= i {
        channels.resize(i + 1, ChannelKind::Unknown);
    }
    channels[i] = kind;
}
