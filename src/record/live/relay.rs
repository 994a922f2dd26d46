//! The live view's front door: viewers connect here, and each is relayed to the foxglove
//! crate's server (listening on loopback) through a bounded queue of our own, so what a
//! viewer does not receive is counted, per viewer, and told to that viewer.
//!
//! The crate's server keeps a queue per viewer that drops the oldest message when the viewer
//! cannot keep up, and counts nothing (foxglove 0.30: `send_lossy`, its count discarded).
//! Here each viewer has two connections: its own (to us) and ours to the crate's server over
//! loopback, read as fast as it comes. Between them, per viewer:
//! - `jaus-live-down` reads the crate's bytes (the HTTP upgrade answer, then WebSocket frames,
//!   unmasked as a server sends them) into a queue of at most `backlog` frames; when full, the
//!   oldest *message data* frame goes (binary opcode, first payload byte 1) and is counted —
//!   frames that declare channels, statuses and the rest are never dropped;
//! - `jaus-live-send` writes the queue to the viewer's socket, blocking while the viewer's
//!   socket (its receive window, our send buffer) is full: that is when the queue fills. Before
//!   its next frame, once a second at most while the count grows, it tells the viewer how many
//!   messages it did not receive (a `status` warning, id `jaus-ocu-not-received`);
//! - `jaus-live-up` copies what the viewer sends to the crate's server as is.
//!
//! What is written to the viewer's socket is delivered by TCP unless the connection breaks;
//! frames still queued when a viewer leaves are not counted. The crate's own queue towards us
//! is 4 times ours and read at loopback speed: a loss there would not be counted.

use std::collections::VecDeque;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one viewer was sent and did not receive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewerStats {
    /// The viewer's address.
    pub peer: SocketAddr,
    /// Message data frames written to its socket.
    pub sent: u64,
    /// Message data frames it did not receive (dropped from its queue while it was behind).
    pub not_received: u64,
}

/// Every viewer's figures, shared with the server's stats.
#[derive(Debug, Default)]
pub struct Viewers {
    /// The viewers connected now.
    pub now: Vec<ViewerStats>,
    /// Messages not received by viewers that have left.
    pub not_received_gone: u64,
}

/// Shared view of the viewers' figures.
pub type ViewersRef = Arc<Mutex<Viewers>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Whole values are written under the lock; a panic elsewhere cannot leave half of one.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The viewers' figures, read.
pub fn lock_viewers(v: &ViewersRef) -> MutexGuard<'_, Viewers> {
    lock(v)
}

/// The longest frame relayed (a longer one ends that viewer's connection), bytes.
const MAX_FRAME: u64 = 256 << 20;

/// How often a viewer is told of its losses at most.
const TELL_EVERY: Duration = Duration::from_secs(1);

/// The front door: its listener thread and the viewers' figures.
pub struct Relay {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Each viewer's figures.
    pub viewers: ViewersRef,
}

impl Relay {
    /// Listens on `public` and relays each viewer to `inner` through a queue of `backlog`
    /// frames.
    pub fn start(public: SocketAddr, inner: SocketAddr, backlog: usize) -> io::Result<Relay> {
        let listener = TcpListener::bind(public)?;
        let address = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let viewers: ViewersRef = Arc::default();
        let thread = {
            let stop = stop.clone();
            let viewers = viewers.clone();
            std::thread::Builder::new()
                .name("jaus-live-accept".into())
                .spawn(move || accept(&listener, inner, backlog.max(1), &stop, &viewers))?
        };
        Ok(Relay {
            address,
            stop,
            thread: Some(thread),
            viewers,
        })
    }

    /// Where viewers connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops listening (the viewers' connections end with the crate's server).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept(
    listener: &TcpListener,
    inner: SocketAddr,
    backlog: usize,
    stop: &AtomicBool,
    viewers: &ViewersRef,
) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((viewer, peer)) => {
                if let Err(e) = connect(viewer, peer, inner, backlog, viewers) {
                    tracing::warn!("live view: viewer {peer} could not be served: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                tracing::warn!("live view: accepting a viewer failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// One frame from the crate's server, whole, and whether it may be dropped.
struct Frame {
    bytes: Vec<u8>,
    data: bool,
    /// The last frame of its message (a status may go after it).
    fin: bool,
}

/// A viewer's queue between the two threads.
#[derive(Default)]
struct Queue {
    frames: VecDeque<Frame>,
    /// The crate's side ended.
    closed: bool,
    /// The viewer's side ended.
    gone: bool,
    not_received: u64,
}

type QueueRef = Arc<(Mutex<Queue>, Condvar)>;

impl Queue {
    /// An empty queue, shared by the viewer's two threads.
    fn shared() -> QueueRef {
        Arc::new((Mutex::new(Queue::default()), Condvar::new()))
    }
}

fn connect(
    viewer: TcpStream,
    peer: SocketAddr,
    inner: SocketAddr,
    backlog: usize,
    viewers: &ViewersRef,
) -> io::Result<()> {
    viewer.set_nonblocking(false)?;
    viewer.set_nodelay(true)?;
    let server = TcpStream::connect(inner)?;
    server.set_nodelay(true)?;
    lock(viewers).now.push(ViewerStats {
        peer,
        sent: 0,
        not_received: 0,
    });
    let queue = Queue::shared();
    {
        let mut from_viewer = viewer.try_clone()?;
        let mut to_server = server.try_clone()?;
        std::thread::Builder::new()
            .name("jaus-live-up".into())
            .spawn(move || {
                let _ = io::copy(&mut from_viewer, &mut to_server);
                let _ = to_server.shutdown(Shutdown::Both);
            })?;
    }
    {
        let from_server = server.try_clone()?;
        let queue = queue.clone();
        let viewers = viewers.clone();
        std::thread::Builder::new()
            .name("jaus-live-down".into())
            .spawn(move || {
                let _ = read_frames(from_server, &queue, backlog, (&viewers, peer));
                lock(&queue.0).closed = true;
                queue.1.notify_all();
            })?;
    }
    let viewers = viewers.clone();
    std::thread::Builder::new()
        .name("jaus-live-send".into())
        .spawn(move || {
            let _ = send_frames(&viewer, peer, &queue, &viewers);
            let lost = {
                let mut q = lock(&queue.0);
                q.gone = true;
                q.not_received
            };
            let _ = viewer.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            let mut v = lock(&viewers);
            if let Some(i) = v.now.iter().position(|s| s.peer == peer) {
                let s = v.now.remove(i);
                v.not_received_gone += s.not_received.max(lost);
            }
        })?;
    Ok(())
}

/// Reads the crate's answer to the upgrade, then its frames, into the queue.
fn read_frames(
    server: TcpStream,
    queue: &QueueRef,
    backlog: usize,
    (viewers, peer): (&ViewersRef, SocketAddr),
) -> io::Result<()> {
    let mut r = BufReader::with_capacity(64 << 10, server);
    // The HTTP answer: up to the empty line.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        head.push(b[0]);
        if head.len() > 64 << 10 {
            return Err(io::Error::other("the upgrade answer is too long"));
        }
    }
    push(
        queue,
        backlog,
        Frame {
            bytes: head,
            data: false,
            fin: true,
        },
    );
    loop {
        let frame = read_frame(&mut r)?;
        match push(queue, backlog, frame) {
            Pushed::Gone => return Ok(()),
            Pushed::Queued => {}
            // Counted here: the sending thread may be blocked on the viewer's socket.
            Pushed::Dropped(n) => {
                if let Some(s) = lock(viewers).now.iter_mut().find(|s| s.peer == peer) {
                    s.not_received = n;
                }
            }
        }
    }
}

/// One WebSocket frame as sent by a server, whole.
fn read_frame(r: &mut impl Read) -> io::Result<Frame> {
    let mut h = [0u8; 2];
    r.read_exact(&mut h)?;
    let mut bytes = h.to_vec();
    let fin = h[0] & 0x80 != 0;
    let opcode = h[0] & 0x0f;
    let masked = h[1] & 0x80 != 0;
    let len = match h[1] & 0x7f {
        126 => {
            let mut e = [0u8; 2];
            r.read_exact(&mut e)?;
            bytes.extend_from_slice(&e);
            u64::from(u16::from_be_bytes(e))
        }
        127 => {
            let mut e = [0u8; 8];
            r.read_exact(&mut e)?;
            bytes.extend_from_slice(&e);
            u64::from_be_bytes(e)
        }
        n => u64::from(n),
    };
    if len > MAX_FRAME {
        return Err(io::Error::other(format!("a frame of {len} bytes")));
    }
    if masked {
        let mut m = [0u8; 4];
        r.read_exact(&mut m)?;
        bytes.extend_from_slice(&m);
    }
    let start = bytes.len();
    let len = usize::try_from(len).map_err(io::Error::other)?;
    bytes.resize(start + len, 0);
    r.read_exact(&mut bytes[start..])?;
    // Message data (foxglove.sdk.v1: binary, opcode 1 first), whole and unmasked.
    let data = fin && opcode == 2 && !masked && bytes.get(start) == Some(&1);
    Ok(Frame { bytes, data, fin })
}

/// What [`push`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pushed {
    /// Queued.
    Queued,
    /// Queued, the oldest message data dropped: the viewer's count of messages not received.
    Dropped(u64),
    /// The viewer has gone.
    Gone,
}

/// Queues `frame`; when the queue is full the oldest message data frame goes, counted.
fn push(queue: &QueueRef, backlog: usize, frame: Frame) -> Pushed {
    let mut q = lock(&queue.0);
    if q.gone {
        return Pushed::Gone;
    }
    let mut out = Pushed::Queued;
    if q.frames.len() >= backlog
        && let Some(i) = q.frames.iter().position(|f| f.data)
    {
        q.frames.remove(i);
        q.not_received += 1;
        out = Pushed::Dropped(q.not_received);
    }
    q.frames.push_back(frame);
    drop(q);
    queue.1.notify_all();
    out
}

/// Writes the queue to the viewer, telling it what it did not receive.
fn send_frames(
    viewer: &TcpStream,
    peer: SocketAddr,
    queue: &QueueRef,
    viewers: &ViewersRef,
) -> io::Result<()> {
    let mut w = viewer;
    let mut told = 0u64;
    let mut told_at: Option<Instant> = None;
    let mut upgraded = false;
    let mut inside_message = false;
    loop {
        let (frame, not_received) = {
            let mut q = lock(&queue.0);
            loop {
                if let Some(f) = q.frames.pop_front() {
                    break (f, q.not_received);
                }
                if q.closed {
                    return Ok(());
                }
                q = queue
                    .1
                    .wait_timeout(q, Duration::from_millis(250))
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            }
        };
        let due = told_at.is_none_or(|t| t.elapsed() >= TELL_EVERY);
        if upgraded && !inside_message && not_received > told && due {
            w.write_all(&status_frame(not_received))?;
            told = not_received;
            told_at = Some(Instant::now());
        }
        w.write_all(&frame.bytes)?;
        upgraded = true;
        inside_message = !frame.fin;
        let mut v = lock(viewers);
        if let Some(s) = v.now.iter_mut().find(|s| s.peer == peer) {
            s.sent += u64::from(frame.data);
            s.not_received = s.not_received.max(not_received);
        }
    }
}

/// A `status` warning (foxglove.sdk.v1) telling a viewer what it did not receive, as an
/// unmasked text frame.
fn status_frame(not_received: u64) -> Vec<u8> {
    let text = serde_json::json!({
        "op": "status",
        "level": 1,
        "id": "jaus-ocu-not-received",
        "message": format!(
            "This viewer did not receive {not_received} messages: its connection could not keep \
             up (the OCU and its recording are not affected; a faster link, or fewer panels \
             subscribed, helps)"
        ),
    })
    .to_string();
    let mut out = vec![0x81];
    let n = text.len();
    if n < 126 {
        out.push(u8::try_from(n).unwrap_or(125));
    } else if let Ok(n) = u16::try_from(n) {
        out.push(126);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(text.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use super::*;

    #[test]
    fn a_status_frame_reads_back_as_one_frame_of_json() {
        let bytes = status_frame(5474);
        let f = read_frame(&mut bytes.as_slice()).unwrap();
        assert!(f.fin && !f.data);
        assert_eq!(f.bytes.len(), bytes.len());
        let v: serde_json::Value = serde_json::from_slice(&bytes[4..]).unwrap();
        assert_eq!(v["op"], "status");
        assert!(v["message"].as_str().unwrap().contains("5474 messages"));
    }

    #[test]
    fn a_full_queue_drops_the_oldest_message_data_and_counts_it_but_keeps_the_rest() {
        let queue = Queue::shared();
        let frame = |data: bool, tag: u8| Frame {
            bytes: vec![tag],
            data,
            fin: true,
        };
        push(&queue, 3, frame(false, 0));
        push(&queue, 3, frame(true, 1));
        push(&queue, 3, frame(true, 2));
        push(&queue, 3, frame(false, 3));
        push(&queue, 3, frame(true, 4));
        let q = lock(&queue.0);
        let tags: Vec<u8> = q.frames.iter().map(|f| f.bytes[0]).collect();
        assert_eq!(tags, [0, 3, 4]);
        assert_eq!(q.not_received, 2);
    }
}
