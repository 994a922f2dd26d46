//! A passive, sans-I/O decoder of JUDP traffic: wire records in (either direction, any
//! source and destination), [`Update`]s out, through the same codec and the same report →
//! update mapping as the live client ([`crate::net::reports`]). Replay and the recorder's
//! decoded channels use it.
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
//! - Components: `ReportIdentification` and `ReportServices` give [`Update::Component`], with the
//!   address of the sender (received datagrams only: a sent one names the receiver); the
//!   records of one component within a report merged and a report's list replacing the last
//!   one's, as live ([`reports::listed_services`], [`reports::take_services`]).
//! - Selection: the first source of a `ReportManipulatorSpecifications` (an OCU asks for the
//!   specification of the arm it selects; a specification from another component later means
//!   it selected another arm); until one is seen, the first component a command is sent to or
//!   that answers with control or status, sends events or manipulator reports.
//! - The selected component: specification, tool offset, presets as the live client takes
//!   them; its reports, direct or inside Events (to anyone), through
//!   [`reports::report_update`]. Events older than the last of their subscription are dropped
//!   as live. Reports from other components are not applied. Two OCUs subscribed to the same
//!   arm in one capture each get their own Events, so such a capture shows each sample twice.
//! - Control, as seen on the wire: `RequestControl` from an OCU → `Requested` (a re-request by
//!   the holder is a keep-alive, not news); `ConfirmControl` accepted → `Held` with the
//!   authority that OCU asked for; refused, or `RejectControl` to the holder → `Released`. Each
//!   change also gets a [`Update::Mark`] that says which OCU.
//! - Commands that are not facts get marks: SetEmergency/ClearEmergency (emergency),
//!   Resume/Standby/Shutdown (status), RequestControl/ReleaseControl (control), `SetCurrentPose`
//!   (transition). `ReportTransitionCompleted` → [`Update::CommandOutcome`] for `GoToPreset`.
//! - Gaps: when the selected component is silent for longer than the gap threshold
//!   (`max(GAP_S, GAP_MEDIANS × the median of its last 31 intervals)`, so a slow talker is not
//!   a string of gaps), `Link{Lost}` at silence start + threshold as soon as any later record
//!   shows the time has passed; when it is heard again a Gap mark at the same time saying how
//!   long the silence was, and `Link{Live}`. [`Observer::finish`] closes a trailing gap.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

// The observer runs for every datagram of an hour-long file: foldhash (seeded per map, so a
// crafted capture cannot aim at one hash function) instead of the standard SipHash, which took
// a fifth of the replay loader's time (issue 14).
use foldhash::{HashMap, HashMapExt};

use crate::jaus::core::{ConfirmControlCode, RejectControlCode, short_emergency};
use crate::jaus::iop::TransitionStatus;
use crate::jaus::judp::Header;
use crate::jaus::message::message_name;
use crate::jaus::{DecodeContext, JausId, Message};
use crate::model::update::{
    CommandKind, ComponentInfo, ControlState, Controller, LinkState, MarkKind, Outcome, PresetInfo,
    Tolerated, Update,
};
use crate::net::endpoint::{Endpoint, InboundKind};
use crate::net::reports;
use crate::net::tap::{Direction, WireRecord};

/// Shortest silence of the selected component that counts as a gap, s.
pub const GAP_S: f64 = 2.0;
/// A silence longer than this many median intervals of the component counts as a gap.
pub const GAP_MEDIANS: f64 = 10.0;
/// Intervals of the selected component kept for the median.
const INTERVALS: usize = 31;
/// Most (source, destination) pairs, components, contexts and event streams remembered; a
/// hostile capture with endless IDs makes the observer forget, not grow.
const MAX_TRACKED: usize = 1024;

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
    /// Gaps in traffic from the selected component: (start, end), s.
    pub gaps: Vec<(f64, f64)>,
    /// Peer deviations accepted and counted (wire reference §9), as the live client counts
    /// them.
    pub tolerated: Tolerated,
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

/// The passive decoder.
#[derive(Debug)]
pub struct Observer {
    start_ns: u64,
    stats: ObserverStats,
    /// Summary name and count by (inside an Event, message ID): at most 2 × 65 537 entries.
    /// Folded into [`ObserverStats::messages`] by [`Observer::stats`]: counting by name per
    /// datagram (a string compared down a B-tree) cost more than decoding the message.
    counts: HashMap<(bool, Option<u16>), (String, u64)>,
    /// Datagrams by peer address, folded into [`ObserverStats::peers`] the same way.
    peers: HashMap<SocketAddr, u64>,
    /// The live client's intake, promiscuous: duplicates keyed by (source, destination).
    endpoint: Endpoint,
    /// Messages that did not decode (the endpoint counts what did not frame).
    decode_errors: u64,
    contexts: HashMap<JausId, DecodeContext>,
    components: HashMap<JausId, Known>,
    events: HashMap<(JausId, JausId, u8), EventSeq>,
    selected: Option<JausId>,
    selected_by_spec: bool,
    presets: Vec<PresetInfo>,
    control: ControlState,
    holder: Option<JausId>,
    requests: HashMap<JausId, u8>,
    link_live: bool,
    last_heard: Option<f64>,
    intervals: VecDeque<f64>,
    gap_open: bool,
}

/// Commands an OCU sends to the arm it works with (they select it when nothing else has).
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

/// What only the commanded component sends: answers about control and status, events and
/// manipulator reports (they select it when nothing else has; a capture started after the
/// specification was exchanged still shows the arm's data).
fn is_answer(m: &Message) -> bool {
    matches!(
        m,
        Message::ConfirmControl(_)
            | Message::RejectControl(_)
            | Message::ReportControl(_)
            | Message::Event(_)
    ) || reports::report_update(0.0, m).is_some()
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

impl Observer {
    /// An observer whose times are seconds since `start_ns` (ns since the Unix epoch).
    pub fn new(start_ns: u64) -> Self {
        Self {
            start_ns,
            stats: ObserverStats::default(),
            counts: HashMap::new(),
            peers: HashMap::new(),
            endpoint: Endpoint::promiscuous(MAX_TRACKED),
            decode_errors: 0,
            contexts: HashMap::new(),
            components: HashMap::new(),
            events: HashMap::new(),
            selected: None,
            selected_by_spec: false,
            presets: Vec::new(),
            control: ControlState::Released,
            holder: None,
            requests: HashMap::new(),
            link_live: false,
            last_heard: None,
            intervals: VecDeque::new(),
            gap_open: false,
        }
    }

    /// The time origin, ns since the Unix epoch.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Seconds since the time origin of a record time.
    pub fn time(&self, t_ns: u64) -> f64 {
        (i128::from(t_ns) - i128::from(self.start_ns)) as f64 / 1e9
    }

    /// The component whose reports are applied.
    pub fn selected(&self) -> Option<JausId> {
        self.selected
    }

    fn count(&mut self, name: &str) {
        match self.stats.messages.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.stats.messages.insert(name.to_string(), 1);
            }
        }
    }

    /// Observes one datagram; pushes the updates it implies onto `out`.
    pub fn observe(&mut self, rec: &WireRecord, out: &mut Vec<Update>) {
        let t = self.time(rec.t_ns);
        self.stats.datagrams += 1;
        *self.peers.entry(rec.peer).or_insert(0) += 1;
        self.check_silence(t, out);
        self.take_in(t, rec, out);
        // Foreign versions count as malformed here: a recording of ours holds only JUDP v2.
        let e = self.endpoint.stats();
        self.stats.malformed = e.malformed + e.foreign_version + self.decode_errors;
        self.stats.duplicates = e.duplicates;
        self.stats.tolerated.ack_payload = e.ack_payloads;
    }

    /// Every block of one record through the endpoint, then to the decoder.
    fn take_in(&mut self, t: f64, rec: &WireRecord, out: &mut Vec<Update>) {
        let Ok(mut intake) = self.endpoint.receive(t, rec.peer, &rec.bytes) else {
            return;
        };
        while let Some(item) = intake.next(&mut self.endpoint) {
            let Ok(inbound) = item else { break };
            let h = inbound.header;
            match inbound.kind {
                InboundKind::NotForUs | InboundKind::Fragment => {}
                // A promiscuous endpoint has no ID of its own: never an echo.
                InboundKind::BadSource
                | InboundKind::Duplicate
                | InboundKind::OwnEcho
                | InboundKind::SameId => continue,
                InboundKind::Ack => self.count("ack"),
                InboundKind::Message(bytes) => {
                    let parsed = {
                        let ctx = self.contexts.get(&h.source).unwrap_or(&DecodeContext::NONE);
                        Message::parse_with(&bytes, ctx)
                    };
                    // §9 C10: an emergency stop with a short code is still one.
                    let parsed: Result<Message, crate::jaus::DecodeError> = parsed.or_else(|e| {
                        let m = short_emergency(&bytes).ok_or(e)?;
                        self.stats.tolerated.short_emergency_code += 1;
                        Ok(m)
                    });
                    match parsed {
                        Ok(m) => {
                            self.count_message(&m);
                            self.message(t, &h, rec, m, out);
                        }
                        Err(_) => self.decode_errors += 1,
                    }
                }
            }
            if self.selected == Some(h.source) {
                self.heard_selected(t, out);
            }
        }
    }

    /// Counts `m` in the summary: an Event by the report it carries ("how many joint
    /// positions" is what a summary reader asks). Names are made once per message ID (this runs
    /// for every datagram of an hour at 1 kHz).
    fn count_message(&mut self, m: &Message) {
        let key = match m {
            Message::Event(e) => (true, e.report_message.message_id()),
            other => (false, Some(other.id())),
        };
        self.counts
            .entry(key)
            .or_insert_with(|| {
                let name = key.1.map_or_else(
                    || "?".to_string(),
                    |id| message_name(id).map_or_else(|| format!("0x{id:04X}"), str::to_string),
                );
                let label = if key.0 {
                    format!("Event({name})")
                } else {
                    name
                };
                (label, 0)
            })
            .1 += 1;
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
                for listed in reports::listed_services(src, r) {
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
                    out.push(Update::Component { t, info });
                }
            }
            Message::ReportManipulatorSpecifications(r) => {
                let spec = reports::arm_spec(r);
                let ctx = reports::decode_context(&spec);
                *bounded_entry(&mut self.contexts, src, DecodeContext::default) = ctx;
                self.select(t, src, true, out);
                out.push(Update::Specification { t, spec });
                return;
            }
            _ => {}
        }
        if self.selected.is_none() {
            if is_command(&m) && !dst.is_wildcard() && !dst.has_reserved_zero() {
                self.select(t, dst, false, out);
            } else if is_answer(&m) {
                self.select(t, src, false, out);
            }
        }
        let Some(sel) = self.selected else { return };
        if src == sel {
            self.sent_by_selected(t, dst, m, out);
        } else if dst == sel {
            self.sent_to_selected(t, src, &m, out);
        }
    }

    fn select(&mut self, t: f64, id: JausId, by_spec: bool, out: &mut Vec<Update>) {
        if self.selected == Some(id) {
            self.selected_by_spec |= by_spec;
            return;
        }
        self.selected = Some(id);
        self.selected_by_spec = by_spec;
        self.presets.clear();
        self.control = ControlState::Released;
        self.holder = None;
        self.requests.clear();
        self.link_live = false;
        self.last_heard = None;
        self.intervals.clear();
        self.gap_open = false;
        out.push(Update::Selected { t, id: id.into() });
        out.push(Update::Link {
            t,
            state: LinkState::Connecting,
        });
    }

    fn sent_by_selected(&mut self, t: f64, to: JausId, m: Message, out: &mut Vec<Update>) {
        let Some(sel) = self.selected else { return };
        match m {
            Message::ReportToolOffset(r) => out.push(Update::ToolOffset {
                t,
                point: [r.x, r.y, r.z],
            }),
            Message::ReportPresetPoseCapabilities(r) => {
                reports::merge_preset_capabilities(&mut self.presets, &r);
                out.push(Update::Presets {
                    t,
                    presets: self.presets.clone(),
                });
            }
            Message::ReportPresetPoseSpecifications(r) => {
                reports::merge_preset_specifications(&mut self.presets, &r, sel);
                out.push(Update::Presets {
                    t,
                    presets: self.presets.clone(),
                });
            }
            Message::Event(e) => {
                let seq = bounded_entry(&mut self.events, (sel, to, e.event_id), || EventSeq {
                    last: e.sequence_number.wrapping_sub(1),
                    old_in_a_row: 0,
                });
                // The live client's rule: an event not newer than the last applied is
                // reordering, unless three come in a row (then 128+ were lost).
                let d = e.sequence_number.wrapping_sub(seq.last);
                if (d == 0 || d > 128) && seq.old_in_a_row < 2 {
                    seq.old_in_a_row += 1;
                    return;
                }
                seq.old_in_a_row = 0;
                seq.last = e.sequence_number;
                let ctx = self.contexts.get(&sel).unwrap_or(&DecodeContext::NONE);
                match e.report_message.decode(ctx) {
                    Ok(report) => {
                        if let Some((_, u)) = reports::report_update(t, &report) {
                            out.push(u);
                        }
                    }
                    Err(_) => self.stats.malformed += 1,
                }
            }
            Message::ConfirmEventRequest(c) if c.confirmed_periodic_rate == 0.0 => {
                // Cancelled: a new event with this ID starts its own numbering.
                self.events.remove(&(sel, to, c.event_id));
            }
            Message::ConfirmControl(c) => {
                let authority = self.requests.remove(&to).unwrap_or(0);
                if c.response_code == ConfirmControlCode::ControlAccepted {
                    let state = ControlState::Held { authority };
                    if self.control != state || self.holder != Some(to) {
                        self.set_control(
                            t,
                            state,
                            Some(to),
                            format!("control granted to {to} (authority {authority})"),
                            out,
                        );
                    }
                } else {
                    let label = format!("control refused to {to}: {}", c.response_code);
                    if self.holder == Some(to) && self.control != ControlState::Released {
                        self.set_control(t, ControlState::Released, None, label, out);
                    } else {
                        out.push(Update::Mark {
                            t,
                            kind: MarkKind::Control,
                            label,
                        });
                    }
                }
            }
            Message::RejectControl(r) => {
                if self.holder == Some(to) && self.control != ControlState::Released {
                    let label = if r.response_code == RejectControlCode::ControlReleased {
                        format!("control released ({to})")
                    } else {
                        format!("control lost by {to}: {}", r.response_code)
                    };
                    self.set_control(t, ControlState::Released, None, label, out);
                }
            }
            Message::ReportControl(r) => {
                // Who holds control, as the arm said it (the live client's Controller update):
                // a controller is known when it asked for control in this recording.
                let (id, _) = reports::controller_of(&r, |id| {
                    self.requests.contains_key(&id) || self.holder == Some(id)
                });
                out.push(Update::Controller {
                    t,
                    controller: Controller {
                        id: id.map(Into::into),
                        authority: if id.is_some() { r.authority_code } else { 0 },
                    },
                });
            }
            Message::ReportTransitionCompleted(r) => out.push(Update::CommandOutcome {
                t,
                command: CommandKind::GoToPreset,
                outcome: if r.transition_status == TransitionStatus::Completed {
                    Outcome::Completed
                } else {
                    Outcome::Failed(r.transition_status.to_string())
                },
            }),
            report => {
                if let Some((_, u)) = reports::report_update(t, &report) {
                    out.push(u);
                }
            }
        }
    }

    fn sent_to_selected(&mut self, t: f64, from: JausId, m: &Message, out: &mut Vec<Update>) {
        let Some(sel) = self.selected else { return };
        let mark = |kind, label: String| Update::Mark { t, kind, label };
        match m {
            Message::RequestControl(r) => {
                let authority = r.authority_code;
                if self.requests.len() >= MAX_TRACKED {
                    self.requests.clear();
                }
                self.requests.insert(from, authority);
                let keep_alive = self.holder == Some(from)
                    && matches!(
                        self.control,
                        ControlState::Held { .. } | ControlState::Requested
                    );
                if keep_alive {
                    return;
                }
                let label = format!("RequestControl from {from} (authority {authority})");
                if self.control == ControlState::Released {
                    self.set_control(t, ControlState::Requested, Some(from), label, out);
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
                out.push(mark(
                    MarkKind::Emergency,
                    format!("SetEmergency from {from}"),
                ));
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
                let pose = match self.presets.iter().find(|p| p.id == r.pose_id) {
                    Some(p) => format!("{} ({})", p.name, r.pose_id),
                    None => format!("pose {}", r.pose_id),
                };
                out.push(mark(
                    MarkKind::Transition,
                    format!("SetCurrentPose to {pose} from {from}"),
                ));
            }
            Message::CancelEvent(c) => {
                self.events.remove(&(sel, from, c.event_id));
            }
            _ => {}
        }
    }

    /// A control change: the mark that says who, then the state (the session keeps one mark
    /// for the two).
    fn set_control(
        &mut self,
        t: f64,
        state: ControlState,
        holder: Option<JausId>,
        label: String,
        out: &mut Vec<Update>,
    ) {
        self.control = state;
        self.holder = holder;
        out.push(Update::Mark {
            t,
            kind: MarkKind::Control,
            label,
        });
        out.push(Update::Control { t, state });
    }

    /// Silence longer than this from the selected component is a gap, s.
    fn gap_threshold(&self) -> f64 {
        if self.intervals.is_empty() {
            return GAP_S;
        }
        let mut v: Vec<f64> = self.intervals.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2] * GAP_MEDIANS).max(GAP_S)
    }

    /// Declares the link lost once time (any record's) has passed the gap threshold.
    fn check_silence(&mut self, t: f64, out: &mut Vec<Update>) {
        let Some(last) = self.last_heard else { return };
        // The threshold is at least GAP_S: skip the median on every datagram.
        if self.gap_open || t - last <= GAP_S {
            return;
        }
        let threshold = self.gap_threshold();
        if t - last > threshold {
            self.gap_open = true;
            self.link_live = false;
            out.push(Update::Link {
                t: last + threshold,
                state: LinkState::Lost,
            });
        }
    }

    fn heard_selected(&mut self, t: f64, out: &mut Vec<Update>) {
        if let Some(last) = self.last_heard {
            let dt = t - last;
            // The threshold is at least GAP_S: the median is only needed past it (this runs
            // for every datagram from the arm).
            let threshold = if dt > GAP_S {
                self.gap_threshold()
            } else {
                GAP_S
            };
            if dt > threshold {
                self.close_gap(last, t, threshold, "", out);
            } else if dt > 0.0 {
                if self.intervals.len() >= INTERVALS {
                    self.intervals.pop_front();
                }
                self.intervals.push_back(dt);
            }
        }
        if !self.link_live {
            self.link_live = true;
            out.push(Update::Link {
                t,
                state: LinkState::Live,
            });
        }
        self.gap_open = false;
        self.last_heard = Some(self.last_heard.map_or(t, |l| l.max(t)));
    }

    fn close_gap(
        &mut self,
        last: f64,
        end: f64,
        threshold: f64,
        note: &str,
        out: &mut Vec<Update>,
    ) {
        let at = last + threshold;
        if !self.gap_open {
            self.link_live = false;
            out.push(Update::Link {
                t: at,
                state: LinkState::Lost,
            });
        }
        self.gap_open = true;
        let who = self
            .selected
            .map(|s| format!(" from {s}"))
            .unwrap_or_default();
        out.push(Update::Mark {
            t: at,
            kind: MarkKind::Gap,
            label: format!("no traffic{who} for {:.1} s{note}", end - last),
        });
        self.stats.gaps.push((last, end));
    }

    /// The end of the input at `end_ns`: closes a trailing gap (once).
    pub fn finish(&mut self, end_ns: u64, out: &mut Vec<Update>) {
        let end = self.time(end_ns);
        let Some(last) = self.last_heard else { return };
        let threshold = self.gap_threshold();
        if end - last > threshold {
            self.close_gap(last, end, threshold, " (to the end)", out);
            // Closed: a later call or record does not report it again.
            self.last_heard = None;
        }
    }

    /// What has been seen so far.
    pub fn stats(&self) -> ObserverStats {
        let mut stats = self.stats.clone();
        for (label, n) in self.counts.values() {
            *stats.messages.entry(label.clone()).or_insert(0) += n;
        }
        stats.peers.extend(self.peers.iter().map(|(a, n)| (*a, *n)));
        stats
    }
}
