//! Status bar: our own JAUS ID (in the danger colour while another client uses it, amber
//! while a stranger sent datagrams with it), the link, report rates per signal, the trust
//! counters (malformed, foreign, duplicates, dropped), last outcome and error, the recording's
//! figures, the live view's viewers and what they lost, and a replay's loading state.
//!
//! One line with priorities (issue 46): each item has a rank and a floor. The link, the rates
//! and the trust counters are always shown (the rates may take their short form, the counters
//! never give way); when the line does not fit, the least important items take their short
//! form first, then go, the ones gone listed under a "+N" chip; the last outcome and error
//! take what is left on the right, cut with "…". Every item cut or shortened gives its whole
//! text in its tooltip. Widths are measured with the fonts each frame ([`fit`]).

use std::fmt::Write as _;

use eframe::egui::{self, Color32, RichText};

use crate::model::history::History;
use crate::model::state::{ArmState, Freshness, outcome_text};
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
    /// The live view server's address, viewers and their losses, while it runs.
    pub live_view: Option<LiveViewLine>,
    /// The replay, when one is open.
    pub replay: Option<&'a ReplayState>,
    /// Joint positions measured per second over the last second before the drawn time.
    pub positions_rate: f64,
    /// Our own JAUS ID and whether another client uses it too, from the live arm's state
    /// (`None` without a live source, or before the network side has said).
    pub ocu: Option<(ComponentId, bool)>,
    /// Datagrams with our JAUS ID came from a stranger's address (nothing refused): where
    /// from and what showed it, from the live arm's state.
    pub ocu_suspect: Option<(Option<std::net::SocketAddr>, String)>,
    /// The live socket's receive buffer is smaller than wanted: the advice (what caps it and
    /// the command that lifts it), shown with the kernel's drop count once it is not zero.
    pub short_buffer: Option<&'a str>,
    /// The sessions' memory: used, budget, what is held as an envelope.
    pub memory: Memory,
}

/// What the status bar says of the live view server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveViewLine {
    /// The whole line: `Live view ws://127.0.0.1:8765 · 2 viewers · 127.0.0.1:40112 lost 5474`.
    pub text: String,
    /// Its short form for a narrow window: `live 2 · lost 5474`.
    pub short: String,
    /// Per viewer, what it was sent and what it did not receive.
    pub hover: String,
    /// Something was not received by a viewer or not decoded for them (the warning colour).
    pub losing: bool,
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

/// How far an item gives way when the line does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// Always shown whole (the trust counters).
    Whole,
    /// Always shown, its short form at least (the link, the rates).
    Short,
    /// May go (listed under the "+N" chip).
    Gone,
}

/// How an item is drawn after [`fit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Its whole text.
    Whole,
    /// Its short form (or, for the last outcome and error, cut to the room left).
    Short,
    /// Not drawn: listed under the "+N" chip.
    Gone,
}

/// One item's widths and priority, for [`fit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Need {
    /// Width of its whole text, points.
    pub whole: f32,
    /// Width of its short form, points (`None`: it has none).
    pub short: Option<f32>,
    /// How far it may give way.
    pub floor: Floor,
    /// 0 the most important; the highest rank gives way first.
    pub rank: u8,
}

impl Need {
    fn width(&self, fit: Fit) -> f32 {
        match fit {
            Fit::Whole => self.whole,
            Fit::Short => self.short.unwrap_or(self.whole),
            Fit::Gone => 0.0,
        }
    }
}

/// Decides which items of a line `width` points wide are drawn whole, short or not at all:
/// items are `gap` apart, and a chip `more` points wide says how many went. The least
/// important item (highest rank; of equal ranks the later one) gives way first, as far as its
/// floor lets it (its short form, then gone) before the next one gives way at all; items that
/// keep their short form (the rates) take it together, all of one rank at once.
pub fn fit(needs: &[Need], width: f32, gap: f32, more: f32) -> Vec<Fit> {
    let mut fits = vec![Fit::Whole; needs.len()];
    let total = |fits: &[Fit]| {
        let shown: Vec<f32> = needs
            .iter()
            .zip(fits)
            .filter(|(_, f)| **f != Fit::Gone)
            .map(|(n, f)| n.width(*f))
            .collect();
        let gone = fits.contains(&Fit::Gone);
        let count = shown.len() + usize::from(gone);
        shown.iter().sum::<f32>()
            + if gone { more } else { 0.0 }
            + gap * count.saturating_sub(1) as f32
    };
    let mut order: Vec<usize> = (0..needs.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(needs[i].rank), std::cmp::Reverse(i)));
    for &i in &order {
        if total(&fits) <= width {
            break;
        }
        if needs[i].floor == Floor::Short {
            // Items that keep their short form (the rates) take it together, as one row.
            for (j, n) in needs.iter().enumerate() {
                if n.floor == Floor::Short && n.rank == needs[i].rank && n.short.is_some() {
                    fits[j] = Fit::Short;
                }
            }
        } else if needs[i].floor == Floor::Gone && needs[i].short.is_some() {
            fits[i] = Fit::Short;
        }
        if total(&fits) > width && needs[i].floor == Floor::Gone {
            fits[i] = Fit::Gone;
        }
    }
    fits
}

/// What an item is, where it matters to drawing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A plain fact.
    Fact,
    /// The memory figure: a click may open the recording.
    Memory,
    /// The last outcome and error: on the right, taking what is left.
    Message,
}

/// One item of the line.
struct Item {
    /// Its whole text.
    text: String,
    /// Its short form, if any.
    short: Option<String>,
    colour: Color32,
    strong: bool,
    /// What it means (the tooltip; the whole text comes first when it is cut).
    hover: String,
    rank: u8,
    floor: Floor,
    /// A separator before it.
    group: bool,
    role: Role,
}

impl Item {
    fn new(text: impl Into<String>, colour: Color32, hover: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            short: None,
            colour,
            strong: false,
            hover: hover.into(),
            rank: 9,
            floor: Floor::Gone,
            group: false,
            role: Role::Fact,
        }
    }

    fn rank(mut self, rank: u8, floor: Floor) -> Self {
        self.rank = rank;
        self.floor = floor;
        self
    }

    fn short(mut self, short: impl Into<String>) -> Self {
        self.short = Some(short.into());
        self
    }

    fn group(mut self) -> Self {
        self.group = true;
        self
    }

    fn rich(&self, text: &str) -> RichText {
        let t = RichText::new(text).small().color(self.colour);
        if self.strong { t.strong() } else { t }
    }
}

/// Width of the last outcome and error at least, when cut, points.
const MESSAGE_MIN: f32 = 140.0;

/// Space between items of a group (the rates), points.
const GAP: f32 = 8.0;

/// More space before an item that starts a group, a separator drawn in it, points.
const GROUP_GAP: f32 = 8.0;

/// Draws the status bar: one line whatever it holds, so nothing above it moves when a
/// message arrives; the items fitted to the width by their priorities ([`fit`]). Returns
/// whether the operator asked for the running recording at the drawn time (a click on the
/// memory figure, see [`Memory::recording_holds_exact`]).
pub fn show(ui: &mut egui::Ui, bar: &StatusBar<'_>, theme: &Theme) -> bool {
    let height = ui.spacing().interact_size.y;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(ui.available_width(), height),
        egui::Sense::hover(),
    );
    let items = items(bar, theme);
    let measure = |ui: &egui::Ui, item: &Item, text: &str| {
        egui::WidgetText::from(item.rich(text))
            .into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Small,
            )
            .size()
            .x
            .ceil()
    };
    let needs: Vec<Need> = items
        .iter()
        .map(|item| {
            // A group's first item carries the separator's room in its widths.
            let extra = if item.group { GROUP_GAP } else { 0.0 };
            let whole = measure(ui, item, &item.text);
            let short = if item.role == Role::Message {
                Some(whole.min(MESSAGE_MIN))
            } else {
                item.short.as_ref().map(|s| measure(ui, item, s))
            };
            Need {
                whole: whole + extra,
                short: short.map(|s| s + extra),
                floor: item.floor,
                rank: item.rank,
            }
        })
        .collect();
    let more_w = measure(ui, &Item::new("", theme.muted, ""), "+99");
    let fits = fit(&needs, rect.width(), GAP, more_w);
    let used: f32 = needs
        .iter()
        .zip(&fits)
        .filter(|(_, f)| **f != Fit::Gone)
        .map(|(n, f)| n.width(*f) + GAP)
        .sum();
    let gone: Vec<&Item> = items
        .iter()
        .zip(&fits)
        .filter(|(_, f)| **f == Fit::Gone)
        .map(|(i, _)| i)
        .collect();
    let chip = if gone.is_empty() { 0.0 } else { more_w + GAP };
    let slack = (rect.width() - used - chip).max(0.0);
    let mut x = rect.left();
    let mut open_recording = false;
    let mut first = true;
    let mut chip_drawn = gone.is_empty();
    for ((item, need), fit) in items.iter().zip(&needs).zip(&fits) {
        if *fit == Fit::Gone {
            continue;
        }
        if item.role == Role::Message && !chip_drawn {
            more(ui, &mut x, (more_w, height, rect.top()), &gone, theme);
            chip_drawn = true;
        }
        let extra = if item.group { GROUP_GAP } else { 0.0 };
        let mut w = need.width(*fit) - extra;
        if item.role == Role::Message {
            // On the right, with whatever room is left.
            if *fit == Fit::Short {
                w = (w + slack).min(need.whole - extra);
            }
            x = x.max(rect.right() - w);
        } else if item.group && !first {
            x += extra;
            ui.painter().vline(
                x - f32::midpoint(GAP, extra),
                rect.y_range().shrink(3.0),
                ui.visuals().widgets.noninteractive.bg_stroke,
            );
        }
        first = false;
        let r = egui::Rect::from_min_size(egui::pos2(x, rect.top()), egui::vec2(w, height));
        x += w + GAP;
        let cut = *fit == Fit::Short;
        let shown_text = match (fit, &item.short, item.role) {
            (Fit::Short, Some(s), Role::Fact | Role::Memory) => s.as_str(),
            _ => item.text.as_str(),
        };
        let mut label = egui::Label::new(item.rich(shown_text));
        label = if cut && item.role == Role::Message {
            label.truncate()
        } else {
            label.extend()
        };
        if item.role == Role::Memory && bar.memory.recording_holds_exact {
            label = label.sense(egui::Sense::click());
        }
        let hover = if cut && !item.hover.is_empty() {
            format!("{}\n{}", item.text, item.hover)
        } else if cut {
            item.text.clone()
        } else {
            item.hover.clone()
        };
        let response = ui.put(r, label);
        let response = if hover.is_empty() {
            response
        } else {
            response.on_hover_text(hover)
        };
        if item.role == Role::Memory && bar.memory.recording_holds_exact && response.clicked() {
            open_recording = true;
        }
    }
    if !chip_drawn {
        more(ui, &mut x, (more_w, height, rect.top()), &gone, theme);
    }
    open_recording
}

/// The "+N" chip at `x` for the items that did not fit, their whole texts in its tooltip.
fn more(
    ui: &mut egui::Ui,
    x: &mut f32,
    (w, h, top): (f32, f32, f32),
    gone: &[&Item],
    theme: &Theme,
) {
    let all: Vec<String> = gone
        .iter()
        .map(|i| {
            if i.hover.is_empty() {
                i.text.clone()
            } else {
                format!("{} — {}", i.text, i.hover)
            }
        })
        .collect();
    let r = egui::Rect::from_min_size(egui::pos2(*x, top), egui::vec2(w, h));
    *x += w + GAP;
    ui.put(
        r,
        egui::Label::new(
            RichText::new(format!("+{}", gone.len()))
                .small()
                .color(theme.muted),
        )
        .extend(),
    )
    .on_hover_text(format!(
        "Not shown for want of room (widen the window):\n{}",
        all.join("\n")
    ));
}

/// The line's items, in the order drawn, each with its rank: the trust counters (0, never
/// cut), the link (1), the rates (2, short at least), our ID while it is in doubt (2, after
/// the rates' short forms), the kernel's drops (3), the live view (4, short at least: its
/// losses), the recording (5, short at least), the last outcome and error (6, its first words
/// at least), then the rest.
fn items(bar: &StatusBar<'_>, theme: &Theme) -> Vec<Item> {
    let mut out = Vec::new();
    out.extend(ocu(bar, theme));
    out.push(memory(bar, theme));
    if let Some(text) = &bar.recording {
        let keys = UiCommand::ToggleRecording.keys_text(bar.shown);
        let short = text.split(" · ").next().unwrap_or(text).to_owned();
        let mut item = Item::new(
            text.clone(),
            theme.recording,
            format!("Recording every datagram of the live session ({keys} stops)"),
        )
        .rank(5, Floor::Short)
        .short(short)
        .group();
        item.strong = true;
        out.push(item);
    }
    if let Some(live) = &bar.live_view {
        let colour = if live.losing {
            theme.warn
        } else {
            theme.accent
        };
        out.push(
            Item::new(
                live.text.clone(),
                colour,
                format!(
                    "The live session is served read-only to Foxglove / Lichtblick viewers \
                     (View > Live view server stops it).\n{}",
                    live.hover
                ),
            )
            .rank(4, Floor::Short)
            .short(live.short.clone())
            .group(),
        );
    }
    out.extend(replay(bar, theme));
    let state = bar.state;
    let freshness = state.freshness();
    let lost = freshness.is_lost();
    if bar.ocu.is_some() || !state.delivery.is_empty() {
        let colour = match freshness {
            Freshness::Lost { .. } => theme.danger,
            Freshness::Stale { .. } => theme.warn,
            Freshness::Waiting | Freshness::Live => theme.muted,
        };
        let mut item = Item::new(
            format!("link {}", freshness.word()),
            colour,
            "The focused arm's link: live (reports on time), stale (some overdue), lost \
             (silent: everything drawn is the last known), waiting (nothing yet)",
        )
        .rank(1, Floor::Whole)
        .group();
        item.strong = lost;
        out.push(item);
    }
    for (signal, d) in &state.delivery {
        let stale = lost || state.stale.get(signal).copied().unwrap_or(false);
        let text = signal_rate(*signal, *d, stale, bar.positions_rate);
        let short = short_rate(*signal, *d, stale, bar.positions_rate);
        let colour = if lost {
            theme.danger
        } else if stale {
            theme.warn
        } else {
            theme.muted
        };
        out.push(
            Item::new(
                text,
                colour,
                "Samples per second arriving now (measured for the joint positions; 0 while \
                 the signal is stale or the link lost), and how the signal is delivered",
            )
            .rank(2, Floor::Short)
            .short(short),
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
        out.push(
            Item::new(format!("{name} {age_ms:.0} ms"), theme.muted, hover).rank(8, Floor::Gone),
        );
    }
    counters(&mut out, bar, theme);
    out.extend(message(state, theme));
    out
}

/// Our own JAUS ID: in danger while another client uses it (commands refused), amber while a
/// stranger sent datagrams with it (nothing refused: said here, where nothing moves, not in
/// the banner's strip over the tiles).
fn ocu(bar: &StatusBar<'_>, theme: &Theme) -> Option<Item> {
    let (id, conflict) = bar.ocu?;
    let item = if conflict {
        let mut item = Item::new(
            format!("OCU {id}"),
            theme.danger,
            format!(
                "This OCU's JAUS ID, {id}: ANOTHER OCU USES IT TOO. Commands but the emergency \
                 stop are refused until it is resolved"
            ),
        )
        .rank(3, Floor::Whole);
        item.strong = true;
        item
    } else if let Some((from, evidence)) = &bar.ocu_suspect {
        let from = from.map_or(String::new(), |a| format!(" from {a}"));
        Item::new(
            format!("OCU {id} · Datagrams with this OCU's JAUS ID came{from}"),
            theme.warn,
            format!(
                "Another OCU may use this ID, or somebody forged it. Commands still work; they \
                 are refused if the arm's own answers show another client under this ID. What \
                 showed it: {evidence}"
            ),
        )
        .rank(2, Floor::Gone)
        .short(format!("OCU {id} · ID seen{from}"))
    } else {
        Item::new(
            format!("OCU {id}"),
            theme.muted,
            format!("This OCU's own JAUS ID on the network: {id}"),
        )
        .rank(9, Floor::Gone)
    };
    Some(item)
}

/// The memory figure, and what is held as an envelope (said, never silent). A click opens the
/// running recording at the drawn time when it holds what the session keeps only as an
/// envelope ([`Memory::recording_holds_exact`]).
fn memory(bar: &StatusBar<'_>, theme: &Theme) -> Item {
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
        let mut item = Item::new(figure, theme.muted, hover).rank(10, Floor::Gone);
        item.role = Role::Memory;
        return item;
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
    let mut item = Item::new(text, theme.warn, hover)
        .rank(7, Floor::Gone)
        .short(format!("{figure} · envelope"));
    item.role = Role::Memory;
    item
}

/// The replay's file and how much of it is loaded.
fn replay(bar: &StatusBar<'_>, theme: &Theme) -> Option<Item> {
    let r = bar.replay?;
    let p = &r.progress;
    let name = r.name();
    let (text, short, colour) = if !p.finished {
        let pct = format!("loading {:.0} %", p.fraction() * 100.0);
        (format!("{name}: {pct}"), pct, theme.accent)
    } else if let Some(why) = &p.stopped {
        (
            format!(
                "{name}: loaded partly ({} datagrams): {why}",
                group_digits(p.datagrams)
            ),
            "loaded partly".to_owned(),
            theme.warn,
        )
    } else {
        (
            format!("{name}: {} datagrams", group_digits(p.datagrams)),
            name.clone(),
            theme.muted,
        )
    };
    let problems = if p.problems.is_empty() {
        String::new()
    } else {
        format!(" · {} problem(s)", p.problems.len())
    };
    let hover = if p.problems.is_empty() {
        "What the replay's file held".to_string()
    } else {
        p.problems.join("\n")
    };
    Some(
        Item::new(format!("{text}{problems}"), colour, hover)
            .rank(6, Floor::Gone)
            .short(short)
            .group(),
    )
}

/// One signal's rate as the status bar writes it: `positions 20 Hz (polled)`; 0 while
/// `stale`; the joint positions' rate is the `measured` one.
pub fn signal_rate(signal: Signal, delivery: Delivery, stale: bool, measured: f64) -> String {
    let (nominal, how) = match delivery {
        Delivery::Event(r) => (r, "event"),
        Delivery::OnChange => (0.0, "on change"),
        Delivery::Polling(r) => (r, "polled"),
    };
    let rate = rate(signal, nominal, stale, measured);
    if matches!(delivery, Delivery::OnChange) && !stale {
        format!("{} on change", signal.name())
    } else {
        format!("{} {rate:.0} Hz ({how})", signal.name())
    }
}

fn rate(signal: Signal, nominal: f64, stale: bool, measured: f64) -> f64 {
    if stale {
        0.0
    } else if signal == Signal::JointPositions {
        measured
    } else {
        nominal
    }
}

/// The short form of [`signal_rate`] for a narrow window: `pos 20` (Hz), `pose ~` (on
/// change).
pub fn short_rate(signal: Signal, delivery: Delivery, stale: bool, measured: f64) -> String {
    let name = match signal {
        Signal::JointPositions => "pos",
        Signal::JointVelocities => "vel",
        Signal::JointEfforts => "eff",
        Signal::JointForceTorques => "jft",
        Signal::EndEffectorForceTorque => "eft",
        Signal::CurrentPose => "pose",
        Signal::Status => "status",
    };
    let nominal = match delivery {
        Delivery::Event(r) | Delivery::Polling(r) => r,
        Delivery::OnChange if !stale => return format!("{name} ~"),
        Delivery::OnChange => 0.0,
    };
    format!("{name} {:.0}", rate(signal, nominal, stale, measured))
}

/// Samples of `history` within the second before `t`, per second (where the history holds
/// only an envelope, counted to its blocks).
pub fn measured_rate(history: &History, t: f64) -> f64 {
    history
        .count_until(t, true)
        .saturating_sub(history.count_until(t - 1.0, true)) as f64
}

/// `text` with its first letter in capitals (the advice is written to follow "net: ").
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The last command outcome and the last error as one item on the right, cut to the room
/// left, its whole text in the tooltip.
fn message(state: &ArmState, theme: &Theme) -> Option<Item> {
    let mut parts: Vec<(String, Color32)> = Vec::new();
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
    // One colour for the item: the last part's (an error, when there is one).
    let colour = parts.last()?.1;
    let text = parts
        .iter()
        .map(|(text, _)| text.as_str())
        .collect::<Vec<_>>()
        .join("  ·  ");
    // Never gone: at least its first words, the rest in the tooltip.
    let mut item = Item::new(text, colour, "").rank(6, Floor::Short).group();
    item.role = Role::Message;
    Some(item)
}

/// The OCU's own network counters, one item each (the trust counters are never cut); a
/// replay has none of its own.
fn counters(out: &mut Vec<Item>, bar: &StatusBar<'_>, theme: &Theme) {
    let s = &bar.state.stats;
    if bar.shown.is_replay() && s.datagrams == 0 {
        return;
    }
    let hover = format!(
        "Datagrams received; malformed; from other components or JUDP versions; duplicates \
         suppressed; dropped because a thread was behind. Network threads scheduled: {}.",
        s.scheduling.label()
    );
    out.push(
        Item::new(format!("rx {}", s.datagrams), theme.muted, hover.clone())
            .rank(7, Floor::Gone)
            .group(),
    );
    let trust = [
        ("malformed", s.malformed),
        ("foreign", s.foreign_version + s.foreign_reports),
        ("dup", s.duplicates),
        ("dropped", s.queue_dropped + s.updates_dropped),
    ];
    for (name, n) in trust {
        let colour = if n > 0 && name != "dup" {
            theme.warn
        } else {
            theme.muted
        };
        out.push(Item::new(format!("{name} {n}"), colour, hover.clone()).rank(0, Floor::Whole));
    }
    // The kernel's drops at our socket (Linux says; elsewhere unknown and not shown). A
    // receive buffer smaller than wanted is said only once it has cost something: the drop
    // count carries the advice then (the exact command); before, the operator has nothing to
    // do about it (the log said it once at start).
    if let Some(k) = s.kernel_dropped.filter(|&k| k > 0) {
        let hover = bar.short_buffer.map_or_else(
            || "Datagrams the operating system dropped because the socket's receive buffer was full (the machine was too busy to read them in time). Raise net.core.rmem_max (sudo sysctl -w net.core.rmem_max=8388608) or free a core.".to_string(),
            |advice| format!("Datagrams the operating system dropped because the socket's receive buffer was full. {}.", capitalised(advice)),
        );
        out.push(Item::new(format!("kernel dropped {k}"), theme.warn, hover).rank(3, Floor::Whole));
    }
    let tolerated = s.tolerated.total();
    if tolerated > 0 {
        out.push(
            Item::new(
                format!("tolerated {tolerated}"),
                theme.muted,
                "Deviations of the peer from the wire reference that were accepted (ACK with \
                 payload, short emergency code, wildcard ReportServices, ReportControl byte \
                 order); `inspect --summary --json` counts them per kind in a recording.",
            )
            .rank(8, Floor::Gone),
        );
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
                    ocu_suspect: None,
                    short_buffer,
                    memory: Memory::none(Budget::choose(None, None, None)),
                };
                show(ui, &bar, &Theme::new(true));
            })
    }

    #[test]
    fn the_least_important_item_gives_way_first_and_the_counters_never() {
        use super::{Fit, Floor, Need, fit};
        let need = |whole: f32, short: Option<f32>, floor: Floor, rank: u8| Need {
            whole,
            short,
            floor,
            rank,
        };
        let needs = [
            need(100.0, None, Floor::Whole, 0),       // a counter
            need(100.0, Some(40.0), Floor::Short, 2), // a rate
            need(100.0, Some(50.0), Floor::Gone, 5),  // the recording
            need(100.0, None, Floor::Gone, 9),        // the memory figure
        ];
        // Room for all.
        assert_eq!(fit(&needs, 1000.0, 10.0, 20.0), [Fit::Whole; 4]);
        // The memory figure goes first (the "+1" chip takes its place).
        assert_eq!(
            fit(&needs, 350.0, 10.0, 20.0),
            [Fit::Whole, Fit::Whole, Fit::Whole, Fit::Gone]
        );
        // Then the recording shortens, then goes; only then the rate shortens.
        assert_eq!(
            fit(&needs, 300.0, 10.0, 20.0),
            [Fit::Whole, Fit::Whole, Fit::Short, Fit::Gone]
        );
        assert_eq!(
            fit(&needs, 240.0, 10.0, 20.0),
            [Fit::Whole, Fit::Whole, Fit::Gone, Fit::Gone]
        );
        assert_eq!(
            fit(&needs, 180.0, 10.0, 20.0),
            [Fit::Whole, Fit::Short, Fit::Gone, Fit::Gone]
        );
        // Too narrow for even the floors: the counter and the rate's short form stay.
        assert_eq!(
            fit(&needs, 50.0, 10.0, 20.0),
            [Fit::Whole, Fit::Short, Fit::Gone, Fit::Gone]
        );
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
                        ocu_suspect: None,
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
