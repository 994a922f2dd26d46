//! The timeline panel: play/pause, speed 0.1×–10×, loop, step by report, previous/next mark,
//! the scrub bar (loaded part shaded, marks as coloured ticks), the state lanes under it
//! (management state, control holder, link, emergency as coloured spans, click to seek:
//! [`crate::ui::widgets::state_lanes`]), elapsed and wall-clock time,
//! and the loading progress of a replay. Live, the same panel shows LIVE while the UI
//! follows now, and lets the operator scrub back (the whole UI then draws the state at the
//! cursor) and return with "Back to live".
//!
//! The panel only asks ([`Action`]s); the rules of time live in
//! [`crate::ui::time_control::TimeControl`].

use eframe::egui::{self, RichText};

use crate::model::clock::{format_utc_date, format_utc_time};
use crate::model::session::Session;
use crate::model::update::MarkKind;
use crate::ui::action::Action;
use crate::ui::commands::UiCommand;
use crate::ui::format::{format_hms, format_speed, group_digits, wall_ns};
use crate::ui::sources::ReplayState;
use crate::ui::theme::Theme;
use crate::ui::time_control::{SPEEDS, Shown, TimeCommand, TimeControl};
use crate::ui::widgets::scrub_bar::{MarkFilter, ScrubAction, ScrubBar, kind_chips, scrub_bar};
use crate::ui::widgets::state_lanes::{LanesInput, cached_lanes, state_lanes};

pub use crate::ui::time_control::{MAX_FRAME_DT, MAX_SPEED, MIN_SPEED};

/// What the timeline shows.
pub struct TimelineInput<'a> {
    /// What the window shows.
    pub shown: Shown,
    /// Play/pause, speed and loop.
    pub time: &'a TimeControl,
    /// Now, s since the live session started.
    pub now: f64,
    /// The session drawn.
    pub session: &'a Session,
    /// The drawn session's time origin, ns since the Unix epoch, when known.
    pub start_ns: Option<u64>,
    /// The replay, when one is open.
    pub replay: Option<&'a ReplayState>,
}

/// Draws the panel. The mark filter chips change `filter` (persisted in the settings).
///
/// Two rows of controls at every window width, so the panel's height never depends on what
/// it holds and every control stays on screen from 800 px wide up: the first row has the
/// transport buttons and the elapsed time on the left, LIVE or Back to live (and a replay's
/// loading progress) held at the right edge; the second row has the speed, loop, the
/// wall-clock time and the mark chips, folded into a "marks" menu when they do not fit.
pub fn show(
    ui: &mut egui::Ui,
    input: &TimelineInput<'_>,
    filter: &mut MarkFilter,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let loaded = input.session.span();
    ui.horizontal(|ui| {
        // The right side first, so it keeps its place at the right edge whatever the left
        // side holds; the left side gets what is left, clipped to it.
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            right_side(ui, input, theme, actions);
            ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                ui.set_clip_rect(ui.max_rect().intersect(ui.clip_rect()));
                controls(ui, input, actions);
                ui.separator();
                clock(ui, input);
            });
        });
    });
    ui.horizontal(|ui| {
        ui.set_clip_rect(ui.max_rect().intersect(ui.clip_rect()));
        speed_and_loop(ui, input, actions);
        lanes_toggle(ui);
        ui.separator();
        wall_clock(ui, input);
        ui.separator();
        chips_or_menu(ui, input.session, filter, theme);
    });
    match bar_range(input) {
        Some(range) => {
            let bar = ScrubBar {
                range,
                loaded,
                cursor: input.shown.cursor(),
                marks: &input.session.marks,
                filter: *filter,
                height: 22.0,
            };
            let (_, action) = scrub_bar(ui, &bar, theme);
            if let Some(ScrubAction::Seek(t) | ScrubAction::Mark(t)) = action {
                actions.push(Action::Time(TimeCommand::Seek(t)));
            }
            lanes(ui, input, range, theme, actions);
        }
        None => {
            let text = match input.replay {
                Some(r) if r.loading() => "nothing loaded yet…",
                Some(_) => "the file holds no JUDP datagrams this OCU can decode",
                None => "no data yet",
            };
            ui.label(RichText::new(text).color(theme.muted));
        }
    }
}

/// The state lanes under the scrub bar, on its time axis ([`state_lanes`]): a click on a span
/// moves the cursor to its start.
fn lanes(
    ui: &mut egui::Ui,
    input: &TimelineInput<'_>,
    range: (f64, f64),
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    if !lanes_shown(ui) {
        return;
    }
    let cache = cached_lanes(ui, egui::Id::unique("timeline state lanes"), input.session);
    let Ok(cache) = cache.lock() else {
        return;
    };
    // An open span lasts until now live, until the newest data in a replay.
    let now = match input.shown {
        Shown::Live | Shown::LiveScrubbed { .. } => input.now,
        Shown::Replay { .. } | Shown::ReplayOverLive { .. } => {
            input.session.span().map_or(range.1, |s| s.1)
        }
    };
    let lanes = LanesInput {
        lanes: cache.lanes(),
        range,
        now,
        cursor: input.shown.cursor(),
    };
    ui.spacing_mut().item_spacing.y = 0.0;
    if let Some(t) = state_lanes(ui, &lanes, theme) {
        actions.push(Action::Time(TimeCommand::Seek(t)));
    }
}

/// Where the window remembers whether the state lanes are shown.
fn lanes_id() -> egui::Id {
    egui::Id::unique("timeline state lanes shown")
}

/// The least window height, points, at which the state lanes are shown until the operator
/// says otherwise (below it their rows would take room a plot needs).
pub const LANES_AUTO_HEIGHT: f32 = 900.0;

/// Whether the state lanes are shown: as the "lanes" toggle was set, else when the window is
/// at least [`LANES_AUTO_HEIGHT`] tall.
fn lanes_shown(ui: &egui::Ui) -> bool {
    let set = ui.data_mut(|d| d.get_temp::<bool>(lanes_id()));
    set.unwrap_or_else(|| ui.ctx().content_rect().height() >= LANES_AUTO_HEIGHT)
}

/// Shows or hides the state lanes (what the timeline's "lanes" toggle does).
pub fn show_lanes(ctx: &egui::Context, on: bool) {
    ctx.data_mut(|d| d.insert_temp(lanes_id(), on));
}

/// The "lanes" toggle as the operator set it (`None`: not set), for the settings.
pub fn lanes_set(ctx: &egui::Context) -> Option<bool> {
    ctx.data_mut(|d| d.get_temp::<bool>(lanes_id()))
}

/// The toggle that shows or hides the state lanes (at first shown in a window at least
/// [`LANES_AUTO_HEIGHT`] tall: in a laptop window the rows would take room a plot needs).
fn lanes_toggle(ui: &mut egui::Ui) {
    let mut on = lanes_shown(ui);
    if ui
        .toggle_value(&mut on, "lanes")
        .on_hover_text(
            "Show or hide the state lanes under the scrub bar: management state, control \
             holder, link and E-stop over time (click a span to go to its start)",
        )
        .changed()
    {
        ui.data_mut(|d| d.insert_temp(lanes_id(), on));
    }
}

/// The mark chips where they fit in the rest of the row (their width as last drawn decides),
/// else a "marks" menu holding them: a narrow window keeps every chip one click away.
fn chips_or_menu(ui: &mut egui::Ui, session: &Session, filter: &mut MarkFilter, theme: &Theme) {
    let id = ui.scope_id().with("mark chips width");
    let width = ui.data(|d| d.get_temp::<f32>(id)).unwrap_or(0.0);
    if width <= ui.available_width() {
        let drawn = ui.horizontal(|ui| filter_chips(ui, session, filter, theme));
        ui.data_mut(|d| d.insert_temp(id, drawn.response.rect.width()));
        return;
    }
    let hidden = MarkKind::ALL.iter().filter(|k| !filter.shows(**k)).count();
    let text = if hidden == 0 {
        format!("marks ({})…", session.marks.len())
    } else {
        format!("marks ({}, {hidden} kinds hidden)…", session.marks.len())
    };
    ui.menu_button(text, |ui| filter_chips(ui, session, filter, theme))
        .response
        .on_hover_text("Show or hide each kind of mark on the timeline");
    // Measure again when the window grows wide enough for the chips.
    if ui.available_width() > width {
        ui.data_mut(|d| d.insert_temp(id, 0.0_f32));
    }
}
/// One toggle chip per kind of mark present (in the kind's colour, with its count): click
/// to hide or show that kind on the scrub bar.
fn filter_chips(ui: &mut egui::Ui, session: &Session, filter: &mut MarkFilter, theme: &Theme) {
    let counts = crate::model::events::counts(session);
    kind_chips(ui, &counts, filter, theme, false, "on the timeline");
}

/// A button for a timeline command of the table.
fn button(
    ui: &mut egui::Ui,
    cmd: UiCommand,
    shown: Shown,
    enabled: bool,
    actions: &mut Vec<Action>,
) {
    if ui
        .add_enabled(
            enabled,
            egui::Button::new(RichText::new(cmd.text()).monospace()),
        )
        .on_hover_text(cmd.hover_text(shown))
        .clicked()
    {
        actions.push(Action::Ui(cmd));
    }
}

/// Play/pause, marks, steps, speed and loop.
fn controls(ui: &mut egui::Ui, input: &TimelineInput<'_>, actions: &mut Vec<Action>) {
    let shown = input.shown;
    let loaded = input.session.span().is_some();
    let has_marks = !input.session.marks.is_empty();
    let playing = input.time.playing() || shown == Shown::Live;
    let play = if playing { "Pause" } else { "Play" };
    let hover = match shown {
        Shown::Replay { .. } | Shown::ReplayOverLive { .. } => {
            UiCommand::TogglePlay.hover_text(shown)
        }
        Shown::Live => {
            "Freeze the view at this moment (the live session keeps recording in memory)".into()
        }
        Shown::LiveScrubbed { .. } => {
            "Play forward from the cursor; at the newest data the view follows live again".into()
        }
    };
    if ui
        .add_enabled(loaded, egui::Button::new(play))
        .on_hover_text(hover)
        .clicked()
    {
        actions.push(Action::Ui(UiCommand::TogglePlay));
    }
    button(ui, UiCommand::PrevMark, shown, has_marks, actions);
    button(ui, UiCommand::StepBack, shown, loaded, actions);
    button(ui, UiCommand::StepForward, shown, loaded, actions);
    button(ui, UiCommand::NextMark, shown, has_marks, actions);
}

/// The playback speed, and loop in a replay.
fn speed_and_loop(ui: &mut egui::Ui, input: &TimelineInput<'_>, actions: &mut Vec<Action>) {
    let speed = input.time.speed();
    egui::ComboBox::new("speed", "speed")
        .selected_text(format_speed(speed))
        .width(60.0)
        .show_ui(ui, |ui| {
            for s in SPEEDS {
                if ui
                    .selectable_label((speed - s).abs() < 1e-9, format_speed(s))
                    .clicked()
                {
                    actions.push(Action::Time(TimeCommand::SetSpeed(s)));
                }
            }
        })
        .response
        .on_hover_text("Playback speed, × real time");
    if input.shown.is_replay() {
        let mut looping = input.time.looping();
        if ui
            .toggle_value(&mut looping, "loop")
            .on_hover_text("Start again from the beginning at the end")
            .changed()
        {
            actions.push(Action::Time(TimeCommand::SetLoop(looping)));
        }
    }
}

/// Elapsed / length. Live, the session is as long as now: the time never reads past its
/// end.
fn clock(ui: &mut egui::Ui, input: &TimelineInput<'_>) {
    let (t, end) = elapsed_and_length(input);
    ui.label(
        RichText::new(format!(
            "{} / {}",
            format_hms(t, true),
            format_hms(end, true)
        ))
        .monospace(),
    )
    .on_hover_text("Elapsed time since the session started / session length");
}

/// The drawn time and the session's length, s. Following live both are now (the newest
/// report may be a little older than now); otherwise the cursor within the span.
pub fn elapsed_and_length(input: &TimelineInput<'_>) -> (f64, f64) {
    let t = input.shown.time(input.now);
    let end = input.session.span().map_or(0.0, |l| l.1);
    match input.shown {
        Shown::Live | Shown::LiveScrubbed { .. } => (t.min(input.now), end.max(input.now)),
        Shown::Replay { .. } | Shown::ReplayOverLive { .. } => (t, end.max(t)),
    }
}

/// The wall-clock time at the cursor.
fn wall_clock(ui: &mut egui::Ui, input: &TimelineInput<'_>) {
    let t = input.shown.time(input.now);
    if let Some(start) = input.start_ns {
        let wall = wall_ns(start, t);
        ui.label(RichText::new(format!("{} UTC", format_utc_time(wall))).monospace())
            .on_hover_text(format!(
                "Wall-clock time at the cursor: {} {} UTC",
                format_utc_date(wall),
                format_utc_time(wall)
            ));
    }
}

/// Back to live, LIVE, and a replay's loading progress.
fn right_side(
    ui: &mut egui::Ui,
    input: &TimelineInput<'_>,
    theme: &Theme,
    actions: &mut Vec<Action>,
) {
    let shown = input.shown;
    match shown {
        Shown::Replay { .. } | Shown::ReplayOverLive { .. } => {
            let back = UiCommand::BackToLive;
            if back.available(shown)
                && ui
                    .button(back.text())
                    .on_hover_text(back.hover_text(shown))
                    .clicked()
            {
                actions.push(Action::Ui(back));
            }
            if let Some(r) = input.replay {
                let p = &r.progress;
                if !p.finished {
                    let text = format!(
                        "loading {:.0} % · {} datagrams · {:.1} / {:.1} MB",
                        p.fraction() * 100.0,
                        group_digits(p.datagrams),
                        p.done_bytes as f64 / 1e6,
                        p.total_bytes as f64 / 1e6
                    );
                    // Narrower in a narrow window: the buttons on the left keep their room.
                    let width = (ui.available_width() - 560.0).clamp(80.0, 320.0);
                    ui.add(
                        egui::ProgressBar::new(p.fraction())
                            .desired_width(width)
                            .text(text),
                    );
                } else if p.stopped.is_some() {
                    ui.label(RichText::new("loaded partly").color(theme.warn))
                        .on_hover_text(p.stopped.clone().unwrap_or_default());
                }
            }
        }
        Shown::Live => {
            ui.label(RichText::new("LIVE").strong().color(theme.ok))
                .on_hover_text("The view follows the newest data");
        }
        Shown::LiveScrubbed { .. } => {
            let follow = UiCommand::FollowLive;
            let keys = [follow, UiCommand::End]
                .map(|c| c.keys_text(shown))
                .join(" or ");
            if ui
                .button(follow.text())
                .on_hover_text(format!("Follow the newest data again ({keys})"))
                .clicked()
            {
                actions.push(Action::Ui(follow));
            }
        }
    }
}

/// The times at the bar's two ends. The bar covers the whole recording when an index says
/// how long it is; while loading a file without one, it estimates the end from the bytes
/// read. Live, the bar starts at the session's start; a replay starts at its first datagram
/// (a recording started an hour into a session would otherwise be a sliver).
fn bar_range(input: &TimelineInput<'_>) -> Option<(f64, f64)> {
    let (a, b) = input.session.span()?;
    let Some(r) = input.replay else {
        return Some((a.min(0.0), b));
    };
    let mut end = b;
    if let (Some(e), Some(start)) = (r.replay.info.end_ns, input.start_ns) {
        end = end.max(e.saturating_sub(start) as f64 / 1e9);
    } else if !r.progress.finished {
        let f = f64::from(r.progress.fraction());
        if f > 0.01 {
            end = end.max(a + (b - a) / f);
        }
    }
    Some((a, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::ArmFact;

    #[test]
    fn live_the_time_never_reads_past_the_end_and_a_replay_keeps_its_cursor() {
        let mut session = Session::new();
        for i in 0..=10 {
            session.apply_arm(&ArmFact::JointPositions {
                t: f64::from(i) * 0.1,
                values: vec![0.0],
            });
        }
        let time = TimeControl::live();
        let input = |shown, now| TimelineInput {
            shown,
            time: &time,
            now,
            session: &session,
            start_ns: None,
            replay: None,
        };
        // Now is past the newest report: the session is as long as now.
        let (t, end) = elapsed_and_length(&input(Shown::Live, 1.3));
        assert!((t - 1.3).abs() < 1e-9 && t <= end, "{t} / {end}");
        let (t, end) = elapsed_and_length(&input(Shown::LiveScrubbed { t: 0.5 }, 1.3));
        assert!((t - 0.5).abs() < 1e-9 && (end - 1.3).abs() < 1e-9);
        let (t, end) = elapsed_and_length(&input(Shown::Replay { t: 0.4 }, 99.0));
        assert!((t - 0.4).abs() < 1e-9 && (end - 1.0).abs() < 1e-9);
    }
}
