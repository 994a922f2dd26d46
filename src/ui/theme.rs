//! The one place colours live (panels never write colour literals): the UI's semantic
//! colours ([`Theme`]) and the 3D view's ([`ScenePalette`], built on the same theme).

#![allow(
    clippy::disallowed_methods,
    reason = "the theme is where colours are made; everything else takes them from here"
)]

use eframe::egui::{Color32, Visuals};

use crate::model::kinematics::DEFAULT_CYLINDER_RADIUS;
use crate::model::limits::limit_tint;
use crate::model::update::MarkKind;
use crate::record::foxglove::SceneLook;

/// Semantic colours for the current theme.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Normal accent (values, live markers).
    pub accent: Color32,
    /// Good / confirmed.
    pub ok: Color32,
    /// Attention: near a limit, stale.
    pub warn: Color32,
    /// Danger: at a limit, emergency, lost.
    pub danger: Color32,
    /// Secondary text and tracks.
    pub muted: Color32,
    /// Gauge track background.
    pub track: Color32,
    /// The six force/torque channels and the magnitude.
    pub series: [Color32; 7],
    /// The SIMULATED badge.
    pub simulated: Color32,
    /// The REPLAY badge.
    pub replay: Color32,
    /// The recording indicator.
    pub recording: Color32,
    /// Timeline marks, in [`MarkKind`] order: control, emergency, status, transition, gap,
    /// stale, command, network, recording, note (threshold: [`Theme::threshold`]).
    pub marks: [Color32; 10],
    /// The part of the timeline already loaded.
    pub loaded: Color32,
    /// The timeline's time cursor.
    pub cursor: Color32,
    /// The veil over the window while files are dragged over it.
    pub drop_veil: Color32,
    /// Text on a `danger` fill (the E-STOP button, the emergency banner).
    pub on_danger: Color32,
    /// The veil over the 3D view and the gauges when what they show is the last known.
    pub stale_veil: Color32,
    /// The fill of the area that shows the past (scrubbed back or a replay).
    pub past_fill: Color32,
    /// The force threshold: its plot lines and timeline marks (a hue no series uses).
    pub threshold: Color32,
}

impl Theme {
    /// The theme for dark or light mode.
    pub fn new(dark: bool) -> Self {
        if dark {
            Self {
                accent: Color32::from_rgb(90, 170, 255),
                ok: Color32::from_rgb(80, 200, 120),
                warn: Color32::from_rgb(240, 170, 40),
                danger: Color32::from_rgb(235, 70, 60),
                muted: Color32::from_gray(150),
                track: Color32::from_gray(60),
                series: [
                    Color32::from_rgb(230, 90, 80),
                    Color32::from_rgb(90, 200, 110),
                    Color32::from_rgb(90, 150, 240),
                    Color32::from_rgb(240, 160, 80),
                    Color32::from_rgb(170, 220, 90),
                    Color32::from_rgb(170, 120, 240),
                    Color32::from_gray(220),
                ],
                simulated: Color32::from_rgb(200, 120, 255),
                replay: Color32::from_rgb(80, 200, 220),
                recording: Color32::from_rgb(235, 50, 50),
                marks: [
                    Color32::from_rgb(90, 170, 255),
                    Color32::from_rgb(235, 70, 60),
                    Color32::from_rgb(200, 200, 90),
                    Color32::from_rgb(80, 200, 120),
                    Color32::from_rgb(240, 170, 40),
                    Color32::from_rgb(190, 140, 90),
                    Color32::from_rgb(150, 190, 230),
                    Color32::from_rgb(170, 170, 170),
                    Color32::from_rgb(235, 50, 50),
                    Color32::from_rgb(250, 230, 120),
                ],
                loaded: Color32::from_gray(85),
                cursor: Color32::from_gray(240),
                drop_veil: Color32::from_black_alpha(170),
                on_danger: Color32::WHITE,
                stale_veil: Color32::from_black_alpha(120),
                past_fill: Color32::from_rgb(20, 60, 70),
                threshold: Color32::from_rgb(255, 80, 220),
            }
        } else {
            Self {
                accent: Color32::from_rgb(20, 100, 200),
                ok: Color32::from_rgb(20, 140, 60),
                warn: Color32::from_rgb(190, 120, 0),
                danger: Color32::from_rgb(200, 30, 30),
                muted: Color32::from_gray(100),
                track: Color32::from_gray(210),
                series: [
                    Color32::from_rgb(200, 40, 30),
                    Color32::from_rgb(30, 150, 50),
                    Color32::from_rgb(30, 90, 210),
                    Color32::from_rgb(210, 120, 20),
                    Color32::from_rgb(110, 160, 20),
                    Color32::from_rgb(120, 60, 200),
                    Color32::from_gray(40),
                ],
                simulated: Color32::from_rgb(140, 50, 200),
                replay: Color32::from_rgb(0, 120, 140),
                recording: Color32::from_rgb(210, 20, 20),
                marks: [
                    Color32::from_rgb(20, 100, 200),
                    Color32::from_rgb(200, 30, 30),
                    Color32::from_rgb(140, 130, 0),
                    Color32::from_rgb(20, 140, 60),
                    Color32::from_rgb(190, 120, 0),
                    Color32::from_rgb(130, 90, 50),
                    Color32::from_rgb(60, 110, 160),
                    Color32::from_gray(110),
                    Color32::from_rgb(210, 20, 20),
                    Color32::from_rgb(150, 110, 0),
                ],
                loaded: Color32::from_gray(175),
                cursor: Color32::from_gray(20),
                drop_veil: Color32::from_white_alpha(200),
                on_danger: Color32::WHITE,
                stale_veil: Color32::from_white_alpha(140),
                past_fill: Color32::from_rgb(210, 238, 242),
                threshold: Color32::from_rgb(200, 0, 170),
            }
        }
    }

    /// The colour of a timeline mark of this kind.
    pub fn mark(&self, kind: MarkKind) -> Color32 {
        if matches!(kind, MarkKind::Threshold | MarkKind::Clearance) {
            return self.threshold;
        }
        self.marks[match kind {
            MarkKind::Control => 0,
            MarkKind::Emergency => 1,
            MarkKind::Status => 2,
            MarkKind::Transition => 3,
            MarkKind::Gap => 4,
            MarkKind::Stale | MarkKind::Threshold | MarkKind::Clearance => 5,
            MarkKind::Command => 6,
            MarkKind::Network => 7,
            MarkKind::Recording => 8,
            MarkKind::Note => 9,
        }]
    }

    /// egui's visuals for the mode.
    pub fn visuals(dark: bool) -> Visuals {
        let mut visuals = Self::base_visuals(dark);
        // Panels draw no background of their own: the window is cleared to it
        // (`Theme::background`, `App::clear_color`). A fill per panel made the software
        // renderer shade every pixel of the window once more each frame, through egui's
        // textured shader, where a clear is a memset (issue 21).
        visuals.panel_fill = Color32::TRANSPARENT;
        visuals
    }

    /// The window's background, what the frame is cleared to (the panels draw none).
    pub fn background(dark: bool) -> Color32 {
        Self::base_visuals(dark).panel_fill
    }

    fn base_visuals(dark: bool) -> Visuals {
        if dark {
            Visuals::dark()
        } else {
            Visuals::light()
        }
    }
}

/// Colours of the 3D view for one theme (sRGB components 0..1, alpha where given, as the
/// shaders take them). The near/at-limit colours are the theme's `warn` and `danger`; the
/// rest are the scene's own (lit surfaces and grid lines need other shades than flat UI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenePalette {
    /// Behind everything.
    pub background: [f32; 3],
    /// Minor grid lines.
    pub grid_minor: [f32; 4],
    /// Major grid lines (every 10 minor).
    pub grid_major: [f32; 4],
    /// x axes (grid line and triads).
    pub x_axis: [f32; 3],
    /// y axes.
    pub y_axis: [f32; 3],
    /// z axes.
    pub z_axis: [f32; 3],
    /// Links between joint frames.
    pub link: [f32; 3],
    /// Joint spheres.
    pub joint: [f32; 3],
    /// Joint axes (`show_axes`).
    pub joint_axis: [f32; 3],
    /// Bounding cylinders with a radius from the specification.
    pub cylinder: [f32; 3],
    /// Bounding cylinders drawn with the default radius.
    pub cylinder_default: [f32; 3],
    /// The ghost (previewed preset) arm.
    pub ghost: [f32; 3],
    /// The live tool point marker (flat, drawn over everything).
    pub tool_marker: [f32; 3],
    /// Ring around the tool point marker.
    pub marker_outline: [f32; 3],
    /// A joint getting near its limit.
    pub near_limit: [f32; 3],
    /// A joint at its limit.
    pub at_limit: [f32; 3],
    /// An arm beside the focused one whose link is lost (its last known pose).
    pub lost: [f32; 3],
    /// The vehicle file's obstacles (translucent, neutral).
    pub obstacle: [f32; 3],
    /// The stripes on what of an arm is below the ground.
    pub below_ground: [f32; 3],
    /// The line between the closest points of the nearest pair while it is clear.
    pub gap_line: [f32; 3],
}

impl ScenePalette {
    /// The palette for the dark or light theme.
    pub fn new(dark: bool) -> Self {
        // A joint near or at its limit has the colours the gauges give it.
        let theme = Theme::new(dark);
        let (near_limit, at_limit) = (srgb(theme.warn), srgb(theme.danger));
        let common = Self {
            background: [0.0; 3],
            grid_minor: [0.0; 4],
            grid_major: [0.0; 4],
            x_axis: [0.9, 0.25, 0.2],
            y_axis: [0.3, 0.78, 0.3],
            z_axis: [0.25, 0.45, 0.95],
            link: [0.0; 3],
            joint: [0.0; 3],
            joint_axis: [0.0; 3],
            cylinder: [0.0; 3],
            cylinder_default: [0.0; 3],
            ghost: [0.0; 3],
            tool_marker: [1.0, 0.2, 0.85],
            marker_outline: [0.0; 3],
            near_limit,
            at_limit,
            lost: [0.0; 3],
            obstacle: [0.0; 3],
            below_ground: at_limit,
            gap_line: [0.0; 3],
        };
        if dark {
            Self {
                background: [0.105, 0.11, 0.12],
                grid_minor: [0.55, 0.58, 0.62, 0.22],
                grid_major: [0.6, 0.63, 0.68, 0.5],
                link: [0.86, 0.87, 0.9],
                joint: [0.58, 0.64, 0.74],
                joint_axis: [0.55, 0.8, 1.0],
                cylinder: [0.3, 0.6, 1.0],
                cylinder_default: [0.8, 0.55, 1.0],
                ghost: [0.3, 0.95, 0.7],
                marker_outline: [0.02, 0.02, 0.03],
                lost: [0.36, 0.37, 0.39],
                obstacle: [0.62, 0.6, 0.56],
                gap_line: [0.85, 0.9, 1.0],
                ..common
            }
        } else {
            Self {
                background: [0.94, 0.945, 0.95],
                grid_minor: [0.35, 0.37, 0.4, 0.2],
                grid_major: [0.3, 0.32, 0.36, 0.45],
                link: [0.28, 0.3, 0.34],
                joint: [0.45, 0.5, 0.58],
                joint_axis: [0.1, 0.35, 0.75],
                cylinder: [0.1, 0.38, 0.9],
                cylinder_default: [0.5, 0.25, 0.75],
                ghost: [0.05, 0.62, 0.42],
                marker_outline: [1.0, 1.0, 1.0],
                lost: [0.66, 0.67, 0.69],
                obstacle: [0.4, 0.39, 0.36],
                gap_line: [0.15, 0.2, 0.3],
                ..common
            }
        }
    }

    /// The tint of a bounding cylinder whose joint is `warning` (0..1) close to a limit:
    /// `base` when far, turning amber as soon as the joint is near and red at the limit.
    pub fn warning_tint(&self, base: [f32; 3], warning: f32) -> [f32; 3] {
        limit_tint(base, self.near_limit, self.at_limit, warning)
    }

    /// `rgb` dimmed toward the background: the arms of the vehicle beside the focused one.
    pub fn dimmed(&self, rgb: [f32; 3]) -> [f32; 3] {
        const KEEP: f32 = 0.55;
        [0, 1, 2].map(|i| self.background[i] + (rgb[i] - self.background[i]) * KEEP)
    }

    /// How recordings draw the arm in Foxglove's 3D panel: this palette's colours, so
    /// Foxglove shows what the OCU shows.
    pub fn foxglove_look(&self) -> SceneLook {
        let opaque = |[r, g, b]: [f32; 3], a: f32| [r, g, b, a];
        SceneLook {
            default_radius: DEFAULT_CYLINDER_RADIUS,
            cylinder: opaque(self.cylinder, 0.55),
            cylinder_default: opaque(self.cylinder_default, 0.35),
            link: opaque(self.link, 1.0),
            tool_point: opaque(self.tool_marker, 1.0),
            link_width_px: 3.0,
            tool_point_diameter: 0.03,
            near_limit: self.near_limit,
            at_limit: self.at_limit,
        }
    }
}

/// A warning level within 0..1 (NaN counts as 0).
pub(crate) fn unit_warning(warning: f32) -> f32 {
    if warning.is_nan() {
        0.0
    } else {
        warning.clamp(0.0, 1.0)
    }
}

/// A colour's sRGB components as 0..1 floats.
fn srgb(c: Color32) -> [f32; 3] {
    [c.r(), c.g(), c.b()].map(|v| f32::from(v) / 255.0)
}
