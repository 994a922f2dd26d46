//! The recorder's life in `OcuApp`: its configuration and the live arm's name in it, starting
//! (or attaching) and stopping it, its start/stop marks, polling it, finishing it on exit. The
//! `Recording` state and the record button are `ui/recording.rs`.

use super::OcuApp;
use crate::model::update::{MarkKind, Remark, Update};
use crate::record::format;
use crate::record::recorder::{Recorder, RecorderConfig};
use crate::ui::files::Task;
use crate::ui::notice::NoticeLevel;
use crate::ui::recording::Recording;
use crate::ui::sources::{LiveKind, read_vehicle};
use crate::ui::theme::ScenePalette;
use crate::ui::words::{arm_name, file_name};
use std::path::PathBuf;

impl OcuApp {
    /// The live session's selected arm (identification, else its JAUS ID), for file names
    /// and metadata; a replay on screen does not change it.
    pub fn live_arm_name(&self) -> Option<String> {
        let live = self.sources.live_source()?;
        arm_name(&read_vehicle(&live.vehicle).focused().latest)
    }

    /// The recorder configuration for `path`: the live session's time origin and metadata
    /// (source, OCU address, arm). `None` without a running live source.
    pub fn recorder_config(&self, path: PathBuf) -> Option<RecorderConfig> {
        let live = self.sources.live_source()?;
        let net = live.net()?;
        let mut cfg = RecorderConfig::new(path, net.start_unix_ns());
        cfg.tap = Some(net.tap().clone());
        cfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
        let source = match live.kind {
            LiveKind::Simulated => "simulated",
            LiveKind::Live => "live",
        };
        cfg.metadata.insert("source".into(), source.into());
        cfg.metadata.insert(
            format::KEY_LOCAL_ADDRESS.into(),
            net.local_addr().to_string(),
        );
        if let Some(arm) = self.live_arm_name() {
            cfg.metadata.insert("arm".into(), arm);
        }
        Some(cfg)
    }

    /// Starts recording every datagram of the live session to `path` (no dialog).
    pub fn start_recording(&mut self, path: PathBuf) -> Result<(), String> {
        if !matches!(self.recording, Recording::Idle) {
            return Err("Already recording; stop the current recording first.".into());
        }
        let Some(cfg) = self.recorder_config(path) else {
            return Err(
                "Recording needs a live or demo session (a replay is already recorded).".into(),
            );
        };
        let recorder = Recorder::start(cfg).map_err(|e| e.to_string())?;
        self.attach_recorder(recorder)
    }

    /// Connects a started recorder (made from [`OcuApp::recorder_config`]) to the live
    /// session's tap; the button shows its figures from now on.
    pub fn attach_recorder(&mut self, recorder: Recorder) -> Result<(), String> {
        if !matches!(self.recording, Recording::Idle) {
            return Err("Already recording; stop the current recording first.".into());
        }
        let Some(net) = self.sources.net() else {
            return Err("Recording needs a live or demo session.".into());
        };
        self.recording.attach(recorder, net.tap())?;
        // The session's notes so far go into the recording too (it holds the state from
        // before it began: latched datagrams), then the start is an event of the session.
        let live = self.sources.live_source().map(|l| l.vehicle.clone());
        if let Some(live) = live {
            for note in read_vehicle(&live).notes() {
                if let Err(why) = self.recording.note(&note) {
                    tracing::warn!("{why}");
                }
            }
        }
        self.recording_mark("recording started");
        Ok(())
    }

    /// A recording event on the live session's timeline and log: `what` and the file.
    fn recording_mark(&mut self, what: &str) {
        let file = match &self.recording {
            Recording::Active(a) => file_name(&a.path),
            Recording::Stopping { path, .. } => file_name(path),
            Recording::Idle => return,
        };
        let t = self.now();
        self.apply(&Update::net(Remark::Mark {
            t,
            kind: MarkKind::Recording,
            label: format!("{what}: {file}"),
        }));
    }

    /// Stops recording: the tap is disconnected at once, the file is finished off the UI
    /// thread, and a notice says what was written.
    pub fn stop_recording(&mut self) {
        let tap = self.sources.net().map(crate::net::thread::NetHandle::tap);
        self.recording.stop(tap, self.egui_ctx.clone());
        self.recording_mark("recording stopped");
    }

    /// Record button / Ctrl+R: asks where to record, or stops.
    pub fn toggle_recording(&mut self) {
        match self.recording {
            Recording::Idle if self.has_live() => self.request_file(Task::Record),
            Recording::Idle => self.notify(
                NoticeLevel::Info,
                "Recording needs a live or demo session; this window replays a file.",
            ),
            Recording::Active(_) => self.stop_recording(),
            Recording::Stopping { .. } => {}
        }
    }

    /// Refreshes the recorder's figures and reports how it ended.
    pub(crate) fn poll_recording(&mut self) {
        let tap = self.sources.net().map(crate::net::thread::NetHandle::tap);
        let was_active = self.recording.is_active();
        if let Some(n) = self.recording.poll(tap) {
            if was_active && !self.recording.is_active() {
                // Stopped by a write error: the log says so where it happened.
                let t = self.now();
                self.apply(&Update::net(Remark::Mark {
                    t,
                    kind: MarkKind::Recording,
                    label: "recording stopped by a write error".to_owned(),
                }));
            }
            self.notify(n.level, n.text);
        }
    }

    /// At exit: finishes the file, waiting for the recorder (about a second).
    pub(crate) fn finish_recording_on_exit(&mut self) {
        let tap = self.sources.net().map(crate::net::thread::NetHandle::tap);
        self.recording.finish_on_exit(tap);
    }
}
