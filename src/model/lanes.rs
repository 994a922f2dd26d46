//! State lanes: what the arm's management state, the holder of control, the link and the
//! emergency were over time, as spans of constant value (Rerun's state lanes, Foxglove's
//! State Transitions). Pure: [`StateLanes::observe`] is fed the discrete state after each
//! discrete update of a session, in time order ([`crate::model::session::Session::fold_discrete`]),
//! and keeps one list of spans per [`Lane`]. Live and replay are fed alike (a replay's session
//! is rebuilt from its datagrams by the same code), so a recording's lanes are the ones its
//! live session had; the timeline's marks come from the same updates.

use crate::model::id::ComponentId;
use crate::model::state::ArmState;
use crate::model::update::{ControlState, LinkState, ManagementState};

/// One row of the state lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The management state (READY, STANDBY, EMERGENCY, …).
    State,
    /// Who holds control of the arm.
    Control,
    /// The link to the arm (live, connecting, lost).
    Link,
    /// The arm in EMERGENCY.
    Emergency,
}

impl Lane {
    /// Every lane, top to bottom.
    pub const ALL: [Lane; 4] = [Lane::State, Lane::Control, Lane::Link, Lane::Emergency];

    /// The lane's name, as its row is labelled.
    pub fn name(self) -> &'static str {
        match self {
            Lane::State => "state",
            Lane::Control => "control",
            Lane::Link => "link",
            Lane::Emergency => "E-stop",
        }
    }

    fn index(self) -> usize {
        match self {
            Lane::State => 0,
            Lane::Control => 1,
            Lane::Link => 2,
            Lane::Emergency => 3,
        }
    }
}

/// What a span's colour says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// All is well (READY, link live).
    Ok,
    /// Worth a look (STANDBY, connecting, control held by another client).
    Warn,
    /// Wrong (EMERGENCY, FAILURE, link lost).
    Danger,
    /// This OCU holds control.
    Ours,
    /// Neither good nor bad (INITIALIZE, SHUTDOWN).
    Neutral,
}

/// The value a lane has while a span lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A management state.
    State(ManagementState),
    /// Control held by this OCU (with its authority).
    Ours(u8),
    /// Control held by another client (with its authority).
    Held(ComponentId, u8),
    /// The link's state.
    Link(LinkState),
    /// The arm in EMERGENCY.
    Emergency,
}

impl Value {
    /// The span's words: `READY`, `this OCU (authority 10)`, `200.7.3 (authority 200)`,
    /// `link lost`, `EMERGENCY`.
    pub fn label(self) -> String {
        match self {
            Value::State(s) => s.name().to_string(),
            Value::Ours(a) => format!("this OCU (authority {a})"),
            Value::Held(id, a) => format!("{id} (authority {a})"),
            Value::Link(l) => format!("link {}", l.name()),
            Value::Emergency => "EMERGENCY".to_string(),
        }
    }

    /// What its colour says.
    pub fn tone(self) -> Tone {
        match self {
            Value::State(ManagementState::Ready) | Value::Link(LinkState::Live) => Tone::Ok,
            Value::State(ManagementState::Standby)
            | Value::Link(LinkState::Connecting)
            | Value::Held(..) => Tone::Warn,
            Value::State(ManagementState::Emergency | ManagementState::Failure)
            | Value::Link(LinkState::Lost)
            | Value::Emergency => Tone::Danger,
            Value::Ours(_) => Tone::Ours,
            Value::State(_) | Value::Link(_) => Tone::Neutral,
        }
    }
}

/// A stretch of time over which a lane kept one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// When it began, s since the session started.
    pub start: f64,
    /// When it ended; `None` while it lasts.
    pub end: Option<f64>,
    /// The value.
    pub value: Value,
}

impl Span {
    /// Its end, or `now` while it lasts.
    pub fn end_or(&self, now: f64) -> f64 {
        self.end.unwrap_or(now).max(self.start)
    }
}

/// The value of `lane` in state `s` (`None`: nothing to draw, e.g. control free).
pub fn value_of(lane: Lane, s: &ArmState) -> Option<Value> {
    match lane {
        Lane::State => (s.status != ManagementState::Unknown).then_some(Value::State(s.status)),
        Lane::Control => match (s.control, s.controller) {
            (ControlState::Held { authority }, _) => Some(Value::Ours(authority)),
            (_, Some(c)) => match c.id {
                Some(id) if Some(id) == s.ocu_id => Some(Value::Ours(c.authority)),
                Some(id) => Some(Value::Held(id, c.authority)),
                None => None,
            },
            _ => None,
        },
        Lane::Link => (s.link != LinkState::Idle).then_some(Value::Link(s.link)),
        Lane::Emergency => (s.status == ManagementState::Emergency).then_some(Value::Emergency),
    }
}

/// The spans of every lane (module documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateLanes {
    spans: [Vec<Span>; 4],
}

impl StateLanes {
    /// No spans yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the state `s` that holds from `t` on (`t` not before the last one observed): a
    /// lane whose value changed ends its open span at `t` and opens one with the new value.
    pub fn observe(&mut self, t: f64, s: &ArmState) {
        if !t.is_finite() {
            return;
        }
        for lane in Lane::ALL {
            let value = value_of(lane, s);
            let spans = &mut self.spans[lane.index()];
            let open = spans.last_mut().filter(|sp| sp.end.is_none());
            if open.as_ref().map(|sp| sp.value) == value {
                continue;
            }
            if let Some(sp) = open {
                sp.end = Some(t.max(sp.start));
            }
            if let Some(value) = value {
                spans.push(Span {
                    start: t,
                    end: None,
                    value,
                });
            }
        }
    }

    /// The spans of `lane`, in time order.
    pub fn spans(&self, lane: Lane) -> &[Span] {
        &self.spans[lane.index()]
    }

    /// The span of `lane` at time `t` (`now` ends the open one).
    pub fn span_at(&self, lane: Lane, t: f64, now: f64) -> Option<&Span> {
        let spans = self.spans(lane);
        let i = spans.partition_point(|s| s.start <= t).checked_sub(1)?;
        let s = &spans[i];
        (t <= s.end_or(now)).then_some(s)
    }

    /// Spans held, every lane.
    pub fn len(&self) -> usize {
        self.spans.iter().map(Vec::len).sum()
    }

    /// Whether no lane has a span.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::Controller;

    fn state(status: ManagementState) -> ArmState {
        ArmState {
            status,
            link: LinkState::Live,
            ..ArmState::default()
        }
    }

    #[test]
    fn an_emergency_then_cleared_is_one_span_of_its_length() {
        let mut lanes = StateLanes::new();
        lanes.observe(1.0, &state(ManagementState::Ready));
        lanes.observe(2.0, &state(ManagementState::Ready));
        lanes.observe(5.0, &state(ManagementState::Emergency));
        lanes.observe(9.5, &state(ManagementState::Standby));
        let e = lanes.spans(Lane::Emergency);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].start, e[0].end), (5.0, Some(9.5)));
        let s = lanes.spans(Lane::State);
        let words: Vec<String> = s.iter().map(|s| s.value.label()).collect();
        assert_eq!(words, ["READY", "EMERGENCY", "STANDBY"]);
        assert_eq!(s[2].end, None, "the last state lasts");
        assert!((s[2].end_or(20.0) - 20.0).abs() < 1e-12);
        // One link span: live all along.
        assert_eq!(lanes.spans(Lane::Link).len(), 1);
        assert_eq!(
            lanes.span_at(Lane::Emergency, 7.0, 20.0).map(|s| s.start),
            Some(5.0)
        );
        assert!(lanes.span_at(Lane::Emergency, 10.0, 20.0).is_none());
    }

    #[test]
    fn control_taken_by_another_client_is_a_holder_span_and_free_is_none() {
        let mut lanes = StateLanes::new();
        let mut s = state(ManagementState::Ready);
        s.ocu_id = Some(ComponentId::new(200, 1, 1));
        lanes.observe(0.0, &s);
        s.control = ControlState::Held { authority: 10 };
        lanes.observe(1.0, &s);
        s.control = ControlState::Released;
        s.controller = Some(Controller {
            id: Some(ComponentId::new(200, 7, 3)),
            authority: 200,
        });
        lanes.observe(4.0, &s);
        s.controller = Some(Controller {
            id: None,
            authority: 0,
        });
        lanes.observe(6.0, &s);
        let c = lanes.spans(Lane::Control);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!((c[0].start, c[0].end), (1.0, Some(4.0)));
        assert_eq!(c[0].value.tone(), Tone::Ours);
        assert_eq!(c[1].value.label(), "200.7.3 (authority 200)");
        assert_eq!((c[1].start, c[1].end), (4.0, Some(6.0)));
        assert!(lanes.span_at(Lane::Control, 7.0, 8.0).is_none(), "free");
    }

    #[test]
    fn a_lost_link_is_a_danger_span_between_live_ones() {
        let mut lanes = StateLanes::new();
        let mut s = state(ManagementState::Ready);
        lanes.observe(0.0, &s);
        s.link = LinkState::Lost;
        lanes.observe(3.0, &s);
        s.link = LinkState::Live;
        lanes.observe(7.0, &s);
        let l = lanes.spans(Lane::Link);
        let tones: Vec<Tone> = l.iter().map(|s| s.value.tone()).collect();
        assert_eq!(tones, [Tone::Ok, Tone::Danger, Tone::Ok]);
        assert_eq!((l[1].start, l[1].end), (3.0, Some(7.0)));
        // Non-finite times are ignored.
        lanes.observe(f64::NAN, &state(ManagementState::Emergency));
        assert!(lanes.spans(Lane::Emergency).is_empty());
    }
}
