//! A plot's signal picker: a menu listing every signal of the arm shown, series by series
//! (end-effector force/torque, joint positions, velocities, efforts, torques/forces), with a
//! checkbox per signal and one per whole series ("every joint", which follows the arm's
//! joint count). It stays open while signals are ticked. Signals of different units may share
//! a plot: it is then drawn as one lane per unit, each with its own Y axis labelled in its
//! unit ([`super::plots::lanes`]).

use eframe::egui::{self, PopupCloseBehavior, RichText};
use egui::containers::menu::{MenuButton, MenuConfig};

use crate::model::session::Session;
use crate::model::signals::{PlotSpec, Series, SignalRef, Units, channel_count, describe};
use crate::ui::theme::Theme;

/// The picker's button and menu for `spec`; whether the choice changed.
pub fn picker(
    ui: &mut egui::Ui,
    spec: &mut PlotSpec,
    session: &Session,
    units: Units,
    theme: &Theme,
) -> bool {
    let mut changed = false;
    let config = MenuConfig::new().close_behavior(PopupCloseBehavior::CloseOnClickOutside);
    let (response, _) = MenuButton::new("Signals…").config(config).ui(ui, |ui| {
        ui.set_max_width(440.0);
        egui::ScrollArea::vertical()
            .max_height(ui.ctx().content_rect().height() * 0.6)
            .show(ui, |ui| {
                for series in Series::ALL {
                    changed |= series_rows(ui, spec, session, series, units, theme);
                }
            });
    });
    response.on_hover_text("Choose the signals of this plot");
    changed
}

/// One series in the picker: its title with a whole-series checkbox (joint series), then a
/// checkbox per signal.
fn series_rows(
    ui: &mut egui::Ui,
    spec: &mut PlotSpec,
    session: &Session,
    series: Series,
    units: Units,
    theme: &Theme,
) -> bool {
    let mut changed = false;
    let count = channel_count(session, series);
    ui.separator();
    if series.per_joint() {
        let mut all = spec.series.contains(&series);
        if ui
            .checkbox(
                &mut all,
                RichText::new(format!("{} (every joint)", series.title())).strong(),
            )
            .on_hover_text("Every joint of the arm shown, however many it has")
            .changed()
        {
            spec.set_series(series, all);
            changed = true;
        }
    } else {
        ui.label(RichText::new(series.title()).strong());
    }
    if count == 0 {
        ui.label(
            RichText::new("no joints known yet")
                .small()
                .color(theme.muted),
        );
        return changed;
    }
    ui.horizontal_wrapped(|ui| {
        for c in 0..count {
            let signal = SignalRef::new(series, c);
            let Some(info) = describe(session, signal) else {
                continue;
            };
            let mut on = spec.contains(signal);
            if ui
                .checkbox(&mut on, &info.name)
                .on_hover_text(format!("{} in {}", info.name, info.unit(units)))
                .changed()
            {
                spec.toggle(signal, count);
                changed = true;
            }
        }
    });
    changed
}
