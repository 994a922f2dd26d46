//! A file served to the live view (`jaus-ocu serve FILE`): its datagrams handed to a
//! [`LiveServer`] at their own spacing (1× by default), with Foxglove's playback control acted
//! on — play, pause, speed, seek — and the playback's time told to viewers. A seek starts the
//! file again, reads it unpaced and muted up to the time sought, then the viewers get the
//! arm's state as it was then and playback goes on from there. At the end: with `looping`,
//! from the start again (viewers told to clear); else the viewers are told it ended, and a
//! Play starts it again from the start.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::net::tap::WireRecord;
use crate::record::live::{LiveServer, PlaybackRef};
use crate::record::source::{SourceError, WireSource};

/// How often viewers are told the playback's time.
const TIME_EVERY: Duration = Duration::from_millis(100);

/// The longest sleep between two looks at the controls.
const STEP: Duration = Duration::from_millis(20);

/// What is known of a file before it is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpan {
    /// The session's time origin (ns since the Unix epoch): the recording's, else its first
    /// datagram's.
    pub origin: u64,
    /// Its first and last datagram times, ns since the Unix epoch.
    pub first_ns: u64,
    /// See `first_ns`.
    pub last_ns: u64,
}

/// Reads `path` once for its time span (an index says it at once; a capture or a file
/// without a summary is read through). `Ok(None)`: no JUDP datagram in it.
pub fn span(path: &Path, port: u16) -> Result<Option<FileSpan>, SourceError> {
    let mut source = WireSource::open(path, port)?;
    let mut rec = WireRecord::empty();
    if !source.next_into(&mut rec) {
        return Ok(None);
    }
    let first_ns = rec.t_ns;
    let origin = source.info().time_origin(Some(&rec));
    let last_ns = match source.info().end_ns {
        Some(end) if source.info().complete => end.max(first_ns),
        _ => {
            let mut last = first_ns;
            while source.next_into(&mut rec) {
                last = last.max(rec.t_ns);
            }
            last
        }
    };
    Ok(Some(FileSpan {
        origin,
        first_ns,
        last_ns,
    }))
}

/// Where the player is in the file.
struct Cursor {
    source: WireSource,
    pending: Option<WireRecord>,
    /// The wall instant and file time playback is measured from (moved on each pause, seek
    /// and change of speed).
    base: (Instant, u64),
    speed: f32,
}

impl Cursor {
    fn open(path: &Path, port: u16, at: u64) -> Result<Cursor, SourceError> {
        let mut source = WireSource::open(path, port)?;
        let mut rec = WireRecord::empty();
        let pending = source.next_into(&mut rec).then_some(rec);
        Ok(Cursor {
            source,
            pending,
            base: (Instant::now(), at),
            speed: 1.0,
        })
    }

    /// The file time now at the current speed.
    fn now(&self) -> u64 {
        let elapsed = self.base.0.elapsed().as_secs_f64() * f64::from(self.speed);
        self.base.1.saturating_add((elapsed * 1e9) as u64)
    }

    fn next(&mut self) {
        let mut rec = WireRecord::empty();
        self.pending = self.source.next_into(&mut rec).then_some(rec);
    }
}

/// Waits (bounded) for the server to take what it was handed, so that a control message
/// after it is not taken before it.
fn drain(server: &LiveServer) {
    let start = Instant::now();
    while server.queued() > 0 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn lock(p: &PlaybackRef) -> std::sync::MutexGuard<'_, crate::record::live::Playback> {
    p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Serves `path` (JUDP on UDP `port` in captures) to `server` until `done` says stop; returns
/// how many times it started from the beginning (1 for one pass). A file that fails part-way
/// is served up to the failure (`problem` is told it once per pass).
pub fn play(
    server: &LiveServer,
    path: &Path,
    port: u16,
    span: &FileSpan,
    looping: bool,
    done: &dyn Fn() -> bool,
    problem: &mut dyn FnMut(&str),
) -> Result<u64, SourceError> {
    let playback = server.playback();
    let mut cursor = Cursor::open(path, port, span.first_ns)?;
    let mut passes = 1u64;
    let mut told = Instant::now();
    let mut playing = true;
    while !done() {
        // The viewers' requests first.
        if let Some(p) = &playback {
            let (seek, want_playing, speed, ended) = {
                let mut p = lock(p);
                (p.seek.take(), p.playing, p.speed, p.ended)
            };
            if let Some(t) = seek {
                cursor = seek_to(server, path, port, span, t)?;
                lock(p).ended = false;
                lock(p).current = t;
            } else if want_playing && ended {
                // Play after the end: from the start again.
                cursor = seek_to(server, path, port, span, span.first_ns)?;
                lock(p).ended = false;
                passes += 1;
            }
            if want_playing != playing || (speed - cursor.speed).abs() > f32::EPSILON {
                let now = cursor.now();
                cursor.base = (Instant::now(), now);
                cursor.speed = speed;
                playing = want_playing;
            }
        }
        if told.elapsed() >= TIME_EVERY {
            told = Instant::now();
            let now = cursor.now().min(span.last_ns);
            server.broadcast_time(now);
            if let Some(p) = &playback {
                lock(p).current = now;
            }
        }
        if !playing {
            cursor.base = (Instant::now(), cursor.base.1);
            std::thread::sleep(STEP);
            continue;
        }
        let Some(rec) = cursor.pending.take() else {
            if let Some(why) = cursor.source.stopped() {
                problem(why);
            }
            if looping {
                drain(server);
                server.restart(span.origin);
                cursor = Cursor::open(path, port, span.first_ns)?;
                passes += 1;
                continue;
            }
            if let Some(p) = &playback {
                let state = {
                    let mut p = lock(p);
                    if p.ended {
                        None
                    } else {
                        p.ended = true;
                        p.playing = false;
                        p.current = span.last_ns;
                        Some(p.state(false))
                    }
                };
                if let Some(state) = state {
                    server.broadcast_playback(state);
                }
            }
            playing = false;
            std::thread::sleep(STEP);
            continue;
        };
        let now = cursor.now();
        if rec.t_ns > now {
            let left = Duration::from_nanos(
                ((rec.t_ns - now) as f64 / f64::from(cursor.speed).max(0.01)) as u64,
            );
            cursor.pending = Some(rec);
            std::thread::sleep(left.min(STEP));
            continue;
        }
        server.offer(rec);
        cursor.next();
    }
    Ok(passes)
}

/// Starts the file again and reads it, muted, up to `t`: the viewers are cleared, then get
/// the arms' state as it was at `t`.
fn seek_to(
    server: &LiveServer,
    path: &Path,
    port: u16,
    span: &FileSpan,
    t: u64,
) -> Result<Cursor, SourceError> {
    let t = t.clamp(span.first_ns, span.last_ns);
    drain(server);
    server.restart(span.origin);
    server.mute(true);
    let mut cursor = Cursor::open(path, port, t)?;
    while let Some(rec) = cursor.pending.take() {
        if rec.t_ns >= t {
            cursor.pending = Some(rec);
            break;
        }
        // Blocking here is the seek's own time, not a viewer's: nothing is lost.
        let _ = server.sender().send(rec);
        cursor.next();
    }
    drain(server);
    server.mute(false);
    cursor.base = (Instant::now(), t);
    Ok(cursor)
}
