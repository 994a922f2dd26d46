//! The 3D vehicle panel: forward kinematics of the focused arm's state at the drawn time, the
//! previewed preset as a ghost, joints tinted by the model's near-limit rule, every other arm
//! of its subsystem at its mount (dimmed, grey when lost), each arm's ID at its base, and the
//! SIMULATED / REPLAY mark.
//!
//! Framing: the first frame shows the whole vehicle; focusing another arm frames that arm;
//! `F` frames the focused arm, `R` the whole vehicle again.

use eframe::egui::{self, Align2, FontId, RichText};

use crate::model::kinematics::{self, ArmPose};
use crate::model::limits::joint_warnings;
use crate::model::state::{ArmState, components_summary};
use crate::model::update::{ComponentId, ManagementState};
use crate::ui::action::Action;
use crate::ui::commands::UiCommand;
use crate::ui::scene::{ArmView, Camera, SceneArm, SceneInput};
use crate::ui::settings::Settings;
use crate::ui::sources::Badge;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;

/// The least height of the 3D view, points: in a small window (800×600) with the emergency
/// banner up, the plots give way (shrink, then hide) before the view goes below it, so the
/// arm stays large enough to see its pose.
pub const MIN_VIEW3D_HEIGHT: f32 = 200.0;

/// Height of what the 3D column holds besides the view and the banner (its toolbar, the
/// panel's margins and spacing), points.
const CHROME_HEIGHT: f32 = 44.0;

/// The banner's height as last drawn, points (0 before it is first drawn).
pub fn banner_height(ctx: &egui::Context) -> f32 {
    ctx.data(|d| d.get_temp::<f32>(banner_id())).unwrap_or(0.0)
}

fn banner_id() -> egui::Id {
    egui::Id::unique("view3d banner height")
}

/// The most the plots panel may take of `height` (what the panels share) while the 3D view,
/// under a banner `banner` points tall, keeps [`MIN_VIEW3D_HEIGHT`].
pub fn room_for_plots(height: f32, banner: f32) -> f32 {
    (height - MIN_VIEW3D_HEIGHT - CHROME_HEIGHT - banner).max(0.0)
}

/// Default radius for cylinders the specification gives none for, m (the model's).
pub use crate::model::kinematics::DEFAULT_CYLINDER_RADIUS as DEFAULT_RADIUS;

/// Transient state of the 3D panel: its camera, the view widget (and its GPU side), and
/// what the camera was last framed on.
#[derive(Default)]
pub struct ArmPanel {
    /// Where the arm is seen from.
    pub camera: Camera,
    /// Where the view was drawn last frame, in points (for the PNG export).
    pub rect: Option<egui::Rect>,
    view: ArmView,
    /// The framing done: `None` until the first arm is seen (or after a reset).
    framed: Option<Framed>,
    /// The arms drawn last frame, the focused one first.
    drawn: Vec<ComponentId>,
    first_arm_logged: bool,
    /// The last fit: the camera it left and the poses it framed. While the operator has
    /// not moved the camera since, a new size of the view frames them again.
    fitted: Option<(Camera, Vec<ArmPose>)>,
}

/// What the camera was framed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Framed {
    /// The focused arm then.
    arm: Option<ComponentId>,
    /// Its presets were in the framing.
    with_presets: bool,
    /// The whole vehicle was framed (else the focused arm).
    vehicle: bool,
    /// How many other arms were in it.
    others: usize,
    /// How many preset poses (of every arm framed) were in it.
    presets: usize,
}

impl ArmPanel {
    /// Looks at the whole arm `pose` (nothing without one).
    pub fn fit(&mut self, pose: Option<&ArmPose>) {
        if let Some(p) = pose {
            self.fit_all(vec![p.clone()]);
        }
    }

    /// Frames `poses` and remembers it (see [`ArmPanel::refit_if_resized`]).
    fn fit_all(&mut self, poses: Vec<ArmPose>) {
        self.camera.fit_all(&poses);
        self.fitted = Some((self.camera, poses));
    }

    /// The view is `size` points now: when its shape changed and the operator has not moved
    /// the camera since the last fit, frames the same poses again for the new shape (a
    /// narrower view would crop them). Returns whether it did.
    pub fn refit_if_resized(&mut self, size: egui::Vec2) -> bool {
        let aspect = f64::from(size.x / size.y.max(1.0));
        self.camera.aspect = aspect;
        let Some((fitted, poses)) = &self.fitted else {
            return false;
        };
        let untouched = Camera {
            aspect: fitted.aspect,
            ..self.camera
        } == *fitted;
        if !untouched || (aspect - fitted.aspect).abs() < 1e-3 {
            return false;
        }
        let poses = poses.clone();
        self.fit_all(poses);
        true
    }

    /// Back to the default camera; the whole vehicle (and the focused arm's presets) is
    /// framed again on the next frame.
    pub fn reset(&mut self) {
        self.camera.reset();
        self.framed = None;
        self.fitted = None;
    }

    /// The arms drawn in the last frame, the focused one first (what tests and the status
    /// of the view read).
    pub fn drawn_arms(&self) -> &[ComponentId] {
        &self.drawn
    }

    /// Whether what the view shows changed visibly in the last frame (its picture was
    /// rendered again): the arm or the camera moves ([`crate::ui::app::RepaintNeeds::moving`]).
    pub fn changed(&self) -> bool {
        self.view.changed()
    }

    /// Pictures of the view rendered so far (see [`ArmView::renders`]).
    pub fn renders(&self) -> u64 {
        self.view.renders()
    }

    /// Frees the view's GPU objects (made in the GL context that painted it) and keeps the
    /// camera: the next paint, in whatever context, makes them again.
    pub fn release_gpu(&mut self) {
        self.view = ArmView::new();
    }
}

/// What the panel shows.
pub struct View3dInput<'a> {
    /// The state drawn.
    pub state: &'a ArmState,
    /// The preset previewed as a ghost.
    pub preview: Option<u8>,
    /// What the window shows.
    pub shown: Shown,
    /// The SIMULATED or REPLAY mark.
    pub badge: Option<&'a Badge>,
    /// When the arm drawn is the last known (`LINK LOST — last known at …`): the view is
    /// veiled and says so.
    pub last_known: Option<&'a str>,
    /// The focused arm (whose state is `state`).
    pub focus: Option<ComponentId>,
    /// The other arms of its subsystem, at the drawn time ([`crate::ui::arms::scene_arms`]).
    pub others: Vec<SceneArm>,
    /// When the past is drawn, when it is (`at −12.4 s (12:03:04 UTC)`): said over the view.
    pub past: Option<&'a str>,
    /// The banner's lines (the live arm's emergency, lost link…), drawn over the view under
    /// its toolbar.
    pub banner: &'a [super::banner::Line],
    /// The plots are switched on but hidden: the window is too small for them and the 3D
    /// view's minimum.
    pub plots_hidden: bool,
}

/// The arm at the drawn positions and the previewed preset's ghost, when computable.
pub fn poses(state: &ArmState, preview: Option<u8>) -> (Option<ArmPose>, Option<ArmPose>) {
    let Some(spec) = &state.spec else {
        return (None, None);
    };
    let tool = state.tool_point.unwrap_or([0.0; 3]);
    let live = state
        .positions
        .as_ref()
        .and_then(|q| kinematics::forward(spec, &q.value, tool).ok());
    let ghost = preview
        .and_then(|id| state.presets.iter().find(|p| p.id == id))
        .and_then(|p| p.positions.as_ref())
        .and_then(|q| kinematics::forward(spec, q, tool).ok());
    (live, ghost)
}

/// The arm at each preset whose positions are known.
pub fn preset_poses(state: &ArmState) -> Vec<ArmPose> {
    let Some(spec) = &state.spec else {
        return Vec::new();
    };
    let tool = state.tool_point.unwrap_or([0.0; 3]);
    state
        .presets
        .iter()
        .filter_map(|p| p.positions.as_ref())
        .filter_map(|q| kinematics::forward(spec, q, tool).ok())
        .collect()
}

/// Frames the camera when the view needs it: the whole vehicle on the first frame with an
/// arm (and after a reset), the focused arm when another is focused. Every arm framed is
/// framed with its presets as they become known (where it is and where it will go, so the
/// view need not follow it: a touring arm never leaves the picture).
fn auto_fit(
    panel: &mut ArmPanel,
    live: Option<&ArmPose>,
    input: &View3dInput<'_>,
    others: &[SceneArm],
) {
    let Some(p) = live else { return };
    let presets = preset_poses(input.state);
    let others_presets: usize = others.iter().map(|a| a.presets.len()).sum();
    let vehicle = match panel.framed {
        None => true,
        Some(f) if f.arm != input.focus => false,
        // An arm of the vehicle, or presets of one, showed up after the vehicle was framed.
        Some(f)
            if f.vehicle
                && (others.len() > f.others || presets.len() + others_presets > f.presets) =>
        {
            true
        }
        // The presets became known: an arm framed alone is framed with them.
        Some(f) if !f.vehicle && !presets.is_empty() && !f.with_presets => false,
        Some(_) => return,
    };
    let mut poses = vec![p.clone()];
    poses.extend(presets.iter().cloned());
    if vehicle {
        for a in others {
            poses.push(a.pose.clone());
            poses.extend(a.presets.iter().cloned());
        }
    }
    panel.fit_all(poses);
    panel.framed = Some(Framed {
        arm: input.focus,
        with_presets: !presets.is_empty(),
        vehicle,
        others: others.len(),
        presets: presets.len() + if vehicle { others_presets } else { 0 },
    });
}

/// Draws the panel.
pub fn show(
    ui: &mut egui::Ui,
    input: &View3dInput<'_>,
    panel: &mut ArmPanel,
    settings: &mut Settings,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let state = input.state;
    let (live, ghost) = poses(state, input.preview);
    let warnings = state.spec.as_ref().map_or_else(Vec::new, |spec| {
        joint_warnings(spec, state.positions.as_ref().map(|q| q.value.as_slice()))
    });
    ui.horizontal(|ui| {
        ui.toggle_value(&mut settings.show_axes, "axes")
            .on_hover_text("Show joint axes");
        ui.toggle_value(&mut settings.show_frames, "frames")
            .on_hover_text("Show joint frames");
        for cmd in [UiCommand::FitView, UiCommand::ResetCamera] {
            if ui
                .button(cmd.text())
                .on_hover_text(cmd.hover_text(input.shown))
                .clicked()
            {
                actions.push(Action::Ui(cmd));
            }
        }
        if input.plots_hidden {
            ui.label(RichText::new("plots hidden").small().color(theme.warn))
                .on_hover_text(
                    "The window is too small for the plots and the 3D view: enlarge it to see \
                     the plots again",
                );
        }
        // Cut in a narrow column: a row wider than the column would widen what is under it
        // (the banner) past the presets.
        ui.add(
            egui::Label::new(
                RichText::new(
                    "drag: orbit · shift/right-drag: pan · scroll: zoom · double-click: fit",
                )
                .small()
                .color(theme.muted),
            )
            .truncate(),
        );
    });
    if !input.banner.is_empty() {
        // Under the toolbar, in this column only: nothing the pointer may be on moves.
        let drawn = ui.scope(|ui| super::banner::show(ui, input.banner, theme));
        let h = drawn.response.rect.height();
        ui.ctx().data_mut(|d| d.insert_temp(banner_id(), h));
    }
    // The view takes what is left: frame for its shape before it is drawn.
    panel.refit_if_resized(ui.available_size());
    auto_fit(panel, live.as_ref(), input, &input.others);
    let scene = SceneInput {
        pose: live.clone(),
        ghost,
        joint_warning: warnings,
        default_radius: DEFAULT_RADIUS,
        show_axes: settings.show_axes,
        show_frames: settings.show_frames,
        dark: settings.dark,
        others: input.others.clone(),
    };
    panel.drawn = live
        .as_ref()
        .and(input.focus)
        .into_iter()
        .chain(input.others.iter().map(|a| a.id))
        .collect();
    let response = panel.view.ui(ui, scene, &mut panel.camera);
    if response.double_clicked() && live.is_some() {
        // The view fitted the arm itself; remembered, so a resize frames it again.
        panel.fit(live.as_ref());
    }
    if live.is_some() && !panel.first_arm_logged {
        panel.first_arm_logged = true;
        if let Some(start) = crate::ui::GUI_START.get() {
            tracing::info!(
                "first frame with the live arm {:.0} ms after start",
                start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
    let rect = response.rect;
    panel.rect = Some(rect);
    overlay(ui, rect, input, live.as_ref(), theme);
    if let Some(past) = input.past {
        past_label(ui, rect, past, theme);
    }
    if !input.others.is_empty() {
        arm_labels(ui, rect, input, live.as_ref(), &panel.camera, theme);
    }
}

/// When the drawn past is, at the view's top right, as the past area says it.
fn past_label(ui: &mut egui::Ui, rect: egui::Rect, past: &str, theme: &Theme) {
    let area = egui::Rect::from_min_max(
        egui::pos2(rect.center().x, rect.top() + 8.0),
        egui::pos2(rect.right() - 10.0, rect.top() + 40.0),
    );
    ui.scope_builder(
        egui::UiBuilder::new()
            .max_rect(area)
            .layout(egui::Layout::right_to_left(egui::Align::Min)),
        |ui| {
            ui.label(RichText::new(past).size(16.0).strong().color(theme.replay))
                .on_hover_text("The arm as it was at this time, not now");
        },
    );
}

/// Each arm's ID at its base, the focused one's in the accent colour, so the operator can
/// tell the arms of the vehicle apart.
fn arm_labels(
    ui: &egui::Ui,
    rect: egui::Rect,
    input: &View3dInput<'_>,
    live: Option<&ArmPose>,
    camera: &Camera,
    theme: &Theme,
) {
    let painter = ui.painter_at(rect);
    let focused = live.zip(input.focus).map(|(p, id)| (id, p, true, false));
    let others = input.others.iter().map(|a| (a.id, &a.pose, false, a.lost));
    for (id, pose, is_focused, lost) in focused.into_iter().chain(others) {
        let base = pose.mount.translation.to_array();
        let Some([x, y]) = camera.project(base, [rect.width(), rect.height()]) else {
            continue;
        };
        let colour = match (is_focused, lost) {
            (true, _) => theme.accent,
            (false, true) => theme.danger,
            (false, false) => theme.muted,
        };
        let text = if lost {
            format!("{id} (link lost)")
        } else {
            id.to_string()
        };
        painter.text(
            rect.min + egui::vec2(x, y + 6.0),
            Align2::CENTER_TOP,
            text,
            FontId::proportional(13.0),
            colour,
        );
    }
}

/// The badge, what is missing when no arm can be drawn, and the tool point.
fn overlay(
    ui: &egui::Ui,
    rect: egui::Rect,
    input: &View3dInput<'_>,
    live: Option<&ArmPose>,
    theme: &Theme,
) {
    let painter = ui.painter_at(rect);
    let badge = match input.badge {
        Some(Badge::Simulated) => Some(("SIMULATED", theme.simulated)),
        Some(Badge::Replay(_)) => Some(("REPLAY", theme.replay)),
        None => None,
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
    if let Some(text) = input.last_known {
        // Not the arm now: greyed, and the time it was last seen.
        painter.rect_filled(rect, 0.0, theme.stale_veil);
        painter.text(
            rect.center_top() + egui::vec2(0.0, 40.0),
            Align2::CENTER_TOP,
            text,
            FontId::proportional(20.0),
            theme.warn,
        );
    }
    if input.state.status == ManagementState::Emergency {
        // The arm drawn is in emergency: a red frame and the word, large.
        painter.rect_stroke(
            rect.shrink(3.0),
            0.0,
            egui::Stroke::new(6.0, theme.danger),
            egui::StrokeKind::Inside,
        );
        let label = if input.shown.is_past() {
            "EMERGENCY (then)"
        } else {
            "EMERGENCY"
        };
        painter.text(
            rect.center_bottom() - egui::vec2(0.0, 40.0),
            Align2::CENTER_BOTTOM,
            label,
            // Smaller in a small view, where 44 pt would hide the arm.
            FontId::proportional((rect.height() * 0.14).clamp(22.0, 44.0)),
            theme.danger,
        );
    }
    match live {
        None => {
            let text = match (input.shown.is_replay(), input.state.selected.is_some()) {
                (false, true) => "waiting for the arm's specification and positions…".into(),
                (false, false) if input.state.none_is_a_manipulator() => {
                    components_summary(input.state)
                }
                (false, false) => "searching for manipulators…".into(),
                (true, true) => {
                    "no specification and joint positions recorded up to this time".into()
                }
                (true, false) => "no manipulator selected in the recording at this time".into(),
            };
            painter.text(
                rect.center(),
                Align2::CENTER_CENTER,
                text,
                FontId::proportional(16.0),
                theme.muted,
            );
        }
        Some(p) => {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinematics::forward;
    use crate::sim::arm_file::ArmFile;

    fn demo_pose() -> ArmPose {
        let file = ArmFile::demo();
        forward(&file.spec, &file.home, file.tool_point).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Whether the base, every frame origin and the tool point of `pose` are inside a view of
    /// `size`.
    fn all_inside(camera: &Camera, pose: &ArmPose, size: egui::Vec2) -> bool {
        let mut points = vec![pose.mount.translation, pose.tool_point_vehicle];
        points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
        points.iter().all(|p| {
            camera
                .project(p.to_array(), [size.x, size.y])
                .is_some_and(|[x, y]| (0.0..=size.x).contains(&x) && (0.0..=size.y).contains(&y))
        })
    }

    #[test]
    fn a_resized_view_frames_the_arm_again_unless_the_operator_moved_the_camera() {
        let pose = demo_pose();
        let mut panel = ArmPanel::default();
        let wide = egui::vec2(1200.0, 400.0);
        panel.refit_if_resized(wide);
        panel.fit(Some(&pose));
        assert!(all_inside(&panel.camera, &pose, wide));
        // Narrow and tall: framed again for the new shape.
        let tall = egui::vec2(300.0, 700.0);
        assert!(panel.refit_if_resized(tall));
        assert!(all_inside(&panel.camera, &pose, tall));
        assert!(
            !panel.refit_if_resized(tall),
            "the same size: nothing to do"
        );
        // Once the operator turned the camera, their view is kept.
        panel.camera.orbit(0.3, 0.0, false);
        let turned = panel.camera;
        assert!(!panel.refit_if_resized(wide));
        assert_eq!(
            Camera {
                aspect: turned.aspect,
                ..panel.camera
            },
            turned
        );
    }
}
