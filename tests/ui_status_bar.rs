//! The status bar's priorities (issue 46), through the real app with `egui_kittest`: at
//! 800×600, 1280×800 and 1920×1080, recording and with the live view server on, the link,
//! the rates and the trust counters (malformed, foreign, dup, dropped) are each on screen and
//! whole; after a datagram forged with the OCU's own JAUS ID the error takes its slot on the
//! right, cut, over nothing else, and the tiles do not move.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::time::{Duration, Instant};

use eframe::egui::{self, Rect, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use jaus_ocu::model::update::*;
use jaus_ocu::ui::app::OcuApp;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

/// The window sizes an operator uses.
const SIZES: [(f32, f32); 3] = [(800.0, 600.0), (1280.0, 800.0), (1920.0, 1080.0)];

/// A live app with 2 s of the demo arm, its clock at the end, recording into a fresh
/// directory and serving the live view on a free port.
fn busy_app() -> (OcuApp, std::path::PathBuf) {
    let updates = recorded(2.0, None);
    let end = updates.last().map_or(0.0, Update::t);
    let (mut app, _out) = live_app(&updates);
    app.freeze_clock(end);
    let dir = std::env::temp_dir().join(format!(
        "jaus-ocu-status-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    app.start_recording(dir.join("session.mcap")).unwrap();
    app.start_live_view("127.0.0.1:0".parse().unwrap()).unwrap();
    (app, dir)
}

fn harness(app: OcuApp, (w, h): (f32, f32)) -> Harness<'static, OcuApp> {
    ui_common::sized(app, [w, h])
}

/// Steps the window until a label starts with `prefix` in lower case (the server's threads
/// and the recorder run on their own), with a deadline.
fn wait_for_prefix(h: &mut Harness<'_, OcuApp>, prefix: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        h.step();
        if h.query_all_by(|n| text(n).is_some_and(|t| t.to_lowercase().starts_with(prefix)))
            .next()
            .is_some()
        {
            return;
        }
        assert!(Instant::now() < end, "the window never said \"{prefix}…\"");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The one label whose text starts with `prefix`: its text and rect.
fn item(h: &Harness<'_, OcuApp>, prefix: &str, size: (f32, f32)) -> (String, Rect) {
    let found: Vec<(String, Rect)> = h
        .query_all_by(|n| text(n).is_some_and(|t| t.starts_with(prefix)))
        .map(|n| (text(&n.accesskit_node()).unwrap(), n.rect()))
        .collect();
    assert!(
        !found.is_empty(),
        "{size:?}: no \"{prefix}…\" in the window (cut or gone); the status bar says {:?}",
        bottom(h, size)
    );
    found.into_iter().next().unwrap()
}

/// The texts at the window's bottom (the status bar), for failures.
fn bottom(h: &Harness<'_, OcuApp>, size: (f32, f32)) -> Vec<String> {
    h.query_all_by(|n| text(n).is_some())
        .filter(|n| n.rect().top() > size.1 - 40.0)
        .filter_map(|n| text(&n.accesskit_node()))
        .collect()
}

/// Width of `text` drawn whole in the status bar's (small) font, points.
fn text_width(h: &Harness<'_, OcuApp>, text: &str) -> f32 {
    let font = egui::TextStyle::Small.resolve(&h.ctx.global_style());
    h.ctx
        .fonts_mut(|f| f.layout_no_wrap(text.to_owned(), font, egui::Color32::WHITE))
        .size()
        .x
}

/// Fails unless the item is whole: inside the window, as wide as its text.
fn assert_whole(h: &Harness<'_, OcuApp>, (label, r): &(String, Rect), size: (f32, f32)) {
    let window = Rect::from_min_size(pos2(0.0, 0.0), size.into());
    assert!(
        window.expand(0.5).contains_rect(*r),
        "{size:?}: \"{label}\" is not inside the window: {r:?}"
    );
    let w = text_width(h, label);
    assert!(
        r.width() + 0.5 >= w,
        "{size:?}: \"{label}\" is cut: {:.1} of {w:.1} points",
        r.width()
    );
}

/// The trust counters as the status bar must write them, from the app's own figures.
fn counters(app: &OcuApp) -> Vec<String> {
    let drawn = app.drawn_state();
    let s = &drawn.stats;
    vec![
        format!("malformed {}", s.malformed),
        format!("foreign {}", s.foreign_version + s.foreign_reports),
        format!("dup {}", s.duplicates),
        format!("dropped {}", s.queue_dropped + s.updates_dropped),
    ]
}

/// The link and the rates, by the start of their text (whole or short).
const ALWAYS: [&str; 2] = ["link ", "pos"];

fn assert_counters_whole(h: &Harness<'_, OcuApp>, size: (f32, f32)) -> Vec<Rect> {
    let mut rects = Vec::new();
    for c in counters(h.state()) {
        let found = h.query_by_label(&c).unwrap_or_else(|| {
            panic!(
                "{size:?}: no \"{c}\" in the status bar (cut or gone); it says {:?}",
                bottom(h, size)
            )
        });
        let it = (c.clone(), found.rect());
        assert_whole(h, &it, size);
        rects.push(it.1);
    }
    for prefix in ALWAYS {
        let it = item(h, prefix, size);
        assert_whole(h, &it, size);
        rects.push(it.1);
    }
    rects
}

#[test]
fn the_link_rates_and_trust_counters_are_whole_at_every_size_while_recording_and_serving() {
    for size in SIZES {
        let (app, dir) = busy_app();
        let mut h = harness(app, size);
        h.step();
        assert!(h.state().recording.is_active(), "recording");
        assert!(h.state().live_view.is_some(), "serving");
        // The live view's item, whole or short, once its first figures are in.
        wait_for_prefix(&mut h, "live");
        assert_counters_whole(&h, size);
        if size.0 >= 1280.0 {
            // Room for the rest: the recording and the live view whole.
            let rec = item(&h, "REC ", size);
            assert_whole(&h, &rec, size);
            let live = item(&h, "Live view ws://", size);
            assert_whole(&h, &live, size);
        }
        h.state_mut().stop_recording();
        h.state_mut().stop_live_view("stopped");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_forged_datagram_s_error_takes_its_slot_cut_and_the_tiles_do_not_move() {
    for size in [SIZES[0], SIZES[1]] {
        let (app, dir) = busy_app();
        let mut h = harness(app, size);
        wait_for_prefix(&mut h, "live");
        let fit_arm = h.get_by_label("fit arm").rect();
        let t = h.state().now();
        // What the network side says of a datagram from a stranger carrying our ID.
        let from: std::net::SocketAddr = "10.0.0.5:41234".parse().unwrap();
        let evidence =
            format!("a datagram from {from} carried our ID 200.1.1 (we did not send it)");
        h.state_mut().apply(&Update::net(Remark::Error {
            t,
            message: format!(
                "{evidence}: another client may use this OCU's ID, or somebody forged it. \
                 Nothing is refused on this alone; commands are refused if the arm's own \
                 messages confirm it"
            ),
        }));
        h.state_mut().apply(&Update::net(NetFact::Identity {
            t,
            id: ComponentId::new(200, 1, 1),
            conflict: None,
            suspect: Some(IdConflict {
                address: Some(from),
                evidence,
            }),
        }));
        h.step();
        h.step();
        let whole = assert_counters_whole(&h, size);
        let message = h
            .query_all_by_label_contains("carried our ID")
            .map(|n| n.rect())
            .find(|r| r.top() > size.1 - 60.0)
            .expect("the error is in the status bar");
        assert!(
            message.right() <= size.0 + 0.5 && message.height() < 24.0,
            "{size:?}: the error is past the window or wrapped: {message:?}; the status bar \
             says {:?}",
            bottom(&h, size)
        );
        for r in &whole {
            assert!(
                !message.intersects(r.shrink(0.5)),
                "{size:?}: the error {message:?} is over {r:?}"
            );
        }
        // Said in the status bar, where nothing moves (at 800×600 by the error alone, the ID's
        // item under the "+N" chip): the tiles stay where they were.
        if size.0 >= 1280.0 {
            let ocu = item(
                &h,
                "OCU 200.1.1 · Datagrams with this OCU's JAUS ID came",
                size,
            );
            assert_whole(&h, &ocu, size);
        }
        let after = h.get_by_label("fit arm").rect();
        assert!(
            (after.min - fit_arm.min).length() < 0.5,
            "{size:?}: the tiles moved from {fit_arm:?} to {after:?}"
        );
        h.state_mut().stop_recording();
        h.state_mut().stop_live_view("stopped");
        let _ = std::fs::remove_dir_all(dir);
    }
}
