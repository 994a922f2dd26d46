//! View → Live view server (issue 33), as the operator uses it: off by default; the menu
//! starts it on the settings' address, the status bar says where and how many viewers are
//! connected, a second click stops it and the viewers are disconnected; a window that only
//! replays a file cannot start it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use jaus_ocu::ui::app::OcuApp;

#[path = "common/ui.rs"]
mod ui_common;
use ui_common::*;

#[path = "common/ws.rs"]
mod ws;

fn click_menu_item(h: &mut Harness<'_, OcuApp>, item: &str) {
    h.get_by_label("View").click();
    h.run();
    h.get_by_label_contains(item).click();
    h.run();
}

/// Steps the window until its status bar says `text`, with a deadline (the server's threads
/// run on their own).
fn wait_for_label(h: &mut Harness<'_, OcuApp>, text: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        h.step();
        if h.query_by_label_contains(text).is_some() {
            return;
        }
        assert!(Instant::now() < end, "the window never said \"{text}\"");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_view_menu_starts_and_stops_the_live_view_and_the_status_bar_counts_its_viewers() {
    let (mut app, _out) = live_app(&recorded(1.0, None));
    app.settings.live_view_listen = "127.0.0.1:0".into();
    let mut h = harness(app);
    h.step();
    assert!(h.state().live_view.is_none(), "off by default");
    assert!(h.query_by_label_contains("Live view ws://").is_none());
    click_menu_item(&mut h, "Live view server");
    let addr = h
        .state()
        .live_view
        .as_ref()
        .expect("the menu started the live view server")
        .address();
    assert!(addr.ip().is_loopback(), "loopback unless asked: {addr}");
    wait_for_label(&mut h, "0 viewers");
    let viewer = ws::Viewer::connect(addr);
    wait_for_label(&mut h, "1 viewer");
    assert!(
        h.query_by_label_contains(&format!("Live view ws://{addr}"))
            .is_some()
    );
    click_menu_item(&mut h, "Live view server");
    assert!(h.state().live_view.is_none(), "the second click stopped it");
    h.step();
    assert!(h.query_by_label_contains("Live view ws://").is_none());
    drop(viewer);
    assert!(
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "nothing listens on {addr} after the stop"
    );
}

#[test]
fn a_window_without_a_live_session_does_not_serve() {
    let mut h = harness(app_without_net(&recorded(1.0, None)));
    h.step();
    h.state_mut().toggle_live_view();
    h.step();
    assert!(h.state().live_view.is_none());
    assert!(
        h.query_by_label_contains("jaus-ocu serve FILE").is_some(),
        "the notice says how to serve a file instead"
    );
}
