//! A passive, sans-I/O decoder of JUDP traffic: wire records in (either direction, any
//! source and destination), [`Update`]s out, through the same codec and the same report →
//! update mapping as the live client ([`crate::net::reports`]). Replay and the recorder's
//! decoded channels use it.
//!
//! It follows every manipulator it sees, as the live client does: each arm has its own state
//! (decode context, event streams, presets, control as seen on the wire, gap detection), and
//! every fact about one arm comes out as an [`Update::Arm`] naming it, so a replay shows each
//! arm in the
//! [`Vehicle`](crate::model::vehicle::Vehicle) and nothing of one arm under another.
//!
//! Rules, in the order a datagram meets them:
//! - Framing: every block of every datagram, whatever its destination (a promiscuous
//!   [`Endpoint`], the live client's intake); multi-packet messages reassembled (bounded, as
//!   live). Nothing panics on any bytes; what does not frame or decode is counted as malformed.
//! - Duplicates: a block with the same source, destination and sequence number as one seen
//!   within 2 s is dropped, as the live client drops it (the destination is part of the key
//!   because an OCU numbers its datagrams per peer, and the observer sees both directions).
//!   At most 1024 (source, destination) pairs are remembered, the least recently heard
//!   forgotten first.
//! - Decoding: each source's messages decode with the context of that source's own
//!   specification (joint kinds settle the unit codes of dialects, §9 C1).
//! - Components: `ReportIdentification` and `ReportServices` give [`NetFact::Component`], with the
//!   address of the sender (received datagrams only: a sent one names the receiver); the
//!   records of one component within a report merged and a report's list replacing the last
//!   one's, as live ([`reports::listed_services`], [`reports::take_services`]). Facts of the
//!   network: never wrapped.
//! - Arms: a component is followed as a manipulator from the first of
//!   - its `ReportManipulatorSpecifications` (an OCU asks every arm it follows for it);
//!   - a command sent to it (a capture started after the specification was exchanged still
//!     shows the arm), or an answer it sends: control, status, events, manipulator reports —
//!     unless its `ReportServices` listed no manipulator service, or it has itself sent a
//!     command (an OCU, not an arm).
//!
//!   At most [`MAX_ARMS`] are followed. A further manipulator is not followed: its messages
//!   are counted (framing, names, peers) but not applied, it is counted in
//!   [`ObserverStats::arms_not_followed`], and one [`Remark::Error`] says so the first time.
//!   The bound keeps a capture full of manipulators (or a hostile one) from growing the
//!   per-arm state without end.
//! - Focus: [`NetFact::Selected`] names the first arm followed (the focus a replay opens on);
//!   it moves once to the first arm whose specification is seen if the first was found by
//!   its traffic only (the arm an OCU asked the specification of is the one it worked with).
//! - Each arm: specification, tool offset, presets as the live client takes them; its reports,
//!   direct or inside Events (to anyone), through [`reports::report_update`]. Events older
//!   than the last of their subscription are dropped as live. Reports from components that
//!   are not followed are not applied. Two OCUs subscribed to the same arm in one capture
//!   each get their own Events, so such a capture shows each sample twice.
//! - Control of each arm, as seen on the wire: `RequestControl` from an OCU → `Requested` (a
//!   re-request by the holder is a keep-alive, not news); `ConfirmControl` accepted → `Held`
//!   with the authority that OCU asked for, and so is a `ReportControl` naming an OCU that
//!   asked; refused, or `RejectControl` to the holder → `Released`. Each change also gets a [`Remark::Mark`] that says which OCU.
//! - Commands to an arm that are not facts get marks about that arm:
//!   SetEmergency/ClearEmergency (emergency), Resume/Standby/Shutdown (status),
//!   RequestControl/ReleaseControl (control), `SetCurrentPose` (transition).
//!   `ReportTransitionCompleted` → [`Remark::CommandOutcome`] for `GoToPreset`.
//! - Gaps, per arm: when an arm is silent for longer than its gap threshold
//!   (`max(GAP_S, GAP_MEDIANS × the median of its last 31 intervals)`, so a slow talker is not
//!   a string of gaps), `Link{Lost}` at silence start + threshold as soon as any later record
//!   shows the time has passed; when it is heard again a Gap mark at the same time saying how
//!   long the silence was, and `Link{Live}`. [`Observer::finish`] closes trailing gaps.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

// The observer runs for every datagram of an hour-long file: foldhash (seeded per map, so a
// crafted capture cannot aim at one hash function) instead of the standard SipHash, which took
// a fifth of the replay loader's time (issue 14).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::jaus::core::{
    ConfirmControlCode, EventRef, RejectControlCode, ReportControl, short_emergency,
};
use crate::jaus::iop::TransitionStatus;
use crate::jaus::judp::Header;
use crate::jaus::message::message_name;
use crate::jaus::{DecodeContext, JausId, Message};
use crate::model::command::CommandKind;
use crate::model::update::{
    ArmFact, ComponentId, ComponentInfo, ControlState, Controller, LinkState, MAX_ARMS, MarkKind,
    NetFact, Outcome, PresetInfo, Remark, Tolerated, Update,
};
use crate::net::endpoint::{Endpoint, InboundKind};
use crate::net::reports;
use crate::net::tap::{Direction, WireRecord};

/// Shortest silence of an arm that counts as a gap, s.
pub const GAP_S: f64 = 2.0;
/// A silence longer than this many median intervals of the arm counts as a gap.
pub const GAP_MEDIANS: f64 = 10.0;
/// Intervals of each arm kept for the median.
const INTERVALS: usize = 31;
/// Most (source, destination) pairs, components, contexts and event streams remembered; a
/// hostile capture with endless IDs makes the observer forget, not grow.
const MAX_TRACKED: usize = 1024;
/// Most components taken from one recorded `ReportServices` (the format allows 255 × 255;
/// merging them is quadratic, and a hostile capture must not stall a replay).
const MAX_TRACKED_LISTED: usize = 64;

/// A silence of one arm: `Link{Lost}` from `start` + threshold, heard again at `end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gap {
    /// The arm that was silent.
    pub arm: ComponentId,
    /// Last heard before the silence, s.
    pub start: f64,
    /// Heard again (or the end of the input), s.
    pub end: f64,
}

/// What the observer has seen of one followed arm (for `inspect` summaries).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArmStats {
    /// Its identification string (its subsystem's), when `ReportIdentification` said it.
    pub name: Option<String>,
    /// Messages the arm sent, by name (as [`ObserverStats::messages`] names them).
    pub sent: BTreeMap<String, u64>,
    /// Messages sent to the arm (by anyone), by name.
    pub received: BTreeMap<String, u64>,
    /// First and last time the arm was heard, s.
    pub heard: Option<(f64, f64)>,
    /// Joints of its last specification, when one was seen.
    pub joints: Option<usize>,
    /// Its silences, in order.
    pub gaps: Vec<(f64, f64)>,
}

/// What the observer has seen (for `inspect` summaries).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObserverStats {
    /// Datagrams observed.
    pub datagrams: u64,
    /// Datagrams or blocks that did not frame or decode.
    pub malformed: u64,
    /// Duplicate blocks dropped (same source, destination and sequence number within 2 s).
    pub duplicates: u64,
    /// Messages by name (e.g. "`ReportStatus`"; Events by the report they carry,
    /// "Event(ReportJointPositions)"), ACKs as "ack".
    pub messages: BTreeMap<String, u64>,
    /// Datagrams by peer address.
    pub peers: BTreeMap<SocketAddr, u64>,
    /// Gaps in traffic of every followed arm, in the order they were found.
    pub gaps: Vec<Gap>,
    /// Peer deviations accepted and counted (wire reference §9), as the live client counts
    /// them.
    pub tolerated: Tolerated,
    /// Every followed arm, by ID.
    pub arms: BTreeMap<ComponentId, ArmStats>,
    /// The arm [`NetFact::Selected`] names last (the focus a replay opens on).
    pub focus: Option<ComponentId>,
    /// Manipulators seen but not followed: [`MAX_ARMS`] were followed already.
    pub arms_not_followed: u64,
}

/// A component as far as the wire told.
#[derive(Debug, Clone, Default)]
struct Known {
    identification: Option<String>,
    services: Vec<(String, u8, u8)>,
}

/// The last applied sequence number of one event stream and how many older ones were dropped
/// in a row (the live client's rule).
#[derive(Debug, Clone, Copy)]
struct EventSeq {
    last: u8,
    old_in_a_row: u8,
}

/// The key messages are counted by: (inside an Event, message ID).
type CountKey = (bool, Option<u16>);

/// One followed arm: everything the observer keeps of it.
#[derive(Debug)]
struct Arm {
    id: JausId,
    /// `id` as the model names it (what [`Update::Arm`] carries).
    cid: ComponentId,
    /// Its specification has been seen.
    by_spec: bool,
    presets: Vec<PresetInfo>,
    control: ControlState,
    holder: Option<JausId>,
    requests: HashMap<JausId, u8>,
    link_live: bool,
    last_heard: Option<f64>,
    intervals: VecDeque<f64>,
    gap_open: bool,
    /// Messages it sent and was sent, indexed by the message kind's index in the observer's
    /// `names` (named by [`Observer::stats`]): a vector index per message, no second hash.
    sent: Vec<u64>,
    received: Vec<u64>,
    /// First and last time heard (`last_heard` is cleared when a trailing gap is closed).
    seen: Option<(f64, f64)>,
    joints: Option<usize>,
    gaps: Vec<(f64, f64)>,
    /// Per sender, when its last `SetEmergency` was marked: a stop repeated until the arm
    /// confirms it (every 150 ms, issue 44) is one mark, not one per try (at most
    /// [`MAX_STOP_SENDERS`] senders kept).
    stop_marked: HashMap<JausId, f64>,
}

/// Seconds within which a sender's repeated `SetEmergency`s are one press on the timeline.
const STOP_REPEATS_WITHIN: f64 = 10.0;

/// Most senders whose last marked stop is remembered per arm (a flood of forged senders
/// costs a mark each, never memory).
const MAX_STOP_SENDERS: usize = 32;

impl Arm {
    fn new(id: JausId, by_spec: bool) -> Self {
        Self {
            id,
            cid: id.into(),
            by_spec,
            presets: Vec::new(),
            control: ControlState::Released,
            holder: None,
            requests: HashMap::new(),
            link_live: false,
            last_heard: None,
            intervals: VecDeque::new(),
            gap_open: false,
            sent: Vec::new(),
            received: Vec::new(),
            seen: None,
            joints: None,
            gaps: Vec::new(),
            stop_marked: HashMap::new(),
        }
    }

    /// Silence longer than this from the arm is a gap, s.
    fn gap_threshold(&self) -> f64 {
        if self.intervals.is_empty() {
            return GAP_S;
        }
        let mut v: Vec<f64> = self.intervals.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2] * GAP_MEDIANS).max(GAP_S)
    }
}

/// The passive decoder.
#[derive(Debug)]
pub struct Observer {
    start_ns: u64,
    stats: ObserverStats,
    /// Index into `names` and count by (inside an Event, message ID): at most 2 × 65 537
    /// entries. Folded into [`ObserverStats::messages`] by [`Observer::stats`]: counting by name
    /// per datagram (a string compared down a B-tree) cost more than decoding the message.
    counts: HashMap<CountKey, (usize, u64)>,
    /// Summary names of the message kinds seen, in the order first seen.
    names: Vec<String>,
    /// Datagrams by peer address, folded into [`ObserverStats::peers`] the same way.
    peers: HashMap<SocketAddr, u64>,
    /// The peer of the datagrams just before and how many came in a row, folded into `peers`
    /// when another peer sends (one lookup a run, not one a datagram).
    peer_run: Option<(SocketAddr, u64)>,
    /// The live client's intake, promiscuous: duplicates keyed by (source, destination).
    endpoint: Endpoint,
    /// Messages that did not decode (the endpoint counts what did not frame).
    decode_errors: u64,
    contexts: HashMap<JausId, DecodeContext>,
    components: HashMap<JausId, Known>,
    /// Event streams by (arm, subscriber, event ID).
    events: HashMap<(JausId, JausId, u8), EventSeq>,
    /// The arms followed, in the order they were found (at most [`MAX_ARMS`]: a linear search
    /// over a handful of IDs beats hashing for every block).
    arms: Vec<Arm>,
    /// The arm [`NetFact::Selected`] named, and whether by its specification.
    focus: Option<JausId>,
    focus_by_spec: bool,
    /// Components that sent a command: OCUs, never followed by their traffic alone.
    commanders: HashSet<JausId>,
    /// Manipulators past [`MAX_ARMS`] (counted once each), and whether the operator was told.
    not_followed: HashSet<JausId>,
    told_not_followed: bool,
}

/// Counts one message of kind `index` in a per-arm count vector (grown on first sight).
fn count_at(counts: &mut Vec<u64>, index: usize) {
    if counts.len() <= index {
        counts.resize(index + 1, 0);
    }
    counts[index] += 1;
}

/// Commands an OCU sends to the arm it works with (they make it a followed arm when nothing
/// else has).
fn is_command(m: &Message) -> bool {
    matches!(
        m,
        Message::RequestControl(_)
            | Message::ReleaseControl(_)
            | Message::SetEmergency(_)
            | Message::ClearEmergency(_)
            | Message::Resume(_)
            | Message::Standby(_)
            | Message::Shutdown(_)
            | Message::SetCurrentPose(_)
            | Message::CreateEvent(_)
            | Message::QueryStatus(_)
    )
}

/// What only a commanded component sends: answers about control and status, events and the
/// reports [`reports::report_update`] maps (they make it a followed arm when nothing else has:
/// a capture started after the specification was exchanged still shows the arm's data).
/// Matched by kind, without decoding anything (this runs for messages of components that are
/// not followed).
fn is_answer(m: &Message) -> bool {
    matches!(
        m,
        Message::ConfirmControl(_)
            | Message::RejectControl(_)
            | Message::ReportControl(_)
            | Message::Event(_)
            | Message::ReportJointPositions(_)
            | Message::ReportJointVelocity(_)
            | Message::ReportJointEffort(_)
            | Message::ReportJointForceTorques(_)
            | Message::ReportManipulatorEndEffectorForceTorque(_)
            | Message::ReportCurrentPose(_)
            | Message::ReportStatus(_)
    )
}

/// Whose message it is ([`Observer::route`]): the index of the followed arm that sent it or
/// that it was sent to.
enum Route {
    ByArm(usize),
    ToArm(usize),
    Neither,
}

/// Inserts into a bounded map: when full, everything is forgotten (hostile input only).
fn bounded_entry<K: std::hash::Hash + Eq, V>(
    map: &mut HashMap<K, V>,
    key: K,
    new: impl FnOnce() -> V,
) -> &mut V {
    if map.len() >= MAX_TRACKED && !map.contains_key(&key) {
        map.clear();
    }
    map.entry(key).or_insert_with(new)
}

/// Inserts into a bounded set: when full, everything is forgotten (hostile input only).
/// Returns whether `key` was new.
fn bounded_insert<K: std::hash::Hash + Eq>(set: &mut HashSet<K>, key: K) -> bool {
    if set.len() >= MAX_TRACKED && !set.contains(&key) {
        set.clear();
    }
    set.insert(key)
}

impl Observer {
    /// An observer whose times are seconds since `start_ns` (ns since the Unix epoch).
    pub fn new(start_ns: u64) -> Self {
        Self {
            start_ns,
            stats: ObserverStats::default(),
            counts: HashMap::new(),
            names: Vec::new(),
            peers: HashMap::new(),
            peer_run: None,
            endpoint: Endpoint::promiscuous(MAX_TRACKED),
            decode_errors: 0,
            contexts: HashMap::new(),
            components: HashMap::new(),
            events: HashMap::new(),
            arms: Vec::new(),
            focus: None,
            focus_by_spec: false,
            commanders: HashSet::new(),
            not_followed: HashSet::new(),
            told_not_followed: false,
        }
    }

    /// The time origin, ns since the Unix epoch.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Seconds since the time origin of a record time.
    pub fn time(&self, t_ns: u64) -> f64 {
        // In u64 either way round (the same integer as an i128 difference, without its slow
        // conversion: this runs for every datagram).
        if t_ns >= self.start_ns {
            (t_ns - self.start_ns) as f64 / 1e9
        } else {
            -((self.start_ns - t_ns) as f64) / 1e9
        }
    }

    /// The focused arm: the one [`NetFact::Selected`] named last.
    pub fn selected(&self) -> Option<JausId> {
        self.focus
    }

    /// Every followed arm, in the order they were found.
    pub fn arms(&self) -> impl Iterator<Item = JausId> + '_ {
        self.arms.iter().map(|a| a.id)
    }

    /// The index of followed arm `id`.
    fn arm_index(&self, id: JausId) -> Option<usize> {
        self.arms.iter().position(|a| a.id == id)
    }

    /// Observes one datagram; pushes the updates it implies onto `out`.
    pub fn observe(&mut self, rec: &WireRecord, out: &mut Vec<Update>) {
        let t = self.time(rec.t_ns);
        self.stats.datagrams += 1;
        match &mut self.peer_run {
            Some((peer, n)) if *peer == rec.peer => *n += 1,
            run => {
                if let Some((peer, n)) = run.replace((rec.peer, 1)) {
                    *self.peers.entry(peer).or_insert(0) += n;
                }
            }
        }
        self.check_silence(t, out);
        self.take_in(t, rec, out);
        // Foreign versions count as malformed here: a recording of ours holds only JUDP v2.
        let e = self.endpoint.stats();
        self.stats.malformed = e.malformed_with(e.foreign_version + self.decode_errors);
        self.stats.duplicates = e.duplicates;
        self.stats.tolerated = e.tolerated_with(self.stats.tolerated);
    }

    /// Every block of one record through the endpoint, then to the decoder.
    fn take_in(&mut self, t: f64, rec: &WireRecord, out: &mut Vec<Update>) {
        let Ok(mut intake) = self.endpoint.receive(t, rec.peer, &rec.bytes) else {
            return;
        };
        while let Some(item) = intake.next(&mut self.endpoint) {
            let Ok(inbound) = item else { break };
            let h = inbound.header;
            let mut kind = None;
            match inbound.kind {
                InboundKind::NotForUs | InboundKind::Fragment => {}
                // A promiscuous endpoint has no ID of its own: never an echo.
                InboundKind::BadSource
                | InboundKind::Duplicate
                | InboundKind::OwnEcho
                | InboundKind::SameId
                // Nothing is pinned in a promiscuous endpoint.
                | InboundKind::Elsewhere(_) => continue,
                InboundKind::Ack => self.count("ack"),
                InboundKind::Message(bytes) => kind = self.take_message(t, &h, rec, &bytes, out),
            }
            // After the message: it may have made its sender a followed arm.
            if let Some(i) = self.arm_index(h.source) {
                if let Some(k) = kind {
                    count_at(&mut self.arms[i].sent, k);
                }
                self.heard(i, t, out);
            } else if let Some(k) = kind
                && let Some(i) = self.arm_index(h.destination)
            {
                count_at(&mut self.arms[i].received, k);
            }
        }
    }

    /// One message of a block: decoded, counted and observed; its kind's index in `names`
    /// (`None` when it did not decode).
    fn take_message(
        &mut self,
        t: f64,
        h: &Header,
        rec: &WireRecord,
        bytes: &[u8],
        out: &mut Vec<Update>,
    ) -> Option<usize> {
        // An Event, the bulk of a recording, is read in place: its report is decoded from the
        // datagram's own bytes, never copied. No Event goes on to `message`.
        if let Some(parsed) = EventRef::parse_message(bytes) {
            let Ok(e) = parsed else {
                self.decode_errors += 1;
                return None;
            };
            let kind = self.count_key((true, e.report_id()));
            self.event(t, h, e, out);
            return Some(kind);
        }
        let parsed = {
            let ctx = self.contexts.get(&h.source).unwrap_or(&DecodeContext::NONE);
            Message::parse_with(bytes, ctx)
        };
        // §9 C10: an emergency stop with a short code is still one.
        let parsed: Result<Message, crate::jaus::DecodeError> = parsed.or_else(|e| {
            let m = short_emergency(bytes).ok_or(e)?;
            self.stats.tolerated.short_emergency_code += 1;
            Ok(m)
        });
        let Ok(m) = parsed else {
            self.decode_errors += 1;
            return None;
        };
        let kind = self.count_message(&m);
        self.message(t, h, rec, m, out);
        Some(kind)
    }

    fn count(&mut self, name: &str) {
        match self.stats.messages.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.stats.messages.insert(name.to_string(), 1);
            }
        }
    }

    /// Counts `m` in the summary: an Event by the report it carries ("how many joint
    /// positions" is what a summary reader asks). Names are made once per message ID (this runs
    /// for every datagram of an hour at 1 kHz). Returns the kind's index in `names`.
    fn count_message(&mut self, m: &Message) -> usize {
        self.count_key(match m {
            Message::Event(e) => (true, e.report_message.message_id()),
            other => (false, Some(other.id())),
        })
    }

    /// Counts a message by its key (whether it is an Event, and the ID of the message or of
    /// the Event's report); returns the kind's index in `names`.
    fn count_key(&mut self, key: (bool, Option<u16>)) -> usize {
        let names = &mut self.names;
        let entry = self.counts.entry(key).or_insert_with(|| {
            let name = key.1.map_or_else(
                || "?".to_string(),
                |id| message_name(id).map_or_else(|| format!("0x{id:04X}"), str::to_string),
            );
            names.push(if key.0 {
                format!("Event({name})")
            } else {
                name
            });
            (names.len() - 1, 0)
        });
        entry.1 += 1;
        entry.0
    }

    fn message(&mut self, t: f64, h: &Header, rec: &WireRecord, m: Message, out: &mut Vec<Update>) {
        let (src, dst) = (h.source, h.destination);
        match &m {
            Message::ReportIdentification(r) => {
                bounded_entry(&mut self.components, src, Known::default).identification =
                    Some(r.identification.clone());
            }
            Message::ReportServices(r) if rec.direction == Direction::Rx => {
                let identification = self
                    .components
                    .get(&src)
                    .and_then(|k| k.identification.clone());
                for listed in reports::listed_services_bounded(src, r, MAX_TRACKED_LISTED).0 {
                    self.stats.tolerated.wildcard_services += listed.wildcard_records;
                    let known = bounded_entry(&mut self.components, listed.id, Known::default);
                    reports::take_services(&mut known.services, listed.services);
                    if known.identification.is_none() {
                        known.identification.clone_from(&identification);
                    }
                    let info = ComponentInfo {
                        id: listed.id.into(),
                        address: rec.peer,
                        identification: known.identification.clone(),
                        services: known.services.clone(),
                        manipulator: reports::is_manipulator(&known.services),
                    };
                    out.push(Update::net(NetFact::Component { t, info }));
                }
            }
            Message::ReportManipulatorSpecifications(r) => {
                let spec = reports::arm_spec(r);
                let ctx = reports::decode_context(&spec);
                *bounded_entry(&mut self.contexts, src, DecodeContext::default) = ctx;
                if let Some(i) = self.follow(t, src, true, out) {
                    let arm = &mut self.arms[i];
                    arm.joints = Some(spec.joint_count());
                    out.push(Update::arm(arm.cid, ArmFact::Specification { t, spec }));
                }
                return;
            }
            _ => {}
        }
        let command = is_command(&m);
        if command {
            bounded_insert(&mut self.commanders, src);
        }
        match self.route(t, h, command, is_answer(&m), out) {
            Route::ByArm(i) => self.sent_by_arm(i, t, dst, m, out),
            Route::ToArm(i) => self.sent_to_arm(i, t, src, &m, out),
            Route::Neither => {}
        }
    }

    /// An Event (read in place): routed by [`Observer::route`] as every message is, an
    /// answer; nothing an arm receives as an Event is shown.
    fn event(&mut self, t: f64, h: &Header, e: EventRef<'_>, out: &mut Vec<Update>) {
        if let Route::ByArm(i) = self.route(t, h, false, true, out) {
            self.event_by_arm(i, t, h.destination, e, out);
        }
    }

    /// Whose message this is: one sent by a followed arm, one sent to one, or neither. A
    /// command to a component that may be an arm, or an answer from one, makes it a followed
    /// arm.
    fn route(
        &mut self,
        t: f64,
        h: &Header,
        command: bool,
        answer: bool,
        out: &mut Vec<Update>,
    ) -> Route {
        let (src, dst) = (h.source, h.destination);
        if let Some(i) = self.arm_index(src) {
            Route::ByArm(i)
        } else if let Some(i) = self.arm_index(dst) {
            Route::ToArm(i)
        } else if command && !dst.is_wildcard() && !dst.has_reserved_zero() {
            if self.may_be_arm(dst)
                && let Some(i) = self.follow(t, dst, false, out)
            {
                Route::ToArm(i)
            } else {
                Route::Neither
            }
        } else if answer
            && self.may_be_arm(src)
            && let Some(i) = self.follow(t, src, false, out)
        {
            Route::ByArm(i)
        } else {
            Route::Neither
        }
    }

    /// Whether `id`'s traffic alone may make it a followed arm: not an OCU (it sent a
    /// command), not a component whose services say it is no manipulator, a real ID.
    fn may_be_arm(&self, id: JausId) -> bool {
        !id.is_wildcard()
            && !id.has_reserved_zero()
            && !self.commanders.contains(&id)
            && self
                .components
                .get(&id)
                .is_none_or(|k| k.services.is_empty() || reports::is_manipulator(&k.services))
    }

    /// Follows `id` (found by its specification when `by_spec`) and returns its index; `None`
    /// past [`MAX_ARMS`] (counted, and said once). A new arm says `Link{Connecting}`; the
    /// first arm (or the first by specification after one found by traffic) is focused.
    fn follow(
        &mut self,
        t: f64,
        id: JausId,
        by_spec: bool,
        out: &mut Vec<Update>,
    ) -> Option<usize> {
        let i = match self.arm_index(id) {
            Some(i) => {
                self.arms[i].by_spec |= by_spec;
                i
            }
            None => {
                if self.arms.len() >= MAX_ARMS {
                    // Past the bound: counted and ignored (see the module's rules).
                    if bounded_insert(&mut self.not_followed, id) {
                        self.stats.arms_not_followed += 1;
                    }
                    if !self.told_not_followed {
                        self.told_not_followed = true;
                        out.push(Update::net(Remark::Error {
                            t,
                            message: format!(
                                "more than {MAX_ARMS} manipulators: {id} and any found after it \
                                 are not shown (their traffic is counted, not decoded)"
                            ),
                        }));
                    }
                    return None;
                }
                self.arms.push(Arm::new(id, by_spec));
                let i = self.arms.len() - 1;
                if self.focus.is_none() {
                    self.set_focus(t, id, by_spec, out);
                }
                out.push(Update::arm(
                    id.into(),
                    ArmFact::Link {
                        t,
                        state: LinkState::Connecting,
                    },
                ));
                i
            }
        };
        if by_spec && !self.focus_by_spec && self.focus != Some(id) {
            self.set_focus(t, id, true, out);
        } else if by_spec && self.focus == Some(id) {
            self.focus_by_spec = true;
        }
        Some(i)
    }

    fn set_focus(&mut self, t: f64, id: JausId, by_spec: bool, out: &mut Vec<Update>) {
        self.focus = Some(id);
        self.focus_by_spec = by_spec;
        out.push(Update::net(NetFact::Selected { t, id: id.into() }));
    }

    /// A message from followed arm `i` to `to`.
    fn sent_by_arm(&mut self, i: usize, t: f64, to: JausId, m: Message, out: &mut Vec<Update>) {
        let arm = &mut self.arms[i];
        let (id, cid) = (arm.id, arm.cid);
        let fact = |fact: ArmFact| Update::Arm { arm: cid, fact };
        match m {
            Message::ReportToolOffset(r) => out.push(fact(ArmFact::ToolOffset {
                t,
                point: [r.x, r.y, r.z],
            })),
            Message::ReportPresetPoseCapabilities(r) => {
                reports::merge_preset_capabilities(&mut arm.presets, &r);
                out.push(fact(ArmFact::Presets {
                    t,
                    presets: arm.presets.clone(),
                }));
            }
            Message::ReportPresetPoseSpecifications(r) => {
                reports::merge_preset_specifications(&mut arm.presets, &r, id);
                out.push(fact(ArmFact::Presets {
                    t,
                    presets: arm.presets.clone(),
                }));
            }
            Message::ConfirmEventRequest(c) if c.confirmed_periodic_rate == 0.0 => {
                // Cancelled: a new event with this ID starts its own numbering.
                self.events.remove(&(id, to, c.event_id));
            }
            Message::ConfirmControl(c) => {
                let authority = arm.requests.remove(&to).unwrap_or(0);
                if c.response_code == ConfirmControlCode::ControlAccepted {
                    let state = ControlState::Held { authority };
                    if arm.control != state || arm.holder != Some(to) {
                        set_control(
                            arm,
                            t,
                            state,
                            Some(to),
                            format!("control granted to {to} (authority {authority})"),
                            out,
                        );
                    }
                } else {
                    let label = format!("control refused to {to}: {}", c.response_code);
                    if arm.holder == Some(to) && arm.control != ControlState::Released {
                        set_control(arm, t, ControlState::Released, None, label, out);
                    } else {
                        out.push(fact(ArmFact::Remark(Remark::Mark {
                            t,
                            kind: MarkKind::Control,
                            label,
                        })));
                    }
                }
            }
            Message::RejectControl(r) => {
                if arm.holder == Some(to) && arm.control != ControlState::Released {
                    let label = if r.response_code == RejectControlCode::ControlReleased {
                        format!("control released ({to})")
                    } else {
                        format!("control lost by {to}: {}", r.response_code)
                    };
                    set_control(arm, t, ControlState::Released, None, label, out);
                }
            }
            Message::ReportControl(r) => report_control(arm, t, r, out),
            Message::ReportTransitionCompleted(r) => {
                out.push(fact(ArmFact::Remark(Remark::CommandOutcome {
                    t,
                    command: CommandKind::GoToPreset,
                    outcome: if r.transition_status == TransitionStatus::Completed {
                        Outcome::Completed
                    } else {
                        Outcome::Failed(r.transition_status.to_string())
                    },
                })));
            }
            report => {
                if let Ok((_, u)) = reports::report_update(t, report) {
                    out.push(fact(u));
                }
            }
        }
    }

    /// An Event from followed arm `i` to `to`: a report in its stream's order (the live
    /// client's rule), decoded with the arm's context.
    fn event_by_arm(
        &mut self,
        i: usize,
        t: f64,
        to: JausId,
        e: EventRef<'_>,
        out: &mut Vec<Update>,
    ) {
        let arm = &self.arms[i];
        let (id, cid) = (arm.id, arm.cid);
        let seq = bounded_entry(&mut self.events, (id, to, e.event_id), || EventSeq {
            last: e.sequence_number.wrapping_sub(1),
            old_in_a_row: 0,
        });
        // The live client's rule: an event not newer than the last applied is reordering,
        // unless three come in a row (then 128+ were lost).
        let d = e.sequence_number.wrapping_sub(seq.last);
        if (d == 0 || d > 128) && seq.old_in_a_row < 2 {
            seq.old_in_a_row += 1;
            return;
        }
        seq.old_in_a_row = 0;
        seq.last = e.sequence_number;
        let ctx = self.contexts.get(&id).unwrap_or(&DecodeContext::NONE);
        match Message::parse_with(e.report, ctx) {
            Ok(report) => {
                if let Ok((_, u)) = reports::report_update(t, report) {
                    out.push(Update::Arm { arm: cid, fact: u });
                }
            }
            Err(_) => self.stats.malformed += 1,
        }
    }

    /// A message to followed arm `i` from `from`.
    fn sent_to_arm(&mut self, i: usize, t: f64, from: JausId, m: &Message, out: &mut Vec<Update>) {
        let arm = &mut self.arms[i];
        let (id, cid) = (arm.id, arm.cid);
        let mark = |kind, label: String| Update::arm(cid, Remark::Mark { t, kind, label });
        match m {
            Message::RequestControl(r) => {
                let authority = r.authority_code;
                if arm.requests.len() >= MAX_TRACKED {
                    arm.requests.clear();
                }
                arm.requests.insert(from, authority);
                let keep_alive = arm.holder == Some(from)
                    && matches!(
                        arm.control,
                        ControlState::Held { .. } | ControlState::Requested
                    );
                if keep_alive {
                    return;
                }
                let label = format!("RequestControl from {from} (authority {authority})");
                if arm.control == ControlState::Released {
                    set_control(arm, t, ControlState::Requested, Some(from), label, out);
                } else {
                    out.push(mark(MarkKind::Control, label));
                }
            }
            Message::ReleaseControl(_) => {
                out.push(mark(
                    MarkKind::Control,
                    format!("ReleaseControl from {from}"),
                ));
            }
            Message::SetEmergency(_) => {
                let repeat = arm
                    .stop_marked
                    .get(&from)
                    .is_some_and(|last| t - last < STOP_REPEATS_WITHIN);
                if !repeat {
                    if arm.stop_marked.len() >= MAX_STOP_SENDERS {
                        arm.stop_marked.clear();
                    }
                    arm.stop_marked.insert(from, t);
                    out.push(mark(
                        MarkKind::Emergency,
                        format!("SetEmergency from {from}"),
                    ));
                }
            }
            Message::ClearEmergency(_) => {
                out.push(mark(
                    MarkKind::Emergency,
                    format!("ClearEmergency from {from}"),
                ));
            }
            Message::Resume(_) => out.push(mark(MarkKind::Status, format!("Resume from {from}"))),
            Message::Standby(_) => out.push(mark(MarkKind::Status, format!("Standby from {from}"))),
            Message::Shutdown(_) => {
                out.push(mark(MarkKind::Status, format!("Shutdown from {from}")));
            }
            Message::SetCurrentPose(r) => {
                let pose = match arm.presets.iter().find(|p| p.id == r.pose_id) {
                    Some(p) => format!("{} ({})", p.name, r.pose_id),
                    None => format!("pose {}", r.pose_id),
                };
                out.push(mark(
                    MarkKind::Transition,
                    format!("SetCurrentPose to {pose} from {from}"),
                ));
            }
            Message::CancelEvent(c) => {
                self.events.remove(&(id, from, c.event_id));
            }
            _ => {}
        }
    }

    /// Declares every silent arm's link lost once time (any record's) has passed its gap
    /// threshold.
    fn check_silence(&mut self, t: f64, out: &mut Vec<Update>) {
        for arm in &mut self.arms {
            let Some(last) = arm.last_heard else { continue };
            // The threshold is at least GAP_S: skip the median on every datagram.
            if arm.gap_open || t - last <= GAP_S {
                continue;
            }
            let threshold = arm.gap_threshold();
            if t - last > threshold {
                arm.gap_open = true;
                arm.link_live = false;
                out.push(Update::arm(
                    arm.cid,
                    ArmFact::Link {
                        t: last + threshold,
                        state: LinkState::Lost,
                    },
                ));
            }
        }
    }

    /// Followed arm `i` was heard at `t`.
    fn heard(&mut self, i: usize, t: f64, out: &mut Vec<Update>) {
        let arm = &mut self.arms[i];
        if let Some(last) = arm.last_heard {
            let dt = t - last;
            // The threshold is at least GAP_S: the median is only needed past it (this runs
            // for every datagram from the arm).
            let threshold = if dt > GAP_S {
                arm.gap_threshold()
            } else {
                GAP_S
            };
            if dt > threshold {
                self.close_gap(i, last, t, threshold, "", out);
            } else if dt > 0.0 {
                if arm.intervals.len() >= INTERVALS {
                    arm.intervals.pop_front();
                }
                arm.intervals.push_back(dt);
            }
        }
        let arm = &mut self.arms[i];
        if !arm.link_live {
            arm.link_live = true;
            out.push(Update::arm(
                arm.cid,
                ArmFact::Link {
                    t,
                    state: LinkState::Live,
                },
            ));
        }
        arm.gap_open = false;
        arm.seen = Some(arm.seen.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        arm.last_heard = Some(arm.last_heard.map_or(t, |l| l.max(t)));
    }

    fn close_gap(
        &mut self,
        i: usize,
        last: f64,
        end: f64,
        threshold: f64,
        note: &str,
        out: &mut Vec<Update>,
    ) {
        let arm = &mut self.arms[i];
        let at = last + threshold;
        if !arm.gap_open {
            arm.link_live = false;
            out.push(Update::arm(
                arm.cid,
                ArmFact::Link {
                    t: at,
                    state: LinkState::Lost,
                },
            ));
        }
        arm.gap_open = true;
        out.push(Update::arm(
            arm.cid,
            Remark::Mark {
                t: at,
                kind: MarkKind::Gap,
                label: format!("no traffic from {} for {:.1} s{note}", arm.id, end - last),
            },
        ));
        arm.gaps.push((last, end));
        self.stats.gaps.push(Gap {
            arm: arm.cid,
            start: last,
            end,
        });
    }

    /// The end of the input at `end_ns`: closes every arm's trailing gap (once).
    pub fn finish(&mut self, end_ns: u64, out: &mut Vec<Update>) {
        let end = self.time(end_ns);
        for i in 0..self.arms.len() {
            let Some(last) = self.arms[i].last_heard else {
                continue;
            };
            let threshold = self.arms[i].gap_threshold();
            if end - last > threshold {
                self.close_gap(i, last, end, threshold, " (to the end)", out);
                // Closed: a later call or record does not report it again.
                self.arms[i].last_heard = None;
            }
        }
    }

    /// What has been seen so far.
    pub fn stats(&self) -> ObserverStats {
        let mut stats = self.stats.clone();
        for (index, n) in self.counts.values() {
            *stats
                .messages
                .entry(self.names[*index].clone())
                .or_insert(0) += n;
        }
        stats.peers.extend(self.peers.iter().map(|(a, n)| (*a, *n)));
        if let Some((peer, n)) = self.peer_run {
            *stats.peers.entry(peer).or_insert(0) += n;
        }
        let by_name = |counts: &[u64]| {
            let mut m = BTreeMap::new();
            for (index, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                *m.entry(self.names[index].clone()).or_insert(0) += n;
            }
            m
        };
        for arm in &self.arms {
            stats.arms.insert(
                arm.cid,
                ArmStats {
                    name: self
                        .components
                        .get(&arm.id)
                        .and_then(|k| k.identification.clone()),
                    sent: by_name(&arm.sent),
                    received: by_name(&arm.received),
                    heard: arm.seen,
                    joints: arm.joints,
                    gaps: arm.gaps.clone(),
                },
            );
        }
        stats.focus = self.focus.map(Into::into);
        stats
    }
}

/// A `ReportControl` from followed arm `arm`: who holds control, as the arm said it (the live
/// client's Controller update); a controller is known when it asked this arm for control in
/// this recording.
fn report_control(arm: &mut Arm, t: f64, r: ReportControl, out: &mut Vec<Update>) {
    let cid = arm.cid;
    let fact = |fact: ArmFact| Update::Arm { arm: cid, fact };
    let (controller, _) = reports::controller_of(&r, |c| {
        arm.requests.contains_key(&c) || arm.holder == Some(c)
    });
    out.push(fact(ArmFact::Controller {
        t,
        controller: Controller {
            id: controller.map(Into::into),
            authority: if controller.is_some() {
                r.authority_code
            } else {
                0
            },
        },
    }));
    // As the live client takes it: the arm naming the OCU that asked is that
    // OCU's control (its keep-alives are answered by ConfirmControl, but the
    // latest control answer may be this report, the client asks every second).
    if let Some(c) = controller
        && arm.requests.contains_key(&c)
    {
        let state = ControlState::Held {
            authority: r.authority_code,
        };
        if arm.control != state || arm.holder != Some(c) {
            set_control(
                arm,
                t,
                state,
                Some(c),
                format!("control held by {c} (authority {})", r.authority_code),
                out,
            );
        }
    }
}

/// A control change of `arm`: the mark that says who, then the state (the session keeps one
/// mark for the two).
fn set_control(
    arm: &mut Arm,
    t: f64,
    state: ControlState,
    holder: Option<JausId>,
    label: String,
    out: &mut Vec<Update>,
) {
    arm.control = state;
    arm.holder = holder;
    out.push(Update::arm(
        arm.cid,
        Remark::Mark {
            t,
            kind: MarkKind::Control,
            label,
        },
    ));
    out.push(Update::arm(arm.cid, ArmFact::Control { t, state }));
}
