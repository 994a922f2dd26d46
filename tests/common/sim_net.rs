//! The real client and simulated manipulators on the in-memory network
//! (`jaus_ocu::sim::harness::SimNet`) under a fake clock: the addresses and IDs the suites give
//! them, a session with one simulated arm ([`sim_net`]), and the harness of the client's rule
//! suites (`net_client`, `net_jog`): [`Net`], the network and what a suite keeps of its wire
//! ([`Suite`]). A suite adds its own helpers in an `impl Net<ItsSuite>` block.

#![allow(
    dead_code,
    reason = "each test file uses its own part of the shared support"
)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use jaus_ocu::jaus::judp::{AckNak, DataFlags, Datagram, Header};
use jaus_ocu::jaus::{JausId, Message};
use jaus_ocu::model::command::Command;
use jaus_ocu::model::update::{ArmFact, ControlState, LinkState, Update};
use jaus_ocu::net::client::{ClientConfig, DEFAULT_OCU_ID};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{self, Component, SimConfig};
use jaus_ocu::sim::harness::{Passage, SimNet, WireTap};

/// `port` on the loopback address.
pub const fn local(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

/// Where the client lives.
pub const OCU: SocketAddr = local(5000);
/// Where the (first) simulated manipulator lives (the JUDP port).
pub const SIM: SocketAddr = local(3794);
/// A second manipulator's address.
pub const SIM_B: SocketAddr = local(3795);
/// Somebody else on the network (another OCU, an attacker).
pub const OTHER: SocketAddr = local(6000);

/// The client's JAUS ID.
pub const OCU_ID: JausId = DEFAULT_OCU_ID;
/// The (first) simulated manipulator's JAUS ID.
pub const SIM_ID: JausId = component::DEFAULT_ID;
/// The second manipulator's JAUS ID.
pub const SIM_B_ID: JausId = JausId::new(126, 1, 11);
/// The JAUS ID of [`OTHER`].
pub const OTHER_ID: JausId = JausId::new(150, 1, 1);

/// A client that finds the manipulator at [`SIM`] (no multicast).
pub fn client_cfg() -> ClientConfig {
    ClientConfig {
        connect: vec![SIM],
        multicast: None,
        ..ClientConfig::default()
    }
}

/// A simulator that lets control lapse after 2 s without a renewal.
pub fn sim_cfg() -> SimConfig {
    SimConfig {
        control_timeout_s: 2,
        ..SimConfig::default()
    }
}

/// The messages of a datagram, one per block (`None` for ACKs, fragments and undecodable ones).
pub fn decode(bytes: &[u8]) -> Vec<(Header, Option<Message>)> {
    let Ok(dg) = Datagram::new_checked(bytes) else {
        return Vec::new();
    };
    dg.blocks()
        .map_while(Result::ok)
        .map(|b| {
            let h = Header::parse(&b.block);
            let m = (h.data_flags == DataFlags::Single && h.ack_nak == AckNak::None)
                .then(|| Message::parse(b.block.payload()).ok())
                .flatten();
            (h, m)
        })
        .collect()
}

// -------------------------------------------------------------------------------------------
// A session with one simulated arm.

/// The fake-clock step of [`sim_net`].
const SESSION_STEP: Duration = Duration::from_millis(2);
/// [`SESSION_STEP`], s.
const SESSION_STEP_S: f64 = 0.002;

/// The real client (at [`OCU`], 2 ms steps, seeded with `seed`) and the simulator running `arm`
/// at [`SIM`], in memory.
pub fn sim_net(arm: ArmFile, seed: u64) -> SimNet {
    let mut net = SimNet::new(client_cfg(), OCU, SESSION_STEP, seed);
    net.add_peer(SIM, Component::new(arm, SimConfig::default()));
    net
}

/// The updates of `net` (a [`sim_net`], or one built like it with 2 ms steps) after `seconds`
/// of its time.
pub fn updates_after(mut net: SimNet, seconds: f64) -> Vec<Update> {
    for _ in 0..(seconds / SESSION_STEP_S) as usize {
        net.step();
    }
    net.updates
}

// -------------------------------------------------------------------------------------------
// The harness of the client's rule suites.

/// What a suite keeps of the wire, and what it does around each clock step of [`Net`].
pub trait Suite: Sized {
    /// Keeps what it wants of `p`, a datagram crossing the wire; `peers` holds the peers'
    /// addresses, by index.
    fn log(&mut self, p: &Passage<'_>, peers: &[SocketAddr]);

    /// Runs first in each step, before the client's timers (the inputs a suite holds).
    fn before_step(_net: &mut Net<Self>) {}

    /// Runs last in each step, before the clock moves on (another OCU's turn).
    fn after_step(_net: &mut Net<Self>) {}
}

/// The client and its peers on the in-memory network ([`SimNet`], reached through `Deref`),
/// plus the suite's own log and state.
pub struct Net<S> {
    /// The in-memory network.
    pub harness: SimNet,
    /// What the suite keeps.
    pub suite: S,
}

impl<S> std::ops::Deref for Net<S> {
    type Target = SimNet;

    fn deref(&self) -> &SimNet {
        &self.harness
    }
}

impl<S> std::ops::DerefMut for Net<S> {
    fn deref_mut(&mut self) -> &mut SimNet {
        &mut self.harness
    }
}

impl<S: Suite> Net<S> {
    /// A network of the client configured by `cfg` (at [`OCU`]) and no peers yet, with clock
    /// steps of `step`, seeded with `seed`.
    pub fn start(cfg: ClientConfig, step: Duration, seed: u64, suite: S) -> Self {
        Self {
            harness: SimNet::new(cfg, OCU, step, seed),
            suite,
        }
    }

    /// Runs one phase of the in-memory network with the suite's log as the tap.
    pub fn phase(&mut self, phase: fn(&mut SimNet, WireTap<'_>)) {
        let Net {
            harness: net,
            suite,
        } = self;
        let peers: Vec<SocketAddr> = net.peers.iter().map(|p| p.addr).collect();
        phase(net, &mut |p| suite.log(p, &peers));
    }

    /// Routes the client's datagrams to the peers now.
    pub fn flush(&mut self) {
        self.phase(SimNet::deliver_to_sims);
    }

    /// One clock step: the suite's turn, the client's timers, its datagrams to the peers, the
    /// peers' timers, what is due to arrive at the client, the client's answers to that
    /// straight to the peers, and the suite's turn after.
    pub fn step(&mut self) {
        S::before_step(self);
        self.harness.tick_client();
        self.flush();
        self.harness.tick_sims();
        self.phase(SimNet::deliver_to_client);
        self.flush();
        S::after_step(self);
        self.harness.advance();
    }

    /// Steps for `secs`.
    pub fn run(&mut self, secs: f64) {
        let end = self.now_ns() + (secs * 1e9).round() as u64;
        while self.now_ns() < end {
            self.step();
        }
    }

    /// Steps until `done` or `secs` have passed; whether `done` became true.
    pub fn run_until(&mut self, secs: f64, mut done: impl FnMut(&Self) -> bool) -> bool {
        let end = self.now_ns() + (secs * 1e9).round() as u64;
        while self.now_ns() < end {
            self.step();
            if done(self) {
                return true;
            }
        }
        false
    }

    /// Hands `cmd` to the client and routes what it sends now.
    pub fn command(&mut self, cmd: Command) {
        self.harness.command(cmd);
        self.flush();
    }

    /// Where the updates stand now (for "since" queries).
    pub fn mark(&self) -> usize {
        self.updates.len()
    }

    /// The link to `arm` as the client last said it.
    pub fn link_of(&self, arm: JausId) -> Option<LinkState> {
        self.facts_of(arm.into(), 0)
            .filter_map(|f| match f {
                ArmFact::Link { state, .. } => Some(*state),
                _ => None,
            })
            .last()
    }

    /// Our control of `arm` as the client last said it.
    pub fn control_of(&self, arm: JausId) -> Option<ControlState> {
        self.facts_of(arm.into(), 0)
            .filter_map(|f| match f {
                ArmFact::Control { state, .. } => Some(*state),
                _ => None,
            })
            .last()
    }

    /// Whether the links to every one of `arms` are live.
    pub fn all_live(&self, arms: &[JausId]) -> bool {
        arms.iter()
            .all(|a| self.link_of(*a) == Some(LinkState::Live))
    }

    /// Moves the clock `secs` on (rounded to whole nanoseconds by `round`: `f64::ceil` to land
    /// on a deadline, not before it).
    fn advance_by(&mut self, secs: f64, round: fn(f64) -> f64) {
        let step = self.harness.step_size;
        self.harness.step_size = Duration::from_nanos(round(secs * 1e9) as u64);
        self.harness.advance();
        self.harness.step_size = step;
    }

    /// Runs the client the way the network thread does: woken only at its own deadlines (the
    /// peers run at those times too), for `secs`; the suite takes no turn. Returns the number
    /// of wake-ups; a deadline left in the past makes it spin, which the cap turns into a
    /// failing count.
    pub fn run_by_deadlines(&mut self, secs: f64) -> usize {
        let end = self.now() + secs;
        let mut wakeups = 0;
        while wakeups < 100_000 {
            let target = self.harness.client.next_deadline().max(self.now());
            if target > end {
                break;
            }
            self.advance_by(target - self.now(), f64::ceil);
            self.harness.tick_client();
            self.flush();
            self.harness.tick_sims();
            self.phase(SimNet::deliver_to_client);
            self.flush();
            wakeups += 1;
        }
        // The clock ends at `end` whatever the last deadline.
        self.advance_by((end - self.now()).max(0.0), f64::round);
        wakeups
    }
}
