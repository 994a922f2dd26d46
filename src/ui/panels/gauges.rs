//! The joint gauges panel.

use eframe::egui;

use crate::model::state::{ArmState, Stamped};
use crate::model::update::Signal;
use crate::ui::commands::UiCommand;
use crate::ui::settings::Settings;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::widgets::hold_button::hold_button;
use crate::ui::widgets::joint_gauge::{
    GAUGE_HEIGHT, GaugeData, ROW_HEIGHT, joint_gauge, joint_row,
};

/// The jog buttons beside the gauges (live only): − and + per joint, held to jog.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GaugeJog {
    /// The joint the keys jog (marked), if joint jog is selected.
    pub selected: Option<usize>,
    /// The joint whose jog streams now, drawn pressed.
    pub moving: Option<usize>,
    /// Out: the button held this frame (joint, direction ±1).
    pub held: Option<(usize, f64)>,
}

/// Gauge data for every joint of the selected arm in `state`, in the units of `settings`.
pub fn gauge_data(state: &ArmState, settings: &Settings) -> Vec<GaugeData> {
    let Some(spec) = &state.spec else {
        return Vec::new();
    };
    let at =
        |x: &Option<Stamped<Vec<f64>>>, i: usize| x.as_ref().and_then(|v| v.value.get(i).copied());
    // Greyed when the positions are not the arm's current ones: stale, or the link lost.
    let stale = state
        .stale
        .get(&Signal::JointPositions)
        .copied()
        .unwrap_or(false)
        || state.freshness().is_lost();
    let rests = state.limit_rests();
    spec.joints
        .iter()
        .enumerate()
        .map(|(i, j)| GaugeData {
            label: format!("{} {}", i + 1, j.name.as_deref().unwrap_or("")),
            prismatic: j.is_prismatic(),
            value: at(&state.positions, i),
            min: j.min,
            max: j.max,
            speed: at(&state.velocities, i),
            max_speed: j.max_speed,
            effort_percent: at(&state.efforts, i),
            degrees: settings.degrees,
            millimetres: settings.millimetres,
            stale,
            rest: rests.get(i).cloned().flatten().map(|r| r.words()),
        })
        .collect()
}

/// The panel's heading with its unit toggles.
fn heading(ui: &mut egui::Ui, shown: Shown, settings: &mut Settings) {
    ui.horizontal(|ui| {
        ui.heading("Joints");
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            // Each button reads the unit shown now (a toggle reading "deg" while radians
            // were shown said the opposite of the gauges); a click switches it.
            let (mm, deg) = (settings.millimetres, settings.degrees);
            let lengths = if mm {
                "Prismatic joints in millimetres: click for metres"
            } else {
                "Prismatic joints in metres: click for millimetres"
            };
            if ui
                .button(if mm { "mm" } else { "m" })
                .accessible_name(if mm {
                    "Lengths in millimetres"
                } else {
                    "Lengths in metres"
                })
                .on_hover_text(lengths)
                .clicked()
            {
                settings.millimetres = !mm;
            }
            let units = UiCommand::ToggleUnits;
            let angles = if deg {
                "Revolute joints in degrees: click for radians"
            } else {
                "Revolute joints in radians: click for degrees"
            };
            if ui
                .button(if deg { "deg" } else { "rad" })
                .accessible_name(if deg {
                    "Angles in degrees"
                } else {
                    "Angles in radians"
                })
                .on_hover_text(format!("{angles} — {}", units.keys_text(shown)))
                .clicked()
            {
                settings.degrees = !deg;
            }
        });
    });
}

/// Draws the panel: `data` from [`gauge_data`]; the unit toggles change `settings`.
/// `last_known`, when given, says the values are the last known (`last known at 12:03:04
/// UTC`): it is written over the gauges, which are greyed. `past`, when the past is drawn,
/// says when (`at −12.4 s (12:03:04 UTC)`).
///
/// Where the full gauges do not all fit, each joint is one compact row ([`joint_row`]);
/// where even those do not, they scroll and the line under them says how many more there
/// are below (`2 more joints below: scroll`).
#[allow(
    clippy::too_many_arguments,
    reason = "each is one thing the panel shows or changes; no panel takes the app"
)]
pub fn show(
    ui: &mut egui::Ui,
    data: &[GaugeData],
    shown: Shown,
    last_known: Option<&str>,
    past: Option<&str>,
    settings: &mut Settings,
    theme: &Theme,
    mut jog: Option<&mut GaugeJog>,
) {
    heading(ui, shown, settings);
    if data.is_empty() {
        ui.label(if shown.is_replay() {
            "No specification recorded up to this time."
        } else {
            "Waiting for the manipulator's specification…"
        });
        return;
    }
    if let Some(text) = past {
        ui.label(egui::RichText::new(text).strong().color(theme.replay))
            .on_hover_text("The joints as they were at this time, not now");
    }
    if let Some(text) = last_known {
        ui.label(egui::RichText::new(text).strong().color(theme.warn))
            .on_hover_text("The arm's reports stopped: the gauges show the last values received");
    }
    // The last line stays under the scrolled joints: the legend, or how many are below.
    let line_h = ui.text_style_height(&egui::TextStyle::Small) + ui.spacing().item_spacing.y;
    let mut bottoms = Vec::with_capacity(data.len());
    let room = (ui.available_height() - line_h).max(0.0);
    let compact = fits(data.len(), GAUGE_HEIGHT + 6.0, ui) > room;
    let room = whole_rows(ui, data.len(), room, compact);
    let out = egui::ScrollArea::vertical()
        .max_height(room)
        .show(ui, |ui| {
            let row_h = if compact { ROW_HEIGHT } else { GAUGE_HEIGHT };
            for (i, d) in data.iter().enumerate() {
                // A row scrolled out of sight takes its place and nothing else: no button
                // under another tile's (egui clips its painting, not its AccessKit node),
                // as `ScrollArea::show_rows` does.
                let probe = egui::Rect::from_min_size(
                    ui.cursor().min,
                    egui::vec2(ui.available_width(), row_h),
                );
                if !ui.is_rect_visible(probe) {
                    let (r, _) = ui.allocate_exact_size(probe.size(), egui::Sense::hover());
                    if !compact {
                        ui.add_space(6.0);
                    }
                    bottoms.push(r.bottom());
                    continue;
                }
                let r = ui
                    .horizontal(|ui| {
                        if let Some(j) = jog.as_deref_mut() {
                            jog_buttons(ui, (i, &d.label), compact, j);
                        }
                        ui.vertical(|ui| {
                            if compact {
                                joint_row(ui, d, theme)
                            } else {
                                joint_gauge(ui, d, theme)
                            }
                        })
                        .inner
                    })
                    .inner;
                if !compact {
                    ui.add_space(6.0);
                }
                bottoms.push(r.rect.bottom());
            }
        });
    let visible_bottom = out.inner_rect.bottom() + 0.5;
    let below = bottoms.iter().filter(|b| **b > visible_bottom).count();
    if below > 0 {
        let joints = if below == 1 { "joint" } else { "joints" };
        ui.label(
            egui::RichText::new(format!("{below} more {joints} below: scroll"))
                .small()
                .strong()
                .color(theme.accent),
        )
        .on_hover_text("Scroll the joints (or make the window taller) to see them");
    } else if compact {
        ui.label(
            egui::RichText::new("bars: value within the limits; hover for speed, effort")
                .small()
                .color(theme.muted),
        );
    } else {
        ui.label(
            egui::RichText::new("bars: speed / max speed, effort / max effort")
                .small()
                .color(theme.muted),
        );
    }
}

/// The − and + buttons of joint `i` (labelled `label`: `2 shoulder`), held to jog it (the
/// held button is the enable). A screen reader reads `Jog joint 2 shoulder +`.
fn jog_buttons(ui: &mut egui::Ui, (i, label): (usize, &str), compact: bool, jog: &mut GaugeJog) {
    // Compact rows are for narrow or short panels: small buttons, so the row keeps its
    // width (its value is drawn at its right edge).
    let size = if compact {
        egui::vec2(16.0, 18.0)
    } else {
        egui::vec2(20.0, 26.0)
    };
    ui.spacing_mut().item_spacing.x = if compact { 1.0 } else { 2.0 };
    let moving = jog.moving == Some(i);
    let name = |sign: &str| format!("Jog joint {} {sign}", label.trim());
    let minus = hold_button(ui, "−", &name("−"), size, moving);
    let plus = hold_button(ui, "+", &name("+"), size, moving);
    let what = format!(
        "Hold to jog joint {} {{}} (let go: it stops). Needs control, READY and the live arm{}",
        i + 1,
        if jog.selected == Some(i) {
            "; the keys − / = jog it too"
        } else {
            ""
        }
    );
    minus.response.on_hover_text(what.replace("{}", "negative"));
    plus.response.on_hover_text(what.replace("{}", "positive"));
    if minus.held {
        jog.held = Some((i, -1.0));
    } else if plus.held {
        jog.held = Some((i, 1.0));
    }
}

/// The scrolled view's height in `room` for `n` joints: where not every row fits, whole
/// rows, none cut at the bottom (its bar and limits half there), so the cue's count is what
/// is not seen.
fn whole_rows(ui: &egui::Ui, n: usize, room: f32, compact: bool) -> f32 {
    let spacing = ui.spacing().item_spacing.y;
    let step = if compact {
        ROW_HEIGHT + spacing
    } else {
        GAUGE_HEIGHT + 6.0 + 2.0 * spacing
    };
    if fits(n, step - spacing, ui) > room {
        ((room / step).floor().max(1.0) * step - spacing).max(0.0)
    } else {
        room
    }
}

/// The height `n` joints of `each` points take in `ui`, with the spacing between them.
fn fits(n: usize, each: f32, ui: &egui::Ui) -> f32 {
    n as f32 * (each + ui.spacing().item_spacing.y)
}
