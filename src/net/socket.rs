//! The socket code both UDP users share (the OCU's network thread, `net::thread`, and the
//! simulator's host, `sim::host`): binding with the JUDP multicast group, the receive thread
//! that hands datagrams over a bounded channel, and [`Sink`], where sent datagrams go.

#![allow(
    clippy::disallowed_methods,
    reason = "this module is the one owner of UDP sockets (clippy.toml forbids them elsewhere)"
)]

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use crate::jaus::judp;

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Where to.
    pub to: SocketAddr,
    /// The datagram.
    pub bytes: Vec<u8>,
}

/// Where sent datagrams go: a socket, or a test's vector.
pub trait Sink {
    /// Sends one datagram.
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()>;
}

impl Sink for UdpSocket {
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        UdpSocket::send_to(self, bytes, to).map(|_| ())
    }
}

impl Sink for Vec<Outgoing> {
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        self.push(Outgoing {
            to,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }
}

/// How a socket takes part in the JUDP multicast group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// The OCU: join on any interface where the system allows (quietly skipped otherwise) and
    /// loop our own multicast back, so a simulator on this machine hears our discovery.
    Client,
    /// A component (the simulator): join on the bound interface unless bound to loopback (to
    /// receive multicast discovery, bind 0.0.0.0:3794); warn when joining fails.
    Component,
}

/// Binds `addr` and joins the JUDP multicast group as `membership` says. The error says which
/// address could not be bound and what to do.
pub fn bind(addr: SocketAddr, membership: Membership) -> io::Result<UdpSocket> {
    let hint = match membership {
        Membership::Client => "choose another address with --bind",
        Membership::Component => {
            "is another JAUS component using the port? choose another with --bind"
        }
    };
    let socket = UdpSocket::bind(addr)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {e} ({hint})")))?;
    match membership {
        Membership::Client => {
            // Let a simulator on this machine hear our multicast queries, and hear broadcasts
            // sent to the group where the interface allows (only a socket on port 3794
            // receives them).
            let _ = socket.set_multicast_loop_v4(true);
            if let Err(e) = socket.join_multicast_v4(&judp::MULTICAST_GROUP, &Ipv4Addr::UNSPECIFIED)
            {
                debug!(
                    "net: not joining multicast group {}: {e}",
                    judp::MULTICAST_GROUP
                );
            }
        }
        Membership::Component => {
            if let IpAddr::V4(ip) = addr.ip()
                && !ip.is_loopback()
            {
                let iface = if ip.is_unspecified() {
                    Ipv4Addr::UNSPECIFIED
                } else {
                    ip
                };
                if let Err(e) = socket.join_multicast_v4(&judp::MULTICAST_GROUP, &iface) {
                    warn!(
                        "sim: cannot join multicast group {}: {e}; discovery needs --connect",
                        judp::MULTICAST_GROUP
                    );
                }
            }
        }
    }
    Ok(socket)
}

/// A datagram as the receive thread hands it over: arrival instant, sender, bytes.
pub type Received = (Instant, SocketAddr, Vec<u8>);

/// Starts the named thread that blocks on `socket` and hands every datagram, stamped with its
/// arrival, to `tx`. A full channel means the consumer is overwhelmed: the datagram is
/// dropped and counted in `dropped`, never waited for. Stops within 50 ms of `stop`.
pub fn spawn_receiver(
    name: &str,
    socket: &UdpSocket,
    stop: Arc<AtomicBool>,
    tx: crossbeam_channel::Sender<Received>,
    dropped: Arc<AtomicU64>,
) -> io::Result<JoinHandle<()>> {
    let rx_socket = socket.try_clone()?;
    rx_socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let label = name.to_string();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                match rx_socket.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        if tx
                            .try_send((Instant::now(), from, buf[..n].to_vec()))
                            .is_err()
                        {
                            dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) => {}
                    // ICMP port unreachable from a peer that went away: not our problem.
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                    Err(e) => {
                        warn!("{label}: receive error: {e}");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        })
}
