//! Capture import: the UDP datagrams on one port, read from a `.pcap` or `.pcapng` file.
//!
//! [`CaptureReader`] is an iterator with one [`CaptureEvent`] per frame (packet record) of the
//! file, so `jaus-ocu inspect` can say what it skipped and why as well as list the JUDP
//! datagrams, and replay can feed the datagrams to the real decoder. The reader is pure: it
//! reads bytes from any [`Read`], keeps no clock and owns no socket.
//!
//! Captures come from the field and are often damaged, so the contract is:
//! - no input makes it panic, and no length field in the file makes it allocate more than the
//!   bytes that are actually present (and at most [`MAX_FRAME_LEN`] for one frame), nor more than
//!   the bounded fragment store ([`MAX_PENDING_DATAGRAMS`] of at most 65,535 bytes);
//! - a frame that cannot be decoded is a [`CaptureEvent::Bad`] and reading goes on;
//! - when the file itself breaks (cut mid-record, a block length that lies), every complete frame
//!   before the break has been yielded, then one [`CaptureError`] says where and why, then the
//!   iterator ends.
//!
//! The file formats are parsed by hand (classic pcap is a 24-byte header and 16-byte record
//! headers; pcapng is length-prefixed blocks) rather than through `pcap-file`, because the reader
//! must report the exact byte offset and byte counts of a cut, read pcapng timestamps at each
//! interface's own resolution, and never size a buffer from a length it has not seen data for.
//! IP headers are sliced with `etherparse`.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, ErrorKind, Read};
use std::iter::FusedIterator;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;
use std::path::{Path, PathBuf};

use etherparse::{IpNumber, Ipv4HeaderSlice, Ipv6HeaderSlice};

/// The UDP port captures are filtered on unless told otherwise: the JUDP port (one constant,
/// `jaus::judp::PORT`, re-exported for the layers that do not import the codec).
pub use crate::jaus::judp::PORT as JUDP_PORT;

/// The largest frame (captured packet data) the reader accepts, in bytes.
///
/// libpcap never writes more than 262,144 bytes per packet; the margin admits odd writers while
/// still rejecting a length field that is plainly garbage before any data is read for it.
pub const MAX_FRAME_LEN: u32 = 16 * 1024 * 1024;

/// How many IP datagrams may wait for missing fragments at once; the oldest is dropped beyond.
pub const MAX_PENDING_DATAGRAMS: usize = 64;

/// Capture time, in seconds, after which an incomplete fragmented datagram is dropped
/// (the Linux `ipfrag_time` default).
pub const FRAGMENT_TIMEOUT_SECONDS: f64 = 30.0;

/// The largest reassembled IP payload: the IPv4 total length and IPv6 payload length are 16 bits.
const MAX_DATAGRAM_LEN: usize = 65_535;

/// How many pcapng interfaces are remembered; each costs memory, and a file of nothing but
/// interface descriptions must not grow the reader without bound.
const MAX_INTERFACES: usize = 1024;

/// The `LINKTYPE_*` values of the tcpdump.org link-layer header type registry that are read.
mod link_type {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// `DLT_RAW` as numbered on most BSDs, found in some old files.
    pub const RAW_BSD: u32 = 12;
    /// `DLT_RAW` as numbered on OpenBSD.
    pub const RAW_OPENBSD: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

/// pcapng block types that the reader acts on.
mod block_type {
    pub const INTERFACE_DESCRIPTION: u32 = 0x0000_0001;
    pub const PACKET: u32 = 0x0000_0002;
    pub const SIMPLE_PACKET: u32 = 0x0000_0003;
    pub const ENHANCED_PACKET: u32 = 0x0000_0006;
    pub const SECTION_HEADER: u32 = 0x0A0D_0D0A;
}

/// One UDP datagram found in a capture.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureDatagram {
    /// 1-based frame (packet record) number in the file; for a reassembled fragmented datagram,
    /// the frame of the fragment that completed it.
    pub frame: u64,
    /// Capture timestamp in seconds since the Unix epoch, at the precision the file gives.
    pub time: f64,
    /// IP address and UDP port the datagram came from.
    pub source: SocketAddr,
    /// IP address and UDP port the datagram was sent to.
    pub destination: SocketAddr,
    /// The UDP payload as delimited by the UDP length field (short Ethernet frames carry padding
    /// after it, which is not part of the datagram).
    pub payload: Vec<u8>,
}

/// What one step of reading yields: one per frame of the file.
#[derive(Clone, Debug, PartialEq)]
pub enum CaptureEvent {
    /// A UDP datagram to or from the port.
    Datagram(CaptureDatagram),
    /// A frame that is not UDP to or from the port (ARP, TCP, other ports...): counted, not an
    /// error.
    Skipped {
        /// 1-based frame number.
        frame: u64,
        /// Why the frame is not a datagram on the port, for `inspect` to show.
        reason: String,
    },
    /// A frame that cannot be decoded (truncated IP or UDP header, inconsistent lengths,
    /// unsupported link type...). Reported; reading continues.
    Bad {
        /// 1-based frame number.
        frame: u64,
        /// Capture timestamp in seconds since the Unix epoch.
        time: f64,
        /// What is wrong with the frame.
        reason: String,
    },
    /// A UDP fragment was stored to wait for the rest of its datagram (no datagram yet).
    Fragment {
        /// 1-based frame number.
        frame: u64,
    },
}

impl CaptureEvent {
    /// The 1-based number of the frame this event is about.
    pub fn frame(&self) -> u64 {
        match self {
            Self::Datagram(datagram) => datagram.frame,
            Self::Skipped { frame, .. } | Self::Bad { frame, .. } | Self::Fragment { frame } => {
                *frame
            }
        }
    }
}

/// Running counts of what a [`CaptureReader`] has read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Frames (packet records) read.
    pub frames: u64,
    /// Datagrams on the port yielded.
    pub datagrams: u64,
    /// Frames that were not UDP on the port.
    pub skipped: u64,
    /// Frames that could not be decoded.
    pub bad: u64,
    /// Fragments stored to wait for the rest of their datagram.
    pub fragments: u64,
    /// Incomplete fragmented datagrams discarded: timed out, evicted when too many were pending,
    /// or still incomplete when the file ended.
    pub fragments_pending_dropped: u64,
}

/// The file format a [`CaptureReader`] found, for `inspect` to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic libpcap format.
    Pcap {
        /// Timestamps are in nanoseconds (magic `0xa1b23c4d`) rather than microseconds.
        nanosecond: bool,
        /// The file was written big-endian.
        big_endian: bool,
    },
    /// pcapng (the format Wireshark writes by default).
    PcapNg,
}

impl fmt::Display for CaptureFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pcap {
                nanosecond,
                big_endian,
            } => write!(
                f,
                "pcap ({}, {})",
                if *nanosecond {
                    "nanosecond"
                } else {
                    "microsecond"
                },
                if *big_endian {
                    "big-endian"
                } else {
                    "little-endian"
                }
            ),
            Self::PcapNg => f.write_str("pcapng"),
        }
    }
}

/// Why a capture cannot be read (further).
///
/// `frame` is the 1-based number of the frame being looked for when reading stopped (all frames
/// before it were complete); `offset` is the byte offset in the file where the record or block
/// that failed begins.
#[derive(thiserror::Error, Debug)]
pub enum CaptureError {
    /// The capture file could not be opened.
    // Causes are part of the messages, not chained as `source` (anyhow would print them
    // twice).
    #[error("cannot open capture {}: {error}", path.display())]
    Open {
        /// The path given to [`CaptureReader::open`].
        path: PathBuf,
        /// The operating system's reason.
        error: io::Error,
    },
    /// Reading failed for a reason other than the end of the data.
    #[error("read error in frame {frame} at byte offset {offset}: {error}")]
    Io {
        /// Frame being read.
        frame: u64,
        /// Byte offset of the record or block being read.
        offset: u64,
        /// The underlying error.
        error: io::Error,
    },
    /// The input is shorter than any magic number.
    #[error("not a pcap or pcapng file (only {len} bytes long)")]
    TooShort {
        /// How many bytes the input has.
        len: usize,
    },
    /// The input does not start with a pcap or pcapng magic number.
    #[error("not a pcap or pcapng file (magic bytes 0x{magic:08x})")]
    NotCapture {
        /// The first four bytes, in file order.
        magic: u32,
    },
    /// The data ends inside a header, record or block.
    #[error(
        "capture truncated in frame {frame} at byte offset {offset}: {what} {needed} bytes, \
         {available} remain"
    )]
    Truncated {
        /// Frame being read.
        frame: u64,
        /// Byte offset where the cut record, block or header begins.
        offset: u64,
        /// What wanted the bytes, e.g. "record header says" or "block header needs".
        what: &'static str,
        /// Bytes it wanted (for a pcap record: after the 16-byte record header; otherwise from
        /// `offset`).
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// The framing of the file is inconsistent, so nothing after this point can be trusted.
    #[error("capture damaged in frame {frame} at byte offset {offset}: {reason}")]
    Corrupt {
        /// Frame being read.
        frame: u64,
        /// Byte offset of the damaged record or block.
        offset: u64,
        /// What is inconsistent.
        reason: String,
    },
}

/// Reads the UDP datagrams on one port out of a pcap or pcapng capture.
///
/// An iterator of `Result<CaptureEvent, CaptureError>`, one event per frame; after the first
/// error it ends. Give it a buffered reader: it reads records a few bytes at a time.
pub struct CaptureReader<R> {
    input: Input<R>,
    port: u16,
    format: Format,
    stats: CaptureStats,
    fragments: Reassembler,
    /// The current record's bytes, reused from frame to frame.
    buf: Vec<u8>,
    /// Timestamp of the last frame that had one, for Simple Packet Blocks (which have none).
    last_time: f64,
    done: bool,
}

impl CaptureReader<BufReader<File>> {
    /// Opens the capture file at `path` and reads its header, to read datagrams on `port`.
    pub fn open(path: &Path, port: u16) -> Result<Self, CaptureError> {
        let file = File::open(path).map_err(|error| CaptureError::Open {
            path: path.to_path_buf(),
            error,
        })?;
        Self::new(BufReader::new(file), port)
    }
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header from `reader` (pcap in either byte order with micro- or nanosecond
    /// timestamps, or pcapng, told apart by the magic number), to read datagrams on `port`.
    pub fn new(reader: R, port: u16) -> Result<Self, CaptureError> {
        let mut input = Input { reader, offset: 0 };
        let mut buf = Vec::new();
        let mut magic = [0; 4];
        let got = input.read_full(&mut magic).map_err(|e| io_error(1, 0, e))?;
        if got < magic.len() {
            return Err(CaptureError::TooShort { len: got });
        }
        let format = match magic {
            [0xd4, 0xc3, 0xb2, 0xa1] => read_pcap_header(&mut input, Endian::Little, false)?,
            [0x4d, 0x3c, 0xb2, 0xa1] => read_pcap_header(&mut input, Endian::Little, true)?,
            [0xa1, 0xb2, 0xc3, 0xd4] => read_pcap_header(&mut input, Endian::Big, false)?,
            [0xa1, 0xb2, 0x3c, 0x4d] => read_pcap_header(&mut input, Endian::Big, true)?,
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                let mut rest = [0; 8];
                let got = input.read_full(&mut rest).map_err(|e| io_error(1, 0, e))?;
                if got < rest.len() {
                    return Err(CaptureError::Truncated {
                        frame: 1,
                        offset: 0,
                        what: "section header block needs",
                        needed: 12,
                        available: 4 + got as u64,
                    });
                }
                let length = [rest[0], rest[1], rest[2], rest[3]];
                let order = [rest[4], rest[5], rest[6], rest[7]];
                let endian = read_section_header(&mut input, &mut buf, 1, 0, length, order)?;
                Format::PcapNg(NgState {
                    endian,
                    interfaces: Vec::new(),
                    described: 0,
                })
            }
            _ => {
                return Err(CaptureError::NotCapture {
                    magic: u32::from_be_bytes(magic),
                });
            }
        };
        Ok(Self {
            input,
            port,
            format,
            stats: CaptureStats::default(),
            fragments: Reassembler::default(),
            buf,
            last_time: 0.0,
            done: false,
        })
    }

    /// Counts of what has been read so far.
    pub fn stats(&self) -> &CaptureStats {
        &self.stats
    }

    /// The file format found by [`CaptureReader::new`].
    pub fn format(&self) -> CaptureFormat {
        match &self.format {
            Format::Pcap(pcap) => CaptureFormat::Pcap {
                nanosecond: pcap.nanos,
                big_endian: pcap.endian == Endian::Big,
            },
            Format::PcapNg(_) => CaptureFormat::PcapNg,
        }
    }

    /// The UDP port whose datagrams are yielded.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Bytes of the input consumed so far.
    pub fn offset(&self) -> u64 {
        self.input.offset
    }

    /// Reads one frame and turns it into an event; `None` at a clean end of the file.
    fn step(&mut self) -> Result<Option<CaptureEvent>, CaptureError> {
        let frame = self.stats.frames + 1;
        let record = match &mut self.format {
            Format::Pcap(pcap) => read_pcap_record(&mut self.input, &mut self.buf, pcap, frame)?,
            Format::PcapNg(ng) => {
                read_pcapng_record(&mut self.input, &mut self.buf, ng, frame, self.last_time)?
            }
        };
        let Some(record) = record else {
            return Ok(None);
        };
        self.stats.frames = frame;
        let event = match record {
            Record::Bad { time, reason } => CaptureEvent::Bad {
                frame,
                time,
                reason,
            },
            Record::Frame {
                time,
                link_type,
                data,
                original_len,
            } => {
                self.last_time = time;
                self.stats.fragments_pending_dropped += self.fragments.expire(time);
                let bytes = self.buf.get(data).unwrap_or_default();
                let cut = (bytes.len() as u64) < u64::from(original_len);
                match decode(link_type, bytes, cut, self.port) {
                    Ok(Decoded::Udp(datagram)) => datagram.event(frame, time),
                    Ok(Decoded::Fragment(fragment)) => {
                        let (outcome, evicted) = self.fragments.add(&fragment, time);
                        self.stats.fragments_pending_dropped += evicted;
                        let key = &fragment.key;
                        match outcome {
                            FragmentOutcome::Stored => CaptureEvent::Fragment { frame },
                            FragmentOutcome::Rejected(why) => CaptureEvent::Bad {
                                frame,
                                time,
                                reason: format!(
                                    "{} fragment (id 0x{:x}) rejected: {why}",
                                    key.version(),
                                    key.identification
                                ),
                            },
                            FragmentOutcome::Complete(whole) => {
                                let (source, destination) = (key.source, key.destination);
                                match udp(
                                    source,
                                    destination,
                                    &whole,
                                    whole.len(),
                                    false,
                                    self.port,
                                ) {
                                    Ok(datagram) => datagram.event(frame, time),
                                    Err(verdict) => {
                                        verdict.event(frame, time, "reassembled datagram: ")
                                    }
                                }
                            }
                        }
                    }
                    Err(verdict) => verdict.event(frame, time, ""),
                }
            }
        };
        match &event {
            CaptureEvent::Datagram(_) => self.stats.datagrams += 1,
            CaptureEvent::Skipped { .. } => self.stats.skipped += 1,
            CaptureEvent::Bad { .. } => self.stats.bad += 1,
            CaptureEvent::Fragment { .. } => self.stats.fragments += 1,
        }
        Ok(Some(event))
    }

    /// Ends iteration; fragments still waiting will never complete, so they count as dropped.
    fn finish(&mut self) {
        self.done = true;
        self.stats.fragments_pending_dropped += self.fragments.clear();
    }
}

impl<R: Read> Iterator for CaptureReader<R> {
    type Item = Result<CaptureEvent, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(event)) => Some(Ok(event)),
            Ok(None) => {
                self.finish();
                None
            }
            Err(error) => {
                self.finish();
                Some(Err(error))
            }
        }
    }
}

impl<R: Read> FusedIterator for CaptureReader<R> {}

impl<R> fmt::Debug for CaptureReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureReader")
            .field("port", &self.port)
            .field("offset", &self.input.offset)
            .field("stats", &self.stats)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------------
// File formats.

/// A reader that knows how far into the file it is, for error messages.
struct Input<R> {
    reader: R,
    offset: u64,
}

impl<R: Read> Input<R> {
    /// Fills `buf` as far as the data goes; fewer bytes than asked means the data ended.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
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
    fn read_vec(&mut self, buf: &mut Vec<u8>, len: usize) -> io::Result<usize> {
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

fn io_error(frame: u64, offset: u64, error: io::Error) -> CaptureError {
    CaptureError::Io {
        frame,
        offset,
        error,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endian {
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

    fn u32(self, bytes: [u8; 4]) -> u32 {
        match self {
            Self::Little => u32::from_le_bytes(bytes),
            Self::Big => u32::from_be_bytes(bytes),
        }
    }

    /// The 16-bit field at `at`, if the slice holds it.
    fn u16_at(self, bytes: &[u8], at: usize) -> Option<u16> {
        let field = bytes.get(at..at.checked_add(2)?)?;
        Some(self.u16(field.try_into().ok()?))
    }

    /// The 32-bit field at `at`, if the slice holds it.
    fn u32_at(self, bytes: &[u8], at: usize) -> Option<u32> {
        let field = bytes.get(at..at.checked_add(4)?)?;
        Some(self.u32(field.try_into().ok()?))
    }

    /// The 64-bit field at `at`, if the slice holds it.
    fn u64_at(self, bytes: &[u8], at: usize) -> Option<u64> {
        let field: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(match self {
            Self::Little => u64::from_le_bytes(field),
            Self::Big => u64::from_be_bytes(field),
        })
    }
}

enum Format {
    Pcap(PcapFormat),
    PcapNg(NgState),
}

struct PcapFormat {
    endian: Endian,
    nanos: bool,
    link_type: u32,
}

/// The state of a pcapng section: its byte order and the interfaces described so far.
struct NgState {
    endian: Endian,
    /// `None` for an interface whose description block is malformed.
    interfaces: Vec<Option<Interface>>,
    /// Interfaces described in this section, including any beyond [`MAX_INTERFACES`].
    described: u64,
}

#[derive(Clone, Copy, Debug)]
struct Interface {
    link_type: u32,
    snaplen: u32,
    /// The raw `if_tsresol` option: bit 7 clear means 10^-n seconds, set means 2^-n.
    resolution: u8,
    /// The `if_tsoffset` option: seconds to add to every timestamp.
    offset_seconds: i64,
}

impl Interface {
    /// Converts a pcapng timestamp to seconds since the epoch, keeping the whole seconds exact
    /// before going to floating point.
    fn seconds(&self, timestamp: u64) -> f64 {
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

/// One record read from the file: a frame to decode, or a packet block too broken to decode.
enum Record {
    Frame {
        time: f64,
        link_type: u32,
        /// Where the frame's bytes are in the reader's buffer.
        data: Range<usize>,
        original_len: u32,
    },
    Bad {
        time: f64,
        reason: String,
    },
}

/// Reads the rest of the classic pcap file header, after its 4-byte magic number.
fn read_pcap_header<R: Read>(
    input: &mut Input<R>,
    endian: Endian,
    nanos: bool,
) -> Result<Format, CaptureError> {
    // Version (4), time zone (4), significant figures (4), snapshot length (4), link type (4).
    let mut header = [0; 20];
    let got = input
        .read_full(&mut header)
        .map_err(|e| io_error(1, 0, e))?;
    if got < header.len() {
        return Err(CaptureError::Truncated {
            frame: 1,
            offset: 0,
            what: "file header needs",
            needed: 24,
            available: 4 + got as u64,
        });
    }
    // The upper 16 bits carry the FCS length of some captures, not the link type.
    let link_type = endian.u32([header[16], header[17], header[18], header[19]]) & 0xffff;
    Ok(Format::Pcap(PcapFormat {
        endian,
        nanos,
        link_type,
    }))
}

/// Reads one classic pcap record; `None` at a clean end of file.
fn read_pcap_record<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    pcap: &PcapFormat,
    frame: u64,
) -> Result<Option<Record>, CaptureError> {
    let offset = input.offset;
    // Seconds (4), second fraction (4), captured length (4), original length (4).
    let mut header = [0; 16];
    let got = input
        .read_full(&mut header)
        .map_err(|e| io_error(frame, offset, e))?;
    if got == 0 {
        return Ok(None);
    }
    if got < header.len() {
        return Err(CaptureError::Truncated {
            frame,
            offset,
            what: "record header needs",
            needed: 16,
            available: got as u64,
        });
    }
    let e = pcap.endian;
    let seconds = e.u32([header[0], header[1], header[2], header[3]]);
    let fraction = e.u32([header[4], header[5], header[6], header[7]]);
    let captured = e.u32([header[8], header[9], header[10], header[11]]);
    let original_len = e.u32([header[12], header[13], header[14], header[15]]);
    if captured > MAX_FRAME_LEN {
        return Err(CaptureError::Corrupt {
            frame,
            offset,
            reason: format!(
                "record header says {captured} bytes, more than the {MAX_FRAME_LEN}-byte limit"
            ),
        });
    }
    let captured = captured as usize;
    let got = input
        .read_vec(buf, captured)
        .map_err(|e| io_error(frame, offset, e))?;
    if got < captured {
        return Err(CaptureError::Truncated {
            frame,
            offset,
            what: "record header says",
            needed: captured as u64,
            available: got as u64,
        });
    }
    let scale = if pcap.nanos { 1e-9 } else { 1e-6 };
    Ok(Some(Record::Frame {
        time: f64::from(seconds) + f64::from(fraction) * scale,
        link_type: pcap.link_type,
        data: 0..captured,
        original_len,
    }))
}

/// Reads the rest of a pcapng Section Header Block, whose first 12 bytes (type, length, byte
/// order magic) have been read, and returns the section's byte order.
fn read_section_header<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    frame: u64,
    offset: u64,
    length: [u8; 4],
    byte_order: [u8; 4],
) -> Result<Endian, CaptureError> {
    // The byte-order magic is what tells how to read every other field, the length included.
    let endian = match byte_order {
        [0x4d, 0x3c, 0x2b, 0x1a] => Endian::Little,
        [0x1a, 0x2b, 0x3c, 0x4d] => Endian::Big,
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
    let got = input
        .read_vec(buf, rest)
        .map_err(|e| io_error(frame, offset, e))?;
    if got < rest {
        return Err(CaptureError::Truncated {
            frame,
            offset,
            what: "section header block says",
            needed: u64::from(length),
            available: 12 + got as u64,
        });
    }
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
fn read_pcapng_record<R: Read>(
    input: &mut Input<R>,
    buf: &mut Vec<u8>,
    ng: &mut NgState,
    frame: u64,
    last_time: f64,
) -> Result<Option<Record>, CaptureError> {
    loop {
        let offset = input.offset;
        let io = |e| io_error(frame, offset, e);
        let mut header = [0; 8];
        let got = input.read_full(&mut header).map_err(io)?;
        if got == 0 {
            return Ok(None);
        }
        if got < header.len() {
            return Err(CaptureError::Truncated {
                frame,
                offset,
                what: "block header needs",
                needed: 8,
                available: got as u64,
            });
        }
        let block = ng.endian.u32([header[0], header[1], header[2], header[3]]);
        let length = [header[4], header[5], header[6], header[7]];
        if block == block_type::SECTION_HEADER {
            // A new section may switch byte order and starts a fresh list of interfaces.
            let mut order = [0; 4];
            let got = input.read_full(&mut order).map_err(io)?;
            if got < order.len() {
                return Err(CaptureError::Truncated {
                    frame,
                    offset,
                    what: "section header block needs",
                    needed: 12,
                    available: 8 + got as u64,
                });
            }
            ng.endian = read_section_header(input, buf, frame, offset, length, order)?;
            ng.interfaces.clear();
            ng.described = 0;
            continue;
        }
        let length = ng.endian.u32(length);
        check_block_length(length, 12, frame, offset)?;
        let rest = length as usize - 8;
        let got = input.read_vec(buf, rest).map_err(io)?;
        if got < rest {
            return Err(CaptureError::Truncated {
                frame,
                offset,
                what: block_name(block),
                needed: u64::from(length),
                available: 8 + got as u64,
            });
        }
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

// ---------------------------------------------------------------------------------------------
// Link, network and transport layers.

/// Why a frame yields no datagram.
enum Verdict {
    /// Not UDP on the port.
    Skip(String),
    /// Cannot be decoded.
    Bad(String),
}

impl Verdict {
    fn event(self, frame: u64, time: f64, context: &str) -> CaptureEvent {
        match self {
            Self::Skip(reason) => CaptureEvent::Skipped { frame, reason },
            Self::Bad(reason) => CaptureEvent::Bad {
                frame,
                time,
                reason: format!("{context}{reason}"),
            },
        }
    }
}

/// A UDP datagram on the port, borrowed from the frame or the reassembly buffer.
struct Udp<'a> {
    source: SocketAddr,
    destination: SocketAddr,
    payload: &'a [u8],
}

impl Udp<'_> {
    fn event(self, frame: u64, time: f64) -> CaptureEvent {
        CaptureEvent::Datagram(CaptureDatagram {
            frame,
            time,
            source: self.source,
            destination: self.destination,
            payload: self.payload.to_vec(),
        })
    }
}

/// What a frame holds that may lead to a datagram.
enum Decoded<'a> {
    Udp(Udp<'a>),
    /// A UDP fragment: its port is unknown until the datagram is whole.
    Fragment(Fragment<'a>),
}

/// The network-layer packet inside a frame.
enum Net<'a> {
    Ipv4(&'a [u8]),
    Ipv6(&'a [u8]),
}

/// Decodes one frame; `cut` says the capture kept fewer bytes than were on the wire.
fn decode(link_type: u32, frame: &[u8], cut: bool, port: u16) -> Result<Decoded<'_>, Verdict> {
    match link(link_type, frame)? {
        Net::Ipv4(packet) => ipv4(packet, cut, port),
        Net::Ipv6(packet) => ipv6(packet, cut, port),
    }
}

/// Strips the link-layer header.
fn link(link_type: u32, frame: &[u8]) -> Result<Net<'_>, Verdict> {
    match link_type {
        link_type::ETHERNET => {
            // Destination (6), source (6), EtherType (2).
            let Some((header, rest)) = frame.split_first_chunk::<14>() else {
                return Err(short("Ethernet header", frame.len(), 14));
            };
            ether_type(u16::from_be_bytes([header[12], header[13]]), rest)
        }
        link_type::NULL | link_type::LOOP => {
            let Some((family, rest)) = frame.split_first_chunk::<4>() else {
                return Err(short("loopback header", frame.len(), 4));
            };
            let family = if link_type == link_type::LOOP {
                u32::from_be_bytes(*family)
            } else {
                // NULL is in the byte order of the capturing host, which the file does not
                // record; address families are small, so a large value means the other order.
                let value = u32::from_le_bytes(*family);
                if value > 0xffff {
                    value.swap_bytes()
                } else {
                    value
                }
            };
            match family {
                2 => Ok(Net::Ipv4(rest)),
                // AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD, macOS.
                10 | 24 | 28 | 30 => Ok(Net::Ipv6(rest)),
                other => Err(Verdict::Skip(format!(
                    "loopback address family {other}, not IP"
                ))),
            }
        }
        link_type::RAW | link_type::RAW_BSD | link_type::RAW_OPENBSD => match frame.first() {
            Some(byte) if byte >> 4 == 4 => Ok(Net::Ipv4(frame)),
            Some(byte) if byte >> 4 == 6 => Ok(Net::Ipv6(frame)),
            Some(byte) => Err(Verdict::Bad(format!(
                "raw IP packet of version {}",
                byte >> 4
            ))),
            None => Err(Verdict::Bad("empty raw IP packet".into())),
        },
        link_type::IPV4 => Ok(Net::Ipv4(frame)),
        link_type::IPV6 => Ok(Net::Ipv6(frame)),
        link_type::LINUX_SLL => {
            // Packet type (2), ARPHRD type (2), address length (2), address (8), protocol (2).
            let Some((header, rest)) = frame.split_first_chunk::<16>() else {
                return Err(short("Linux cooked header", frame.len(), 16));
            };
            ether_type(u16::from_be_bytes([header[14], header[15]]), rest)
        }
        link_type::LINUX_SLL2 => {
            // Protocol (2), reserved (2), interface index (4), ARPHRD type (2), packet type (1),
            // address length (1), address (8).
            let Some((header, rest)) = frame.split_first_chunk::<20>() else {
                return Err(short("Linux cooked v2 header", frame.len(), 20));
            };
            ether_type(u16::from_be_bytes([header[0], header[1]]), rest)
        }
        other => Err(Verdict::Bad(format!("unsupported link type {other}"))),
    }
}

/// Follows an `EtherType` through any VLAN tags to IPv4 or IPv6.
fn ether_type(mut ether_type: u16, mut rest: &[u8]) -> Result<Net<'_>, Verdict> {
    loop {
        match ether_type {
            0x0800 => return Ok(Net::Ipv4(rest)),
            0x86dd => return Ok(Net::Ipv6(rest)),
            // 802.1Q, 802.1ad and the pre-standard QinQ tag: TCI (2), EtherType (2).
            0x8100 | 0x88a8 | 0x9100 => {
                let Some((tag, inner)) = rest.split_first_chunk::<4>() else {
                    return Err(short("VLAN tag", rest.len(), 4));
                };
                ether_type = u16::from_be_bytes([tag[2], tag[3]]);
                rest = inner;
            }
            0x0806 => return Err(Verdict::Skip("ARP".into())),
            other => return Err(Verdict::Skip(format!("EtherType 0x{other:04x}, not IP"))),
        }
    }
}

fn short(what: &str, len: usize, needed: usize) -> Verdict {
    Verdict::Bad(format!("{what} cut: {len} of {needed} bytes"))
}

/// Names an IP protocol number for a skip reason.
fn protocol_name(protocol: IpNumber) -> String {
    match protocol.keyword_str() {
        Some(name) => format!("{} ({name})", protocol.0),
        None => protocol.0.to_string(),
    }
}

fn ipv4(packet: &[u8], cut: bool, port: u16) -> Result<Decoded<'_>, Verdict> {
    use etherparse::err::ipv4::{HeaderError, HeaderSliceError};
    let header = Ipv4HeaderSlice::from_slice(packet).map_err(|e| match e {
        HeaderSliceError::Len(e) => short("IPv4 header", e.len, e.required_len),
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            Verdict::Bad(format!("IPv4 header has IP version {version_number}"))
        }
        HeaderSliceError::Content(HeaderError::HeaderLengthSmallerThanHeader { ihl }) => {
            Verdict::Bad(format!("IPv4 header length {ihl} is less than 5 words"))
        }
    })?;
    let header_len = header.slice().len();
    let total = usize::from(header.total_len());
    let protocol = header.protocol();
    if protocol != IpNumber::UDP {
        return Err(Verdict::Skip(format!(
            "IPv4 protocol {}, not UDP",
            protocol_name(protocol)
        )));
    }
    if total < header_len {
        return Err(Verdict::Bad(format!(
            "IPv4 total length {total} is less than its {header_len}-byte header"
        )));
    }
    // The total length, not the frame, ends the packet: Ethernet pads short frames.
    let claimed = total - header_len;
    let payload = packet
        .get(header_len..packet.len().min(total))
        .unwrap_or_default();
    let source = IpAddr::V4(header.source_addr());
    let destination = IpAddr::V4(header.destination_addr());
    if header.is_fragmenting_payload() {
        if payload.len() < claimed {
            return Err(Verdict::Bad(format!(
                "IPv4 fragment cut: {}",
                shortfall(cut, payload.len(), claimed)
            )));
        }
        return Ok(Decoded::Fragment(Fragment {
            key: FragmentKey {
                source,
                destination,
                protocol: protocol.0,
                identification: u32::from(header.identification()),
            },
            offset: usize::from(header.fragments_offset().value()) * 8,
            more: header.more_fragments(),
            payload,
        }));
    }
    udp(source, destination, payload, claimed, cut, port).map(Decoded::Udp)
}

fn ipv6(packet: &[u8], cut: bool, port: u16) -> Result<Decoded<'_>, Verdict> {
    use etherparse::err::ipv6::{HeaderError, HeaderSliceError};
    let header = Ipv6HeaderSlice::from_slice(packet).map_err(|e| match e {
        HeaderSliceError::Len(e) => short("IPv6 header", e.len, e.required_len),
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            Verdict::Bad(format!("IPv6 header has IP version {version_number}"))
        }
    })?;
    let header_len = header.slice().len();
    let claimed = usize::from(header.payload_length());
    let payload = packet
        .get(header_len..packet.len().min(header_len + claimed))
        .unwrap_or_default();
    let source = IpAddr::V6(header.source_addr());
    let destination = IpAddr::V6(header.destination_addr());

    // Walk the extension headers to the upper-layer protocol, stopping at a fragment header:
    // what follows it is the fragmentable part, which must be reassembled before it can be read.
    let mut next = header.next_header().0;
    let mut at = 0usize;
    loop {
        let ext = payload.get(at..).unwrap_or_default();
        let ext_len = match next {
            // Hop-by-hop, routing, destination options: length in 8-octet units, less one.
            0 | 43 | 60 => ext.get(1).map(|&len| (usize::from(len) + 1) * 8),
            // Authentication header: length in 4-octet units, less two.
            51 => ext.get(1).map(|&len| (usize::from(len) + 2) * 4),
            44 => Some(8),
            _ => break,
        };
        let Some(ext_len) = ext_len.filter(|&len| len <= ext.len()) else {
            return Err(Verdict::Bad(format!(
                "IPv6 extension header {next} cut: {}",
                shortfall(cut, payload.len(), claimed)
            )));
        };
        at += ext_len;
        let Some(fragment) = ext.first_chunk::<8>().filter(|_| next == 44) else {
            next = ext.first().copied().unwrap_or_default();
            continue;
        };
        // Next header (1), reserved (1), offset (13 bits) and flags (3 bits), identification (4).
        next = fragment[0];
        let offset_flags = u16::from_be_bytes([fragment[2], fragment[3]]);
        let offset = usize::from(offset_flags >> 3) * 8;
        let more = offset_flags & 1 == 1;
        if offset == 0 && !more {
            // An atomic fragment: a whole datagram that merely carries the header.
            continue;
        }
        if next != IpNumber::UDP.0 {
            return Err(Verdict::Skip(format!(
                "IPv6 fragment of protocol {}, not UDP",
                protocol_name(IpNumber(next))
            )));
        }
        if payload.len() < claimed {
            return Err(Verdict::Bad(format!(
                "IPv6 fragment cut: {}",
                shortfall(cut, payload.len(), claimed)
            )));
        }
        return Ok(Decoded::Fragment(Fragment {
            key: FragmentKey {
                source,
                destination,
                protocol: next,
                identification: u32::from_be_bytes([
                    fragment[4],
                    fragment[5],
                    fragment[6],
                    fragment[7],
                ]),
            },
            offset,
            more,
            payload: payload.get(at..).unwrap_or_default(),
        }));
    }
    if next != IpNumber::UDP.0 {
        return Err(Verdict::Skip(format!(
            "IPv6 next header {}, not UDP",
            protocol_name(IpNumber(next))
        )));
    }
    let rest = payload.get(at..).unwrap_or_default();
    udp(
        source,
        destination,
        rest,
        claimed.saturating_sub(at),
        cut,
        port,
    )
    .map(Decoded::Udp)
}

/// Describes bytes missing from a frame: cut by the snapshot length, or promised by a length
/// field (IP or UDP) that the frame does not honour.
fn shortfall(cut: bool, present: usize, wanted: usize) -> String {
    if cut {
        format!("only {present} of {wanted} bytes captured (snapshot length)")
    } else {
        format!("{wanted} bytes expected, only {present} in the frame")
    }
}

/// Reads a UDP header from `bytes` (at most `claimed` long, the length the IP layer gives) and
/// keeps the datagram if either port is `port`.
fn udp(
    source: IpAddr,
    destination: IpAddr,
    bytes: &[u8],
    claimed: usize,
    cut: bool,
    port: u16,
) -> Result<Udp<'_>, Verdict> {
    if claimed < 8 {
        return Err(Verdict::Bad(format!(
            "IP payload of {claimed} bytes is too short for the 8-byte UDP header"
        )));
    }
    // Source port (2), destination port (2), length (2), checksum (2). The checksum is not
    // checked: captures of outgoing traffic carry whatever the NIC offload left in it.
    let Some((header, rest)) = bytes.split_first_chunk::<8>() else {
        return Err(Verdict::Bad(format!(
            "UDP header cut: {}",
            shortfall(cut, bytes.len(), 8)
        )));
    };
    let source_port = u16::from_be_bytes([header[0], header[1]]);
    let destination_port = u16::from_be_bytes([header[2], header[3]]);
    if source_port != port && destination_port != port {
        return Err(Verdict::Skip(format!(
            "UDP port {source_port} -> {destination_port}"
        )));
    }
    let length = usize::from(u16::from_be_bytes([header[4], header[5]]));
    if length < 8 {
        return Err(Verdict::Bad(format!(
            "UDP length {length} is less than its 8-byte header"
        )));
    }
    if length > claimed {
        return Err(Verdict::Bad(format!(
            "UDP length {length} is more than the {claimed}-byte IP payload"
        )));
    }
    let Some(payload) = rest.get(..length - 8) else {
        return Err(Verdict::Bad(format!(
            "UDP datagram cut: {}",
            shortfall(cut, bytes.len(), length)
        )));
    };
    Ok(Udp {
        source: SocketAddr::new(source, source_port),
        destination: SocketAddr::new(destination, destination_port),
        payload,
    })
}

// ---------------------------------------------------------------------------------------------
// IP fragment reassembly.

/// What identifies the fragments of one datagram (RFC 791; RFC 8200 for IPv6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FragmentKey {
    source: IpAddr,
    destination: IpAddr,
    protocol: u8,
    identification: u32,
}

impl FragmentKey {
    fn version(&self) -> &'static str {
        if self.source.is_ipv4() {
            "IPv4"
        } else {
            "IPv6"
        }
    }
}

/// One fragment: `payload` goes at byte `offset` of the datagram's IP payload.
struct Fragment<'a> {
    key: FragmentKey,
    offset: usize,
    more: bool,
    payload: &'a [u8],
}

/// A datagram waiting for fragments.
struct Pending {
    key: FragmentKey,
    /// Capture time of its first fragment: the timeout runs from there.
    started: f64,
    data: Vec<u8>,
    /// Byte ranges received, sorted, disjoint and not touching.
    received: Vec<Range<usize>>,
    /// Length of the datagram, known once the last fragment arrives.
    end: Option<usize>,
}

enum FragmentOutcome {
    Stored,
    Complete(Vec<u8>),
    Rejected(String),
}

/// Reassembles fragmented datagrams within fixed bounds: [`MAX_PENDING_DATAGRAMS`] at once, each
/// at most 65,535 bytes, each for at most [`FRAGMENT_TIMEOUT_SECONDS`] of capture time.
///
/// Not etherparse's `defrag::IpDefragPool`: by its own documentation it has no bound on the
/// datagrams it holds, and it has no notion of capture time.
///
/// Overlapping fragments keep the bytes that arrived first, so a later overlapping fragment
/// cannot rewrite data already received (the choice RFC 5722 motivates); exact duplicates are
/// harmless.
#[derive(Default)]
struct Reassembler {
    /// Oldest first, so eviction takes index 0.
    pending: Vec<Pending>,
}

impl Reassembler {
    /// Drops datagrams whose first fragment is more than the timeout before `now`; returns how
    /// many.
    fn expire(&mut self, now: f64) -> u64 {
        let before = self.pending.len();
        self.pending.retain(|p| {
            let age = now - p.started;
            // A timestamp that is not a number cannot age anything out.
            age.is_nan() || age <= FRAGMENT_TIMEOUT_SECONDS
        });
        (before - self.pending.len()) as u64
    }

    /// Drops every pending datagram; returns how many.
    fn clear(&mut self) -> u64 {
        let count = self.pending.len() as u64;
        self.pending.clear();
        count
    }

    /// Stores a fragment; returns the outcome and how many pending datagrams were evicted to make
    /// room.
    fn add(&mut self, fragment: &Fragment<'_>, now: f64) -> (FragmentOutcome, u64) {
        let start = fragment.offset;
        let end = start + fragment.payload.len();
        if end > MAX_DATAGRAM_LEN {
            let why = format!("it ends at byte {end}, beyond the {MAX_DATAGRAM_LEN}-byte limit");
            return (FragmentOutcome::Rejected(why), 0);
        }
        if fragment.more && !fragment.payload.len().is_multiple_of(8) {
            let why = format!(
                "a fragment with more to follow has {} bytes, not a multiple of 8",
                fragment.payload.len()
            );
            return (FragmentOutcome::Rejected(why), 0);
        }
        let mut evicted = 0;
        let index = match self.pending.iter().position(|p| p.key == fragment.key) {
            Some(index) => index,
            None => {
                if self.pending.len() >= MAX_PENDING_DATAGRAMS {
                    self.pending.remove(0);
                    evicted = 1;
                }
                self.pending.push(Pending {
                    key: fragment.key,
                    started: now,
                    data: Vec::new(),
                    received: Vec::new(),
                    end: None,
                });
                self.pending.len() - 1
            }
        };
        let Some(pending) = self.pending.get_mut(index) else {
            return (
                FragmentOutcome::Rejected("lost pending datagram".into()),
                evicted,
            );
        };
        if let Some(known) = pending.end
            && (end > known || (!fragment.more && end != known))
        {
            let why = format!(
                "it ends at byte {end}, but the last fragment ended the datagram at {known}"
            );
            return (FragmentOutcome::Rejected(why), evicted);
        }
        if !fragment.more {
            let seen = pending.received.last().map_or(0, |r| r.end);
            if seen > end {
                let why =
                    format!("it ends the datagram at byte {end}, but bytes up to {seen} arrived");
                return (FragmentOutcome::Rejected(why), evicted);
            }
            pending.end = Some(end);
        }
        if start < end {
            pending.fill(start, fragment.payload);
        }
        let complete = pending.end.is_some_and(|end| {
            matches!(pending.received.as_slice(), [only] if only.start == 0 && only.end == end)
        });
        if complete {
            let mut done = self.pending.remove(index);
            done.data.truncate(done.end.unwrap_or_default());
            return (FragmentOutcome::Complete(done.data), evicted);
        }
        (FragmentOutcome::Stored, evicted)
    }
}

impl Pending {
    /// Copies `payload` to `start` wherever no byte has been received yet, and records the range.
    fn fill(&mut self, start: usize, payload: &[u8]) {
        let end = start + payload.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        let mut copy = |from: usize, to: usize| {
            if let (Some(target), Some(source)) = (
                self.data.get_mut(from..to),
                payload.get(from - start..to - start),
            ) {
                target.copy_from_slice(source);
            }
        };
        let mut position = start;
        for range in &self.received {
            if range.end <= position {
                continue;
            }
            if range.start >= end {
                break;
            }
            if range.start > position {
                copy(position, range.start);
            }
            position = position.max(range.end);
            if position >= end {
                break;
            }
        }
        if position < end {
            copy(position, end);
        }
        // Insert the new range and merge it with any it overlaps or touches.
        let mut merged = start..end;
        self.received.retain(|range| {
            let touches = range.start <= merged.end && merged.start <= range.end;
            if touches {
                merged = merged.start.min(range.start)..merged.end.max(range.end);
            }
            !touches
        });
        let at = self
            .received
            .partition_point(|range| range.start < merged.start);
        self.received.insert(at, merged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment(offset: usize, more: bool, payload: &[u8]) -> Fragment<'_> {
        Fragment {
            key: FragmentKey {
                source: IpAddr::from([10, 0, 0, 1]),
                destination: IpAddr::from([10, 0, 0, 2]),
                protocol: 17,
                identification: 1,
            },
            offset,
            more,
            payload,
        }
    }

    #[test]
    fn grows_the_record_buffer_only_as_data_arrives() {
        let mut input = Input {
            reader: &[7u8; 10][..],
            offset: 0,
        };
        let mut buf = Vec::new();
        assert_eq!(input.read_vec(&mut buf, 10_000_000).unwrap(), 10);
        assert_eq!(buf, [7; 10]);
        assert!(buf.capacity() <= 64 * 1024, "{}", buf.capacity());
        assert_eq!(input.offset, 10);
    }

    #[test]
    fn converts_every_timestamp_resolution_without_panicking() {
        let at = |resolution, timestamp| {
            Interface {
                link_type: 1,
                snaplen: 0,
                resolution,
                offset_seconds: 0,
            }
            .seconds(timestamp)
        };
        assert_eq!(at(6, 1_500_000), 1.5);
        assert_eq!(at(3, 2_250), 2.25);
        assert_eq!(at(0x80 | 1, 3), 1.5);
        assert_eq!(at(0, 42), 42.0);
        for resolution in 0..=u8::MAX {
            assert!(at(resolution, u64::MAX).is_finite(), "{resolution}");
        }
        let shifted = Interface {
            link_type: 1,
            snaplen: 0,
            resolution: 6,
            offset_seconds: -10,
        };
        assert_eq!(shifted.seconds(12_000_000), 2.0);
    }

    #[test]
    fn merges_received_ranges_that_touch_or_overlap() {
        let mut reassembler = Reassembler::default();
        let data: Vec<u8> = (0..64).collect();
        for (start, end) in [(16, 24), (40, 48), (0, 8), (24, 40)] {
            let (outcome, _) = reassembler.add(&fragment(start, true, &data[start..end]), 0.0);
            assert!(matches!(outcome, FragmentOutcome::Stored));
        }
        assert_eq!(reassembler.pending[0].received, [0..8, 16..48]);
        let (outcome, _) = reassembler.add(&fragment(48, false, &data[48..]), 0.0);
        assert!(matches!(outcome, FragmentOutcome::Stored));
        let (outcome, _) = reassembler.add(&fragment(0, true, &data[..24]), 0.0);
        match outcome {
            FragmentOutcome::Complete(whole) => assert_eq!(whole, data),
            _ => panic!("datagram not complete"),
        }
        assert!(reassembler.pending.is_empty());
    }

    #[test]
    fn rejects_a_fragment_past_the_largest_datagram() {
        let mut reassembler = Reassembler::default();
        let (outcome, _) = reassembler.add(&fragment(65_528, false, &[0; 8]), 0.0);
        assert!(matches!(outcome, FragmentOutcome::Rejected(why) if why.contains("65535")));
        assert!(reassembler.pending.is_empty());
    }

    #[test]
    fn does_not_expire_fragments_on_a_timestamp_that_is_not_a_number() {
        let mut reassembler = Reassembler::default();
        reassembler.add(&fragment(0, true, &[0; 8]), 0.0);
        assert_eq!(reassembler.expire(f64::NAN), 0);
        assert_eq!(reassembler.expire(30.0), 0);
        assert_eq!(reassembler.expire(30.5), 1);
    }

    #[test]
    fn decodes_ipv6_atomic_fragments_as_whole_datagrams() {
        // IPv6 header, fragment header with offset 0 and no more fragments, UDP.
        let mut packet = vec![0x60, 0, 0, 0, 0, 17, 44, 64];
        packet.extend([0; 32]);
        packet.extend([17, 0, 0, 0, 0, 0, 0, 1]);
        packet.extend(JUDP_PORT.to_be_bytes());
        packet.extend(JUDP_PORT.to_be_bytes());
        packet.extend([0, 9, 0, 0, 0xaa]);
        match decode(link_type::IPV6, &packet, false, JUDP_PORT) {
            Ok(Decoded::Udp(udp)) => assert_eq!(udp.payload, [0xaa]),
            _ => panic!("not decoded"),
        }
    }

    #[test]
    fn reports_cut_link_headers() {
        for (link, needed) in [
            (link_type::ETHERNET, 14),
            (link_type::LINUX_SLL, 16),
            (link_type::LINUX_SLL2, 20),
            (link_type::NULL, 4),
        ] {
            match decode(link, &[0; 3], false, JUDP_PORT) {
                Err(Verdict::Bad(reason)) => {
                    assert!(
                        reason.ends_with(&format!("cut: 3 of {needed} bytes")),
                        "{reason}"
                    );
                }
                _ => panic!("link type {link} accepted 3 bytes"),
            }
        }
    }
}
