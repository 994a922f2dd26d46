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
use std::io::{self, BufReader, Read};
use std::iter::FusedIterator;
use std::net::SocketAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};

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

mod fragments;
mod input;
mod layers;
mod pcap;
mod pcapng;

use fragments::{FragmentOutcome, Reassembler};
use input::{Endian, Input, Part, io_error};
use layers::{Decoded, decode, udp};
use pcap::{PcapFormat, read_pcap_header, read_pcap_record};
use pcapng::{NgState, read_pcapng_record, read_section_header};

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
                let part = Part {
                    frame: 1,
                    offset: 0,
                    what: "section header block needs",
                    needed: 12,
                    before: 4,
                };
                input.fill(&mut rest, part)?;
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

/// The file's format and what reading it needs to remember.
enum Format {
    Pcap(PcapFormat),
    PcapNg(NgState),
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

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::fragments::{Fragment, FragmentKey};
    use super::layers::{Verdict, link_type};
    use super::pcapng::Interface;
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
