//! The timeline's state lanes (issue 46) through the real UI code with `egui_kittest`: live,
//! an E-STOP then cleared is an emergency span of its length, control taken by another
//! client a holder span, a lost link a link span; hovering a span says its value and times,
//! clicking it moves the cursor to its start; in the replay of a session recorded at the wire
//! (the real simulator over loopback UDP, control taken, E-STOP set then cleared) the lanes
//! show the spans the live session had.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

#[path = "common/ui.rs"]
mod ui_common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui::{self, Event, PointerButton, Pos2, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::command::*;
use jaus_ocu::model::lanes::{Lane, Span, StateLanes, Tone, Value};
use jaus_ocu::model::session::Session;
use jaus_ocu::model::state::ArmState;
use jaus_ocu::model::update::*;
use jaus_ocu::net::client::ClientConfig;
use jaus_ocu::net::fault::Faults;
use jaus_ocu::net::tap::{Epoch, Tap};
use jaus_ocu::net::thread::{NetConfig, NetHandle};
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::component::{Component, SimConfig};
use jaus_ocu::sim::host;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::{LiveKind, read_vehicle};
use jaus_ocu::ui::time_control::Shown;
use jaus_ocu::ui::widgets::state_lanes::{LanesCache, x_of};

const ARM: ComponentId = ComponentId::new(126, 1, 10);

fn harness(app: OcuApp) -> Harness<'static, OcuApp> {
    let h = ui_common::sized(app, [1280.0, 1000.0]);
    // Tooltips at once: the test reads them.
    h.ctx
        .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
    h
}

/// A live app (no network) whose arm is READY from 1 s, held by another client from 2 s,
/// in EMERGENCY from 3 s to 5.5 s, its link lost from 7 s to 8 s; the clock at 10 s.
fn live_app() -> OcuApp {
    let mut app = OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default());
    let facts = [
        ArmFact::Link {
            t: 0.5,
            state: LinkState::Live,
        },
        ArmFact::JointPositions {
            t: 0.6,
            values: vec![0.0; 3],
        },
        ArmFact::Status {
            t: 1.0,
            state: ManagementState::Ready,
        },
        ArmFact::Controller {
            t: 2.0,
            controller: Controller {
                id: Some(ComponentId::new(200, 7, 3)),
                authority: 200,
            },
        },
        ArmFact::Status {
            t: 3.0,
            state: ManagementState::Emergency,
        },
        ArmFact::Status {
            t: 5.5,
            state: ManagementState::Standby,
        },
        ArmFact::Link {
            t: 7.0,
            state: LinkState::Lost,
        },
        ArmFact::Link {
            t: 8.0,
            state: LinkState::Live,
        },
        ArmFact::JointPositions {
            t: 9.9,
            values: vec![0.1; 3],
        },
    ];
    app.apply(&Update::net(NetFact::Selected { t: 0.1, id: ARM }));
    for f in facts {
        app.apply(&Update::arm(ARM, f));
    }
    app.freeze_clock(10.0);
    app
}

/// The rectangle of `lane`'s row as the accessibility tree has it.
fn row(h: &Harness<'_, OcuApp>, lane: Lane) -> Rect {
    h.get_by_label(&format!("{} lane", lane.name())).rect()
}

/// The scrub bar's time range (the lanes share it): the session's start (0 live) to its end.
fn bar_range(h: &Harness<'_, OcuApp>) -> (f64, f64) {
    let app = h.state();
    let v = read_vehicle(app.vehicle());
    let (a, b) = v.arm_or_focused(app.focus()).span().expect("a span");
    if app.replay().is_some() {
        (a, b)
    } else {
        (a.min(0.0), b)
    }
}

/// The point of `lane`'s row at time `t`.
fn at(h: &Harness<'_, OcuApp>, lane: Lane, t: f64) -> Pos2 {
    let r = row(h, lane);
    // The lanes are drawn on their row's top part (the gap under it is not theirs).
    Pos2::new(x_of(r, bar_range(h), t), r.top() + 3.0)
}

/// The labels of the window that hold `part` (for a failure's message).
fn labels(h: &Harness<'_, OcuApp>, part: &str) -> Vec<String> {
    h.query_all_by(|n| {
        n.label().is_some_and(|l| l.contains(part)) || n.value().is_some_and(|l| l.contains(part))
    })
    .filter_map(|n| {
        n.accesskit_node()
            .label()
            .or_else(|| n.accesskit_node().value())
    })
    .collect()
}

fn hover(h: &mut Harness<'_, OcuApp>, p: Pos2) {
    // Away first: the last tooltip may lie over the next row.
    h.event(Event::PointerMoved(Pos2::new(640.0, 200.0)));
    h.step();
    h.event(Event::PointerMoved(p));
    h.step();
    h.step();
}

fn click(h: &mut Harness<'_, OcuApp>, p: Pos2) {
    h.event(Event::PointerMoved(Pos2::new(640.0, 200.0)));
    h.step();
    h.event(Event::PointerMoved(p));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: p,
            button: PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.step();
    h.step();
}

#[test]
fn live_an_estop_then_clear_is_an_emergency_span_of_its_length_and_a_click_seeks_its_start() {
    let mut h = harness(live_app());
    h.step();
    h.step();
    for lane in Lane::ALL {
        assert!(row(&h, lane).height() > 4.0, "{} lane drawn", lane.name());
    }
    // Hovering the emergency lane inside the span says what it is and how long it lasted.
    let p = at(&h, Lane::Emergency, 4.0);
    hover(&mut h, p);
    assert!(
        h.query_by_label_contains("E-stop: EMERGENCY from 0:00:03.000 to 0:00:05.500 (2.5 s)")
            .is_some(),
        "the emergency span from 3 s to 5.5 s"
    );
    // After it, nothing.
    let p = at(&h, Lane::Emergency, 7.5);
    hover(&mut h, p);
    assert!(h.query_by_label_contains("E-stop: nothing known").is_some());
    // Control taken by another client: a holder span from 2 s that lasts.
    let p = at(&h, Lane::Control, 6.0);
    hover(&mut h, p);
    assert!(
        h.query_by_label_contains("control: 200.7.3 (authority 200) from 0:00:02.000 to now")
            .is_some(),
        "the holder span: {:?}",
        labels(&h, "control:")
    );
    let p = at(&h, Lane::Link, 7.5);
    hover(&mut h, p);
    assert!(
        h.query_by_label_contains("link: link lost from 0:00:07.000 to 0:00:08.000 (1.0 s)")
            .is_some(),
        "the lost link's span"
    );
    // A click on the emergency span moves the cursor to its start.
    let p = at(&h, Lane::Emergency, 4.5);
    click(&mut h, p);
    match h.state().shown() {
        Shown::LiveScrubbed { t } => assert!((t - 3.0).abs() < 1e-6, "cursor at {t}"),
        other => panic!("the click did not seek: {other:?}"),
    }
    // And one on the state lane's STANDBY span to 5.5 s.
    let p = at(&h, Lane::State, 6.5);
    click(&mut h, p);
    match h.state().shown() {
        Shown::LiveScrubbed { t } => assert!((t - 5.5).abs() < 1e-6, "cursor at {t}"),
        other => panic!("the click did not seek: {other:?}"),
    }
}

/// The spans of `session` as the timeline computes them.
fn lanes_of(session: &Session) -> StateLanes {
    let mut cache = LanesCache::default();
    cache.update(session).clone()
}

fn temp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()))
}

/// Records a session with the simulator over loopback UDP: control taken, E-STOP set, then
/// cleared `hold` seconds after the arm said EMERGENCY; returns the file and the live
/// session's updates.
fn record_estop(hold: f64) -> (PathBuf, Vec<Update>) {
    let socket = host::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let sim_addr = socket.local_addr().unwrap();
    let sim = host::spawn(
        Component::new(ArmFile::demo(), SimConfig::default()),
        socket,
        Faults::default(),
        3,
    )
    .unwrap();
    let path = temp_path("lanes.mcap");
    let epoch = Epoch::now();
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), epoch.unix_ns)).unwrap();
    let tap = Tap::new();
    tap.connect(recorder.sender());
    let net = NetHandle::spawn(NetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        client: ClientConfig {
            connect: vec![sim_addr],
            multicast: None,
            ..ClientConfig::default()
        },
        update_capacity: 1 << 16,
        tap: tap.clone(),
        epoch: Some(epoch),
        ..NetConfig::default()
    })
    .unwrap();
    let mut live = Vec::new();
    let mut state = ArmState::default();
    let (mut asked, mut stopped, mut cleared) = (false, None::<f64>, None::<f64>);
    let deadline = Instant::now() + Duration::from_mins(1);
    while Instant::now() < deadline {
        if let Ok(u) = net.updates().recv_timeout(Duration::from_millis(20)) {
            for u in std::iter::once(u).chain(net.updates().try_iter()) {
                match &u {
                    Update::Arm { fact, .. } => state.apply_arm(fact),
                    Update::Net(fact) => state.apply_net(fact),
                }
                live.push(u);
            }
        }
        let t = live.last().map_or(0.0, Update::t);
        if !asked && state.positions.is_some() {
            net.send(Command::RequestControl { authority: 100 })
                .unwrap();
            asked = true;
        }
        if stopped.is_none() && matches!(state.control, ControlState::Held { .. }) {
            net.send(Command::SetEmergency).unwrap();
            stopped = Some(t);
        }
        let emergency = state.status == ManagementState::Emergency;
        if cleared.is_none() && emergency && stopped.is_some_and(|s| t - s >= hold) {
            net.send(Command::ClearEmergency).unwrap();
            cleared = Some(t);
        }
        if cleared.is_some_and(|c| t - c >= 1.0) && !emergency {
            break;
        }
    }
    let updates = net.updates().clone();
    net.shutdown(Duration::from_millis(300));
    live.extend(updates.try_iter());
    tap.disconnect();
    recorder.stop().unwrap();
    drop(sim);
    assert!(
        cleared.is_some(),
        "control taken, E-STOP set and cleared within a minute"
    );
    (path, live)
}

fn emergency(lanes: &StateLanes) -> Vec<Span> {
    lanes.spans(Lane::Emergency).to_vec()
}

#[test]
fn a_replay_shows_the_lanes_of_its_live_session() {
    let (path, live) = record_estop(1.5);
    // The live session's lanes, as the timeline computes them live.
    let mut session = Session::new();
    for u in &live {
        match u {
            Update::Arm { fact, .. } => session.apply_arm(fact),
            Update::Net(fact) => session.apply_net(fact),
        }
    }
    let live_lanes = lanes_of(&session);
    let live_e = emergency(&live_lanes);
    assert_eq!(live_e.len(), 1, "one emergency live: {live_e:?}");
    let live_len = live_e[0].end.expect("cleared") - live_e[0].start;
    assert!(live_len >= 1.4, "held 1.5 s: {live_len}");

    let replay = Replay::open(&path, 3794, None).unwrap();
    let mut h = harness(OcuApp::with_replay(replay, Settings::default()));
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        h.step();
        let done = h.state().replay().is_some_and(|r| r.progress.finished);
        assert!(
            Instant::now() < until || done,
            "the replay loads within 20 s"
        );
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    h.step();
    let replayed = {
        let app = h.state();
        let v = read_vehicle(app.vehicle());
        lanes_of(v.arm_or_focused(app.focus()))
    };
    let e = emergency(&replayed);
    assert_eq!(e.len(), 1, "one emergency in the replay: {e:?}");
    let len = e[0].end.expect("cleared in the file") - e[0].start;
    assert!(
        (len - live_len).abs() < 0.1,
        "the replay's emergency lasts {len} s, the live one {live_len} s"
    );
    // Control taken: a holder span in the replay too (this OCU, or the recording's ID).
    let holders = replayed.spans(Lane::Control);
    assert!(
        holders
            .iter()
            .any(|s| matches!(s.value, Value::Ours(_) | Value::Held(..))),
        "a holder span: {holders:?}"
    );
    assert!(
        replayed
            .spans(Lane::Link)
            .iter()
            .any(|s| s.value.tone() == Tone::Ok)
    );
    // Drawn: hovering the emergency lane in the middle of the span says it.
    let mid = 0.5 * (e[0].start + e[0].end.unwrap());
    let p = at(&h, Lane::Emergency, mid);
    hover(&mut h, p);
    assert!(
        h.query_by_label_contains("E-stop: EMERGENCY from")
            .is_some(),
        "the replay's emergency span is drawn"
    );
    let p = at(&h, Lane::Emergency, mid);
    click(&mut h, p);
    let t = h.state().time();
    assert!(
        (t - e[0].start).abs() < 1e-6,
        "the click sought {t}, not {}",
        e[0].start
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn at_1280x800_the_lanes_toggle_shows_them_and_the_choice_is_kept_in_the_settings() {
    let laptop = |app: OcuApp| ui_common::sized(app, [1280.0, 800.0]);
    let mut h = laptop(live_app());
    h.step();
    h.step();
    // In a laptop window the lanes wait to be asked for: the plots need the room.
    assert!(h.query_by_label("E-stop lane").is_none());
    assert_eq!(h.state().settings.show_lanes, None);
    h.get_by_label("lanes").click();
    h.step();
    h.step();
    h.get_by_label("E-stop lane");
    assert_eq!(h.state().settings.show_lanes, Some(true));
    // The next window opened with these settings shows them at once.
    let settings = h.state().settings.clone();
    let mut app = live_app();
    app.settings = settings;
    let mut h = laptop(app);
    h.step();
    h.step();
    h.get_by_label("E-stop lane");
}
