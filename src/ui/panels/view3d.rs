//! The 3D vehicle panel: forward kinematics of the focused arm's state at the drawn time, the
//! previewed preset as a ghost, joints tinted by the model's near-limit rule, every other arm
//! of its subsystem at its mount (dimmed, grey when lost), each arm's ID at its base, and the
//! SIMULATED / REPLAY mark.
//!
//! Framing: the camera follows what it frames ([`Follow`]) — the focused arm (where it is,
//! its presets and everywhere it has been since) from the first frame, when another arm is
//! focused and on `F` (or a double-click), every arm of the vehicle on `R` — fitted again
//! before a frame whenever the arm reaches out of what is framed or the view's shape
//! changes, so the arm is never drawn out of the picture whatever it does. Orbiting,
//! panning or zooming leaves it (the toolbar says so) until `F`.

use eframe::egui::{self, Align2, FontId, RichText};

use glam::DVec3;

use crate::model::kinematics::{self, ArmPose};
use crate::model::state::{ArmState, components_summary};
use crate::model::update::{ComponentId, ManagementState};
use crate::ui::action::Action;
use crate::ui::commands::UiCommand;
use crate::ui::scene::{ArmView, Camera, SceneArm, SceneClearance, SceneInput};
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

/// What the 3D view's camera keeps in view by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Follow {
    /// The whole vehicle: every arm (`R`).
    Vehicle,
    /// The focused arm: where it is, its presets and everywhere it went since (from the
    /// first frame; `F`, a double-click, another arm focused).
    #[default]
    Arm,
    /// The operator's own view: they orbited, panned or zoomed, and nothing moves the
    /// camera until they ask to follow again.
    Free,
}

/// Transient state of the 3D panel: its camera, the view widget (and its GPU side), and
/// what the camera follows.
#[derive(Default)]
pub struct ArmPanel {
    /// Where the arm is seen from.
    pub camera: Camera,
    /// Where the view was drawn last frame, in points (for the PNG export).
    pub rect: Option<egui::Rect>,
    /// Where the notices' strip was drawn last frame (none without a notice).
    pub notice_rect: Option<egui::Rect>,
    view: ArmView,
    /// What the camera keeps in view.
    follow: Follow,
    /// The focused arm in the last frame with an arm (see `seen`).
    focus: Option<ComponentId>,
    /// An arm was seen (`focus` means something).
    seen: bool,
    /// The arms drawn last frame, the focused one first.
    drawn: Vec<ComponentId>,
    first_arm_logged: bool,
    /// What the camera was last fitted to while following — everything framed since the
    /// follow began, grown as the arm goes further — and the view's aspect: fitted again
    /// when either changes.
    framed: Option<(Extent, f64)>,
}

/// What the follow camera frames: the points of the arms framed (base, joint points, tool
/// point, cylinder ends) as their box and their extreme points in 26 directions (the axes,
/// the face and the body diagonals: a 26-sided hull, bounded whatever the number of poses
/// taken in), and the widest volume drawn around them. The camera fits the extreme points,
/// not the box's corners: a tour that reaches forward and then turns behind spans a box
/// whose far corners no point of the arm ever visits, and fitting those made the arm a
/// fraction of the view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    /// The least corner, vehicle frame, m.
    pub lo: DVec3,
    /// The greatest corner, vehicle frame, m.
    pub hi: DVec3,
    /// The point farthest along each of [`EXTENT_DIRECTIONS`], vehicle frame, m.
    pub extremes: [DVec3; 26],
    /// The widest cylinder's radius, m: how far the volumes drawn stand out of the box.
    pub padding: f64,
    /// The arm hangs from its mount (its z axis points down in the vehicle's world).
    pub hangs: bool,
}

/// How far past what is framed the arm may go before the camera is fitted again, m.
pub const EXTENT_SLACK: f64 = 0.005;

/// The 26 directions of an [`Extent`]'s hull: every (x, y, z) in {−1, 0, 1}³ but 0.
pub const EXTENT_DIRECTIONS: [DVec3; 26] = {
    let mut out = [DVec3::ZERO; 26];
    let mut n = 0;
    let mut k = 0;
    while k < 27 {
        if k != 13 {
            out[n] = DVec3::new(
                (k % 3) as f64 - 1.0,
                ((k / 3) % 3) as f64 - 1.0,
                (k / 9) as f64 - 1.0,
            );
            n += 1;
        }
        k += 1;
    }
    out
};

impl Extent {
    /// The extent of one pose of an arm.
    pub fn of(pose: &ArmPose) -> Self {
        let mut points = vec![pose.mount.translation, pose.tool_point_vehicle];
        points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
        for c in &pose.cylinders {
            points.push(pose.mount.transform_point3(c.from));
            points.push(pose.mount.transform_point3(c.to));
        }
        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let extremes = EXTENT_DIRECTIONS.map(|d| {
            points
                .iter()
                .copied()
                .max_by(|a, b| a.dot(d).total_cmp(&b.dot(d)))
                .unwrap_or(DVec3::ZERO)
        });
        let padding = pose
            .cylinders
            .iter()
            .map(|c| c.radius.map_or(DEFAULT_RADIUS, f64::abs))
            .fold(DEFAULT_RADIUS, f64::max);
        Self {
            lo,
            hi,
            extremes,
            padding,
            // Vehicle +z is down: the arm's up points down when it has a positive vehicle z.
            hangs: pose.mount.transform_vector3(DVec3::Z).z > 0.0,
        }
    }

    /// The extent of an arm now and at each of its presets: where it is and where it goes.
    pub fn of_poses<'a>(now: &ArmPose, presets: impl IntoIterator<Item = &'a ArmPose>) -> Self {
        presets
            .into_iter()
            .fold(Self::of(now), |e, p| e.union(&Self::of(p)))
    }

    /// The extent of both (the hanging of `self`).
    pub fn union(&self, other: &Self) -> Self {
        let mut extremes = self.extremes;
        for ((mine, theirs), d) in extremes
            .iter_mut()
            .zip(other.extremes)
            .zip(EXTENT_DIRECTIONS)
        {
            if theirs.dot(d) > mine.dot(d) {
                *mine = theirs;
            }
        }
        Self {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            extremes,
            padding: self.padding.max(other.padding),
            hangs: self.hangs,
        }
    }

    /// Whether `other` is inside this extent's hull (and its box), give or take
    /// [`EXTENT_SLACK`]: noise on a joint at the edge of what is framed does not move the
    /// camera (it is inside the volumes' padding and the view's margin anyway).
    pub fn contains(&self, other: &Self) -> bool {
        let slack = DVec3::splat(EXTENT_SLACK);
        (self.lo - slack).cmple(other.lo).all()
            && (self.hi + slack).cmpge(other.hi).all()
            && self.padding >= other.padding
            && self
                .extremes
                .iter()
                .zip(other.extremes)
                .zip(EXTENT_DIRECTIONS)
                .all(|((mine, theirs), d)| theirs.dot(d) <= mine.dot(d) + EXTENT_SLACK * d.length())
    }

    /// The points the camera keeps in view, each grown by the padding.
    fn framed_points(&self) -> Vec<kinematics::Reach> {
        self.extremes
            .iter()
            .map(|p| kinematics::Reach {
                centre: *p,
                radius: self.padding,
                hangs: self.hangs,
            })
            .collect()
    }
}

impl ArmPanel {
    /// What the camera keeps in view now.
    pub fn follow(&self) -> Follow {
        self.follow
    }

    /// Follows the focused arm again (`F`, a double-click): framed afresh on the next
    /// frame — where it is and its presets — from the direction the operator looks from.
    pub fn follow_arm(&mut self) {
        self.follow = Follow::Arm;
        self.framed = None;
    }

    /// One frame of following, for a view `size` points large: the focused arm's
    /// [`Extent`] now (its pose and presets; nothing to do without one) and the other
    /// arms' (`others`). A new focus follows that arm. While following, what is framed
    /// only grows: when the arm reaches out of it (a jog, a tour off its presets), or the
    /// view's shape changes, the camera is fitted again before the frame is drawn, so the
    /// arm is never drawn out of the picture; while it moves inside, the camera stays
    /// still. Returns whether it moved the camera.
    pub fn keep_in_view(
        &mut self,
        size: egui::Vec2,
        focus: Option<ComponentId>,
        focused: Option<Extent>,
        others: &[Extent],
    ) -> bool {
        let aspect = f64::from(size.x / size.y.max(1.0));
        self.camera.aspect = aspect;
        let Some(focused) = focused else {
            return false;
        };
        if self.seen && self.focus != focus {
            self.follow_arm();
        }
        (self.focus, self.seen) = (focus, true);
        let now = match self.follow {
            Follow::Free => return false,
            Follow::Arm => focused,
            Follow::Vehicle => others.iter().fold(focused, |e, o| e.union(o)),
        };
        let grown = match self.framed {
            Some((e, _)) if e.contains(&now) => e,
            Some((e, _)) => e.union(&now),
            None => now,
        };
        if self
            .framed
            .is_some_and(|(e, a)| e == grown && (a - aspect).abs() < 1e-3)
        {
            return false;
        }
        self.camera.fit_reach(&grown.framed_points());
        self.framed = Some((grown, aspect));
        true
    }

    /// Back to the default camera, following the whole vehicle (framed on the next frame:
    /// `R`).
    pub fn reset(&mut self) {
        self.camera.reset();
        self.follow = Follow::Vehicle;
        self.framed = None;
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
    /// The vehicle's obstacles and ground and the pairs near contact (issue 45).
    pub clearance: SceneClearance,
    /// When the past is drawn, when it is (`at −12.4 s (12:03:04 UTC)`): said over the view.
    pub past: Option<&'a str>,
    /// The banner's lines (the live arm's emergency, lost link…), drawn over the view under
    /// its toolbar.
    pub banner: &'a [super::banner::Line],
    /// The plots are switched on but hidden: the window is too small for them and the 3D
    /// view's minimum.
    pub plots_hidden: bool,
    /// The messages for the operator, drawn in a strip along the bottom of the tile.
    pub notices: &'a [crate::ui::notice::Notice],
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

/// The view's toolbar: the overlays, the camera's buttons, the tool point (`live`) and how
/// to drive the camera.
fn toolbar(
    ui: &mut egui::Ui,
    input: &View3dInput<'_>,
    panel: &ArmPanel,
    live: Option<&ArmPose>,
    settings: &mut Settings,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    ui.horizontal(|ui| {
        ui.toggle_value(&mut settings.show_axes, "axes")
            .on_hover_text("Show joint axes");
        ui.toggle_value(&mut settings.show_frames, "frames")
            .on_hover_text("Show joint frames");
        for (cmd, follows) in [
            (UiCommand::FitView, Follow::Arm),
            (UiCommand::ResetCamera, Follow::Vehicle),
        ] {
            // Lit while the camera follows what it frames.
            let button = egui::Button::new(cmd.text()).selected(panel.follow == follows);
            if ui
                .add(button)
                .on_hover_text(cmd.hover_text(input.shown))
                .clicked()
            {
                actions.push(Action::Ui(cmd));
            }
        }
        // Cut to the room left, never past the tile's edge (a row wider than the tile
        // widens what is under it: the notices' strip).
        if input.plots_hidden && ui.available_width() > 24.0 {
            ui.add(
                egui::Label::new(RichText::new("plots hidden").small().color(theme.warn))
                    .truncate(),
            )
            .on_hover_text(
                "The window is too small for the plots and the 3D view: enlarge it to see \
                     the plots again",
            );
        }
        // A camera that no longer follows the arm is said before the tool point, whole:
        // in a narrow view the tool point is cut, never this.
        if panel.follow == Follow::Free {
            ui.label(
                RichText::new("free camera · F: follow")
                    .small()
                    .color(theme.warn),
            )
            .on_hover_text(
                "The camera stays where you left it: F or a double-click follows the arm again",
            );
        }
        // The tool point in the toolbar, not over the view: the arm and its tool-point
        // marker are never drawn under it. Cut to the room left (whole on hover).
        if let Some(p) = live.filter(|_| ui.available_width() > 60.0) {
            let t = p.tool_point_vehicle;
            let xyz = format!("{:.3}, {:.3}, {:.3} m", t.x, t.y, t.z);
            ui.add(
                egui::Label::new(
                    RichText::new(format!("tool {xyz}"))
                        .monospace()
                        .size(12.0)
                        .color(theme.muted),
                )
                .truncate(),
            )
            .on_hover_text(format!(
                "The tool point in the vehicle frame (x, y, z): {xyz}"
            ));
        }
        // Cut in a narrow column: a row wider than the column would widen what is under it
        // (the banner) past the presets.
        let hint =
            RichText::new("drag: orbit · shift/right-drag: pan · scroll: zoom (leave follow)")
                .color(theme.muted);
        // Only where there is room left: an elided hint placed past the column's end
        // would widen the tile's content (the notices' strip under it among them).
        if panel.follow != Follow::Free && ui.available_width() > 40.0 {
            ui.add(egui::Label::new(hint.small()).truncate());
        }
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
    // At a rest pose (Stowed) a joint on its limit is by design: not tinted.
    let warnings = state.joint_warnings();
    toolbar(ui, input, panel, live.as_ref(), settings, theme, actions);
    if !input.banner.is_empty() {
        // Under the toolbar, in this column only: nothing the pointer may be on moves.
        let drawn = ui.scope(|ui| super::banner::show(ui, input.banner, theme));
        let h = drawn.response.rect.height();
        ui.ctx().data_mut(|d| d.insert_temp(banner_id(), h));
    }
    // The notices' strip at the bottom, before the view: the view takes what is left, so
    // no notice is ever over the arm.
    panel.notice_rect = super::notices::strip(ui, input.notices, theme, actions);
    // The view takes what is left: follow for its shape before it is drawn.
    let presets = preset_poses(state);
    let extent = live.as_ref().map(|p| Extent::of_poses(p, &presets));
    let others: Vec<Extent> = input
        .others
        .iter()
        .map(|a| Extent::of_poses(&a.pose, &a.presets))
        .collect();
    panel.keep_in_view(ui.available_size(), input.focus, extent, &others);
    if let Some(z) = input.clearance.ground {
        // The vehicle file's ground is where the grid is (world z is up).
        panel.camera.ground = -z;
    }
    let before = panel.camera;
    let scene = SceneInput {
        pose: live.clone(),
        ghost,
        joint_warning: warnings,
        default_radius: DEFAULT_RADIUS,
        show_axes: settings.show_axes,
        show_frames: settings.show_frames,
        dark: settings.dark,
        others: input.others.clone(),
        clearance: input.clearance.clone(),
    };
    panel.drawn = live
        .as_ref()
        .and(input.focus)
        .into_iter()
        .chain(input.others.iter().map(|a| a.id))
        .collect();
    let response = panel.view.ui(ui, scene, &mut panel.camera);
    if response.double_clicked() {
        panel.follow_arm();
        ui.ctx().request_repaint();
    } else if (Camera {
        aspect: before.aspect,
        ..panel.camera
    }) != before
    {
        // The operator orbited, panned or zoomed: their view, until they follow again.
        panel.follow = Follow::Free;
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
    gap_labels(ui, rect, &input.clearance, &panel.camera, theme);
}

/// Each pair's gap in mm beside the middle of its line, in the zone's colour.
fn gap_labels(
    ui: &egui::Ui,
    rect: egui::Rect,
    clearance: &SceneClearance,
    camera: &Camera,
    theme: &Theme,
) {
    let painter = ui.painter_at(rect);
    for line in clearance.lines.iter().filter(|l| l.label) {
        let mid = ((line.on_a + line.on_b) * 0.5).to_array();
        let Some([x, y]) = camera.project(mid, [rect.width(), rect.height()]) else {
            continue;
        };
        let colour = super::clearance::zone_colour(line.zone, theme, ui.visuals().text_color());
        painter.text(
            rect.min + egui::vec2(x + 8.0, y),
            Align2::LEFT_CENTER,
            format!("{:.0} mm", line.gap * 1000.0),
            FontId::proportional(13.0),
            colour,
        );
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

/// The badge, and what is missing when no arm can be drawn.
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
    // The tool point's caption is in the toolbar (`show`), not over the view.
    if live.is_none() {
        let text = match (input.shown.is_replay(), input.state.selected.is_some()) {
            (false, true) => "waiting for the arm's specification and positions…".into(),
            (false, false) if input.state.none_is_a_manipulator() => {
                components_summary(input.state)
            }
            (false, false) => "searching for manipulators…".into(),
            (true, true) => "no specification and joint positions recorded up to this time".into(),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinematics::forward;
    use crate::sim::arm_file::{ArmFile, BUILTIN};

    /// Positions spread across the limits (±π for a continuous joint), fixed seed; one
    /// pose in four has every joint at a limit.
    fn across_limits(file: &ArmFile, count: usize) -> Vec<ArmPose> {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..count)
            .map(|k| {
                let q: Vec<f64> = file
                    .spec
                    .joints
                    .iter()
                    .map(|j| {
                        let (lo, hi) = (
                            j.min.unwrap_or(-std::f64::consts::PI),
                            j.max.unwrap_or(std::f64::consts::PI),
                        );
                        lo + (hi - lo) * if k % 4 == 0 { next().round() } else { next() }
                    })
                    .collect();
                forward(&file.spec, &q, file.tool_point).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    }

    /// The points of `pose` outside a view of `size`: the base, every joint point and the
    /// tool point, projected with the camera's view-projection.
    fn outside(camera: &Camera, pose: &ArmPose, size: egui::Vec2) -> Vec<[f32; 2]> {
        let mut points = vec![pose.mount.translation, pose.tool_point_vehicle];
        points.extend(pose.frames.iter().map(|f| (pose.mount * *f).translation));
        points
            .iter()
            .filter_map(|p| {
                let at = camera.project(p.to_array(), [size.x, size.y]);
                match at {
                    Some([x, y]) if (0.0..=size.x).contains(&x) && (0.0..=size.y).contains(&y) => {
                        None
                    }
                    _ => Some(at.unwrap_or([f32::NAN; 2])),
                }
            })
            .collect()
    }

    /// The demo arm's (or another built-in arm's) presets, as the view frames them.
    fn presets_of(file: &ArmFile) -> Vec<ArmPose> {
        file.presets
            .iter()
            .map(|p| {
                forward(&file.spec, &p.positions, file.tool_point).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    }

    #[test]
    fn following_draws_every_pose_within_the_limits_in_view_at_any_size_and_after_a_resize() {
        let id = Some(ComponentId::new(126, 1, 10));
        for name in BUILTIN {
            let file = ArmFile::builtin(name).unwrap_or_else(|| panic!("{name}"));
            let presets = presets_of(&file);
            let poses = across_limits(&file, 1500);
            let mut panel = ArmPanel::default();
            // The 3D view of a 1280×800 and an 800×600 window, then 1920×1080, then tall.
            for size in [
                egui::vec2(760.0, 420.0),
                egui::vec2(470.0, 250.0),
                egui::vec2(1150.0, 640.0),
                egui::vec2(300.0, 700.0),
            ] {
                let mut moved = 0;
                for pose in &poses {
                    // As the view does before drawing each frame.
                    moved += usize::from(panel.keep_in_view(
                        size,
                        id,
                        Some(Extent::of_poses(pose, &presets)),
                        &[],
                    ));
                    let out = outside(&panel.camera, pose, size);
                    assert!(out.is_empty(), "{name} at {size:?}: {out:?} outside");
                }
                // What is framed only grows: the camera settles.
                assert!(
                    moved < poses.len() / 10,
                    "{name}: the camera moved {moved} times"
                );
                assert!(
                    panel.camera.above_ground(),
                    "{name}: seen from under the ground"
                );
            }
        }
    }

    #[test]
    fn orbiting_leaves_follow_and_f_follows_again_from_the_operators_direction() {
        let file = ArmFile::demo();
        let presets = presets_of(&file);
        let home =
            forward(&file.spec, &file.home, file.tool_point).unwrap_or_else(|e| panic!("{e}"));
        let e = Some(Extent::of_poses(&home, &presets));
        let id = Some(ComponentId::new(126, 1, 10));
        let mut panel = ArmPanel::default();
        let wide = egui::vec2(1200.0, 400.0);
        assert!(panel.keep_in_view(wide, id, e, &[]));
        assert_eq!(panel.follow(), Follow::Arm);
        assert!(!panel.keep_in_view(wide, id, e, &[]), "nothing changed");
        // The operator turns the camera: a resize keeps their view.
        panel.camera.orbit(0.8, 0.2, false);
        panel.follow = Follow::Free;
        let turned = panel.camera;
        let tall = egui::vec2(300.0, 700.0);
        assert!(!panel.keep_in_view(tall, id, e, &[]));
        assert_eq!(
            Camera {
                aspect: turned.aspect,
                ..panel.camera
            },
            turned
        );
        // F: the arm again, seen from where the operator turned to.
        panel.follow_arm();
        assert!(panel.keep_in_view(tall, id, e, &[]));
        assert_eq!(panel.follow(), Follow::Arm);
        assert!((panel.camera.yaw - turned.yaw).abs() < 1e-9);
        for pose in presets.iter().chain([&home]) {
            assert!(outside(&panel.camera, pose, tall).is_empty());
        }
        // Another arm focused: followed, even from a free camera.
        panel.follow = Follow::Free;
        let other = Some(ComponentId::new(126, 1, 11));
        assert!(panel.keep_in_view(tall, other, e, &[]));
        assert_eq!(panel.follow(), Follow::Arm);
    }

    #[test]
    fn the_whole_vehicle_keeps_every_arm_in_view() {
        let file = ArmFile::demo();
        let mut right = file.clone();
        let mut left = file.clone();
        for (f, y) in [(&mut right, 0.6), (&mut left, -0.6)] {
            if let Some(m) = f.spec.mount.as_mut() {
                m.position[1] = y;
            }
        }
        let mut panel = ArmPanel::default();
        panel.reset();
        let size = egui::vec2(760.0, 420.0);
        let id = Some(ComponentId::new(126, 1, 10));
        let (pr, pl) = (across_limits(&right, 300), across_limits(&left, 300));
        let (rp, lp) = (presets_of(&right), presets_of(&left));
        for (a, b) in pr.iter().zip(&pl) {
            panel.keep_in_view(
                size,
                id,
                Some(Extent::of_poses(a, &rp)),
                &[Extent::of_poses(b, &lp)],
            );
            assert!(outside(&panel.camera, a, size).is_empty());
            assert!(outside(&panel.camera, b, size).is_empty());
        }
    }
}
