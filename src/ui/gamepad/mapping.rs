//! The gamepad mapping (the mapping file) and the pure function that turns one reading of the
//! pad ([`RawPad`]) into what the operator asks for ([`PadIntent`]).
//!
//! The default mapping, for a 6- or 7-joint arm on a two-stick pad:
//! - **Joint mode**: each stick's vertical axis drives one joint, so a stick pushed diagonally
//!   never moves two joints. The bumpers page through the joints two at a time: 1–2, 3–4, 5–6,
//!   7 (pages whose joints the arm lacks are skipped).
//! - **Tool mode**: page 1 is linear (left stick: x forward, y left; right stick vertical: z
//!   up), page 2 angular (left stick: roll about x, pitch about y; right stick horizontal: yaw
//!   about z).
//! - North (Y / triangle) toggles joint and tool mode; West (X / square) toggles the base and
//!   tool frame; the left trigger is the three-position enable ([`Enable`]).
//!
//! After any change of mode, page or frame, and when the pad connects, the sticks drive nothing
//! until every mapped stick is back inside the deadband: a stick held through a change never
//! drives the newly mapped joint.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::jog::{Deflection, Enable, EnableState, EnableThresholds, Frame};

/// The mapping the program uses without a file; `assets/gamepad.toml` holds the same.
pub const EXAMPLE_TOML: &str = include_str!("../../../assets/gamepad.toml");

/// A button counts as pressed at or above this value (0..1).
pub const PRESSED: f64 = 0.5;

/// The highest joint number a mapping may name.
pub const MAX_JOINT: u8 = 16;

/// A stick axis, −1..1 (right and up positive, as gilrs reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Left stick, horizontal.
    LeftStickX,
    /// Left stick, vertical.
    LeftStickY,
    /// Right stick, horizontal.
    RightStickX,
    /// Right stick, vertical.
    RightStickY,
}

impl Axis {
    /// Every axis, in the order of [`RawPad::axes`].
    pub const ALL: [Axis; 4] = [
        Axis::LeftStickX,
        Axis::LeftStickY,
        Axis::RightStickX,
        Axis::RightStickY,
    ];

    /// The name the mapping file and the screen use.
    pub fn name(self) -> &'static str {
        match self {
            Axis::LeftStickX => "left_stick_x",
            Axis::LeftStickY => "left_stick_y",
            Axis::RightStickX => "right_stick_x",
            Axis::RightStickY => "right_stick_y",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A button or trigger, 0..1 (digital buttons are 0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    /// A / cross.
    South,
    /// B / circle.
    East,
    /// Y / triangle.
    North,
    /// X / square.
    West,
    /// The left shoulder button (LB / L1).
    LeftBumper,
    /// The right shoulder button (RB / R1).
    RightBumper,
    /// The left analog trigger (LT / L2).
    LeftTrigger,
    /// The right analog trigger (RT / R2).
    RightTrigger,
    /// Select / back / share.
    Select,
    /// Start / options.
    Start,
    /// The vendor's button (guide / home).
    Mode,
    /// The left stick pressed in.
    LeftThumb,
    /// The right stick pressed in.
    RightThumb,
    /// D-pad up.
    DPadUp,
    /// D-pad down.
    DPadDown,
    /// D-pad left.
    DPadLeft,
    /// D-pad right.
    DPadRight,
}

impl Button {
    /// Every button, in the order of [`RawPad::buttons`].
    pub const ALL: [Button; 17] = [
        Button::South,
        Button::East,
        Button::North,
        Button::West,
        Button::LeftBumper,
        Button::RightBumper,
        Button::LeftTrigger,
        Button::RightTrigger,
        Button::Select,
        Button::Start,
        Button::Mode,
        Button::LeftThumb,
        Button::RightThumb,
        Button::DPadUp,
        Button::DPadDown,
        Button::DPadLeft,
        Button::DPadRight,
    ];

    /// The name the mapping file and the screen use.
    pub fn name(self) -> &'static str {
        match self {
            Button::South => "south",
            Button::East => "east",
            Button::North => "north",
            Button::West => "west",
            Button::LeftBumper => "left_bumper",
            Button::RightBumper => "right_bumper",
            Button::LeftTrigger => "left_trigger",
            Button::RightTrigger => "right_trigger",
            Button::Select => "select",
            Button::Start => "start",
            Button::Mode => "mode",
            Button::LeftThumb => "left_thumb",
            Button::RightThumb => "right_thumb",
            Button::DPadUp => "d_pad_up",
            Button::DPadDown => "d_pad_down",
            Button::DPadLeft => "d_pad_left",
            Button::DPadRight => "d_pad_right",
        }
    }

    /// Whether the button reports a travel (0..1), not only pressed or not.
    pub fn is_analog(self) -> bool {
        matches!(self, Button::LeftTrigger | Button::RightTrigger)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One reading of a pad: a plain snapshot (no gilrs type), so tests construct it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawPad {
    /// Whether a pad is connected (all values are neutral when not).
    pub connected: bool,
    /// Stick axes, −1..1, in the order of [`Axis::ALL`].
    pub axes: [f64; 4],
    /// Buttons and triggers, 0..1, in the order of [`Button::ALL`].
    pub buttons: [f64; 17],
}

impl Default for RawPad {
    fn default() -> Self {
        Self::unplugged()
    }
}

impl RawPad {
    /// No pad.
    pub fn unplugged() -> RawPad {
        RawPad {
            connected: false,
            axes: [0.0; 4],
            buttons: [0.0; 17],
        }
    }

    /// A connected pad at rest: sticks centred, nothing pressed.
    pub fn at_rest() -> RawPad {
        RawPad {
            connected: true,
            ..RawPad::unplugged()
        }
    }

    /// The axis's value, −1..1.
    pub fn axis(&self, axis: Axis) -> f64 {
        self.axes[axis.index()]
    }

    /// The button's value, 0..1.
    pub fn button(&self, button: Button) -> f64 {
        self.buttons[button.index()]
    }

    /// Whether the button is pressed (at or above [`PRESSED`]).
    pub fn pressed(&self, button: Button) -> bool {
        self.button(button) >= PRESSED
    }

    /// Sets an axis (a builder for tests and the worker).
    pub fn with_axis(mut self, axis: Axis, value: f64) -> RawPad {
        self.axes[axis.index()] = value;
        self
    }

    /// Sets a button (a builder for tests and the worker).
    pub fn with_button(mut self, button: Button, value: f64) -> RawPad {
        self.buttons[button.index()] = value;
        self
    }
}

/// A tool-point twist component a stick axis drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwistAxis {
    /// Linear x.
    LinearX,
    /// Linear y.
    LinearY,
    /// Linear z.
    LinearZ,
    /// Angular x (roll).
    AngularX,
    /// Angular y (pitch).
    AngularY,
    /// Angular z (yaw).
    AngularZ,
}

impl TwistAxis {
    const ALL: [TwistAxis; 6] = [
        TwistAxis::LinearX,
        TwistAxis::LinearY,
        TwistAxis::LinearZ,
        TwistAxis::AngularX,
        TwistAxis::AngularY,
        TwistAxis::AngularZ,
    ];

    /// The name the mapping file and the screen use.
    pub fn name(self) -> &'static str {
        match self {
            TwistAxis::LinearX => "linear_x",
            TwistAxis::LinearY => "linear_y",
            TwistAxis::LinearZ => "linear_z",
            TwistAxis::AngularX => "angular_x",
            TwistAxis::AngularY => "angular_y",
            TwistAxis::AngularZ => "angular_z",
        }
    }

    /// Its place in [`Deflection::Twist`]'s axes.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A twist component and its sign: in the file `"linear_x"`, or `"-linear_y"` for pushing
/// the stick's positive way to move the negative way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolTarget {
    /// The component.
    pub axis: TwistAxis,
    /// Whether the stick's positive direction drives the component negative.
    pub negate: bool,
}

impl ToolTarget {
    const fn plus(axis: TwistAxis) -> ToolTarget {
        ToolTarget {
            axis,
            negate: false,
        }
    }

    const fn minus(axis: TwistAxis) -> ToolTarget {
        ToolTarget { axis, negate: true }
    }
}

impl TryFrom<String> for ToolTarget {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        let (negate, name) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.as_str()),
        };
        TwistAxis::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .map(|axis| ToolTarget { axis, negate })
            .ok_or_else(|| {
                format!(
                    "unknown tool axis `{s}`: write one of linear_x, linear_y, linear_z, \
                     angular_x, angular_y, angular_z, with a leading `-` to reverse it"
                )
            })
    }
}

impl From<ToolTarget> for String {
    fn from(t: ToolTarget) -> String {
        format!("{}{}", if t.negate { "-" } else { "" }, t.axis.name())
    }
}

impl std::fmt::Display for ToolTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from(*self))
    }
}

/// One page: what each stick axis drives while the page is selected (`None`: nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    bound(serialize = "T: Serialize", deserialize = "T: Deserialize<'de>")
)]
pub struct Page<T> {
    /// The left stick's horizontal axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_stick_x: Option<T>,
    /// The left stick's vertical axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_stick_y: Option<T>,
    /// The right stick's horizontal axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_stick_x: Option<T>,
    /// The right stick's vertical axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_stick_y: Option<T>,
}

impl<T> Default for Page<T> {
    /// A page that maps nothing.
    fn default() -> Self {
        Page {
            left_stick_x: None,
            left_stick_y: None,
            right_stick_x: None,
            right_stick_y: None,
        }
    }
}

impl<T: Copy> Page<T> {
    /// What `axis` drives on this page.
    pub fn get(&self, axis: Axis) -> Option<T> {
        match axis {
            Axis::LeftStickX => self.left_stick_x,
            Axis::LeftStickY => self.left_stick_y,
            Axis::RightStickX => self.right_stick_x,
            Axis::RightStickY => self.right_stick_y,
        }
    }

    /// The axes this page maps, with what each drives, in the order of [`Axis::ALL`].
    pub fn entries(&self) -> impl Iterator<Item = (Axis, T)> + '_ {
        Axis::ALL
            .into_iter()
            .filter_map(|a| self.get(a).map(|t| (a, t)))
    }
}

/// The three-position enable: which trigger, and where its positions begin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnableMapping {
    /// The trigger held as the enable (an analog trigger: it needs three positions).
    pub trigger: Button,
    /// At or below this the trigger is released (re-arms the enable).
    pub release: f64,
    /// From this (below `squeeze`) a released trigger enables.
    pub engage: f64,
    /// From this the trigger is squeezed fully: off until released.
    pub squeeze: f64,
}

impl EnableMapping {
    /// The thresholds for [`Enable`].
    pub fn thresholds(&self) -> EnableThresholds {
        EnableThresholds {
            release: self.release,
            engage: self.engage,
            squeeze: self.squeeze,
        }
    }
}

/// The buttons that change what the sticks drive (each acts when pressed, not while held).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buttons {
    /// The previous page of the current mode.
    pub previous_page: Button,
    /// The next page of the current mode.
    pub next_page: Button,
    /// Toggles joint and tool mode.
    pub mode: Button,
    /// Toggles the tool-point frame: base and tool.
    pub frame: Button,
}

/// The gamepad mapping: the mapping file's contents (module doc for the default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// Stick deflections smaller than this (0..1) count as none; the rest is rescaled so the
    /// output still runs from 0 to 1.
    pub deadband: f64,
    /// Axes whose direction is reversed in every mode (a pad that reports up as negative, or
    /// an operator who prefers it).
    #[serde(default)]
    pub invert: Vec<Axis>,
    /// The enable.
    pub enable: EnableMapping,
    /// Page, mode and frame buttons.
    pub buttons: Buttons,
    /// Joint mode's pages: the joint (1-based) each stick axis drives.
    pub joint_pages: Vec<Page<u8>>,
    /// Tool mode's pages: the twist component each stick axis drives.
    pub tool_pages: Vec<Page<ToolTarget>>,
}

impl Default for Mapping {
    fn default() -> Self {
        let joints = |a: u8, b: Option<u8>| Page {
            left_stick_y: Some(a),
            right_stick_y: b,
            ..Page::default()
        };
        Mapping {
            deadband: 0.15,
            invert: Vec::new(),
            enable: EnableMapping {
                trigger: Button::LeftTrigger,
                release: 0.1,
                engage: 0.25,
                squeeze: 0.9,
            },
            buttons: Buttons {
                previous_page: Button::LeftBumper,
                next_page: Button::RightBumper,
                mode: Button::North,
                frame: Button::West,
            },
            joint_pages: vec![
                joints(1, Some(2)),
                joints(3, Some(4)),
                joints(5, Some(6)),
                joints(7, None),
            ],
            tool_pages: vec![
                Page {
                    left_stick_x: Some(ToolTarget::minus(TwistAxis::LinearY)),
                    left_stick_y: Some(ToolTarget::plus(TwistAxis::LinearX)),
                    right_stick_x: None,
                    right_stick_y: Some(ToolTarget::plus(TwistAxis::LinearZ)),
                },
                Page {
                    left_stick_x: Some(ToolTarget::plus(TwistAxis::AngularX)),
                    left_stick_y: Some(ToolTarget::plus(TwistAxis::AngularY)),
                    right_stick_x: Some(ToolTarget::minus(TwistAxis::AngularZ)),
                    right_stick_y: None,
                },
            ],
        }
    }
}

/// Why a mapping file could not be used. Each message names the file (and the line where
/// known) and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    /// The file could not be read.
    #[error(
        "cannot read the gamepad mapping {}: {source} (check the path and its permissions, or \
         remove the file to use the default mapping)",
        path.display()
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a mapping: bad TOML, an unknown key, a wrong type or name.
    #[error(
        "{}:{line}:{column}: {message} (fix that line; the default mapping is \
         assets/gamepad.toml in the source, and README's \"Gamepad mapping\" lists the names)",
        path.display()
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file parses but says something unusable (thresholds out of order, a button used
    /// twice, a joint 0, no pages).
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the key at fault (1 when it cannot be found).
        line: usize,
        /// What is wrong and what to write instead.
        message: String,
    },
}

impl Mapping {
    /// Reads and checks the mapping file at `path`.
    pub fn load(path: &Path) -> Result<Mapping, MappingError> {
        let text = std::fs::read_to_string(path).map_err(|source| MappingError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Mapping::parse(&text, path)
    }

    /// Parses and checks a mapping's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Mapping, MappingError> {
        let mapping: Mapping = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            MappingError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        mapping
            .check()
            .map_err(|(key, value, message)| MappingError::Invalid {
                path: path.to_path_buf(),
                line: line_of_key(text, key, value.as_deref()),
                message,
            })?;
        Ok(mapping)
    }

    /// The mapping as TOML (for writing a file to edit).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks what types cannot: returns the key at fault (and its value, when the key is
    /// written more than once) and what to do.
    fn check(&self) -> Result<(), (&'static str, Option<String>, String)> {
        if !(0.0..0.9).contains(&self.deadband) {
            return Err((
                "deadband",
                None,
                format!(
                    "deadband {} is outside 0..0.9: write a fraction of the stick's travel such as 0.15",
                    self.deadband
                ),
            ));
        }
        let e = &self.enable;
        if !(0.0 <= e.release && e.release < e.engage && e.engage < e.squeeze && e.squeeze <= 1.0) {
            return Err((
                "release",
                None,
                format!(
                    "the enable's thresholds must rise within 0..1 (release < engage < squeeze): \
                     they are {}, {}, {}; the default is 0.1, 0.25, 0.9",
                    e.release, e.engage, e.squeeze
                ),
            ));
        }
        if !e.trigger.is_analog() {
            return Err((
                "trigger",
                None,
                format!(
                    "the enable `{}` is a button with two positions: a three-position enable \
                     needs an analog trigger (left_trigger or right_trigger)",
                    e.trigger.name()
                ),
            ));
        }
        let b = &self.buttons;
        let used = [
            ("trigger", e.trigger),
            ("previous_page", b.previous_page),
            ("next_page", b.next_page),
            ("mode", b.mode),
            ("frame", b.frame),
        ];
        for (i, (key, button)) in used.iter().enumerate() {
            if let Some((other, _)) = used[..i].iter().find(|(_, x)| x == button) {
                return Err((
                    key,
                    None,
                    format!(
                        "`{}` is both `{other}` and `{key}`: give each its own button",
                        button.name()
                    ),
                ));
            }
        }
        if self.joint_pages.is_empty() || self.tool_pages.is_empty() {
            return Err((
                "joint_pages",
                None,
                "a mapping needs at least one [[joint_pages]] and one [[tool_pages]] table".into(),
            ));
        }
        for page in &self.joint_pages {
            for (axis, joint) in page.entries() {
                if joint == 0 || joint > MAX_JOINT {
                    return Err((
                        axis.name(),
                        Some(joint.to_string()),
                        format!(
                            "joint {joint} on {}: joints are numbered from 1 to {MAX_JOINT}",
                            axis.name()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The joint pages that drive at least one of an arm's `joints`, as indices into
    /// [`Mapping::joint_pages`].
    pub fn usable_joint_pages(&self, joints: usize) -> Vec<usize> {
        self.joint_pages
            .iter()
            .enumerate()
            .filter(|(_, p)| p.entries().any(|(_, j)| (j as usize) <= joints))
            .map(|(i, _)| i)
            .collect()
    }

    /// The axis after inversion and the deadband: −1..1, 0 inside the deadband; a value that
    /// is not a number reads as 0.
    pub fn shaped(&self, raw: &RawPad, axis: Axis) -> f64 {
        let mut v = raw.axis(axis);
        if v.is_nan() {
            return 0.0;
        }
        v = v.clamp(-1.0, 1.0);
        if self.invert.contains(&axis) {
            v = -v;
        }
        let d = self.deadband;
        if v.abs() <= d {
            0.0
        } else {
            v.signum() * (v.abs() - d) / (1.0 - d)
        }
    }

    /// The pure step: one reading of the pad and the arm's joint count give what the operator
    /// asks for. `state` carries the enable, the mode, page and frame, and the button edges
    /// from one reading to the next.
    ///
    /// The deflection is what the sticks ask for whether or not the enable is held (the jog's
    /// gates stop motion without it; the screen shows both). A disconnected pad gives
    /// `Deflection::Released` and disarms the enable.
    pub fn intent(&self, raw: &RawPad, joints: usize, state: &mut PadState) -> PadIntent {
        if !raw.connected {
            state.enable.disarm();
            state.was_connected = false;
            state.held = [false; 4];
            return self.report(state, joints, Deflection::Released, false);
        }
        if !state.was_connected {
            // Buttons held as the pad appears are not presses; sticks must centre first.
            state.was_connected = true;
            state.held = self.held(raw);
            state.recentre = true;
        }
        state.enable.update(raw.button(self.enable.trigger));
        self.buttons_pressed(raw, joints, state);
        let pages = self.page_count(state.mode, joints);
        state.page = state.page.min(pages.saturating_sub(1));

        let entries = self.current_entries(state.mode, state.page, joints);
        let values: Vec<(Entry, f64)> = entries
            .into_iter()
            .map(|(axis, e)| (e, self.shaped(raw, axis)))
            .collect();
        if state.recentre {
            if values.iter().all(|(_, v)| *v == 0.0) {
                state.recentre = false;
            } else {
                return self.report(state, joints, Deflection::Released, true);
            }
        }
        let deflection = if values.iter().all(|(_, v)| *v == 0.0) {
            Deflection::Released
        } else {
            match state.mode {
                Mode::Joint => {
                    let mut d = vec![0.0; joints];
                    for (e, v) in &values {
                        if let Entry::Joint(j) = e {
                            d[*j] += v;
                        }
                    }
                    Deflection::Joints(d.into_iter().map(|x| x.clamp(-1.0, 1.0)).collect())
                }
                Mode::Tool => {
                    let mut axes = [0.0; 6];
                    for (e, v) in &values {
                        if let Entry::Tool(t) = e {
                            axes[t.axis.index()] += if t.negate { -v } else { *v };
                        }
                    }
                    Deflection::Twist {
                        axes: axes.map(|x| x.clamp(-1.0, 1.0)),
                        frame: state.frame,
                    }
                }
            }
        };
        self.report(state, joints, deflection, true)
    }

    fn held(&self, raw: &RawPad) -> [bool; 4] {
        let b = &self.buttons;
        [b.previous_page, b.next_page, b.mode, b.frame].map(|x| raw.pressed(x))
    }

    /// Acts on the page, mode and frame buttons' presses (rising edges).
    fn buttons_pressed(&self, raw: &RawPad, joints: usize, state: &mut PadState) {
        let now = self.held(raw);
        let pressed: Vec<bool> = now.iter().zip(state.held).map(|(n, w)| *n && !w).collect();
        state.held = now;
        let pages = self.page_count(state.mode, joints);
        let before = (state.mode, state.page, state.frame);
        if pressed[0] {
            state.page = state.page.saturating_sub(1);
        }
        if pressed[1] && state.page + 1 < pages {
            state.page += 1;
        }
        if pressed[2] {
            state.mode = match state.mode {
                Mode::Joint => Mode::Tool,
                Mode::Tool => Mode::Joint,
            };
            state.page = 0;
        }
        if pressed[3] {
            state.frame = match state.frame {
                Frame::Base => Frame::Tool,
                Frame::Tool => Frame::Base,
            };
        }
        if (state.mode, state.page, state.frame) != before {
            state.recentre = true;
        }
    }

    fn page_count(&self, mode: Mode, joints: usize) -> usize {
        match mode {
            Mode::Joint => self.usable_joint_pages(joints).len(),
            Mode::Tool => self.tool_pages.len(),
        }
    }

    /// The mapped axes of the current page (joints beyond the arm's left out), 0-based joints.
    fn current_entries(&self, mode: Mode, page: usize, joints: usize) -> Vec<(Axis, Entry)> {
        match mode {
            Mode::Joint => self
                .usable_joint_pages(joints)
                .get(page)
                .map(|&i| {
                    self.joint_pages[i]
                        .entries()
                        .filter(|(_, j)| (*j as usize) <= joints)
                        .map(|(a, j)| (a, Entry::Joint(j as usize - 1)))
                        .collect()
                })
                .unwrap_or_default(),
            Mode::Tool => self
                .tool_pages
                .get(page)
                .map(|p| p.entries().map(|(a, t)| (a, Entry::Tool(t))).collect())
                .unwrap_or_default(),
        }
    }

    fn report(
        &self,
        state: &PadState,
        joints: usize,
        deflection: Deflection,
        connected: bool,
    ) -> PadIntent {
        let axes = self
            .current_entries(state.mode, state.page, joints)
            .into_iter()
            .map(|(axis, e)| {
                let drives = match e {
                    Entry::Joint(j) => format!("joint {}", j + 1),
                    Entry::Tool(t) => t.to_string(),
                };
                (axis, drives)
            })
            .collect();
        PadIntent {
            connected,
            enable: state.enable.state(),
            deflection,
            mode: state.mode,
            frame: state.frame,
            page: state.page,
            pages: self.page_count(state.mode, joints),
            recentring: connected && state.recentre,
            axes,
        }
    }
}

/// What one mapped axis drives (joints 0-based).
#[derive(Debug, Clone, Copy)]
enum Entry {
    Joint(usize),
    Tool(ToolTarget),
}

/// What the sticks drive: joints one page at a time, or the tool point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Joint jog.
    #[default]
    Joint,
    /// Tool-point jog.
    Tool,
}

/// What [`Mapping::intent`] carries from one reading to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct PadState {
    enable: Enable,
    mode: Mode,
    frame: Frame,
    page: usize,
    held: [bool; 4],
    was_connected: bool,
    recentre: bool,
}

impl PadState {
    /// The state before the first reading: joint mode, page 1, base frame, the enable unarmed.
    pub fn new(mapping: &Mapping) -> PadState {
        PadState {
            enable: Enable::new(mapping.enable.thresholds()),
            mode: Mode::Joint,
            frame: Frame::Base,
            page: 0,
            held: [false; 4],
            was_connected: false,
            recentre: true,
        }
    }
}

/// What the operator asks for through the pad, for the jog and the screen.
#[derive(Debug, Clone, PartialEq)]
pub struct PadIntent {
    /// Whether a pad is connected (the gamepad gate).
    pub connected: bool,
    /// The enable's state (the enable gate passes only when `Enabled`).
    pub enable: EnableState,
    /// What the sticks ask for (module doc: regardless of the enable).
    pub deflection: Deflection,
    /// Joint or tool mode.
    pub mode: Mode,
    /// The tool-point frame (used in tool mode).
    pub frame: Frame,
    /// The current page of the mode, 0-based.
    pub page: usize,
    /// How many pages the mode has (for this arm in joint mode).
    pub pages: usize,
    /// Whether the sticks drive nothing until centred (after a connect or a change).
    pub recentring: bool,
    /// What each mapped axis of the current page drives, in words (`joint 3`, `-linear_y`).
    pub axes: Vec<(Axis, String)>,
}

impl PadIntent {
    /// Whether the enable is held in its middle position.
    pub fn enabled(&self) -> bool {
        self.enable == EnableState::Enabled
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The 1-based line where `key = value` (any value when `value` is `None`) or the table
/// `[[key]]` is first written in `text` (1 when it is not).
fn line_of_key(text: &str, key: &str, value: Option<&str>) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            if l.starts_with(&format!("[[{key}]]")) || l.starts_with(&format!("[{key}]")) {
                return true;
            }
            let Some(rest) = l.strip_prefix(key) else {
                return false;
            };
            let Some(v) = rest.trim_start().strip_prefix('=') else {
                return false;
            };
            let v = v.split('#').next().unwrap_or("").trim();
            value.is_none_or(|want| v == want)
        })
        .map_or(1, |i| i + 1)
}
