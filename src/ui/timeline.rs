//! The timeline panel: play/pause, speed 0.1×–10×, loop, step by report, previous/next mark,
//! the scrub bar (loaded part shaded, marks as coloured ticks), elapsed and wall-clock time,
//! and the loading progress of a replay. In live mode the same panel shows LIVE while the UI
//! follows now, and lets the operator scrub back (the whole UI then draws the state at the
//! cursor) and return with "Back to live".
//!
//! The playback rules (advance by wall-clock time × speed, clamp, loop, pause at the end,
//! seek, step) live in [`Playback`], free of egui, so they are tested on their own.

use eframe::egui::{self, RichText};

use super::app::{OcuApp, read_session};
use super::theme::Theme;
use super::widgets::scrub_bar::{ScrubAction, ScrubBar, scrub_bar};
use crate::model::clock::{format_utc_date, format_utc_time};
use crate::model::session::Mark;

/// The speeds offered, × real time.
pub const SPEEDS: [f64; 7] = [0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0];
/// Slowest playback, × real time.
pub const MIN_SPEED: f64 = 0.1;
/// Fastest playback, × real time.
pub const MAX_SPEED: f64 = 10.0;
/// Longest wall-clock step one frame may take, s: a stalled frame must not jump the cursor.
pub const MAX_FRAME_DT: f64 = 0.5;
/// Times closer than this are the same time (marks, reports), s.
const SAME_TIME_S: f64 = 1e-9;

/// What one [`Playback::advance`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// Not playing, or nothing loaded yet: the cursor did not move.
    Paused,
    /// The cursor moved forward.
    Moved,
    /// At the end of what is loaded while more is arriving: holding there, still playing.
    Waiting,
    /// Went past the end and wrapped to the start (loop on).
    Wrapped,
    /// Reached the end and paused there (loop off).
    Ended,
}

/// Play/pause, speed, loop and the cursor of a timeline, without any UI.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// The time drawn, s since the session started.
    pub cursor: f64,
    /// Playing (the cursor advances with wall-clock time × speed).
    pub playing: bool,
    /// Speed, × real time, within [`MIN_SPEED`]..=[`MAX_SPEED`].
    pub speed: f64,
    /// Wrap to the start at the end (else pause at the end).
    pub looping: bool,
}

/// `t` clamped into `span` (unchanged without a span).
pub fn clamp(t: f64, span: Option<(f64, f64)>) -> f64 {
    match span {
        Some((a, b)) if t.is_finite() => t.clamp(a, b.max(a)),
        Some((a, _)) => a,
        None if t.is_finite() => t,
        None => 0.0,
    }
}

impl Playback {
    /// Paused at `cursor`, 1×, no loop.
    pub fn new(cursor: f64) -> Self {
        Self {
            cursor,
            playing: false,
            speed: 1.0,
            looping: false,
        }
    }

    /// Sets the speed, clamped to [`MIN_SPEED`]..=[`MAX_SPEED`] (non-numbers ignored).
    pub fn set_speed(&mut self, speed: f64) {
        if speed.is_finite() {
            self.speed = speed.clamp(MIN_SPEED, MAX_SPEED);
        }
    }

    /// Moves the cursor to `t`, clamped to `span`; playing or not is unchanged.
    pub fn seek(&mut self, t: f64, span: Option<(f64, f64)>) {
        self.cursor = clamp(t, span);
    }

    /// Keeps the cursor inside `span` (it grows while a file loads).
    pub fn clamp_to(&mut self, span: Option<(f64, f64)>) {
        if span.is_some() {
            self.cursor = clamp(self.cursor, span);
        }
    }

    /// Play or pause. Playing from the very end (loop off) starts again from the beginning.
    pub fn toggle(&mut self, span: Option<(f64, f64)>) {
        if self.playing {
            self.playing = false;
            return;
        }
        if let Some((a, b)) = span
            && self.cursor >= b - SAME_TIME_S
        {
            self.cursor = a;
        }
        self.playing = true;
    }

    /// Pauses and moves to `t` (a report or mark time) when there is one; `false` otherwise.
    pub fn step_to(&mut self, t: Option<f64>, span: Option<(f64, f64)>) -> bool {
        let Some(t) = t else { return false };
        self.playing = false;
        self.seek(t, span);
        true
    }

    /// Advances by `dt` seconds of wall-clock time (capped at [`MAX_FRAME_DT`]) × speed
    /// within `span`. At the end: wraps when looping, waits while the session is still
    /// `growing` (a file loading), else pauses there.
    pub fn advance(&mut self, dt: f64, span: Option<(f64, f64)>, growing: bool) -> Advance {
        if !self.playing {
            return Advance::Paused;
        }
        let Some((a, b)) = span else {
            return Advance::Paused;
        };
        let dt = if dt.is_finite() {
            dt.clamp(0.0, MAX_FRAME_DT)
        } else {
            0.0
        };
        let next = clamp(self.cursor, span) + dt * self.speed;
        if next < b {
            self.cursor = next;
            return Advance::Moved;
        }
        if growing {
            self.cursor = b;
            return Advance::Waiting;
        }
        let len = b - a;
        if self.looping && len > 0.0 {
            self.cursor = a + (next - b) % len;
            return Advance::Wrapped;
        }
        self.cursor = b;
        self.playing = false;
        Advance::Ended
    }
}

/// The first mark strictly after `t` (marks in time order).
pub fn next_mark(marks: &[Mark], t: f64) -> Option<&Mark> {
    let i = marks.partition_point(|m| m.t <= t + SAME_TIME_S);
    marks.get(i)
}

/// The last mark strictly before `t` (marks in time order).
pub fn prev_mark(marks: &[Mark], t: f64) -> Option<&Mark> {
    let i = marks.partition_point(|m| m.t < t - SAME_TIME_S);
    i.checked_sub(1).and_then(|i| marks.get(i))
}

/// `t` seconds as `H:MM:SS` (or `H:MM:SS.mmm`), e.g. `0:41:12`; hours grow as needed.
pub fn format_hms(t: f64, millis: bool) -> String {
    let sign = if t < 0.0 { "-" } else { "" };
    let t = if t.is_finite() { t.abs() } else { 0.0 };
    let total_ms = (t * 1000.0).round() as u64;
    let (h, m, s, ms) = (
        total_ms / 3_600_000,
        total_ms / 60_000 % 60,
        total_ms / 1000 % 60,
        total_ms % 1000,
    );
    if millis {
        format!("{sign}{h}:{m:02}:{s:02}.{ms:03}")
    } else {
        format!("{sign}{h}:{m:02}:{s:02}")
    }
}

/// The wall-clock time of session time `t`: `start_ns + t` (never before the epoch).
pub fn wall_ns(start_ns: u64, t: f64) -> u64 {
    let offset = (t * 1e9).round();
    if offset >= 0.0 {
        start_ns.saturating_add(offset as u64)
    } else {
        start_ns.saturating_sub((-offset) as u64)
    }
}

/// `n` with spaces between groups of three digits: `45 123`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `1.5×`, `0.25×`.
pub fn format_speed(speed: f64) -> String {
    let text = format!("{speed:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}×")
}

fn span(app: &OcuApp) -> Option<(f64, f64)> {
    read_session(&app.session).span()
}

/// Play or pause. Live: pausing freezes the view at this moment; playing runs forward from the
/// cursor and rejoins live at the end.
pub fn toggle_play(app: &mut OcuApp) {
    let span = span(app);
    if app.replay.is_some() {
        app.view.playback.toggle(span);
        app.view.cursor = Some(app.view.playback.cursor);
        return;
    }
    match app.view.cursor {
        None => {
            let t = span.map_or_else(|| app.now(), |s| s.1);
            app.view.playback.playing = false;
            app.seek(t);
        }
        Some(t) => {
            app.view.playback.cursor = t;
            app.view.playback.playing = !app.view.playback.playing;
        }
    }
}

/// Pauses and moves to the next (`forward`) or previous report; live, past the newest report
/// means back to live.
pub fn step(app: &mut OcuApp, forward: bool) {
    let (span, target) = {
        let s = read_session(&app.session);
        let span = s.span();
        let from = app.view.cursor.unwrap_or_else(|| span.map_or(0.0, |s| s.1));
        let target = if forward {
            s.next_report(from)
        } else {
            s.prev_report(from)
        };
        (span, target)
    };
    if target.is_none() && forward && app.replay.is_none() {
        app.follow_live();
        return;
    }
    if app.view.playback.step_to(target, span) {
        app.view.cursor = Some(app.view.playback.cursor);
    }
}

/// Pauses and moves to the next (`forward`) or previous timeline mark.
pub fn jump_mark(app: &mut OcuApp, forward: bool) {
    let (span, target) = {
        let s = read_session(&app.session);
        let span = s.span();
        let from = app.view.cursor.unwrap_or_else(|| span.map_or(0.0, |s| s.1));
        let target = if forward {
            next_mark(&s.marks, from)
        } else {
            prev_mark(&s.marks, from)
        }
        .map(|m| m.t);
        (span, target)
    };
    if app.view.playback.step_to(target, span) {
        app.view.cursor = Some(app.view.playback.cursor);
    }
}

/// To the start of the session.
pub fn home(app: &mut OcuApp) {
    if let Some((a, _)) = span(app) {
        app.view.playback.playing = false;
        app.seek(a);
    }
}

/// To the end of the session (live: back to following now).
pub fn end(app: &mut OcuApp) {
    if app.replay.is_none() {
        app.follow_live();
    } else if let Some((_, b)) = span(app) {
        app.view.playback.playing = false;
        app.seek(b);
    }
}

/// The timeline's keys: Left/Right step by report, Shift+Left/Right (or , and .) previous/next mark,
/// Home/End. (Space is handled with the other shortcuts: play/pause in replay, the emergency
/// stop live.) Call only when no widget wants the keyboard.
pub fn keys(app: &mut OcuApp, ctx: &egui::Context) {
    use egui::{Key, Modifiers};
    let (prev_mark, next_mark, back, fwd, home_key, end_key) = ctx.input_mut(|i| {
        // Shift first: the plain arrow would match Shift+arrow too.
        let prev_mark = i.consume_key(Modifiers::SHIFT, Key::ArrowLeft)
            || i.consume_key(Modifiers::NONE, Key::Comma);
        let next_mark = i.consume_key(Modifiers::SHIFT, Key::ArrowRight)
            || i.consume_key(Modifiers::NONE, Key::Period);
        (
            prev_mark,
            next_mark,
            i.consume_key(Modifiers::NONE, Key::ArrowLeft),
            i.consume_key(Modifiers::NONE, Key::ArrowRight),
            i.consume_key(Modifiers::NONE, Key::Home),
            i.consume_key(Modifiers::NONE, Key::End),
        )
    });
    if prev_mark {
        jump_mark(app, false);
    }
    if next_mark {
        jump_mark(app, true);
    }
    if back {
        step(app, false);
    }
    if fwd {
        step(app, true);
    }
    if home_key {
        home(app);
    }
    if end_key {
        end(app);
    }
}

/// Advances playback by `dt` seconds of wall-clock time (once per frame, before drawing).
pub fn tick(app: &mut OcuApp, dt: f64) {
    let span = span(app);
    place_at_first_positions(app, span);
    if let Some(r) = &app.replay {
        let growing = r.loading();
        let pb = &mut app.view.playback;
        pb.advance(dt, span, growing);
        pb.clamp_to(span);
        app.view.cursor = Some(pb.cursor);
        return;
    }
    // Live: only a scrubbed-back cursor plays; reaching the newest data rejoins live.
    let Some(t) = app.view.cursor else { return };
    if !app.view.playback.playing {
        return;
    }
    let mut pb = app.view.playback.clone();
    pb.cursor = t;
    pb.looping = false;
    if pb.advance(dt, span, false) == Advance::Ended {
        app.follow_live();
    } else {
        app.view.playback.cursor = pb.cursor;
        app.view.cursor = Some(pb.cursor);
    }
}

/// A replay opens where the arm can be drawn: at its first joint positions (or its start
/// when it has none), until the operator moves the cursor.
fn place_at_first_positions(app: &mut OcuApp, span: Option<(f64, f64)>) {
    let Some(r) = &mut app.replay else { return };
    let Some(auto) = r.auto_cursor else { return };
    if app.view.playback.cursor != auto || app.view.playback.playing {
        r.auto_cursor = None;
        return;
    }
    let Some((a, _)) = span else { return };
    let first = read_session(&app.session).positions.span().map(|p| p.0);
    let t = first.unwrap_or(a);
    app.view.playback.cursor = t;
    // Settled once positions arrived or the file is fully loaded without any.
    r.auto_cursor = (first.is_none() && r.loading()).then_some(t);
}

/// An operator action on the panel, applied after the session's lock is released.
enum Action {
    TogglePlay,
    Step(bool),
    Mark(bool),
    Seek(f64),
    Live,
    BackToLive,
}

/// Draws the panel.
pub fn show(app: &mut OcuApp, ui: &mut egui::Ui, theme: &Theme) {
    let mut actions = Vec::new();
    let replaying = app.replay.is_some();
    let following = app.view.cursor.is_none();
    let t = app.time();
    let start_ns = app.start_ns();
    let session = app.session.clone();
    let s = read_session(&session);
    let loaded = s.span();
    let has_marks = !s.marks.is_empty();

    ui.horizontal(|ui| {
        let playing = app.view.playback.playing || following;
        let (label, hover) = match (replaying, following) {
            (true, _) => (
                if playing { "Pause" } else { "Play" },
                "Play / pause the replay (Space)",
            ),
            (false, true) => (
                "Pause",
                "Freeze the view at this moment (the live session keeps recording in memory)",
            ),
            (false, false) => (
                if playing { "Pause" } else { "Play" },
                "Play forward from the cursor; at the newest data the view follows live again",
            ),
        };
        if ui
            .add_enabled(loaded.is_some(), egui::Button::new(label))
            .on_hover_text(hover)
            .clicked()
        {
            actions.push(Action::TogglePlay);
        }
        if ui
            .add_enabled(
                has_marks,
                egui::Button::new(RichText::new("◀ mark").monospace()),
            )
            .on_hover_text("Previous mark (Shift+Left or ,)")
            .clicked()
        {
            actions.push(Action::Mark(false));
        }
        if ui
            .add_enabled(
                loaded.is_some(),
                egui::Button::new(RichText::new("◀ step").monospace()),
            )
            .on_hover_text("Previous report (Left)")
            .clicked()
        {
            actions.push(Action::Step(false));
        }
        if ui
            .add_enabled(
                loaded.is_some(),
                egui::Button::new(RichText::new("step ▶").monospace()),
            )
            .on_hover_text("Next report (Right)")
            .clicked()
        {
            actions.push(Action::Step(true));
        }
        if ui
            .add_enabled(
                has_marks,
                egui::Button::new(RichText::new("mark ▶").monospace()),
            )
            .on_hover_text("Next mark (Shift+Right or .)")
            .clicked()
        {
            actions.push(Action::Mark(true));
        }
        let pb = &mut app.view.playback;
        egui::ComboBox::new("speed", "speed")
            .selected_text(format_speed(pb.speed))
            .width(60.0)
            .show_ui(ui, |ui| {
                for s in SPEEDS {
                    if ui
                        .selectable_label((pb.speed - s).abs() < 1e-9, format_speed(s))
                        .clicked()
                    {
                        pb.set_speed(s);
                    }
                }
            })
            .response
            .on_hover_text("Playback speed, × real time");
        if replaying {
            ui.toggle_value(&mut pb.looping, "loop")
                .on_hover_text("Start again from the beginning at the end");
        }
        ui.separator();
        let end = loaded.map_or(0.0, |l| l.1);
        ui.label(
            RichText::new(format!(
                "{} / {}",
                format_hms(t, true),
                format_hms(end, true)
            ))
            .monospace(),
        )
        .on_hover_text("Elapsed time since the session started / session length");
        if let Some(start) = start_ns {
            let wall = wall_ns(start, t);
            ui.label(RichText::new(format!("{} UTC", format_utc_time(wall))).monospace())
                .on_hover_text(format!(
                    "Wall-clock time at the cursor: {} {} UTC",
                    format_utc_date(wall),
                    format_utc_time(wall)
                ));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if replaying {
                if app.has_live()
                    && ui
                        .button("Back to live")
                        .on_hover_text("Close the replay and show the live session again")
                        .clicked()
                {
                    actions.push(Action::BackToLive);
                }
                if let Some(r) = &app.replay {
                    let p = &r.progress;
                    if !p.finished {
                        let text = format!(
                            "loading {:.0} % · {} datagrams · {:.1} / {:.1} MB",
                            p.fraction() * 100.0,
                            group_digits(p.datagrams),
                            p.done_bytes as f64 / 1e6,
                            p.total_bytes as f64 / 1e6
                        );
                        ui.add(
                            egui::ProgressBar::new(p.fraction())
                                .desired_width(320.0)
                                .text(text),
                        );
                    } else if p.stopped.is_some() {
                        ui.label(RichText::new("loaded partly").color(theme.warn))
                            .on_hover_text(p.stopped.clone().unwrap_or_default());
                    }
                }
            } else if following {
                ui.label(RichText::new("LIVE").strong().color(theme.ok))
                    .on_hover_text("The view follows the newest data");
            } else if ui
                .button("Back to live")
                .on_hover_text("Follow the newest data again (L or End)")
                .clicked()
            {
                actions.push(Action::Live);
            }
        });
    });

    // The bar covers the whole recording when an index says how long it is; while loading a
    // file without one, it estimates the end from the bytes read.
    let range = loaded.map(|(a, b)| {
        // Live, the bar starts at the session's start; a replay starts at its first datagram
        // (a recording started an hour into a session would otherwise be a sliver).
        let a = if app.replay.is_some() { a } else { a.min(0.0) };
        let mut end = b;
        if let Some(r) = &app.replay {
            if let (Some(e), Some(start)) = (r.replay.info.end_ns, start_ns) {
                end = end.max(e.saturating_sub(start) as f64 / 1e9);
            } else if !r.progress.finished {
                let f = f64::from(r.progress.fraction());
                if f > 0.01 {
                    end = end.max(a + (b - a) / f);
                }
            }
        }
        (a, end)
    });
    match range {
        Some(range) => {
            let bar = ScrubBar {
                range,
                loaded,
                cursor: app.view.cursor,
                marks: &s.marks,
                height: 22.0,
            };
            let (_, action) = scrub_bar(ui, &bar, theme);
            match action {
                Some(ScrubAction::Seek(t)) | Some(ScrubAction::Mark(t)) => {
                    actions.push(Action::Seek(t))
                }
                None => {}
            }
        }
        None => {
            let text = match &app.replay {
                Some(r) if r.loading() => "nothing loaded yet…",
                Some(_) => "the file holds no JUDP datagrams this OCU can decode",
                None => "no data yet",
            };
            ui.label(RichText::new(text).color(theme.muted));
        }
    }
    drop(s);

    for a in actions {
        match a {
            Action::TogglePlay => toggle_play(app),
            Action::Step(f) => step(app, f),
            Action::Mark(f) => jump_mark(app, f),
            Action::Seek(t) => {
                if !replaying {
                    app.view.playback.playing = false;
                }
                app.seek(t);
            }
            Action::Live => app.follow_live(),
            Action::BackToLive => app.back_to_live(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::MarkKind;

    const SPAN: Option<(f64, f64)> = Some((2.0, 12.0));

    fn playing(cursor: f64) -> Playback {
        Playback {
            playing: true,
            ..Playback::new(cursor)
        }
    }

    #[test]
    fn advance_moves_by_wall_clock_time_times_speed() {
        let mut p = playing(3.0);
        p.set_speed(2.0);
        assert_eq!(p.advance(0.25, SPAN, false), Advance::Moved);
        assert!((p.cursor - 3.5).abs() < 1e-12, "{}", p.cursor);
        p.set_speed(0.1);
        p.advance(0.5, SPAN, false);
        assert!((p.cursor - 3.55).abs() < 1e-12, "{}", p.cursor);
    }

    #[test]
    fn paused_playback_does_not_move() {
        let mut p = Playback::new(3.0);
        assert_eq!(p.advance(0.25, SPAN, false), Advance::Paused);
        assert_eq!(p.cursor, 3.0);
    }

    #[test]
    fn a_stalled_frame_moves_at_most_the_frame_cap() {
        let mut p = playing(3.0);
        p.advance(30.0, SPAN, false);
        assert!(
            (p.cursor - (3.0 + MAX_FRAME_DT)).abs() < 1e-12,
            "{}",
            p.cursor
        );
        p.advance(f64::NAN, SPAN, false);
        assert!((p.cursor - (3.0 + MAX_FRAME_DT)).abs() < 1e-12);
    }

    #[test]
    fn the_end_pauses_there_without_loop() {
        let mut p = playing(11.9);
        assert_eq!(p.advance(0.25, SPAN, false), Advance::Ended);
        assert_eq!(p.cursor, 12.0);
        assert!(!p.playing);
    }

    #[test]
    fn the_end_wraps_to_the_start_with_loop() {
        let mut p = playing(11.9);
        p.looping = true;
        assert_eq!(p.advance(0.25, SPAN, false), Advance::Wrapped);
        assert!((p.cursor - 2.15).abs() < 1e-9, "{}", p.cursor);
        assert!(p.playing);
    }

    #[test]
    fn the_end_of_a_file_still_loading_waits_for_more() {
        let mut p = playing(11.9);
        p.looping = true;
        assert_eq!(p.advance(0.25, SPAN, true), Advance::Waiting);
        assert_eq!(p.cursor, 12.0);
        assert!(p.playing);
        // More arrived: playing continues from there.
        assert_eq!(p.advance(0.25, Some((2.0, 20.0)), true), Advance::Moved);
        assert!((p.cursor - 12.25).abs() < 1e-12);
    }

    #[test]
    fn a_cursor_before_the_span_starts_from_its_beginning() {
        let mut p = playing(0.0);
        p.advance(0.25, SPAN, false);
        assert!((p.cursor - 2.25).abs() < 1e-12, "{}", p.cursor);
    }

    #[test]
    fn nothing_loaded_means_nothing_to_play() {
        let mut p = playing(0.0);
        assert_eq!(p.advance(0.25, None, true), Advance::Paused);
        assert_eq!(p.cursor, 0.0);
    }

    #[test]
    fn seek_clamps_into_the_span() {
        let mut p = Playback::new(5.0);
        p.seek(100.0, SPAN);
        assert_eq!(p.cursor, 12.0);
        p.seek(-3.0, SPAN);
        assert_eq!(p.cursor, 2.0);
        p.seek(f64::NAN, SPAN);
        assert_eq!(p.cursor, 2.0);
        p.seek(7.5, SPAN);
        assert_eq!(p.cursor, 7.5);
    }

    #[test]
    fn speed_is_clamped_to_the_offered_range() {
        let mut p = Playback::new(0.0);
        p.set_speed(50.0);
        assert_eq!(p.speed, MAX_SPEED);
        p.set_speed(0.0);
        assert_eq!(p.speed, MIN_SPEED);
        p.set_speed(f64::INFINITY);
        assert_eq!(p.speed, MIN_SPEED);
    }

    #[test]
    fn play_at_the_end_starts_again_from_the_beginning() {
        let mut p = Playback::new(12.0);
        p.toggle(SPAN);
        assert!(p.playing);
        assert_eq!(p.cursor, 2.0);
        p.toggle(SPAN);
        assert!(!p.playing);
        assert_eq!(p.cursor, 2.0);
        let mut q = Playback::new(5.0);
        q.toggle(SPAN);
        assert_eq!(q.cursor, 5.0, "play elsewhere resumes where it is");
    }

    #[test]
    fn stepping_pauses_and_moves_only_when_there_is_a_target() {
        let mut p = playing(5.0);
        assert!(!p.step_to(None, SPAN));
        assert!(p.playing);
        assert_eq!(p.cursor, 5.0);
        assert!(p.step_to(Some(6.5), SPAN));
        assert!(!p.playing);
        assert_eq!(p.cursor, 6.5);
    }

    fn marks(ts: &[f64]) -> Vec<Mark> {
        ts.iter()
            .map(|&t| Mark {
                t,
                kind: MarkKind::Status,
                label: String::new(),
            })
            .collect()
    }

    #[test]
    fn mark_navigation_skips_the_mark_under_the_cursor() {
        let m = marks(&[1.0, 2.0, 2.0, 5.0]);
        assert_eq!(next_mark(&m, 2.0).map(|m| m.t), Some(5.0));
        assert_eq!(next_mark(&m, 0.0).map(|m| m.t), Some(1.0));
        assert_eq!(next_mark(&m, 5.0), None);
        assert_eq!(prev_mark(&m, 2.0).map(|m| m.t), Some(1.0));
        assert_eq!(prev_mark(&m, 4.0).map(|m| m.t), Some(2.0));
        assert_eq!(prev_mark(&m, 1.0), None);
    }

    #[test]
    fn wall_clock_is_start_plus_elapsed() {
        assert_eq!(wall_ns(1_000_000_000, 1.5), 2_500_000_000);
        assert_eq!(wall_ns(1_000_000_000, -2.0), 0);
    }

    #[test]
    fn durations_and_counts_read_well() {
        assert_eq!(format_hms(2472.0, false), "0:41:12");
        assert_eq!(format_hms(3723.4567, true), "1:02:03.457");
        assert_eq!(format_hms(-1.5, true), "-0:00:01.500");
        assert_eq!(group_digits(45_123), "45 123");
        assert_eq!(group_digits(1_234_567), "1 234 567");
        assert_eq!(group_digits(12), "12");
        assert_eq!(format_speed(0.25), "0.25×");
        assert_eq!(format_speed(10.0), "10×");
        assert_eq!(format_speed(0.1), "0.1×");
    }
}
