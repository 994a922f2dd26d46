//! The window's jog input each frame (issue 32): what is held (the buttons beside the gauges,
//! the jog keys, the gamepad) goes to the network side as a [`Command::Jog`], which streams
//! the commands and stops them itself when this input ages ([`crate::ui::jog_input`]).

use eframe::egui;

use super::OcuApp;
use crate::model::command::Command;
use crate::model::jog::{Gate, Gates, JogOptions, Source};
use crate::ui::commands::UiCommand;
use crate::ui::gamepad::{Gamepad, Mapping, PadIntent, PadState};
use crate::ui::jog_input::{Held, PadInput};
use crate::ui::time_control::Shown;

/// How late the window's view of a sample may be, s, when it judges the joint positions fresh
/// for the jog gates' preview (`model::fresh`, the stream's rule): the way from the socket to
/// the window, through the network thread's publishing and one frame.
const PREVIEW_LATENESS: f64 = 0.1;

/// The gamepad as the app uses it: the worker, the mapping, the mapping's state and what the
/// pad asked in the last frame (for the gamepad window).
pub struct Pad {
    /// The worker (or a fake one in tests).
    pub gamepad: Gamepad,
    /// The mapping in force.
    pub mapping: Mapping,
    /// The mapping's state (enable, page, mode).
    pub state: PadState,
    /// What the pad asked in the last frame.
    pub intent: Option<PadIntent>,
}

/// Where the gamepad mapping file is looked for: `$XDG_CONFIG_HOME/jaus-ocu/gamepad.toml`,
/// else `~/.config/jaus-ocu/gamepad.toml`.
pub fn mapping_path() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".config")))?;
    Some(base.join("jaus-ocu").join("gamepad.toml"))
}

impl OcuApp {
    /// Takes gamepad input from `gamepad` with `mapping` (the window's runner spawns the
    /// worker; tests give a fake one).
    pub fn set_gamepad(&mut self, gamepad: Gamepad, mapping: Mapping) {
        let state = PadState::new(&mapping);
        self.pad = Some(Pad {
            gamepad,
            mapping,
            state,
            intent: None,
        });
    }

    /// The gamepad's reading this frame as jog input (`None` without a gamepad, or while
    /// none was ever connected).
    fn pad_input(&mut self, joints: usize) -> Option<PadInput> {
        let pad = self.pad.as_mut()?;
        let snapshot = pad.gamepad.snapshot();
        let intent = pad.mapping.intent(&snapshot.pad, joints, &mut pad.state);
        let seen = intent.connected || pad.intent.as_ref().is_some_and(|i| i.connected);
        let input = seen.then(|| PadInput {
            connected: intent.connected,
            enable_held: intent.enabled(),
            deflection: intent.deflection.clone(),
        });
        pad.intent = Some(intent);
        input
    }

    /// What the jog strip says of the gamepad: its status (`None` without gamepad input).
    pub(crate) fn pad_status(&self) -> Option<String> {
        self.pad.as_ref().map(|p| p.gamepad.snapshot().status())
    }

    /// The live arm's joint count (0 without a specification).
    pub(crate) fn live_joint_count(&self) -> usize {
        self.with_live_state(|s| s.spec.as_ref().map_or(0, |x| x.joints.len()))
            .unwrap_or(0)
    }

    /// The jog options of the settings and this session's acknowledgement.
    pub(crate) fn jog_options(&self) -> JogOptions {
        let clearance = self.settings.clearance();
        JogOptions {
            clearance_band: clearance.band,
            clearance_margin: clearance.margin,
            speed_scale: self.settings.jog_speed_scale,
            timeout_limit: self.settings.jog_timeout_limit,
            acknowledge_timeout: self.view.jog.acknowledged
                && !self.settings.jog_refuse_long_timeout,
            effort_as_velocity: self.settings.jog_effort_as_velocity,
        }
    }

    /// The first gate that would block a jog of the live arm now, from its state and the
    /// window (the enable is not counted: it is what the operator holds to start).
    pub(crate) fn jog_needs(&self, ctx: &egui::Context) -> Option<Gate> {
        let now = self.now();
        let mut gates = self.with_live_state(|s| {
            s.jog_gates(Gates::all_pass(Source::Keys), now, PREVIEW_LATENESS)
        })?;
        gates.live_focused_arm = self.shown() == Shown::Live;
        gates.window_focused = ctx.input(|i| i.focused);
        gates.blocking().first()
    }

    /// Tells the network side what is held this frame, if anything is or a release is
    /// still to be said.
    pub(crate) fn jog_frame(&mut self, ctx: &egui::Context) {
        let screen = self.view.jog.screen.take();
        let shown = self.shown();
        // Every frame with a live source: read in place, not copied.
        let Some((Some(arm), Some(joints), moving)) = self.with_live_state(|s| {
            (
                s.selected,
                s.spec.as_ref().map(|x| x.joints.len()),
                s.jog.moving,
            )
        }) else {
            return;
        };
        let typing = ctx.egui_wants_keyboard_input();
        let down = |c: UiCommand| {
            !typing && ctx.input(|i| c.shortcuts(shown).iter().any(|s| i.key_down(s.key)))
        };
        let keys = f64::from(u8::from(down(UiCommand::JogPlus)))
            - f64::from(u8::from(down(UiCommand::JogMinus)));
        if screen.is_some() {
            self.view.jog.last_screen = screen.map(|(axis, _)| axis);
        }
        let pad = self.pad_input(joints);
        let held = Held { keys, screen, pad };
        let focused = ctx.input(|i| i.focused);
        let options = self.jog_options();
        let Some(net) = self.sources.net() else {
            return;
        };
        let at = net.start().elapsed().as_secs_f64();
        let live_shown = shown == Shown::Live;
        if let Some(req) = self
            .view
            .jog
            .request(arm, joints, &held, at, live_shown, focused, moving, options)
        {
            // A full queue drops this frame's input: the next frame says it again, and the
            // network side stops the jog if none arrives within a period.
            let _ = net.send(Command::Jog(Box::new(req)));
        }
    }
}
