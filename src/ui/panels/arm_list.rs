//! The arm list: every manipulator of the session with its link, management state and who
//! holds control ([`ArmRow`]), grouped by subsystem (a subsystem is a vehicle). The live
//! area's is the selector of the focused arm (picking one sends `Command::Select`: commands
//! then go to it, and the view follows); the past area's lists the arms at the drawn time
//! (picking one brings it into view: in a replay the view's own focus).

use eframe::egui::{self, RichText};

use crate::model::command::Command;
use crate::model::update::ComponentId;
use crate::ui::action::Action;
use crate::ui::arms::ArmRow;
use crate::ui::theme::Theme;

/// Width of the live selector's closed box, points.
pub const SELECTOR_W: f32 = 150.0;

/// The closed selector's text: the focused arm and how many arms there are.
pub fn selector_text(rows: &[ArmRow]) -> String {
    let Some((index, focused)) = rows.iter().enumerate().find(|(_, r)| r.focused) else {
        return if rows.is_empty() {
            "no manipulator found".to_string()
        } else {
            format!("none focused ({} arms)", rows.len())
        };
    };
    let name = if focused.name.is_empty() {
        String::new()
    } else {
        format!(" {}", focused.name)
    };
    // The state first: a long name truncates, the state does not.
    let count = if rows.len() > 1 {
        format!(" ({} of {})", index + 1, rows.len())
    } else {
        String::new()
    };
    format!("{} [{}]{count}{name}", focused.id, focused.link)
}

/// The rows, a subsystem heading before each subsystem's arms (when there are several).
fn grouped(
    ui: &mut egui::Ui,
    rows: &[ArmRow],
    theme: &Theme,
    mut row: impl FnMut(&mut egui::Ui, &ArmRow),
) {
    let several = rows
        .first()
        .is_some_and(|f| rows.iter().any(|r| r.id.subsystem != f.id.subsystem));
    let mut last = None;
    for r in rows {
        if several && last != Some(r.id.subsystem) {
            ui.label(
                RichText::new(format!("subsystem {}", r.id.subsystem))
                    .small()
                    .strong()
                    .color(theme.muted),
            );
            last = Some(r.id.subsystem);
        }
        row(ui, r);
    }
}

/// The colour of a row: the lost in danger, the focused in the accent.
fn colour(r: &ArmRow, theme: &Theme, text: egui::Color32) -> egui::Color32 {
    if r.lost {
        theme.danger
    } else if r.focused {
        theme.accent
    } else {
        text
    }
}

/// The live selector: a combo box whose entries are the live arms' rows; picking another
/// sends `Command::Select` (the network focuses it; the view follows when it says so).
pub fn selector(
    ui: &mut egui::Ui,
    rows: &[ArmRow],
    disabled_why: &str,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let label = selector_text(rows);
    egui::ComboBox::new("manipulator", "arm")
        .width(SELECTOR_W)
        .truncate()
        .selected_text(&label)
        .show_ui(ui, |ui| {
            ui.set_min_width(360.0);
            grouped(ui, rows, theme, |ui, r| {
                let text =
                    RichText::new(r.text()).color(colour(r, theme, ui.visuals().text_color()));
                if ui
                    .selectable_label(r.focused, text)
                    .on_hover_text(r.where_words())
                    .clicked()
                    && !r.focused
                {
                    actions.push(Action::Send(Command::Select(r.id)));
                }
            });
        })
        .response
        .on_hover_text(format!(
            "The focused arm, {label}{}: the buttons beside it act on it. Every manipulator \
             found (subsystem.node.component), by subsystem, each with its link, management \
             state and who holds control (hover one for its address); pick one to focus it",
            rows.iter()
                .find(|r| r.focused)
                .map(|r| format!(" ({})", r.where_words()))
                .unwrap_or_default()
        ))
        .on_disabled_hover_text(disabled_why);
}

/// The past area's list: each arm's row at the drawn time; clicking one brings it into view.
pub fn strip(ui: &mut egui::Ui, rows: &[ArmRow], theme: &Theme, actions: &mut Vec<Action>) {
    ui.label(RichText::new("arms then:").color(theme.muted))
        .on_hover_text("Every arm at the drawn time; click one to show it");
    grouped(ui, rows, theme, |ui, r| {
        let text = RichText::new(r.text()).color(colour(r, theme, ui.visuals().text_color()));
        if ui
            .selectable_label(r.focused, text)
            .on_hover_text(format!(
                "Show {} in the gauges, plots and 3D view ({})",
                r.id,
                r.where_words()
            ))
            .clicked()
            && !r.focused
        {
            actions.push(Action::Focus(r.id));
        }
    });
}

/// The focused arm's ID in a button's label: `E-STOP 126.1.10`, `Resume 126.1.10…`.
pub fn naming(text: &str, arm: Option<ComponentId>) -> String {
    match arm {
        Some(id) => match text.strip_suffix('…') {
            Some(stem) => format!("{stem} {id}…"),
            None => format!("{text} {id}"),
        },
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_name_the_arm_before_their_ellipsis() {
        let id = Some(ComponentId::new(126, 1, 10));
        assert_eq!(naming("E-STOP", id), "E-STOP 126.1.10");
        assert_eq!(naming("Resume…", id), "Resume 126.1.10…");
        assert_eq!(naming("Release", None), "Release");
    }

    #[test]
    fn the_selector_counts_the_focused_arm_in_its_place() {
        let row = |sensor, focused| ArmRow {
            id: ComponentId::new(126, 1, sensor),
            name: String::new(),
            followed: true,
            link: "live".to_string(),
            status: "READY".to_string(),
            control: String::new(),
            lost: false,
            focused,
            address: "127.0.0.1:3794".to_string(),
            address_other: String::new(),
        };
        let first = [row(10, true), row(11, false)];
        let second = [row(10, false), row(11, true)];
        assert_eq!(selector_text(&first), "126.1.10 [live] (1 of 2)");
        assert_eq!(selector_text(&second), "126.1.11 [live] (2 of 2)");
        assert_eq!(selector_text(&first[..1]), "126.1.10 [live]");
        assert_eq!(
            first[0].where_words(),
            "126.1.10 followed at 127.0.0.1:3794"
        );
    }
}
