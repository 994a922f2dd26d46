//! The 3D arm panel: forward kinematics of the state at the cursor time, the previewed
//! preset as a ghost, near-limit tints from the gauges, and the SIMULATED mark.

use eframe::egui::{self, Align2, FontId, RichText};

use super::app::{Mode, OcuApp};
use super::gauges::gauge_data;
use super::scene::{ArmView, SceneInput};
use super::theme::Theme;
use crate::model::kinematics::{self, ArmPose};

/// Default radius for cylinders the specification gives none for, m.
pub const DEFAULT_RADIUS: f64 = 0.03;

/// Transient state of the 3D panel.
#[derive(Default)]
pub struct ArmView3d {
    /// The three-d view and its camera.
    pub view: ArmView,
    fitted: bool,
    fitted_presets: bool,
    first_arm_logged: bool,
}

/// The live pose and the previewed ghost pose, when computable.
pub fn poses(app: &OcuApp) -> (Option<ArmPose>, Option<ArmPose>) {
    let Some(spec) = &app.state.spec else {
        return (None, None);
    };
    let tool = app.state.tool_point.unwrap_or([0.0; 3]);
    let live = app
        .state
        .positions
        .as_ref()
        .and_then(|q| kinematics::forward(spec, &q.value, tool).ok());
    let ghost = app
        .view
        .preview
        .and_then(|id| app.state.presets.iter().find(|p| p.id == id))
        .and_then(|p| p.positions.as_ref())
        .and_then(|q| kinematics::forward(spec, q, tool).ok());
    (live, ghost)
}

/// The arm at each preset whose positions are known.
pub fn preset_poses(app: &OcuApp) -> Vec<ArmPose> {
    let Some(spec) = &app.state.spec else {
        return Vec::new();
    };
    let tool = app.state.tool_point.unwrap_or([0.0; 3]);
    app.state
        .presets
        .iter()
        .filter_map(|p| p.positions.as_ref())
        .filter_map(|q| kinematics::forward(spec, q, tool).ok())
        .collect()
}

/// Draws the panel.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    let (live, ghost) = poses(app);
    let warnings: Vec<f32> = gauge_data(app).iter().map(|g| g.warning_level()).collect();
    let (fit, reset) = ui.input(|i| (i.key_pressed(egui::Key::F), i.key_pressed(egui::Key::R)));
    let wants_keys = ui.ctx().egui_wants_keyboard_input();
    if let Some(p) = &live
        && (!app.view.arm_view.fitted || (fit && !wants_keys))
    {
        app.view.arm_view.view.camera.fit(p);
        app.view.arm_view.fitted = true;
    }
    // Once the presets are known, frame the whole working space so the view need not follow.
    if let (Some(p), false) = (&live, app.view.arm_view.fitted_presets) {
        let poses = preset_poses(app);
        if !poses.is_empty() {
            let mut all = poses;
            all.push(p.clone());
            app.view.arm_view.view.camera.fit_all(&all);
            // The presets' union is a generous sphere; the arm fills only part of it at a time.
            app.view.arm_view.view.camera.distance *= 0.7;
            app.view.arm_view.fitted_presets = true;
        }
    }
    if reset && !wants_keys {
        app.view.arm_view.view.camera.reset();
        app.view.arm_view.fitted = false;
        app.view.arm_view.fitted_presets = false;
    }
    ui.horizontal(|ui| {
        ui.toggle_value(&mut app.settings.show_axes, "axes")
            .on_hover_text("Show joint axes");
        ui.toggle_value(&mut app.settings.show_frames, "frames")
            .on_hover_text("Show joint frames");
        if ui
            .button("fit")
            .on_hover_text("Fit the arm in view (F)")
            .clicked()
            && let Some(p) = &live
        {
            app.view.arm_view.view.camera.fit(p);
        }
        if ui
            .button("reset")
            .on_hover_text("Reset the camera (R)")
            .clicked()
        {
            app.view.arm_view.view.camera.reset();
        }
        ui.label(
            RichText::new("drag: orbit · shift/right-drag: pan · scroll: zoom · double-click: fit")
                .small()
                .color(theme.muted),
        );
    });
    let input = SceneInput {
        pose: live.clone(),
        ghost,
        joint_warning: warnings,
        default_radius: DEFAULT_RADIUS,
        show_axes: app.settings.show_axes,
        show_frames: app.settings.show_frames,
        dark: app.settings.dark,
    };
    let response = app.view.arm_view.view.ui(ui, input);
    if live.is_some() && !app.view.arm_view.first_arm_logged {
        app.view.arm_view.first_arm_logged = true;
        if let Some(start) = super::GUI_START.get() {
            tracing::info!(
                "first frame with the live arm {:.0} ms after start",
                start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
    let rect = response.rect;
    app.view.view3d_rect = Some(rect);
    let painter = ui.painter_at(rect);
    let badge = match &app.mode {
        Mode::Simulated => Some(("SIMULATED".to_string(), theme.simulated)),
        Mode::Replay(_) => Some(("REPLAY".to_string(), theme.replay)),
        Mode::Live => None,
    };
    if let Some((text, colour)) = badge {
        painter.text(
            rect.left_top() + egui::vec2(10.0, 8.0),
            Align2::LEFT_TOP,
            text,
            FontId::proportional(22.0),
            colour,
        );
    }
    if live.is_none() {
        let text = match (app.read_only(), app.state.selected.is_some()) {
            (false, true) => "waiting for the arm's specification and positions…",
            (false, false) => "searching for manipulators…",
            (true, true) => "no specification and joint positions recorded up to this time",
            (true, false) => "no manipulator selected in the recording at this time",
        };
        painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            text,
            FontId::proportional(16.0),
            theme.muted,
        );
    }
    if let Some(p) = &live {
        let t = p.tool_point_vehicle;
        painter.text(
            rect.left_bottom() + egui::vec2(10.0, -8.0),
            Align2::LEFT_BOTTOM,
            format!(
                "tool point (vehicle frame): {:.3}, {:.3}, {:.3} m",
                t.x, t.y, t.z
            ),
            FontId::monospace(12.0),
            theme.muted,
        );
    }
}
