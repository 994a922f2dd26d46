//! Exact values of a replay's far past, read back from its file around the cursor.
//!
//! A replay larger than its memory budget holds its far past as a min/max envelope (the
//! plots still draw the whole file correctly at their pixel width). Where the drawn range
//! reaches into that part, the samples of a window around the cursor are read again from the
//! file (`record::player::read_window`, on the thread `jaus-exact-read`) into a small vehicle
//! of their own; the gauges, the 3D view and the plots draw from it while it covers what they
//! show. Nothing is guessed meanwhile: the status bar says the values are being read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use crossbeam_channel::{Receiver, TryRecvError};

use crate::model::vehicle::{SharedVehicle, Vehicle};
use crate::record::player;

/// The least half-width of the window read around the cursor, s.
pub const MIN_HALF_WINDOW_S: f64 = 30.0;

/// What the window of exact values is doing, for the status bar.
#[derive(Debug, Clone, PartialEq)]
pub enum ExactStatus {
    /// Nothing read or wanted.
    Idle,
    /// Reading `[t0, t1]` from the file; how far, 0 to 1.
    Reading {
        /// Window start, s.
        t0: f64,
        /// Window end, s.
        t1: f64,
        /// How far.
        fraction: f32,
    },
    /// `[t0, t1]` is held exactly.
    Ready {
        /// Window start, s.
        t0: f64,
        /// Window end, s.
        t1: f64,
    },
    /// The read failed: why.
    Failed(String),
}

/// A read running on its thread.
struct Job {
    range: (f64, f64),
    cancel: Arc<AtomicBool>,
    /// How far, as `f32` bits.
    progress: Arc<AtomicU32>,
    rx: Receiver<Result<Option<Vehicle>, String>>,
}

impl Drop for Job {
    fn drop(&mut self) {
        // The thread sees the flag at its next batch and ends; nobody waits for it.
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// The exact window of one replay: the vehicle read last and the read under way.
#[derive(Default)]
pub struct ExactWindow {
    ready: Option<((f64, f64), SharedVehicle)>,
    job: Option<Job>,
    failed: Option<((f64, f64), String)>,
    /// Counts windows received (the drawn state is rebuilt when it changes).
    generation: u64,
}

/// The range to read for a cursor at `t` with plots `window_s` long: the plots' range
/// `[t - window, t]` with as much again on each side, at least [`MIN_HALF_WINDOW_S`].
pub fn range_for(t: f64, window_s: f64) -> (f64, f64) {
    let half = window_s.max(MIN_HALF_WINDOW_S);
    (t - window_s - half, t + half)
}

impl ExactWindow {
    /// Takes the result of a finished read; whether something new arrived.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &self.job else { return false };
        match job.rx.try_recv() {
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                self.failed = Some((job.range, "the read ended without a result".into()));
                self.job = None;
                true
            }
            Ok(result) => {
                let range = job.range;
                self.job = None;
                match result {
                    Ok(Some(vehicle)) => {
                        self.ready = Some((range, Arc::new(RwLock::new(vehicle))));
                        self.failed = None;
                        self.generation += 1;
                    }
                    Ok(None) => {}
                    Err(why) => self.failed = Some((range, why)),
                }
                true
            }
        }
    }

    /// Where `[a, b]` (what is drawn) reaches before `envelope_before` (the time before which
    /// the replay's session holds only an envelope), makes sure a window covering it is held
    /// or being read: starts a read of [`range_for`] `t` from `path` otherwise. `wake` is
    /// called when the read ends.
    pub fn want(
        &mut self,
        file: (&Path, u16),
        (a, b): (f64, f64),
        t: f64,
        window_s: f64,
        envelope_before: Option<f64>,
        wake: Option<Arc<dyn Fn() + Send + Sync>>,
    ) {
        let Some(edge) = envelope_before else { return };
        if a >= edge {
            return;
        }
        let covers = |(r0, r1): (f64, f64)| r0 <= a && b <= r1;
        if self.ready.as_ref().is_some_and(|(r, _)| covers(*r))
            || self.job.as_ref().is_some_and(|j| covers(j.range))
            || self.failed.as_ref().is_some_and(|(r, _)| covers(*r))
        {
            return;
        }
        let range = range_for(t, window_s);
        self.job = Some(spawn_read(file.0.to_path_buf(), file.1, range, wake));
    }

    /// The vehicle holding `[a, b]` exactly, when one does (read it with
    /// `sources::read_vehicle`; nothing writes to it).
    pub fn covering(&self, a: f64, b: f64) -> Option<&SharedVehicle> {
        self.ready
            .as_ref()
            .filter(|((r0, r1), _)| *r0 <= a && b <= *r1)
            .map(|(_, v)| v)
    }

    /// Counts windows received.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What it is doing, for the status bar.
    pub fn status(&self) -> ExactStatus {
        if let Some(job) = &self.job {
            return ExactStatus::Reading {
                t0: job.range.0,
                t1: job.range.1,
                fraction: f32::from_bits(job.progress.load(Ordering::Relaxed)),
            };
        }
        if let Some((_, why)) = &self.failed {
            return ExactStatus::Failed(why.clone());
        }
        match &self.ready {
            Some(((t0, t1), _)) => ExactStatus::Ready { t0: *t0, t1: *t1 },
            None => ExactStatus::Idle,
        }
    }

    /// Whether a read runs (the window is polled for its end).
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }
}

fn spawn_read(
    path: PathBuf,
    port: u16,
    range: (f64, f64),
    wake: Option<Arc<dyn Fn() + Send + Sync>>,
) -> Job {
    let cancel = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU32::new(0f32.to_bits()));
    let (tx, rx) = crossbeam_channel::bounded(1);
    let (c, p) = (cancel.clone(), progress.clone());
    let spawned = std::thread::Builder::new()
        .name("jaus-exact-read".into())
        .spawn(move || {
            let result = player::read_window(&path, port, range, &c, |f| {
                p.store(f.to_bits(), Ordering::Relaxed);
            })
            .map_err(|e| e.to_string());
            let _ = tx.send(result);
            if let Some(w) = wake {
                w();
            }
        });
    if let Err(e) = spawned {
        // The receiver then reports a read that ended without a result.
        tracing::warn!("reading exact values: no thread: {e}");
    }
    Job {
        range,
        cancel,
        progress,
        rx,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_read_holds_the_plots_range_with_room_on_both_sides() {
        let (a, b) = range_for(100.0, 10.0);
        assert!(a <= 90.0 - MIN_HALF_WINDOW_S + 1e-9 && b >= 100.0 + MIN_HALF_WINDOW_S - 1e-9);
        let (a, b) = range_for(1000.0, 120.0);
        assert_eq!((a, b), (760.0, 1120.0));
    }

    #[test]
    fn nothing_is_read_where_the_session_is_exact() {
        let mut w = ExactWindow::default();
        w.want(
            (Path::new("/nonexistent"), 3794),
            (50.0, 60.0),
            60.0,
            10.0,
            Some(40.0),
            None,
        );
        assert!(!w.busy());
        w.want(
            (Path::new("/nonexistent"), 3794),
            (50.0, 60.0),
            60.0,
            10.0,
            None,
            None,
        );
        assert_eq!(w.status(), ExactStatus::Idle);
    }

    #[test]
    fn a_read_that_fails_says_why_and_is_not_retried_for_the_same_range() {
        let mut w = ExactWindow::default();
        let file = (Path::new("/nonexistent/recording.mcap"), 3794);
        w.want(file, (10.0, 20.0), 20.0, 10.0, Some(100.0), None);
        assert!(w.busy());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !w.poll() {
            assert!(std::time::Instant::now() < deadline, "the read never ended");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let ExactStatus::Failed(why) = w.status() else {
            panic!("{:?}", w.status())
        };
        assert!(why.contains("recording.mcap"), "{why}");
        w.want(file, (12.0, 20.0), 20.0, 10.0, Some(100.0), None);
        assert!(
            !w.busy(),
            "the same range is not read again after a failure"
        );
    }
}
