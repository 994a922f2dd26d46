//! The live view server: the session served to Foxglove and Lichtblick over their WebSocket
//! protocol (`foxglove.sdk.v1`, the `foxglove` crate's server), read-only, with the same
//! channels as our recordings — built by the same [`Pipeline`] the recorder writes from.
//!
//! Threads and queues (the network side and the UI never wait on a viewer):
//! - the feed: the tap ([`Tap::attach`]) or a replay's reader hands raw datagrams over a
//!   bounded channel ([`LiveConfig::capacity`]); a full channel loses the datagram, counted
//!   for this server alone ([`LiveStats::dropped`]) and said to every viewer as a status;
//! - `jaus-live` runs the pipeline (observer → decoded, summary and Foxglove channels) and logs
//!   each message to the server's channels; it ticks every [`TICK`] with nothing received, so
//!   an arm's summary ages while it is silent;
//! - the crate's server, on its own runtime (one worker, `jaus-live-ws`), listens on loopback
//!   only; viewers connect to our front door (`relay`), which relays each to it through a
//!   queue of [`LiveConfig::backlog`] frames of our own: when a viewer cannot keep up (its
//!   socket, its TCP window), the oldest message goes, counted for that viewer
//!   ([`LiveStats::per_viewer`], [`LiveStats::not_received`]) and told to it as a status.
//!
//! Latched state: the newest message of each latched kind per arm (specification, summary,
//! scene, transforms; [`Out::Message::latched`]) is kept and sent to a viewer at once when it
//! subscribes to that channel — as a reader of a recording finds them in the file.
//!
//! Read-only by construction: the server declares no capability (no `clientPublish`, no
//! services, no parameters) but, serving a file, playback control of that file; nothing a
//! viewer sends reaches the arm, and the server holds no way to command one.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Sender, select};
use foxglove::websocket::{
    ChannelView, Client, PlaybackCommand, PlaybackControlRequest, PlaybackState, PlaybackStatus,
    ServerListener, Status,
};
use foxglove::{Context, PartialMetadata, RawChannel, Schema, WebSocketServer};

use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::events::Note;
use crate::model::update::ComponentId;
use crate::net::tap::{Attached, Tap, WireRecord};
use crate::record::format;
use crate::record::foxglove::SceneLook;
use crate::record::pipeline::{Channel, Out, Pipeline, PipelineConfig};

mod relay;

pub use relay::ViewerStats;

/// The default address: loopback only (reach it from elsewhere through an SSH tunnel).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

/// How often the server thread wakes with nothing received (summaries age, statuses).
pub const TICK: Duration = Duration::from_millis(250);

/// How the live view server is set up.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Where to listen ([`DEFAULT_LISTEN`]; port 0 picks a free one).
    pub listen: SocketAddr,
    /// The session's time origin, ns since the Unix epoch.
    pub session_start_ns: u64,
    /// The Foxglove scene's look (the 3D view's palette), `None` for no Foxglove channels.
    pub foxglove: Option<SceneLook>,
    /// Datagrams queued from the feed at most (default 65 536).
    pub capacity: usize,
    /// Messages queued per viewer at most (default 1024); when full the oldest message goes,
    /// counted for that viewer.
    pub backlog: usize,
    /// What the server says it is (Foxglove shows it).
    pub name: String,
    /// Serving a file: its time range (ns since the Unix epoch), declared to viewers with the
    /// playback control capability, so Foxglove's playback bar plays, pauses, seeks and
    /// changes speed ([`Playback`]). `None` live.
    pub playback: Option<(u64, u64)>,
    /// The vehicle file clearance measures against (`None`, the default: the arms' own
    /// cylinders only, no ground and no obstacles).
    pub vehicle: Option<Arc<VehicleGeometry>>,
}

impl LiveConfig {
    /// Defaults for `listen` with the given time origin, drawing the Foxglove scene with
    /// `look` (`ui::theme::ScenePalette::foxglove_look`, as recordings are).
    pub fn new(listen: SocketAddr, session_start_ns: u64, look: Option<SceneLook>) -> Self {
        Self {
            listen,
            session_start_ns,
            foxglove: look,
            capacity: 65_536,
            backlog: 1024,
            name: format!("jaus-ocu {}", env!("CARGO_PKG_VERSION")),
            playback: None,
            vehicle: None,
        }
    }
}

/// What the server has done so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveStats {
    /// Where it listens.
    pub address: Option<SocketAddr>,
    /// Viewers connected now.
    pub viewers: usize,
    /// Datagrams decoded.
    pub datagrams: u64,
    /// Messages logged to the channels.
    pub messages: u64,
    /// Datagrams the feed lost because the server was behind.
    pub dropped: u64,
    /// Each viewer connected now: what it was sent and did not receive.
    pub per_viewer: Vec<ViewerStats>,
    /// Messages viewers did not receive (their connection could not keep up), every viewer
    /// since the start, those gone included.
    pub not_received: u64,
    /// Latched messages sent to viewers as they subscribed.
    pub latched_sent: u64,
    /// Still running.
    pub running: bool,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The address could not be listened on.
    #[error(
        "cannot serve the live view on {addr}: {message} (choose another address with --listen, \
         or port 0 for any free one)"
    )]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// What failed.
        message: String,
    },
    /// A thread or the runtime could not start.
    #[error("cannot start the live view server: {0}")]
    Start(String),
}

/// What a viewer that subscribes late is sent at once, the channels, the server.
#[derive(Default)]
struct Shared {
    stats: LiveStats,
    /// The server (taken out when stopping).
    handle: Option<foxglove::WebSocketServerHandle>,
    /// The tap this server is attached to, for its loss count.
    feed: Option<Attached>,
    /// Records a replay's reader could not hand over ([`LiveServer::offer`]).
    offer_dropped: u64,
    /// The loss count last told to viewers.
    told_dropped: u64,
    channels: [Option<Arc<RawChannel>>; Channel::ALL.len()],
    /// The newest latched message per channel and arm: (log time, JSON).
    latched: HashMap<(usize, Option<ComponentId>), (u64, Vec<u8>)>,
}

type SharedRef = Arc<Mutex<Shared>>;

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // Whole values are written under the lock; a panic elsewhere cannot leave half of one.
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What viewers asked of a file's playback, and where it is: shared by the server's listener
/// (which answers the request at once) and the file's player (`record::live_file`), which
/// acts on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// Playing (else paused).
    pub playing: bool,
    /// Speed, 1.0 = real time (0.01 to 100).
    pub speed: f32,
    /// A seek asked for and not yet done: the time to go to, ns since the Unix epoch.
    pub seek: Option<u64>,
    /// Where the player is, ns since the Unix epoch.
    pub current: u64,
    /// The player reached the file's end.
    pub ended: bool,
}

impl Playback {
    /// Playing at 1× from `start`.
    pub fn new(start: u64) -> Self {
        Self {
            playing: true,
            speed: 1.0,
            seek: None,
            current: start,
            ended: false,
        }
    }

    /// The state to tell viewers.
    pub fn state(&self, did_seek: bool) -> PlaybackState {
        PlaybackState {
            status: if self.playing {
                PlaybackStatus::Playing
            } else if self.ended && self.seek.is_none() {
                PlaybackStatus::Ended
            } else {
                PlaybackStatus::Paused
            },
            current_time: self.seek.unwrap_or(self.current),
            playback_speed: self.speed,
            did_seek,
            request_id: None,
        }
    }
}

/// Shared playback state.
pub type PlaybackRef = Arc<Mutex<Playback>>;

/// Sends a subscriber the latched messages of its channel; takes a viewer's playback
/// requests.
struct Listener {
    shared: SharedRef,
    playback: Option<PlaybackRef>,
}

impl ServerListener for Listener {
    fn on_playback_control_request(
        &self,
        request: PlaybackControlRequest,
    ) -> Option<PlaybackState> {
        let playback = self.playback.as_ref()?;
        let mut p = playback
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.playing = request.playback_command == PlaybackCommand::Play;
        if request.playback_speed.is_finite() && request.playback_speed > 0.0 {
            p.speed = request.playback_speed.clamp(0.01, 100.0);
        }
        if let Some(t) = request.seek_time {
            p.seek = Some(t);
        }
        Some(p.state(request.seek_time.is_some()))
    }

    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        let mut shared = lock(&self.shared);
        let Some(index) = shared
            .channels
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.id() == channel.id()))
        else {
            return;
        };
        let Some(raw) = shared.channels[index].clone() else {
            return;
        };
        let mut sent = 0;
        let mut latched: Vec<&(u64, Vec<u8>)> = shared
            .latched
            .iter()
            .filter(|((c, _), _)| *c == index)
            .map(|(_, v)| v)
            .collect();
        latched.sort_by_key(|(t, _)| *t);
        for (t, bytes) in latched {
            raw.log_with_meta_to_sink(
                bytes,
                PartialMetadata { log_time: Some(*t) },
                client.sink_id(),
            );
            sent += 1;
        }
        shared.stats.latched_sent += sent;
    }
}

/// A running live view server.
pub struct LiveServer {
    tx: Sender<WireRecord>,
    notes: Sender<Note>,
    control: Sender<Control>,
    stop: Option<Sender<()>>,
    playback: Option<PlaybackRef>,
    thread: Option<JoinHandle<()>>,
    shared: SharedRef,
    runtime: Option<tokio::runtime::Runtime>,
    relay: Option<relay::Relay>,
    viewers: relay::ViewersRef,
    address: SocketAddr,
    attached: Option<(Tap, Attached)>,
}

impl std::fmt::Debug for LiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveServer")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl LiveServer {
    /// Listens on `cfg.listen` and starts the threads; nothing is served until a feed is
    /// attached ([`LiveServer::attach`]) or records are sent ([`LiveServer::sender`]).
    pub fn start(cfg: &LiveConfig) -> Result<LiveServer, LiveError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("jaus-live-ws")
            .enable_all()
            .build()
            .map_err(|e| LiveError::Start(format!("its runtime: {e}")))?;
        let context = Context::new();
        let shared: SharedRef = Arc::new(Mutex::new(Shared::default()));
        let info = HashMap::from([
            ("jaus-ocu".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
            ("read-only".to_owned(), "true".to_owned()),
            (
                "session_start".to_owned(),
                crate::model::clock::rfc3339_utc(cfg.session_start_ns),
            ),
        ]);
        let playback = cfg
            .playback
            .map(|(start, _)| Arc::new(Mutex::new(Playback::new(start))));
        let mut builder = WebSocketServer::new();
        if let Some((start, end)) = cfg.playback {
            builder = builder.playback_time_range(start, end.max(start));
        }
        // The crate's server on loopback, its queue per viewer 4 times ours: viewers reach it
        // through the relay, whose queue is the one that fills.
        let handle = builder
            .name(cfg.name.clone())
            .bind("127.0.0.1", 0)
            .context(&context)
            .capabilities([])
            .server_info(info)
            .message_backlog_size(cfg.backlog.max(16).saturating_mul(4))
            .listener(Arc::new(Listener {
                shared: shared.clone(),
                playback: playback.clone(),
            }))
            .tokio_runtime(runtime.handle())
            .start_blocking()
            .map_err(|e| LiveError::Start(format!("its server: {e}")))?;
        let inner = SocketAddr::from(([127, 0, 0, 1], handle.port()));
        let relay = match relay::Relay::start(cfg.listen, inner, cfg.backlog.max(16)) {
            Ok(r) => r,
            Err(e) => {
                let done = handle.stop();
                let _ = runtime.block_on(async {
                    tokio::time::timeout(Duration::from_secs(2), done.wait()).await
                });
                return Err(LiveError::Listen {
                    addr: cfg.listen,
                    message: describe(&e.to_string()),
                });
            }
        };
        let address = relay.address();
        let viewers = relay.viewers.clone();
        {
            let mut s = lock(&shared);
            s.stats.address = Some(address);
            s.stats.running = true;
            s.handle = Some(handle);
        }
        let (tx, rx) = crossbeam_channel::bounded(cfg.capacity.max(1));
        let (notes_tx, notes_rx) = crossbeam_channel::bounded(64);
        let (control_tx, control_rx) = crossbeam_channel::bounded(16);
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
        let machine = Machine {
            pipeline: Pipeline::new(PipelineConfig {
                start_ns: cfg.session_start_ns,
                foxglove: cfg.foxglove,
                vehicle: cfg.vehicle.clone(),
            }),
            foxglove: cfg.foxglove,
            vehicle: cfg.vehicle.clone(),
            sink: LiveSink {
                context,
                shared: shared.clone(),
                messages: 0,
                muted: false,
            },
            offset_ns: 0,
            datagrams: 0,
        };
        let inputs = Inputs {
            rx,
            notes: notes_rx,
            control: control_rx,
            stop: stop_rx,
        };
        let thread = std::thread::Builder::new()
            .name("jaus-live".into())
            .spawn(move || run(machine, &inputs))
            .map_err(|e| LiveError::Start(format!("its thread: {e}")))?;
        Ok(LiveServer {
            tx,
            notes: notes_tx,
            control: control_tx,
            stop: Some(stop_tx),
            playback,
            thread: Some(thread),
            shared,
            runtime: Some(runtime),
            relay: Some(relay),
            viewers,
            address,
            attached: None,
        })
    }

    /// Serves what `tap` sees from now on (after its latched datagrams); `false` when the tap
    /// has as many sinks as it takes ([`crate::net::tap::MAX_ATTACHED`]).
    pub fn attach(&mut self, tap: &Tap) -> bool {
        if let Some((old, a)) = self.attached.take() {
            old.detach(&a);
        }
        match tap.attach(self.tx.clone()) {
            Some(a) => {
                lock(&self.shared).feed = Some(a.clone());
                self.attached = Some((tap.clone(), a));
                true
            }
            None => false,
        }
    }

    /// Hands the server one record (a replay's reader); never blocks: a full queue loses it,
    /// counted in [`LiveStats::dropped`].
    pub fn offer(&self, rec: WireRecord) {
        if self.tx.try_send(rec).is_err() {
            lock(&self.shared).offer_dropped += 1;
        }
    }

    /// Whether this server is fed by `tap` (the same tap, not a copy's twin).
    pub fn is_attached_to(&self, tap: &Tap) -> bool {
        self.attached.as_ref().is_some_and(|(t, _)| t.is_same(tap))
    }

    /// The feed channel, for a source other than a tap (a replay): a sender uses `try_send`.
    pub fn sender(&self) -> Sender<WireRecord> {
        self.tx.clone()
    }

    /// Records queued for the server thread now.
    pub fn queued(&self) -> usize {
        self.tx.len()
    }

    /// The channel operator notes are handed over on (as the recorder's, never blocking).
    pub fn note_sender(&self) -> Sender<Note> {
        self.notes.clone()
    }

    /// Starts the session again with the time origin `start_ns` (a replay that loops): every
    /// viewer is told to clear what it has, the pipeline starts from nothing.
    pub fn restart(&self, start_ns: u64) {
        let _ = self.control.try_send(Control::Restart(start_ns));
    }

    /// While muted the server decodes what it is fed and keeps the latched state, but sends
    /// viewers nothing; unmuting sends every viewer the latched state (a seek: the file is
    /// read fast up to the time sought, then the viewers get the arm as it was then).
    pub fn mute(&self, muted: bool) {
        let _ = self.control.try_send(Control::Mute(muted));
    }

    /// What viewers asked of a file's playback (`None` live).
    pub fn playback(&self) -> Option<PlaybackRef> {
        self.playback.clone()
    }

    /// Tells viewers where a file's playback is (its time, ns since the Unix epoch).
    pub fn broadcast_time(&self, t_ns: u64) {
        if let Some(h) = &lock(&self.shared).handle {
            h.broadcast_time(t_ns);
        }
    }

    /// Tells viewers the playback's state (ended, paused, playing).
    pub fn broadcast_playback(&self, state: PlaybackState) {
        if let Some(h) = &lock(&self.shared).handle {
            h.broadcast_playback_state(state);
        }
    }

    /// Where the server listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What the server has done so far.
    pub fn stats(&self) -> LiveStats {
        let shared = lock(&self.shared);
        let mut stats = shared.stats.clone();
        stats.viewers = shared
            .handle
            .as_ref()
            .map_or(0, foxglove::WebSocketServerHandle::client_count);
        stats.dropped = shared.dropped();
        drop(shared);
        let viewers = relay::lock_viewers(&self.viewers);
        stats.per_viewer.clone_from(&viewers.now);
        stats.not_received =
            viewers.not_received_gone + viewers.now.iter().map(|v| v.not_received).sum::<u64>();
        stats
    }

    /// Stops serving: viewers are disconnected, the threads end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some((tap, a)) = self.attached.take() {
            tap.detach(&a);
        }
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let handle = lock(&self.shared).handle.take();
        if let Some(handle) = handle {
            let done = handle.stop();
            if let Some(runtime) = &self.runtime {
                // Bounded: a viewer that does not answer the close is dropped.
                let _ = runtime.block_on(async {
                    tokio::time::timeout(Duration::from_secs(2), async move {
                        done.wait().await;
                    })
                    .await
                });
            }
        }
        if let Some(mut relay) = self.relay.take() {
            relay.stop();
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
        lock(&self.shared).stats.running = false;
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        if self.thread.is_some() || self.runtime.is_some() || self.relay.is_some() {
            self.shutdown();
        }
    }
}

/// What the server thread is told besides records (in order; the sender waits for the records
/// before it to be taken, [`LiveServer::queued`]).
#[derive(Debug, Clone, Copy)]
enum Control {
    Restart(u64),
    Mute(bool),
}

/// The server thread's inputs.
struct Inputs {
    rx: Receiver<WireRecord>,
    notes: Receiver<Note>,
    control: Receiver<Control>,
    stop: Receiver<()>,
}

impl Shared {
    fn dropped(&self) -> u64 {
        self.feed.as_ref().map_or(0, Attached::dropped) + self.offer_dropped
    }
}

/// The server thread's state: the pipeline and where its messages go.
struct Machine {
    pipeline: Pipeline,
    foxglove: Option<SceneLook>,
    vehicle: Option<Arc<VehicleGeometry>>,
    sink: LiveSink,
    /// Record time minus wall time at the newest record (0 live, the replay's offset when
    /// serving a file): ticks between records run on the records' clock.
    offset_ns: i128,
    datagrams: u64,
}

/// The server's channels, made on first use, and the latched messages.
struct LiveSink {
    context: Arc<Context>,
    shared: SharedRef,
    messages: u64,
    /// Seeking: the latched state is kept, nothing is sent.
    muted: bool,
}

impl LiveSink {
    fn emit(&mut self, out: &Out<'_>) {
        let Out::Message {
            channel,
            log_time,
            bytes,
            arm,
            latched,
        } = *out
        else {
            // Arm metadata records are a file's; the summary channel says the same live.
            return;
        };
        let mut shared = lock(&self.shared);
        let index = channel.index();
        let raw = match &shared.channels[index] {
            Some(raw) => raw.clone(),
            None => {
                let (name, schema) = channel.schema();
                let built = self
                    .context
                    .channel_builder(channel.topic())
                    .message_encoding(format::JSON_ENCODING)
                    .schema(Schema::new(
                        name,
                        format::SCHEMA_ENCODING,
                        schema.as_bytes().to_vec(),
                    ))
                    .build_raw();
                match built {
                    Ok(raw) => {
                        shared.channels[index] = Some(raw.clone());
                        raw
                    }
                    Err(e) => {
                        tracing::warn!("live view: cannot make {}: {e}", channel.topic());
                        return;
                    }
                }
            }
        };
        if latched {
            let slot = shared.latched.entry((index, arm)).or_default();
            slot.0 = log_time;
            slot.1.clear();
            slot.1.extend_from_slice(bytes);
        }
        drop(shared);
        if self.muted {
            return;
        }
        raw.log_with_meta(
            bytes,
            PartialMetadata {
                log_time: Some(log_time),
            },
        );
        self.messages += 1;
    }
}

impl LiveSink {
    /// Mutes or unmutes; unmuting sends every viewer the latched state, oldest first.
    fn set_muted(&mut self, muted: bool) {
        let was = self.muted;
        self.muted = muted;
        if !was || muted {
            return;
        }
        let shared = lock(&self.shared);
        let mut latched: Vec<(u64, usize, &Vec<u8>)> = shared
            .latched
            .iter()
            .map(|((c, _), (t, bytes))| (*t, *c, bytes))
            .collect();
        latched.sort_by_key(|(t, c, _)| (*t, *c));
        for (t, c, bytes) in latched {
            if let Some(raw) = &shared.channels[c] {
                raw.log_with_meta(bytes, PartialMetadata { log_time: Some(t) });
                self.messages += 1;
            }
        }
    }
}

impl Machine {
    fn publish(&self) {
        let mut shared = lock(&self.sink.shared);
        shared.stats.datagrams = self.datagrams;
        shared.stats.messages = self.sink.messages;
        // Losses are told to every viewer, as a status that replaces the previous one.
        let dropped = shared.dropped();
        if dropped != shared.told_dropped {
            shared.told_dropped = dropped;
            if let Some(handle) = &shared.handle {
                handle.publish_status(
                    Status::warning(format!(
                        "jaus-ocu's live view fell behind: {dropped} datagrams were not decoded \
                         for viewers (the OCU and its recording are not affected)"
                    ))
                    .with_id("feed-dropped"),
                );
            }
        }
    }

    /// Starts from nothing (a replay looped): new pipeline, no latched state.
    fn reset(&mut self, start_ns: u64) {
        self.pipeline = Pipeline::new(PipelineConfig {
            start_ns,
            foxglove: self.foxglove,
            vehicle: self.vehicle.clone(),
        });
        lock(&self.sink.shared).latched.clear();
        if let Some(handle) = &lock(&self.sink.shared).handle {
            handle.clear_session(None);
        }
    }

    /// An operator's note, to every viewer.
    fn note(&mut self, note: &Note) {
        let Self { pipeline, sink, .. } = self;
        let _ = pipeline.note(note, &mut |out| {
            sink.emit(&out);
            Ok::<(), std::convert::Infallible>(())
        });
    }

    /// Time passes with nothing received: the summaries that are due.
    fn tick(&mut self, now_ns: u64) {
        let Self { pipeline, sink, .. } = self;
        let _ = pipeline.tick(now_ns, &mut |out| {
            sink.emit(&out);
            Ok::<(), std::convert::Infallible>(())
        });
    }

    fn observe(&mut self, rec: &WireRecord) {
        self.datagrams += 1;
        self.offset_ns = i128::from(rec.t_ns) - i128::from(wall_ns());
        let Self { pipeline, sink, .. } = self;
        let _ = pipeline.observe(rec, false, &mut |out| {
            sink.emit(&out);
            Ok::<(), std::convert::Infallible>(())
        });
    }
}

fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Records handled per wake-up before the thread looks at its other inputs.
const BATCH: usize = 1024;

fn run(mut m: Machine, inputs: &Inputs) {
    let mut last_tick = Instant::now();
    loop {
        let mut stopping = false;
        select! {
            recv(inputs.rx) -> rec => {
                if let Ok(rec) = rec {
                    m.observe(&rec);
                    for rec in inputs.rx.try_iter().take(BATCH) {
                        m.observe(&rec);
                    }
                }
            },
            recv(inputs.notes) -> note => {
                if let Ok(note) = note {
                    m.note(&note);
                }
            },
            recv(inputs.control) -> control => match control {
                Ok(Control::Restart(start)) => m.reset(start),
                Ok(Control::Mute(muted)) => m.sink.set_muted(muted),
                Err(_) => {}
            },
            recv(inputs.stop) -> _ => stopping = true,
            default(TICK) => {},
        }
        if stopping {
            break;
        }
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            let now = i128::from(wall_ns()) + m.offset_ns;
            let now = u64::try_from(now.max(0)).unwrap_or(0);
            m.tick(now);
            m.publish();
        }
    }
    m.publish();
}

/// The crate's error in words an operator acts on.
fn describe(e: &str) -> String {
    if e.contains("Address already in use") || e.contains("in use") {
        "the address is in use (another jaus-ocu serve, or another program)".to_owned()
    } else if e.contains("Cannot assign requested address") {
        "this machine has no such address".to_owned()
    } else {
        e.to_owned()
    }
}
