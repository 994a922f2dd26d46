//! Status bar: our own JAUS ID (in the danger colour while another client uses it), report
//! rates per signal, drops and malformed counters, last outcome and error, the recording's
//! figures and a replay's loading state.

use std::fmt::Write as _;

use eframe::egui::{self, RichText};

use crate::model::history::History;
use crate::model::state::{ArmState, outcome_text};
use crate::model::update::{ComponentId, Delivery, Outcome, Signal};
use crate::ui::commands::UiCommand;
use crate::ui::exact::ExactStatus;
use crate::ui::format::{format_hms, group_digits};
use crate::ui::memory::{Budget, format_bytes};
use crate::ui::sources::ReplayState;
use crate::ui::theme::Theme;
use crate::ui::time_control::Shown;
use crate::ui::words::last_outcome;

/// What the status bar shows.
pub struct StatusBar<'a> {
    /// The state drawn.
    pub state: &'a ArmState,
    /// What the window shows.
    pub shown: Shown,
    /// The drawn time, s.
    pub time: f64,
    /// The recording's figures, while recording.
    pub recording: Option<String>,
    /// The live view server's address and viewers, while it runs.
    pub live_view: Option<String>,
    /// The replay, when one is open.
    pub replay: Option<&'a ReplayState>,
    /// Joint positions measured per second over the last second before the drawn time.
    pub positions_rate: f64,
    /// Our own JAUS ID and whether another client uses it too, from the live arm's state
    /// (`None` without a live source, or before the network side has said).
    pub ocu: Option<(ComponentId, bool)>,
    /// The live socket's receive buffer is smaller than wanted: the advice (what caps it and
    /// the command that lifts it), shown with the kernel's drop count once it is not zero.
    pub short_buffer: Option<&'a str>,
    /// The sessions' memory: used, budget, what is held as an envelope.
    pub memory: Memory,
}

/// What the status bar says of memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Bytes the sessions hold.
    pub used: u64,
    /// The budget in force.
    pub budget: Budget,
    /// Before this time (s) the drawn session holds samples as a min/max envelope only.
    pub envelope_before: Option<f64>,
    /// The drawn time is in the envelope-only part and a recording of it runs: a click on the
    /// memory figure opens it at the drawn time for the exact values.
    pub recording_holds_exact: bool,
    /// A replay's exact values read back from its file.
    pub exact: ExactStatus,
}

impl Memory {
    /// Nothing held (tests, the offscreen render).
    pub fn none(budget: Budget) -> Self {
        Self {
            used: 0,
            budget,
            envelope_before: None,
            recording_holds_exact: false,
            exact: ExactStatus::Idle,
        }
    }
}

/// The memory figure, and what is held as an envelope (said, never silent). A click opens the
/// running recording at the drawn time when it holds what the session keeps only as an
/// envelope: returns whether it was clicked.
fn memory(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) -> bool {
    let m = &bar.memory;
    let figure = format!(
        "mem {} / {}",
        format_bytes(m.used),
        format_bytes(m.budget.bytes)
    );
    let mut hover = format!(
        "Memory held by the session's history: {} of its budget, {}.",
        format_bytes(m.used),
        m.budget
    );
    let Some(edge) = m.envelope_before else {
        ui.label(RichText::new(figure).small().color(theme.muted))
            .on_hover_text(hover);
        ui.separator();
        return false;
    };
    let edge_text = format_hms(edge, false);
    let text = match &m.exact {
        ExactStatus::Reading { fraction, .. } => format!(
            "{figure} · before {edge_text} envelope · reading exact values {:.0} %",
            fraction * 100.0
        ),
        ExactStatus::Ready { t0, t1 }
            if bar.shown.is_past() && *t0 <= bar.time && bar.time <= *t1 =>
        {
            format!("{figure} · before {edge_text} envelope · exact values from the file")
        }
        _ => format!("{figure} · before {edge_text} envelope"),
    };
    let _ = write!(
        hover,
        "\nSamples before {edge_text} are held as their min/max envelope: the plots still draw \
         every peak of the whole session at their width, but a value read there is one \
         sample per block (of 64 samples or more), not every sample."
    );
    match (&m.exact, m.recording_holds_exact) {
        (ExactStatus::Failed(why), _) => {
            let _ = write!(hover, "\nReading exact values from the file failed: {why}");
        }
        (_, true) => hover.push_str(
            "\nThe recording running holds every exact value: click to open it at the drawn \
             time (a replay over live; L comes back).",
        ),
        _ if bar.shown.is_replay() => hover.push_str(
            "\nIn a replay, the exact values around the cursor are read again from the file.",
        ),
        _ => hover.push_str(
            "\nRecord (R) to keep every exact value in a file; raise the budget in View → \
             Memory or with --memory-limit.",
        ),
    }
    let label = egui::Label::new(RichText::new(text).small().color(theme.warn));
    let clicked = if m.recording_holds_exact {
        ui.add(label.sense(egui::Sense::click()))
            .on_hover_text(hover)
            .clicked()
    } else {
        ui.add(label).on_hover_text(hover);
        false
    };
    ui.separator();
    clicked
}

/// One signal's rate as the status bar writes it: `positions 20 Hz (polled)`; 0 while
/// `stale`; the joint positions' rate is the `measured` one.
pub fn signal_rate(signal: Signal, delivery: Delivery, stale: bool, measured: f64) -> String {
    let (nominal, how) = match delivery {
        Delivery::Event(r) => (r, "event"),
        Delivery::OnChange => (0.0, "on change"),
        Delivery::Polling(r) => (r, "polled"),
    };
    let rate = if stale {
        0.0
    } else if signal == Signal::JointPositions {
        measured
    } else {
        nominal
    };
    if matches!(delivery, Delivery::OnChange) && !stale {
        format!("{} on change", signal.name())
    } else {
        format!("{} {rate:.0} Hz ({how})", signal.name())
    }
}

/// Samples of `history` within the second before `t`, per second (where the history holds
/// only an envelope, counted to its blocks).
pub fn measured_rate(history: &History, t: f64) -> f64 {
    history
        .count_until(t, true)
        .saturating_sub(history.count_until(t - 1.0, true)) as f64
}

/// Draws the status bar: one line whatever it holds, so nothing above it moves when a
/// message arrives. The last command outcome and error keep the right part (up to half the
/// width), cut with "…" when longer, their whole text in the tooltip; the facts take the
/// rest, clipped at its end. Returns whether the operator asked for the running recording at
/// the drawn time (a click on the memory figure, see [`Memory::recording_holds_exact`]).
pub fn show(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) -> bool {
    let height = ui.spacing().interact_size.y;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(ui.available_width(), height),
        egui::Sense::hover(),
    );
    let message = message(bar.state, theme, ui.style());
    let message_w = message.as_ref().map_or(0.0, |(job, _)| {
        let galley = ui.fonts_mut(|f| f.layout_job(job.clone()));
        (galley.size().x + 8.0).min(rect.width() * 0.5)
    });
    let split = rect.right() - message_w;
    let child = |ui: &mut egui::Ui, r: egui::Rect, layout| {
        let mut c = ui.new_child(egui::UiBuilder::new().max_rect(r).layout(layout));
        c.set_clip_rect(r.intersect(ui.clip_rect()));
        c
    };
    let left = egui::Layout::left_to_right(egui::Align::Center);
    let mut facts_ui = child(ui, rect.with_max_x(split), left);
    let open_recording = facts(&mut facts_ui, bar, theme);
    if let Some((job, full)) = message {
        let mut m = child(
            ui,
            rect.with_min_x(split),
            egui::Layout::right_to_left(egui::Align::Center),
        );
        m.add(egui::Label::new(job).truncate()).on_hover_text(full);
    }
    open_recording
}

/// The live view server's address and viewers, while it runs.
fn live_view(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) {
    if let Some(text) = &bar.live_view {
        ui.label(RichText::new(text).small().color(theme.accent))
            .on_hover_text(
                "The live session is served read-only to Foxglove / Lichtblick viewers \
                 (View > Live view server stops it)",
            );
        ui.separator();
    }
}

/// `text` with its first letter in capitals (the advice is written to follow "net: ").
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The last command outcome and the last error as one line, and its whole text.
fn message(
    state: &ArmState,
    theme: &Theme,
    style: &egui::Style,
) -> Option<(egui::text::LayoutJob, String)> {
    let mut parts: Vec<(String, egui::Color32)> = Vec::new();
    if let Some((kind, outcome)) = &last_outcome(state) {
        let colour = match outcome {
            Outcome::Confirmed | Outcome::Completed => theme.ok,
            _ => theme.danger,
        };
        parts.push((
            format!("{}: {}", kind.name(), outcome_text(outcome, state)),
            colour,
        ));
    }
    if let Some((t, e)) = state.errors.last() {
        parts.push((format!("{t:.1} s: {e}"), theme.danger));
    }
    if parts.is_empty() {
        return None;
    }
    let full = parts
        .iter()
        .map(|(text, _)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut job = egui::text::LayoutJob::default();
    for (i, (text, colour)) in parts.into_iter().enumerate() {
        let text = if i == 0 {
            text
        } else {
            format!("  ·  {text}")
        };
        RichText::new(text).small().color(colour).append_to(
            &mut job,
            style,
            egui::FontSelection::Default,
            egui::Align::Center,
        );
    }
    Some((job, full))
}

/// The facts: our JAUS ID, the recording, the replay, rates, latency and counters.
fn facts(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) -> bool {
    let state = bar.state;
    if let Some((id, conflict)) = bar.ocu {
        let (colour, hover) = if conflict {
            (
                theme.danger,
                format!(
                    "This OCU's JAUS ID, {id}: ANOTHER OCU USES IT TOO. Commands but the \
                         emergency stop are refused until it is resolved"
                ),
            )
        } else {
            (
                theme.muted,
                format!("This OCU's own JAUS ID on the network: {id}"),
            )
        };
        let mut text = RichText::new(format!("OCU {id}")).small().color(colour);
        if conflict {
            text = text.strong();
        }
        ui.label(text).on_hover_text(hover);
        ui.separator();
    }
    let open_recording = memory(ui, bar, theme);
    if let Some(text) = &bar.recording {
        let keys = UiCommand::ToggleRecording.keys_text(bar.shown);
        ui.label(
            RichText::new(format!("{text}  "))
                .small()
                .strong()
                .color(theme.recording),
        )
        .on_hover_text(format!(
            "Recording every datagram of the live session ({keys} stops)"
        ));
        ui.separator();
    }
    live_view(ui, bar, theme);
    if let Some(r) = bar.replay {
        let p = &r.progress;
        let name = r.name();
        let (text, colour) = if !p.finished {
            (
                format!("{name}: loading {:.0} %", p.fraction() * 100.0),
                theme.accent,
            )
        } else if let Some(why) = &p.stopped {
            (
                format!(
                    "{name}: loaded partly ({} datagrams): {why}",
                    group_digits(p.datagrams)
                ),
                theme.warn,
            )
        } else {
            (
                format!("{name}: {} datagrams", group_digits(p.datagrams)),
                theme.muted,
            )
        };
        let problems = if p.problems.is_empty() {
            String::new()
        } else {
            format!(" · {} problem(s)", p.problems.len())
        };
        ui.label(
            RichText::new(format!("{text}{problems}"))
                .small()
                .color(colour),
        )
        .on_hover_text(if p.problems.is_empty() {
            "What the replay's file held".to_string()
        } else {
            p.problems.join("\n")
        });
        ui.separator();
    }
    let lost = state.freshness().is_lost();
    for (signal, d) in &state.delivery {
        let stale = lost || state.stale.get(signal).copied().unwrap_or(false);
        let text = signal_rate(*signal, *d, stale, bar.positions_rate);
        let colour = if lost {
            theme.danger
        } else if stale {
            theme.warn
        } else {
            theme.muted
        };
        ui.label(RichText::new(text).small().color(colour))
            .on_hover_text(
                "Samples per second arriving now (measured for the joint positions; 0 while the \
                 signal is stale or the link lost), and how the signal is delivered",
            );
    }
    // Age of the newest joint sample when this frame is drawn: receive-to-display latency
    // live; in a replay, how old the drawn positions are at the cursor.
    if let Some(p) = &state.positions {
        let age_ms = (bar.time - p.t) * 1000.0;
        let (name, hover) = if bar.shown.is_past() {
            (
                "sample age",
                "Age of the joint positions drawn, at the cursor",
            )
        } else {
            (
                "latency",
                "Age of the newest joint sample when this frame was drawn",
            )
        };
        ui.label(
            RichText::new(format!("{name} {age_ms:.0} ms"))
                .small()
                .color(theme.muted),
        )
        .on_hover_text(hover);
    }
    ui.separator();
    counters(ui, bar, theme);
    open_recording
}

/// The OCU's own network counters; a replay has none of its own.
fn counters(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) {
    let s = &bar.state.stats;
    if !bar.shown.is_replay() || s.datagrams > 0 {
        let text = format!(
            "rx {}  malformed {}  foreign {}  dup {}  dropped {}",
            s.datagrams,
            s.malformed,
            s.foreign_version + s.foreign_reports,
            s.duplicates,
            s.queue_dropped + s.updates_dropped
        );
        ui.label(RichText::new(text).small().color(theme.muted)).on_hover_text(format!(
                "Datagrams received; malformed; from other components or JUDP versions; duplicates suppressed; dropped because a thread was behind. Network threads scheduled: {}.",
                s.scheduling.label()
            ));
        // The kernel's drops at our socket (Linux says; elsewhere unknown and not shown).
        // A receive buffer smaller than wanted is said only once it has cost something: the
        // drop count carries the advice then (the exact command); before, the operator has
        // nothing to do about it (the log said it once at start).
        if let Some(k) = s.kernel_dropped.filter(|&k| k > 0) {
            let hover = bar.short_buffer.map_or_else(
                || "Datagrams the operating system dropped because the socket's receive buffer was full (the machine was too busy to read them in time). Raise net.core.rmem_max (sudo sysctl -w net.core.rmem_max=8388608) or free a core.".to_string(),
                |advice| format!("Datagrams the operating system dropped because the socket's receive buffer was full. {}.", capitalised(advice)),
            );
            ui.label(
                RichText::new(format!("kernel dropped {k}"))
                    .small()
                    .color(theme.warn),
            )
            .on_hover_text(hover);
        }
        let tolerated = s.tolerated.total();
        if tolerated > 0 {
            ui.label(RichText::new(format!("tolerated {tolerated}")).small().color(theme.muted))
                    .on_hover_text(
                        "Deviations of the peer from the wire reference that were accepted (ACK with payload, short emergency code, wildcard ReportServices, ReportControl byte order); `inspect --summary --json` counts them per kind in a recording.",
                    );
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests report a failure by panicking")]

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::{Budget, Memory, StatusBar, show};
    use crate::model::state::ArmState;
    use crate::ui::theme::Theme;
    use crate::ui::time_control::Shown;

    fn bar(state: &ArmState, short_buffer: Option<&'static str>) -> Harness<'static> {
        let state = state.clone();
        Harness::builder()
            .with_size([1280.0, 30.0])
            .build_ui(move |ui| {
                let bar = StatusBar {
                    state: &state,
                    shown: Shown::Live,
                    time: 1.0,
                    recording: None,
                    live_view: None,
                    replay: None,
                    positions_rate: 0.0,
                    ocu: None,
                    short_buffer,
                    memory: Memory::none(Budget::choose(None, None, None)),
                };
                show(ui, &bar, &Theme::new(true));
            })
    }

    #[test]
    fn the_envelope_is_said_and_a_click_opens_the_recording_only_when_one_holds_it() {
        use std::sync::{Arc, Mutex};
        for recording in [true, false] {
            let clicked = Arc::new(Mutex::new(false));
            let seen = clicked.clone();
            let mut h = Harness::builder()
                .with_size([1280.0, 30.0])
                .build_ui(move |ui| {
                    let state = ArmState::default();
                    let mut memory = Memory::none(Budget::choose(Some(64 << 20), None, None));
                    memory.used = 60 << 20;
                    memory.envelope_before = Some(3723.0);
                    memory.recording_holds_exact = recording;
                    let bar = StatusBar {
                        state: &state,
                        shown: Shown::LiveScrubbed { t: 100.0 },
                        time: 100.0,
                        recording: None,
                        live_view: None,
                        replay: None,
                        positions_rate: 0.0,
                        ocu: None,
                        short_buffer: None,
                        memory,
                    };
                    if show(ui, &bar, &Theme::new(true)) {
                        *seen.lock().unwrap() = true;
                    }
                });
            h.run();
            let label = h.get_by_label_contains("mem 60 MB / 64 MB · before 1:02:03 envelope");
            label.click();
            h.run();
            assert_eq!(*clicked.lock().unwrap(), recording, "recording {recording}");
        }
    }

    #[test]
    fn a_short_receive_buffer_is_said_only_once_the_kernel_dropped_with_the_advice() {
        let advice = "the UDP receive buffer is 416 KiB, not the 16384 KiB wanted: raise it";
        // Nothing dropped yet: nothing for the operator to do, nothing said.
        let mut h = bar(&ArmState::default(), Some(advice));
        h.run();
        assert!(h.query_by_label_contains("receive buffer").is_none());
        assert!(h.query_by_label_contains("kernel dropped").is_none());
        let mut state = ArmState::default();
        state.stats.datagrams = 10;
        state.stats.kernel_dropped = Some(3);
        let mut h = bar(&state, Some(advice));
        h.run();
        h.get_by_label("kernel dropped 3").hover();
        h.run();
        assert!(
            h.query_by_label_contains("The UDP receive buffer is 416 KiB")
                .is_some()
        );
    }
}
