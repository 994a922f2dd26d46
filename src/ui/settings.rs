//! The settings kept between runs ([`Settings`], saved by eframe's storage as serde): what
//! panels show, units, the plot layout, the memory budget. A leaf: panels and the app read it.

use serde::{Deserialize, Serialize};

/// Settings kept between runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// Dark theme.
    pub dark: bool,
    /// Angles in degrees (else radians).
    pub degrees: bool,
    /// Lengths in millimetres (else metres).
    pub millimetres: bool,
    /// Show the joint gauges panel.
    pub show_gauges: bool,
    /// Show the force/torque plots.
    pub show_plots: bool,
    /// Show the preset picker.
    pub show_presets: bool,
    /// Draw joint axes in 3D.
    pub show_axes: bool,
    /// Draw joint frames in 3D.
    pub show_frames: bool,
    /// Seconds of history the plots show while following live.
    pub plot_window_s: f64,
    /// Optional force threshold line (N).
    pub force_threshold: Option<f64>,
    /// Authority used when requesting control.
    pub authority: u8,
    /// The kinds of timeline mark shown.
    pub marks: super::widgets::scrub_bar::MarkFilter,
    /// The plots of the plot panel and their signals (older settings files without it get
    /// the default plots).
    pub plots: crate::model::signals::PlotLayout,
    /// Show the event log panel (off by default: at 800×600 the 3D view needs the width).
    pub show_log: bool,
    /// Show the timeline's state lanes, as the operator last set the "lanes" toggle (`None`:
    /// not set, shown in a window at least 900 points tall).
    pub show_lanes: Option<bool>,
    /// The session's memory budget, bytes (`None`: automatic, see [`super::memory`]).
    pub memory_limit: Option<u64>,
    /// Show the arm list's tile.
    pub show_arms: bool,
    /// The work area's tiles: splits, tabs, sizes (older settings files, and a saved tree
    /// that does not load, get the default layout). The layout drawn now: live or replay,
    /// as [`Settings::tiles_are_replay`] says.
    pub tiles: super::tiles::TileLayout,
    /// The other mode's layout (a replay and the live view each keep their own).
    pub other_tiles: super::tiles::TileLayout,
    /// [`Settings::tiles`] is the replay's layout (else the live view's).
    pub tiles_are_replay: bool,
    /// Jogging: the fraction of each joint's maximum speed at full deflection, 0..1.
    pub jog_speed_scale: f64,
    /// Jogging: the longest access timeout (s) a velocity or effort jog accepts without the
    /// operator's acknowledgement (asked once per session).
    pub jog_timeout_limit: f64,
    /// Jogging: refuse arms whose access timeout is past the limit, without asking.
    pub jog_refuse_long_timeout: bool,
    /// Jogging: send efforts as velocities (the compatibility mode for arms that read
    /// `SetJointEffort` so). Off by default: on other arms 50 % would mean 50 rad/s.
    pub jog_effort_as_velocity: bool,
    /// Clearance (issue 45): the warning band, m: gap-closing jogs slow inside it (floored
    /// by `model::clearance::Settings::floored`).
    pub clearance_band: f64,
    /// Clearance: the stop margin, m: gap-closing jogs stop here.
    pub clearance_margin: f64,
    /// Where View → Live view server listens (loopback by default: remote viewers come
    /// through an SSH tunnel, README).
    pub live_view_listen: String,
}

impl Settings {
    /// The clearance band and margin of these settings, floored (what the window's
    /// clearance and every jog request use).
    pub fn clearance(&self) -> crate::model::clearance::Settings {
        crate::model::clearance::Settings {
            band: self.clearance_band,
            margin: self.clearance_margin,
        }
        .floored()
    }

    /// The default layout with every tile shown (View → Layout → Reset layout).
    pub fn reset_layout(&mut self) {
        self.tiles = super::tiles::TileLayout::default();
        for pane in super::tiles::Pane::ALL {
            if let Some(shown) = self.shows(pane) {
                *shown = true;
            }
        }
    }

    /// The layout of a replay (`replay`) or of the live view drawn from now on: the two are
    /// swapped when the mode drawn changes.
    pub fn use_tiles_of(&mut self, replay: bool) -> bool {
        if self.tiles_are_replay == replay {
            return false;
        }
        std::mem::swap(&mut self.tiles, &mut self.other_tiles);
        self.tiles_are_replay = replay;
        true
    }

    /// Whether `pane`'s tile is shown (the View menu's tick; closing the tile clears it);
    /// `None` for the 3D view, which is always shown.
    pub fn shows(&mut self, pane: super::tiles::Pane) -> Option<&mut bool> {
        use super::tiles::Pane;
        match pane {
            Pane::View3d => None,
            Pane::Gauges => Some(&mut self.show_gauges),
            Pane::Plots => Some(&mut self.show_plots),
            Pane::Presets => Some(&mut self.show_presets),
            Pane::EventLog => Some(&mut self.show_log),
            Pane::Arms => Some(&mut self.show_arms),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            dark: true,
            degrees: true,
            millimetres: false,
            show_gauges: true,
            show_plots: true,
            show_presets: true,
            show_axes: false,
            show_frames: false,
            plot_window_s: 30.0,
            force_threshold: None,
            authority: 100,
            marks: super::widgets::scrub_bar::MarkFilter::ALL,
            plots: crate::model::signals::PlotLayout::default(),
            show_log: false,
            show_lanes: None,
            memory_limit: None,
            show_arms: true,
            tiles: super::tiles::TileLayout::default(),
            other_tiles: super::tiles::TileLayout::default(),
            tiles_are_replay: false,
            jog_speed_scale: 0.2,
            jog_timeout_limit: 1.0,
            live_view_listen: crate::record::live::DEFAULT_LISTEN.to_owned(),
            jog_refuse_long_timeout: false,
            jog_effort_as_velocity: false,
            clearance_band: crate::model::clearance::DEFAULT_BAND_M,
            clearance_margin: crate::model::clearance::DEFAULT_MARGIN_M,
        }
    }
}
