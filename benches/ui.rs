//! UI frame cost (issue 5): CPU time per frame for UI logic + plot decimation + tessellation +
//! scene update (rasterization excluded: no GPU is involved), with the 7-joint demo arm and
//! 8 hours of 100 Hz end-effector force/torque history in the plots; compared in the same run
//! with handing every point in the visible window straight to `egui_plot`.
//!
//! Run: `cargo bench --bench ui`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use eframe::egui;
use jaus_ocu::model::update::{PresetInfo, Update};
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::app::{LiveKind, OcuApp, Settings};

const HOURS: f64 = 8.0;
const RATE: f64 = 100.0;

fn app(window_s: f64) -> OcuApp {
    let arm = ArmFile::demo();
    let mut app = OcuApp::new(
        LiveKind::Simulated,
        None,
        None,
        Settings {
            plot_window_s: window_s,
            ..Settings::default()
        },
    );
    app.apply(&Update::Selected {
        t: 0.0,
        id: jaus_ocu::sim::component::DEFAULT_ID.into(),
    });
    app.apply(&Update::Specification {
        t: 0.0,
        spec: arm.spec.clone(),
    });
    app.apply(&Update::ToolOffset {
        t: 0.0,
        point: arm.tool_point,
    });
    app.apply(&Update::Presets {
        t: 0.0,
        presets: arm
            .presets
            .iter()
            .map(|p| PresetInfo {
                id: p.id,
                name: p.name.clone(),
                positions: Some(p.positions.clone()),
            })
            .collect(),
    });
    app.apply(&Update::JointPositions {
        t: 0.0,
        values: arm.home.clone(),
    });
    let n = (HOURS * 3600.0 * RATE) as usize;
    // Straight into the session's F/T history, as `Session::apply` would put it (one lock).
    let session = app.session().clone();
    let mut s = session.write().expect("session lock");
    for i in 0..n {
        let t = i as f64 / RATE;
        let f = [
            (t * 0.7).sin() * 5.0,
            (t * 1.3).cos() * 3.0,
            14.7 + (t * 0.1).sin(),
        ];
        let tq = [0.1 * (t * 2.0).sin(), 0.05, -0.02];
        s.ft.push(
            t,
            &[
                f[0],
                f[1],
                f[2],
                tq[0],
                tq[1],
                tq[2],
                (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt(),
            ],
        );
    }
    drop(s);
    app
}

fn frame(ctx: &egui::Context, app: &mut OcuApp) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1280.0, 800.0),
        )),
        ..Default::default()
    };
    let out = ctx.run_ui(input, |ui| app.frame(ui));
    let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
    prims.len()
}

fn bench(c: &mut Criterion) {
    // The whole 8 hours in view: the worst case for the plots.
    let mut g = c.benchmark_group("ui_frame_8h_100Hz_ft");
    g.sample_size(10);
    for (name, decimate) in [("decimated", true), ("all_points_to_egui_plot", false)] {
        let mut a = app(HOURS * 3600.0);
        a.view.plots.decimate = decimate;
        a.freeze_clock(HOURS * 3600.0);
        let ctx = egui::Context::default();
        // The plots end at the drawn time: following live with the app's clock stopped at the
        // end of the history, the window covers all 8 h.
        frame(&ctx, &mut a);
        g.bench_function(name, |b| b.iter(|| black_box(frame(&ctx, &mut a))));
    }
    // The same frame without the plots: what the rest of the UI costs.
    let mut a = app(HOURS * 3600.0);
    a.freeze_clock(HOURS * 3600.0);
    a.settings.show_plots = false;
    let ctx = egui::Context::default();
    frame(&ctx, &mut a);
    g.bench_function("without_plots", |b| {
        b.iter(|| black_box(frame(&ctx, &mut a)));
    });
    // Decimation alone, as the two plots do it: 4 + 3 channels over the full 8 h, 1280 columns.
    let a = app(HOURS * 3600.0);
    let s = a.session().read().expect("session lock");
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
    eprintln!(
        "history: {} samples x 7 channels, {:.1} MB",
        s.ft.len(),
        s.ft.memory_bytes() as f64 / 1e6
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
