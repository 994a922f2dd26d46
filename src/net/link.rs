//! A plain JUDP socket for a tool that talks to components datagram by datagram and keeps the
//! protocol to itself: `jaus-ocu conform` ([`crate::conform`]) sends what a check needs
//! (a duplicate, a fragment, a malformed block) and reads every datagram that comes back. No
//! thread, no multicast membership: replies to a multicast query come back by unicast (§4.7).

#![allow(
    clippy::disallowed_methods,
    reason = "the network layer owns UDP sockets (clippy.toml forbids them elsewhere)"
)]

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// The largest datagram read: the largest UDP payload over IPv4 or IPv6 without jumbograms.
const MAX_DATAGRAM: usize = 65_527;

/// One datagram read from a [`Link`].
#[derive(Debug, Clone, PartialEq)]
pub struct LinkDatagram {
    /// Seconds since the link was opened.
    pub at: f64,
    /// The sender.
    pub from: SocketAddr,
    /// The UDP payload.
    pub bytes: Vec<u8>,
}

/// An unconnected UDP socket with a clock: send to anyone, read with a deadline.
#[derive(Debug)]
pub struct Link {
    socket: UdpSocket,
    epoch: Instant,
    buf: Vec<u8>,
}

impl Link {
    /// Binds `bind` (port 0 for any). The error names the address and what to do.
    pub fn open(bind: SocketAddr) -> io::Result<Link> {
        let socket = UdpSocket::bind(bind).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot bind UDP {bind}: {e} (choose another address with --bind)"),
            )
        })?;
        let _ = socket.set_multicast_loop_v4(true);
        Ok(Link {
            socket,
            epoch: Instant::now(),
            buf: vec![0; MAX_DATAGRAM],
        })
    }

    /// Seconds since the link was opened.
    pub fn now(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64()
    }

    /// The address datagrams to `toward` leave from: the bound port, and when bound to an
    /// unspecified address the local address the system routes `toward` from (what a capture
    /// of the exchange shows).
    pub fn local_toward(&self, toward: SocketAddr) -> SocketAddr {
        let local = self
            .socket
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
        if !local.ip().is_unspecified() {
            return local;
        }
        let routed = match toward.ip() {
            IpAddr::V4(_) => UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)),
            IpAddr::V6(_) => UdpSocket::bind((std::net::Ipv6Addr::UNSPECIFIED, 0)),
        }
        .and_then(|s| s.connect(toward).and_then(|()| s.local_addr()));
        match routed {
            Ok(a) => SocketAddr::new(a.ip(), local.port()),
            Err(_) => local,
        }
    }

    /// Sends one datagram; returns when it was handed to the system (seconds since open).
    pub fn send(&self, to: SocketAddr, bytes: &[u8]) -> io::Result<f64> {
        let at = self.now();
        self.socket.send_to(bytes, to)?;
        Ok(at)
    }

    /// The next datagram, or `None` once `deadline` (seconds since open) has passed. Never
    /// waits past the deadline.
    pub fn recv_until(&mut self, deadline: f64) -> io::Result<Option<LinkDatagram>> {
        loop {
            let left = deadline - self.now();
            // A zero timeout means "block forever" to the system: poll with 1 µs instead.
            let wait = Duration::from_secs_f64(left.max(1e-6));
            self.socket.set_read_timeout(Some(wait))?;
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    return Ok(Some(LinkDatagram {
                        at: self.now(),
                        from,
                        bytes: self.buf[..n].to_vec(),
                    }));
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if left <= 0.0 {
                        return Ok(None);
                    }
                }
                // An ICMP "port unreachable" from an earlier send shows up here on some
                // systems: the component is not (yet) there; keep waiting until the deadline.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    if self.now() >= deadline {
                        return Ok(None);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use super::*;

    #[test]
    fn reads_what_was_sent_and_gives_up_at_the_deadline() {
        let mut a = Link::open(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let b = Link::open(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let to = a.local_toward(SocketAddr::from(([127, 0, 0, 1], 1)));
        b.send(to, b"hello").unwrap();
        let got = a.recv_until(a.now() + 10.0).unwrap().unwrap();
        assert_eq!(got.bytes, b"hello");
        let start = a.now();
        assert!(a.recv_until(start + 0.05).unwrap().is_none());
        assert!(a.now() >= start + 0.05);
    }
}
