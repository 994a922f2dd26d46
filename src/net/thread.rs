//! The network thread: owns the OCU's UDP socket, runs the [`Client`] state machine and
//! publishes [`Update`]s on one bounded channel. When the UI falls behind, samples of the same
//! signal are coalesced (newest wins) and discrete updates queue in a bounded backlog; both
//! are counted. The thread never blocks on the UI.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::{Client, ClientConfig, Output};
use super::fault::{FaultInjector, Faults};
use super::priority;
use super::socket::{self, Batch, KernelDrops, Membership, Sink, spawn_batch_receiver};
use super::tap::{Direction, Epoch, Tap};
use crate::model::command::{Command, CommandKind};
use crate::model::update::{ArmFact, ComponentId, NetFact, Remark, Signal, Update};
use crossbeam_channel::Select;
use crossbeam_channel::{Receiver, Sender, TryRecvError, TrySendError, bounded};
use tracing::{debug, info, warn};

/// The updates an operator's log should hold (the terminal of `gui`, `demo`, `probe`):
/// errors in words, staleness, the link, control lost, and a conflict over our JAUS ID.
fn log_update(u: &Update) {
    match u {
        Update::Arm { arm, fact } => match fact {
            ArmFact::Remark(Remark::Error { message, .. }) => warn!("net: {arm}: {message}"),
            ArmFact::Stale { t, signal, stale } => {
                info!(
                    "net: {arm}: {} {} at {t:.3} s",
                    signal.name(),
                    if *stale { "stale" } else { "fresh again" }
                );
            }
            ArmFact::Link { t, state } => info!("net: {arm}: link {} at {t:.3} s", state.name()),
            ArmFact::Address { t, address, .. } => {
                info!("net: {arm}: followed at {address} from {t:.3} s");
            }
            ArmFact::ControlLost { t, reason } => {
                warn!("net: {arm}: control lost at {t:.3} s: {reason}");
            }
            _ => {}
        },
        Update::Net(NetFact::Remark(Remark::Error { message, .. })) => warn!("net: {message}"),
        Update::Net(NetFact::Identity {
            id,
            conflict,
            suspect,
            ..
        }) => match (conflict, suspect) {
            (Some(c), _) => warn!(
                "net: JAUS ID {id} is also used by another client: {}",
                c.evidence
            ),
            (None, Some(s)) => warn!(
                "net: JAUS ID {id}: {} (nothing refused unless the arm confirms it)",
                s.evidence
            ),
            (None, None) => info!("net: JAUS ID {id}"),
        },
        Update::Net(_) => {}
    }
}

/// Called after updates were published (the GUI passes a repaint request).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// How the network side is set up.
#[derive(Clone)]
pub struct NetConfig {
    /// Local address to bind (default: any address, ephemeral port).
    pub bind: SocketAddr,
    /// Protocol configuration.
    pub client: ClientConfig,
    /// Capacity of the update channel.
    pub update_capacity: usize,
    /// Capacity of the backlog for discrete updates when the UI is behind.
    pub backlog_capacity: usize,
    /// Called after updates were published.
    pub waker: Option<Waker>,
    /// Called instead of `waker` after a publish that held a discrete fact (status,
    /// emergency, link, control, an outcome: anything but a sample), which a window draws
    /// at once while samples wait for its content rate. `None`: `waker` for every publish.
    pub urgent_waker: Option<Waker>,
    /// Where every datagram received and sent is offered for recording (connect a recorder
    /// before `spawn` to record from the first datagram, or later through [`NetHandle::tap`]).
    pub tap: Tap,
    /// The session's time origin (default: when `spawn` is called). A recorder started before
    /// the network side shares it so that the first datagram is recorded and times agree.
    pub epoch: Option<Epoch>,
    /// Faults applied to what the OCU sends (for tests of a peer's tolerance; default none).
    pub faults: Faults,
    /// Seed of the fault injector's randomness.
    pub fault_seed: u64,
    /// Kernel memory wanted for the socket's unread datagrams (default
    /// [`socket::RECEIVE_BUFFER_WANTED`]); 0 keeps the system's default.
    pub receive_buffer: usize,
    /// Most datagrams the receive thread hands over at once (default 64); 1 hands each over
    /// alone, waking the protocol thread per datagram (the way before batches).
    pub receive_batch: usize,
    /// Raise the network threads' scheduling priority where allowed (default true; real time,
    /// else a lower nice value: `net::priority`). Off, they run at normal priority.
    pub raise_priority: bool,
    /// Commands the client takes before its first tick, so their datagrams are the first
    /// sent (`control --component … emergency set`: the stop before discovery).
    pub first: Vec<Command>,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
            client: ClientConfig::default(),
            update_capacity: 4096,
            backlog_capacity: 4096,
            waker: None,
            urgent_waker: None,
            tap: Tap::new(),
            epoch: None,
            faults: Faults::default(),
            fault_seed: 1,
            receive_buffer: socket::RECEIVE_BUFFER_WANTED,
            receive_batch: 64,
            raise_priority: true,
            first: Vec::new(),
        }
    }
}

/// Whether a window shows `u` at once ([`NetConfig::urgent_waker`]): a discrete fact, not a
/// sample, the end-effector pose or the counters (once a second).
pub fn is_urgent(u: &Update) -> bool {
    match u {
        Update::Arm { fact, .. } => {
            fact.signal().is_none() && !matches!(fact, ArmFact::CurrentPose { .. })
        }
        Update::Net(fact) => !matches!(fact, NetFact::Stats { .. }),
    }
}

/// Whether `u` asks the window for a frame at all: everything but the counters (once a
/// second), which the next frame shows. A lost link's window then draws at its own idle pace
/// (`ui::pace`), not once a second for counters that do not move.
pub fn wakes_window(u: &Update) -> bool {
    !matches!(u, Update::Net(NetFact::Stats { .. }))
}

impl std::fmt::Debug for NetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetConfig")
            .field("bind", &self.bind)
            .field("client", &self.client)
            .field("update_capacity", &self.update_capacity)
            .field("faults", &self.faults)
            .field("receive_buffer", &self.receive_buffer)
            .field("receive_batch", &self.receive_batch)
            .field("raise_priority", &self.raise_priority)
            .finish_non_exhaustive()
    }
}

/// Publishes updates without ever blocking: coalesces samples, queues the rest, counts.
#[derive(Debug)]
pub struct Publisher {
    tx: Sender<Update>,
    latest: BTreeMap<(ComponentId, Signal), Update>,
    backlog: VecDeque<Update>,
    capacity: usize,
    /// Samples replaced by newer ones.
    pub coalesced: u64,
    /// Discrete updates dropped because the backlog was full.
    pub dropped: u64,
}

impl Publisher {
    /// A publisher on `tx` with a backlog of at most `capacity` discrete updates.
    pub fn new(tx: Sender<Update>, capacity: usize) -> Self {
        Self {
            tx,
            latest: BTreeMap::new(),
            backlog: VecDeque::new(),
            capacity,
            coalesced: 0,
            dropped: 0,
        }
    }

    /// Whether anything waits for room in the channel.
    pub fn has_backlog(&self) -> bool {
        !self.latest.is_empty() || !self.backlog.is_empty()
    }

    /// Publishes `u` now if there is room (and nothing older is waiting), else keeps it.
    pub fn publish(&mut self, mut u: Update) {
        log_update(&u);
        if let Update::Net(NetFact::Stats { stats, .. }) = &mut u {
            stats.updates_coalesced = self.coalesced;
            stats.updates_dropped = self.dropped;
        }
        self.flush();
        if self.has_backlog() {
            self.stash(u);
            return;
        }
        match self.tx.try_send(u) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(u)) => self.stash(u),
        }
    }

    fn stash(&mut self, u: Update) {
        match u.coalesce_key() {
            Some(k) => {
                if self.latest.insert(k, u).is_some() {
                    self.coalesced += 1;
                }
            }
            None => {
                if self.backlog.len() >= self.capacity {
                    self.backlog.pop_front();
                    self.dropped += 1;
                }
                self.backlog.push_back(u);
            }
        }
    }

    /// Sends what waits, as far as the channel has room: discrete updates first (in order),
    /// then the newest sample of each signal.
    pub fn flush(&mut self) {
        while let Some(u) = self.backlog.pop_front() {
            match self.tx.try_send(u) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                Err(TrySendError::Full(u)) => {
                    self.backlog.push_front(u);
                    return;
                }
            }
        }
        while let Some((k, u)) = self.latest.pop_first() {
            match self.tx.try_send(u) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                Err(TrySendError::Full(u)) => {
                    self.latest.insert(k, u);
                    return;
                }
            }
        }
    }
}

/// The OCU's send side: the socket, recording every datagram it accepted (at the moment it
/// left, on the client's clock, so replay times equal live times).
struct Wire {
    socket: UdpSocket,
    tap: Tap,
    epoch: Epoch,
}

impl Sink for Wire {
    #[allow(
        clippy::disallowed_methods,
        reason = "net/ owns the sockets: the OCU's send side"
    )]
    fn send_to(&mut self, bytes: &[u8], to: SocketAddr) -> io::Result<()> {
        self.socket.send_to(bytes, to)?;
        let at = Instant::now();
        self.tap
            .offer(self.epoch.unix_ns_at(at), Direction::Tx, to, bytes);
        Ok(())
    }
}

/// Sizes the socket's receive buffer as `cfg` says and tells the tap where the kernel counts
/// the socket's drops; returns that counter and the buffer granted. A short buffer is not
/// printed here: every `probe` and `control` run said it, where it rarely mattered. The
/// callers say it where it matters ([`NetHandle::short_receive_buffer`]): the GUI's status
/// bar, `record`, and whenever the kernel actually dropped datagrams.
fn prepare_socket(
    socket: &UdpSocket,
    cfg: &NetConfig,
) -> (KernelDrops, Option<socket::ReceiveBuffer>) {
    let mut buffer = None;
    if cfg.receive_buffer > 0 {
        match socket::size_receive_buffer(socket, cfg.receive_buffer) {
            Ok(b) => {
                debug!("net: UDP receive buffer {} KiB", b.granted / 1024);
                buffer = Some(b);
            }
            Err(e) => warn!("net: cannot size the UDP receive buffer: {e}"),
        }
    }
    let kernel_drops = KernelDrops::of(socket);
    cfg.tap.set_kernel_drops(kernel_drops);
    (kernel_drops, buffer)
}

/// Room in the ordinary command queue ([`NetHandle::send`]).
pub const COMMAND_QUEUE: usize = 256;

/// The most arms whose own stops ([`Command::SetEmergencyOf`]) wait on the lane at once: the
/// window sends one per press of E-STOP and the network thread takes them within a wake-up.
/// A press beyond them (a runaway caller) stops the focused arm and every arm of its
/// subsystem instead: more than was asked, never less.
pub const STOPS_OF_ARMS: usize = 4 * crate::model::update::MAX_ARMS;

/// The emergency lane: the emergency stops waiting for the network thread, beside (never in)
/// the ordinary command queue, so a full queue can neither refuse nor delay them. Presses of
/// the same stop not yet taken are one stop (stopping twice stops once).
#[derive(Debug, Default)]
struct EmergencyLane {
    /// A [`Command::SetEmergency`] is waiting.
    stop: AtomicBool,
    /// A [`Command::SetEmergencyAll`] is waiting.
    stop_all: AtomicBool,
    /// The arms of the [`Command::SetEmergencyOf`]s waiting, each once, oldest first (at most
    /// [`STOPS_OF_ARMS`]); `stop_of_waiting` says whether there are any without the lock.
    stop_of: Mutex<Vec<ComponentId>>,
    stop_of_waiting: AtomicBool,
    /// Emergency stops put on the lane so far: every ordinary command is queued with this
    /// count, so one sent before a stop that overtook it is known ([`Inbound::overtaken`]).
    raised: AtomicU64,
}

/// An ordinary command in the queue, with the emergency stops raised before it was sent.
#[derive(Debug)]
struct Queued {
    cmd: Command,
    raised: u64,
}

/// A command as the network thread takes it.
#[derive(Debug)]
struct Inbound {
    cmd: Command,
    /// An emergency stop sent after this (ordinary) command reached the network thread
    /// before it.
    overtaken: bool,
}

/// Where the network side takes the operator's commands from, in the one order every taker
/// sees: a waiting emergency stop first ([`Command::SetEmergency`], then each
/// [`Command::SetEmergencyOf`], then [`Command::SetEmergencyAll`]), then the ordinary queue,
/// oldest first. The network thread
/// owns one; [`NetHandle::detached`] hands one to the caller.
#[derive(Debug)]
pub struct Commands {
    lane: Arc<EmergencyLane>,
    queue: Receiver<Queued>,
    /// Ready when the lane holds a stop (one slot: a wake already waiting is enough).
    wake: Receiver<()>,
}

impl Commands {
    /// The next command, emergency stops first; `Err(Disconnected)` once the handle is gone
    /// and nothing waits.
    pub fn try_recv(&self) -> Result<Command, TryRecvError> {
        self.next().map(|i| i.cmd)
    }

    /// Every command waiting now, in the order [`Commands::try_recv`] gives them.
    pub fn try_iter(&self) -> impl Iterator<Item = Command> + '_ {
        std::iter::from_fn(|| self.try_recv().ok())
    }

    /// Whether an emergency stop waits on the lane.
    fn emergency_waiting(&self) -> bool {
        self.lane.stop.load(Ordering::Acquire)
            || self.lane.stop_of_waiting.load(Ordering::Acquire)
            || self.lane.stop_all.load(Ordering::Acquire)
    }

    /// The oldest arm's own stop waiting on the lane.
    fn take_stop_of(&self) -> Option<ComponentId> {
        if !self.lane.stop_of_waiting.load(Ordering::Acquire) {
            return None;
        }
        let mut arms = self
            .lane
            .stop_of
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let first = (!arms.is_empty()).then(|| arms.remove(0));
        self.lane
            .stop_of_waiting
            .store(!arms.is_empty(), Ordering::Release);
        first
    }

    fn next(&self) -> Result<Inbound, TryRecvError> {
        let emergency = if self.lane.stop.swap(false, Ordering::AcqRel) {
            Some(Command::SetEmergency)
        } else if let Some(arm) = self.take_stop_of() {
            Some(Command::SetEmergencyOf(arm))
        } else if self.lane.stop_all.swap(false, Ordering::AcqRel) {
            Some(Command::SetEmergencyAll)
        } else {
            None
        };
        if let Some(cmd) = emergency {
            return Ok(Inbound {
                cmd,
                overtaken: false,
            });
        }
        let q = self.queue.try_recv()?;
        Ok(Inbound {
            overtaken: self.lane.raised.load(Ordering::Acquire) > q.raised,
            cmd: q.cmd,
        })
    }
}

/// The sending half of [`Commands`].
#[derive(Debug, Clone)]
struct CommandSender {
    lane: Arc<EmergencyLane>,
    queue: Sender<Queued>,
    wake: Sender<()>,
}

impl CommandSender {
    /// A sender and its [`Commands`], the queue [`COMMAND_QUEUE`] long.
    fn new() -> (CommandSender, Commands) {
        let lane = Arc::new(EmergencyLane::default());
        let (queue_tx, queue_rx) = bounded::<Queued>(COMMAND_QUEUE);
        let (wake_tx, wake_rx) = bounded::<()>(1);
        (
            CommandSender {
                lane: lane.clone(),
                queue: queue_tx,
                wake: wake_tx,
            },
            Commands {
                lane,
                queue: queue_rx,
                wake: wake_rx,
            },
        )
    }

    /// An emergency stop on the lane (never refused: the flag is set before the wake, and a
    /// full wake slot means a wake is already waiting); anything else queued.
    fn send(&self, cmd: Command) -> Result<(), TrySendError<Command>> {
        let flag = match cmd {
            Command::SetEmergency => Some(&self.lane.stop),
            Command::SetEmergencyAll => Some(&self.lane.stop_all),
            Command::SetEmergencyOf(arm) => {
                let mut arms = self
                    .lane
                    .stop_of
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if arms.contains(&arm) {
                    Some(&self.lane.stop_of_waiting)
                } else if arms.len() < STOPS_OF_ARMS {
                    arms.push(arm);
                    Some(&self.lane.stop_of_waiting)
                } else {
                    self.lane.stop.store(true, Ordering::Release);
                    Some(&self.lane.stop_all)
                }
            }
            _ => None,
        };
        if let Some(flag) = flag {
            self.lane.raised.fetch_add(1, Ordering::AcqRel);
            flag.store(true, Ordering::Release);
            return match self.wake.try_send(()) {
                Err(TrySendError::Disconnected(())) => Err(TrySendError::Disconnected(cmd)),
                Ok(()) | Err(TrySendError::Full(())) => Ok(()),
            };
        }
        let raised = self.lane.raised.load(Ordering::Acquire);
        self.queue
            .try_send(Queued { cmd, raised })
            .map_err(|e| match e {
                TrySendError::Full(q) => TrySendError::Full(q.cmd),
                TrySendError::Disconnected(q) => TrySendError::Disconnected(q.cmd),
            })
    }
}

/// What the network thread waits on: the emergency lane and the command queue, and the
/// datagrams (`datagrams_index` in the thread's `Select`).
struct Inputs<'a> {
    commands: &'a Commands,
    datagrams: &'a Receiver<Batch>,
    datagrams_index: usize,
}

impl Inputs<'_> {
    /// One wait of the network thread: the emergency lane first (a stop taken then is sent
    /// without waiting), then at most `wait` for datagrams or a command (one pressed meanwhile
    /// wakes it at once: `Commands::wake`), then the lane again.
    fn take(
        &self,
        client: &mut Client,
        ready: &mut Select<'_>,
        wait: Duration,
        clock: impl Fn(Instant) -> f64 + Copy,
        record: &impl Fn(Instant, Direction, SocketAddr, Vec<u8>),
        out: &mut Output,
    ) {
        let took = take_emergencies(client, self.commands, clock(Instant::now()), out);
        let wait = if took { Duration::ZERO } else { wait };
        match ready.ready_timeout(wait) {
            Ok(i) if i == self.datagrams_index => {
                take_datagrams(client, self.datagrams, self.commands, clock, record, out);
            }
            Ok(_) => take_command(client, self.commands, clock(Instant::now()), out),
            Err(_) => {}
        }
        take_emergencies(client, self.commands, clock(Instant::now()), out);
    }
}

/// Hands the client the datagrams waiting, up to about 256 (then the updates they gave are
/// published), each recorded as received; stops early for an emergency stop pressed meanwhile.
fn take_datagrams(
    client: &mut Client,
    datagrams: &Receiver<Batch>,
    commands: &Commands,
    clock: impl Fn(Instant) -> f64,
    record: &impl Fn(Instant, Direction, SocketAddr, Vec<u8>),
    out: &mut Output,
) {
    let (mut next, mut taken) = (datagrams.try_recv().ok(), 0);
    while let Some(batch) = next.take() {
        taken += batch.len();
        for (at, from, bytes) in batch {
            client.handle_datagram(clock(at), from, &bytes, out);
            record(at, Direction::Rx, from, bytes);
        }
        if taken < 256 && !commands.emergency_waiting() {
            next = datagrams.try_recv().ok();
        }
    }
}

/// Hands every emergency stop waiting on the lane to the client; whether there was one.
fn take_emergencies(client: &mut Client, commands: &Commands, now: f64, out: &mut Output) -> bool {
    let mut took = false;
    while commands.emergency_waiting() {
        if let Ok(inbound) = commands.next() {
            hand_over(client, now, inbound, out);
            took = true;
        }
    }
    took
}

/// Hands the client one command (a stop waiting on the lane first, else the oldest queued
/// one), or `Shutdown` once the handle is gone.
fn take_command(client: &mut Client, commands: &Commands, now: f64, out: &mut Output) {
    let _ = commands.wake.try_recv();
    match commands.next() {
        Ok(inbound) => hand_over(client, now, inbound, out),
        Err(TryRecvError::Empty) => {}
        // The handle is gone: leave politely.
        Err(TryRecvError::Disconnected) => client.handle_command(now, Command::Shutdown, out),
    }
}

/// Hands `inbound` to the client: an ordinary `ClearEmergency` that an emergency stop
/// overtook on the lane is refused (applied after the stop, it would undo what the operator
/// pressed last); everything else goes to [`Client::handle_command`].
fn hand_over(client: &mut Client, now: f64, inbound: Inbound, out: &mut Output) {
    if inbound.overtaken && inbound.cmd == Command::ClearEmergency {
        client.refuse(
            now,
            CommandKind::ClearEmergency,
            "an emergency stop pressed after it went first; clear the emergency again".into(),
            out,
        );
    } else {
        client.handle_command(now, inbound.cmd, out);
    }
}

/// A running network side: send commands, receive updates.
pub struct NetHandle {
    commands: CommandSender,
    updates: Receiver<Update>,
    start: Instant,
    start_unix_ns: u64,
    tap: Tap,
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    receive_buffer: Option<socket::ReceiveBuffer>,
}

impl std::fmt::Debug for NetHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetHandle")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl NetHandle {
    /// Binds the socket and starts the threads `jaus-net-rx` and `jaus-net`.
    pub fn spawn(cfg: NetConfig) -> io::Result<NetHandle> {
        let socket = socket::bind(cfg.bind, Membership::Client)?;
        let local_addr = socket.local_addr()?;
        let (kernel_drops, receive_buffer) = prepare_socket(&socket, &cfg);
        let epoch = cfg.epoch.unwrap_or_else(Epoch::now);
        let (start, start_unix_ns) = (epoch.instant, epoch.unix_ns);
        let stop = Arc::new(AtomicBool::new(false));
        let (cmd_tx, commands) = CommandSender::new();
        let (upd_tx, upd_rx) = bounded::<Update>(cfg.update_capacity.max(1));
        // Up to 8192 datagrams wait in the queue, as they did one datagram a slot: a batch takes
        // a slot however full it is, so the slots are 8192 / batch, at least 128. When it is
        // full the receive thread waits and the socket's buffer holds the rest.
        let batch = cfg.receive_batch.max(1);
        let (dg_tx, dg_rx) = bounded::<Batch>((8192 / batch).max(128));
        let queue_dropped = Arc::new(AtomicU64::new(0));
        let receiver = spawn_batch_receiver(
            "jaus-net-rx",
            &socket,
            stop.clone(),
            dg_tx,
            queue_dropped.clone(),
            batch,
            cfg.raise_priority,
        )?;

        let (loop_stop, waker, backlog) = (stop.clone(), cfg.waker.clone(), cfg.backlog_capacity);
        let client_cfg = cfg.client.clone();
        let first = cfg.first.clone();
        let tap = cfg.tap.clone();
        tap.set_epoch(epoch);
        let wire = Wire {
            socket,
            tap: cfg.tap.clone(),
            epoch,
        };
        let mut link = FaultInjector::new(wire, cfg.faults, cfg.fault_seed).with_label("net");
        let worker = std::thread::Builder::new()
            .name("jaus-net".into())
            .spawn(move || {
                let scheduling = priority::raise_network_thread(cfg.raise_priority);
                let clock = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
                // The recording's clock is the client's: replay times equal live times.
                let record =
                    |at: Instant, direction: Direction, peer: SocketAddr, bytes: Vec<u8>| {
                        tap.offer_owned(epoch.unix_ns_at(at), direction, peer, bytes);
                    };
                let mut client = Client::new(client_cfg).with_local_addr(local_addr);
                let mut publisher = Publisher::new(upd_tx, backlog);
                let mut out = Output::default();
                for cmd in first {
                    client.handle_command(clock(Instant::now()), cmd, &mut out);
                }
                let run = |out: &mut Output,
                           publisher: &mut Publisher,
                           link: &mut FaultInjector<Wire>| {
                    let now = clock(Instant::now());
                    for (addr, bytes) in out.datagrams.drain(..) {
                        link.send(now, addr, bytes);
                    }
                    link.poll(now);
                    let woke = out.updates.iter().any(wakes_window);
                    let wake = if out.updates.iter().any(is_urgent) {
                        &cfg.urgent_waker
                    } else {
                        &waker
                    };
                    for mut u in out.updates.drain(..) {
                        if let Update::Net(NetFact::Stats { stats, .. }) = &mut u {
                            stats.queue_dropped = queue_dropped.load(Ordering::Relaxed);
                            stats.send_errors = link.stats().send_errors;
                            stats.kernel_dropped = kernel_drops.read();
                            stats.scheduling = scheduling;
                        }
                        publisher.publish(u);
                    }
                    publisher.flush();
                    if woke && let Some(w) = wake.as_ref().or(waker.as_ref()) {
                        w();
                    }
                };
                let mut ready = Select::new();
                ready.recv(&commands.wake);
                ready.recv(&commands.queue);
                let inputs = Inputs {
                    commands: &commands,
                    datagrams: &dg_rx,
                    datagrams_index: ready.recv(&dg_rx),
                };
                loop {
                    if loop_stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let now = clock(Instant::now());
                    let mut deadline = client
                        .next_deadline()
                        .min(link.next_release())
                        .min(now + 0.05);
                    if publisher.has_backlog() {
                        deadline = deadline.min(now + 0.002);
                    }
                    let wait = Duration::from_secs_f64((deadline - now).max(0.0));
                    // The emergency lane first, whatever else is ready.
                    inputs.take(&mut client, &mut ready, wait, clock, &record, &mut out);
                    let now = clock(Instant::now());
                    if now >= client.next_deadline() {
                        client.tick(now, &mut out);
                    }
                    run(&mut out, &mut publisher, &mut link);
                    if client.is_shut_down() {
                        loop_stop.store(true, Ordering::Relaxed);
                        break;
                    }
                }
            })?;

        Ok(NetHandle {
            commands: cmd_tx,
            updates: upd_rx,
            start,
            start_unix_ns,
            tap: cfg.tap,
            local_addr,
            stop,
            threads: vec![receiver, worker],
            receive_buffer,
        })
    }

    /// Sends a command; fails only if the network thread is gone or hopelessly behind (its
    /// queue of [`COMMAND_QUEUE`] full). An emergency stop ([`Command::is_emergency`]) is
    /// never refused for a full queue nor waits behind it: it goes on the emergency lane,
    /// which the network thread empties first, woken at once.
    pub fn send(&self, cmd: Command) -> Result<(), String> {
        self.commands.send(cmd).map_err(|e| match e {
            TrySendError::Full(_) => {
                "the network thread is not keeping up; command dropped".to_string()
            }
            TrySendError::Disconnected(_) => "the network thread has stopped".to_string(),
        })
    }

    /// The update channel.
    pub fn updates(&self) -> &Receiver<Update> {
        &self.updates
    }

    /// The instant `t = 0` of every update.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The instant `t = 0` as ns since the Unix epoch (the time origin of recordings).
    pub fn start_unix_ns(&self) -> u64 {
        self.start_unix_ns
    }

    /// The recording tap: connect a recorder's channel to record every datagram.
    pub fn tap(&self) -> &Tap {
        &self.tap
    }

    /// The local socket address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The receive buffer the kernel granted when it is less than wanted (`None` when it is
    /// enough, or unknown). [`socket::short_buffer_advice`] says what to do about it.
    pub fn short_receive_buffer(&self) -> Option<socket::ReceiveBuffer> {
        self.receive_buffer.filter(socket::ReceiveBuffer::is_short)
    }

    /// What to tell the operator once the kernel dropped datagrams at our socket (`None`
    /// while it has dropped none): how many, and the advice on the buffer when it is short.
    pub fn drops_advice(&self) -> Option<String> {
        let dropped = self.tap.kernel_dropped().filter(|&d| d > 0)?;
        Some(match self.short_receive_buffer() {
            Some(b) => format!(
                "the kernel dropped {dropped} datagrams at our socket: {}",
                socket::short_buffer_advice(b)
            ),
            None => format!(
                "the kernel dropped {dropped} datagrams at our socket (its receive buffer \
                 was full: this machine was too busy to read them in time)"
            ),
        })
    }

    /// Cancels subscriptions, releases control and stops, waiting at most `grace` for the
    /// goodbye datagrams to leave.
    pub fn shutdown(mut self, grace: Duration) {
        // Said once, at the end, and only when datagrams were lost (not at every start).
        if let Some(advice) = self.drops_advice() {
            warn!("net: {advice}");
        }
        let _ = self.commands.send(Command::Shutdown);
        let until = Instant::now() + grace;
        while Instant::now() < until && !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.finish();
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// A handle with no socket and no threads: the caller is the network side. Commands sent
    /// through the handle arrive on the returned [`Commands`] (emergency stops first); updates sent on the returned sender
    /// reach [`NetHandle::updates`]. Channel sizes are those of [`NetHandle::spawn`]. For
    /// tests of the UI, which observe its commands where they leave it.
    pub fn detached(epoch: Epoch) -> (NetHandle, Commands, Sender<Update>) {
        let (cmd_tx, cmd_rx) = CommandSender::new();
        let (upd_tx, upd_rx) = bounded::<Update>(NetConfig::default().update_capacity.max(1));
        let handle = NetHandle {
            commands: cmd_tx,
            updates: upd_rx,
            start: epoch.instant,
            start_unix_ns: epoch.unix_ns,
            tap: Tap::new(),
            local_addr: SocketAddr::from(([0, 0, 0, 0], 0)),
            // Nothing runs: a shutdown has nothing to wait for.
            stop: Arc::new(AtomicBool::new(true)),
            threads: Vec::new(),
            receive_buffer: None,
        };
        (handle, cmd_rx, upd_tx)
    }
}

impl Drop for NetHandle {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.commands.send(Command::Shutdown);
            std::thread::sleep(Duration::from_millis(20));
            self.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::Outcome;

    const ARM: ComponentId = ComponentId::new(126, 1, 10);

    #[test]
    fn publisher_coalesces_samples_and_keeps_discrete_updates_when_full() {
        let (tx, rx) = bounded(2);
        let mut p = Publisher::new(tx, 3);
        for i in 0..10 {
            p.publish(Update::arm(
                ARM,
                ArmFact::JointPositions {
                    t: f64::from(i),
                    values: vec![f64::from(i)],
                },
            ));
        }
        for i in 0..5 {
            p.publish(Update::net(Remark::Error {
                t: f64::from(i),
                message: format!("e{i}"),
            }));
        }
        // Two fit; eight positions went to the coalescing slot (seven replaced).
        assert_eq!(p.coalesced, 7);
        assert_eq!(p.dropped, 2, "backlog of 3 keeps the newest 3 of 5 errors");
        let got: Vec<Update> = rx.try_iter().collect();
        assert_eq!(got.len(), 2);
        p.flush();
        let rest: Vec<Update> = rx.try_iter().collect();
        assert_eq!(rest.len(), 2);
        p.flush();
        p.flush();
        let mut all: Vec<Update> = rx.try_iter().collect();
        p.flush();
        all.extend(rx.try_iter());
        // The newest position is delivered last, never lost.
        assert!(
            all.iter()
                .any(|u| matches!(u, Update::Arm { fact: ArmFact::JointPositions { t, .. }, .. } if *t == 9.0))
        );
        assert!(!p.has_backlog());
    }

    #[test]
    fn emergency_stops_are_accepted_and_taken_first_with_the_queue_full() {
        let (tx, rx) = CommandSender::new();
        for i in 0..COMMAND_QUEUE {
            let pose_id = u8::try_from(i % 200).unwrap();
            tx.send(Command::GoToPreset { pose_id }).unwrap();
        }
        assert!(matches!(
            tx.send(Command::Resume),
            Err(TrySendError::Full(Command::Resume))
        ));
        tx.send(Command::SetEmergencyAll).unwrap();
        tx.send(Command::SetEmergency).unwrap();
        // A second press of a waiting stop is the same stop.
        tx.send(Command::SetEmergency).unwrap();
        assert!(rx.wake.try_recv().is_ok(), "the network thread is woken");
        let taken: Vec<Command> = rx.try_iter().collect();
        assert_eq!(
            taken[..2],
            [Command::SetEmergency, Command::SetEmergencyAll]
        );
        assert_eq!(taken.len(), 2 + COMMAND_QUEUE);
        assert!(matches!(taken[2], Command::GoToPreset { pose_id: 0 }));
    }

    #[test]
    fn an_arms_own_stop_overtakes_a_queued_select_and_keeps_its_arm() {
        let (tx, rx) = CommandSender::new();
        let (a, b) = (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11));
        tx.send(Command::Select(a)).unwrap();
        tx.send(Command::SetEmergencyOf(b)).unwrap();
        tx.send(Command::SetEmergencyOf(a)).unwrap();
        // Pressed again before it was taken: one stop.
        tx.send(Command::SetEmergencyOf(b)).unwrap();
        let taken: Vec<Command> = rx.try_iter().collect();
        assert_eq!(
            taken,
            [
                Command::SetEmergencyOf(b),
                Command::SetEmergencyOf(a),
                Command::Select(a)
            ]
        );
        // More arms' stops than the lane keeps: the rest stop more, never less.
        for i in 0..=STOPS_OF_ARMS {
            let node = u8::try_from(i % 250).unwrap();
            let arm = ComponentId::new(u16::try_from(i / 250 + 1).unwrap(), node, 1);
            tx.send(Command::SetEmergencyOf(arm)).unwrap();
        }
        let taken: Vec<Command> = rx.try_iter().collect();
        assert_eq!(taken[0], Command::SetEmergency);
        assert_eq!(taken.len(), STOPS_OF_ARMS + 2);
        assert_eq!(taken[STOPS_OF_ARMS + 1], Command::SetEmergencyAll);
    }

    #[test]
    fn a_clear_sent_before_a_stop_that_overtook_it_is_refused() {
        let (tx, rx) = CommandSender::new();
        tx.send(Command::ClearEmergency).unwrap();
        tx.send(Command::SetEmergency).unwrap();
        tx.send(Command::ClearEmergency).unwrap();
        let stop = rx.next().unwrap();
        assert_eq!((stop.cmd, stop.overtaken), (Command::SetEmergency, false));
        let early = rx.next().unwrap();
        assert_eq!(early.cmd, Command::ClearEmergency);
        assert!(early.overtaken);
        let late = rx.next().unwrap();
        assert_eq!((late.cmd, late.overtaken), (Command::ClearEmergency, false));

        let mut client = Client::new(ClientConfig::default());
        let mut out = Output::default();
        hand_over(&mut client, 1.0, early, &mut out);
        assert!(out.datagrams.is_empty(), "nothing sent for it");
        assert!(matches!(
            out.updates[..],
            [Update::Net(NetFact::Remark(Remark::CommandOutcome {
                command: CommandKind::ClearEmergency,
                outcome: Outcome::Rejected(_),
                ..
            }))]
        ));
    }
}
