//! A pcapng writer for UDP datagrams: each datagram becomes one raw IPv4 or IPv6 packet
//! (link type `LINKTYPE_RAW`, 101) carrying one UDP datagram with its real addresses and
//! ports, stamped in nanoseconds (`if_tsresol` = 9).
//!
//! Why these choices:
//! - Raw IP rather than Ethernet: there are no MAC addresses to tell, and both our own
//!   reader ([`crate::record::capture`]) and Wireshark/tshark read raw IPv4 and IPv6 from one
//!   interface (the version nibble says which).
//! - One interface, nanosecond resolution: recordings keep ns times; libpcap's default
//!   (µs) would round them.
//! - Checksums are computed (IPv4 header and UDP), so Wireshark shows no checksum errors;
//!   IPv4 packets carry Don't Fragment and an identification that counts up.
//! - When the direction is known it goes into each packet's `epb_flags` (inbound or
//!   outbound), which Wireshark shows as `frame.packet_flags_direction`.
//!
//! The writer only appends: the caller decides where the file goes (the `export` command
//! writes to a temporary file and renames it when complete).

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};

use etherparse::{IpHeaders, IpNumber, Ipv4Extensions, Ipv4Header, PacketBuilder};

/// `LINKTYPE_RAW`: each packet starts with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u16 = 101;

/// The largest UDP payload one IPv4 packet holds: 65,535 − 20 (IPv4) − 8 (UDP).
pub const MAX_UDP_PAYLOAD_V4: usize = 65_507;
/// The largest UDP payload one IPv6 packet holds without a jumbogram: 65,535 − 8 (UDP).
pub const MAX_UDP_PAYLOAD_V6: usize = 65_527;

/// Time to live / hop limit written into every packet.
const HOP_LIMIT: u8 = 64;

/// pcapng block types and the section header's byte-order magic: what this writer writes
/// and the reader ([`crate::record::capture`]) acts on.
pub mod block {
    /// Section Header Block.
    pub const SECTION_HEADER: u32 = 0x0A0D_0D0A;
    /// Interface Description Block.
    pub const INTERFACE_DESCRIPTION: u32 = 0x0000_0001;
    /// Packet Block (obsolete, still read).
    pub const PACKET: u32 = 0x0000_0002;
    /// Simple Packet Block (read).
    pub const SIMPLE_PACKET: u32 = 0x0000_0003;
    /// Enhanced Packet Block.
    pub const ENHANCED_PACKET: u32 = 0x0000_0006;
    /// The section header's byte-order magic.
    pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
}

mod option {
    pub const END: u16 = 0;
    pub const COMMENT: u16 = 1;
    pub const SHB_USERAPPL: u16 = 4;
    pub const IF_NAME: u16 = 2;
    pub const IF_TSRESOL: u16 = 9;
    pub const EPB_FLAGS: u16 = 2;
}

/// Which way a packet went, seen from the capturing host (the OCU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketDirection {
    /// Received by the OCU.
    Inbound,
    /// Sent by the OCU.
    Outbound,
}

/// Why a datagram could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PcapngError {
    /// Writing to the output failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Source and destination are of different address families.
    #[error(
        "source {from} and destination {destination} are not both IPv4 or both IPv6; one IP \
         packet cannot carry them"
    )]
    MixedFamilies {
        /// The source given (`source` would be taken for the error's cause).
        from: SocketAddr,
        /// The destination given.
        destination: SocketAddr,
    },
    /// The payload does not fit into one UDP datagram.
    #[error("a {len}-byte payload does not fit into one UDP datagram (at most {max} bytes)")]
    TooLarge {
        /// Payload length, bytes.
        len: usize,
        /// The most one packet of that family holds.
        max: usize,
    },
}

/// Writes a pcapng section with one raw-IP interface, then one packet per [`write_udp`] call.
///
/// [`write_udp`]: PcapngWriter::write_udp
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    /// The block being built (reused).
    block: Vec<u8>,
    /// The IP packet being built (reused).
    packet: Vec<u8>,
    packets: u64,
    ipv4_id: u16,
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the section header (with `comment`, if any, as its `opt_comment`, and jaus-ocu
    /// as the writing application) and the interface description.
    pub fn new(out: W, comment: Option<&str>) -> io::Result<Self> {
        let mut w = PcapngWriter {
            out,
            block: Vec::with_capacity(256),
            packet: Vec::with_capacity(2048),
            packets: 0,
            ipv4_id: 0,
        };
        // Section header: byte-order magic, version 1.0, section length unknown (−1).
        let mut body = Vec::with_capacity(128);
        body.extend_from_slice(&block::BYTE_ORDER_MAGIC.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes());
        if let Some(c) = comment {
            push_option(&mut body, option::COMMENT, c.as_bytes());
        }
        let app = concat!("jaus-ocu ", env!("CARGO_PKG_VERSION"));
        push_option(&mut body, option::SHB_USERAPPL, app.as_bytes());
        push_option(&mut body, option::END, &[]);
        w.write_block(block::SECTION_HEADER, &body)?;
        // Interface 0: raw IP, no snapshot limit, nanosecond timestamps.
        body.clear();
        body.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        push_option(&mut body, option::IF_NAME, b"jaus-ocu");
        push_option(&mut body, option::IF_TSRESOL, &[9]);
        push_option(&mut body, option::END, &[]);
        w.write_block(block::INTERFACE_DESCRIPTION, &body)?;
        Ok(w)
    }

    /// Writes one UDP datagram from `source` to `destination` (both IPv4 or both IPv6) at
    /// `t_ns` (ns since the Unix epoch). Nothing is written when it fails.
    pub fn write_udp(
        &mut self,
        t_ns: u64,
        source: SocketAddr,
        destination: SocketAddr,
        direction: Option<PacketDirection>,
        payload: &[u8],
    ) -> Result<(), PcapngError> {
        self.packet.clear();
        let built = match (source.ip(), destination.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                if payload.len() > MAX_UDP_PAYLOAD_V4 {
                    return Err(PcapngError::TooLarge {
                        len: payload.len(),
                        max: MAX_UDP_PAYLOAD_V4,
                    });
                }
                // Lengths and the protocol are filled in when the packet is written; the
                // header says Don't Fragment (whole datagrams), as a sending stack would.
                let header = Ipv4Header::new(0, HOP_LIMIT, IpNumber::UDP, s.octets(), d.octets())
                    .map(|h| Ipv4Header {
                        identification: self.ipv4_id,
                        dont_fragment: true,
                        ..h
                    })
                    .map_err(|e| PcapngError::Io(io::Error::other(e.to_string())))?;
                self.ipv4_id = self.ipv4_id.wrapping_add(1);
                PacketBuilder::ip(IpHeaders::Ipv4(header, Ipv4Extensions::default()))
                    .udp(source.port(), destination.port())
                    .write_to_vec(&mut self.packet, payload)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                if payload.len() > MAX_UDP_PAYLOAD_V6 {
                    return Err(PcapngError::TooLarge {
                        len: payload.len(),
                        max: MAX_UDP_PAYLOAD_V6,
                    });
                }
                PacketBuilder::ipv6(s.octets(), d.octets(), HOP_LIMIT)
                    .udp(source.port(), destination.port())
                    .write_to_vec(&mut self.packet, payload)
            }
            _ => {
                return Err(PcapngError::MixedFamilies {
                    from: source,
                    destination,
                });
            }
        };
        if let Err(e) = built {
            // The length checks above rule out every error the builder has for UDP.
            return Err(PcapngError::Io(io::Error::other(format!(
                "building the packet failed: {e}"
            ))));
        }
        // Enhanced packet block: interface 0, timestamp high/low, lengths, data, options.
        let mut body = std::mem::take(&mut self.block);
        body.clear();
        body.extend_from_slice(&0u32.to_le_bytes());
        body.extend_from_slice(&((t_ns >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(t_ns as u32).to_le_bytes());
        let len = self.packet.len() as u32;
        body.extend_from_slice(&len.to_le_bytes());
        body.extend_from_slice(&len.to_le_bytes());
        body.extend_from_slice(&self.packet);
        pad(&mut body);
        if let Some(d) = direction {
            // epb_flags bits 0-1: 01 inbound, 10 outbound.
            let flags: u32 = match d {
                PacketDirection::Inbound => 1,
                PacketDirection::Outbound => 2,
            };
            push_option(&mut body, option::EPB_FLAGS, &flags.to_le_bytes());
            push_option(&mut body, option::END, &[]);
        }
        let written = self.write_block(block::ENHANCED_PACKET, &body);
        self.block = body;
        written?;
        self.packets += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Flushes and hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    /// Type, total length, body (a multiple of 4 bytes), total length again.
    fn write_block(&mut self, kind: u32, body: &[u8]) -> io::Result<()> {
        debug_assert_eq!(body.len() % 4, 0);
        let total = (body.len() + 12) as u32;
        let mut head = [0u8; 8];
        head[..4].copy_from_slice(&kind.to_le_bytes());
        head[4..].copy_from_slice(&total.to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(body)?;
        self.out.write_all(&total.to_le_bytes())
    }
}

/// An option: code, length, value padded to 4 bytes.
fn push_option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
    out.extend_from_slice(&code.to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(value);
    pad(out);
}

fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::capture::{CaptureEvent, CaptureReader};

    fn datagrams(bytes: &[u8], port: u16) -> Vec<(f64, SocketAddr, SocketAddr, Vec<u8>)> {
        CaptureReader::new(bytes, port)
            .unwrap()
            .map(|e| match e.unwrap() {
                CaptureEvent::Datagram(d) => (d.time, d.source, d.destination, d.payload),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn ipv4_and_ipv6_datagrams_read_back_with_addresses_times_and_payloads() {
        let mut w = PcapngWriter::new(Vec::new(), Some("test")).unwrap();
        let a: SocketAddr = "127.0.0.1:3794".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let c: SocketAddr = "[::1]:3794".parse().unwrap();
        let d: SocketAddr = "[fe80::1]:5000".parse().unwrap();
        w.write_udp(
            1_000_000_001,
            a,
            b,
            Some(PacketDirection::Inbound),
            b"\x02abc",
        )
        .unwrap();
        w.write_udp(2_500_000_000, d, c, None, &[7; 1500]).unwrap();
        assert_eq!(w.packets(), 2);
        let bytes = w.finish().unwrap();
        let got = datagrams(&bytes, 3794);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].1, got[0].2, &got[0].3[..]), (a, b, &b"\x02abc"[..]));
        assert!((got[0].0 - 1.000_000_001).abs() < 1e-12);
        assert_eq!((got[1].1, got[1].2, got[1].3.len()), (d, c, 1500));
        assert_eq!(got[1].0, 2.5);
    }

    #[test]
    fn checksums_are_valid() {
        let mut w = PcapngWriter::new(Vec::new(), None).unwrap();
        let a: SocketAddr = "10.1.2.3:3794".parse().unwrap();
        let b: SocketAddr = "10.1.2.4:3795".parse().unwrap();
        w.write_udp(5, a, b, None, b"hello judp").unwrap();
        let bytes = w.finish().unwrap();
        // The packet data of the one enhanced packet block: after SHB and IDB.
        let shb = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
        let idb = u32::from_le_bytes(bytes[shb + 4..shb + 8].try_into().unwrap()) as usize;
        let epb = &bytes[shb + idb..];
        let len = u32::from_le_bytes(epb[20..24].try_into().unwrap()) as usize;
        let packet = &epb[28..28 + len];
        let ip = etherparse::Ipv4HeaderSlice::from_slice(packet).unwrap();
        assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
        assert!(ip.dont_fragment());
        let udp = etherparse::UdpHeaderSlice::from_slice(&packet[20..]).unwrap();
        let expected = udp
            .to_header()
            .calc_checksum_ipv4(&ip.to_header(), &packet[28..])
            .unwrap();
        assert_eq!(udp.checksum(), expected);
    }

    #[test]
    fn refuses_mixed_families_and_oversized_payloads_without_writing() {
        let mut w = PcapngWriter::new(Vec::new(), None).unwrap();
        let a: SocketAddr = "127.0.0.1:3794".parse().unwrap();
        let b: SocketAddr = "[::1]:3794".parse().unwrap();
        assert!(matches!(
            w.write_udp(0, a, b, None, b"x"),
            Err(PcapngError::MixedFamilies { .. })
        ));
        assert!(matches!(
            w.write_udp(0, a, a, None, &vec![0; MAX_UDP_PAYLOAD_V4 + 1]),
            Err(PcapngError::TooLarge { .. })
        ));
        assert_eq!(w.packets(), 0);
        let bytes = w.finish().unwrap();
        assert!(datagrams(&bytes, 3794).is_empty());
    }
}
