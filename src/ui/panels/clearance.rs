//! The clearance line beside the jog strip (issue 45): the focused arm's nearest pair not
//! allowed to touch and its gap in mm, coloured by zone; and, never silent, every pair
//! allowed to touch with its depth and why, plus the band and margin settings, in a
//! section that says how many pairs there are.

use eframe::egui::{self, RichText};

use crate::model::clearance::{BAND_FLOOR_M, MARGIN_FLOOR_M, Zone};
use crate::ui::settings::Settings;
use crate::ui::theme::Theme;

/// A pair and its gap, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct PairLine {
    /// `wrist_roll (joint 5) <-> turret (joint 1)`.
    pub words: String,
    /// The gap the band and margin apply to (the effective gap of an allowed pair), m.
    pub gap: f64,
    /// Where it stands.
    pub zone: Zone,
}

/// A pair allowed to touch, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct AllowedLine {
    /// The pair.
    pub words: String,
    /// How deep it may overlap, m (`None`: never checked).
    pub depth: Option<f64>,
    /// Why it may.
    pub why: String,
}

/// What the clearance line shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClearanceView {
    /// The focused arm's nearest pair not allowed to touch.
    pub nearest: Option<PairLine>,
    /// Its allowed pair deepest past its allowed depth, when one is.
    pub nearest_allowed: Option<PairLine>,
    /// Every pair allowed to touch.
    pub allowed: Vec<AllowedLine>,
    /// The vehicle file in force, in words ("Demo UGV (assets/vehicles/demo.toml)").
    pub vehicle: String,
    /// What the network side's jog guard said last ("stopped 16 mm from contact: …"), for
    /// the live arm's jog (`JogStatus::clearance`).
    pub guard: Option<String>,
}

/// The colour of a zone's words.
pub fn zone_colour(zone: Zone, theme: &Theme, normal: egui::Color32) -> egui::Color32 {
    match zone {
        Zone::Contact => theme.danger,
        Zone::Margin | Zone::Band => theme.warn,
        Zone::Clear => normal,
    }
}

/// A pair's line: "nearest: A and B 43 mm" with the zone's words when not clear.
pub fn pair_text(prefix: &str, line: &PairLine) -> String {
    let mm = line.gap * 1000.0;
    match line.zone {
        Zone::Clear => format!("{prefix}{} {mm:.0} mm", line.words),
        z => format!("{prefix}{} {mm:.0} mm — {}", line.words, z.name()),
    }
}

/// Below this height left in the tile, points, the clearance takes one line (the nearest
/// pair cut to the width, the allowed pairs in a popup): the gauges under it keep their room
/// in a small window.
pub const COMPACT_BELOW: f32 = 420.0;

/// What the nearest-pair line says on hover.
const NEAREST_HOVER: &str = "The focused arm's pair nearest contact among those not allowed \
     to touch (its bounding cylinders, the other arms, the vehicle file's obstacles and the \
     ground). Amber inside the warning band or the stop margin, red in contact.";

/// Draws the line and the section of allowed pairs; the band and margin edit `settings`.
pub fn show(ui: &mut egui::Ui, view: &ClearanceView, settings: &mut Settings, theme: &Theme) {
    let normal = ui.visuals().text_color();
    let nearest = match &view.nearest {
        Some(line) => {
            RichText::new(pair_text("nearest: ", line)).color(zone_colour(line.zone, theme, normal))
        }
        None => RichText::new("nearest: no pair measured yet").color(theme.muted),
    };
    let title = match view.allowed.len() {
        1 => "1 pair allowed to touch".to_owned(),
        n => format!("{n} pairs allowed to touch"),
    };
    if ui.available_height() < COMPACT_BELOW {
        ui.horizontal(|ui| {
            ui.menu_button(format!("{} allowed", view.allowed.len()), |ui| {
                ui.label(RichText::new(&title).strong());
                allowed_list(ui, view, settings, theme);
            })
            .response
            .on_hover_text(&title);
            ui.add(egui::Label::new(nearest).truncate())
                .on_hover_text(NEAREST_HOVER);
        });
    } else {
        ui.label(nearest).on_hover_text(NEAREST_HOVER);
    }
    if let Some(line) = &view.nearest_allowed {
        let text = RichText::new(pair_text("allowed pair past its depth: ", line))
            .color(zone_colour(line.zone, theme, normal));
        ui.add(egui::Label::new(text).truncate());
    }
    if let Some(words) = &view.guard {
        ui.add(egui::Label::new(RichText::new(words).color(theme.warn)).truncate());
    } else if view.nearest_allowed.is_none() {
        // The guard's line is kept while it says nothing, so what is under it (the joint
        // gauges and their jog buttons) does not move when a jog starts or ends.
        ui.add_space(ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y);
    }
    if ui.available_height() >= COMPACT_BELOW {
        egui::CollapsingHeader::new(title)
            .id_salt("clearance allowed pairs")
            .show(ui, |ui| allowed_list(ui, view, settings, theme));
    }
}

/// The band and margin, the vehicle file, and every allowed pair with its depth and why.
fn allowed_list(ui: &mut egui::Ui, view: &ClearanceView, settings: &mut Settings, theme: &Theme) {
    settings_row(ui, settings);
    ui.label(
        RichText::new(format!("vehicle: {}", view.vehicle))
            .small()
            .color(theme.muted),
    );
    // One wrapped line each: the tile beside the 3D view is narrow.
    for a in &view.allowed {
        let depth = a.depth.map_or_else(
            || "never checked".to_owned(),
            |d| format!("{:.0} mm deep", d * 1000.0),
        );
        ui.label(RichText::new(format!("{}: {depth} — {}", a.words, a.why)).small());
    }
}

/// The warning band and the stop margin, mm, with their floors.
fn settings_row(ui: &mut egui::Ui, settings: &mut Settings) {
    ui.horizontal_wrapped(|ui| {
        let mut margin = settings.clearance_margin * 1000.0;
        ui.label("stop margin");
        let r = ui
            .add(
                egui::DragValue::new(&mut margin)
                    .range(MARGIN_FLOOR_M * 1000.0..=500.0)
                    .speed(0.5)
                    .suffix(" mm"),
            )
            .on_hover_text("Gap-closing jogs stop this far from contact (not-allowed pairs)");
        if r.changed() {
            settings.clearance_margin = margin / 1000.0;
        }
        let mut band = settings.clearance_band * 1000.0;
        let least = (settings.clearance_margin + BAND_FLOOR_M) * 1000.0;
        ui.label("warning band");
        let r = ui
            .add(
                egui::DragValue::new(&mut band)
                    .range(least..=1000.0)
                    .speed(0.5)
                    .suffix(" mm"),
            )
            .on_hover_text("Gap-closing jogs slow inside this gap; the pair is shown amber");
        if r.changed() {
            settings.clearance_band = band / 1000.0;
        }
    });
}
