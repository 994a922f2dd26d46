//! The jog strip over the gauges (live only): what a jog would move and how fast, whether it
//! moves now, and when it cannot, the first gate that blocks it and what to do, in words.

use eframe::egui;

use crate::model::jog::{Frame, Gate, JogDriver, JogStatus};
use crate::ui::commands::UiCommand;
use crate::ui::jog_input::JogUi;
use crate::ui::settings::Settings;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;

/// What the strip shows.
#[derive(Debug, Clone, Copy)]
pub struct JogView<'a> {
    /// The live arm's jog, as the network side says it.
    pub status: &'a JogStatus,
    /// The arm offers the tool-point velocity driver.
    pub tool_available: bool,
    /// What is shown (the keys' text).
    pub shown: Shown,
    /// The first gate that would block a jog now, from the live arm's state (said before
    /// the operator tries; the enable is not counted).
    pub needs: Option<Gate>,
    /// Who holds control of the arm, as it reports it (`control_words`): said when control
    /// blocks, so a second OCU sees whose jog it cannot interrupt.
    pub control: &'a str,
    /// The gamepad's status (`None`: no gamepad input in this window).
    pub pad: Option<&'a str>,
    /// Per joint of the live arm, joint 1 first: revolute (else prismatic): the unit of its
    /// stop bound.
    pub revolute: &'a [bool],
}

/// Draws the strip; the mode, speed and acknowledgement change `jog` and `settings`.
pub fn show(
    ui: &mut egui::Ui,
    view: &JogView<'_>,
    jog: &mut JogUi,
    settings: &mut Settings,
    theme: &Theme,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Jog").strong());
        let keys = |c: UiCommand| c.keys_text(view.shown);
        if ui
            .selectable_label(!jog.tool, "joints")
            .on_hover_text(format!(
                "Jog one joint at a time ({})",
                keys(UiCommand::ToggleJogMode)
            ))
            .clicked()
            && jog.tool
        {
            jog.toggle_mode();
        }
        let tool = ui.add_enabled(view.tool_available, egui::Button::selectable(jog.tool, "tool"));
        let tool = tool.on_disabled_hover_text(
            "This arm offers no tool-point velocity driver (ManipulatorEndEffectorVelocityStateDriver)",
        );
        if tool
            .on_hover_text("Jog the tool point along its axes (x, y, z, rx, ry, rz)")
            .clicked()
            && !jog.tool
        {
            jog.toggle_mode();
        }
        if jog.tool {
            let (base, text) = match jog.frame {
                Frame::Base => (true, "base frame"),
                Frame::Tool => (false, "tool frame"),
            };
            if ui
                .selectable_label(true, text)
                .on_hover_text(if base {
                    "Axes of the arm's base: click for the tool's own axes"
                } else {
                    "The tool's own axes: click for the arm's base axes"
                })
                .clicked()
            {
                jog.frame = if base { Frame::Tool } else { Frame::Base };
            }
        }
        ui.label(egui::RichText::new(jog.axis_name()).color(theme.accent))
            .on_hover_text(format!(
                "The axis the keys jog: {} / {} select, {} / {} jog (hold)",
                keys(UiCommand::JogPrevAxis),
                keys(UiCommand::JogNextAxis),
                keys(UiCommand::JogMinus),
                keys(UiCommand::JogPlus)
            ));
        let mut pct = settings.jog_speed_scale * 100.0;
        let speed = ui
            .add(
                egui::DragValue::new(&mut pct)
                    .range(1.0..=100.0)
                    .speed(1.0)
                    .suffix(" %"),
            )
            // Its text is only the number: named for a screen reader.
            .accessible_name("jog speed")
            .on_hover_text(
                "Speed at full deflection, of each joint's maximum speed (the arm is told the \
                 same limit in its motion profile)",
            );
        if speed.changed() {
            settings.jog_speed_scale = (pct / 100.0).clamp(0.01, 1.0);
        }
        if let Some(pad) = view.pad
            && ui
                .selectable_label(jog.show_gamepad, "gamepad")
                .on_hover_text(format!("{pad}: its mapping and live state"))
                .clicked()
        {
            jog.show_gamepad = !jog.show_gamepad;
        }
        options_menu(ui, jog, settings);
    });
    // The state line keeps its height whatever it says (moving, blocked, idle), so the
    // gauges under it do not jump when a − / + button is let go: a strong line and two small
    // ones, the most it says but for a refusal.
    let top = ui.cursor().top();
    state_line(ui, view, jog, settings, theme);
    let spacing = ui.spacing().item_spacing.y;
    let reserve = ui.text_style_height(&egui::TextStyle::Body)
        + 2.0 * ui.text_style_height(&egui::TextStyle::Small)
        + 3.0 * spacing;
    let used = ui.cursor().top() - top;
    if used < reserve {
        ui.add_space(reserve - used);
    }
}

/// The jog's options: the access-timeout rule and the effort compatibility mode.
fn options_menu(ui: &mut egui::Ui, jog: &mut JogUi, settings: &mut Settings) {
    ui.menu_button("options", |ui| {
        ui.label("Velocity and effort jogs: if the link drops, the arm moves on until its access timeout lapses.");
        ui.horizontal(|ui| {
            ui.label("Longest timeout accepted without asking:");
            ui.add(
                egui::DragValue::new(&mut settings.jog_timeout_limit)
                    .range(0.0..=60.0)
                    .speed(0.1)
                    .suffix(" s"),
            );
        });
        ui.checkbox(
            &mut settings.jog_refuse_long_timeout,
            "Refuse arms past it (never ask)",
        );
        if jog.acknowledged && ui.button("Withdraw this session's acknowledgement").clicked() {
            jog.acknowledged = false;
        }
        ui.separator();
        ui.checkbox(
            &mut settings.jog_effort_as_velocity,
            "Efforts read as velocities (compatibility mode)",
        )
        .on_hover_text(
            "Only for arms that read SetJointEffort as a velocity (FKIE's does). On any other \
             arm, 50 % would command 50 rad/s: leave it off",
        );
        if settings.jog_effort_as_velocity {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "Compatibility mode on: efforts carry rad/s or m/s",
            );
        }
    })
    .response
    .on_hover_text("Jog options");
}

/// The second line: moving, blocked (first gate and what to do), refused, or ready.
fn state_line(
    ui: &mut egui::Ui,
    view: &JogView<'_>,
    jog: &mut JogUi,
    settings: &Settings,
    theme: &Theme,
) {
    let status = view.status;
    if let (true, Some(i)) = (status.moving, status.at_soft_limit) {
        // Streaming, and the joint held still by its soft limit: not "moving".
        ui.label(
            egui::RichText::new(format!(
                "STOPPED at the soft limit of joint {}: jog it the other way",
                i + 1
            ))
            .strong()
            .color(theme.warn),
        );
    } else if status.moving {
        let source = status.source.map_or(String::new(), |s| format!(" ({s:?})"));
        ui.label(
            egui::RichText::new(format!("MOVING{source}: let go to stop"))
                .strong()
                .color(theme.ok),
        );
    } else if let Some(g) = status.blocking.first() {
        let more = status.blocking.len() - 1;
        let more = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        ui.label(
            egui::RichText::new(format!("Blocked: {}{more}", g.blocks()))
                .strong()
                .color(theme.warn),
        )
        .on_hover_text(
            status
                .blocking
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        let remedy = if g == Gate::ControlHeld {
            format!("{} ({})", g.remedy(), view.control)
        } else {
            g.remedy_for(status.source).to_string()
        };
        ui.label(egui::RichText::new(remedy).small());
    } else if let Some(why) = &status.refusal {
        ui.label(egui::RichText::new(why).color(theme.warn));
        if status.acknowledgeable
            && !settings.jog_refuse_long_timeout
            && !jog.acknowledged
            && ui
                .button("I understand: allow for this session")
                .on_hover_text(
                    "Asked once per session; withdraw it in the jog options. Nothing moves \
                     until the jog is pressed again",
                )
                .clicked()
        {
            jog.acknowledge();
        }
    } else if let Some(g) = view.needs {
        let holder = if g == Gate::ControlHeld {
            format!(" — {}", view.control)
        } else {
            String::new()
        };
        ui.label(
            egui::RichText::new(format!("To jog: {}{holder}", g.remedy()))
                .small()
                .color(theme.warn),
        )
        .on_hover_text(g.blocks());
    } else {
        // The driver of the mode the next jog uses, not of the last input's.
        let driver = if jog.tool {
            if view.tool_available {
                JogDriver::Tool.name()
            } else {
                "—"
            }
        } else {
            status
                .driver
                .filter(|d| *d != JogDriver::Tool)
                .map_or("—", JogDriver::name)
        };
        ui.label(
            egui::RichText::new(format!("Hold − / + to jog · {driver}"))
                .small()
                .color(theme.muted),
        );
    }
    if let Some(words) = link_drop_words(view, jog) {
        ui.label(egui::RichText::new(words).small().color(theme.muted));
    }
}

/// What a cut link does to the jog the strip would start now: the tool driver's words in
/// tool mode; in joint mode with the position driver, the selected joint's bound in its own
/// unit; else the joint driver's words.
fn link_drop_words(view: &JogView<'_>, jog: &JogUi) -> Option<String> {
    let status = view.status;
    if jog.tool {
        return status.if_link_drops_tool.clone();
    }
    match (
        status.position_bounds.get(jog.axis),
        view.revolute.get(jog.axis),
    ) {
        (Some(b), Some(revolute)) if b.is_finite() => Some(if *revolute {
            format!(
                "if the link drops: joint {} stops within {b:.3} rad ({:.1}°)",
                jog.axis + 1,
                b.to_degrees()
            )
        } else {
            format!(
                "if the link drops: joint {} stops within {:.1} mm",
                jog.axis + 1,
                b * 1000.0
            )
        }),
        _ => status.if_link_drops.clone(),
    }
}
