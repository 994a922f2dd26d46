//! Operator notes in recordings: written by the recorder on their own channel (JSON with a
//! schema) and as `foxglove.Log` lines, read back by the replay as notes on the timeline, and
//! a replay's notes saved to a sidecar file that is loaded with the recording.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests report a failure by panicking"
)]

use std::path::PathBuf;

use jaus_ocu::model::events::{Note, NotesFile, sidecar_path};
use jaus_ocu::model::update::ComponentId;
use jaus_ocu::record::format;
use jaus_ocu::record::player::Replay;
use jaus_ocu::record::recorder::{Recorder, RecorderConfig};

const START_NS: u64 = 1_700_000_000_000_000_000;

fn temp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()))
}

fn record_notes(name: &str, notes: &[Note]) -> PathBuf {
    let path = temp_path(name);
    let _ = std::fs::remove_file(sidecar_path(&path));
    let recorder = Recorder::start(RecorderConfig::new(path.clone(), START_NS)).unwrap();
    let tx = recorder.note_sender();
    for n in notes {
        tx.try_send(n.clone()).unwrap();
    }
    recorder.stop().unwrap();
    path
}

fn texts(notes: &[Note]) -> Vec<(f64, String)> {
    notes.iter().map(|n| (n.t, n.text.clone())).collect()
}

#[test]
fn notes_are_written_on_their_channel_and_as_foxglove_log_lines() {
    let arm = ComponentId::new(126, 1, 10);
    let path = record_notes(
        "notes-channels.mcap",
        &[
            Note::new(1.5, "gripper slipped", Some(arm)),
            Note::new(2.0, "", None),
        ],
    );
    let bytes = std::fs::read(&path).unwrap();
    let mut notes = Vec::new();
    let mut logs = Vec::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&m.data).unwrap();
        match m.channel.topic.as_str() {
            format::NOTES_TOPIC => {
                let schema = m.channel.schema.as_ref().unwrap();
                assert_eq!(schema.name, format::SCHEMA_NOTE_NAME);
                assert_eq!(schema.encoding, format::SCHEMA_ENCODING);
                assert_eq!(m.channel.message_encoding, format::JSON_ENCODING);
                notes.push((m.log_time, body));
            }
            "/foxglove/log" => logs.push((m.log_time, body)),
            _ => {}
        }
    }
    assert_eq!(notes.len(), 2, "{notes:?}");
    let schema: serde_json::Value = serde_json::from_str(format::SCHEMA_NOTE).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (_, body) in &notes {
        assert!(
            validator.is_valid(body),
            "{body} against {}",
            format::SCHEMA_NOTE
        );
    }
    assert_eq!(
        notes[0].0,
        START_NS + 1_500_000_000,
        "logged at the note's time"
    );
    assert_eq!(notes[0].1["text"], "gripper slipped");
    assert_eq!(notes[0].1["arm"], "126.1.10");
    assert_eq!(notes[0].1["bookmark"], false);
    assert_eq!(notes[1].1["text"], "");
    assert_eq!(notes[1].1["bookmark"], true);
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert_eq!(logs[0].1["message"], "gripper slipped");
    assert_eq!(logs[0].1["level"], 2);
    assert_eq!(logs[0].1["name"], "126.1.10/note");
    assert_eq!(logs[0].1["timestamp"]["nsec"], 500_000_000);
    assert_eq!(logs[1].1["message"], "bookmark");
}

#[test]
fn a_replay_reads_the_recordings_notes_and_its_sidecar_once_each() {
    let recorded = [
        Note::new(1.0, "start of the test", None),
        Note::new(4.0, "", None),
    ];
    let path = record_notes("notes-replay.mcap", &recorded);
    let (v, progress) = Replay::load_blocking(&path, 3794).unwrap();
    assert!(progress.problems.is_empty(), "{:?}", progress.problems);
    assert_eq!(texts(&v.notes()), texts(&recorded));

    // A sidecar saved from a replay holds the recording's notes too: they are not doubled.
    let mut all = v.notes();
    all.push(Note::new(2.5, "added in the replay", None));
    let file = NotesFile::new("notes-replay.mcap", START_NS, all);
    std::fs::write(sidecar_path(&path), file.to_json()).unwrap();
    let (v, progress) = Replay::load_blocking(&path, 3794).unwrap();
    assert!(progress.problems.is_empty(), "{:?}", progress.problems);
    assert_eq!(
        texts(&v.notes()),
        [
            (1.0, "start of the test".to_owned()),
            (2.5, "added in the replay".to_owned()),
            (4.0, String::new()),
        ]
    );

    // A damaged sidecar is a problem of the load, not a failure: the recording's notes stay.
    std::fs::write(sidecar_path(&path), "{ not json").unwrap();
    let (v, progress) = Replay::load_blocking(&path, 3794).unwrap();
    assert_eq!(texts(&v.notes()), texts(&recorded));
    assert!(
        progress.problems.iter().any(|p| p.contains("notes.json")),
        "{:?}",
        progress.problems
    );
    let _ = std::fs::remove_file(sidecar_path(&path));
}
