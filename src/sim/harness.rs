//! The in-memory network: the real OCU [`Client`] and simulated [`Component`]s exchanging
//! datagrams under a fake clock, no sockets. The screenshot command, the test suites and the
//! benchmarks all run their sessions on it, so "a session" means one thing everywhere.
//!
//! One [`SimNet::step`], at the current time `now`, in this order:
//! 1. the client's timers ([`SimNet::tick_client`]);
//! 2. everything the client has sent since the last delivery goes to the peers
//!    ([`SimNet::deliver_to_sims`]; replies the client made while handling datagrams in the
//!    previous step go out here, one step later);
//! 3. the peers' timers ([`SimNet::tick_sims`]);
//! 4. what the peers sent that is due reaches the client ([`SimNet::deliver_to_client`]);
//! 5. the clock advances by [`SimNet::step_size`].
//!
//! The phases are public so a suite can compose its own step (`tests/net_client.rs` also
//! delivers the client's replies at once). Each direction has a [`FaultInjector`]: one on the
//! client's send side, one on each peer's. A peer can be silenced (it still runs, nothing
//! reaches or leaves it), replaced (assign [`Peer::sim`]), or wrapped by an [`Intercept`] that
//! sees each message from the client first. Hooks drop or delay single datagrams to the
//! client, and hand-made datagrams can be injected either way. A wire tap (a closure passed to
//! the delivering phases) sees every datagram the client sends or receives, as the network
//! thread offers them to a recorder.
//!
//! Time is kept in integer nanoseconds; `now` is `ns / 1e9` s.

use std::net::SocketAddr;
use std::time::Duration;

use crate::jaus::judp::{self, AckNak, DataFlags, Datagram, Header};
use crate::jaus::{JausId, Message};
use crate::model::update::{ArmFact, ComponentId, Update};
use crate::net::client::{Client, ClientConfig, Output};
use crate::net::fault::{FaultInjector, Faults};
use crate::net::socket::Outgoing;
use crate::net::tap::Direction;
use crate::sim::arm_file::ArmFile;
use crate::sim::component::{Component, SimConfig};

/// What a peer's [`Intercept`] does with one message from the client.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Hand it to the simulated component.
    Pass,
    /// Lose it.
    Drop,
    /// Answer it with this message instead of the component.
    Reply(Message),
}

/// Sees each message from the client (at `now`) before the peer's component does.
pub type Intercept = Box<dyn FnMut(f64, &Message) -> Verdict>;
/// Says, at `now`, whether a datagram to the client is lost.
pub type DropHook = Box<dyn FnMut(f64, &[u8]) -> bool>;
/// Says, at `now`, how much longer a datagram to the client takes.
pub type DelayHook = Box<dyn FnMut(f64, &[u8]) -> Duration>;

/// One simulated component on the in-memory network.
pub struct Peer {
    /// Its address.
    pub addr: SocketAddr,
    /// The component (replace it to restart the process).
    pub sim: Component,
    /// Nothing reaches it or leaves it (its timers still run).
    pub silenced: bool,
    /// Sees every message from the client before the component does.
    pub intercept: Option<Intercept>,
    /// Sequence numbers of the intercept's replies (far from the component's own).
    reply_seq: u16,
    /// Its send side.
    link: FaultInjector<Vec<Outgoing>>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("addr", &self.addr)
            .field("id", &self.sim.id())
            .field("silenced", &self.silenced)
            .finish_non_exhaustive()
    }
}

/// The wire tap: sees every datagram the client sends or receives.
pub type WireTap<'t> = &'t mut dyn FnMut(&Passage<'_>);

/// One datagram the client sends or receives, as the wire tap sees it.
#[derive(Debug, Clone, Copy)]
pub struct Passage<'a> {
    /// When, ns since the session started.
    pub t_ns: u64,
    /// When, s since the session started (the client's `now`).
    pub t: f64,
    /// Seen from the OCU: `Tx` sent by the client, `Rx` received by it.
    pub direction: Direction,
    /// The other end: where it was sent, or where it came from.
    pub peer: SocketAddr,
    /// The datagram.
    pub bytes: &'a [u8],
}

/// The client and its simulated peers, exchanging datagrams in memory under a fake clock.
pub struct SimNet {
    ns: u64,
    /// The clock's step.
    pub step_size: Duration,
    /// The OCU's client.
    pub client: Client,
    client_addr: SocketAddr,
    out: Output,
    /// The client's send side.
    client_link: FaultInjector<Vec<Outgoing>>,
    /// The simulated components, in the order they were added.
    pub peers: Vec<Peer>,
    faults_to_client: Faults,
    seed: u64,
    /// Datagrams to the client: (due ns, order sent, from, bytes).
    in_flight: Vec<(u64, u64, SocketAddr, Vec<u8>)>,
    order: u64,
    /// Drops datagrams from peers to the client for which it returns true.
    pub drop_to_client: Option<DropHook>,
    /// Extra delay of each datagram from peers to the client.
    pub delay_to_client: Option<DelayHook>,
    /// Every update the client published, in order (per-arm facts as [`Update::Arm`]): what
    /// the network thread sends the UI, and what a test asserts on ([`SimNet::facts_of`] for
    /// one arm's facts).
    pub updates: Vec<Update>,
    /// Datagrams peers sent to addresses other than the client's.
    pub stray: Vec<Outgoing>,
}

impl std::fmt::Debug for SimNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimNet")
            .field("now", &self.now())
            .field("client_addr", &self.client_addr)
            .field("peers", &self.peers)
            .finish_non_exhaustive()
    }
}

/// The first block of `bytes` as a message, when it is a whole one.
fn first_message(bytes: &[u8]) -> Option<(Header, Message)> {
    let dg = Datagram::new_checked(bytes).ok()?;
    let b = dg.blocks().next()?.ok()?;
    let h = Header::parse(&b.block);
    if h.data_flags != DataFlags::Single || h.ack_nak != AckNak::None {
        return None;
    }
    Some((h, Message::parse(b.block.payload()).ok()?))
}

impl SimNet {
    /// A client set up by `cfg` at `client_addr`, no peers yet, the clock at 0 stepping by
    /// `step_size`. Fault randomness derives from `seed`.
    pub fn new(cfg: ClientConfig, client_addr: SocketAddr, step_size: Duration, seed: u64) -> Self {
        Self {
            ns: 0,
            step_size,
            client: Client::new(cfg).with_local_addr(client_addr),
            client_addr,
            out: Output::default(),
            client_link: FaultInjector::new(Vec::new(), Faults::default(), seed),
            peers: Vec::new(),
            faults_to_client: Faults::default(),
            seed,
            in_flight: Vec::new(),
            order: 0,
            drop_to_client: None,
            delay_to_client: None,
            updates: Vec::new(),
            stray: Vec::new(),
        }
    }

    /// Adds `sim` at `addr`; returns its index in [`SimNet::peers`].
    pub fn add_peer(&mut self, addr: SocketAddr, sim: Component) -> usize {
        let seed = self.seed.wrapping_add(self.peers.len() as u64 + 1);
        self.peers.push(Peer {
            addr,
            sim,
            silenced: false,
            intercept: None,
            reply_seq: 40_000,
            link: FaultInjector::new(Vec::new(), self.faults_to_client, seed),
        });
        self.peers.len() - 1
    }

    /// Faults on what every peer (present and future) sends to the client.
    pub fn set_faults_to_client(&mut self, faults: Faults) {
        self.faults_to_client = faults;
        for p in &mut self.peers {
            p.link.set_faults(faults);
        }
    }

    /// Faults on what peer `i` sends to the client (one peer slower or lossier than the
    /// others: which answers first).
    pub fn set_faults_of(&mut self, i: usize, faults: Faults) {
        if let Some(p) = self.peers.get_mut(i) {
            p.link.set_faults(faults);
        }
    }

    /// Faults on what the client sends.
    pub fn set_faults_from_client(&mut self, faults: Faults) {
        self.client_link.set_faults(faults);
    }

    /// The client's address.
    pub fn client_addr(&self) -> SocketAddr {
        self.client_addr
    }

    /// The clock, ns since the start.
    pub fn now_ns(&self) -> u64 {
        self.ns
    }

    /// The clock, s since the start.
    pub fn now(&self) -> f64 {
        self.ns as f64 / 1e9
    }

    fn collect(&mut self) {
        self.updates.append(&mut self.out.updates);
    }

    /// The updates from the `from`-th on, as the client published them (per-arm facts in
    /// [`Update::Arm`]): what the network thread sends the UI.
    pub fn published(&self, from: usize) -> Vec<Update> {
        self.updates[from.min(self.updates.len())..].to_vec()
    }

    /// The facts about arm `arm` from the `from`-th update on.
    pub fn facts_of(&self, arm: ComponentId, from: usize) -> impl Iterator<Item = &ArmFact> {
        self.updates[from.min(self.updates.len())..]
            .iter()
            .filter_map(move |u| match u {
                Update::Arm { arm: a, fact } if *a == arm => Some(fact),
                Update::Arm { .. } | Update::Net(_) => None,
            })
    }

    /// Runs the client's timers now.
    pub fn tick_client(&mut self) {
        let now = self.now();
        self.client.tick(now, &mut self.out);
        self.collect();
    }

    /// Gives the client a command now (what it sends goes out at the next delivery).
    pub fn command(&mut self, cmd: crate::model::command::Command) {
        let now = self.now();
        self.client.handle_command(now, cmd, &mut self.out);
        self.collect();
    }

    /// Hands the client a datagram from `from` now, off the wire (the tap does not see it).
    pub fn inject_to_client(&mut self, from: SocketAddr, bytes: &[u8]) {
        let now = self.now();
        self.client.handle_datagram(now, from, bytes, &mut self.out);
        self.collect();
    }

    /// Hands peer `i` a datagram from `from` now (unless it is silenced; through its
    /// intercept), as if it came over the network.
    pub fn inject_to_peer(&mut self, i: usize, from: SocketAddr, bytes: &[u8]) {
        self.hand_to_peer(i, from, bytes);
    }

    /// Sends what the client has sent since the last delivery: each datagram is shown to
    /// `tap`, goes through the client's faults, and what is due reaches its peer now.
    pub fn deliver_to_sims(&mut self, tap: WireTap<'_>) {
        let now = self.now();
        for (to, bytes) in std::mem::take(&mut self.out.datagrams) {
            tap(&Passage {
                t_ns: self.ns,
                t: now,
                direction: Direction::Tx,
                peer: to,
                bytes: &bytes,
            });
            self.client_link.send(now, to, bytes);
        }
        self.client_link.poll(now);
        let from = self.client_addr;
        for o in std::mem::take(self.client_link.get_mut()) {
            if let Some(i) = self.peers.iter().position(|p| p.addr == o.to) {
                self.hand_to_peer(i, from, &o.bytes);
            }
        }
    }

    fn hand_to_peer(&mut self, i: usize, from: SocketAddr, bytes: &[u8]) {
        let now = self.now();
        let peer = &mut self.peers[i];
        if peer.silenced {
            return;
        }
        let mut buf = Vec::new();
        if let Some(f) = &mut peer.intercept
            && let Some((h, m)) = first_message(bytes)
        {
            match f(now, &m) {
                Verdict::Pass => {}
                Verdict::Drop => return,
                Verdict::Reply(r) => {
                    peer.reply_seq = peer.reply_seq.wrapping_add(1);
                    let header = Header::new(h.source, peer.sim.id(), peer.reply_seq);
                    if let Some(bytes) = r.emit().ok().and_then(|b| judp::single(&header, &b).ok())
                    {
                        buf.push(Outgoing { to: from, bytes });
                    }
                    self.put_on_wire(i, buf);
                    return;
                }
            }
        }
        peer.sim.handle_datagram(now, from, bytes, &mut buf);
        self.put_on_wire(i, buf);
    }

    /// What peer `i` sent: to the client through its faults, elsewhere to [`SimNet::stray`].
    fn put_on_wire(&mut self, i: usize, outs: Vec<Outgoing>) {
        if self.peers[i].silenced {
            return;
        }
        let now = self.now();
        for o in outs {
            if o.to != self.client_addr {
                self.stray.push(o);
                continue;
            }
            self.peers[i].link.send(now, o.to, o.bytes);
        }
        self.take_released(i);
    }

    /// Moves what peer `i`'s faults released onto the wire to the client, through the hooks.
    fn take_released(&mut self, i: usize) {
        let now = self.now();
        let from = self.peers[i].addr;
        for o in std::mem::take(self.peers[i].link.get_mut()) {
            if let Some(f) = &mut self.drop_to_client
                && f(now, &o.bytes)
            {
                continue;
            }
            let extra = self
                .delay_to_client
                .as_mut()
                .map_or(Duration::ZERO, |f| f(now, &o.bytes));
            let due = self.ns + u64::try_from(extra.as_nanos()).unwrap_or(u64::MAX / 2);
            self.in_flight.push((due, self.order, from, o.bytes));
            self.order += 1;
        }
    }

    /// Runs every peer's timers now (a silenced peer's output is lost).
    pub fn tick_sims(&mut self) {
        let now = self.now();
        for i in 0..self.peers.len() {
            let mut buf = Vec::new();
            self.peers[i].sim.tick(now, &mut buf);
            self.put_on_wire(i, buf);
        }
    }

    /// Hands the client every datagram due by now, in the order they became due (then were
    /// sent), each shown to `tap` first.
    pub fn deliver_to_client(&mut self, tap: WireTap<'_>) {
        let now = self.now();
        for i in 0..self.peers.len() {
            self.peers[i].link.poll(now);
            self.take_released(i);
        }
        let ns = self.ns;
        let mut due: Vec<_> = Vec::new();
        self.in_flight.retain_mut(|f| {
            if f.0 <= ns {
                due.push((f.0, f.1, f.2, std::mem::take(&mut f.3)));
                false
            } else {
                true
            }
        });
        due.sort_by_key(|f| (f.0, f.1));
        for (_, _, from, bytes) in due {
            tap(&Passage {
                t_ns: ns,
                t: now,
                direction: Direction::Rx,
                peer: from,
                bytes: &bytes,
            });
            self.client
                .handle_datagram(now, from, &bytes, &mut self.out);
        }
        self.collect();
    }

    /// Advances the clock one step.
    pub fn advance(&mut self) {
        self.ns += u64::try_from(self.step_size.as_nanos()).unwrap_or(u64::MAX / 2);
    }

    /// One step (see the module doc), the wire shown to `tap`.
    pub fn step_with(&mut self, tap: WireTap<'_>) {
        self.tick_client();
        self.deliver_to_sims(tap);
        self.tick_sims();
        self.deliver_to_client(tap);
        self.advance();
    }

    /// One step.
    pub fn step(&mut self) {
        self.step_with(&mut |_| {});
    }

    /// Steps for `secs` (rounded to whole nanoseconds), the wire shown to `tap`.
    pub fn run_with(&mut self, secs: f64, tap: WireTap<'_>) {
        let end = self.ns + (secs.max(0.0) * 1e9).round() as u64;
        while self.ns < end {
            self.step_with(tap);
        }
    }

    /// Another client at `from`, JAUS ID `id`, asks peer `i` for control with `authority` (a
    /// second OCU on the network), as a datagram numbered `seq`; what the peer answers it
    /// goes to [`SimNet::stray`].
    pub fn request_control_from(
        &mut self,
        i: usize,
        from: SocketAddr,
        id: crate::model::update::ComponentId,
        authority: u8,
        seq: u16,
    ) {
        let m = Message::RequestControl(crate::jaus::core::RequestControl {
            authority_code: authority,
        });
        let bytes = self.datagram_to_peer(i, id.into(), seq, &m);
        self.inject_to_peer(i, from, &bytes);
    }

    /// A hand-made datagram carrying `m` from `src` to peer `i`'s component, numbered `seq`.
    pub fn datagram_to_peer(&self, i: usize, src: JausId, seq: u16, m: &Message) -> Vec<u8> {
        let header = Header::new(self.peers[i].sim.id(), src, seq);
        m.emit()
            .ok()
            .and_then(|b| judp::single(&header, &b).ok())
            .unwrap_or_default()
    }
}

/// Fake-clock step of the simulated session, s (2 ms, the `Duration` below).
const SESSION_STEP_S: f64 = 0.002;

/// The updates of `seconds` of an in-memory session between the real client and a simulated
/// `arm` (the demo's idle tour on, seed 1), in the order the client produced them.
pub fn simulated_updates(arm: ArmFile, seconds: f64) -> Vec<Update> {
    simulated_session(arm, seconds, |_, _, _| {})
}

/// [`simulated_updates`], also handing every datagram to `wire` as it crosses between the
/// client and the simulator: (time s, direction seen from the OCU, bytes) — what the
/// network thread offers a recorder.
pub fn simulated_session(
    arm: ArmFile,
    seconds: f64,
    mut wire: impl FnMut(f64, Direction, &[u8]),
) -> Vec<Update> {
    let sim_addr = SocketAddr::from(([127, 0, 0, 1], judp::PORT));
    let ocu_addr = SocketAddr::from(([127, 0, 0, 1], 5000));
    let mut net = SimNet::new(
        ClientConfig {
            connect: vec![sim_addr],
            multicast: None,
            ..ClientConfig::default()
        },
        ocu_addr,
        Duration::from_millis(2),
        1,
    );
    net.add_peer(
        sim_addr,
        Component::new(
            arm,
            SimConfig {
                tour: true,
                seed: 1,
                ..SimConfig::default()
            },
        ),
    );
    let steps = (seconds.max(0.0) / SESSION_STEP_S).ceil() as usize;
    for _ in 0..=steps {
        net.step_with(&mut |p| wire(p.t, p.direction, p.bytes));
    }
    net.published(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::LinkState;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn net() -> SimNet {
        let mut net = SimNet::new(
            ClientConfig {
                connect: vec![addr(3794)],
                multicast: None,
                ..ClientConfig::default()
            },
            addr(5000),
            Duration::from_millis(1),
            7,
        );
        net.add_peer(
            addr(3794),
            Component::new(ArmFile::demo(), SimConfig::default()),
        );
        net
    }

    fn live(net: &SimNet) -> bool {
        net.updates.iter().any(|u| {
            matches!(
                u,
                Update::Arm {
                    fact: ArmFact::Link {
                        state: LinkState::Live,
                        ..
                    },
                    ..
                }
            )
        })
    }

    #[test]
    fn the_client_goes_live_and_the_tap_sees_both_directions() {
        let mut net = net();
        let (mut tx, mut rx) = (0, 0);
        net.run_with(1.0, &mut |p| match p.direction {
            Direction::Tx => tx += 1,
            Direction::Rx => rx += 1,
        });
        assert!(live(&net));
        assert!(tx > 10 && rx > 100, "{tx} sent, {rx} received");
        assert!((net.now() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_silenced_peer_is_never_heard_and_a_lossy_link_still_connects() {
        let mut net = net();
        net.peers[0].silenced = true;
        net.run_with(1.0, &mut |_| {});
        assert!(!live(&net));
        let mut net = self::net();
        net.set_faults_to_client(Faults {
            loss: 0.3,
            ..Faults::default()
        });
        net.run_with(3.0, &mut |_| {});
        assert!(live(&net));
    }

    #[test]
    fn an_intercept_answers_for_the_component_and_delays_hold_datagrams() {
        let mut net = net();
        // Discovery asks identification and (while nothing is selected) services.
        net.peers[0].intercept = Some(Box::new(|_, m| match m {
            Message::QueryIdentification(_) | Message::QueryServices(_) => Verdict::Drop,
            _ => Verdict::Pass,
        }));
        net.run_with(0.5, &mut |_| {});
        assert!(!live(&net), "never discovered");
        let mut net = self::net();
        net.delay_to_client = Some(Box::new(|_, _| Duration::from_millis(30)));
        let mut first_rx = None;
        net.run_with(0.1, &mut |p| {
            if p.direction == Direction::Rx && first_rx.is_none() {
                first_rx = Some(p.t_ns);
            }
        });
        assert_eq!(first_rx, Some(30_000_000));
    }
}
