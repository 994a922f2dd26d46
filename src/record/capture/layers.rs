//! Link, network and transport layers: from a captured frame to the UDP datagram on the port,
//! or to an IP fragment for [`super::fragments`], or to why the frame yields nothing.

use std::net::{IpAddr, SocketAddr};

use etherparse::{IpNumber, Ipv4HeaderSlice, Ipv6HeaderSlice};

use super::fragments::{Fragment, FragmentKey};
use super::{CaptureDatagram, CaptureEvent};

/// The `LINKTYPE_*` values of the tcpdump.org link-layer header type registry that are read.
pub(super) mod link_type {
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

/// Why a frame yields no datagram.
pub(super) enum Verdict {
    /// Not UDP on the port.
    Skip(String),
    /// Cannot be decoded.
    Bad(String),
}

impl Verdict {
    pub(super) fn event(self, frame: u64, time: f64, context: &str) -> CaptureEvent {
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
pub(super) struct Udp<'a> {
    pub(super) source: SocketAddr,
    pub(super) destination: SocketAddr,
    pub(super) payload: &'a [u8],
}

impl Udp<'_> {
    pub(super) fn event(self, frame: u64, time: f64) -> CaptureEvent {
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
pub(super) enum Decoded<'a> {
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
pub(super) fn decode(
    link_type: u32,
    frame: &[u8],
    cut: bool,
    port: u16,
) -> Result<Decoded<'_>, Verdict> {
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
pub(super) fn udp(
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
