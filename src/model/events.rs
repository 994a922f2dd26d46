//! The session's events as the event log lists them, and the operator's notes.
//!
//! Every event is a timeline mark of the session ([`Session::marks`]): the marks derived from
//! state changes (control and who holds it, management state, emergencies, preset
//! transitions, the link lost and live again, staleness, command outcomes in words, errors
//! and tolerated peer deviations), the explicit ones (gaps, commands of other OCUs seen in a
//! recording), recording start and stop, and notes. One list, so the timeline and the log
//! never disagree, and live and replay show the same (a replay's marks come from the same
//! session code). The log of one arm is its session's marks: news for every arm (errors,
//! recording, notes) is in every arm's session.
//!
//! A note is a [`Remark::Mark`] of kind [`MarkKind::Note`] whose label is the operator's
//! text, or [`BOOKMARK`] for a note without text. Notes are facts of the vehicle (not of one
//! arm): the [`crate::model::vehicle::Vehicle`] gives them to every arm's session, also to
//! arms seen later. A replay's notes added in the window are saved to a sidecar file beside
//! the recording ([`sidecar_path`], [`NotesFile`]), never into the recording itself.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::session::{Mark, Session};
use super::update::{ComponentId, MarkKind, Remark, Update};

/// The label of a note without text (a bookmark).
pub const BOOKMARK: &str = "bookmark";

/// Longest note text kept, characters (a note is a line in a log, not a document).
pub const MAX_NOTE_CHARS: usize = 500;

/// One line of the event log.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time, s since the session started.
    pub t: f64,
    /// What about (the timeline's kinds).
    pub kind: MarkKind,
    /// What happened, in words (with an episode's duration and repeats).
    pub text: String,
}

impl Event {
    /// The event of a timeline mark.
    pub fn of_mark(m: &Mark) -> Self {
        Self {
            t: m.t,
            kind: m.kind,
            text: m.describe(),
        }
    }
}

/// Every event of `session` whose kind `shows`, oldest first.
pub fn events(session: &Session, shows: impl Fn(MarkKind) -> bool) -> Vec<Event> {
    session
        .marks
        .iter()
        .filter(|m| shows(m.kind))
        .map(Event::of_mark)
        .collect()
}

/// How many events of each kind of [`MarkKind::ALL`] `session` has.
pub fn counts(session: &Session) -> [usize; MarkKind::ALL.len()] {
    let mut counts = [0; MarkKind::ALL.len()];
    for m in &session.marks {
        if let Some(i) = MarkKind::ALL.iter().position(|k| *k == m.kind) {
            counts[i] += 1;
        }
    }
    counts
}

/// An operator's note: at a session time, with text (empty: a bookmark), and the arm that was
/// focused when it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// Time, s since the session started.
    pub t: f64,
    /// What the operator wrote (empty: a bookmark).
    #[serde(default)]
    pub text: String,
    /// The arm focused when the note was written, `S.N.C`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
}

impl Note {
    /// A note at `t` with `text` (trimmed, cut to [`MAX_NOTE_CHARS`]) about `arm`.
    pub fn new(t: f64, text: &str, arm: Option<ComponentId>) -> Self {
        Self {
            t,
            text: text.trim().chars().take(MAX_NOTE_CHARS).collect(),
            arm: arm.map(|a| a.to_string()),
        }
    }

    /// The timeline label: the text, or [`BOOKMARK`].
    pub fn label(&self) -> String {
        if self.text.is_empty() {
            BOOKMARK.to_owned()
        } else {
            self.text.clone()
        }
    }

    /// The update that puts the note on the timeline and in the log (news for every arm).
    pub fn update(&self) -> Update {
        Update::net(Remark::Mark {
            t: self.t,
            kind: MarkKind::Note,
            label: self.label(),
        })
    }

    /// The note a note mark stands for (the arm is not kept in marks).
    pub fn of_mark(m: &Mark) -> Option<Note> {
        (m.kind == MarkKind::Note).then(|| Note {
            t: m.t,
            text: if m.label == BOOKMARK {
                String::new()
            } else {
                m.label.clone()
            },
            arm: None,
        })
    }
}

/// Every note of `session`, oldest first.
pub fn notes(session: &Session) -> Vec<Note> {
    session.marks.iter().filter_map(Note::of_mark).collect()
}

/// The sidecar file of a recording's notes added in a replay: `<recording>.notes.json`
/// beside it (`run.mcap` → `run.mcap.notes.json`).
pub fn sidecar_path(recording: &Path) -> PathBuf {
    let mut name = recording.as_os_str().to_owned();
    name.push(".notes.json");
    PathBuf::from(name)
}

/// What a sidecar file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotesFile {
    /// `"jaus-ocu notes"`, so a stray JSON file is not taken for one.
    pub format: String,
    /// Format version (1).
    pub version: u32,
    /// The recording the notes are about (its file name).
    #[serde(default)]
    pub recording: String,
    /// Session time origin of the notes' times, ns since the Unix epoch (0: unknown).
    #[serde(default)]
    pub session_start_ns: u64,
    /// The notes, oldest first.
    pub notes: Vec<Note>,
}

/// [`NotesFile::format`].
pub const NOTES_FORMAT: &str = "jaus-ocu notes";

/// Most notes read from a sidecar (a hostile file must not fill the timeline).
pub const MAX_SIDECAR_NOTES: usize = 10_000;

impl NotesFile {
    /// A sidecar of `notes` for the recording named `recording`.
    pub fn new(recording: &str, session_start_ns: u64, notes: Vec<Note>) -> Self {
        Self {
            format: NOTES_FORMAT.to_owned(),
            version: 1,
            recording: recording.to_owned(),
            session_start_ns,
            notes,
        }
    }

    /// The file's text (pretty JSON: people read and merge these).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a sidecar's text; notes with a time that is not finite are dropped, at most
    /// [`MAX_SIDECAR_NOTES`] kept, texts cut to [`MAX_NOTE_CHARS`].
    pub fn parse(text: &str) -> Result<NotesFile, String> {
        let mut file: NotesFile =
            serde_json::from_str(text).map_err(|e| format!("not a jaus-ocu notes file ({e})"))?;
        if file.format != NOTES_FORMAT {
            return Err(format!(
                "not a jaus-ocu notes file (format \"{}\", expected \"{NOTES_FORMAT}\")",
                file.format
            ));
        }
        file.notes.retain(|n| n.t.is_finite());
        file.notes.truncate(MAX_SIDECAR_NOTES);
        for n in &mut file.notes {
            n.text = n.text.chars().take(MAX_NOTE_CHARS).collect();
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::command::CommandKind;
    use crate::model::update::{
        ArmFact, ControlLoss, ControlState, Controller, LinkState, ManagementState, NetFact,
        NetStats, Outcome, Tolerated,
    };

    const ARM: ComponentId = ComponentId::new(126, 1, 10);

    fn session(updates: &[Update]) -> Session {
        let mut s = Session::new();
        for u in updates {
            match u {
                Update::Arm { fact, .. } => s.apply_arm(fact),
                Update::Net(fact) => s.apply_net(fact),
            }
        }
        s
    }

    fn texts(s: &Session, kind: MarkKind) -> Vec<String> {
        events(s, |k| k == kind)
            .into_iter()
            .map(|e| e.text)
            .collect()
    }

    #[test]
    fn command_outcomes_are_events_in_words() {
        let s = session(&[
            Update::net(Remark::CommandOutcome {
                t: 1.0,
                command: CommandKind::ClearEmergency,
                outcome: Outcome::Confirmed,
            }),
            Update::net(Remark::CommandOutcome {
                t: 2.0,
                command: CommandKind::Resume,
                outcome: Outcome::Rejected("the arm is in EMERGENCY".into()),
            }),
        ]);
        assert_eq!(
            texts(&s, MarkKind::Command),
            [
                "ClearEmergency: confirmed",
                "Resume: refused: the arm is in EMERGENCY"
            ]
        );
    }

    #[test]
    fn a_pre_emption_is_one_mark_naming_the_taker() {
        let other = ComponentId::new(200, 146, 2);
        let taken = Controller {
            id: Some(other),
            authority: 200,
        };
        let held = Update::arm(
            ARM,
            ArmFact::Control {
                t: 1.0,
                state: ControlState::Held { authority: 100 },
            },
        );
        let released = Update::arm(
            ARM,
            ArmFact::Control {
                t: 2.0,
                state: ControlState::Released,
            },
        );
        let controller = Update::arm(
            ARM,
            ArmFact::Controller {
                t: 2.1,
                controller: taken,
            },
        );
        let lost = Update::arm(
            ARM,
            ArmFact::ControlLost {
                t: 2.2,
                reason: ControlLoss::Taken {
                    by: other,
                    authority: 200,
                },
            },
        );
        // Both orders the client may say it in: the arm's RejectControl first, or its
        // ReportControl naming the taker first.
        for order in [
            [&held, &released, &controller, &lost],
            [&held, &controller, &released, &lost],
        ] {
            let updates: Vec<Update> = order.into_iter().cloned().collect();
            let s = session(&updates);
            assert_eq!(
                texts(&s, MarkKind::Control),
                [
                    "control granted (authority 100)",
                    "control taken by 200.146.2 (authority 200)"
                ]
            );
        }
    }

    #[test]
    fn control_changes_name_who_holds_control() {
        let other = ComponentId::new(200, 7, 3);
        // Another client's control, seen while we hold none (a loss of ours is said by its
        // own mark: a_pre_emption_is_one_mark_naming_the_taker).
        let s = session(&[
            Update::arm(
                ARM,
                ArmFact::Controller {
                    t: 2.0,
                    controller: Controller {
                        id: Some(other),
                        authority: 200,
                    },
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Controller {
                    t: 3.0,
                    controller: Controller {
                        id: None,
                        authority: 0,
                    },
                },
            ),
        ]);
        assert_eq!(
            texts(&s, MarkKind::Control),
            ["control held by 200.7.3 (authority 200)", "control free"]
        );
    }

    #[test]
    fn status_emergency_link_and_stale_are_events() {
        let s = session(&[
            Update::arm(
                ARM,
                ArmFact::Link {
                    t: 0.5,
                    state: LinkState::Live,
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Status {
                    t: 1.0,
                    state: ManagementState::Ready,
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Status {
                    t: 2.0,
                    state: ManagementState::Emergency,
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Link {
                    t: 3.0,
                    state: LinkState::Lost,
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Link {
                    t: 4.0,
                    state: LinkState::Live,
                },
            ),
            Update::arm(
                ARM,
                ArmFact::Stale {
                    t: 5.0,
                    signal: crate::model::update::Signal::JointPositions,
                    stale: true,
                },
            ),
        ]);
        assert_eq!(texts(&s, MarkKind::Status), ["READY"]);
        assert_eq!(texts(&s, MarkKind::Emergency), ["EMERGENCY"]);
        assert_eq!(texts(&s, MarkKind::Gap), ["link lost"]);
        assert_eq!(texts(&s, MarkKind::Network), ["link live again"]);
        assert_eq!(texts(&s, MarkKind::Stale), ["positions stale (still)"]);
    }

    #[test]
    fn errors_and_first_tolerated_deviations_are_network_events() {
        let stats = |ack| NetStats {
            tolerated: Tolerated {
                ack_payload: ack,
                ..Tolerated::default()
            },
            ..NetStats::default()
        };
        let s = session(&[
            Update::net(Remark::Error {
                t: 1.0,
                message: "socket closed".into(),
            }),
            Update::net(NetFact::Stats {
                t: 2.0,
                stats: Box::new(stats(0)),
            }),
            Update::net(NetFact::Stats {
                t: 3.0,
                stats: Box::new(stats(2)),
            }),
            Update::net(NetFact::Stats {
                t: 4.0,
                stats: Box::new(stats(5)),
            }),
        ]);
        assert_eq!(
            texts(&s, MarkKind::Network),
            [
                "socket closed",
                "peer deviation tolerated: ACK/NAK with a payload (skipped)"
            ]
        );
    }

    #[test]
    fn notes_round_trip_through_marks_and_the_sidecar() {
        let a = Note::new(
            1.5,
            "  gripper slipped ",
            Some(ComponentId::new(126, 1, 10)),
        );
        let b = Note::new(3.0, "", None);
        assert_eq!(a.text, "gripper slipped");
        let s = session(&[a.update(), b.update()]);
        assert_eq!(texts(&s, MarkKind::Note), ["gripper slipped", BOOKMARK]);
        let back = notes(&s);
        assert_eq!(back[0].text, "gripper slipped");
        assert_eq!(back[1].text, "");
        let file = NotesFile::new("run.mcap", 7, back.clone());
        let parsed = NotesFile::parse(&file.to_json()).unwrap();
        assert_eq!(parsed.notes, back);
        assert!(NotesFile::parse("{\"format\":\"x\",\"version\":1,\"notes\":[]}").is_err());
        assert!(NotesFile::parse("not json").is_err());
        assert_eq!(
            sidecar_path(Path::new("/tmp/run.mcap")),
            PathBuf::from("/tmp/run.mcap.notes.json")
        );
    }

    #[test]
    fn a_long_note_is_cut() {
        let n = Note::new(0.0, &"x".repeat(2 * MAX_NOTE_CHARS), None);
        assert_eq!(n.text.chars().count(), MAX_NOTE_CHARS);
    }
}
