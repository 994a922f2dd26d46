//! The operator UI: an eframe (glow) application, one panel per file, widgets in `widgets/`,
//! the three-d scene in `scene`. The UI never imports the wire codec: data arrives as
//! [`crate::model::update::Update`]s, intent leaves as [`crate::model::command::Command`]s.
//!
//! Three tiers, imports running down (ARCHITECTURE.md, "ui/ map"): `app/` holds [`app::OcuApp`]
//! (its struct and one file per concern of its `impl`); `panels/` one panel per file, each handed
//! what it shows and returning what the operator asked for ([`action::Action`], mostly
//! [`commands::UiCommand`]s of the one command table), never importing `app/`; and the leaves both
//! use: [`action`], [`settings`], [`words`], [`sources`], [`time_control`], [`commands`],
//! [`theme`], [`format`](mod@format), ... `OcuApp` carries the actions out in one place. What the
//! window shows (live, scrubbed back, a replay, a replay over live) is [`time_control::Shown`],
//! derived from the [`sources::Sources`] and the [`time_control::TimeControl`]. This file and
//! `screenshot.rs` build and run the app.

pub mod action;
pub mod app;
pub mod arms;
pub mod commands;
pub mod exact;
pub mod export;
pub mod files;
pub mod format;
pub mod gamepad;
pub mod gl_ffi;
pub mod jog_input;
pub mod memory;
pub mod notice;
pub mod pace;
pub mod panels;
pub mod plot_caches;
pub mod recording;
pub mod scene;
pub mod screenshot;
pub mod settings;
pub mod simplify;
pub mod sources;
pub mod theme;
pub mod tiles;
pub mod time_control;
pub mod widgets;
pub mod words;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::net::thread::{NetConfig, NetHandle};
use crate::record::player::{LoadWaker, Replay};
use crate::sim::host::SimHandle;
use app::OcuApp;
use sources::LiveKind;

/// When the GUI was asked to start (for the "first frame with the live arm" figure).
pub static GUI_START: OnceLock<Instant> = OnceLock::new();

/// Native options that fit this stack (gui-testing.md): glow renderer, a depth buffer for the
/// 3D view, no MSAA and no dithering (software rendering).
pub fn native_options(title: &str) -> eframe::NativeOptions {
    eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        multisampling: 0,
        // egui's dithering costs every fragment of every frame ~11 % of llvmpipe's raster
        // (ARCHITECTURE.md, "Where a frame's time goes") for gradients this UI barely has.
        dithering: false,
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title(title)
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([800.0, 500.0]),
        ..Default::default()
    }
}

/// Opens the window on a live source of `kind` (with the simulators it talks to in the demo)
/// and runs until it is closed; `memory_limit` (bytes, `--memory-limit`) overrides the
/// settings' memory budget for this run; `live_view` (`--live-view`) starts the live view
/// server on that address at once.
pub fn run(
    kind: LiveKind,
    mut net_cfg: NetConfig,
    sims: Vec<SimHandle>,
    memory_limit: Option<u64>,
    live_view: Option<std::net::SocketAddr>,
) -> anyhow::Result<()> {
    GUI_START.get_or_init(Instant::now);
    gl_ffi::keep_frame_memory();
    let title = match kind {
        LiveKind::Live => "jaus-ocu",
        LiveKind::Simulated => "jaus-ocu (SIMULATED)",
    };
    eframe::run_native(
        "jaus-ocu",
        native_options(title),
        Box::new(move |cc| {
            let ctx = cc.egui_ctx.clone();
            // Samples are drawn at a readable rate: bursts coalesce into one frame per
            // NUMBERS_INTERVAL (the plots and a moving arm ask for more from the frame, at
            // their own rates: app::repaint_after).
            // The spacing is the window's pace (its CPU budget, `pace.rs`), at least that.
            let pace = pace::Pace::from_env(app::moving_interval(), app::LIVE_IDLE_INTERVAL);
            let spacing = pace.shared_busy();
            net_cfg.waker = Some(Arc::new(move || {
                let paced = Duration::from_micros(spacing.load(Ordering::Relaxed));
                ctx.request_repaint_after(paced.max(app::NUMBERS_INTERVAL));
            }));
            // An emergency, a lost link, a change of control or an outcome: at once.
            let ctx = cc.egui_ctx.clone();
            net_cfg.urgent_waker = Some(Arc::new(move || ctx.request_repaint()));
            let vehicle = net_cfg.client.vehicle.clone();
            let net = NetHandle::spawn(net_cfg)?;
            configure_renderer(cc);
            let settings = OcuApp::load_settings(cc.storage);
            let mut app = OcuApp::new(kind, Some(net), sims, settings);
            // The network thread's jog guard and the window keep off the same vehicle.
            app.set_vehicle_geometry(vehicle.clone());
            app.set_pace(pace);
            let (mapping, problem) = gamepad_mapping();
            if let Some(problem) = problem {
                app.notify(notice::NoticeLevel::Warning, problem);
            }
            app.set_gamepad(gamepad::Gamepad::spawn(cc.egui_ctx.clone()), mapping);
            app.memory_override = memory_limit;
            if let Some(addr) = live_view
                && let Err(why) = app.start_live_view(addr)
            {
                app.notify(notice::NoticeLevel::Error, why);
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window could not be opened: {e} (is a display available? set DISPLAY, or use `jaus-ocu probe` for a terminal view)"))
}

/// The gamepad mapping: the file at [`app::mapping_path`] if there is one, else the
/// default; a file that does not load gives the default and the reason (with what to do).
fn gamepad_mapping() -> (gamepad::Mapping, Option<String>) {
    let Some(path) = app::mapping_path().filter(|p| p.exists()) else {
        return (gamepad::Mapping::default(), None);
    };
    match gamepad::Mapping::load(&path) {
        Ok(m) => {
            tracing::info!("gamepad mapping from {}", path.display());
            (m, None)
        }
        Err(e) => {
            tracing::warn!("{e}");
            (
                gamepad::Mapping::default(),
                Some(format!("{e}; the default gamepad mapping is used")),
            )
        }
    }
}

/// Fits egui's drawing to the window's OpenGL renderer: shapes without antialiasing fringes
/// under a software renderer ([`pace::antialias_shapes`]).
fn configure_renderer(cc: &eframe::CreationContext<'_>) {
    let Some(gl) = cc.gl.as_ref() else {
        return;
    };
    let renderer = gl_ffi::renderer_name(gl);
    let env = std::env::var("JAUS_OCU_ANTIALIAS").ok();
    let antialias = pace::antialias_shapes(&renderer, env.as_deref());
    tracing::info!(
        "OpenGL renderer: {renderer}; shapes {}",
        if antialias {
            "antialiased"
        } else {
            "not antialiased (software rendering: JAUS_OCU_ANTIALIAS=on to compare)"
        }
    );
    cc.egui_ctx
        .tessellation_options_mut(|o| o.feathering = antialias);
}

/// Opens the window replaying `path` (a `.mcap` recording or a `.pcap`/`.pcapng` capture,
/// JUDP on UDP `port`) and runs until it is closed. The file loads in the background while
/// the window draws what has arrived; a file that cannot be opened at all fails here, before
/// any window appears. `memory_limit` as for [`run`]; `vehicle` is the vehicle file the
/// clearance is shown against (`--vehicle`).
pub fn run_replay(
    path: &Path,
    port: u16,
    memory_limit: Option<u64>,
    vehicle: Arc<crate::model::clearance::obstacles::VehicleGeometry>,
) -> anyhow::Result<()> {
    GUI_START.get_or_init(Instant::now);
    gl_ffi::keep_frame_memory();
    // The loader wakes the window as batches arrive, once the window exists.
    let waker_ctx: Arc<OnceLock<eframe::egui::Context>> = Arc::new(OnceLock::new());
    let for_waker = waker_ctx.clone();
    let waker: LoadWaker = Arc::new(move || {
        if let Some(ctx) = for_waker.get() {
            ctx.request_repaint_after(Duration::from_millis(30));
        }
    });
    // The settings are read with the window; until then the budget is the command line's or
    // the automatic one (the first frame gives the session the settings' budget).
    let budget = memory::Budget::choose(memory_limit, None, memory::physical_memory());
    let replay = Replay::open_within(path, port, Some(waker), Some(budget.as_usize()))?;
    let title = format!("jaus-ocu (REPLAY {})", words::file_name(path));
    eframe::run_native(
        "jaus-ocu",
        native_options(&title),
        Box::new(move |cc| {
            let _ = waker_ctx.set(cc.egui_ctx.clone());
            configure_renderer(cc);
            let settings = OcuApp::load_settings(cc.storage);
            let mut app = OcuApp::with_replay(replay, settings);
            app.set_vehicle_geometry(vehicle);
            app.replay_port = port;
            app.memory_override = memory_limit;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window could not be opened: {e} (is a display available? set DISPLAY, or use `jaus-ocu inspect` for a terminal view)"))
}
