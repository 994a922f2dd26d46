//! Keyboard and screen readers (issue 46): every command of the table has a key; every
//! control an operator needs (E-STOP, STOP ALL, the gauges, the jog buttons, the presets, the
//! tiles' tabs, the timeline) has a role and a name in the AccessKit tree, found here the way
//! a screen reader or an automation tool finds it; and a whole session (take control, a
//! preset, a jog, E-STOP, clear, resume) runs against the simulated arm from the keyboard
//! alone, each step read back from the arm itself.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use eframe::egui::{Key, Modifiers, accesskit::Role};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};
use jaus_ocu::jaus::core::Status;
use jaus_ocu::model::command::Command;
use jaus_ocu::model::update::{ArmFact, ControlState, ManagementState, PoseState, Update};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::Component;
use jaus_ocu::sim::harness::SimNet;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::commands::{UiCommand, help_rows};
use jaus_ocu::ui::tiles::Pane;
use jaus_ocu::ui::time_control::Shown;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

/// Every mode a window can be in.
fn modes() -> [Shown; 4] {
    [
        Shown::Live,
        Shown::LiveScrubbed { t: 1.0 },
        Shown::ReplayOverLive { t: 1.0 },
        Shown::Replay { t: 1.0 },
    ]
}

#[test]
fn every_command_of_the_table_has_a_key_where_it_is_available() {
    let mut keyless = Vec::new();
    for cmd in UiCommand::ALL {
        let available: Vec<Shown> = modes().into_iter().filter(|s| cmd.available(*s)).collect();
        assert!(!available.is_empty(), "{cmd:?} is available nowhere");
        // Its own keys, or those of the command that does it (C requests and releases).
        for shown in available {
            if cmd.keys_text(shown).is_empty() {
                keyless.push(format!("{cmd:?} in {}", shown.name()));
            }
        }
    }
    assert!(keyless.is_empty(), "commands without a key: {keyless:?}");
}

#[test]
fn the_help_lists_a_key_for_every_command_with_one() {
    // What the help shows is what the table says: every command with keys of its own has a
    // row naming them.
    for shown in modes() {
        let rows = help_rows(shown);
        for cmd in UiCommand::ALL.into_iter().filter(|c| c.available(shown)) {
            for s in cmd.shortcuts(shown) {
                assert!(
                    rows.iter().any(|r| r.keys.contains(&s.text())),
                    "{}: {} ({cmd:?}) missing from the help",
                    shown.name(),
                    s.text()
                );
            }
        }
    }
}

/// Draws frames until `done` holds for the harness (a window or a focus lands a frame or two
/// after it is asked for): at most `frames`.
fn frames_until(
    h: &mut Harness<'_, OcuApp>,
    frames: usize,
    done: impl Fn(&Harness<'_, OcuApp>) -> bool,
) -> bool {
    for _ in 0..frames {
        if done(h) {
            return true;
        }
        h.step();
    }
    done(h)
}

/// The live arm reports EMERGENCY (at its last report's time).
fn emergency(h: &mut Harness<'_, OcuApp>) {
    let t = h.state().drawn_state().positions.as_ref().unwrap().t;
    h.state_mut().apply(&Update::arm(
        ARM,
        ArmFact::Status {
            t,
            state: ManagementState::Emergency,
        },
    ));
}

#[test]
fn the_new_keys_do_what_their_commands_do() {
    let (app, mut out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    // Ctrl+I: the theme.
    let dark = h.state().settings.dark;
    h.key_press_modifiers(Modifiers::COMMAND, Key::I);
    h.step();
    assert_ne!(h.state().settings.dark, dark, "Ctrl+I switched the theme");
    // Shift+C with the arm in EMERGENCY asks to clear it, and sends nothing before Confirm;
    // it does not also take control (C).
    emergency(&mut h);
    h.step();
    h.key_press_modifiers(Modifiers::SHIFT, Key::C);
    assert!(frames_until(&mut h, 10, |h| h
        .query_by_label_contains("Clear the emergency stop of the live arm 126.1.10?")
        .is_some()));
    assert!(out.sent().is_empty(), "{:?}", out.sent());
    // Esc cancels; Shift+C again and Enter confirms.
    h.key_press(Key::Escape);
    assert!(frames_until(&mut h, 10, |h| h
        .state()
        .view
        .confirm
        .is_none()));
    assert!(out.sent().is_empty(), "{:?}", out.sent());
    h.key_press_modifiers(Modifiers::SHIFT, Key::C);
    assert!(frames_until(&mut h, 10, |h| h
        .state()
        .view
        .confirm
        .is_some()));
    h.step();
    h.key_press(Key::Enter);
    h.step();
    assert_eq!(out.sent(), [Command::ClearEmergency]);
}

#[test]
fn the_enter_that_opens_a_confirmation_does_not_also_answer_it() {
    let mut updates = recorded(1.0, None);
    let t = updates.last().map_or(0.0, Update::t);
    updates.push(Update::arm(
        ARM,
        ArmFact::Control {
            t,
            state: ControlState::Held { authority: 100 },
        },
    ));
    let (app, mut out) = live_app(&updates);
    let mut h = harness(app);
    h.state_mut().view.preview = Some(2);
    h.step();
    // Enter on the focused "Go to…" presses it: the question opens and waits.
    h.get_by_role_and_label(Role::Button, "Go to Deploy (126.1.10)…")
        .focus();
    h.step();
    h.key_press(Key::Enter);
    h.step();
    assert!(frames_until(&mut h, 10, |h| h
        .query_by_label_contains("Move the live arm 126.1.10 to \"Deploy\"?")
        .is_some()));
    assert!(!out.sent_a_preset_move(), "{:?}", out.sent());
    // Enter while a control behind the dialog has the focus presses that control, not
    // Confirm.
    h.get_by_role_and_label(Role::Button, "Joints").focus();
    h.step();
    h.key_press(Key::Enter);
    h.step();
    assert!(!out.sent_a_preset_move(), "{:?}", out.sent());
    assert!(h.state().view.confirm.is_some(), "still asking");
    // With the focus on the dialog's Confirm, Enter confirms.
    h.get_by_role_and_label(Role::Button, "Confirm").focus();
    h.step();
    h.key_press(Key::Enter);
    h.step();
    assert_eq!(out.sent(), [Command::GoToPreset { pose_id: 2 }]);
}

/// The node of role `role` named exactly `name`, with what a screen reader reads of it.
fn named(h: &Harness<'_, OcuApp>, role: Role, name: &str) {
    let n = h
        .query_by_role_and_label(role, name)
        .unwrap_or_else(|| panic!("no {role:?} named {name:?}"));
    assert!(!n.accesskit_node().is_hidden(), "{name} is hidden");
}

#[test]
fn the_operators_controls_have_roles_and_names_a_screen_reader_finds() {
    let (app, _out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    h.step();
    // The emergency stops name the arm and the vehicle they stop.
    named(&h, Role::Button, "E-STOP 126.1.10");
    named(&h, Role::Button, "STOP ALL 1 arm of 126");
    named(&h, Role::Button, "Request control 126.1.10");
    // The gauges: read-only meters, each with its value as shown and in SI within its limits.
    let arm = ArmFile::demo();
    let q = h
        .state()
        .drawn_state()
        .positions
        .as_ref()
        .unwrap()
        .value
        .clone();
    let joints = &arm.spec.joints;
    assert_eq!(
        h.query_all_by_role(Role::Meter).count(),
        joints.len(),
        "one meter per joint"
    );
    for (i, j) in joints.iter().enumerate() {
        let jname = j.name.as_deref().unwrap_or_default();
        let prefix = format!("{} {jname}: ", i + 1);
        let node = h
            .query_by(|n| {
                n.role() == Role::Meter && n.label().is_some_and(|l| l.starts_with(&prefix))
            })
            .unwrap_or_else(|| panic!("no meter for joint {}", i + 1));
        let n = node.accesskit_node();
        assert!(n.is_read_only(), "joint {} is not settable", i + 1);
        let v = n.numeric_value().expect("a numeric value");
        assert!((v - q[i]).abs() < 1e-9, "joint {}: {v} vs {}", i + 1, q[i]);
        let shown = n.value().expect("the value as shown");
        assert!(
            n.label().unwrap().contains(&format!(": {shown}")),
            "{:?} vs {shown}",
            n.label()
        );
        if let (Some(lo), Some(hi)) = (j.min, j.max) {
            let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-6);
            assert!(near(n.min_numeric_value(), lo), "joint {}", i + 1);
            assert!(near(n.max_numeric_value(), hi), "joint {}", i + 1);
        }
        // Its jog buttons name the joint and the direction.
        for sign in ["−", "+"] {
            named(
                &h,
                Role::Button,
                &format!("Jog joint {} {jname} {sign}", i + 1),
            );
        }
    }
    // The presets, the one the arm is at said in words (on screen by colour only).
    let here = match h.state().drawn_state().pose {
        PoseState::At(id) => Some(id),
        _ => None,
    };
    assert!(here.is_some(), "the simulated arm starts at a preset");
    for p in &arm.presets {
        let mut name = format!("{}  {}", p.id, p.name);
        if here == Some(p.id) {
            name.push_str(", the arm is here");
        }
        named(&h, Role::Button, &name);
    }
    // The jog speed is named, not just "%".
    named(&h, Role::SpinButton, "jog speed");
    // Every tile's tab.
    let panes: Vec<Pane> = Pane::ALL
        .into_iter()
        .filter(|p| h.state().settings.tiles.is_visible(*p))
        .collect();
    assert!(panes.len() >= 5, "{panes:?}");
    for p in panes {
        named(&h, Role::Button, p.title());
    }
    // The timeline: play / pause and the scrub bar with the time drawn.
    named(&h, Role::Button, "Pause");
    let bar = h.get_by_role_and_label(Role::Slider, "timeline");
    assert!(bar.accesskit_node().numeric_value().is_some());
    // Nothing an operator can press or read as a control is nameless.
    let nameless: Vec<String> = h
        .query_all_by(|n| {
            matches!(
                n.role(),
                Role::Button
                    | Role::CheckBox
                    | Role::ComboBox
                    | Role::Slider
                    | Role::SpinButton
                    | Role::Meter
                    | Role::TextInput
            ) && n.label().is_none_or(|l| l.trim().is_empty())
        })
        .map(|n| format!("{:?} at {:?}", n.accesskit_node().role(), n.rect()))
        .collect();
    assert!(nameless.is_empty(), "nameless controls: {nameless:?}");
}

#[test]
fn the_confirmation_is_a_window_with_confirm_and_cancel_buttons() {
    let (app, _out) = live_app(&recorded(1.0, None));
    let mut h = harness(app);
    h.step();
    emergency(&mut h);
    h.step();
    named(&h, Role::Button, "Clear emergency 126.1.10…");
    h.key_press_modifiers(Modifiers::SHIFT, Key::C);
    assert!(frames_until(&mut h, 10, |h| h
        .query_by_role_and_label(Role::Button, "Confirm")
        .is_some()));
    named(&h, Role::Button, "Confirm");
    named(&h, Role::Button, "Cancel");
}

/// The app wired to the real client and the simulated arm in memory: what the app sends
/// reaches the arm, what the arm reports reaches the app.
struct Wired {
    net: SimNet,
    h: Harness<'static, OcuApp>,
    out: Outbox,
    /// Commands of the outbox already handed to the client.
    forwarded: usize,
    /// Updates of the client already applied to the app.
    fed: usize,
}

impl Wired {
    /// `seconds` of the session, then the app fed what the client published.
    fn new(seconds: f64) -> Self {
        let mut net = sim_net(ArmFile::demo(), 3);
        net.run_with(seconds, &mut |_| {});
        let (mut app, out) = live_app(&net.updates);
        app.freeze_clock(net.now());
        let fed = net.updates.len();
        let mut h = harness(app);
        h.step();
        Self {
            net,
            h,
            out,
            forwarded: 0,
            fed,
        }
    }

    /// Hands the app's new commands to the client, runs the session 50 ms, feeds the app
    /// what the client published and draws a frame.
    fn pump(&mut self) {
        let sent = self.out.sent().to_vec();
        for cmd in &sent[self.forwarded..] {
            let mut cmd = cmd.clone();
            // The window stamps a jog input on its network thread's clock; the in-memory
            // client runs on the simulated clock: the input is read at once, as that thread
            // reads it.
            if let Command::Jog(r) = &mut cmd {
                r.input.at = self.net.now();
            }
            self.net.command(cmd);
        }
        self.forwarded = sent.len();
        self.net.run_with(0.05, &mut |_| {});
        let app = self.h.state_mut();
        for u in &self.net.updates[self.fed..] {
            app.apply(u);
        }
        self.fed = self.net.updates.len();
        app.freeze_clock(self.net.now());
        self.h.step();
    }

    /// Pumps until `done` holds for the simulated arm (at most `secs` of simulated time).
    fn until(&mut self, secs: f64, done: impl Fn(&Component) -> bool) -> bool {
        let until = self.net.now() + secs;
        while self.net.now() < until {
            self.pump();
            if done(&self.net.peers[0].sim) {
                return true;
            }
        }
        false
    }

    /// The arm's management state and the app's reading of it agree after a few frames.
    fn app_says(&mut self, status: ManagementState) -> bool {
        for _ in 0..40 {
            if self.h.state().drawn_state().status == status {
                return true;
            }
            self.pump();
        }
        false
    }

    /// Presses Tab until the focused control's name starts with `name` (a round of the
    /// window's controls at most): the keyboard's way to a control that has no key.
    fn tab_to(&mut self, name: &str) -> bool {
        for _ in 0..400 {
            self.h.key_press(Key::Tab);
            self.h.step();
            self.h.step();
            if self
                .h
                .query(By::new().predicate(move |n| {
                    n.is_focused() && n.label().is_some_and(|l| l.starts_with(name))
                }))
                .is_some()
            {
                return true;
            }
        }
        false
    }

    /// Draws frames until `text` is on screen (10 at most).
    fn shows(&mut self, text: &str) -> bool {
        frames_until(&mut self.h, 10, |h| {
            h.query_all(By::new().label_contains(text)).next().is_some()
        })
    }
}

#[test]
fn a_whole_session_from_the_keyboard_alone() {
    let mut w = Wired::new(2.0);
    let sim = |w: &Wired| w.net.peers[0].sim.positions().to_vec();
    assert_eq!(w.net.peers[0].sim.status(), Status::Ready);
    assert_eq!(w.net.peers[0].sim.controller(), None);

    // 1. C: take control; the arm says who holds it.
    w.h.key_press(Key::C);
    assert!(
        w.until(3.0, |s| s.controller().is_some()),
        "the arm granted control"
    );
    assert!(
        w.shows("control held"),
        "the window says so: {:?}",
        w.h.state().drawn_state().control
    );
    assert!(matches!(
        w.h.state().drawn_state().control,
        ControlState::Held { .. }
    ));

    // 2. A preset, through the focus: Tab to it, Enter previews it, Tab to "Go to…", Enter
    //    asks, Enter confirms.
    let deploy = ArmFile::demo()
        .presets
        .into_iter()
        .find(|p| p.name == "Deploy")
        .unwrap();
    assert!(
        w.tab_to(&format!("{}  Deploy", deploy.id)),
        "Tab reaches the preset"
    );
    w.h.key_press(Key::Enter);
    w.h.step();
    w.h.step();
    assert_eq!(
        w.h.state().view.preview,
        Some(deploy.id),
        "Enter previews it"
    );
    assert!(w.tab_to("Go to Deploy"), "Tab reaches Go to");
    w.h.key_press(Key::Enter);
    assert!(w.shows("Move the live arm 126.1.10 to \"Deploy\"?"));
    assert!(
        !w.out
            .sent()
            .iter()
            .any(|c| matches!(c, Command::GoToPreset { .. })),
        "nothing moves before the answer"
    );
    w.h.key_press(Key::Enter);
    let goal = deploy.positions.clone();
    assert!(
        w.until(20.0, |s| s
            .positions()
            .iter()
            .zip(&goal)
            .all(|(q, g)| (q - g).abs() < 0.01)),
        "the arm reached Deploy: {:?} vs {goal:?}",
        sim(&w)
    );
    assert!(
        w.h.state().view.confirm.is_none(),
        "the question was answered"
    );

    // 3. Hold = : joint 1 (the keys' joint) turns positive while held, and stops when let go.
    assert_eq!(w.h.state().view.jog.axis, 0);
    let before = sim(&w)[0];
    w.h.key_down(Key::Equals);
    assert!(
        w.until(3.0, |s| s.positions()[0] > before + 0.05),
        "joint 1 moved while = was held: {} -> {}",
        before,
        sim(&w)[0]
    );
    w.h.key_up(Key::Equals);
    assert!(
        w.until(3.0, |s| s.velocities()[0].abs() < 1e-6),
        "joint 1 stopped when = was let go: {:?}",
        w.net.peers[0].sim.velocities()
    );
    let stopped = sim(&w)[0];
    w.until(0.5, |_| false);
    assert!((sim(&w)[0] - stopped).abs() < 1e-3, "and stays stopped");

    // 4. E: the emergency stop.
    w.h.key_press(Key::E);
    assert!(
        w.until(3.0, |s| s.status() == Status::Emergency),
        "EMERGENCY"
    );
    assert!(w.app_says(ManagementState::Emergency));

    // 5. Shift+C asks to clear it; Enter confirms: STANDBY, nothing resumes.
    w.h.key_press_modifiers(Modifiers::SHIFT, Key::C);
    assert!(w.shows("Clear the emergency stop of the live arm 126.1.10?"));
    w.h.key_press(Key::Enter);
    assert!(w.until(3.0, |s| s.status() == Status::Standby), "STANDBY");
    assert!(w.app_says(ManagementState::Standby));

    // 6. Shift+R asks to resume (STANDBY to READY); Esc first says no, then Enter yes.
    w.h.key_press_modifiers(Modifiers::SHIFT, Key::R);
    assert!(w.shows("Resume the live arm 126.1.10?"));
    w.h.key_press(Key::Escape);
    w.until(0.5, |_| false);
    assert_eq!(w.net.peers[0].sim.status(), Status::Standby, "Esc said no");
    assert!(!w.out.sent().contains(&Command::Resume));
    w.h.key_press_modifiers(Modifiers::SHIFT, Key::R);
    assert!(w.shows("Resume the live arm 126.1.10?"));
    w.h.key_press(Key::Enter);
    assert!(w.until(3.0, |s| s.status() == Status::Ready), "READY");
    assert!(w.app_says(ManagementState::Ready));

    // 7. ] selects joint 2, − jogs it: motion is accepted again.
    w.h.key_press(Key::CloseBracket);
    w.pump();
    assert_eq!(w.h.state().view.jog.axis, 1);
    let before = sim(&w)[1];
    w.h.key_down(Key::Minus);
    assert!(
        w.until(3.0, |s| s.positions()[1] < before - 0.05),
        "joint 2 moved while − was held: {before} -> {}",
        sim(&w)[1]
    );
    w.h.key_up(Key::Minus);
    assert!(w.until(3.0, |s| s.velocities()[1].abs() < 1e-6));

    // 8. C again: control released.
    w.h.key_press(Key::C);
    assert!(
        w.until(3.0, |s| s.controller().is_none()),
        "control released"
    );
}
