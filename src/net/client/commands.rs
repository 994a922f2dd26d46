//! Operator commands and control. Every command ends in exactly one
//! [`Remark::CommandOutcome`] that tells the truth about the arm:
//! - A command is sent again (control with backoff: 0.25 s, 0.5 s, 1 s, …; a status command
//!   every 0.25 s; within the command's time) until its effect is observed —
//!   `ConfirmControl`/`RejectControl` or a `ReportControl` naming us for control, the status
//!   (event or answer to the `QueryStatus` sent with each try) for Emergency/Resume/Standby,
//!   the transition report or the current pose for a preset. Lost datagrams cost a retry, not
//!   a wrong outcome. A status command the arm acknowledged is judged from a status received
//!   after the ACK, asked for at once and waited for up to one more command time.
//! - A status that already shows the effect confirms the command (a Resume whose READY was
//!   observed is confirmed, whichever datagram was lost).
//! - A refusal says why in words, from what the client knows (status, control): "the arm is in
//!   EMERGENCY", "no control", "the arm refused the pose".
//! - No answer after the last try: [`Outcome::NoAnswer`] with the tries and the state the arm
//!   last reported, and the state is queried again (control and status).
//!
//! Control is kept by re-requesting at a third of the peer's timeout. `GoToPreset`, Resume and
//! Standby are refused locally unless control is held.

use super::arm::FollowedArm;
use super::pending::{FIRST_BACKOFF, MAX_BACKOFF, Pending, REASON_WAIT, Transition};
use super::{Client, Output, estop, label};
use crate::jaus::core::{
    ClearEmergency, ConfirmControlCode, QueryControl, QueryStatus, ReleaseControl, ReportControl,
    RequestControl, Resume, SetEmergency, Standby,
};
use crate::jaus::iop::{
    QueryCurrentPose, ReportTransitionCompleted, SetCurrentPose, TransitionStatus,
};
use crate::jaus::{JausId, Message};
use crate::model::command::{Command, CommandKind};
use crate::model::update::{
    ArmFact, ControlLoss, ControlState, Controller, LinkState, ManagementState, Outcome, PoseState,
    Remark,
};
use crate::net::reports;

/// Tries without any sign of progress before a preset move is given up. Each try is one
/// `QueryCurrentPose` round trip: at 30 % loss each way about half of them fail, so ten tries
/// in a row fail by chance once in about 400 moves (0.51⁹), while a silent arm is still given
/// up within about 10 s (0.25 + 0.5 + 8 × 1 s).
const TRANSITION_TRIES: u8 = 10;
/// Interval of keep-alive `RequestControl`s while the last one is unanswered, s.
const KEEP_ALIVE_RETRY: f64 = 0.2;
/// Seconds after the start within which control under our ID that we did not ask for is
/// named as most likely an earlier process of ours (dead without releasing it).
const PREDECESSOR_WINDOW: f64 = 10.0;
/// How long a refused control request, or a loss of control, waits for the arm's
/// `ReportControl` saying who holds control, s (`QueryControl` is sent at once and again
/// halfway).
const CONTROL_REASON_WAIT: f64 = 1.0;
/// Seconds between `QueryControl`s while the link is up: who holds control is the arm's to
/// say, and another client may take or release it at any time (the live area, and a conflict
/// over our ID, show it within 2 s).
const CONTROL_QUERY_PERIOD: f64 = 1.5;
/// The same while we hold or request control: the arm's answer is how another client under
/// our ID shows (an authority we did not ask for), and it must show within 2 s.
const CONTROL_QUERY_PERIOD_HELD: f64 = 1.0;

/// Whether `state` shows the effect of status command `kind`.
fn status_effect(kind: CommandKind, state: ManagementState) -> bool {
    match kind {
        CommandKind::SetEmergency => state == ManagementState::Emergency,
        CommandKind::ClearEmergency => state != ManagementState::Emergency,
        CommandKind::Resume => state == ManagementState::Ready,
        _ => state == ManagementState::Standby,
    }
}

fn status_message(kind: CommandKind) -> Message {
    match kind {
        CommandKind::SetEmergency => SetEmergency { emergency_code: 1 }.into(),
        CommandKind::ClearEmergency => ClearEmergency { emergency_code: 1 }.into(),
        CommandKind::Resume => Resume.into(),
        _ => Standby.into(),
    }
}

/// The selected arm's state in words, as last reported: control and management state, and
/// how long ago the status came ("status READY, reported 3.2 s ago"): never told as the
/// present when it is the past.
fn arm_words(s: &FollowedArm, now: f64) -> String {
    let control = match (s.control, s.controller) {
        (ControlState::Held { authority }, _) => format!("control held (authority {authority})"),
        (ControlState::Requested, _) => "control requested, not confirmed".into(),
        (ControlState::Released, Some(c @ Controller { id: Some(_), .. })) => {
            format!("control held by {c}")
        }
        (ControlState::Released, Some(Controller { id: None, .. })) => "control free".into(),
        (ControlState::Released, None) => "control not held".into(),
    };
    let status = match s.status {
        Some(st) if s.status_at.is_finite() => format!(
            "status {}, reported {:.1} s ago",
            st.name(),
            (now - s.status_at).max(0.0)
        ),
        Some(st) => format!("status {}", st.name()),
        None => "status unknown".into(),
    };
    format!("{control}, {status}")
}

/// Why control we held is gone, from what the arm said last: given to another (its
/// `ReportControl`), else lapsed (our last confirmed keep-alive is older than the arm's
/// timeout), else released by the arm.
fn loss_reason(s: &FollowedArm, now: f64) -> ControlLoss {
    if let Some(Controller {
        id: Some(by),
        authority,
    }) = s.controller
        && by != s.controller_self
    {
        return ControlLoss::Taken { by, authority };
    }
    let lapse = match s.control_timeout {
        Some(t) if t > 0 => f64::from(t) * 0.9,
        _ => 3.0 * s.control_renew_interval(),
    };
    if now - s.last_control_confirmed >= lapse {
        ControlLoss::TimedOut
    } else {
        ControlLoss::ReleasedByArm
    }
}

/// "no control" in words, with who holds it as the arm last said: "no control — taken by
/// 200.7.3 (authority 200)" after a pre-emption, "no control — held by …" otherwise.
pub(super) fn no_control_words(s: &FollowedArm) -> String {
    match (s.controller, s.last_loss) {
        (Some(c @ Controller { id: Some(by), .. }), Some(ControlLoss::Taken { by: taker, .. }))
            if by == taker =>
        {
            format!("no control — taken by {c}")
        }
        (Some(c @ Controller { id: Some(by), .. }), _) if by != s.controller_self => {
            format!("no control — held by {c}")
        }
        _ => "no control: request control first".into(),
    }
}

/// Control we held is gone: shown as not held at once, with the reason.
fn lose_control(s: &mut FollowedArm, now: f64, reason: ControlLoss, out: &mut Output) {
    s.control = ControlState::Released;
    s.wanted_authority = None;
    s.control_renew_at = f64::INFINITY;
    s.loss_pending = None;
    s.last_loss = Some(reason);
    // Who holds it now is asked at once (the arm's latest answer is what is shown).
    s.control_query_next = now;
    out.fact(ArmFact::Control {
        t: now,
        state: s.control,
    });
    out.fact(ArmFact::ControlLost { t: now, reason });
}

/// Judges a loss of control and a refused request waiting for their reason, on what is known
/// of who holds control now.
fn judge_control_waits(s: &mut FollowedArm, now: f64, out: &mut Output) {
    if s.loss_pending.take().is_some() {
        let reason = loss_reason(s, now);
        s.last_loss = Some(reason);
        out.fact(ArmFact::ControlLost { t: now, reason });
    }
    if let Some((_, code)) = s.refusal_pending.take() {
        let why = refusal_words(s, &code);
        Client::outcome(
            out,
            now,
            CommandKind::RequestControl,
            Outcome::Rejected(why),
        );
    }
    s.reason_asked_again = false;
}

/// A refused control request in words: who holds control at what authority, and ours.
fn refusal_words(s: &FollowedArm, code: &str) -> String {
    let ours = s
        .requested_authority
        .map_or_else(|| "unknown".to_string(), |a| a.to_string());
    match s.controller {
        Some(c @ Controller { id: Some(id), .. }) if id != s.controller_self => {
            format!("control is held by {c}; ours is {ours} (the arm answered {code})")
        }
        Some(Controller { id: None, .. }) => format!(
            "the manipulator refused control ({code}; our authority {ours}) though nobody \
             holds it"
        ),
        _ => format!(
            "the manipulator refused control: {code} (our authority {ours}); it did not say \
             who holds control"
        ),
    }
}

/// The arm's own words against our intent, as evidence that another client uses our ID
/// (`None`: nothing says so): control under our ID that we did not cause (or, right after
/// our start, most likely an earlier process of ours that died holding it), at an authority
/// we did not ask for, or released without our `ReleaseControl`.
fn conflict_evidence(
    s: &FollowedArm,
    r: ReportControl,
    ours: bool,
    controller: Option<JausId>,
    now: f64,
    timeout: f64,
    just_started: bool,
) -> Option<String> {
    let me = s.controller_self;
    // The arm's own words against our intent: control under our ID that we did not
    // cause is another client using our ID (or, at our start, an earlier process with
    // it that died holding control: the arm's timeout ends that, and with it the
    // conflict, CONFLICT_QUIET later).
    let recent = |t: f64| now - t <= timeout + 1.0;
    let asked = recent(s.last_control_request)
        || recent(s.last_control_release)
        || s.wanted_authority.is_some()
        || s.control_pending.is_some();
    let our_authorities = [
        s.wanted_authority,
        s.previous_authority
            .filter(|(_, until)| now <= *until)
            .map(|(a, _)| a),
    ];
    let mut conflict = None;
    if ours && !asked && just_started {
        // Right after our start, before we asked: the evidence fits an earlier process
        // of ours that ended holding control (the arm ends it after its access timeout)
        // as well as a live twin; it is named first, and commands wait either way.
        let lapse = s.control_timeout.map_or_else(
            || "its access timeout".to_string(),
            |t| format!("its access timeout, {t} s"),
        );
        conflict = Some(format!(
            "the arm says our ID {me} holds control (authority {}) that this OCU did not ask \
             for, right after it started: most likely an earlier process with this ID that \
             ended without releasing control (the arm ends that after {lapse}); if another \
             OCU runs with this ID, give each its own",
            r.authority_code
        ));
    } else if ours && !asked {
        conflict = Some(format!(
            "the arm says our ID {me} holds control (authority {}), which this OCU did not \
             ask for",
            r.authority_code
        ));
    } else if ours
        && s.wanted_authority.is_some()
        && !our_authorities.contains(&Some(r.authority_code))
    {
        // JSIDL AccessControl 1.1: the authority of ReportControl is the controlling
        // client's.
        conflict = Some(format!(
            "the arm says our ID {me} holds control at authority {}; this OCU asked for {}",
            r.authority_code,
            s.wanted_authority.unwrap_or(0)
        ));
    } else if !ours
        && controller.is_none()
        && matches!(s.control, ControlState::Held { .. })
        && s.control_pending.is_none()
        && s.loss_pending.is_none()
        && !recent(s.last_control_release)
        && loss_reason(s, now) == ControlLoss::ReleasedByArm
    {
        // Control we held and kept alive is gone to nobody, without our release and
        // without the arm's RejectControl telling us: a ReleaseControl under our ID that
        // this OCU did not send.
        conflict = Some(format!(
            "control held by our ID {me} was released without this OCU's ReleaseControl \
             (the arm did not say it released it)"
        ));
    }
    conflict
}

impl Client {
    /// The arm's state in words, as last reported: control and management state.
    pub(super) fn state_words_at(&self, now: f64) -> String {
        self.arm.as_ref().map_or_else(
            || "nothing (no manipulator selected)".into(),
            |s| arm_words(s, now),
        )
    }

    /// Why the arm would refuse a motion command, in words, from what we know.
    fn refusal_words(&self, code: Option<TransitionStatus>, pose_id: u8) -> String {
        let Some(s) = &self.arm else {
            return "no manipulator selected".into();
        };
        if s.status == Some(ManagementState::Emergency) {
            return "the arm is in EMERGENCY".into();
        }
        if !matches!(s.control, ControlState::Held { .. }) {
            return no_control_words(s);
        }
        if let Some(
            st @ (ManagementState::Standby
            | ManagementState::Failure
            | ManagementState::Shutdown
            | ManagementState::Initialize),
        ) = s.status
        {
            return format!("the arm is in {}", st.name());
        }
        match code {
            Some(TransitionStatus::UnrecognizedPose) => {
                format!("the arm does not know pose {pose_id}")
            }
            Some(c) => format!("the arm refused the pose ({})", label(c)),
            None => "the arm refused the pose".into(),
        }
    }

    /// A refusal or loss of control whose reason the arm did not give in time: asked once
    /// more halfway, then judged on what is known.
    fn control_reason_timers(&mut self, now: f64, to_send: &mut Vec<Message>, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let waiting = s.reason_waiting_since();
        if waiting.is_finite() {
            if now >= waiting + CONTROL_REASON_WAIT {
                judge_control_waits(s, now, out);
            } else if now >= waiting + CONTROL_REASON_WAIT / 2.0 && !s.reason_asked_again {
                s.reason_asked_again = true;
                to_send.push(QueryControl.into());
            }
        }
    }

    /// When pending commands next need a tick: a retry or a verdict.
    pub(super) fn command_deadline(&self, s: &FollowedArm) -> f64 {
        let timeout = self.cfg.command_timeout;
        let mut d = f64::INFINITY;
        if let Some(p) = &s.control_pending {
            d = d.min(p.deadline(timeout));
        }
        for p in &s.status_pending {
            d = d.min(p.deadline(timeout));
        }
        if let Some(t) = &s.transition {
            d = d.min(t.deadline(self.cfg.transition_timeout));
        }
        let waiting = s.reason_waiting_since();
        if waiting.is_finite() {
            d = d.min(if s.reason_asked_again {
                waiting + CONTROL_REASON_WAIT
            } else {
                waiting + CONTROL_REASON_WAIT / 2.0
            });
        }
        d
    }

    /// Takes one command from the UI: a focus change, a stop of every arm of the vehicle,
    /// or a command for the focused arm (never for an arm the operator did not pick).
    pub fn handle_command(&mut self, now: f64, cmd: Command, out: &mut Output) {
        match cmd {
            Command::Shutdown => {
                self.teardown(now, out);
                self.shut_down = true;
            }
            Command::Select(id) => self.select(now, JausId::from(id), out),
            Command::SetEmergencyAll => self.stop_all(now, out),
            Command::SetEmergencyOf(id) => self.stop_arm(now, JausId::from(id), out),
            Command::Jog(mut req) => {
                // While another client uses our ID nothing moves: the input is taken as
                // released (a jog streaming stops), and the conflict is said elsewhere.
                if self.conflict.is_some() || self.ambiguous_other(req.arm.into()).is_some() {
                    req.input.deflection = crate::model::jog::Deflection::Released;
                }
                self.jog_command(now, *req, out);
            }
            cmd => {
                if let Some(why) = self
                    .refused_for_conflict(&cmd)
                    .or_else(|| self.refused_for_address(&cmd))
                {
                    self.refuse(now, cmd.kind(), why, out);
                    return;
                }
                let kind = cmd.kind();
                let sent = self
                    .focus
                    .and_then(|id| self.with_arm(id, out, |c, out| c.arm_command(now, &cmd, out)));
                if sent.is_none() {
                    Self::outcome(
                        out,
                        now,
                        kind,
                        Outcome::Rejected("no manipulator selected".into()),
                    );
                }
            }
        }
    }

    /// Refuses a command of `kind` before it reaches an arm (`why` in words): its outcome,
    /// about the focused arm when there is one. Also for the network thread, which refuses a
    /// `ClearEmergency` that an emergency stop overtook (`net::thread`).
    pub fn refuse(&mut self, now: f64, kind: CommandKind, why: String, out: &mut Output) {
        let outcome = Remark::CommandOutcome {
            t: now,
            command: kind,
            outcome: Outcome::Rejected(why),
        };
        match self.focus {
            Some(id) => out.arm(id, outcome),
            None => out.net(outcome),
        }
    }

    /// `Select`: focuses `id`, following it first if it is not yet (an ID typed by the
    /// operator that discovery has not found: tried at the first address discovery queries).
    fn select(&mut self, now: f64, id: JausId, out: &mut Output) {
        if !self.follows(id) {
            self.place_named_arm(now, id);
            if !self.follow(now, id, out) {
                out.net(Remark::CommandOutcome {
                    t: now,
                    command: CommandKind::Select,
                    outcome: Outcome::Rejected(format!(
                        "{} arms are followed already, the most at once",
                        crate::model::update::MAX_ARMS
                    )),
                });
                return;
            }
        }
        if self.focus != Some(id) {
            self.focus_on(now, id, out);
        }
        out.arm(
            id,
            Remark::CommandOutcome {
                t: now,
                command: CommandKind::Select,
                outcome: Outcome::Confirmed,
            },
        );
    }

    /// Where arm `id`, not followed yet, is to be followed: where it was heard, else at the
    /// first address discovery queries (the first `--connect` one). The arm of `--component`
    /// heard first from an address nobody named while `--connect` addresses were given is
    /// placed at the first of them: it is not taken for the arm at the address named.
    fn place_named_arm(&mut self, now: f64, id: JausId) {
        let heard = self.endpoint.peer(id).map(|p| p.addr);
        let named = &self.cfg.connect;
        let at = match heard {
            Some(a) if self.cfg.component != Some(id) || named.is_empty() || named.contains(&a) => {
                return;
            }
            _ => self.first_queried(),
        };
        if let Some(addr) = at {
            self.endpoint.repin(id, addr, now);
        }
    }

    /// `SetEmergencyOf(id)`: `SetEmergency` to arm `id` whichever is focused. An arm not yet
    /// followed (the operator named it: `--component`) is followed at once
    /// ([`Client::place_named_arm`]: at the first `--connect` address unless it was heard at
    /// one) and stopped there without waiting for discovery; refused (in words) only when no
    /// address for it is known, so nothing on the wire could stop it.
    fn stop_arm(&mut self, now: f64, id: JausId, out: &mut Output) {
        if !self.follows(id) {
            self.place_named_arm(now, id);
            if self.endpoint.contains(id) && self.follow(now, id, out) {
                // The arm the operator named is the focus, as discovery would make it.
                if self.focus.is_none() && self.cfg.component.is_none_or(|c| c == id) {
                    self.focus_on(now, id, out);
                }
            }
        }
        if self.follows(id) {
            self.with_arm(id, out, |c, out| {
                c.arm_command(now, &Command::SetEmergency, out);
            });
        } else {
            out.net(Remark::CommandOutcome {
                t: now,
                command: CommandKind::SetEmergency,
                outcome: Outcome::Rejected(format!(
                    "{id} is not followed (not found, and no --connect address to send to): \
                     nothing was sent. Use the arm's own emergency stop"
                )),
            });
        }
    }

    /// `SetEmergencyAll`: `SetEmergency` to every followed arm of the focused arm's subsystem
    /// (every followed arm when none is focused), each with its own outcome.
    fn stop_all(&mut self, now: f64, out: &mut Output) {
        let subsystem = self.focus.map(|f| f.subsystem);
        let ids: Vec<JausId> = self
            .followed()
            .filter(|id| subsystem.is_none_or(|s| s == id.subsystem))
            .collect();
        if ids.is_empty() {
            Self::outcome(
                out,
                now,
                CommandKind::SetEmergency,
                Outcome::Rejected("no manipulator found to stop".into()),
            );
        }
        for id in ids {
            self.with_arm(id, out, |c, out| {
                c.arm_command(now, &Command::SetEmergency, out);
            });
        }
    }

    /// A command for the arm in hand (the focused one).
    fn arm_command(&mut self, now: f64, cmd: &Command, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        let held = matches!(s.control, ControlState::Held { .. });
        match *cmd {
            Command::RequestControl { authority } => {
                if let Some(previous) = s.wanted_authority
                    && previous != authority
                {
                    // Reports of the old authority may still be in flight.
                    s.previous_authority = Some((previous, now + self.cfg.command_timeout + 1.0));
                }
                s.wanted_authority = Some(authority);
                s.control = ControlState::Requested;
                s.control_pending = Some(Pending::new(CommandKind::RequestControl, now));
                s.refusal_pending = None;
                s.control_renew_at = f64::INFINITY;
                s.last_control_request = now;
                s.requested_authority = Some(authority);
                out.fact(ArmFact::Control {
                    t: now,
                    state: ControlState::Requested,
                });
                self.send(
                    id,
                    RequestControl {
                        authority_code: authority,
                    },
                    out,
                );
            }
            Command::ReleaseControl => {
                s.wanted_authority = None;
                s.control_renew_at = f64::INFINITY;
                s.last_control_release = now;
                if s.control == ControlState::Released && s.control_pending.is_none() {
                    // Not held as far as we know; told anyway (an earlier process with our ID
                    // may have left control held), no answer awaited.
                    Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
                    self.send(id, ReleaseControl, out);
                } else {
                    s.control_pending = Some(Pending::new(CommandKind::ReleaseControl, now));
                    self.send(id, ReleaseControl, out);
                }
            }
            Command::GoToPreset { pose_id } => {
                if let Some(stop) = &s.stop {
                    let why = estop::pending_words(id, stop, now);
                    Self::outcome(out, now, CommandKind::GoToPreset, Outcome::Rejected(why));
                    return;
                }
                self.go_to_preset(now, pose_id, held, out);
            }
            // The stop is an intent that lasts until the arm confirms it (`estop`).
            Command::SetEmergency => self.stop_pressed(now, out),
            Command::ClearEmergency | Command::Resume | Command::Standby => {
                let kind = cmd.kind();
                if matches!(cmd, Command::Resume | Command::Standby) && !held {
                    let why = no_control_words(s);
                    Self::outcome(out, now, kind, Outcome::Rejected(why));
                    return;
                }
                if let Some(stop) = &s.stop
                    && kind != CommandKind::Standby
                {
                    // Nothing undoes a stop the arm has not yet confirmed.
                    let why = estop::pending_words(id, stop, now);
                    Self::outcome(out, now, kind, Outcome::Rejected(why));
                    return;
                }
                let mut p = Pending::new(kind, now);
                p.asked_ack(self.send_acked(id, status_message(kind), out));
                // The answer is the status that follows.
                self.send(id, QueryStatus, out);
                if let Some(s) = &mut self.arm {
                    s.status_pending.push(p);
                }
            }
            Command::Select(_)
            | Command::SetEmergencyOf(_)
            | Command::SetEmergencyAll
            | Command::Jog(_)
            | Command::Shutdown => {}
        }
    }

    /// `GoToPreset`: refused locally without control or for an unknown preset; else sent with
    /// a query of the current pose, and followed by [`Client::transition_timers`].
    fn go_to_preset(&mut self, now: f64, pose_id: u8, held: bool, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        if !held {
            let why = no_control_words(s);
            Self::outcome(out, now, CommandKind::GoToPreset, Outcome::Rejected(why));
        } else if s.status == Some(ManagementState::Standby) {
            // The arm refuses motion in STANDBY: refused before anything is sent, with the
            // step to take.
            Self::outcome(
                out,
                now,
                CommandKind::GoToPreset,
                Outcome::Rejected(
                    "the arm is in STANDBY: resume it first (Shift+R in the window, \
                     `jaus-ocu control resume` from a terminal)"
                        .into(),
                ),
            );
        } else if !s.presets.is_empty() && s.presets.iter().all(|p| p.id != pose_id) {
            Self::outcome(
                out,
                now,
                CommandKind::GoToPreset,
                Outcome::Rejected(format!("the arm has no preset with id {pose_id}")),
            );
        } else {
            if let Some(old) = s.transition.take() {
                // A new move replaces the one in progress (the arm interrupts it).
                Self::outcome(
                    out,
                    now,
                    CommandKind::GoToPreset,
                    Outcome::Failed(format!(
                        "replaced by a move to pose {pose_id} before reaching pose {}",
                        old.pose_id
                    )),
                );
            }
            let rid = self.request_id();
            if let Some(s) = &mut self.arm {
                s.transition = Some(Transition {
                    pose_id,
                    request_ids: vec![rid],
                    sent: now,
                    tries: 1,
                    next_check: now + FIRST_BACKOFF,
                    backoff: FIRST_BACKOFF,
                    progress: None,
                    refused: None,
                });
            }
            self.send(
                id,
                SetCurrentPose {
                    request_id: rid,
                    pose_id,
                },
                out,
            );
            self.send(id, QueryCurrentPose, out);
        }
    }

    /// A status from the selected arm (event or answer): pending status commands whose effect
    /// it shows are confirmed; one showing otherwise after the arm acknowledged the command is
    /// remembered (the command is tried again; if it never shows, it was refused); a pending
    /// emergency stop is confirmed by EMERGENCY.
    pub(super) fn status_observed(&mut self, now: f64, state: ManagementState, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        s.status = Some(state);
        s.status_at = now;
        let mut done = Vec::new();
        for p in &mut s.status_pending {
            if status_effect(p.kind, state) {
                done.push(p.kind);
            } else if p.arrived.is_some() {
                // Received after the arm acknowledged the command: it took the command in
                // and did not do it. A status without that evidence may predate the
                // command's arrival (or the command was lost): no verdict from it.
                p.contrary = true;
            }
        }
        s.status_pending.retain(|p| !status_effect(p.kind, state));
        for kind in done {
            Self::outcome(out, now, kind, Outcome::Confirmed);
        }
        self.stop_status(now, state, out);
        self.judge_refused_transition(now, true, out);
    }

    /// The arm in hand acknowledged block `seq`: the status command whose try it was has
    /// arrived (from now on a status that does not show its effect is a refusal). On the
    /// first such acknowledgement the status is asked for at once: the answer to the query
    /// sent with that try may have come before the acknowledgement, and then it proves
    /// nothing.
    pub(super) fn command_acked(&mut self, now: f64, seq: u16, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let mut first = false;
        for p in &mut s.status_pending {
            if p.acked_seqs.contains(&Some(seq)) && p.arrived.is_none() {
                p.arrived = Some(now);
                first = true;
            }
        }
        if first {
            let id = s.id;
            self.send(id, QueryStatus, out);
        }
    }

    /// A current pose from the selected arm: progress (or the end) of a preset move.
    pub(super) fn pose_observed(&mut self, now: f64, pose: PoseState, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        s.pose = Some(pose);
        if s.pose_expected
            .is_some_and(|(p, _)| pose == PoseState::At(p))
        {
            s.pose_expected = None;
        }
        let Some(t) = &mut s.transition else { return };
        match pose {
            PoseState::At(p) if p == t.pose_id && t.refused.is_none() => {
                s.transition = None;
                Self::outcome(out, now, CommandKind::GoToPreset, Outcome::Completed);
            }
            PoseState::Moving { to, .. } if to == t.pose_id => t.progress = Some(true),
            _ => {
                if t.progress.is_none() {
                    t.progress = Some(false);
                }
            }
        }
    }

    /// A refused transition is judged once the status that may say why has arrived (or after
    /// [`REASON_WAIT`]).
    fn judge_refused_transition(&mut self, now: f64, status_arrived: bool, out: &mut Output) {
        let Some(s) = &self.arm else { return };
        let Some(t) = &s.transition else { return };
        let Some((at, code)) = t.refused else { return };
        if !status_arrived && now < at + REASON_WAIT {
            return;
        }
        let pose_id = t.pose_id;
        let words = self.refusal_words(Some(code), pose_id);
        if let Some(s) = &mut self.arm {
            s.transition = None;
        }
        Self::outcome(out, now, CommandKind::GoToPreset, Outcome::Failed(words));
    }

    /// A `ReportControl` from the selected arm: who holds control, as the arm says. It is
    /// published when it changes; it confirms a pending request (we are the controller) or
    /// release (we are not); control we hold and the arm gives to another is lost ("taken
    /// by …"); a refusal or loss waiting for its reason is judged with it.
    fn control_reported(&mut self, now: f64, r: ReportControl, out: &mut Output) {
        let me = self.cfg.id;
        let known = |id: JausId| id == me || self.endpoint.contains(id);
        let (controller, permuted) = reports::controller_of(&r, known);
        if permuted {
            self.stats.tolerated.controller_id_order += 1;
            if !self.warned_controller_order {
                self.warned_controller_order = true;
                out.remark(Remark::Error {
                    t: now,
                    message: format!(
                        "the arm's ReportControl names its controller in another byte order \
                         (read as {}); tolerated (wire reference §9 C9)",
                        controller.map_or_else(|| "nobody".to_string(), |c| c.to_string())
                    ),
                });
            }
        }
        let timeout = self.cfg.command_timeout;
        let Some(s) = &mut self.arm else { return };
        let reported = Controller {
            id: controller.map(Into::into),
            authority: if controller.is_some() {
                r.authority_code
            } else {
                0
            },
        };
        if s.controller != Some(reported) {
            s.controller = Some(reported);
            out.fact(ArmFact::Controller {
                t: now,
                controller: reported,
            });
        }
        let ours = controller == Some(me);
        let just_started = self.started.is_none_or(|t| now - t <= PREDECESSOR_WINDOW);
        let conflict = conflict_evidence(s, r, ours, controller, now, timeout, just_started);
        match s.control_pending {
            Some(p) if p.kind == CommandKind::RequestControl && ours => {
                s.control_pending = None;
                s.refusal_pending = None;
                let authority = s.wanted_authority.unwrap_or(r.authority_code);
                s.control = ControlState::Held { authority };
                s.last_control_confirmed = now;
                s.control_renew_at = now + s.control_renew_interval();
                out.fact(ArmFact::Control {
                    t: now,
                    state: s.control,
                });
                Self::outcome(out, now, CommandKind::RequestControl, Outcome::Confirmed);
            }
            Some(p) if p.kind == CommandKind::ReleaseControl && !ours => {
                s.control_pending = None;
                s.control = ControlState::Released;
                out.fact(ArmFact::Control {
                    t: now,
                    state: s.control,
                });
                Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
            }
            Some(_) => {
                if let Some(p) = &mut s.control_pending {
                    p.contrary = true;
                }
            }
            None => {
                if matches!(s.control, ControlState::Held { .. }) && !ours {
                    // The arm no longer names us: control is gone, and the arm said to whom.
                    let reason = loss_reason(s, now);
                    lose_control(s, now, reason, out);
                }
            }
        }
        // A refusal or a loss waiting for who holds control is judged now.
        judge_control_waits(s, now, out);
        if let Some(evidence) = conflict {
            self.id_conflict_seen(now, None, evidence, out);
        }
    }

    /// The selected arm's answers about control and preset transitions.
    pub(super) fn control_message(&mut self, now: f64, m: &Message, out: &mut Output) {
        if let Message::ReportControl(r) = m {
            self.control_reported(now, *r, out);
            return;
        }
        let timeout = self.cfg.command_timeout;
        let Some(s) = &mut self.arm else { return };
        let id = s.id;
        match m {
            Message::ConfirmControl(c) => {
                let pending = s.control_pending.take();
                match c.response_code {
                    ConfirmControlCode::ControlAccepted => {
                        let authority = s.wanted_authority.unwrap_or(0);
                        let newly = !matches!(s.control, ControlState::Held { .. });
                        if pending.is_some_and(|p| p.kind == CommandKind::ReleaseControl) {
                            // A keep-alive answer overtaken by our release: still releasing.
                            s.control_pending = pending;
                            return;
                        }
                        if now - s.last_control_request > timeout + 1.0 {
                            // An acceptance of a request we never sent (none for longer than
                            // an answer takes, keep-alives included) is another client's
                            // request under our ID.
                            let me = self.cfg.id;
                            self.id_conflict_seen(
                                now,
                                None,
                                format!(
                                    "the arm accepted a control request from our ID {me} that \
                                     this OCU did not send"
                                ),
                                out,
                            );
                            return;
                        }
                        if s.wanted_authority.is_none() {
                            // Not wanted any more (released meanwhile): nothing to hold.
                            return;
                        }
                        s.control = ControlState::Held { authority };
                        s.last_control_confirmed = now;
                        s.refusal_pending = None;
                        s.control_renew_at = now + s.control_renew_interval();
                        if newly {
                            // Who holds control is asked at once: the arm's answer, not our
                            // request, is what `controller` shows.
                            s.control_query_next = now;
                            s.last_loss = None;
                            out.fact(ArmFact::Control {
                                t: now,
                                state: s.control,
                            });
                        }
                        if pending.is_some_and(|p| p.kind == CommandKind::RequestControl) {
                            Self::outcome(
                                out,
                                now,
                                CommandKind::RequestControl,
                                Outcome::Confirmed,
                            );
                        }
                    }
                    code => {
                        let was_held = matches!(s.control, ControlState::Held { .. });
                        s.control = ControlState::Released;
                        s.control_renew_at = f64::INFINITY;
                        s.wanted_authority = None;
                        out.fact(ArmFact::Control {
                            t: now,
                            state: s.control,
                        });
                        if pending.is_some_and(|p| p.kind == CommandKind::RequestControl)
                            && !was_held
                        {
                            // Refused: the outcome says who holds control, once the arm
                            // has said (or after a short wait).
                            s.refusal_pending = Some((now, label(code)));
                            s.reason_asked_again = false;
                        } else {
                            // A keep-alive refused: control is gone; why, once the arm says
                            // who holds it.
                            s.loss_pending = Some(now);
                            s.reason_asked_again = false;
                            if pending.is_some_and(|p| p.kind == CommandKind::RequestControl) {
                                Self::outcome(
                                    out,
                                    now,
                                    CommandKind::RequestControl,
                                    Outcome::Rejected(format!(
                                        "the manipulator refused control: {}",
                                        label(code)
                                    )),
                                );
                            }
                        }
                        self.send(id, QueryControl, out);
                    }
                }
            }
            Message::RejectControl(r) => {
                let pending = s.control_pending.take();
                let was_held = matches!(s.control, ControlState::Held { .. });
                s.control = ControlState::Released;
                s.control_renew_at = f64::INFINITY;
                out.fact(ArmFact::Control {
                    t: now,
                    state: s.control,
                });
                match pending.map(|p| p.kind) {
                    Some(CommandKind::ReleaseControl) => {
                        s.control_query_next = now;
                        Self::outcome(out, now, CommandKind::ReleaseControl, Outcome::Confirmed);
                    }
                    Some(_) => {
                        s.wanted_authority = None;
                        s.refusal_pending = Some((now, label(r.response_code)));
                        s.reason_asked_again = false;
                        self.send(id, QueryControl, out);
                    }
                    None if was_held => {
                        // The arm took control away: released, timed out, or given to a
                        // higher authority. Why is said once the arm says who holds it.
                        s.wanted_authority = None;
                        s.loss_pending = Some(now);
                        s.reason_asked_again = false;
                        self.send(id, QueryControl, out);
                    }
                    None => {}
                }
            }
            Message::ReportTransitionCompleted(r) => self.transition_reported(now, *r, out),
            _ => {}
        }
    }

    /// A `ReportTransitionCompleted`: a move of ours completed, or refused (judged once the
    /// state saying why has arrived); a failure of an earlier try is our own retry.
    fn transition_reported(&mut self, now: f64, r: ReportTransitionCompleted, out: &mut Output) {
        let Some(s) = &mut self.arm else { return };
        let Some(t) = &mut s.transition else {
            self.stats.unexpected += 1;
            return;
        };
        if !t.request_ids.contains(&r.request_id) {
            self.stats.unexpected += 1;
            return;
        }
        if r.transition_status == TransitionStatus::Completed {
            let pose_id = t.pose_id;
            s.transition = None;
            if s.pose != Some(PoseState::At(pose_id)) {
                // The pose event saying so may be lost: ask until a report says so.
                s.pose_expected = Some((pose_id, 10));
                s.pose_query_next = now;
            }
            Self::outcome(out, now, CommandKind::GoToPreset, Outcome::Completed);
        } else if t.request_ids.last() == Some(&r.request_id) {
            // Refused or interrupted: ask the state that says why, judge on its answer.
            t.refused = Some((now, r.transition_status));
            let id = s.id;
            self.send(id, QueryStatus, out);
            self.send(id, QueryControl, out);
        }
        // A failure of an earlier try is our own retry interrupting it.
    }

    /// Control keep-alive, retries of unanswered commands, and their verdicts. Messages to
    /// send are appended to `to_send`.
    pub(super) fn command_timers(
        &mut self,
        now: f64,
        to_send: &mut Vec<Message>,
        out: &mut Output,
    ) {
        let timeout = self.cfg.command_timeout;
        let Some(s) = &mut self.arm else { return };
        let live = s.link != LinkState::Lost;
        if live && now >= s.control_query_next {
            s.control_query_next = now
                + if s.wanted_authority.is_some() {
                    CONTROL_QUERY_PERIOD_HELD
                } else {
                    CONTROL_QUERY_PERIOD
                };
            to_send.push(QueryControl.into());
        }
        self.control_reason_timers(now, to_send, out);
        let Some(s) = &mut self.arm else { return };
        if live
            && now >= s.control_renew_at
            && s.stop.is_some()
            && !matches!(s.control, ControlState::Held { .. })
        {
            // Control is not re-taken by itself while our stop waits for the arm's word
            // (control still held is kept alive below): asked again after the stop's next try.
            s.control_renew_at = s.stop.as_ref().map_or(now, |st| st.next);
        }
        if live && now >= s.control_renew_at {
            // Until a ConfirmControl answers this keep-alive (which schedules the next one a
            // third of the timeout later), it is sent again soon: a few lost keep-alives in a
            // row must not let control lapse.
            s.control_renew_at = now + s.control_renew_interval().min(KEEP_ALIVE_RETRY);
            if let Some(authority) = s.wanted_authority {
                if s.control_pending.is_none() && s.control == ControlState::Requested {
                    s.control_pending = Some(Pending::new(CommandKind::RequestControl, now));
                }
                s.last_control_request = now;
                to_send.push(
                    RequestControl {
                        authority_code: authority,
                    }
                    .into(),
                );
            }
        }
        let mut query_state = false;
        if let Some(mut p) = s.control_pending {
            if now - p.sent >= timeout {
                s.control_pending = None;
                if p.kind == CommandKind::ReleaseControl || s.control == ControlState::Requested {
                    s.control = ControlState::Released;
                }
                if p.kind == CommandKind::RequestControl {
                    s.wanted_authority = None;
                }
                out.fact(ArmFact::Control {
                    t: now,
                    state: s.control,
                });
                Self::outcome(
                    out,
                    now,
                    p.kind,
                    Outcome::NoAnswer {
                        tries: p.tries,
                        state: arm_words(s, now),
                    },
                );
                query_state = true;
            } else if now >= p.next_try {
                p.retried(now);
                s.control_pending = Some(p);
                match (p.kind, s.wanted_authority) {
                    (CommandKind::RequestControl, Some(authority)) => {
                        s.last_control_request = now;
                        to_send.push(
                            RequestControl {
                                authority_code: authority,
                            }
                            .into(),
                        );
                    }
                    _ => to_send.push(ReleaseControl.into()),
                }
                to_send.push(QueryControl.into());
            }
        }
        if self.status_timers(now, to_send, out) {
            query_state = true;
        }
        if query_state {
            // "No answer" is followed by a query of the actual state.
            to_send.push(QueryStatus.into());
            to_send.push(QueryControl.into());
        }
        self.transition_timers(now, to_send, out);
    }

    /// Retries of the pending status commands (each asking for the ACK that says it
    /// arrived) and their verdicts; whether a verdict was "no answer" (the state is then
    /// queried again).
    fn status_timers(&mut self, now: f64, to_send: &mut Vec<Message>, out: &mut Output) -> bool {
        let timeout = self.cfg.command_timeout;
        let Some(s) = &mut self.arm else {
            return false;
        };
        let mut query_state = false;
        let s_id = s.id;
        let mut verdicts = Vec::new();
        let mut resend = Vec::new();
        let mut query_only = false;
        for p in &mut s.status_pending {
            if now >= p.verdict_at(timeout) {
                verdicts.push(*p);
            } else if now >= p.next_try {
                if now - p.sent < timeout {
                    p.retried_steadily(now);
                    resend.push(p.kind);
                } else {
                    // Past the command's time, waiting for the status of a command that
                    // arrived: only the query goes out, never a late try of the command
                    // (and no try is counted).
                    p.next_try = now + FIRST_BACKOFF;
                    query_only = true;
                }
            }
        }
        s.status_pending.retain(|p| now < p.verdict_at(timeout));
        for p in verdicts {
            let outcome = if p.contrary {
                // The arm acknowledged the command and a status received after that shows
                // it not done: refused. Say why in words.
                Outcome::Rejected(match (p.kind, s.status) {
                    (CommandKind::ClearEmergency, Some(ManagementState::Emergency)) => {
                        "the arm received the ClearEmergency (it acknowledged it) and still \
                         reports EMERGENCY: JAUS ends an emergency only when every client that \
                         set it has cleared it, so an emergency set by another client (another \
                         JAUS ID) or by the arm itself still holds it; clear it from there"
                            .into()
                    }
                    (_, Some(ManagementState::Emergency)) => "the arm is in EMERGENCY".into(),
                    (_, Some(st)) => {
                        format!("the arm received it and stayed in {}", st.name())
                    }
                    (_, None) => "the arm received it and did not change state".into(),
                })
            } else {
                query_state = true;
                let heard = if p.arrived.is_some() {
                    " (it acknowledged the command but reported no status since)"
                } else {
                    " (no sign that any try reached it)"
                };
                Outcome::NoAnswer {
                    tries: p.tries,
                    state: format!("{}{heard}", arm_words(s, now)),
                }
            };
            Self::outcome(out, now, p.kind, outcome);
        }
        for kind in resend {
            // Each try asks for the ACK that says it arrived.
            let seq = self.send_acked(s_id, status_message(kind), out);
            if let Some(p) = self
                .arm
                .as_mut()
                .and_then(|s| s.status_pending.iter_mut().find(|p| p.kind == kind))
            {
                p.asked_ack(seq);
            }
            to_send.push(QueryStatus.into());
        }
        if query_only && !query_state {
            to_send.push(QueryStatus.into());
        }
        query_state
    }

    /// A preset move: checked with `QueryCurrentPose`, sent again (new request ID) when no
    /// sign of progress came since the last check, judged when it completes, is refused, shows
    /// no progress after [`TRANSITION_TRIES`] tries, or takes longer than the transition
    /// timeout.
    fn transition_timers(&mut self, now: f64, to_send: &mut Vec<Message>, out: &mut Output) {
        self.judge_refused_transition(now, false, out);
        let words = self.state_words_at(now);
        let timeout = self.cfg.transition_timeout;
        let Some(s) = &mut self.arm else { return };
        let Some(t) = &mut s.transition else { return };
        if t.refused.is_some() {
            return;
        }
        let no_progress = t.tries >= TRANSITION_TRIES;
        if now - t.sent >= timeout || (no_progress && now >= t.next_check) {
            let tries = t.tries;
            let heard_contrary = t.progress == Some(false);
            let pose_id = t.pose_id;
            s.transition = None;
            let outcome = if heard_contrary {
                Outcome::Failed(self.refusal_words(None, pose_id))
            } else {
                Outcome::NoAnswer {
                    tries,
                    state: words,
                }
            };
            Self::outcome(out, now, CommandKind::GoToPreset, outcome);
            to_send.push(QueryStatus.into());
            to_send.push(QueryControl.into());
            return;
        }
        if now < t.next_check {
            return;
        }
        if t.progress == Some(true) {
            // Moving towards the pose: keep watching.
            t.tries = 1;
            t.backoff = MAX_BACKOFF;
        } else {
            // Nothing heard, or not moving there: the command (or its start) was lost.
            t.tries = t.tries.saturating_add(1);
            t.backoff = (t.backoff * 2.0).min(MAX_BACKOFF);
            let rid = self.next_request_id;
            self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
            t.request_ids.push(rid);
            to_send.push(
                SetCurrentPose {
                    request_id: rid,
                    pose_id: t.pose_id,
                }
                .into(),
            );
        }
        t.progress = None;
        t.next_check = now + t.backoff;
        to_send.push(QueryCurrentPose.into());
    }
}
