//! Where the data drawn comes from: a live source (the network side, the simulator when it is
//! the demo, and the live vehicle store they fill) and an optional replay. [`Sources::shown`]
//! derives what the window shows from them and the time control; the vehicle drawn is the
//! replay's while one is open, else the live one. A leaf of the vocabulary: `OcuApp`'s side
//! (opening, draining, syncing) is `ui/app/sources.rs`.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::time_control::{Shown, TimeContext, TimeControl};
use super::words::file_name;
use crate::model::session::Session;
use crate::model::update::ComponentId;
use crate::model::vehicle::{SharedVehicle, Vehicle};
use crate::net::thread::NetHandle;
use crate::record::player::{LoadProgress, Replay};
use crate::sim::host::SimHandle;

/// Reads a vehicle store (every arm's session), whatever a panicking writer left behind (the data is append-only, so a
/// half-applied batch is still a consistent prefix).
pub fn read_vehicle(s: &SharedVehicle) -> RwLockReadGuard<'_, Vehicle> {
    s.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn write_vehicle(s: &SharedVehicle) -> RwLockWriteGuard<'_, Vehicle> {
    s.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What kind of live source (the window title and badge say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveKind {
    /// Arms on the network.
    Live,
    /// The built-in simulator on loopback.
    Simulated,
}

/// The live source: the network side (when running), the simulators it talks to in demo
/// mode, and the vehicle store filled from it whatever is shown.
pub struct LiveSource {
    /// Live arms or the simulator.
    pub kind: LiveKind,
    /// The network side (taken at shutdown).
    pub(crate) net: Option<NetHandle>,
    _sims: Vec<SimHandle>,
    /// The live vehicle store (every live arm's session).
    pub vehicle: SharedVehicle,
    /// What the status bar says about a receive buffer smaller than wanted (the advice,
    /// worked out once: it reads `/proc`), `None` when the buffer is as wanted.
    short_buffer: Option<String>,
}

impl LiveSource {
    /// The network side, when it runs (an app fed updates directly has none).
    pub fn net(&self) -> Option<&NetHandle> {
        self.net.as_ref()
    }

    /// The advice on a short receive buffer, when the kernel granted less than wanted.
    pub fn short_buffer_advice(&self) -> Option<&str> {
        self.short_buffer.as_deref()
    }
}

/// A file being replayed, with how far its loading has come.
pub struct ReplayState {
    /// The file and its loader.
    pub replay: Replay,
    /// Loading progress as of this frame.
    pub progress: LoadProgress,
    /// The end of loading has been reported to the operator.
    pub(crate) reported: bool,
    /// Where the UI last put the cursor by itself (at the first joint positions, so the arm
    /// shows at once); `None` once the operator has moved it or the place is settled.
    pub(crate) auto_cursor: Option<f64>,
    /// Where to put the cursor once the file has loaded that far (a recording opened at the
    /// drawn time for its exact values).
    pub(crate) seek_when_loaded: Option<f64>,
    /// Exact values around the cursor read back from the file, where the session holds only
    /// an envelope.
    pub exact: super::exact::ExactWindow,
}

impl ReplayState {
    /// Whether the loader is still adding to the session.
    pub fn loading(&self) -> bool {
        !self.progress.finished
    }

    /// The file's name.
    pub fn name(&self) -> String {
        file_name(&self.replay.path)
    }
}

/// The mark on the window that says the data is not from a real arm now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Badge {
    /// The built-in simulator.
    Simulated,
    /// A file being replayed.
    Replay(PathBuf),
}

/// The live source and the replay; at least one of them exists.
pub struct Sources {
    /// The live source (`app/sources.rs` opens and closes it).
    pub(crate) live: Option<LiveSource>,
    /// The replay open, if any.
    pub(crate) replay: Option<ReplayState>,
    /// What was shown before the replay now loading was opened: shown again if the new file
    /// turns out to hold no JUDP datagram (opening the wrong file keeps the current replay).
    /// Dropped once the new file yields its first datagram.
    pub(crate) previous: Option<Box<Previous>>,
}

/// What [`Sources::previous`] keeps: the replay and the time control of the view.
pub(crate) struct Previous {
    pub(crate) replay: Option<ReplayState>,
    pub(crate) time: TimeControl,
    pub(crate) replay_focus: Option<ComponentId>,
}

/// What a window with neither source would draw (none is ever made: the constructors give
/// one source and a replay closes only back to a live one).
static NO_VEHICLE: LazyLock<SharedVehicle> =
    LazyLock::new(|| Arc::new(RwLock::new(Vehicle::new())));

impl Sources {
    /// A live source (`net` running, or `None` for an app fed updates directly).
    pub fn live(kind: LiveKind, net: Option<NetHandle>, sims: Vec<SimHandle>) -> Self {
        Self {
            live: Some(LiveSource {
                kind,
                short_buffer: net
                    .as_ref()
                    .and_then(NetHandle::short_receive_buffer)
                    .map(crate::net::socket::short_buffer_advice),
                net,
                _sims: sims,
                vehicle: Arc::new(RwLock::new(Vehicle::new())),
            }),
            replay: None,
            previous: None,
        }
    }

    /// Neither source yet (a replay window before its file is shown).
    pub(crate) fn none() -> Self {
        Self {
            live: None,
            replay: None,
            previous: None,
        }
    }

    /// The live source, when there is one.
    pub fn live_source(&self) -> Option<&LiveSource> {
        self.live.as_ref()
    }

    /// The replay, when one is open.
    pub fn replay(&self) -> Option<&ReplayState> {
        self.replay.as_ref()
    }

    /// The network side, when a live source runs.
    pub fn net(&self) -> Option<&NetHandle> {
        self.live.as_ref().and_then(LiveSource::net)
    }

    /// Whether a live source runs (live or demo), even under a replay.
    pub fn live_running(&self) -> bool {
        self.net().is_some()
    }

    /// The vehicle store drawn: the replay's, else the live one.
    pub fn vehicle(&self) -> &SharedVehicle {
        match (&self.replay, &self.live) {
            (Some(r), _) => &r.replay.session,
            (None, Some(l)) => &l.vehicle,
            (None, None) => &NO_VEHICLE,
        }
    }

    /// Every vehicle store held: the live one and the replay's (each holds its share of the
    /// memory budget).
    pub fn vehicles(&self) -> impl Iterator<Item = &SharedVehicle> {
        let live = self.live.as_ref().map(|l| &l.vehicle);
        let replay = self.replay.as_ref().map(|r| &r.replay.session);
        live.into_iter().chain(replay)
    }

    /// Bytes held by every session together.
    pub fn memory_bytes(&self) -> usize {
        self.vehicles()
            .map(|s| read_vehicle(s).memory_bytes())
            .sum()
    }

    /// What the window shows with time control `time`.
    pub fn shown(&self, time: &TimeControl) -> Shown {
        match (&self.replay, time.cursor()) {
            (Some(_), t) => {
                let t = t.unwrap_or(0.0);
                if self.live_running() {
                    Shown::ReplayOverLive { t }
                } else {
                    Shown::Replay { t }
                }
            }
            (None, None) => Shown::Live,
            (None, Some(t)) => Shown::LiveScrubbed { t },
        }
    }

    /// The time origin of the drawn session, ns since the Unix epoch, when known.
    pub fn start_ns(&self) -> Option<u64> {
        match &self.replay {
            // 0 until the loader has read the first record.
            Some(r) => Some(r.replay.start_ns()).filter(|&ns| ns > 0),
            None => self.net().map(NetHandle::start_unix_ns),
        }
    }

    /// The badge: a replay, else the simulator.
    pub fn badge(&self) -> Option<Badge> {
        match (&self.replay, &self.live) {
            (Some(r), _) => Some(Badge::Replay(r.replay.path.clone())),
            (None, Some(l)) if l.kind == LiveKind::Simulated => Some(Badge::Simulated),
            _ => None,
        }
    }

    /// The mode as the window title says it: `live`, `SIMULATED`, `REPLAY file.mcap`.
    pub fn title_mode(&self) -> String {
        match self.badge() {
            Some(Badge::Replay(path)) => format!("REPLAY {}", file_name(&path)),
            Some(Badge::Simulated) => "SIMULATED".into(),
            None => "live".into(),
        }
    }

    /// Whether a replay's file is still loading.
    pub fn loading(&self) -> bool {
        self.replay.as_ref().is_some_and(ReplayState::loading)
    }

    /// A context for the time rules over `session` (the drawn one).
    pub fn time_context<'a>(&self, session: &'a Session, now: f64) -> TimeContext<'a> {
        TimeContext {
            session,
            replay: self.replay.is_some(),
            growing: self.loading(),
            now,
        }
    }
}
