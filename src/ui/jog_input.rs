//! The window's side of a jog (issue 32): which joint or tool-point axis is selected, what
//! the operator holds (keys, the buttons beside the gauges, the gamepad), and the
//! [`JogRequest`] that tells the network side each frame.
//!
//! The window never streams motion itself: it reports what is held, at every frame while
//! anything is held (the window asks to be drawn every [`JOG_FRAME`] meanwhile), and once
//! more when it is let go. The network side streams the commands and stops them on its own
//! when this input ages past one period (a window that freezes stops the arm).
//!
//! One input at a time: the buttons on the screen win over the keys, the keys over the
//! gamepad; the network side refuses a second input while another one moves the arm.

use std::time::Duration;

use crate::model::jog::{Deflection, Frame, Input, JogOptions, JogRequest, Source};
use crate::model::update::ComponentId;

/// How often the window is drawn while a jog input is held: well inside the jog's period
/// (50 ms), so the input the network side holds is never older than one period.
pub const JOG_FRAME: Duration = Duration::from_millis(20);

/// The tool-point axes, in [`Deflection::Twist`] order.
pub const TOOL_AXES: [&str; 6] = ["x", "y", "z", "rx", "ry", "rz"];

/// What the gamepad asks, as the window reads it each frame.
#[derive(Debug, Clone, PartialEq)]
pub struct PadInput {
    /// The pad is connected.
    pub connected: bool,
    /// Its enable is held (the three-position trigger in its middle position).
    pub enable_held: bool,
    /// What its axes ask.
    pub deflection: Deflection,
}

/// What the operator holds this frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Held {
    /// The jog keys: −1, 0 or +1 for the selected axis.
    pub keys: f64,
    /// The button held on the screen: axis (joint index, or tool axis in tool mode) and
    /// direction (±1).
    pub screen: Option<(usize, f64)>,
    /// The gamepad, when one is in use.
    pub pad: Option<PadInput>,
}

/// The window's jog state (kept in the view state).
#[derive(Debug, Clone, PartialEq)]
pub struct JogUi {
    /// Tool-point jog (else joint jog).
    pub tool: bool,
    /// The selected joint (0-based) or tool-point axis.
    pub axis: usize,
    /// The frame tool-point axes are in.
    pub frame: Frame,
    /// The button held on the screen this frame (the gauges panel sets it).
    pub screen: Option<(usize, f64)>,
    /// The axis of the last button held on the screen (drawn pressed while it moves).
    pub last_screen: Option<usize>,
    /// The operator acknowledged, for this session, that a velocity or effort jog keeps
    /// moving until the arm's access timeout lapses if the link drops.
    pub acknowledged: bool,
    /// The gamepad window is open.
    pub show_gamepad: bool,
    /// The last request asked for motion (the release is still to be said).
    active: bool,
    /// The input of the last request that asked for motion (a release is said as its).
    last_source: Source,
    /// An acknowledgement was just given: the input held then is not a jog; motion needs a
    /// fresh press (cleared once nothing is held).
    fresh_press_needed: bool,
}

impl Default for JogUi {
    fn default() -> Self {
        Self {
            tool: false,
            axis: 0,
            frame: Frame::Base,
            screen: None,
            last_screen: None,
            acknowledged: false,
            show_gamepad: false,
            active: false,
            last_source: Source::Keys,
            fresh_press_needed: false,
        }
    }
}

impl JogUi {
    /// Selects the next (`+1`) or previous (`-1`) axis among `joints` joints (or the six
    /// tool-point axes), wrapping around.
    pub fn step_axis(&mut self, delta: isize, joints: usize) {
        let n = if self.tool { TOOL_AXES.len() } else { joints };
        if n == 0 {
            return;
        }
        self.axis = (self.axis.min(n - 1) as isize + delta).rem_euclid(n as isize) as usize;
    }

    /// The operator acknowledged the access timeout for this session: nothing moves until
    /// the jog is pressed again (a key held while clicking is not a jog).
    pub fn acknowledge(&mut self) {
        self.acknowledged = true;
        self.fresh_press_needed = true;
    }

    /// Switches between joint and tool-point jog (the axis back to the first).
    pub fn toggle_mode(&mut self) {
        self.tool = !self.tool;
        self.axis = 0;
    }

    /// The name of the selected axis: `joint 3` or `tool z (base frame)`.
    pub fn axis_name(&self) -> String {
        if self.tool {
            let frame = match self.frame {
                Frame::Base => "base frame",
                Frame::Tool => "tool frame",
            };
            format!(
                "tool {} ({frame})",
                TOOL_AXES.get(self.axis).copied().unwrap_or("?")
            )
        } else {
            format!("joint {}", self.axis + 1)
        }
    }

    fn deflection(&self, axis: usize, amount: f64, joints: usize) -> Deflection {
        if self.tool {
            let mut axes = [0.0; 6];
            if let Some(a) = axes.get_mut(axis) {
                *a = amount;
            }
            Deflection::Twist {
                axes,
                frame: self.frame,
            }
        } else {
            Deflection::joint(joints, axis, amount)
        }
    }

    /// The request to send this frame for `arm` (of `joints` joints), or `None` when
    /// nothing is held and the release was said already. `at` is the network side's clock
    /// (s); `live` whether the live arm is shown (not the past, not a replay); `focused`
    /// whether the window has the keyboard focus; `streaming` whether the arm's jog status
    /// says commands still stream (the release is said again until it stops).
    #[allow(
        clippy::too_many_arguments,
        reason = "each is one fact the request carries"
    )]
    pub fn request(
        &mut self,
        arm: ComponentId,
        joints: usize,
        held: &Held,
        at: f64,
        live: bool,
        focused: bool,
        streaming: bool,
        options: JogOptions,
    ) -> Option<JogRequest> {
        let (source, deflection, enable, pad_connected) = if let Some((axis, dir)) = held.screen {
            (
                Source::Screen,
                self.deflection(axis, dir, joints),
                true,
                true,
            )
        } else if held.keys != 0.0 {
            (
                Source::Keys,
                self.deflection(self.axis, held.keys, joints),
                true,
                true,
            )
        } else if let Some(p) = held
            .pad
            .as_ref()
            .filter(|p| p.deflection != Deflection::Released || !p.connected || p.enable_held)
        {
            (
                Source::Gamepad,
                p.deflection.clone(),
                p.enable_held,
                p.connected,
            )
        } else {
            // Let go: for the keys and the screen the release is the enable let go too (it
            // is said as a release, not as a gamepad's enable).
            (
                self.last_source,
                Deflection::Released,
                self.last_source != Source::Gamepad,
                true,
            )
        };
        if deflection == Deflection::Released {
            self.fresh_press_needed = false;
        }
        let deflection = if self.fresh_press_needed {
            Deflection::Released
        } else {
            deflection
        };
        let asks = deflection != Deflection::Released;
        if !asks && !self.active && !streaming {
            return None;
        }
        self.active = asks;
        if asks {
            self.last_source = source;
        }
        let mut req = JogRequest::new(arm, source, Input { at, deflection }, options);
        req.live = live;
        req.window_focused = focused;
        req.gamepad_connected = pad_connected;
        req.enable_held = enable;
        Some(req)
    }

    /// Whether the last request asked for motion (the window is drawn every [`JOG_FRAME`]
    /// meanwhile).
    pub fn is_active(&self) -> bool {
        self.active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> ComponentId {
        ComponentId::new(126, 1, 10)
    }

    #[test]
    fn nothing_held_sends_nothing_and_a_release_is_said_once() {
        let mut j = JogUi::default();
        let o = JogOptions::default();
        assert!(
            j.request(arm(), 7, &Held::default(), 0.0, true, true, false, o)
                .is_none()
        );
        let held = Held {
            keys: 1.0,
            ..Held::default()
        };
        let r = j
            .request(arm(), 7, &held, 0.1, true, true, false, o)
            .unwrap();
        assert_eq!(r.source, Source::Keys);
        assert_eq!(r.input.deflection, Deflection::joint(7, 0, 1.0));
        assert!(r.enable_held);
        let r = j
            .request(arm(), 7, &Held::default(), 0.2, true, true, false, o)
            .unwrap();
        assert_eq!(r.input.deflection, Deflection::Released);
        assert!(
            j.request(arm(), 7, &Held::default(), 0.3, true, true, false, o)
                .is_none()
        );
        // Still streaming on the network side: the release is said again.
        assert!(
            j.request(arm(), 7, &Held::default(), 0.3, true, true, true, o)
                .is_some()
        );
    }

    #[test]
    fn an_acknowledgement_never_starts_motion_and_a_key_release_is_a_release() {
        let mut j = JogUi::default();
        let o = JogOptions::default();
        let held = Held {
            keys: 1.0,
            ..Held::default()
        };
        // The key held while the operator clicks the acknowledgement: not a jog.
        j.acknowledge();
        assert!(j.acknowledged);
        for t in [0.0, 0.02, 0.04] {
            let r = j.request(arm(), 7, &held, t, true, true, true, o);
            assert!(
                r.as_ref()
                    .is_none_or(|r| r.input.deflection == Deflection::Released),
                "{r:?}"
            );
        }
        // Let go, pressed again: now it jogs.
        let _ = j.request(arm(), 7, &Held::default(), 0.06, true, true, false, o);
        let r = j
            .request(arm(), 7, &held, 0.08, true, true, false, o)
            .unwrap();
        assert_eq!(r.input.deflection, Deflection::joint(7, 0, 1.0));
        // Let go of a key: a release with the enable (said as released, not as a gamepad's
        // enable let go).
        let r = j
            .request(arm(), 7, &Held::default(), 0.1, true, true, true, o)
            .unwrap();
        assert_eq!(r.input.deflection, Deflection::Released);
        assert!(r.enable_held);
    }

    #[test]
    fn the_screen_wins_over_keys_and_keys_over_the_pad() {
        let mut j = JogUi::default();
        let o = JogOptions::default();
        let pad = PadInput {
            connected: true,
            enable_held: true,
            deflection: Deflection::joint(7, 5, 0.5),
        };
        let held = Held {
            keys: -1.0,
            screen: Some((2, 1.0)),
            pad: Some(pad.clone()),
        };
        let r = j
            .request(arm(), 7, &held, 0.0, true, true, false, o)
            .unwrap();
        assert_eq!(
            (r.source, r.input.deflection),
            (Source::Screen, Deflection::joint(7, 2, 1.0))
        );
        let held = Held {
            screen: None,
            ..held
        };
        let r = j
            .request(arm(), 7, &held, 0.0, true, true, false, o)
            .unwrap();
        assert_eq!(r.source, Source::Keys);
        let held = Held { keys: 0.0, ..held };
        let r = j
            .request(arm(), 7, &held, 0.0, true, true, false, o)
            .unwrap();
        assert_eq!(r.source, Source::Gamepad);
        // An unplugged pad is said as such (its gate blocks), not as nothing held.
        let held = Held {
            pad: Some(PadInput {
                connected: false,
                enable_held: false,
                deflection: Deflection::Released,
            }),
            ..Held::default()
        };
        let r = j
            .request(arm(), 7, &held, 0.0, true, true, false, o)
            .unwrap();
        assert_eq!(r.source, Source::Gamepad);
        assert!(!r.gamepad_connected);
    }

    #[test]
    fn axes_wrap_and_tool_mode_has_six() {
        let mut j = JogUi::default();
        j.step_axis(-1, 7);
        assert_eq!(j.axis, 6);
        j.step_axis(1, 7);
        assert_eq!(j.axis, 0);
        j.toggle_mode();
        j.step_axis(-1, 7);
        assert_eq!(j.axis_name(), "tool rz (base frame)");
        let held = Held {
            keys: 1.0,
            ..Held::default()
        };
        let r = j
            .request(
                arm(),
                7,
                &held,
                0.0,
                false,
                true,
                false,
                JogOptions::default(),
            )
            .unwrap();
        assert!(!r.live, "the past is said as such: the network side stops");
        assert!(matches!(r.input.deflection, Deflection::Twist { axes, .. } if axes[5] == 1.0));
    }
}
