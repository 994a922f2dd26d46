//! The gamepad panel: the mapping as a table (each axis and button and what it does, the
//! enable's three positions included) and the live state: connected or not (the pad's name,
//! or why there is no gamepad support), each stick axis's deflection as a small bar with what
//! it drives now, the enable's state, and the current mode, page and frame.

use eframe::egui::{self, Rect, Sense, Stroke, StrokeKind, Ui, WidgetInfo, vec2};

use crate::model::jog::{EnableState, Frame};
use crate::ui::gamepad::{Axis, Mapping, Mode, PadIntent, Page, Snapshot, Support};
use crate::ui::theme::Theme;

/// Draws the panel. `intent` is this frame's [`Mapping::intent`] of `snapshot` (`None` when
/// the app has not computed one: the live part then shows the raw sticks only).
pub fn show(
    ui: &mut Ui,
    theme: &Theme,
    mapping: &Mapping,
    snapshot: &Snapshot,
    intent: Option<&PadIntent>,
) {
    live(ui, theme, mapping, snapshot, intent);
    ui.add_space(6.0);
    ui.separator();
    table(ui, mapping);
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(
            "A gamepad is not a safety-rated enabling device: the robot's own E-stop chain is \
             the safety function.",
        )
        .weak(),
    );
}

/// The live part: status, enable, mode and page, and the sticks.
fn live(
    ui: &mut Ui,
    theme: &Theme,
    mapping: &Mapping,
    snapshot: &Snapshot,
    intent: Option<&PadIntent>,
) {
    let status_colour = match (&snapshot.support, snapshot.pad.connected) {
        (Support::Missing(_), _) => theme.warn,
        (Support::Ready, true) => theme.ok,
        _ => theme.muted,
    };
    ui.label(
        egui::RichText::new(snapshot.status())
            .color(status_colour)
            .strong(),
    );
    let Some(intent) = intent else {
        sticks(ui, theme, mapping, snapshot, None);
        return;
    };
    ui.horizontal(|ui| {
        ui.label("Enable:");
        let (words, colour) = enable_words(intent.enable, theme);
        ui.label(egui::RichText::new(words).color(colour).strong());
    });
    ui.label(mode_words(intent));
    if intent.recentring {
        ui.label(
            egui::RichText::new("Centre the sticks: they drive nothing until then.")
                .color(theme.warn),
        );
    }
    sticks(ui, theme, mapping, snapshot, Some(intent));
}

/// Each stick axis: its deflection (after the deadband) as a bar, and what it drives now.
fn sticks(
    ui: &mut Ui,
    theme: &Theme,
    mapping: &Mapping,
    snapshot: &Snapshot,
    intent: Option<&PadIntent>,
) {
    egui::Grid::new("gamepad_sticks")
        .num_columns(3)
        .show(ui, |ui| {
            for axis in Axis::ALL {
                ui.label(egui::RichText::new(axis.name()).monospace());
                bar(ui, theme, axis.name(), mapping.shaped(&snapshot.pad, axis));
                let drives = intent
                    .and_then(|i| i.axes.iter().find(|(a, _)| *a == axis))
                    .map_or("—", |(_, d)| d.as_str());
                ui.label(drives);
                ui.end_row();
            }
        });
}

/// A small centred bar for a value −1..1 (egui's toggle-switch anatomy: size, allocate,
/// paint if visible, widget info).
fn bar(ui: &mut Ui, theme: &Theme, name: &str, value: f64) {
    let size = vec2(90.0, ui.spacing().interact_size.y * 0.5);
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    if ui.is_rect_visible(rect) {
        let painter = ui.painter();
        painter.rect_filled(rect, 2.0, theme.track);
        let v = value.clamp(-1.0, 1.0) as f32;
        let mid = rect.center().x;
        let end = mid + v * rect.width() * 0.5;
        let fill = Rect::from_x_y_ranges(mid.min(end)..=mid.max(end), rect.y_range());
        painter.rect_filled(fill, 0.0, theme.accent);
        painter.vline(mid, rect.y_range(), Stroke::new(1.0, theme.muted));
        painter.rect_stroke(rect, 2.0, Stroke::new(1.0, theme.muted), StrokeKind::Inside);
    }
    response.widget_info(|| WidgetInfo::slider(false, value, name));
}

fn enable_words(state: EnableState, theme: &Theme) -> (&'static str, egui::Color32) {
    match state {
        EnableState::Enabled => ("held: motion allowed", theme.ok),
        EnableState::Released => ("released: off", theme.muted),
        EnableState::Squeezed => ("squeezed fully: off until released", theme.danger),
        EnableState::Unarmed => ("off until the trigger is fully released", theme.warn),
    }
}

fn mode_words(intent: &PadIntent) -> String {
    if !intent.connected {
        return "Sticks: released (no gamepad)".to_string();
    }
    let page = format!("page {} of {}", intent.page + 1, intent.pages.max(1));
    match intent.mode {
        Mode::Joint => format!("Joint mode, {page}"),
        Mode::Tool => format!("Tool mode, {page}, {} frame", frame_name(intent.frame)),
    }
}

fn frame_name(frame: Frame) -> &'static str {
    match frame {
        Frame::Base => "base",
        Frame::Tool => "tool",
    }
}

/// The mapping: every input and what it does.
fn table(ui: &mut Ui, mapping: &Mapping) {
    ui.label(egui::RichText::new("Mapping").strong());
    let e = &mapping.enable;
    let b = &mapping.buttons;
    egui::Grid::new("gamepad_mapping")
        .striped(true)
        .num_columns(2)
        .show(ui, |ui| {
            let mut row = |input: &str, what: String| {
                ui.label(egui::RichText::new(input).monospace());
                ui.label(what);
                ui.end_row();
            };
            row(
                e.trigger.name(),
                format!(
                    "enable: released (up to {}) = off · held (from {}) = on · squeezed fully \
                     (from {}) = off until released",
                    e.release, e.engage, e.squeeze
                ),
            );
            row(b.previous_page.name(), "previous page".into());
            row(b.next_page.name(), "next page".into());
            row(b.mode.name(), "joint or tool mode".into());
            row(b.frame.name(), "tool-point frame: base or tool".into());
            for (n, page) in mapping.joint_pages.iter().enumerate() {
                row(
                    &format!("joint page {}", n + 1),
                    page_words(page, |j| format!("joint {j}")),
                );
            }
            for (n, page) in mapping.tool_pages.iter().enumerate() {
                row(
                    &format!("tool page {}", n + 1),
                    page_words(page, |t| t.to_string()),
                );
            }
            let inverted = if mapping.invert.is_empty() {
                "none".to_string()
            } else {
                let names: Vec<&str> = mapping.invert.iter().map(|a| a.name()).collect();
                names.join(", ")
            };
            row(
                "sticks",
                format!("deadband {}; inverted: {inverted}", mapping.deadband),
            );
        });
}

/// A page in words: `left_stick_y: joint 1, right_stick_y: joint 2`.
fn page_words<T: Copy>(page: &Page<T>, words: impl Fn(T) -> String) -> String {
    let parts: Vec<String> = page
        .entries()
        .map(|(axis, target)| format!("{}: {}", axis.name(), words(target)))
        .collect();
    parts.join(", ")
}
