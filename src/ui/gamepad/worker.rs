//! The gamepad worker: a named thread that owns [`gilrs::Gilrs`], blocks on its events, and
//! publishes the latest reading of the first connected pad as a [`Snapshot`] (with a sequence
//! number and the time it was read), waking the window on every change.
//!
//! gilrs may fail to start (no udev in a container or on CI, an unsupported platform): the
//! [`Gamepad`] then says "no gamepad support: …" and never panics. [`Gamepad::fake`] gives a
//! [`FakePad`] that drives the same snapshot path without hardware (tests, and the
//! "gamepad unplugged" measurement of issue 32).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use eframe::egui;

use super::mapping::{Axis, Button, RawPad};

/// How long the worker blocks on gilrs before it looks whether it should stop.
const POLL: Duration = Duration::from_millis(100);

/// How long [`Gamepad::spawn`] waits for gilrs to start before it reports "starting".
const START_WAIT: Duration = Duration::from_secs(2);

/// The name a fake pad reports.
pub const FAKE_NAME: &str = "simulated gamepad";

/// Whether gamepads can be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// gilrs is reading (or a fake pad stands in).
    Ready,
    /// gilrs has not reported yet.
    Starting,
    /// No gamepad support, and why (gilrs's error).
    Missing(String),
}

/// The latest reading of the pad, as published by the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Bumped on every change; 0 before the first.
    pub seq: u64,
    /// When this reading was taken.
    pub at: Instant,
    /// The reading (`connected: false` without a pad).
    pub pad: RawPad,
    /// The connected pad's name.
    pub name: Option<String>,
    /// Whether gamepads can be read.
    pub support: Support,
}

impl Snapshot {
    /// No pad yet, with this support.
    pub fn empty(support: Support) -> Snapshot {
        Snapshot {
            seq: 0,
            at: Instant::now(),
            pad: RawPad::unplugged(),
            name: None,
            support,
        }
    }

    /// One line for the screen: the pad's name, or why there is none.
    pub fn status(&self) -> String {
        match (&self.support, self.pad.connected) {
            (Support::Missing(why), _) => format!("no gamepad support: {why}"),
            (Support::Starting, _) => "looking for gamepads…".to_string(),
            (Support::Ready, true) => format!(
                "connected: {}",
                self.name.as_deref().unwrap_or("unnamed gamepad")
            ),
            (Support::Ready, false) => "no gamepad connected".to_string(),
        }
    }
}

/// What the worker (or a fake pad) and the window share.
struct Shared {
    snapshot: Mutex<Snapshot>,
    stop: AtomicBool,
    ctx: Option<egui::Context>,
}

impl Shared {
    fn new(support: Support, ctx: Option<egui::Context>) -> Arc<Shared> {
        Arc::new(Shared {
            snapshot: Mutex::new(Snapshot::empty(support)),
            stop: AtomicBool::new(false),
            ctx,
        })
    }

    /// The one publishing path: a new reading (or support) if it differs, then a wake-up.
    fn publish(&self, pad: RawPad, name: Option<String>, support: Support) {
        {
            let mut s = self.snapshot.lock().unwrap_or_else(PoisonError::into_inner);
            if s.seq > 0 && s.pad == pad && s.name == name && s.support == support {
                return;
            }
            s.seq += 1;
            s.at = Instant::now();
            s.pad = pad;
            s.name = name;
            s.support = support;
        }
        if let Some(ctx) = &self.ctx {
            ctx.request_repaint();
        }
    }
}

/// The gamepad input: a worker reading the real pads, or a fake one. Dropping it stops the
/// worker.
pub struct Gamepad {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Gamepad {
    /// Starts the worker, which wakes `ctx` on every change. Never fails: without gamepad
    /// support the snapshot says why.
    pub fn spawn(ctx: egui::Context) -> Gamepad {
        let shared = Shared::new(Support::Starting, Some(ctx));
        let (started_tx, started_rx) = crossbeam_channel::bounded::<()>(1);
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("gamepad".into())
            .spawn(move || run(&for_thread, &started_tx));
        let thread = match thread {
            Ok(t) => {
                // gilrs starts in milliseconds; waiting a little makes the first snapshot
                // definite (ready or missing) without ever hanging the window.
                let _ = started_rx.recv_timeout(START_WAIT);
                Some(t)
            }
            Err(e) => {
                shared.publish(
                    RawPad::unplugged(),
                    None,
                    Support::Missing(format!("the gamepad thread could not start: {e}")),
                );
                None
            }
        };
        Gamepad { shared, thread }
    }

    /// A gamepad without hardware, driven by the returned [`FakePad`] (unplugged at first).
    pub fn fake() -> (Gamepad, FakePad) {
        Gamepad::fake_waking(None)
    }

    /// [`Gamepad::fake`] that wakes `ctx` on every change, as the worker does.
    pub fn fake_waking(ctx: Option<egui::Context>) -> (Gamepad, FakePad) {
        let shared = Shared::new(Support::Ready, ctx);
        shared.publish(RawPad::unplugged(), None, Support::Ready);
        let fake = FakePad {
            shared: shared.clone(),
        };
        (
            Gamepad {
                shared,
                thread: None,
            },
            fake,
        )
    }

    /// The latest reading.
    pub fn snapshot(&self) -> Snapshot {
        self.shared
            .snapshot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The sequence number of the latest reading (cheaper than a snapshot to see a change).
    pub fn seq(&self) -> u64 {
        self.shared
            .snapshot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .seq
    }
}

impl Drop for Gamepad {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // The worker looks at `stop` at least every POLL.
            let _ = t.join();
        }
    }
}

/// Drives a fake [`Gamepad`] through the same snapshot path as the worker.
#[derive(Clone)]
pub struct FakePad {
    shared: Arc<Shared>,
}

impl FakePad {
    /// Publishes `pad` as the latest reading (named [`FAKE_NAME`] while connected).
    pub fn set(&self, pad: RawPad) {
        let name = pad.connected.then(|| FAKE_NAME.to_string());
        self.shared.publish(pad, name, Support::Ready);
    }

    /// The pad unplugged: publishes a disconnected reading.
    pub fn unplug(&self) {
        self.set(RawPad::unplugged());
    }
}

/// The worker: starts gilrs, then publishes a reading after every batch of events until told
/// to stop.
fn run(shared: &Shared, started: &crossbeam_channel::Sender<()>) {
    let gilrs = gilrs::Gilrs::new();
    let mut gilrs = match gilrs {
        Ok(g) => g,
        Err(e) => {
            let why = match e {
                gilrs::Error::NotImplemented(_) => {
                    "gilrs does not support this platform".to_string()
                }
                other => other.to_string(),
            };
            tracing::info!("no gamepad support: {why}");
            shared.publish(RawPad::unplugged(), None, Support::Missing(why));
            let _ = started.try_send(());
            return;
        }
    };
    let (pad, name) = read(&gilrs);
    shared.publish(pad, name, Support::Ready);
    let _ = started.try_send(());
    while !shared.stop.load(Ordering::Relaxed) {
        if gilrs.next_event_blocking(Some(POLL)).is_none() {
            continue;
        }
        // Take the whole batch, then publish once: the state gilrs keeps is the latest.
        while gilrs.next_event().is_some() {}
        let (pad, name) = read(&gilrs);
        shared.publish(pad, name, Support::Ready);
    }
}

/// The first connected pad's reading and name (unplugged without one).
fn read(gilrs: &gilrs::Gilrs) -> (RawPad, Option<String>) {
    let Some((_, gp)) = gilrs.gamepads().next() else {
        return (RawPad::unplugged(), None);
    };
    let mut pad = RawPad::at_rest();
    for axis in Axis::ALL {
        pad = pad.with_axis(axis, f64::from(gp.value(gilrs_axis(axis))));
    }
    for button in Button::ALL {
        let value = gp
            .button_data(gilrs_button(button))
            .map_or(0.0, gilrs::ev::state::ButtonData::value);
        pad = pad.with_button(button, f64::from(value));
    }
    (pad, Some(gp.name().to_string()))
}

fn gilrs_axis(axis: Axis) -> gilrs::Axis {
    match axis {
        Axis::LeftStickX => gilrs::Axis::LeftStickX,
        Axis::LeftStickY => gilrs::Axis::LeftStickY,
        Axis::RightStickX => gilrs::Axis::RightStickX,
        Axis::RightStickY => gilrs::Axis::RightStickY,
    }
}

/// gilrs names the bumpers `LeftTrigger`/`RightTrigger` and the analog triggers
/// `LeftTrigger2`/`RightTrigger2`.
fn gilrs_button(button: Button) -> gilrs::Button {
    use gilrs::Button as G;
    match button {
        Button::South => G::South,
        Button::East => G::East,
        Button::North => G::North,
        Button::West => G::West,
        Button::LeftBumper => G::LeftTrigger,
        Button::RightBumper => G::RightTrigger,
        Button::LeftTrigger => G::LeftTrigger2,
        Button::RightTrigger => G::RightTrigger2,
        Button::Select => G::Select,
        Button::Start => G::Start,
        Button::Mode => G::Mode,
        Button::LeftThumb => G::LeftThumb,
        Button::RightThumb => G::RightThumb,
        Button::DPadUp => G::DPadUp,
        Button::DPadDown => G::DPadDown,
        Button::DPadLeft => G::DPadLeft,
        Button::DPadRight => G::DPadRight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_pad_publishes_through_the_snapshot_path() {
        let (gamepad, fake) = Gamepad::fake();
        let first = gamepad.snapshot();
        assert!(!first.pad.connected);
        assert_eq!(first.support, Support::Ready);
        assert_eq!(first.status(), "no gamepad connected");

        let pad = RawPad::at_rest().with_axis(Axis::LeftStickY, 0.5);
        fake.set(pad);
        let s = gamepad.snapshot();
        assert_eq!(s.pad, pad);
        assert_eq!(s.seq, first.seq + 1);
        assert!(s.at >= first.at);
        assert_eq!(s.status(), format!("connected: {FAKE_NAME}"));

        // The same reading again is no change.
        fake.set(pad);
        assert_eq!(gamepad.seq(), s.seq);

        fake.unplug();
        let u = gamepad.snapshot();
        assert!(!u.pad.connected);
        assert_eq!(u.name, None);
        assert_eq!(u.seq, s.seq + 1);
    }

    #[test]
    fn a_fake_pad_wakes_the_window_on_every_change() {
        use std::sync::atomic::AtomicUsize;
        let ctx = egui::Context::default();
        let wakes = Arc::new(AtomicUsize::new(0));
        let counter = wakes.clone();
        ctx.set_request_repaint_callback(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let (_gamepad, fake) = Gamepad::fake_waking(Some(ctx.clone()));
        // egui repaints its first frames, and a frame after each request, anyway: run them so
        // no repaint is pending and the next request calls back.
        let settle = |ctx: &egui::Context| {
            for _ in 0..3 {
                ctx.run_ui(egui::RawInput::default(), |_| {})
                    .textures_delta
                    .clear();
            }
        };
        settle(&ctx);
        let before = wakes.load(Ordering::Relaxed);
        fake.set(RawPad::at_rest());
        assert!(wakes.load(Ordering::Relaxed) > before);
        settle(&ctx);
        let after_plug = wakes.load(Ordering::Relaxed);
        fake.set(RawPad::at_rest());
        assert_eq!(
            wakes.load(Ordering::Relaxed),
            after_plug,
            "no change, no wake"
        );
        fake.unplug();
        assert!(wakes.load(Ordering::Relaxed) > after_plug);
    }

    #[test]
    fn spawn_never_panics_and_stops_when_dropped() {
        // With or without gamepad support here (udev, /dev/input), spawn returns a Gamepad
        // whose snapshot says which, and dropping it stops the worker promptly.
        let gamepad = Gamepad::spawn(egui::Context::default());
        let s = gamepad.snapshot();
        match &s.support {
            Support::Missing(why) => assert!(s.status().contains(why.as_str())),
            Support::Ready | Support::Starting => {}
        }
        let t = Instant::now();
        drop(gamepad);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }
}
