//! What one check says: its verdict, the reason, and the frames of the evidence capture that
//! prove it.

use std::fmt;

use serde::Serialize;

/// A check's verdict, as open conformance suites give it (AMWA NMOS testing: pass, fail,
/// warning, not applicable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The component does what the reference says.
    Pass,
    /// A known dialect or quirk (wire reference §9), or something the reference recommends
    /// but does not require: interoperable, named.
    Warning,
    /// The check does not apply: the component does not list the service, or the check needs
    /// what was not allowed (`--allow-motion`).
    NotApplicable,
    /// The component breaks the reference in a way that breaks interoperability.
    Fail,
    /// Not run: the component had stopped answering (one check before says when).
    NotRun,
}

impl Verdict {
    /// The word the reports print.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warning => "warning",
            Verdict::NotApplicable => "n/a",
            Verdict::Fail => "FAIL",
            Verdict::NotRun => "not run",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A frame of the evidence capture and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// 1-based frame number in the pcapng (Wireshark's `frame.number`).
    pub frame: u32,
    /// The message ID in the frame (in its first block that carries one), or `None` for an
    /// ACK/NAK block, a malformed datagram or one a check sent on purpose broken.
    pub message_id: Option<u16>,
    /// What the frame holds, e.g. `ReportIdentification` or `ACK`.
    pub what: String,
}

/// What a check found; the runner adds the check's name and frames.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in a sentence an integrator can act on.
    pub reason: String,
    /// The frames that show it.
    pub evidence: Vec<Evidence>,
}

impl Outcome {
    fn new(verdict: Verdict, reason: impl Into<String>) -> Self {
        Outcome {
            verdict,
            reason: reason.into(),
            evidence: Vec::new(),
        }
    }

    /// Passed, because `reason`.
    pub fn pass(reason: impl Into<String>) -> Self {
        Self::new(Verdict::Pass, reason)
    }

    /// Failed, because `reason`.
    pub fn fail(reason: impl Into<String>) -> Self {
        Self::new(Verdict::Fail, reason)
    }

    /// A named deviation: `reason` should start with "deviation:" and cite the reference.
    pub fn warning(reason: impl Into<String>) -> Self {
        Self::new(Verdict::Warning, reason)
    }

    /// Not applicable, because `reason`.
    pub fn not_applicable(reason: impl Into<String>) -> Self {
        Self::new(Verdict::NotApplicable, reason)
    }

    /// Not run, because `reason` (the component is silent).
    pub fn not_run(reason: impl Into<String>) -> Self {
        Self::new(Verdict::NotRun, reason)
    }

    /// Adds frames as evidence.
    #[must_use]
    pub fn with(mut self, evidence: impl IntoIterator<Item = Evidence>) -> Self {
        self.evidence.extend(evidence);
        self
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// The suite's name, e.g. `transport`.
    pub suite: &'static str,
    /// The check's name inside its suite, e.g. `ack-on-request`.
    pub name: String,
    /// What the check checks, one line.
    pub title: String,
    /// Where the behaviour is defined, e.g. `wire reference §4.4`.
    pub reference: &'static str,
    /// The finding.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// First and last frame of the capture during the check (none when nothing was sent or
    /// received).
    pub frames: Option<(u32, u32)>,
    /// Seconds the check took.
    pub seconds: f64,
}

impl CheckResult {
    /// "frames N–M" (or "frame N"), as the reports cite a check's evidence.
    pub fn frames_text(&self) -> Option<String> {
        self.frames.map(|(a, b)| {
            if a == b {
                format!("frame {a}")
            } else {
                format!("frames {a}–{b}")
            }
        })
    }
}
