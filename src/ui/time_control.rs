//! What time the window draws, and what that means for the operator's commands. No egui here:
//! the rules are unit-tested on their own.
//!
//! - [`Playback`]: the playback rules over one cursor (advance by wall-clock time × speed,
//!   clamp, loop, pause at the end, wait for a file still loading, seek, step).
//! - Stepping: ← → move by one pixel column of the plots (at least; to the report there,
//!   [`TimeCommand::Step`]), Alt + ← → by one report ([`TimeCommand::StepReport`]).
//! - [`TimeControl`]: the one place the drawn time lives. It changes only through
//!   [`TimeCommand`]s and [`TimeControl::tick`], each given what its rules need
//!   ([`TimeContext`]: the session's span, reports and marks, whether it is a replay still
//!   loading, and "now"), in the manner of Rerun's `re_viewer_context` time control.
//! - [`Shown`]: what the window shows — live, live scrubbed back, a replay, or a replay over
//!   a running live source — derived from the sources and the time control, never stored.
//!   The operator-trust rule "what you see is what you command" is [`Shown::allows`], the
//!   one place that says which commands may leave in which mode.

use crate::model::command::Command;
use crate::model::session::{Mark, Session};

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

/// What the window shows. Derived each frame from the sources (is a live source running? is
/// a replay open?) and the [`TimeControl`]; panels ask it instead of checking the sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shown {
    /// The live source, following now.
    Live,
    /// The live source's session at an earlier time `t` (the live session keeps filling).
    LiveScrubbed {
        /// The drawn time, s since the live session started.
        t: f64,
    },
    /// A recording or capture at time `t`; no live source runs underneath.
    Replay {
        /// The drawn time, s since the replayed session started.
        t: f64,
    },
    /// A recording or capture at time `t`, over a live source that still runs.
    ReplayOverLive {
        /// The drawn time, s since the replayed session started.
        t: f64,
    },
}

impl Shown {
    /// One of each kind (at time 0), for walking a table through every mode.
    pub const ALL: [Shown; 4] = [
        Shown::Live,
        Shown::LiveScrubbed { t: 0.0 },
        Shown::Replay { t: 0.0 },
        Shown::ReplayOverLive { t: 0.0 },
    ];

    /// The time drawn: `now` following live, the cursor otherwise.
    pub fn time(self, now: f64) -> f64 {
        self.cursor().unwrap_or(now)
    }

    /// The cursor, unless the window follows now.
    pub fn cursor(self) -> Option<f64> {
        match self {
            Shown::Live => None,
            Shown::LiveScrubbed { t } | Shown::Replay { t } | Shown::ReplayOverLive { t } => {
                Some(t)
            }
        }
    }

    /// Whether what is drawn is not the newest live state (scrubbed back or a replay).
    pub fn is_past(self) -> bool {
        self != Shown::Live
    }

    /// Whether a replay is shown.
    pub fn is_replay(self) -> bool {
        matches!(self, Shown::Replay { .. } | Shown::ReplayOverLive { .. })
    }

    /// Whether a live arm runs underneath what is shown: everywhere but a replay on its own.
    /// The top bar's LIVE ARM area and the banner are drawn from it (issue 12).
    pub fn has_live_arm(self) -> bool {
        !matches!(self, Shown::Replay { .. })
    }

    /// What you see is what you command: whether `cmd` may leave while this is shown. One
    /// rule (issue 18): the LIVE ARM area of the top bar and the banner always show the live
    /// arm, whatever time is drawn, so the commands given from them (emergency stop, clear
    /// emergency, resume, request and release control, selecting an arm) reach the live arm
    /// live, scrubbed back, and over a replay alike; only a replay with no live source
    /// underneath has no arm to command.
    ///
    /// Going to a preset is the exception, allowed only while following live: its button is
    /// in the preset picker, which draws the state at the drawn time (the past's pose and
    /// presets, the past's "at this pose"). Offering it there would command the live arm from
    /// a picture of the past, so a button would act on something other than what it shows.
    pub fn allows(self, cmd: &Command) -> bool {
        match cmd {
            Command::GoToPreset { .. } => self == Shown::Live,
            _ => self.has_live_arm(),
        }
    }

    /// A short name of the mode, for messages and tests.
    pub fn name(self) -> &'static str {
        match self {
            Shown::Live => "live",
            Shown::LiveScrubbed { .. } => "live, scrubbed back",
            Shown::Replay { .. } => "replay",
            Shown::ReplayOverLive { .. } => "replay over live",
        }
    }
}

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

/// Play/pause, speed, loop and a cursor, without any UI.
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
    mark_step(marks, t, None, true).and_then(|i| marks.get(i))
}

/// The mark a jump goes to (an index into `marks`, in time order) from time `t`: from the
/// mark `landed` on (the cursor still at it) the one after it in order, even at the same
/// instant (`.` on two marks at one time shows each); else the first after `t` or the last
/// before it.
pub fn mark_step(marks: &[Mark], t: f64, landed: Option<usize>, forward: bool) -> Option<usize> {
    match (landed, forward) {
        (Some(i), true) => Some(i + 1).filter(|&j| j < marks.len()),
        (Some(i), false) => i.checked_sub(1),
        (None, true) => {
            Some(marks.partition_point(|m| m.t <= t + SAME_TIME_S)).filter(|&j| j < marks.len())
        }
        (None, false) => marks
            .partition_point(|m| m.t < t - SAME_TIME_S)
            .checked_sub(1),
    }
}

/// The last mark strictly before `t` (marks in time order).
pub fn prev_mark(marks: &[Mark], t: f64) -> Option<&Mark> {
    mark_step(marks, t, None, false).and_then(|i| marks.get(i))
}

/// An operator's request to move the drawn time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeCommand {
    /// Play or pause. Live: pausing freezes the view at the newest data; playing runs forward
    /// from the cursor and rejoins live at the end.
    TogglePlay,
    /// Move the cursor to `t` (clamped to the session). Live, this also pauses.
    Seek(f64),
    /// Pause and move to the next (`forward`) or previous report; live, past the newest
    /// report means back to following now.
    StepReport {
        /// Next rather than previous.
        forward: bool,
    },
    /// Pause and move by at least `stride` seconds (one pixel column of the plots, ← →):
    /// to the first report at or after that far forward (`forward`), or the last at or
    /// before that far back; when none is that far, to the next or previous report. Live,
    /// past the newest report means back to following now.
    Step {
        /// Forward rather than back.
        forward: bool,
        /// The least distance, s.
        stride: f64,
    },
    /// Pause and move to the next (`forward`) or previous timeline mark.
    JumpMark {
        /// Next rather than previous.
        forward: bool,
    },
    /// To the start of the session.
    Home,
    /// To the end of the session (live: back to following now).
    End,
    /// Playback speed, × real time (clamped to [`MIN_SPEED`]..=[`MAX_SPEED`]).
    SetSpeed(f64),
    /// Wrap to the start at the end.
    SetLoop(bool),
    /// Follow now again (live; nothing to do in a replay).
    FollowLive,
}

/// What the time rules need to know about the session drawn.
#[derive(Debug, Clone, Copy)]
pub struct TimeContext<'a> {
    /// The session drawn (span, reports, marks).
    pub session: &'a Session,
    /// A replay (the cursor never follows now) rather than the live session.
    pub replay: bool,
    /// The session is still growing from a file being loaded.
    pub growing: bool,
    /// Now, s since the live session started.
    pub now: f64,
}

impl TimeContext<'_> {
    fn span(&self) -> Option<(f64, f64)> {
        self.session.span()
    }
}

/// The drawn time: a cursor with play/pause, speed and loop, or "follow now" (live only).
/// Changed only by [`TimeControl::apply`] and [`TimeControl::tick`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeControl {
    playback: Playback,
    /// Following now: the cursor is not used (live only).
    following: bool,
    /// The mark (index into the session's marks) the last mark jump landed on: marks at one
    /// instant are stepped through one by one while the cursor stays there.
    landed: Option<usize>,
}

impl TimeControl {
    /// Following now (a live session).
    pub fn live() -> Self {
        Self {
            playback: Playback::new(0.0),
            following: true,
            landed: None,
        }
    }

    /// Paused at the start, 1×, no loop (a replay just opened).
    pub fn replay() -> Self {
        Self {
            playback: Playback::new(0.0),
            following: false,
            landed: None,
        }
    }

    /// The drawn time, unless following now.
    pub fn cursor(&self) -> Option<f64> {
        (!self.following).then_some(self.playback.cursor)
    }

    /// Whether the cursor advances with wall-clock time.
    pub fn playing(&self) -> bool {
        self.playback.playing
    }

    /// Playback speed, × real time.
    pub fn speed(&self) -> f64 {
        self.playback.speed
    }

    /// Whether playback wraps to the start at the end.
    pub fn looping(&self) -> bool {
        self.playback.looping
    }

    /// Carries out `cmd`. Returns `true` when the time went back to following now (the plots
    /// then follow too).
    pub fn apply(&mut self, cmd: TimeCommand, cx: &TimeContext<'_>) -> bool {
        let span = cx.span();
        match cmd {
            TimeCommand::TogglePlay if cx.replay => {
                self.playback.toggle(span);
                self.following = false;
            }
            TimeCommand::TogglePlay if self.following => {
                // Freeze the view at the newest data.
                let t = span.map_or(cx.now, |s| s.1);
                self.playback.playing = false;
                self.seek(t, span);
            }
            TimeCommand::TogglePlay => self.playback.playing = !self.playback.playing,
            TimeCommand::Seek(t) => {
                if !cx.replay {
                    self.playback.playing = false;
                }
                self.seek(t, span);
            }
            TimeCommand::StepReport { forward } => {
                let from = self.from(span);
                let target = if forward {
                    cx.session.next_report(from)
                } else {
                    cx.session.prev_report(from)
                };
                if target.is_none() && forward && !cx.replay {
                    return self.follow_live(cx);
                }
                self.step_to(target, span);
            }
            TimeCommand::Step { forward, stride } => {
                let from = self.from(span);
                let stride = if stride.is_finite() {
                    stride.max(0.0)
                } else {
                    0.0
                };
                let s = cx.session;
                let target = if forward {
                    s.next_report(from + stride - SAME_TIME_S)
                        .or_else(|| s.next_report(from))
                } else {
                    s.prev_report(from - stride + SAME_TIME_S)
                        .or_else(|| s.prev_report(from))
                };
                if target.is_none() && forward && !cx.replay {
                    return self.follow_live(cx);
                }
                self.step_to(target, span);
            }
            TimeCommand::JumpMark { forward } => {
                let from = self.from(span);
                let marks = &cx.session.marks;
                let target = mark_step(marks, from, self.landed_at(marks, from), forward);
                if target.is_some() {
                    self.landed = target;
                }
                self.step_to(target.and_then(|i| marks.get(i)).map(|m| m.t), span);
            }
            TimeCommand::Home => {
                if let Some((a, _)) = span {
                    self.playback.playing = false;
                    self.seek(a, span);
                }
            }
            TimeCommand::End if !cx.replay => return self.follow_live(cx),
            TimeCommand::End => {
                if let Some((_, b)) = span {
                    self.playback.playing = false;
                    self.seek(b, span);
                }
            }
            TimeCommand::SetSpeed(s) => self.playback.set_speed(s),
            TimeCommand::SetLoop(on) => self.playback.looping = on,
            TimeCommand::FollowLive => return self.follow_live(cx),
        }
        false
    }

    /// Advances playback by `dt` seconds of wall-clock time (once per frame). A replay plays
    /// within what is loaded; live, only a scrubbed-back cursor plays, and reaching the newest
    /// data rejoins live (then `true` is returned).
    pub fn tick(&mut self, dt: f64, cx: &TimeContext<'_>) -> bool {
        let span = cx.span();
        if cx.replay {
            self.playback.advance(dt, span, cx.growing);
            self.playback.clamp_to(span);
            return false;
        }
        if self.following || !self.playback.playing {
            return false;
        }
        // Live playback never loops: its end is now.
        let looping = std::mem::replace(&mut self.playback.looping, false);
        let advance = self.playback.advance(dt, span, false);
        self.playback.looping = looping;
        advance == Advance::Ended && self.follow_live(cx)
    }

    fn seek(&mut self, t: f64, span: Option<(f64, f64)>) {
        self.playback.seek(t, span);
        self.following = false;
    }

    fn step_to(&mut self, t: Option<f64>, span: Option<(f64, f64)>) {
        if self.playback.step_to(t, span) {
            self.following = false;
        }
    }

    /// The mark the last mark jump landed on, while the cursor is still at it (an index
    /// into `marks`): the event log highlights it, and the next jump goes on from it.
    pub fn landed_at(&self, marks: &[Mark], at: f64) -> Option<usize> {
        self.landed.filter(|&i| {
            marks
                .get(i)
                .is_some_and(|m| (m.t - at).abs() <= SAME_TIME_S)
        })
    }

    /// Where stepping starts: the cursor, or the newest data while following.
    fn from(&self, span: Option<(f64, f64)>) -> f64 {
        self.cursor().unwrap_or_else(|| span.map_or(0.0, |s| s.1))
    }

    fn follow_live(&mut self, cx: &TimeContext<'_>) -> bool {
        if cx.replay {
            return false;
        }
        self.following = true;
        self.playback.playing = false;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{ArmFact, MarkKind, NetFact, Remark};

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
            .map(|&t| Mark::new(t, MarkKind::Status, String::new()))
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

    /// Joint positions at 1, 2, … 10 s and a mark at 4 s.
    fn session() -> Session {
        let mut s = Session::new();
        for i in 1..=10 {
            s.apply_arm(&ArmFact::JointPositions {
                t: f64::from(i),
                values: vec![f64::from(i)],
            });
            if i == 4 {
                s.apply_net(&NetFact::Remark(Remark::Mark {
                    t: 4.0,
                    kind: MarkKind::Status,
                    label: "status".into(),
                }));
            }
        }
        s
    }

    fn live(s: &Session) -> TimeContext<'_> {
        TimeContext {
            session: s,
            replay: false,
            growing: false,
            now: 10.5,
        }
    }

    fn replay(s: &Session) -> TimeContext<'_> {
        TimeContext {
            replay: true,
            ..live(s)
        }
    }

    #[test]
    fn pausing_live_freezes_the_view_at_the_newest_data_and_playing_on_rejoins_live() {
        let s = session();
        let mut tc = TimeControl::live();
        assert_eq!(tc.cursor(), None);
        assert!(!tc.apply(TimeCommand::TogglePlay, &live(&s)));
        assert_eq!(tc.cursor(), Some(10.0));
        assert!(!tc.playing());
        tc.apply(TimeCommand::Seek(9.5), &live(&s));
        tc.apply(TimeCommand::TogglePlay, &live(&s));
        assert!(tc.playing());
        assert!(!tc.tick(0.25, &live(&s)));
        assert!((tc.cursor().unwrap() - 9.75).abs() < 1e-12);
        assert!(tc.tick(0.5, &live(&s)), "the end of live data rejoins live");
        assert_eq!(tc.cursor(), None);
        assert!(!tc.playing());
    }

    #[test]
    fn live_seeking_pauses_but_a_replay_keeps_playing() {
        let s = session();
        let mut tc = TimeControl::live();
        tc.apply(TimeCommand::Seek(3.0), &live(&s));
        tc.apply(TimeCommand::TogglePlay, &live(&s));
        tc.apply(TimeCommand::Seek(5.0), &live(&s));
        assert_eq!((tc.cursor(), tc.playing()), (Some(5.0), false));
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::TogglePlay, &replay(&s));
        tc.apply(TimeCommand::Seek(5.0), &replay(&s));
        assert_eq!((tc.cursor(), tc.playing()), (Some(5.0), true));
        tc.apply(TimeCommand::Seek(50.0), &replay(&s));
        assert_eq!(tc.cursor(), Some(10.0), "clamped to the session");
    }

    #[test]
    fn stepping_past_the_newest_report_rejoins_live_but_not_in_a_replay() {
        let s = session();
        let mut tc = TimeControl::live();
        tc.apply(TimeCommand::StepReport { forward: false }, &live(&s));
        assert_eq!(tc.cursor(), Some(9.0), "from the newest report");
        tc.apply(TimeCommand::StepReport { forward: true }, &live(&s));
        assert_eq!(tc.cursor(), Some(10.0));
        assert!(tc.apply(TimeCommand::StepReport { forward: true }, &live(&s)));
        assert_eq!(tc.cursor(), None);
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::End, &replay(&s));
        assert!(!tc.apply(TimeCommand::StepReport { forward: true }, &replay(&s)));
        assert_eq!(tc.cursor(), Some(10.0), "a replay stays at its end");
    }

    #[test]
    fn a_step_moves_at_least_its_stride_to_the_report_there() {
        let s = session();
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::Seek(2.0), &replay(&s));
        // Reports every second: a stride of 2.5 s lands on the report at 5 s.
        tc.apply(
            TimeCommand::Step {
                forward: true,
                stride: 2.5,
            },
            &replay(&s),
        );
        assert_eq!(tc.cursor(), Some(5.0));
        // A stride shorter than the reports' spacing is one report.
        tc.apply(
            TimeCommand::Step {
                forward: true,
                stride: 0.01,
            },
            &replay(&s),
        );
        assert_eq!(tc.cursor(), Some(6.0));
        tc.apply(
            TimeCommand::Step {
                forward: false,
                stride: 2.0,
            },
            &replay(&s),
        );
        assert_eq!(tc.cursor(), Some(4.0), "a report exactly a stride back");
        // Near the end, a stride past the last report goes to the last report.
        tc.apply(TimeCommand::Seek(9.5), &replay(&s));
        tc.apply(
            TimeCommand::Step {
                forward: true,
                stride: 3.0,
            },
            &replay(&s),
        );
        assert_eq!(tc.cursor(), Some(10.0));
        assert!(!tc.playing());
        // Live, past the newest report follows now again.
        let mut tc = TimeControl::live();
        tc.apply(TimeCommand::Seek(10.0), &live(&s));
        assert!(tc.apply(
            TimeCommand::Step {
                forward: true,
                stride: 0.5,
            },
            &live(&s)
        ));
        assert_eq!(tc.cursor(), None);
    }

    #[test]
    fn home_end_and_marks_move_the_cursor_and_pause() {
        let s = session();
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::End, &replay(&s));
        assert_eq!(tc.cursor(), Some(10.0));
        tc.apply(TimeCommand::TogglePlay, &replay(&s));
        assert_eq!(tc.cursor(), Some(1.0), "play from the end starts over");
        tc.apply(TimeCommand::JumpMark { forward: true }, &replay(&s));
        assert_eq!((tc.cursor(), tc.playing()), (Some(4.0), false));
        tc.apply(TimeCommand::JumpMark { forward: true }, &replay(&s));
        assert_eq!(tc.cursor(), Some(4.0), "no later mark: stays");
        tc.apply(TimeCommand::Home, &replay(&s));
        assert_eq!(tc.cursor(), Some(1.0));
        let mut tc = TimeControl::live();
        tc.apply(TimeCommand::Home, &live(&s));
        assert_eq!(tc.cursor(), Some(1.0));
        assert!(
            tc.apply(TimeCommand::End, &live(&s)),
            "live End follows now"
        );
        assert_eq!(tc.cursor(), None);
    }

    #[test]
    fn marks_at_one_instant_are_stepped_through_one_by_one() {
        let m = [1.0, 3.0, 3.0, 5.0].map(|t| Mark::new(t, MarkKind::Note, String::new()));
        assert_eq!(mark_step(&m, 2.0, None, true), Some(1));
        assert_eq!(
            mark_step(&m, 3.0, Some(1), true),
            Some(2),
            "the second at 3 s"
        );
        assert_eq!(mark_step(&m, 3.0, Some(2), true), Some(3));
        assert_eq!(mark_step(&m, 5.0, Some(3), true), None);
        assert_eq!(mark_step(&m, 3.0, Some(2), false), Some(1));
        assert_eq!(
            mark_step(&m, 3.0, None, true),
            Some(3),
            "not landed: past both"
        );
        assert_eq!(mark_step(&m, 3.0, None, false), Some(0));
    }

    #[test]
    fn following_live_means_nothing_to_a_replay() {
        let s = session();
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::Seek(5.0), &replay(&s));
        assert!(!tc.apply(TimeCommand::FollowLive, &replay(&s)));
        assert_eq!(tc.cursor(), Some(5.0));
    }

    #[test]
    fn live_playback_never_loops_and_a_replay_loops_when_asked() {
        let s = session();
        let mut tc = TimeControl::live();
        tc.apply(TimeCommand::SetLoop(true), &live(&s));
        tc.apply(TimeCommand::Seek(9.9), &live(&s));
        tc.apply(TimeCommand::TogglePlay, &live(&s));
        assert!(tc.tick(0.25, &live(&s)));
        assert!(tc.looping(), "the setting is kept for a replay");
        let mut tc = TimeControl::replay();
        tc.apply(TimeCommand::SetLoop(true), &replay(&s));
        tc.apply(TimeCommand::SetSpeed(2.0), &replay(&s));
        tc.apply(TimeCommand::Seek(9.9), &replay(&s));
        tc.apply(TimeCommand::TogglePlay, &replay(&s));
        tc.tick(0.25, &replay(&s));
        assert!(
            (tc.cursor().unwrap() - 1.4).abs() < 1e-9,
            "{:?}",
            tc.cursor()
        );
        assert_eq!(tc.speed(), 2.0);
    }

    #[test]
    fn one_rule_for_the_past_live_commands_reach_the_live_arm_wherever_one_runs() {
        let t = 1.0;
        let live_arm = [
            Shown::Live,
            Shown::LiveScrubbed { t },
            Shown::ReplayOverLive { t },
        ];
        for cmd in [
            Command::RequestControl { authority: 1 },
            Command::ReleaseControl,
            Command::SetEmergency,
            Command::ClearEmergency,
            Command::Resume,
        ] {
            for shown in live_arm {
                assert!(shown.allows(&cmd), "{cmd:?} in {}", shown.name());
            }
            assert!(!Shown::Replay { t }.allows(&cmd), "{cmd:?} in a replay");
        }
        // A preset is commanded only from the live picture.
        let go = Command::GoToPreset { pose_id: 1 };
        assert!(Shown::Live.allows(&go));
        for shown in [
            Shown::LiveScrubbed { t },
            Shown::Replay { t },
            Shown::ReplayOverLive { t },
        ] {
            assert!(!shown.allows(&go), "{}", shown.name());
        }
        assert_eq!(Shown::Live.time(3.0), 3.0);
        assert_eq!(Shown::Replay { t }.time(3.0), 1.0);
        assert!(!Shown::Live.is_past() && Shown::LiveScrubbed { t }.is_past());
    }
}
