//! UI frame cost: CPU time per frame for UI logic + plot decimation + tessellation + scene
//! update (rasterization excluded: no GPU is involved).
//!
//! - Issue 5: the 7-joint demo arm with 8 hours of 100 Hz end-effector force/torque history
//!   in the plots, compared in the same run with handing every point in the visible window
//!   straight to `egui_plot`.
//! - Issue 19: the demo vehicle with 1 and with 8 arms at the demo's rates, side by side:
//!   each frame takes in the next 33 ms of every arm's updates (as the live drain does) and
//!   draws the window (the arm list, the focused arm's gauges, presets and plots, every arm
//!   in the 3D scene's input).
//!
//! - Issue 20: the plot panel with 6 plots of 8 h each (end-effector force and torque, joint
//!   positions, velocities, efforts and torques of the 7 joints, every series at 100 Hz) side
//!   by side in the same run with the layout before it (the 2 force/torque plots), over the
//!   same session.
//!
//! - Issue 31: the six plots independent of the history's length: the same frame over 1 h
//!   and over 12 h of history (each whole in view) side by side, the ratio of the two
//!   printed from a measurement that alternates them; the frame while the plots follow live
//!   (the drawn time advancing 33 ms a frame, the samples of those 33 ms arriving); the frame
//!   with the envelope caches dropped each time (a zoom or resize: everything computed).
//!
//! Run: `cargo bench --bench ui` (`-- vehicle` for the issue 19 rows alone).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use eframe::egui;
use jaus_ocu::model::signals::{PlotLayout, PlotSpec, Series, SignalRef};
use jaus_ocu::model::update::{ArmFact, ComponentId, NetFact, Update};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::sim::vehicle::vehicle_updates;
use jaus_ocu::ui::app::OcuApp;
use jaus_ocu::ui::pace::process_cpu_time;
use jaus_ocu::ui::plot_caches::PlotCaches;
use jaus_ocu::ui::settings::Settings;
use jaus_ocu::ui::sources::LiveKind;

const HOURS: f64 = 8.0;
const RATE: f64 = 100.0;

fn app(window_s: f64) -> OcuApp {
    app_of(HOURS, window_s)
}

/// The joint and force/torque samples of the demo arm at `t` (what `app_of` feeds).
fn samples_at(t: f64, joints: usize) -> [ArmFact; 5] {
    let q: Vec<f64> = (0..joints)
        .map(|k| (t * 0.01 * (k + 1) as f64).sin())
        .collect();
    let f = [
        (t * 0.7).sin() * 5.0,
        (t * 1.3).cos() * 3.0,
        14.7 + (t * 0.1).sin(),
    ];
    let tq = [0.1 * (t * 2.0).sin(), 0.05, -0.02];
    [
        ArmFact::JointPositions {
            t,
            values: q.clone(),
        },
        ArmFact::JointVelocities {
            t,
            values: q.iter().map(|v| v * 0.1).collect(),
        },
        ArmFact::JointEfforts {
            t,
            values: q.iter().map(|v| v * 40.0).collect(),
        },
        ArmFact::JointForceTorques { t, values: q },
        ArmFact::ForceTorque {
            t,
            force: f.map(Some),
            torque: tq.map(Some),
        },
    ]
}

/// The demo arm with `hours` of 100 Hz history in every series, plots showing `window_s`.
fn app_of(hours: f64, window_s: f64) -> OcuApp {
    let arm = ArmFile::demo();
    let mut app = OcuApp::new(
        LiveKind::Simulated,
        None,
        Vec::new(),
        Settings {
            plot_window_s: window_s,
            ..Settings::default()
        },
    );
    app.apply(&Update::net(NetFact::Selected {
        t: 0.0,
        id: jaus_ocu::sim::component::DEFAULT_ID.into(),
    }));
    app.apply(&Update::arm(
        arm_id(),
        ArmFact::Specification {
            t: 0.0,
            spec: arm.spec.clone(),
        },
    ));
    app.apply(&Update::arm(
        arm_id(),
        ArmFact::ToolOffset {
            t: 0.0,
            point: arm.tool_point,
        },
    ));
    app.apply(&Update::arm(
        arm_id(),
        ArmFact::Presets {
            t: 0.0,
            presets: arm.preset_infos(),
        },
    ));
    app.apply(&Update::arm(
        arm_id(),
        ArmFact::JointPositions {
            t: 0.0,
            values: arm.home.clone(),
        },
    ));
    let n = (hours * 3600.0 * RATE) as usize;
    let joints = arm.spec.joints.len();
    // Into the focused arm's histories through the session, as the live drain puts it.
    for i in 0..n {
        for fact in samples_at(i as f64 / RATE, joints) {
            app.apply(&Update::arm(arm_id(), fact));
        }
    }
    app
}

/// Seconds of a vehicle's session given to the frames of one measurement round.
const VEHICLE_S: f64 = 40.0;
/// The frame interval of the live window while data arrives (`app::FRAME_INTERVAL`), s.
const FRAME_S: f64 = 0.033;
/// Seconds of session taken in before the measured frames start (setup, presets, the tour
/// under way).
const VEHICLE_WARM_UP_S: f64 = 5.0;

/// A live app taking in a vehicle's updates frame by frame.
struct Feed<'u> {
    app: OcuApp,
    ctx: egui::Context,
    updates: &'u [Update],
    next: usize,
    t: f64,
}

impl<'u> Feed<'u> {
    /// The app with the first [`VEHICLE_WARM_UP_S`] of `updates` taken in and drawn once.
    fn new(updates: &'u [Update]) -> Self {
        let mut feed = Self {
            app: OcuApp::new(LiveKind::Simulated, None, Vec::new(), Settings::default()),
            ctx: egui::Context::default(),
            updates,
            next: 0,
            t: 0.0,
        };
        while feed.t < VEHICLE_WARM_UP_S {
            feed.frame();
        }
        feed
    }

    /// Whether the session has run out.
    fn done(&self) -> bool {
        self.next >= self.updates.len()
    }

    /// One frame: the updates of the next [`FRAME_S`], then the window drawn.
    fn frame(&mut self) -> usize {
        self.t += FRAME_S;
        while let Some(u) = self.updates.get(self.next).filter(|u| u.t() <= self.t) {
            self.app.apply(u);
            self.next += 1;
        }
        self.app.freeze_clock(self.t);
        frame(&self.ctx, &mut self.app)
    }
}

/// The window of the 8 h rows: tall enough that six plots are drawn whole (none scrolled
/// out of view), the same for every row. Since issue 30 a plot of several units takes a lane
/// per unit: the six plots are nine lanes (the telescope's positions, velocities and force in
/// lanes of their own), which the panel's starting height holds from 2000 points up.
const TALL: egui::Vec2 = egui::vec2(1280.0, 2100.0);

fn frame(ctx: &egui::Context, app: &mut OcuApp) -> usize {
    frame_sized(ctx, app, egui::vec2(1280.0, 800.0))
}

fn frame_sized(ctx: &egui::Context, app: &mut OcuApp, size: egui::Vec2) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        ..Default::default()
    };
    let out = ctx.run_ui(input, |ui| app.frame(ui));
    let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
    prims.len()
}

/// The plots before issue 20: force (Fx Fy Fz |F|) and torque (Tx Ty Tz).
fn two_ft_plots() -> PlotLayout {
    let ft = |c| SignalRef::new(Series::ForceTorque, c);
    PlotLayout {
        plots: vec![
            PlotSpec::of_signals(1, &[ft(0), ft(1), ft(2), ft(6)]),
            PlotSpec::of_signals(2, &[ft(3), ft(4), ft(5)]),
        ],
    }
}

/// Six plots: force, torque, and every joint's position, velocity, effort and torque.
fn six_plots() -> PlotLayout {
    let mut layout = two_ft_plots();
    for (k, series) in [
        Series::Positions,
        Series::Velocities,
        Series::Efforts,
        Series::JointForceTorques,
    ]
    .into_iter()
    .enumerate()
    {
        layout
            .plots
            .push(PlotSpec::of_series(3 + k as u32, &[series]));
    }
    layout
}

fn bench(c: &mut Criterion) {
    // The window's allocator settings (`ui::run` sets them before the first frame): without
    // them glibc hands the frame's freed meshes back to the system and the next frame faults
    // them in again, a cost the window does not pay.
    jaus_ocu::ui::gl_ffi::keep_frame_memory();
    // The whole 8 hours in view: the worst case for the plots. One session for every row.
    let mut g = c.benchmark_group("ui_frame_8h_100Hz_ft");
    g.sample_size(10);
    let mut a = app(HOURS * 3600.0);
    // The plots end at the drawn time: following live with the app's clock stopped at the
    // end of the history, the window covers all 8 h.
    a.freeze_clock(HOURS * 3600.0);
    for (name, layout, decimate) in [
        ("decimated", two_ft_plots(), true),
        ("six_plots_joints_and_ft_decimated", six_plots(), true),
        ("all_points_to_egui_plot", two_ft_plots(), false),
    ] {
        a.settings.plots = layout;
        a.view.plots.decimate = decimate;
        let ctx = egui::Context::default();
        frame_sized(&ctx, &mut a, TALL);
        frame_sized(&ctx, &mut a, TALL);
        let shown = a.view.plots.plots_drawn();
        assert_eq!(
            shown,
            a.settings.plots.plots.len(),
            "{name}: every plot drawn"
        );
        g.bench_function(name, |b| {
            b.iter(|| black_box(frame_sized(&ctx, &mut a, TALL)));
        });
    }
    // Issue 31: the six plots with their envelope caches dropped every frame (as after a
    // zoom or a resize: every column of every signal computed).
    a.settings.plots = six_plots();
    a.view.plots.decimate = true;
    let ctx = egui::Context::default();
    frame_sized(&ctx, &mut a, TALL);
    g.bench_function("six_plots_cold_cache", |b| {
        b.iter(|| {
            a.view.plot_caches = PlotCaches::default();
            black_box(frame_sized(&ctx, &mut a, TALL))
        });
    });
    // Following live: each frame the drawn time moves on 33 ms and that time's samples
    // arrive; the 8 h window slides.
    let joints = ArmFile::demo().spec.joints.len();
    let mut next = (HOURS * 3600.0 * RATE) as usize;
    let mut now = HOURS * 3600.0;
    frame_sized(&ctx, &mut a, TALL);
    g.bench_function("six_plots_following_live", |b| {
        b.iter(|| {
            now += FRAME_S;
            while (next as f64) / RATE <= now {
                for fact in samples_at(next as f64 / RATE, joints) {
                    a.apply(&Update::arm(arm_id(), fact));
                }
                next += 1;
            }
            a.freeze_clock(now);
            black_box(frame_sized(&ctx, &mut a, TALL))
        });
    });
    a.freeze_clock(HOURS * 3600.0);
    // The same frame without the plots: what the rest of the UI costs.
    a.settings.show_plots = false;
    let ctx = egui::Context::default();
    frame_sized(&ctx, &mut a, TALL);
    g.bench_function("without_plots", |b| {
        b.iter(|| black_box(frame_sized(&ctx, &mut a, TALL)));
    });
    // Decimation alone, as the two plots do it: 4 + 3 channels over the full 8 h, 1280 columns.
    let v = a.vehicle().read().expect("session lock");
    let s = v.focused();
    let mut bounds = Vec::new();
    g.bench_function("decimation_only_7_channels_1280_columns", |b| {
        b.iter(|| {
            let f =
                s.ft.plot_points_multi(&[0, 1, 2, 6], 0.0, HOURS * 3600.0, 1280, &mut bounds);
            let t =
                s.ft.plot_points_multi(&[3, 4, 5], 0.0, HOURS * 3600.0, 1280, &mut bounds);
            black_box(f.len() + t.len())
        });
    });
    let joints: usize = [
        &s.positions,
        &s.velocities,
        &s.efforts,
        &s.joint_force_torques,
    ]
    .iter()
    .map(|h| h.memory_bytes())
    .sum();
    eprintln!(
        "history: {} samples x 7 channels, {:.1} MB; joints: 4 x {} samples x {} channels, {:.1} MB",
        s.ft.len(),
        s.ft.memory_bytes() as f64 / 1e6,
        s.positions.len(),
        s.positions.channels(),
        joints as f64 / 1e6
    );
    drop(v);
    drop(a);
    // The six plots over 1 h, 8 h and 12 h of history, each whole in view.
    let mut by_length: Vec<(f64, OcuApp, egui::Context)> = [1.0, HOURS, 12.0]
        .into_iter()
        .map(|hours| {
            let mut a = app_of(hours, hours * 3600.0);
            a.freeze_clock(hours * 3600.0);
            a.settings.plots = six_plots();
            let ctx = egui::Context::default();
            frame_sized(&ctx, &mut a, TALL);
            frame_sized(&ctx, &mut a, TALL);
            assert_eq!(a.view.plots.plots_drawn(), 6, "{hours} h: every plot drawn");
            (hours, a, ctx)
        })
        .collect();
    for (hours, a, ctx) in &mut by_length {
        g.bench_function(format!("six_plots_{hours}h"), |b| {
            b.iter(|| black_box(frame_sized(ctx, a, TALL)));
        });
    }
    g.finish();
    // Wall and CPU time per frame from rounds that alternate the lengths (the machine's state
    // shared): the target is CPU time, which a busy machine's preemption leaves out.
    let rounds = 5;
    let frames = 200;
    let mut wall = vec![Vec::new(); by_length.len()];
    let mut cpu = vec![Vec::new(); by_length.len()];
    for _ in 0..rounds {
        for (k, (_, a, ctx)) in by_length.iter_mut().enumerate() {
            let (start, start_cpu) = (Instant::now(), process_cpu_time());
            for _ in 0..frames {
                black_box(frame_sized(ctx, a, TALL));
            }
            wall[k].push(start.elapsed().as_secs_f64() / f64::from(frames));
            if let Some(used) = start_cpu
                .zip(process_cpu_time())
                .and_then(|(a, b)| b.checked_sub(a))
            {
                cpu[k].push(used.as_secs_f64() / f64::from(frames));
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let wall: Vec<f64> = wall.iter_mut().map(median).collect();
    let cpu: Vec<f64> = cpu.iter_mut().map(median).collect();
    for (k, (hours, _, _)) in by_length.iter().enumerate() {
        eprintln!(
            "six plots, {hours} h: {:.3} ms/frame wall, {:.3} ms/frame CPU",
            wall[k] * 1e3,
            cpu[k] * 1e3
        );
    }
    let last = by_length.len() - 1;
    eprintln!(
        "six plots, 12 h / 1 h = {:.3} wall, {:.3} CPU (medians of {rounds} alternated rounds of {frames} frames)",
        wall[last] / wall[0],
        cpu[last] / cpu[0]
    );
}

fn vehicle(c: &mut Criterion) {
    let mut g = c.benchmark_group("ui_frame_vehicle_demo_rates");
    g.sample_size(20);
    for arms in [1, 8] {
        let updates = vehicle_updates(&ArmFile::demo(), arms, VEHICLE_S);
        let per_s = updates.len() as f64 / VEHICLE_S;
        let feed = Feed::new(&updates);
        eprintln!(
            "{arms} arm(s): {} updates/s, {} arms drawn",
            per_s.round(),
            feed.app.view.arm.drawn_arms().len()
        );
        assert_eq!(feed.app.view.arm.drawn_arms().len(), arms);
        g.bench_function(format!("{arms}_arms"), |b| {
            b.iter_custom(|iters| {
                let mut feed = Feed::new(&updates);
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if feed.done() {
                        // A fresh session, out of the measurement.
                        feed = Feed::new(&updates);
                    }
                    let start = Instant::now();
                    black_box(feed.frame());
                    total += start.elapsed();
                }
                total
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench, vehicle);
criterion_main!(benches);
/// The simulated arm the app's facts are about.
fn arm_id() -> ComponentId {
    jaus_ocu::sim::component::DEFAULT_ID.into()
}
