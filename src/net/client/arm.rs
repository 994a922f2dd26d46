//! The selected arm: the protocol state kept for it (replaced whole when another arm is
//! selected), its setup queries until answered (specification, tool offset, presets, control
//! and event timeouts), its link (live, lost after a silence, set up again when heard), and
//! its reports turned into updates.

use std::collections::HashMap;

use super::arm_jog::ArmJog;
use super::estop::StopIntent;
use super::pending::{Pending, Transition};
use super::sub::{STALE_DWELL, Sub, SubState};
use super::{Client, Output};
use crate::jaus::core::{QueryEventTimeout, QueryHeartbeatPulse, QueryStatus, QueryTimeout};
use crate::jaus::iop::{
    QueryCurrentPose, QueryPresetPoseCapabilities, QueryPresetPoseSpecifications,
};
use crate::jaus::manipulator::{QueryManipulatorSpecifications, QueryToolOffset};
use crate::jaus::{DecodeContext, JausId, Message};
use crate::model::arm::ArmSpec;
use crate::model::update::{
    ArmFact, ComponentId, ControlLoss, ControlState, Controller, LinkState, ManagementState,
    PoseState, PresetInfo, Signal,
};
use crate::net::reports;

/// Seconds between the re-probes (`QueryStatus`) of a lost arm. With the discovery round
/// (every 2 s, also to its address when it is a `--connect` one) that is at most one query a
/// second towards a silent arm: on a radio link, every query of a silent arm is airtime.
pub(super) const LOST_PROBE_PERIOD: f64 = 2.0;

/// How long after a status was applied a status from an older JUDP block is taken as
/// reordered in flight (and not applied), s. Past it the numbers may have started afresh.
pub(super) const REORDER_WINDOW: f64 = 2.0;

/// How far behind the last applied status's sequence number a status counts as reordered.
pub(super) const REORDER_BACK: u16 = 256;

/// Most addresses asked at once whether a silent arm moved there (a spoofer sending from
/// many must not make us query each).
pub(super) const MOVE_PROBES: usize = 4;

/// A query asked a few times until answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ask {
    pub(super) answered: bool,
    pub(super) next: f64,
    pub(super) tries: u8,
}

impl Ask {
    pub(super) const NEW: Ask = Ask {
        answered: false,
        next: f64::NEG_INFINITY,
        tries: 0,
    };
}

/// The protocol state for the selected manipulator: what has been asked and answered, its
/// subscriptions, control and pending commands. Replaced whole when another arm is selected.
#[derive(Debug)]
pub(super) struct FollowedArm {
    pub(super) id: JausId,
    pub(super) link: LinkState,
    pub(super) spec: Option<ArmSpec>,
    pub(super) ctx: DecodeContext,
    pub(super) spec_next: f64,
    pub(super) tool: Ask,
    pub(super) capabilities: Ask,
    pub(super) preset_specs: Ask,
    pub(super) control_timeout_ask: Ask,
    pub(super) event_timeout_ask: Ask,
    pub(super) presets: Vec<PresetInfo>,
    pub(super) control_timeout: Option<u8>,
    pub(super) event_timeout_min: Option<u8>,
    pub(super) subs: Vec<Sub>,
    pub(super) last_heard: f64,
    pub(super) next_heartbeat: f64,
    pub(super) control: ControlState,
    pub(super) wanted_authority: Option<u8>,
    pub(super) control_pending: Option<Pending>,
    pub(super) control_renew_at: f64,
    pub(super) status_pending: Vec<Pending>,
    pub(super) transition: Option<Transition>,
    /// The management state last reported (`None` until the first `ReportStatus`).
    pub(super) status: Option<ManagementState>,
    /// When the status is next queried while unknown.
    pub(super) status_query_next: f64,
    /// The current pose last reported.
    pub(super) pose: Option<PoseState>,
    /// When the pose is next queried while it says "moving" and no move of ours is under way
    /// (the every-change event that ends a move may be lost).
    pub(super) pose_query_next: f64,
    /// A move completed (by its transition report) at this pose, with the pose queries left
    /// until a pose report says so (its every-change event may be lost).
    pub(super) pose_expected: Option<(u8, u8)>,
    pub(super) last_sample: HashMap<Signal, f64>,
    pub(super) stale: HashMap<Signal, bool>,
    pub(super) cancelled_unknown: HashMap<u8, f64>,
    pub(super) live_announced: bool,
    /// When each signal's stale flag last changed (hysteresis: at most once per
    /// `STALE_DWELL`).
    pub(super) stale_changed: HashMap<Signal, f64>,
    /// When each signal's staleness is next judged (always later than the judgement that set
    /// it: a check left in the past would make the network thread spin).
    pub(super) stale_check: HashMap<Signal, f64>,
    /// While the link is lost: when the arm is next probed.
    pub(super) probe_next: f64,
    /// Who holds control, as the arm last reported it.
    pub(super) controller: Option<Controller>,
    /// When we last sent a `RequestControl` (a control answer long after it was not ours).
    pub(super) last_control_request: f64,
    /// When we last sent a `ReleaseControl`.
    pub(super) last_control_release: f64,
    /// When the arm last confirmed our control (a keep-alive answered).
    pub(super) last_control_confirmed: f64,
    /// When `QueryControl` is next sent (who holds control is asked now and then: the live
    /// area says "held by …" from the arm's answer).
    pub(super) control_query_next: f64,
    /// Control we held was lost (`RejectControl`) at this time; the reason waits for the
    /// arm's `ReportControl`.
    pub(super) loss_pending: Option<f64>,
    /// Our request was refused at this time with this code; the outcome waits for the
    /// arm's `ReportControl` to say who holds control.
    pub(super) refusal_pending: Option<(f64, String)>,
    /// `QueryControl` was sent a second time for the refusal or loss waiting for its reason.
    pub(super) reason_asked_again: bool,
    /// The authority of our last request (said in a refusal).
    pub(super) requested_authority: Option<u8>,
    /// Our own ID in the domain's terms (a `ReportControl` naming it is us).
    pub(super) controller_self: ComponentId,
    /// The authority we asked for before the current one, and until when a report of it
    /// may still be in flight (not a sign of another client under our ID).
    pub(super) previous_authority: Option<(u8, f64)>,
    /// Why control we held was last lost (cleared when held again): a refusal for want of
    /// control names the taker.
    pub(super) last_loss: Option<ControlLoss>,
    /// Addresses asked whether the arm moved there (while silent where it was found), with
    /// when; at most [`MOVE_PROBES`].
    pub(super) move_probes: Vec<(std::net::SocketAddr, f64)>,
    /// The jog of this arm (`jog`): its stream, last input and the positions it builds on.
    pub(super) jog: ArmJog,
    /// Our emergency stop, sent and not yet confirmed (`estop`).
    pub(super) stop: Option<StopIntent>,
    /// When the last status was received (`NEG_INFINITY`: never).
    pub(super) status_at: f64,
    /// The JUDP sequence number of the block whose status was last applied, and when: a
    /// status from an older block arriving after it (reordered in flight) is not applied.
    pub(super) status_seq: Option<(u16, f64)>,
    /// Another component answering our discovery with this arm's ID (`address`).
    pub(super) address_conflict: Option<super::address::AddressConflict>,
    /// A block from the arm was taken where it is followed: `false` while it is followed at
    /// an address it was only placed at (named before it was found).
    pub(super) heard: bool,
}

impl FollowedArm {
    pub(super) fn new(id: JausId, me: JausId, now: f64) -> Self {
        Self {
            id,
            link: LinkState::Connecting,
            spec: None,
            ctx: DecodeContext::NONE,
            spec_next: now,
            tool: Ask::NEW,
            capabilities: Ask::NEW,
            preset_specs: Ask::NEW,
            control_timeout_ask: Ask::NEW,
            event_timeout_ask: Ask::NEW,
            presets: Vec::new(),
            control_timeout: None,
            event_timeout_min: None,
            subs: Vec::new(),
            last_heard: now,
            next_heartbeat: now,
            control: ControlState::Released,
            wanted_authority: None,
            control_pending: None,
            control_renew_at: f64::INFINITY,
            status_pending: Vec::new(),
            transition: None,
            status: None,
            // Asked at once with the specification, and again until known: the every-change
            // status event may not deliver it (its first report lost).
            status_query_next: now,
            pose: None,
            pose_query_next: now,
            pose_expected: None,
            last_sample: HashMap::new(),
            stale: HashMap::new(),
            cancelled_unknown: HashMap::new(),
            live_announced: false,
            stale_changed: HashMap::new(),
            stale_check: HashMap::new(),
            probe_next: now,
            controller: None,
            last_control_request: f64::NEG_INFINITY,
            last_control_release: f64::NEG_INFINITY,
            last_control_confirmed: f64::NEG_INFINITY,
            control_query_next: now,
            loss_pending: None,
            refusal_pending: None,
            reason_asked_again: false,
            requested_authority: None,
            controller_self: me.into(),
            previous_authority: None,
            last_loss: None,
            move_probes: Vec::new(),
            jog: ArmJog::default(),
            stop: None,
            status_at: f64::NEG_INFINITY,
            status_seq: None,
            address_conflict: None,
            heard: false,
        }
    }

    pub(super) fn renew_interval(&self) -> f64 {
        // Half the peer's event timeout; assume the v1.1 minimum of one minute when unknown.
        match self.event_timeout_min {
            Some(0) => 600.0,
            Some(m) => f64::from(m) * 30.0,
            None => 20.0,
        }
    }

    /// Whether the current pose is to be queried: it says "moving" with no move of ours under
    /// way, or a move of ours completed and no report has said so yet.
    pub(super) fn pose_wanted(&self) -> bool {
        self.transition.is_none()
            && (matches!(self.pose, Some(PoseState::Moving { .. })) || self.pose_expected.is_some())
    }

    /// Since when a refusal or a loss of control waits for the arm to say who holds control
    /// (infinite when nothing waits).
    pub(super) fn reason_waiting_since(&self) -> f64 {
        self.refusal_pending
            .as_ref()
            .map(|r| r.0)
            .into_iter()
            .chain(self.loss_pending)
            .fold(f64::INFINITY, f64::min)
    }

    pub(super) fn control_renew_interval(&self) -> f64 {
        match self.control_timeout {
            Some(0) => 5.0,
            Some(s) => (f64::from(s) / 3.0).max(0.2),
            // Not known yet: a third of the shortest timeout JAUS can state (1 s, the field
            // counts whole seconds), so control never lapses while the answer is on its way.
            None => 1.0 / 3.0,
        }
    }
}

impl Client {
    /// The selected arm was heard: a lost link starts over.
    pub(super) fn arm_heard(&mut self, now: f64, id: JausId, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        if s.id != id {
            return;
        }
        s.last_heard = now;
        s.heard = true;
        if s.link == LinkState::Lost {
            // Back (same or new process): start over, keeping our intent to hold control.
            s.link = LinkState::Connecting;
            s.spec = None;
            s.spec_next = now;
            s.subs.clear();
            s.tool = Ask::NEW;
            s.control_timeout_ask = Ask::NEW;
            s.event_timeout_ask = Ask::NEW;
            s.live_announced = false;
            s.stale_changed.clear();
            s.stale_check.clear();
            s.control_query_next = now;
            s.control = ControlState::Released;
            if s.wanted_authority.is_some() {
                s.control = ControlState::Requested;
                s.control_renew_at = now;
            }
            out.fact(ArmFact::Link {
                t: now,
                state: LinkState::Connecting,
            });
            out.fact(ArmFact::Control {
                t: now,
                state: s.control,
            });
            // A stop pressed while it was silent goes out before anything else.
            self.stop_on_return(now, out);
        }
    }

    /// The selected arm's timers: its link lost after a silence, the heartbeat, the
    /// specification until answered, then the other setup queries (a few tries each). Queries
    /// are appended to `to_send`.
    pub(super) fn arm_timers(&mut self, now: f64, to_send: &mut Vec<Message>, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        // Liveness of the selected manipulator.
        // Silence counts only while this process was awake to hear (`Client::awake_since`).
        if s.link != LinkState::Lost
            && now - s.last_heard.max(self.awake_since) > self.cfg.lost_after
        {
            s.link = LinkState::Lost;
            s.live_announced = false;
            s.probe_next = now;
            out.fact(ArmFact::Link {
                t: now,
                state: LinkState::Lost,
            });
            if matches!(s.control, ControlState::Held { .. }) {
                // The arm's answers no longer say we hold control: not shown as held. It is
                // asked for again when the arm is heard (if we still want it).
                s.control = if s.wanted_authority.is_some() {
                    ControlState::Requested
                } else {
                    ControlState::Released
                };
                out.fact(ArmFact::Control {
                    t: now,
                    state: s.control,
                });
                out.fact(ArmFact::ControlLost {
                    t: now,
                    reason: ControlLoss::LinkLost,
                });
            }
        }
        if s.link == LinkState::Lost {
            // Silent: one slow re-probe instead of the heartbeat, setup queries, subscriptions
            // and keep-alives; everything starts again at once when the arm is heard.
            if now >= s.probe_next {
                s.probe_next = now + LOST_PROBE_PERIOD;
                to_send.push(QueryStatus.into());
            }
            return;
        }
        if now >= s.next_heartbeat {
            s.next_heartbeat = now + self.cfg.heartbeat_period;
            to_send.push(QueryHeartbeatPulse.into());
        }
        if s.status.is_none() && now >= s.status_query_next {
            s.status_query_next = now + self.cfg.retry / 2.0;
            to_send.push(QueryStatus.into());
        }
        if s.pose_wanted() && now >= s.pose_query_next {
            s.pose_query_next = now + self.cfg.retry;
            if let Some((_, left)) = &mut s.pose_expected {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    s.pose_expected = None;
                }
            }
            to_send.push(QueryCurrentPose.into());
        }
        if s.spec.is_none() && now >= s.spec_next {
            s.spec_next = now + self.cfg.retry;
            to_send.push(
                QueryManipulatorSpecifications {
                    presence_vector: 0x03,
                }
                .into(),
            );
        }
        if s.spec.is_some() {
            let retry = self.cfg.retry;
            let peer = self.endpoint.peer(id);
            let offers = |uri: &str| peer.is_none_or(|p| p.data.offers(uri));
            let presets = offers("urn:jaus:jss:iop:PresetPose");
            let tool = offers("urn:jaus:jss:manipulator:ManipulatorToolOffsetService");
            let asks: [(&mut Ask, Message, bool); 5] = [
                (&mut s.tool, QueryToolOffset.into(), tool),
                (
                    &mut s.capabilities,
                    QueryPresetPoseCapabilities.into(),
                    presets,
                ),
                (
                    &mut s.preset_specs,
                    QueryPresetPoseSpecifications.into(),
                    presets,
                ),
                (&mut s.control_timeout_ask, QueryTimeout.into(), true),
                (&mut s.event_timeout_ask, QueryEventTimeout.into(), true),
            ];
            for (ask, m, wanted) in asks {
                if wanted && !ask.answered && ask.tries < 5 && now >= ask.next {
                    ask.tries += 1;
                    ask.next = now + retry * 2.0;
                    to_send.push(m);
                }
            }
        }
    }

    /// When the selected arm's timers next need a tick: never earlier than what they would
    /// act on (every time here is one a timer moves forward when it fires).
    pub(super) fn arm_deadline(&self, s: &FollowedArm) -> f64 {
        let mut d = self
            .command_deadline(s)
            .min(s.stop.as_ref().map_or(f64::INFINITY, |st| st.next))
            .min(s.jog.next_due().unwrap_or(f64::INFINITY))
            .min(Self::address_deadline(s));
        if s.link == LinkState::Lost {
            // Only the re-probe, and the verdicts of commands already sent.
            return d.min(s.probe_next);
        }
        d = d
            .min(s.next_heartbeat)
            .min(s.last_heard.max(self.awake_since) + self.cfg.lost_after + 1e-3)
            .min(s.control_renew_at)
            .min(s.control_query_next);
        if s.spec.is_none() {
            d = d.min(s.spec_next);
        }
        if s.status.is_none() {
            d = d.min(s.status_query_next);
        }
        if s.pose_wanted() {
            d = d.min(s.pose_query_next);
        }
        // The setup asks after the specification (a few tries each, `retry * 2` apart) ride
        // on the heartbeat's ticks.
        d.min(self.subscription_deadline(s))
    }

    /// The selected arm's answers to setup queries, and its reports.
    pub(super) fn setup_message(&mut self, now: f64, from: JausId, m: Message, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        match m {
            Message::ReportManipulatorSpecifications(r) => {
                let spec = reports::arm_spec(&r);
                s.ctx = reports::decode_context(&spec);
                let first = s.spec.is_none();
                s.spec = Some(spec.clone());
                out.fact(ArmFact::Specification { t: now, spec });
                if first {
                    self.start_subscriptions(now, out);
                }
            }
            Message::ReportToolOffset(t) => {
                s.tool.answered = true;
                s.jog.tool_point = [t.x, t.y, t.z];
                out.fact(ArmFact::ToolOffset {
                    t: now,
                    point: [t.x, t.y, t.z],
                });
            }
            Message::ReportPresetPoseCapabilities(r) => {
                s.capabilities.answered = true;
                reports::merge_preset_capabilities(&mut s.presets, &r);
                out.fact(ArmFact::Presets {
                    t: now,
                    presets: s.presets.clone(),
                });
            }
            Message::ReportPresetPoseSpecifications(r) => {
                s.preset_specs.answered = true;
                reports::merge_preset_specifications(&mut s.presets, &r, from);
                out.fact(ArmFact::Presets {
                    t: now,
                    presets: s.presets.clone(),
                });
            }
            Message::ReportTimeout(r) => {
                s.control_timeout_ask.answered = true;
                s.control_timeout = Some(r.timeout);
                // The keep-alive scheduled before the timeout was known is moved to a third
                // of it from the last request (the arm's timer runs from what it received):
                // a 1 s timeout must not wait for a renewal scheduled from a guess.
                if s.control_renew_at.is_finite() {
                    s.control_renew_at = s
                        .control_renew_at
                        .min(s.last_control_request + s.control_renew_interval());
                }
            }
            Message::ReportEventTimeout(r) => {
                s.event_timeout_ask.answered = true;
                s.event_timeout_min = Some(r.timeout);
                let interval = s.renew_interval();
                for sub in &mut s.subs {
                    if let SubState::Active { renew_at, .. } = &mut sub.state {
                        *renew_at = renew_at.min(now + interval);
                    }
                }
            }
            Message::ReportHeartbeatPulse(_) => {}
            report => self.apply_report(now, report, out),
        }
    }

    pub(super) fn sample(&mut self, now: f64, signal: Signal, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        s.last_sample.insert(signal, now);
        if s.stale.get(&signal).copied().unwrap_or(false) {
            let changed = s
                .stale_changed
                .get(&signal)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            if now - changed >= STALE_DWELL {
                s.stale.insert(signal, false);
                s.stale_changed.insert(signal, now);
                s.stale_check.remove(&signal);
                out.fact(ArmFact::Stale {
                    t: now,
                    signal,
                    stale: false,
                });
            } else {
                // Fresh again, said when the flag's dwell time is over (hysteresis).
                s.stale_check.insert(signal, changed + STALE_DWELL);
            }
        } else {
            s.stale_check.remove(&signal);
        }
        // Live once the specification is known too (a status may be asked for before it).
        if !s.live_announced && s.link != LinkState::Lost && s.spec.is_some() {
            s.live_announced = true;
            s.link = LinkState::Live;
            out.fact(ArmFact::Link {
                t: now,
                state: LinkState::Live,
            });
        }
    }

    /// Whether the status in the block being handled was sent before the one last applied:
    /// its JUDP sequence number is at most [`REORDER_BACK`] behind, within
    /// [`REORDER_WINDOW`] of the last. The wire reference (§4.5) promises no numbering
    /// scheme; every one it knows counts upward per sender (per client component, per pair,
    /// per interface), so a status event and an answer to a query are in order. Tolerant of
    /// others (UNCONFIRMED): a sender that numbers otherwise has a status held back only when
    /// its number lands in that small band, and an arm that restarted numbers afresh is
    /// trusted again after the window.
    fn status_reordered(&mut self, now: f64) -> bool {
        let Some(seq) = self.block_seq else {
            return false;
        };
        let Some(s) = &mut self.arm else { return false };
        if let Some((last, at)) = s.status_seq
            && now - at < REORDER_WINDOW
            && (1..=REORDER_BACK).contains(&last.wrapping_sub(seq))
        {
            return true;
        }
        s.status_seq = Some((seq, now));
        false
    }

    pub(super) fn apply_report(&mut self, now: f64, report: Message, out: &mut Output) {
        let (signal, fact) = match reports::report_update(now, report) {
            Ok(update) => update,
            Err(other) => {
                if !reports::is_ignored_report(&other) {
                    self.stats.unexpected += 1;
                }
                return;
            }
        };
        // The update first: an outcome follows the state it is judged by.
        let status = match &fact {
            ArmFact::Status { state, .. } => Some(*state),
            _ => None,
        };
        if status.is_some() && self.status_reordered(now) {
            // Sent before the status already shown: never rolls it back.
            self.stats.out_of_order += 1;
            return;
        }
        let pose = match &fact {
            ArmFact::CurrentPose { pose, .. } => Some(*pose),
            _ => None,
        };
        let positions = matches!(fact, ArmFact::JointPositions { .. });
        if let (ArmFact::JointPositions { values, .. }, Some(s)) = (&fact, &mut self.arm) {
            s.jog.positions.clone_from(values);
        }
        out.fact(fact);
        if positions {
            self.clearance_update(now, out);
        }
        self.sample(now, signal, out);
        if let Some(state) = status {
            self.status_observed(now, state, out);
        }
        if let Some(pose) = pose {
            self.pose_observed(now, pose, out);
        }
    }
}
