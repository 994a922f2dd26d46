//! Latched state: the last raw datagram of every state-bearing message the OCU has received
//! (or sent, for its own control requests), kept per peer component, so that a recording
//! started in the middle of a session begins with everything a reader needs to show every arm
//! — the recorder writes these first ([`crate::net::tap::Tap::connect`]).
//!
//! Every arm: the state is kept per component whichever arm the OCU focuses, so a recording
//! started mid-session replays each followed arm (the replay observer follows them all) with
//! its specification, presets, control and pose from the first frame; a control request is
//! latched with the answer of the arm it went to.
//!
//! What is latched, per source component (the datagram's source ID), newest copy of each:
//!
//! | Kind | Messages | Why a replay needs it |
//! |---|---|---|
//! | identification | `ReportIdentification` | the arm's name |
//! | services | `ReportServices` | that it is a manipulator; which services it offers |
//! | specification | `ReportManipulatorSpecifications` (every fragment of it) | the arm itself: joints, limits, cylinders; selects it |
//! | tool offset | `ReportToolOffset` | the tool point |
//! | presets | `ReportPresetPoseCapabilities`, `ReportPresetPoseSpecifications` (every fragment) | the preset picker and its poses |
//! | control | `ConfirmControl` / `RejectControl` / `ReportControl` received, with our `RequestControl` / `ReleaseControl` to that component before it | who holds control and with what authority |
//! | status | `ReportStatus` (direct or inside an Event) | the management state (emergency!) |
//! | current pose | `ReportCurrentPose` (direct or inside an Event) | where the arm is among its presets |
//! | timeouts | `ReportTimeout`, `ReportEventTimeout` | the control and event timeouts |
//! | event confirmations | `ConfirmEventRequest`, one per event ID | which events were set up, at what rate |
//! | samples | joint positions, velocities, efforts, joint forces/torques, end-effector force/torque (direct or inside an Event) | the arm's pose and the gauges at the first frame, before the next sample arrives |
//!
//! Everything else (queries, heartbeats, commands other than control, ACKs) is not state.
//! Sans-I/O and bounded: at most [`MAX_SOURCES`] components, the oldest-heard forgotten
//! first, and at most [`MAX_FRAGMENTS`] datagrams of one multi-packet message.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::jaus::JausId;
use crate::jaus::judp::{AckNak, DataFlags, Datagram, Header};
use crate::jaus::message::ids;
use crate::net::tap::{Direction, WireRecord};

/// Most components whose state is latched.
pub const MAX_SOURCES: usize = 256;
/// Most datagrams of one multi-packet message kept while it arrives.
pub const MAX_FRAGMENTS: usize = 64;

/// What a latched datagram is the state of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LatchKind {
    /// `ReportIdentification`.
    Identification,
    /// `ReportServices`.
    Services,
    /// `ReportManipulatorSpecifications`.
    Specification,
    /// `ReportToolOffset`.
    ToolOffset,
    /// `ReportPresetPoseCapabilities`.
    PresetCapabilities,
    /// `ReportPresetPoseSpecifications`.
    PresetSpecifications,
    /// `ConfirmControl`, `RejectControl` or `ReportControl` from the component.
    ControlAnswer,
    /// Our `RequestControl` or `ReleaseControl` to the component.
    ControlRequest,
    /// `ReportStatus`.
    Status,
    /// `ReportCurrentPose`.
    CurrentPose,
    /// `ReportTimeout`.
    ControlTimeout,
    /// `ReportEventTimeout`.
    EventTimeout,
    /// `ConfirmEventRequest` for this event ID.
    EventConfirmation(u8),
    /// A sample of this report (message ID), direct or inside an Event.
    Sample(u16),
}

impl LatchKind {
    /// The kind of state a message carries (by message ID), if any. `direction` is the way
    /// the datagram went, seen from the OCU.
    fn of(id: u16, direction: Direction) -> Option<LatchKind> {
        Some(match (direction, id) {
            (Direction::Tx, ids::RequestControl | ids::ReleaseControl) => LatchKind::ControlRequest,
            (Direction::Tx, _) => return None,
            (_, ids::ReportIdentification) => LatchKind::Identification,
            (_, ids::ReportServices) => LatchKind::Services,
            (_, ids::ReportManipulatorSpecifications) => LatchKind::Specification,
            (_, ids::ReportToolOffset) => LatchKind::ToolOffset,
            (_, ids::ReportPresetPoseCapabilities) => LatchKind::PresetCapabilities,
            (_, ids::ReportPresetPoseSpecifications) => LatchKind::PresetSpecifications,
            (_, ids::ConfirmControl | ids::RejectControl | ids::ReportControl) => {
                LatchKind::ControlAnswer
            }
            (_, ids::ReportStatus) => LatchKind::Status,
            (_, ids::ReportCurrentPose) => LatchKind::CurrentPose,
            (_, ids::ReportTimeout) => LatchKind::ControlTimeout,
            (_, ids::ReportEventTimeout) => LatchKind::EventTimeout,
            (
                _,
                ids::ReportJointPositions
                | ids::ReportJointVelocity
                | ids::ReportJointEffort
                | ids::ReportJointForceTorques
                | ids::ReportManipulatorEndEffectorForceTorque,
            ) => LatchKind::Sample(id),
            _ => return None,
        })
    }
}

/// One component's latched datagrams.
#[derive(Debug, Default)]
struct Component {
    /// Newest datagram(s) of each kind: several for a multi-packet message.
    latest: HashMap<LatchKind, Vec<Arc<WireRecord>>>,
    /// The datagrams of a multi-packet message since its first fragment, with its ID.
    partial: Vec<Arc<WireRecord>>,
    partial_id: Option<u16>,
    /// Our last `RequestControl` or `ReleaseControl` to it, latched with the answer that follows.
    last_request: Option<Arc<WireRecord>>,
    last_heard: u64,
}

/// The latched state of every component heard.
#[derive(Debug, Default)]
pub struct Latch {
    components: HashMap<JausId, Component>,
    /// Datagrams looked at.
    seen: u64,
}

/// The message ID at the start of a payload, and for an Event the ID of the report inside
/// it (Event: ID u16, `EventID` u8, `SequenceNumber` u8, length u32, report).
fn message_id(payload: &[u8]) -> Option<u16> {
    let id = u16::from_le_bytes([*payload.first()?, *payload.get(1)?]);
    if id == ids::Event {
        let inner = payload.get(8..10)?;
        return Some(u16::from_le_bytes([inner[0], inner[1]]));
    }
    Some(id)
}

impl Latch {
    /// An empty latch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks at one datagram (received from or sent to `peer` at `t_ns`) and keeps a copy when
    /// it carries state. Costs a header walk for every datagram and a copy only for the few
    /// that are kept.
    pub fn observe(&mut self, t_ns: u64, direction: Direction, peer: SocketAddr, bytes: &[u8]) {
        self.seen += 1;
        let Ok(dg) = Datagram::new_checked(bytes) else {
            return;
        };
        let mut shared: Option<Arc<WireRecord>> = None;
        let mut record = || {
            shared
                .get_or_insert_with(|| {
                    Arc::new(WireRecord {
                        t_ns,
                        direction,
                        peer,
                        bytes: bytes.to_vec(),
                        latched: None,
                    })
                })
                .clone()
        };
        for block in dg.blocks() {
            let Ok(block) = block else { break };
            let h = Header::parse(&block.block);
            if matches!(h.ack_nak, AckNak::Ack | AckNak::Nak) {
                continue;
            }
            // The component the state belongs to: the sender of what we receive, the
            // addressee of what we send.
            let owner = match direction {
                Direction::Rx => h.source,
                Direction::Tx => h.destination,
            };
            if owner.is_wildcard() || owner.has_reserved_zero() {
                continue;
            }
            let payload = block.block.payload();
            match h.data_flags {
                DataFlags::Single => {
                    let Some(id) = message_id(payload) else {
                        continue;
                    };
                    let kind = if id == ids::ConfirmEventRequest && direction == Direction::Rx {
                        // ConfirmEventRequest: ID, RequestID u8, EventID u8, ...
                        payload.get(3).map(|&e| LatchKind::EventConfirmation(e))
                    } else {
                        LatchKind::of(id, direction)
                    };
                    match kind {
                        Some(LatchKind::ControlRequest) => {
                            let r = record();
                            self.component(owner, t_ns).last_request = Some(r);
                        }
                        Some(LatchKind::ControlAnswer) => {
                            // The answer with the request it answers: a reader learns who
                            // asked, with which authority, and that it was granted.
                            let r = record();
                            let c = self.component(owner, t_ns);
                            let pair = c.last_request.iter().cloned().chain([r]).collect();
                            c.latest.insert(LatchKind::ControlAnswer, pair);
                        }
                        Some(kind) => {
                            let r = record();
                            self.component(owner, t_ns).latest.insert(kind, vec![r]);
                        }
                        None => {}
                    }
                }
                DataFlags::First => {
                    let r = record();
                    let c = self.component(owner, t_ns);
                    c.partial = vec![r];
                    c.partial_id = message_id(payload);
                }
                DataFlags::Middle | DataFlags::Last | DataFlags::Other(_) => {
                    let r = record();
                    let c = self.component(owner, t_ns);
                    if c.partial_id.is_none() || c.partial.len() >= MAX_FRAGMENTS {
                        c.partial.clear();
                        c.partial_id = None;
                        continue;
                    }
                    c.partial.push(r);
                    if h.data_flags == DataFlags::Last {
                        let id = c.partial_id.take();
                        let parts = std::mem::take(&mut c.partial);
                        if let Some(kind) = id.and_then(|id| LatchKind::of(id, direction)) {
                            c.latest.insert(kind, parts);
                        }
                    }
                }
            }
        }
    }

    fn component(&mut self, id: JausId, t_ns: u64) -> &mut Component {
        if !self.components.contains_key(&id)
            && self.components.len() >= MAX_SOURCES
            && let Some(oldest) = self
                .components
                .iter()
                .min_by_key(|(_, c)| c.last_heard)
                .map(|(k, _)| *k)
        {
            self.components.remove(&oldest);
        }
        let c = self.components.entry(id).or_default();
        c.last_heard = t_ns;
        c
    }

    /// Every latched datagram, oldest first (a datagram that carries several kinds of state
    /// appears once).
    pub fn records(&self) -> Vec<WireRecord> {
        let mut all: Vec<&Arc<WireRecord>> = self
            .components
            .values()
            .flat_map(|c| c.latest.values().flatten())
            .collect();
        all.sort_by_key(|r| r.t_ns);
        all.dedup_by(|a, b| Arc::ptr_eq(a, b));
        all.into_iter().map(|r| WireRecord::clone(r)).collect()
    }

    /// How many datagrams are latched.
    pub fn len(&self) -> usize {
        self.records().len()
    }

    /// Whether nothing is latched.
    pub fn is_empty(&self) -> bool {
        self.components.values().all(|c| c.latest.is_empty())
    }

    /// Datagrams looked at since the latch was made.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jaus::Message;
    use crate::jaus::core::{
        ConfirmControl, ConfirmControlCode, ReportStatus, RequestControl, Status,
    };
    use crate::jaus::judp::{self, fragment};
    use crate::jaus::manipulator::QueryJointPositions;

    const SIM: JausId = JausId::new(126, 1, 10);
    const OCU: JausId = JausId::new(200, 1, 1);

    fn peer() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], judp::PORT))
    }

    fn dg(src: JausId, dst: JausId, seq: u16, m: impl Into<Message>) -> Vec<u8> {
        judp::single(&Header::new(dst, src, seq), &m.into().emit().unwrap()).unwrap()
    }

    #[test]
    fn keeps_the_newest_state_of_each_kind_and_nothing_else() {
        let mut l = Latch::new();
        let s1 = dg(
            SIM,
            OCU,
            1,
            ReportStatus {
                status: Status::Ready,
                reserved: 0,
            },
        );
        let s2 = dg(
            SIM,
            OCU,
            2,
            ReportStatus {
                status: Status::Emergency,
                reserved: 0,
            },
        );
        let q = dg(OCU, SIM, 5, QueryJointPositions);
        let rc = dg(OCU, SIM, 6, RequestControl { authority_code: 7 });
        l.observe(1, Direction::Rx, peer(), &s1);
        l.observe(2, Direction::Tx, peer(), &q);
        l.observe(3, Direction::Rx, peer(), &s2);
        l.observe(4, Direction::Tx, peer(), &rc);
        let got = l.records();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].bytes, s2, "the newest status, not the first");
        // A request is latched with the answer that follows it, not alone.
        let ok = dg(
            SIM,
            OCU,
            3,
            ConfirmControl {
                response_code: ConfirmControlCode::ControlAccepted,
            },
        );
        let keep_alive = dg(OCU, SIM, 7, RequestControl { authority_code: 7 });
        l.observe(5, Direction::Rx, peer(), &ok);
        l.observe(6, Direction::Tx, peer(), &keep_alive);
        let got = l.records();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[1].bytes, rc, "the request answered");
        assert_eq!(got[1].direction, Direction::Tx);
        assert_eq!(got[2].bytes, ok);
        assert_eq!(l.seen(), 6);
    }

    #[test]
    fn every_arm_keeps_its_own_state_and_its_own_control_answer() {
        const OTHER: JausId = JausId::new(126, 1, 11);
        let mut l = Latch::new();
        let status = |arm, seq, status| {
            dg(
                arm,
                OCU,
                seq,
                ReportStatus {
                    status,
                    reserved: 0,
                },
            )
        };
        let (a, b) = (
            status(SIM, 1, Status::Ready),
            status(OTHER, 1, Status::Emergency),
        );
        let ask_a = dg(OCU, SIM, 2, RequestControl { authority_code: 7 });
        let ask_b = dg(OCU, OTHER, 3, RequestControl { authority_code: 9 });
        let ok = |arm| {
            dg(
                arm,
                OCU,
                2,
                ConfirmControl {
                    response_code: ConfirmControlCode::ControlAccepted,
                },
            )
        };
        let (ok_a, ok_b) = (ok(SIM), ok(OTHER));
        l.observe(1, Direction::Rx, peer(), &a);
        l.observe(2, Direction::Rx, peer(), &b);
        l.observe(3, Direction::Tx, peer(), &ask_a);
        l.observe(4, Direction::Tx, peer(), &ask_b);
        // B answers first: each answer is latched with the request to its own arm.
        l.observe(5, Direction::Rx, peer(), &ok_b);
        l.observe(6, Direction::Rx, peer(), &ok_a);
        let got: Vec<Vec<u8>> = l.records().into_iter().map(|r| r.bytes).collect();
        assert_eq!(got, vec![a, b, ask_a, ask_b, ok_b, ok_a]);
        // A newer status of one arm replaces only that arm's.
        let b2 = status(OTHER, 4, Status::Ready);
        l.observe(7, Direction::Rx, peer(), &b2);
        let got: Vec<Vec<u8>> = l.records().into_iter().map(|r| r.bytes).collect();
        assert_eq!(got.len(), 6);
        assert!(got.contains(&b2) && !got.contains(&status(OTHER, 1, Status::Emergency)));
    }

    #[test]
    fn a_multi_packet_message_is_latched_whole_once_complete() {
        let mut l = Latch::new();
        let message = {
            let mut m = ids::ReportManipulatorSpecifications.to_le_bytes().to_vec();
            m.extend(std::iter::repeat_n(7u8, 3000));
            m
        };
        let parts = fragment(&Header::new(OCU, SIM, 10), &message, 1000);
        for (i, (h, p)) in parts.iter().enumerate() {
            let bytes = judp::single(h, p).unwrap();
            l.observe(10 + i as u64, Direction::Rx, peer(), &bytes);
            if i + 1 < parts.len() {
                assert!(l.is_empty(), "nothing before the last fragment");
            }
        }
        assert_eq!(l.records().len(), parts.len());
    }

    #[test]
    fn forgets_the_oldest_component_past_the_bound() {
        let mut l = Latch::new();
        for n in 0..=MAX_SOURCES as u16 {
            let id = JausId::new(1 + n, 1, 1);
            let s = dg(
                id,
                OCU,
                1,
                ReportStatus {
                    status: Status::Ready,
                    reserved: 0,
                },
            );
            l.observe(u64::from(n), Direction::Rx, peer(), &s);
        }
        assert_eq!(l.records().len(), MAX_SOURCES);
        assert!(l.records().iter().all(|r| r.t_ns > 0), "the oldest went");
    }

    #[test]
    fn garbage_is_looked_at_and_kept_out() {
        let mut l = Latch::new();
        l.observe(1, Direction::Rx, peer(), &[2, 0, 0xff]);
        l.observe(2, Direction::Rx, peer(), &[]);
        assert!(l.is_empty());
        assert_eq!(l.seen(), 2);
    }
}
