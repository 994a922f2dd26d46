//! Capture import: synthetic pcap and pcapng files built byte by byte, the real SAE capture,
//! damaged files cut at every length, and arbitrary bytes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::borrow::Cow;
use std::io::Cursor;
use std::net::SocketAddr;
use std::time::Duration;

use jaus_ocu::record::capture::{
    CaptureDatagram, CaptureError, CaptureEvent, CaptureFormat, CaptureReader, CaptureStats,
    JUDP_PORT, MAX_PENDING_DATAGRAMS,
};
use proptest::prelude::*;

const REAL_CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/SAE_Management_PacketCapture.pcap"
);

const PORT: u16 = JUDP_PORT;
const A: [u8; 4] = [192, 168, 0, 242];
const B: [u8; 4] = [192, 168, 0, 233];
const A6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

// ---------------------------------------------------------------------------------------------
// Packet builders.

/// A UDP header (checksum zero: the reader must not care) followed by `payload`.
fn udp(source_port: u16, destination_port: u16, payload: &[u8]) -> Vec<u8> {
    let length = u16::try_from(8 + payload.len()).unwrap();
    let mut out = Vec::new();
    out.extend(source_port.to_be_bytes());
    out.extend(destination_port.to_be_bytes());
    out.extend(length.to_be_bytes());
    out.extend([0, 0]);
    out.extend(payload);
    out
}

/// An IPv4 header (no options) around `payload`; `fragment` is the flags-and-offset word.
fn ipv4(
    source: [u8; 4],
    destination: [u8; 4],
    protocol: u8,
    id: u16,
    fragment: u16,
    payload: &[u8],
) -> Vec<u8> {
    let total = u16::try_from(20 + payload.len()).unwrap();
    let mut out = vec![0x45, 0];
    out.extend(total.to_be_bytes());
    out.extend(id.to_be_bytes());
    out.extend(fragment.to_be_bytes());
    out.extend([64, protocol, 0, 0]);
    out.extend(source);
    out.extend(destination);
    out.extend(payload);
    out
}

fn ipv4_udp(source_port: u16, destination_port: u16, payload: &[u8]) -> Vec<u8> {
    ipv4(A, B, 17, 1, 0, &udp(source_port, destination_port, payload))
}

/// An IPv6 header around `payload` (which starts with the `next` header).
fn ipv6(next: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x60, 0, 0, 0];
    out.extend(u16::try_from(payload.len()).unwrap().to_be_bytes());
    out.extend([next, 64]);
    out.extend(A6);
    out.extend(B6);
    out.extend(payload);
    out
}

fn ethernet(ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![
        0x01, 0x00, 0x5e, 0x7f, 0x00, 0x01, 0x00, 0x21, 0x9b, 0xe7, 0x63, 0xf1,
    ];
    out.extend(ether_type.to_be_bytes());
    out.extend(payload);
    out
}

/// Pads a frame to the 60-byte Ethernet minimum, as NICs do.
fn padded(mut frame: Vec<u8>) -> Vec<u8> {
    if frame.len() < 60 {
        frame.resize(60, 0xee);
    }
    frame
}

fn vlan(tci: u16, ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = tci.to_be_bytes().to_vec();
    out.extend(ether_type.to_be_bytes());
    out.extend(payload);
    out
}

fn sll(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 0, 1, 0, 6, 0, 0x21, 0x9b, 0xe7, 0x63, 0xf1, 0, 0];
    out.extend(protocol.to_be_bytes());
    out.extend(payload);
    out
}

fn sll2(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = protocol.to_be_bytes().to_vec();
    out.extend([
        0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 0, 0x21, 0x9b, 0xe7, 0x63, 0xf1, 0, 0,
    ]);
    out.extend(payload);
    out
}

// ---------------------------------------------------------------------------------------------
// File builders.

#[derive(Clone, Copy, PartialEq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, value: u16) -> [u8; 2] {
        match self {
            Order::Little => value.to_le_bytes(),
            Order::Big => value.to_be_bytes(),
        }
    }
    fn u32(self, value: u32) -> [u8; 4] {
        match self {
            Order::Little => value.to_le_bytes(),
            Order::Big => value.to_be_bytes(),
        }
    }
}

/// One classic pcap record: seconds, fraction, data, original length.
struct Rec {
    seconds: u32,
    fraction: u32,
    data: Vec<u8>,
    original_len: u32,
}

fn rec(seconds: u32, fraction: u32, data: Vec<u8>) -> Rec {
    let original_len = data.len() as u32;
    Rec {
        seconds,
        fraction,
        data,
        original_len,
    }
}

fn pcap(order: Order, nanos: bool, link_type: u32, records: &[Rec]) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut out = Vec::new();
    out.extend(order.u32(magic));
    out.extend(order.u16(2));
    out.extend(order.u16(4));
    out.extend(order.u32(0));
    out.extend(order.u32(0));
    out.extend(order.u32(65535));
    out.extend(order.u32(link_type));
    for r in records {
        out.extend(order.u32(r.seconds));
        out.extend(order.u32(r.fraction));
        out.extend(order.u32(r.data.len() as u32));
        out.extend(order.u32(r.original_len));
        out.extend(&r.data);
    }
    out
}

/// Frames at one second apart, all with the same link type, little-endian microseconds.
fn pcap_of(link_type: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let records: Vec<Rec> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| rec(1_000 + i as u32, 0, f.clone()))
        .collect();
    pcap(Order::Little, false, link_type, &records)
}

fn block(order: Order, block_type: u32, body: &[u8]) -> Vec<u8> {
    let padded = body.len().next_multiple_of(4);
    let length = u32::try_from(12 + padded).unwrap();
    let mut out = Vec::new();
    out.extend(order.u32(block_type));
    out.extend(order.u32(length));
    out.extend(body);
    out.resize(8 + padded, 0);
    out.extend(order.u32(length));
    out
}

fn shb(order: Order) -> Vec<u8> {
    let mut body = order.u32(0x1a2b_3c4d).to_vec();
    body.extend(order.u16(1));
    body.extend(order.u16(0));
    body.extend([0xff; 8]);
    block(order, 0x0a0d_0d0a, &body)
}

fn idb(order: Order, link_type: u16, snaplen: u32, tsresol: Option<u8>) -> Vec<u8> {
    let mut body = order.u16(link_type).to_vec();
    body.extend([0, 0]);
    body.extend(order.u32(snaplen));
    if let Some(resolution) = tsresol {
        body.extend(order.u16(9));
        body.extend(order.u16(1));
        body.extend([resolution, 0, 0, 0]);
        body.extend([0, 0, 0, 0]);
    }
    block(order, 1, &body)
}

fn epb(order: Order, interface: u32, timestamp: u64, data: &[u8], original_len: u32) -> Vec<u8> {
    let mut body = order.u32(interface).to_vec();
    body.extend(order.u32((timestamp >> 32) as u32));
    body.extend(order.u32(timestamp as u32));
    body.extend(order.u32(data.len() as u32));
    body.extend(order.u32(original_len));
    body.extend(data);
    block(order, 6, &body)
}

fn spb(order: Order, data: &[u8]) -> Vec<u8> {
    let mut body = order.u32(data.len() as u32).to_vec();
    body.extend(data);
    block(order, 3, &body)
}

// ---------------------------------------------------------------------------------------------
// Reading helpers.

struct Read {
    events: Vec<CaptureEvent>,
    error: Option<CaptureError>,
    stats: CaptureStats,
}

impl Read {
    fn datagrams(&self) -> Vec<&CaptureDatagram> {
        self.events
            .iter()
            .filter_map(|e| match e {
                CaptureEvent::Datagram(d) => Some(d),
                _ => None,
            })
            .collect()
    }

    fn payloads(&self) -> Vec<Vec<u8>> {
        self.datagrams().iter().map(|d| d.payload.clone()).collect()
    }

    fn only_bad_reason(&self) -> &str {
        match self.events.as_slice() {
            [CaptureEvent::Bad { reason, .. }] => reason,
            other => panic!("expected one Bad event, got {other:?}"),
        }
    }
}

fn read(bytes: &[u8]) -> Read {
    let mut reader = CaptureReader::new(Cursor::new(bytes), PORT).expect("capture header");
    let mut events = Vec::new();
    let mut error = None;
    for item in reader.by_ref() {
        match item {
            Ok(event) => events.push(event),
            Err(e) => error = Some(e),
        }
    }
    // The iterator is fused after the end.
    assert!(reader.next().is_none());
    Read {
        events,
        error,
        stats: *reader.stats(),
    }
}

fn read_clean(bytes: &[u8]) -> Read {
    let read = read(bytes);
    if let Some(error) = &read.error {
        panic!("unexpected error: {error}");
    }
    read
}

fn addr(ip: [u8; 4], port: u16) -> SocketAddr {
    SocketAddr::from((ip, port))
}

// ---------------------------------------------------------------------------------------------
// The real capture.

#[test]
fn reads_all_22_judp_datagrams_from_the_sae_capture() {
    let reader = CaptureReader::open(REAL_CAPTURE.as_ref(), JUDP_PORT).unwrap();
    assert_eq!(
        reader.format(),
        CaptureFormat::Pcap {
            nanosecond: false,
            big_endian: false
        }
    );
    let events: Vec<CaptureEvent> = reader.map(Result::unwrap).collect();
    let datagrams: Vec<&CaptureDatagram> = events
        .iter()
        .filter_map(|e| match e {
            CaptureEvent::Datagram(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(datagrams.len(), 22);
    let first = datagrams[0];
    assert_eq!(first.frame, 1);
    assert_eq!(first.source, "192.168.0.242:3794".parse().unwrap());
    assert_eq!(first.destination, "239.255.0.1:3794".parse().unwrap());
    assert_eq!(
        first.payload,
        [
            0x02, 0x00, 0x11, 0x00, 0x19, 0x0a, 0x01, 0x7e, 0x00, 0x14, 0x01, 0x7e, 0x00, 0x0d,
            0x00, 0xc8, 0x01, 0x00
        ]
    );
    assert!(
        (first.time - 1_297_197_788.124_12).abs() < 1e-6,
        "{}",
        first.time
    );
    for d in &datagrams {
        // JUDP: a one-byte transport version, then the JAUS message length (LE u16), which
        // counts everything after the version byte. Ethernet padding would break this.
        let length = u16::from_le_bytes([d.payload[2], d.payload[3]]);
        assert_eq!(
            d.payload.len() - 1,
            usize::from(length),
            "frame {}",
            d.frame
        );
    }
    let frames: Vec<u64> = datagrams.iter().map(|d| d.frame).collect();
    assert_eq!(frames, (1..=22).collect::<Vec<u64>>());
}

#[test]
fn counts_the_sae_capture_in_stats() {
    let mut reader = CaptureReader::open(REAL_CAPTURE.as_ref(), JUDP_PORT).unwrap();
    assert!(reader.by_ref().all(|e| e.is_ok()));
    let stats = reader.stats();
    assert_eq!(
        (stats.frames, stats.datagrams, stats.skipped, stats.bad),
        (22, 22, 0, 0)
    );
}

#[test]
fn skips_every_sae_frame_on_another_port() {
    let reader = CaptureReader::open(REAL_CAPTURE.as_ref(), 9999).unwrap();
    let events: Vec<CaptureEvent> = reader.map(Result::unwrap).collect();
    assert_eq!(events.len(), 22);
    assert!(
        events
            .iter()
            .all(|e| matches!(e, CaptureEvent::Skipped { .. }))
    );
}

#[test]
fn open_names_a_missing_file() {
    let error = CaptureReader::open("/nonexistent/x.pcap".as_ref(), PORT).unwrap_err();
    assert!(error.to_string().contains("/nonexistent/x.pcap"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Classic pcap variants.

fn one_datagram_file(order: Order, nanos: bool) -> Vec<u8> {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"hello")));
    pcap(order, nanos, 1, &[rec(1_700_000_000, 250_000, frame)])
}

#[test]
fn reads_pcap_in_both_byte_orders_and_resolutions() {
    for (order, nanos, fraction) in [
        (Order::Little, false, 0.25),
        (Order::Big, false, 0.25),
        (Order::Little, true, 0.000_25),
        (Order::Big, true, 0.000_25),
    ] {
        let bytes = one_datagram_file(order, nanos);
        let reader = CaptureReader::new(Cursor::new(&bytes), PORT).unwrap();
        assert_eq!(
            reader.format(),
            CaptureFormat::Pcap {
                nanosecond: nanos,
                big_endian: order == Order::Big
            }
        );
        let read = read_clean(&bytes);
        let datagrams = read.datagrams();
        assert_eq!(datagrams.len(), 1);
        assert_eq!(datagrams[0].payload, b"hello");
        assert_eq!(datagrams[0].source, addr(A, PORT));
        assert_eq!(datagrams[0].destination, addr(B, PORT));
        assert!((datagrams[0].time - (1_700_000_000.0 + fraction)).abs() < 1e-6);
    }
}

#[test]
fn reads_pcap_written_by_the_pcap_file_crate() {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::{DataLink, Endianness, TsResolution};
    for (endianness, ts_resolution) in [
        (Endianness::Big, TsResolution::NanoSecond),
        (Endianness::Little, TsResolution::MicroSecond),
    ] {
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            endianness,
            ts_resolution,
            ..PcapHeader::default()
        };
        let mut writer = PcapWriter::with_header(Vec::new(), header).unwrap();
        let frame = padded(ethernet(0x0800, &ipv4_udp(40000, PORT, b"abc")));
        let packet = PcapPacket::new(Duration::new(12, 500_000_000), frame.len() as u32, &frame);
        writer.write_packet(&packet).unwrap();
        let read = read_clean(&writer.into_writer());
        let datagrams = read.datagrams();
        assert_eq!(datagrams.len(), 1);
        assert_eq!(datagrams[0].payload, b"abc");
        assert_eq!(datagrams[0].source, addr(A, 40000));
        assert!((datagrams[0].time - 12.5).abs() < 1e-9);
    }
}

#[test]
fn rejects_input_that_is_not_a_capture() {
    let error = CaptureReader::new(Cursor::new(b"GIF89a...."), PORT).unwrap_err();
    assert_eq!(
        error.to_string(),
        "not a pcap or pcapng file (magic bytes 0x47494638)"
    );
    let error = CaptureReader::new(Cursor::new(b"ab"), PORT).unwrap_err();
    assert!(
        matches!(error, CaptureError::TooShort { len: 2 }),
        "{error}"
    );
}

#[test]
fn reports_a_cut_record_with_its_frame_offset_and_byte_counts() {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"x")));
    let mut bytes = pcap_of(1, &[frame.clone(), frame.clone()]);
    bytes.truncate(24 + 16 + 60 + 16 + 12);
    let read = read(&bytes);
    assert_eq!(read.datagrams().len(), 1);
    assert_eq!(
        read.error.unwrap().to_string(),
        "capture truncated in frame 2 at byte offset 100: record header says 60 bytes, 12 remain"
    );
}

#[test]
fn rejects_an_absurd_record_length_without_reading_it() {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"x")));
    let mut bytes = pcap_of(1, &[frame]);
    bytes.extend(1u32.to_le_bytes());
    bytes.extend(0u32.to_le_bytes());
    bytes.extend(0xffff_fff0u32.to_le_bytes());
    bytes.extend(0xffff_fff0u32.to_le_bytes());
    bytes.extend([0; 10]);
    let read = read(&bytes);
    assert_eq!(read.datagrams().len(), 1);
    let error = read.error.unwrap();
    assert!(
        matches!(
            error,
            CaptureError::Corrupt {
                frame: 2,
                offset: 100,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn reports_a_record_length_longer_than_the_file_as_truncation() {
    let mut bytes = pcap_of(1, &[]);
    bytes.extend(1u32.to_le_bytes());
    bytes.extend(0u32.to_le_bytes());
    bytes.extend(10_000_000u32.to_le_bytes());
    bytes.extend(10_000_000u32.to_le_bytes());
    bytes.extend([0; 10]);
    let error = read(&bytes).error.unwrap();
    assert_eq!(
        error.to_string(),
        "capture truncated in frame 1 at byte offset 24: record header says 10000000 bytes, 10 remain"
    );
}

// ---------------------------------------------------------------------------------------------
// pcapng.

#[test]
fn reads_pcapng_with_two_interfaces_of_different_link_types_and_resolutions() {
    for order in [Order::Little, Order::Big] {
        let mut bytes = shb(order);
        // Interface 0: Ethernet, default microseconds. Interface 1: raw IP, nanoseconds.
        bytes.extend(idb(order, 1, 65535, None));
        bytes.extend(idb(order, 101, 65535, Some(9)));
        let on_ethernet = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"eth")));
        let on_raw = ipv4_udp(PORT, 5000, b"raw!");
        bytes.extend(epb(
            order,
            0,
            1_700_000_000_123_456,
            &on_ethernet,
            on_ethernet.len() as u32,
        ));
        // A name resolution block in between is not a frame.
        bytes.extend(block(order, 4, &[0; 4]));
        bytes.extend(epb(
            order,
            1,
            1_700_000_001_000_000_500,
            &on_raw,
            on_raw.len() as u32,
        ));
        bytes.extend(spb(order, &on_ethernet));
        let reader = CaptureReader::new(Cursor::new(&bytes), PORT).unwrap();
        assert_eq!(reader.format(), CaptureFormat::PcapNg);
        let read = read_clean(&bytes);
        let datagrams = read.datagrams();
        assert_eq!(read.payloads(), [&b"eth"[..], b"raw!", b"eth"]);
        assert_eq!(
            datagrams.iter().map(|d| d.frame).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert!((datagrams[0].time - 1_700_000_000.123_456).abs() < 1e-6);
        assert!((datagrams[1].time - 1_700_000_001.000_000_5).abs() < 1e-6);
        // A simple packet block has no timestamp: it reuses the previous frame's.
        assert_eq!(datagrams[2].time, datagrams[1].time);
        assert_eq!(datagrams[1].destination, addr(B, 5000));
    }
}

#[test]
fn reads_binary_timestamp_resolution_and_a_new_section() {
    let mut bytes = shb(Order::Little);
    // 2^-10 seconds.
    bytes.extend(idb(Order::Little, 1, 0, Some(0x80 | 0x0A)));
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"one")));
    bytes.extend(epb(
        Order::Little,
        0,
        1024 * 100 + 512,
        &frame,
        frame.len() as u32,
    ));
    // A second, big-endian section whose only interface is raw IPv4 (228).
    bytes.extend(shb(Order::Big));
    bytes.extend(idb(Order::Big, 228, 0, None));
    let raw = ipv4_udp(PORT, PORT, b"two");
    bytes.extend(epb(Order::Big, 0, 5_000_000, &raw, raw.len() as u32));
    // Interface 1 does not exist in this section.
    bytes.extend(epb(Order::Big, 1, 5_000_000, &raw, raw.len() as u32));
    let read = read_clean(&bytes);
    let datagrams = read.datagrams();
    assert_eq!(read.payloads(), [&b"one"[..], b"two"]);
    assert_eq!(datagrams[0].time, 100.5);
    assert_eq!(datagrams[1].time, 5.0);
    assert!(
        matches!(&read.events[2], CaptureEvent::Bad { frame: 3, reason, .. }
        if reason.contains("interface 1 has no interface description"))
    );
}

#[test]
fn reads_a_pcapng_written_by_the_pcap_file_crate() {
    use pcap_file::DataLink;
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption,
    };
    let mut writer = PcapNgWriter::new(Vec::new()).unwrap();
    // pcap-file writes enhanced packet timestamps in nanoseconds, so say so.
    writer
        .write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::LINUX_SLL,
            snaplen: 0,
            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
        })
        .unwrap();
    let frame = sll(0x0800, &ipv4_udp(PORT, PORT, b"sll"));
    writer
        .write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::new(3, 250),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(&frame),
            options: vec![],
        })
        .unwrap();
    let read = read_clean(&writer.into_inner());
    assert_eq!(read.payloads(), [b"sll"]);
    assert!((read.datagrams()[0].time - 3.000_000_25).abs() < 1e-12);
}

#[test]
fn reports_a_pcapng_block_whose_trailer_disagrees() {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"ok")));
    let mut bytes = shb(Order::Little);
    bytes.extend(idb(Order::Little, 1, 0, None));
    bytes.extend(epb(Order::Little, 0, 0, &frame, 60));
    let mut damaged = epb(Order::Little, 0, 0, &frame, 60);
    let end = damaged.len();
    damaged[end - 4] ^= 0x40;
    bytes.extend(damaged);
    bytes.extend(epb(Order::Little, 0, 0, &frame, 60));
    let read = read(&bytes);
    assert_eq!(read.datagrams().len(), 1);
    let error = read.error.unwrap();
    assert!(
        matches!(error, CaptureError::Corrupt { frame: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("trailing length"), "{error}");
}

#[test]
fn reports_an_enhanced_packet_block_whose_length_exceeds_it_as_bad() {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"ok")));
    let mut bytes = shb(Order::Little);
    bytes.extend(idb(Order::Little, 1, 0, None));
    let mut lying = epb(Order::Little, 0, 0, &frame, 60);
    // Captured length field: 8 (block header) + 12.
    lying[20..24].copy_from_slice(&500u32.to_le_bytes());
    bytes.extend(lying);
    bytes.extend(epb(Order::Little, 0, 0, &frame, 60));
    let read = read_clean(&bytes);
    assert!(
        matches!(&read.events[0], CaptureEvent::Bad { frame: 1, reason, .. }
        if reason.contains("500 captured bytes"))
    );
    assert_eq!(read.datagrams().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Link layers.

#[test]
fn reads_ethernet_with_vlan_tags() {
    let ip = ipv4_udp(PORT, PORT, b"tagged");
    let single = ethernet(0x8100, &vlan(5, 0x0800, &ip));
    let double = ethernet(0x88a8, &vlan(5, 0x8100, &vlan(7, 0x0800, &ip)));
    let read = read_clean(&pcap_of(1, &[single, double]));
    assert_eq!(read.payloads(), [b"tagged", b"tagged"]);
}

#[test]
fn reads_linux_cooked_captures() {
    let ip = ipv4_udp(PORT, PORT, b"cooked");
    let read = read_clean(&pcap_of(113, &[sll(0x0800, &ip), sll(0x0806, &[0; 28])]));
    assert_eq!(read.payloads(), [b"cooked"]);
    assert!(matches!(&read.events[1], CaptureEvent::Skipped { reason, .. } if reason == "ARP"));
    let read = read_clean(&pcap_of(276, &[sll2(0x0800, &ip)]));
    assert_eq!(read.payloads(), [b"cooked"]);
}

#[test]
fn reads_bsd_loopback_in_either_byte_order() {
    let ip = ipv4_udp(PORT, PORT, b"lo");
    let ip6 = ipv6(17, &udp(PORT, PORT, b"lo6"));
    let with = |family: [u8; 4], packet: &[u8]| [&family[..], packet].concat();
    let null = [
        with(2u32.to_le_bytes(), &ip),
        with(2u32.to_be_bytes(), &ip),
        with(30u32.to_le_bytes(), &ip6),
        with(24u32.to_be_bytes(), &ip6),
        with(7u32.to_le_bytes(), &ip),
    ];
    let read = read_clean(&pcap_of(0, &null));
    assert_eq!(read.payloads(), [&b"lo"[..], b"lo", b"lo6", b"lo6"]);
    assert_eq!(read.stats.skipped, 1);
    let read = read_clean(&pcap_of(108, &[with(2u32.to_be_bytes(), &ip)]));
    assert_eq!(read.payloads(), [b"lo"]);
}

#[test]
fn reads_raw_ip_under_every_link_type_number() {
    let ip = ipv4_udp(PORT, PORT, b"raw");
    let ip6 = ipv6(17, &udp(PORT, PORT, b"raw6"));
    for link_type in [101, 12, 14] {
        let read = read_clean(&pcap_of(link_type, &[ip.clone(), ip6.clone()]));
        assert_eq!(
            read.payloads(),
            [&b"raw"[..], b"raw6"],
            "link type {link_type}"
        );
    }
    assert_eq!(read_clean(&pcap_of(228, &[ip])).payloads(), [b"raw"]);
    let read = read_clean(&pcap_of(229, &[ip6]));
    assert_eq!(read.payloads(), [b"raw6"]);
    let d = read.datagrams()[0];
    assert_eq!(d.source, SocketAddr::from((A6, PORT)));
    assert_eq!(d.destination, SocketAddr::from((B6, PORT)));
}

#[test]
fn reads_ipv6_over_ethernet_past_extension_headers() {
    // Hop-by-hop options (8 bytes), then UDP.
    let mut payload = vec![17, 0, 1, 4, 0, 0, 0, 0];
    payload.extend(udp(PORT, 1234, b"ext"));
    let frame = ethernet(0x86dd, &ipv6(0, &payload));
    let read = read_clean(&pcap_of(1, &[frame]));
    assert_eq!(read.payloads(), [b"ext"]);
}

#[test]
fn reports_an_unknown_link_type_as_bad_and_keeps_reading() {
    let read = read_clean(&pcap_of(147, &[vec![1, 2, 3], vec![4, 5, 6]]));
    assert_eq!(read.stats.bad, 2);
    assert!(
        matches!(&read.events[0], CaptureEvent::Bad { frame: 1, reason, .. }
        if reason == "unsupported link type 147")
    );
}

// ---------------------------------------------------------------------------------------------
// Network and transport layers.

#[test]
fn delimits_the_payload_by_the_udp_length_not_the_padded_frame() {
    let frame = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, &[0xab, 0xcd])));
    assert_eq!(frame.len(), 60);
    let read = read_clean(&pcap_of(1, &[frame]));
    assert_eq!(read.payloads(), [[0xab, 0xcd]]);
}

#[test]
fn skips_frames_that_are_not_udp_on_the_port() {
    let frames = [
        ethernet(0x0806, &[0; 28]),
        ethernet(0x0800, &ipv4(A, B, 6, 1, 0, &[0; 20])),
        ethernet(0x0800, &ipv4_udp(53, 53, b"dns")),
        ethernet(0x0800, &ipv4_udp(PORT, 53, b"from the port")),
        ethernet(0x0800, &ipv4_udp(53, PORT, b"to the port")),
        ethernet(0x88cc, &[0; 20]),
    ];
    let read = read_clean(&pcap_of(1, &frames));
    assert_eq!(read.payloads(), [&b"from the port"[..], b"to the port"]);
    let reasons: Vec<&str> = read
        .events
        .iter()
        .filter_map(|e| match e {
            CaptureEvent::Skipped { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "ARP",
            "IPv4 protocol 6 (TCP), not UDP",
            "UDP port 53 -> 53",
            "EtherType 0x88cc, not IP"
        ]
    );
    assert_eq!(
        read.stats,
        CaptureStats {
            frames: 6,
            datagrams: 2,
            skipped: 4,
            ..CaptureStats::default()
        }
    );
}

#[test]
fn reports_datagrams_cut_by_the_snapshot_length() {
    let frame = ethernet(0x0800, &ipv4_udp(PORT, PORT, &[7; 100]));
    let mut cut = rec(1, 0, frame[..80].to_vec());
    cut.original_len = frame.len() as u32;
    // A frame whose cut fell in the Ethernet padding still holds the whole datagram.
    let whole = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, b"hi")));
    let mut cut_padding = rec(2, 0, whole[..52].to_vec());
    cut_padding.original_len = 60;
    let read = read_clean(&pcap(Order::Little, false, 1, &[cut, cut_padding]));
    assert!(
        matches!(&read.events[0], CaptureEvent::Bad { frame: 1, reason, .. }
        if reason.contains("snapshot length")),
        "{:?}",
        read.events[0]
    );
    assert_eq!(read.payloads(), [b"hi"]);
}

#[test]
fn reports_inconsistent_lengths_as_bad() {
    let with_lengths = |ip_total: Option<u16>, udp_length: u16| {
        let mut packet = ipv4_udp(PORT, PORT, b"abcd");
        if let Some(total) = ip_total {
            packet[2..4].copy_from_slice(&total.to_be_bytes());
        }
        packet[24..26].copy_from_slice(&udp_length.to_be_bytes());
        packet
    };
    let cut_udp_header = ipv4_udp(PORT, PORT, b"")[..24].to_vec();
    let packets = [
        with_lengths(None, 100),
        with_lengths(None, 4),
        with_lengths(Some(200), 100),
        with_lengths(Some(10), 12),
        cut_udp_header,
        vec![0x45, 0, 0],
        vec![0x42; 20],
    ];
    let reasons: Vec<String> = packets
        .into_iter()
        .map(|packet| {
            read_clean(&pcap_of(101, &[packet]))
                .only_bad_reason()
                .to_string()
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "UDP length 100 is more than the 12-byte IP payload",
            "UDP length 4 is less than its 8-byte header",
            "UDP datagram cut: 100 bytes expected, only 12 in the frame",
            "IPv4 total length 10 is less than its 20-byte header",
            "UDP header cut: 8 bytes expected, only 4 in the frame",
            "IPv4 header cut: 3 of 20 bytes",
            "IPv4 header length 2 is less than 5 words",
        ]
    );
}

#[test]
fn keeps_a_whole_udp_datagram_whose_ip_total_length_overstates() {
    let mut packet = ipv4_udp(PORT, PORT, b"abcd");
    packet[2..4].copy_from_slice(&200u16.to_be_bytes());
    assert_eq!(read_clean(&pcap_of(101, &[packet])).payloads(), [b"abcd"]);
}

// ---------------------------------------------------------------------------------------------
// Fragments.

/// Splits a UDP datagram into IPv4 fragments at the given 8-byte-aligned offsets.
fn fragments(id: u16, datagram: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(datagram.len());
    bounds
        .windows(2)
        .map(|w| {
            let more = if w[1] < datagram.len() { 0x2000 } else { 0 };
            let word = more | u16::try_from(w[0] / 8).unwrap();
            ipv4(A, B, 17, id, word, &datagram[w[0]..w[1]])
        })
        .collect()
}

fn big_payload() -> Vec<u8> {
    (0..3000u32).map(|i| (i % 251) as u8).collect()
}

#[test]
fn reassembles_fragments_in_order() {
    let payload = big_payload();
    let parts = fragments(7, &udp(PORT, PORT, &payload), &[1480, 2960]);
    let read = read_clean(&pcap_of(101, &parts));
    assert!(matches!(
        read.events[0],
        CaptureEvent::Fragment { frame: 1 }
    ));
    assert!(matches!(
        read.events[1],
        CaptureEvent::Fragment { frame: 2 }
    ));
    let datagrams = read.datagrams();
    assert_eq!(datagrams.len(), 1);
    assert_eq!(datagrams[0].frame, 3);
    assert_eq!(datagrams[0].payload, payload);
    assert_eq!(read.stats.fragments, 2);
    assert_eq!(read.stats.fragments_pending_dropped, 0);
}

#[test]
fn reassembles_fragments_out_of_order_and_duplicated() {
    let payload = big_payload();
    let parts = fragments(7, &udp(PORT, PORT, &payload), &[1000, 2000]);
    let shuffled = [
        parts[2].clone(),
        parts[0].clone(),
        parts[2].clone(),
        parts[1].clone(),
    ];
    let read = read_clean(&pcap_of(101, &shuffled));
    assert_eq!(read.payloads(), [payload]);
    assert_eq!(read.datagrams()[0].frame, 4);
}

#[test]
fn keeps_the_first_copy_of_overlapping_bytes() {
    let payload = vec![1u8; 40];
    let datagram = udp(PORT, PORT, &payload);
    let mut parts = fragments(9, &datagram, &[24]);
    // A rogue fragment rewriting bytes 8..24 with different data arrives between them.
    let rogue = ipv4(A, B, 17, 9, 0x2000 | 1, &[9; 16]);
    parts.insert(1, rogue);
    let read = read_clean(&pcap_of(101, &parts));
    assert_eq!(read.payloads(), [payload]);
}

#[test]
fn drops_fragments_never_completed_after_30_seconds() {
    let parts = fragments(3, &udp(PORT, PORT, &big_payload()), &[1480]);
    let other = ipv4_udp(PORT, PORT, b"later");
    let records = [
        rec(100, 0, parts[0].clone()),
        rec(120, 0, other.clone()),
        // 31 s after the first fragment: the datagram is gone, so its last part cannot
        // complete it and waits alone.
        rec(131, 0, other.clone()),
        rec(132, 0, parts[1].clone()),
    ];
    let read = read_clean(&pcap(Order::Little, false, 101, &records));
    assert_eq!(read.payloads(), [b"later", b"later"]);
    assert!(matches!(
        read.events[3],
        CaptureEvent::Fragment { frame: 4 }
    ));
    // One timed out, and the lone last fragment is dropped at the end of the file.
    assert_eq!(read.stats.fragments_pending_dropped, 2);
}

#[test]
fn bounds_the_number_of_pending_datagrams() {
    let datagram = udp(PORT, PORT, &[5; 100]);
    let firsts: Vec<Vec<u8>> = (0..=MAX_PENDING_DATAGRAMS as u16)
        .map(|id| fragments(id, &datagram, &[56]).remove(0))
        .collect();
    let mut frames = firsts;
    // Datagram 64 completes; the second half of datagram 0 arrives after it was evicted.
    let rests: Vec<Vec<u8>> = [64u16, 0]
        .iter()
        .map(|&id| fragments(id, &datagram, &[56]).remove(1))
        .collect();
    frames.extend(rests);
    let read = read_clean(&pcap_of(101, &frames));
    assert_eq!(read.datagrams().len(), 1);
    // Datagram 0 evicted, then datagrams 1..=63 and the second half of 0 left pending at the end.
    assert_eq!(read.stats.fragments_pending_dropped, 1 + 64);
}

#[test]
fn skips_fragments_of_other_protocols_and_ports() {
    let tcp = ipv4(A, B, 6, 4, 0x2000, &[0; 16]);
    let other_port = fragments(5, &udp(53, 53, &[0; 40]), &[24]);
    let mut frames = vec![tcp];
    frames.extend(other_port);
    let read = read_clean(&pcap_of(101, &frames));
    assert!(
        matches!(&read.events[0], CaptureEvent::Skipped { reason, .. } if reason.contains("TCP"))
    );
    assert!(matches!(read.events[1], CaptureEvent::Fragment { .. }));
    assert!(
        matches!(&read.events[2], CaptureEvent::Skipped { frame: 3, reason } if reason == "UDP port 53 -> 53")
    );
}

#[test]
fn rejects_fragments_that_contradict_the_datagram_end() {
    let datagram = udp(PORT, PORT, &[5; 40]);
    let parts = fragments(6, &datagram, &[24]);
    // A second "last" fragment that would end the datagram elsewhere.
    let conflicting = ipv4(A, B, 17, 6, 3, &[0; 8]);
    let unaligned = ipv4(A, B, 17, 8, 0x2000, &[0; 12]);
    let read = read_clean(&pcap_of(
        101,
        &[parts[1].clone(), conflicting, unaligned, parts[0].clone()],
    ));
    assert!(
        matches!(&read.events[1], CaptureEvent::Bad { reason, .. } if reason.contains("rejected"))
    );
    assert!(
        matches!(&read.events[2], CaptureEvent::Bad { reason, .. } if reason.contains("multiple of 8"))
    );
    assert_eq!(read.payloads(), [vec![5; 40]]);
}

#[test]
fn reassembles_ipv6_fragments() {
    let datagram = udp(PORT, PORT, &[6; 100]);
    let fragment = |offset: usize, more: bool, data: &[u8]| {
        let word = u16::try_from(offset).unwrap() | u16::from(more);
        let mut payload = vec![17, 0];
        payload.extend(word.to_be_bytes());
        payload.extend(0x1234_5678u32.to_be_bytes());
        payload.extend(data);
        ipv6(44, &payload)
    };
    let frames = [
        fragment(56, false, &datagram[56..]),
        fragment(0, true, &datagram[..56]),
    ];
    let read = read_clean(&pcap_of(229, &frames));
    assert_eq!(read.payloads(), [vec![6; 100]]);
}

// ---------------------------------------------------------------------------------------------
// Damage.

/// A sample capture: its bytes, where its file header ends, where each non-packet block ends
/// and where each packet record ends.
struct Sample {
    bytes: Vec<u8>,
    header_len: usize,
    other_ends: Vec<usize>,
    packet_ends: Vec<usize>,
}

fn sample_pcap() -> Sample {
    let frames: Vec<Vec<u8>> = (0..4u8)
        .map(|i| padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, &[i; 3]))))
        .collect();
    Sample {
        bytes: pcap_of(1, &frames),
        header_len: 24,
        other_ends: Vec::new(),
        packet_ends: (1..=4).map(|n| 24 + n * (16 + 60)).collect(),
    }
}

fn sample_pcapng() -> Sample {
    let mut bytes = shb(Order::Big);
    let header_len = bytes.len();
    let mut other_ends = Vec::new();
    bytes.extend(idb(Order::Big, 1, 0, Some(9)));
    other_ends.push(bytes.len());
    bytes.extend(idb(Order::Big, 113, 0, None));
    other_ends.push(bytes.len());
    let mut packet_ends = Vec::new();
    for i in 0..4u8 {
        let frame = if i % 2 == 0 {
            padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, &[i; 3])))
        } else {
            sll(0x0800, &ipv4_udp(PORT, PORT, &[i; 3]))
        };
        let length = frame.len() as u32;
        bytes.extend(epb(
            Order::Big,
            u32::from(i % 2),
            u64::from(i),
            &frame,
            length,
        ));
        packet_ends.push(bytes.len());
        if i == 1 {
            // An interface statistics block between packets.
            bytes.extend(block(Order::Big, 5, &[0; 12]));
            other_ends.push(bytes.len());
        }
    }
    let last = padded(ethernet(0x0800, &ipv4_udp(PORT, PORT, &[4; 3])));
    bytes.extend(spb(Order::Big, &last));
    packet_ends.push(bytes.len());
    Sample {
        bytes,
        header_len,
        other_ends,
        packet_ends,
    }
}

#[test]
fn yields_every_complete_frame_before_any_cut_then_one_error() {
    for (name, sample) in [("pcap", sample_pcap()), ("pcapng", sample_pcapng())] {
        assert_eq!(
            read_clean(&sample.bytes).datagrams().len(),
            sample.packet_ends.len()
        );
        for len in 0..sample.bytes.len() {
            let cut = &sample.bytes[..len];
            let reader = match CaptureReader::new(Cursor::new(cut), PORT) {
                Ok(reader) => reader,
                Err(error) => {
                    assert!(len < sample.header_len, "{name} cut at {len}: {error}");
                    continue;
                }
            };
            let items: Vec<_> = reader.collect();
            let complete = sample.packet_ends.iter().filter(|&&end| end <= len).count();
            let clean = len == sample.header_len
                || sample.packet_ends.contains(&len)
                || sample.other_ends.contains(&len);
            assert_eq!(
                items.len(),
                complete + usize::from(!clean),
                "{name} cut at {len}"
            );
            for (i, item) in items.iter().enumerate() {
                if i < complete {
                    let event = item.as_ref().unwrap();
                    let expected = [i as u8; 3];
                    assert!(
                        matches!(event, CaptureEvent::Datagram(d) if d.payload == expected),
                        "{name} cut at {len}: {event:?}"
                    );
                } else {
                    let message = item.as_ref().unwrap_err().to_string();
                    let prefix = format!("capture truncated in frame {}", complete + 1);
                    assert!(
                        message.starts_with(&prefix),
                        "{name} cut at {len}: {message}"
                    );
                }
            }
        }
    }
}

#[test]
fn reports_a_pcapng_block_length_that_breaks_framing() {
    let Sample {
        mut bytes,
        packet_ends: ends,
        ..
    } = sample_pcapng();
    // Give the second packet block a length that is not a multiple of 4.
    bytes[ends[0] + 7] = 0x4d;
    let read = read(&bytes);
    assert_eq!(read.datagrams().len(), 1);
    let error = read.error.unwrap();
    assert_eq!(
        error.to_string(),
        format!(
            "capture damaged in frame 2 at byte offset {}: block length 77 is not a multiple of 4",
            ends[0]
        )
    );
}

/// Hands out `data` a few bytes at a time, interrupted now and then, then fails.
struct Flaky {
    data: Vec<u8>,
    at: usize,
    calls: usize,
}

impl std::io::Read for Flaky {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        if self.at >= self.data.len() {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf.len().min(7).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[test]
fn reports_a_read_error_after_the_frames_before_it() {
    let sample = sample_pcap();
    let data = sample.bytes[..sample.packet_ends[1]].to_vec();
    let reader = CaptureReader::new(
        Flaky {
            data,
            at: 0,
            calls: 0,
        },
        PORT,
    )
    .unwrap();
    let items: Vec<_> = reader.collect();
    assert_eq!(items.len(), 3);
    assert!(
        items[..2]
            .iter()
            .all(|item| matches!(item, Ok(CaptureEvent::Datagram(_))))
    );
    let error = items[2].as_ref().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "read error in frame 3 at byte offset {}: disk on fire",
            sample.packet_ends[1]
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Arbitrary input.

fn drain(bytes: &[u8]) {
    if let Ok(reader) = CaptureReader::new(Cursor::new(bytes), PORT) {
        let mut errors = 0;
        for item in reader {
            errors += usize::from(item.is_err());
        }
        assert!(errors <= 1);
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        drain(&bytes);
    }

    #[test]
    fn arbitrary_bytes_after_a_magic_number_never_panic(
        magic in prop_oneof![
            Just([0xd4, 0xc3, 0xb2, 0xa1]),
            Just([0xa1, 0xb2, 0x3c, 0x4d]),
            Just([0x0a, 0x0d, 0x0d, 0x0a]),
        ],
        tail in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        drain(&[&magic[..], &tail].concat());
    }

    #[test]
    fn arbitrary_records_never_panic(
        link_type in prop_oneof![Just(0u32), Just(1), Just(12), Just(101), Just(108), Just(113), Just(228), Just(229), Just(276), any::<u32>()],
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..128), 0..8),
    ) {
        drain(&pcap_of(link_type, &frames));
    }

    #[test]
    fn arbitrary_ip_packets_never_panic(
        packets in proptest::collection::vec(
            (any::<u16>(), any::<u16>(), any::<u8>(), proptest::collection::vec(any::<u8>(), 0..64)),
            0..16,
        ),
    ) {
        // Mostly valid IPv4 headers with arbitrary fragment words, lengths and payloads, so the
        // reassembler sees garbage too.
        let frames: Vec<Vec<u8>> = packets
            .iter()
            .map(|(word, total, ihl, payload)| {
                let mut packet = ipv4(A, B, 17, 1, *word, payload);
                packet[0] = 0x40 | (ihl & 0x0f);
                packet[2..4].copy_from_slice(&total.to_be_bytes());
                packet
            })
            .collect();
        drain(&pcap_of(101, &frames));
    }

    #[test]
    fn arbitrary_pcapng_blocks_never_panic(
        blocks in proptest::collection::vec(
            (prop_oneof![Just(1u32), Just(2), Just(3), Just(6), Just(0x0a0d_0d0a), any::<u32>()], proptest::collection::vec(any::<u8>(), 0..96)),
            0..8,
        ),
    ) {
        let mut bytes = shb(Order::Little);
        for (block_type, body) in &blocks {
            bytes.extend(block(Order::Little, *block_type, body));
        }
        drain(&bytes);
    }

    #[test]
    fn cutting_a_file_anywhere_never_panics(cut in 0usize..2000, flip in 0usize..2000, bit in 0u8..8) {
        let mut bytes = sample_pcapng().bytes;
        if flip < bytes.len() {
            bytes[flip] ^= 1 << bit;
        }
        bytes.truncate(cut);
        drain(&bytes);
    }
}
