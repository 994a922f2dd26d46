//! The gates of a jog: every condition that must hold for the OCU to command motion, each
//! with the words the window shows when it blocks (what blocks, and what to do about it).
//! The app fills [`Gates`] from what it knows each tick; [`Gates::blocking`] says which gates
//! block, always in the order of [`Gate::ALL`] so the first is the one to fix first.

/// Where the operator's jog input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// Held keys.
    #[default]
    Keys,
    /// Press-and-hold buttons on the screen.
    Screen,
    /// A gamepad.
    Gamepad,
    /// A script (`jaus-ocu control … jog`): no window, no gamepad.
    Terminal,
}

/// One condition for motion. The order of the variants is the order of [`Gate::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gate {
    /// The arm jogged is the live focused arm: never the past, never a replay.
    LiveFocusedArm,
    /// The arm is not in an emergency stop.
    NoEmergency,
    /// We hold control of the arm.
    ControlHeld,
    /// No other input of ours jogs this arm.
    OneSource,
    /// The arm is READY.
    Ready,
    /// Joint positions are fresh (younger than the staleness rule allows).
    FreshJointData,
    /// The window has the keyboard focus (not asked of a script).
    WindowFocused,
    /// The gamepad is connected (asked only when it is the source).
    GamepadConnected,
    /// The enable (deadman) is held.
    EnableHeld,
}

impl Gate {
    /// Every gate, in the order [`Gates::blocking`] reports them: the causes first (a replay,
    /// an emergency, control), the operator's own hands last.
    pub const ALL: [Gate; 9] = [
        Gate::LiveFocusedArm,
        Gate::NoEmergency,
        Gate::ControlHeld,
        Gate::OneSource,
        Gate::Ready,
        Gate::FreshJointData,
        Gate::WindowFocused,
        Gate::GamepadConnected,
        Gate::EnableHeld,
    ];

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// What blocks, for the window: "no control of this arm".
    pub fn blocks(self) -> &'static str {
        match self {
            Gate::LiveFocusedArm => "not the live arm: the view shows the past or a replay",
            Gate::NoEmergency => "the arm is in an emergency stop (or ours is not yet confirmed)",
            Gate::ControlHeld => "no control of this arm",
            Gate::OneSource => "another input is jogging this arm",
            Gate::Ready => "the arm is not READY",
            Gate::FreshJointData => "joint positions are not fresh",
            Gate::WindowFocused => "the window is not focused",
            Gate::GamepadConnected => "the gamepad is not connected",
            Gate::EnableHeld => "the enable is not held",
        }
    }

    /// What to do about it, for the window: "take control".
    pub fn remedy(self) -> &'static str {
        match self {
            Gate::LiveFocusedArm => "go live on the arm to jog (jogging never acts on the past)",
            Gate::NoEmergency => "clear the emergency stop, then Resume",
            Gate::ControlHeld => "take control of the arm",
            Gate::OneSource => "let go of the other input (keys, buttons or gamepad) first",
            Gate::Ready => "Resume the arm",
            Gate::FreshJointData => "wait for the arm's reports, or check the link",
            Gate::WindowFocused => "click into the window",
            Gate::GamepadConnected => "plug the gamepad in, or jog with keys or buttons",
            Gate::EnableHeld => "hold the enable: the trigger half-way, or the enable key",
        }
    }

    /// [`Gate::remedy`] in the words of the input that was held (a released screen button is
    /// not told about a gamepad's trigger).
    pub fn remedy_for(self, source: Option<Source>) -> &'static str {
        match (self, source) {
            (Gate::EnableHeld, Some(Source::Screen)) => "hold the jog button on the screen",
            (Gate::EnableHeld, Some(Source::Keys)) => "hold the jog key (− / +)",
            (Gate::EnableHeld, Some(Source::Gamepad)) => "hold the enable: the trigger half-way",
            _ => self.remedy(),
        }
    }

    /// The gate as lost, for the event log: "jog stopped: control lost".
    pub fn lost(self) -> &'static str {
        match self {
            Gate::LiveFocusedArm => "left the live arm",
            Gate::NoEmergency => "emergency stop",
            Gate::ControlHeld => "control lost",
            Gate::OneSource => "another input took over",
            Gate::Ready => "arm not READY",
            Gate::FreshJointData => "joint data stale",
            Gate::WindowFocused => "window focus lost",
            Gate::GamepadConnected => "gamepad disconnected",
            Gate::EnableHeld => "enable released",
        }
    }
}

impl std::fmt::Display for Gate {
    /// What blocks and what to do: "no control of this arm: take control of the arm".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.blocks(), self.remedy())
    }
}

/// A set of gates (blocking ones, usually), iterated in the order of [`Gate::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct GateSet(u16);

impl GateSet {
    /// No gate.
    pub const EMPTY: GateSet = GateSet(0);

    /// Whether the set holds no gate (nothing blocks).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `gate` is in the set.
    pub fn contains(self, gate: Gate) -> bool {
        self.0 & gate.bit() != 0
    }

    /// The set with `gate` added.
    pub fn with(self, gate: Gate) -> GateSet {
        GateSet(self.0 | gate.bit())
    }

    /// The gates in the set, in the order of [`Gate::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Gate> {
        Gate::ALL.into_iter().filter(move |g| self.contains(*g))
    }

    /// The first gate in the set (the one to fix first).
    pub fn first(self) -> Option<Gate> {
        self.iter().next()
    }

    /// How many gates the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
}

/// What the app knows of each gate this tick: `true` where the gate passes. The default
/// passes none, so a field forgotten blocks motion rather than allowing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "one flag per gate, by design"
)]
pub struct Gates {
    /// Where the jog input comes from (decides whether the gamepad and the window count).
    pub source: Source,
    /// The arm is the live focused arm (the view follows now, not a replay).
    pub live_focused_arm: bool,
    /// The arm is not in an emergency stop.
    pub no_emergency: bool,
    /// We hold control.
    pub control_held: bool,
    /// No other input of ours is jogging this arm.
    pub one_source: bool,
    /// The arm reports READY.
    pub ready: bool,
    /// Joint positions are fresh.
    pub fresh_joint_data: bool,
    /// The window has the focus.
    pub window_focused: bool,
    /// The gamepad is connected.
    pub gamepad_connected: bool,
    /// The enable is held ([`super::Enable::is_enabled`]).
    pub enable_held: bool,
}

/// What the arm's own gates read of it, gathered alike by the window (its preview, from its
/// `ArmState`: [`crate::model::state::ArmState::jog_gates`]) and the network side (the stream,
/// from its record of the arm), so both fill them by one rule ([`Gates::with_arm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "one fact per gate, by design"
)]
pub struct ArmGateFacts {
    /// The arm reports EMERGENCY.
    pub emergency: bool,
    /// Our own stop is not yet confirmed (it holds motion back as the arm's EMERGENCY does).
    pub stop_pending: bool,
    /// The arm says we hold control.
    pub control_held: bool,
    /// The arm reports READY.
    pub ready: bool,
    /// Its joint positions are fresh (`model::fresh`'s rule).
    pub positions_fresh: bool,
}

impl Gates {
    /// `self` with the arm's gates filled from `arm`: emergency, control, READY, fresh joint
    /// positions.
    pub fn with_arm(self, arm: ArmGateFacts) -> Gates {
        Gates {
            no_emergency: !arm.emergency && !arm.stop_pending,
            control_held: arm.control_held,
            ready: arm.ready,
            fresh_joint_data: arm.positions_fresh,
            ..self
        }
    }

    /// Sets whether gate `g` passes.
    pub fn set(&mut self, g: Gate, passes: bool) {
        let flag = match g {
            Gate::LiveFocusedArm => &mut self.live_focused_arm,
            Gate::NoEmergency => &mut self.no_emergency,
            Gate::ControlHeld => &mut self.control_held,
            Gate::OneSource => &mut self.one_source,
            Gate::Ready => &mut self.ready,
            Gate::FreshJointData => &mut self.fresh_joint_data,
            Gate::WindowFocused => &mut self.window_focused,
            Gate::GamepadConnected => &mut self.gamepad_connected,
            Gate::EnableHeld => &mut self.enable_held,
        };
        *flag = passes;
    }

    /// Every gate passing, for `source` (what tests and a script start from).
    pub fn all_pass(source: Source) -> Gates {
        Gates {
            source,
            live_focused_arm: true,
            no_emergency: true,
            control_held: true,
            one_source: true,
            ready: true,
            fresh_joint_data: true,
            window_focused: true,
            gamepad_connected: true,
            enable_held: true,
        }
    }

    /// The gates that block, in the order of [`Gate::ALL`]. The window gate does not apply
    /// to a script, the gamepad gate only when the gamepad is the source.
    pub fn blocking(&self) -> GateSet {
        let pass = |g: Gate| match g {
            Gate::LiveFocusedArm => self.live_focused_arm,
            Gate::NoEmergency => self.no_emergency,
            Gate::ControlHeld => self.control_held,
            Gate::OneSource => self.one_source,
            Gate::Ready => self.ready,
            Gate::FreshJointData => self.fresh_joint_data,
            Gate::WindowFocused => self.source == Source::Terminal || self.window_focused,
            Gate::GamepadConnected => self.source != Source::Gamepad || self.gamepad_connected,
            Gate::EnableHeld => self.enable_held,
        };
        Gate::ALL
            .into_iter()
            .filter(|g| !pass(*g))
            .fold(GateSet::EMPTY, GateSet::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::{ArmState, Stamped};
    use crate::model::update::{
        ArmFact, ComponentId, ControlState, LinkState, ManagementState, NetFact,
    };

    /// `gates` with the one gate `g` failing.
    fn failing(g: Gate, source: Source) -> Gates {
        let mut x = Gates::all_pass(source);
        x.set(g, false);
        x
    }

    #[test]
    fn every_gate_blocks_alone_when_it_fails() {
        assert!(Gates::all_pass(Source::Gamepad).blocking().is_empty());
        for g in Gate::ALL {
            let b = failing(g, Source::Gamepad).blocking();
            assert_eq!(b.len(), 1, "{g:?}");
            assert_eq!(b.first(), Some(g));
        }
    }

    #[test]
    fn the_gamepad_gate_counts_only_when_the_gamepad_is_the_source() {
        for s in [Source::Keys, Source::Screen, Source::Terminal] {
            assert!(
                failing(Gate::GamepadConnected, s).blocking().is_empty(),
                "{s:?}"
            );
        }
        assert!(
            failing(Gate::GamepadConnected, Source::Gamepad)
                .blocking()
                .contains(Gate::GamepadConnected)
        );
    }

    #[test]
    fn a_script_has_no_window_to_focus() {
        assert!(
            failing(Gate::WindowFocused, Source::Terminal)
                .blocking()
                .is_empty()
        );
        assert!(
            !failing(Gate::WindowFocused, Source::Keys)
                .blocking()
                .is_empty()
        );
    }

    #[test]
    fn the_default_blocks_everything_in_a_fixed_order() {
        let b = Gates::default().blocking();
        let order: Vec<Gate> = b.iter().collect();
        // Keys: the gamepad gate does not apply.
        let expected: Vec<Gate> = Gate::ALL
            .into_iter()
            .filter(|g| *g != Gate::GamepadConnected)
            .collect();
        assert_eq!(order, expected);
        assert_eq!(b.first(), Some(Gate::LiveFocusedArm));
    }

    #[test]
    fn every_gate_says_what_blocks_and_what_to_do() {
        let mut seen = std::collections::HashSet::new();
        for g in Gate::ALL {
            assert!(!g.blocks().is_empty() && !g.remedy().is_empty() && !g.lost().is_empty());
            assert!(
                seen.insert(g.blocks()),
                "{g:?} repeats another gate's words"
            );
            assert_eq!(g.to_string(), format!("{}: {}", g.blocks(), g.remedy()));
        }
        assert_eq!(Gate::ControlHeld.lost(), "control lost");
    }

    #[test]
    fn the_arms_facts_fill_their_gates() {
        let mut s = ArmState::default();
        let blocked = s
            .jog_gates(Gates::all_pass(Source::Keys), 0.0, 0.0)
            .blocking();
        assert!(blocked.contains(Gate::ControlHeld));
        assert!(blocked.contains(Gate::Ready));
        assert!(blocked.contains(Gate::FreshJointData));
        assert!(!blocked.contains(Gate::NoEmergency));
        s.apply_net(&NetFact::Selected {
            t: 0.0,
            id: ComponentId::new(1, 1, 1),
        });
        s.apply_arm(&ArmFact::Link {
            t: 0.0,
            state: LinkState::Live,
        });
        s.positions = Some(Stamped {
            t: 0.0,
            value: vec![0.0],
        });
        s.apply_arm(&ArmFact::Control {
            t: 0.0,
            state: ControlState::Held { authority: 1 },
        });
        s.apply_arm(&ArmFact::Status {
            t: 0.0,
            state: ManagementState::Ready,
        });
        assert!(
            s.jog_gates(Gates::all_pass(Source::Keys), 0.0, 0.0)
                .blocking()
                .is_empty()
        );
        s.apply_arm(&ArmFact::Status {
            t: 0.0,
            state: ManagementState::Emergency,
        });
        let b = s
            .jog_gates(Gates::all_pass(Source::Keys), 0.0, 0.0)
            .blocking();
        assert_eq!(b.first(), Some(Gate::NoEmergency));
        assert!(b.contains(Gate::Ready));
    }

    /// The preview judges fresh joint positions by the stream's rule (`model::fresh`): by the
    /// age of the last sample against its delivery, before the network side's stale flag
    /// (which lags by its dwell) has said anything.
    #[test]
    fn the_preview_holds_positions_to_the_streams_age_limit() {
        use crate::model::update::Delivery;
        let mut s = ArmState::default();
        s.apply_arm(&ArmFact::Delivery {
            t: 0.0,
            signal: crate::model::update::Signal::JointPositions,
            delivery: Delivery::Event(10.0),
        });
        s.positions = Some(Stamped {
            t: 1.0,
            value: vec![0.0],
        });
        let fresh = |s: &ArmState, now: f64| {
            !s.jog_gates(Gates::all_pass(Source::Keys), now, 0.0)
                .blocking()
                .contains(Gate::FreshJointData)
        };
        // 10 Hz: held to the 0.5 s floor, with no stale flag said.
        assert!(fresh(&s, 1.5));
        assert!(!fresh(&s, 1.6));
        // At 1 Hz, three periods.
        s.apply_arm(&ArmFact::Delivery {
            t: 0.0,
            signal: crate::model::update::Signal::JointPositions,
            delivery: Delivery::Event(1.0),
        });
        assert!(fresh(&s, 3.9));
        assert!(!fresh(&s, 4.1));
    }
}
