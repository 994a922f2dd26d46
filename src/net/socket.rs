//! The socket code both UDP users share (the OCU's network thread, `net::thread`, and the
//! simulator's host, `sim::host`): binding with the JUDP multicast group, the receive thread
//! that hands datagrams over a bounded channel, and [`Sink`], where sent datagrams go. Also
//! the OCU's receive-buffer sizing ([`size_receive_buffer`]) and the kernel's drop counter of
//! a socket ([`KernelDrops`]).

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

/// Kernel memory the OCU wants for its socket's unread datagrams: 16 MiB. The highest rate we
/// claim is 50,000 datagrams/s (README, Benchmarks); a ~100-byte datagram costs the kernel
/// about 850 bytes of accounting (its buffer's "truesize", measured over loopback: the default
/// 212,992 bytes hold about 250), so 250 ms of it is about 10.6 MB; 16 MiB leaves room for
/// drivers that account more per datagram. A socket that holds 250 ms rides out a stalled
/// receive thread (a busy laptop, ARCHITECTURE.md) instead of dropping.
pub const RECEIVE_BUFFER_WANTED: usize = 16 * 1024 * 1024;

/// What [`size_receive_buffer`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiveBuffer {
    /// Bytes asked for (the kernel's accounting, as read back).
    pub wanted: usize,
    /// Bytes the kernel granted, as `SO_RCVBUF` reads back.
    pub granted: usize,
}

impl ReceiveBuffer {
    /// Whether the kernel granted less than wanted (`net.core.rmem_max` caps it on Linux).
    pub fn is_short(&self) -> bool {
        self.granted < self.wanted
    }
}

/// Asks for a receive buffer of `wanted` bytes on `socket` and reads back what the kernel
/// granted. Linux doubles the value it is given (the extra half is its bookkeeping) and
/// reports the doubled value, capped at twice `net.core.rmem_max`: so half of `wanted` is
/// asked for there. Without privileges nothing can exceed the cap (`SO_RCVBUFFORCE` needs
/// `CAP_NET_ADMIN`, which the OCU should not run with).
pub fn size_receive_buffer(socket: &UdpSocket, wanted: usize) -> io::Result<ReceiveBuffer> {
    let sock = socket2::SockRef::from(socket);
    let ask = if cfg!(target_os = "linux") {
        wanted / 2
    } else {
        wanted
    };
    sock.set_recv_buffer_size(ask)?;
    Ok(ReceiveBuffer {
        wanted,
        granted: sock.recv_buffer_size()?,
    })
}

/// The advice for a short receive buffer: what limits it and the command that lifts it.
pub fn short_buffer_advice(buffer: ReceiveBuffer) -> String {
    let rmem_max = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .map_or_else(|_| "?".to_owned(), |s| s.trim().to_owned());
    format!(
        "the UDP receive buffer is {} KiB, not the {} KiB wanted: bursts of traffic while this \
         machine is busy may overflow it (kernel drops are counted: the GUI's status bar, \
         `probe --json`, a recording's session_end). net.core.rmem_max = {rmem_max} caps \
         it; raise it with `sudo sysctl -w net.core.rmem_max={}` (persist it in /etc/sysctl.d/)",
        buffer.granted / 1024,
        buffer.wanted / 1024,
        buffer.wanted / 2
    )
}

/// The kernel's count of datagrams it dropped at one socket because the socket's receive
/// buffer was full, read from the `drops` column of `/proc/net/udp` and `/proc/net/udp6`.
///
/// Why not `SO_RXQ_OVFL`: it delivers the same counter as a control message on every
/// `recvmsg`, which needs `recvmsg` with control-message parsing — `unsafe` (or a new FFI
/// crate) on the hot path of every datagram. The `/proc` row needs neither, costs tens of
/// microseconds once per stats update (about once a second), and is found exactly by the
/// socket's inode (`/proc/self/fd/N` → `socket:[inode]`), falling back to the local port.
/// Elsewhere than Linux it is unknown (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDrops {
    inode: Option<u64>,
    port: u16,
}

impl KernelDrops {
    /// The counter of `socket`.
    pub fn of(socket: &UdpSocket) -> Self {
        Self {
            inode: socket_inode(socket),
            port: socket.local_addr().map_or(0, |a| a.port()),
        }
    }

    /// Datagrams dropped since the socket was made, if the system says.
    pub fn read(&self) -> Option<u64> {
        ["/proc/net/udp", "/proc/net/udp6"].iter().find_map(|path| {
            let table = std::fs::read_to_string(path).ok()?;
            drops_in_table(&table, self.inode, self.port)
        })
    }
}

#[cfg(unix)]
fn socket_inode(socket: &UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let link = std::fs::read_link(format!("/proc/self/fd/{}", socket.as_raw_fd())).ok()?;
    link.to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

#[cfg(not(unix))]
fn socket_inode(_: &UdpSocket) -> Option<u64> {
    None
}

/// The `drops` column of the row for `inode` (or, without one, the first row bound to
/// `port`) in a `/proc/net/udp` table.
fn drops_in_table(table: &str, inode: Option<u64>, port: u16) -> Option<u64> {
    let port = format!(":{port:04X}");
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let matches = match inode {
            Some(inode) => cols.get(9)?.parse::<u64>().ok()? == inode,
            None => cols.get(1)?.ends_with(&port),
        };
        if matches {
            cols.get(12)?.parse().ok()
        } else {
            None
        }
    })
}

/// A run of datagrams the batch receive thread hands over at once.
pub type Batch = Vec<Received>;

/// Most bytes one [`Batch`] gathers (a datagram may be 64 KiB): with the channel's 128
/// batches, what waits for the protocol thread stays under about 40 MB whatever a sender
/// floods with, rather than 128 × 64 datagrams of 64 KiB (512 MB).
pub const MAX_BATCH_BYTES: usize = 256 * 1024;

/// Like [`spawn_receiver`], handing datagrams over in batches: after each blocking receive
/// the thread drains what else the socket holds (non-blocking reads, at most `max_batch` in
/// all) and sends them as one [`Batch`], so the consumer wakes once per batch, not once per
/// datagram (at most [`MAX_BATCH_BYTES`] in a batch). When the channel is full the thread waits for room and stops reading: the
/// datagrams wait in the socket's receive buffer (sized for 250 ms, [`size_receive_buffer`]),
/// where an overflow is counted by the kernel ([`KernelDrops`]), rather than being dropped
/// here after a stall of a few batches (a consumer that is preempted for milliseconds while
/// small batches pile up). `dropped` counts a batch lost only when the consumer has gone.
/// `max_batch` 1 is one datagram per hand-over (the way before batches, kept for the
/// comparison in `benches/net.rs`). With `raise_priority` the thread raises its scheduling
/// priority first ([`super::priority`]). Stops within 50 ms of `stop`.
pub fn spawn_batch_receiver(
    name: &str,
    socket: &UdpSocket,
    stop: Arc<AtomicBool>,
    tx: crossbeam_channel::Sender<Batch>,
    dropped: Arc<AtomicU64>,
    max_batch: usize,
    raise_priority: bool,
) -> io::Result<JoinHandle<()>> {
    let rx_socket = socket.try_clone()?;
    rx_socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let label = name.to_string();
    let max_batch = max_batch.max(1);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            if raise_priority {
                // The protocol thread gets the same and says so (NetStats::scheduling).
                let _ = super::priority::raise_current();
            }
            let mut buf = vec![0u8; 65_536];
            let mut batch: Batch = Vec::with_capacity(max_batch);
            while !stop.load(Ordering::Relaxed) {
                match rx_socket.recv_from(&mut buf) {
                    Ok((n, from)) => batch.push((Instant::now(), from, buf[..n].to_vec())),
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::ConnectionRefused
                        ) =>
                    {
                        continue;
                    }
                    Err(e) => {
                        warn!("{label}: receive error: {e}");
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                }
                // Two system calls per wake-up (not per datagram) switch to non-blocking reads
                // for the drain: std has no per-call MSG_DONTWAIT without `unsafe`.
                if max_batch > 1 && rx_socket.set_nonblocking(true).is_ok() {
                    let mut bytes: usize = batch.iter().map(|b| b.2.len()).sum();
                    while batch.len() < max_batch && bytes < MAX_BATCH_BYTES {
                        match rx_socket.recv_from(&mut buf) {
                            Ok((n, from)) => {
                                bytes += n;
                                batch.push((Instant::now(), from, buf[..n].to_vec()));
                            }
                            // ICMP port unreachable from a peer that went away.
                            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                            Err(_) => break,
                        }
                    }
                    if let Err(e) = rx_socket.set_nonblocking(false) {
                        warn!("{label}: cannot make the socket blocking again: {e}");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                let n = batch.len() as u64;
                let mut full = std::mem::replace(&mut batch, Vec::with_capacity(max_batch));
                loop {
                    match tx.send_timeout(full, Duration::from_millis(50)) {
                        Ok(()) => break,
                        Err(crossbeam_channel::SendTimeoutError::Timeout(back))
                            if !stop.load(Ordering::Relaxed) =>
                        {
                            full = back;
                        }
                        Err(_) => {
                            dropped.fetch_add(n, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            }
        })
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
 7349: 0100007F:E59A 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 358721 2 000000001f65dea2 0
 8536: 0100007F:0ED2 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 358728 2 000000002d7c0fad 17
";

    #[test]
    fn drops_are_found_by_inode_or_port() {
        assert_eq!(drops_in_table(TABLE, Some(358_728), 1), Some(17));
        assert_eq!(drops_in_table(TABLE, Some(358_721), 3794), Some(0));
        assert_eq!(drops_in_table(TABLE, None, 3794), Some(17));
        assert_eq!(drops_in_table(TABLE, Some(1), 3794), None);
        assert_eq!(drops_in_table("", None, 3794), None);
    }

    #[test]
    fn a_socket_gets_a_receive_buffer_and_a_drop_counter() {
        let socket = bind("127.0.0.1:0".parse().unwrap(), Membership::Client).unwrap();
        let b = size_receive_buffer(&socket, 1024 * 1024).unwrap();
        assert!(b.granted > 0);
        if cfg!(target_os = "linux") {
            assert_eq!(KernelDrops::of(&socket).read(), Some(0));
        }
        let _ = short_buffer_advice(b);
    }

    #[test]
    fn batches_carry_every_datagram() {
        let socket = bind("127.0.0.1:0".parse().unwrap(), Membership::Client).unwrap();
        let to = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicU64::new(0));
        let (tx, rx) = crossbeam_channel::bounded(64);
        let t = spawn_batch_receiver(
            "test-rx",
            &socket,
            stop.clone(),
            tx,
            dropped.clone(),
            8,
            false,
        )
        .unwrap();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        for i in 0..100u8 {
            peer.send_to(&[i], to).unwrap();
        }
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.len() < 100 && Instant::now() < deadline {
            if let Ok(batch) = rx.recv_timeout(Duration::from_millis(50)) {
                assert!(!batch.is_empty() && batch.len() <= 8);
                got.extend(batch.into_iter().map(|(_, _, b)| b[0]));
            }
        }
        stop.store(true, Ordering::Relaxed);
        t.join().unwrap();
        assert_eq!(got, (0..100).collect::<Vec<u8>>());
        assert_eq!(dropped.load(Ordering::Relaxed), 0);
    }
}
