//! The one place colours live (panels never write colour literals).

use eframe::egui::{Color32, Visuals};

use crate::model::update::MarkKind;

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
    /// Timeline marks, in [`MarkKind`] order: control, emergency, status, transition, gap, stale.
    pub marks: [Color32; 6],
    /// The part of the timeline already loaded.
    pub loaded: Color32,
    /// The timeline's time cursor.
    pub cursor: Color32,
    /// The veil over the window while files are dragged over it.
    pub drop_veil: Color32,
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
                ],
                loaded: Color32::from_gray(85),
                cursor: Color32::from_gray(240),
                drop_veil: Color32::from_black_alpha(170),
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
                ],
                loaded: Color32::from_gray(175),
                cursor: Color32::from_gray(20),
                drop_veil: Color32::from_white_alpha(200),
            }
        }
    }

    /// The colour of a timeline mark of this kind.
    pub fn mark(&self, kind: MarkKind) -> Color32 {
        self.marks[match kind {
            MarkKind::Control => 0,
            MarkKind::Emergency => 1,
            MarkKind::Status => 2,
            MarkKind::Transition => 3,
            MarkKind::Gap => 4,
            MarkKind::Stale => 5,
        }]
    }

    /// egui's visuals for the mode.
    pub fn visuals(dark: bool) -> Visuals {
        if dark {
            Visuals::dark()
        } else {
            Visuals::light()
        }
    }
}
