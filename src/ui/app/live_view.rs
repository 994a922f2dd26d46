//! The live view server's life in `OcuApp` (View → Live view server, issue 33): started on
//! the live session's tap, stopped on request, when the live session it serves is gone and on
//! exit; its address and viewers for the status bar; the operator's notes handed to it as they
//! are written. The server itself is `record::live`.

use std::fmt::Write as _;
use std::net::SocketAddr;

use super::OcuApp;
use crate::model::events::Note;
use crate::model::update::{MarkKind, Remark, Update};
use crate::record::live::{LiveConfig, LiveServer, LiveStats};
use crate::ui::notice::NoticeLevel;
use crate::ui::panels::status_bar::LiveViewLine;
use crate::ui::theme::ScenePalette;

impl OcuApp {
    /// View → Live view server: starts it on the address of the settings, or stops it.
    pub fn toggle_live_view(&mut self) {
        if self.live_view.is_some() {
            self.stop_live_view("stopped");
            return;
        }
        let listen = self.settings.live_view_listen.trim().to_owned();
        let Ok(addr) = listen.parse::<SocketAddr>() else {
            self.notify(
                NoticeLevel::Error,
                format!(
                    "The live view address \"{listen}\" in the settings is not IP:PORT; \
                     give one such as 127.0.0.1:8765 (jaus-ocu --live-view ADDR)"
                ),
            );
            return;
        };
        if let Err(why) = self.start_live_view(addr) {
            self.notify(NoticeLevel::Error, why);
        }
    }

    /// Starts the live view server on `addr`, attached to the live session's tap: the
    /// latched state first, then everything. Says where to connect.
    pub fn start_live_view(&mut self, addr: SocketAddr) -> Result<SocketAddr, String> {
        if let Some(s) = &self.live_view {
            return Ok(s.address());
        }
        let Some(net) = self.sources.net() else {
            return Err(
                "The live view server serves a live or demo session; this window replays a \
                 file (serve it with `jaus-ocu serve FILE`)."
                    .into(),
            );
        };
        let cfg = LiveConfig::new(
            addr,
            net.start_unix_ns(),
            Some(ScenePalette::new(true).foxglove_look()),
        );
        let mut server = LiveServer::start(&cfg).map_err(|e| e.to_string())?;
        if !server.attach(net.tap()) {
            return Err("The live session already feeds as many sinks as it takes.".into());
        }
        let at = server.address();
        // The session's notes so far, as a recording started now would hold them.
        let live = self.sources.live_source().map(|l| l.vehicle.clone());
        if let Some(live) = live {
            for note in crate::ui::sources::read_vehicle(&live).notes() {
                let _ = server.note_sender().try_send(note);
            }
        }
        self.live_view = Some(server);
        self.live_view_mark(&format!("live view server started on ws://{at}"));
        self.notify(
            NoticeLevel::Info,
            format!(
                "Live view on ws://{at}: in Foxglove or Lichtblick, Open connection > \
                 Foxglove WebSocket. Read-only: viewers cannot command the arm."
            ),
        );
        Ok(at)
    }

    /// Stops the live view server (viewers are disconnected), saying `why` in the log.
    pub fn stop_live_view(&mut self, why: &str) {
        if let Some(server) = self.live_view.take() {
            let at = server.address();
            server.stop();
            self.live_view_mark(&format!("live view server on ws://{at} {why}"));
        }
    }

    /// The status bar's words while it runs: `Live view ws://127.0.0.1:8765 · 2 viewers`, then
    /// each viewer that did not receive everything (`· 127.0.0.1:40112 lost 5474`) and the
    /// datagrams not decoded for any viewer while the server was behind.
    pub fn live_view_line(&self) -> Option<LiveViewLine> {
        let server = self.live_view.as_ref()?;
        Some(live_view_words(server.address(), &server.stats()))
    }

    /// Each frame: a server whose live session is gone (closed, replaced) stops.
    pub(crate) fn poll_live_view(&mut self) {
        let Some(server) = &self.live_view else {
            return;
        };
        let feeds = self
            .sources
            .net()
            .is_some_and(|net| server.is_attached_to(net.tap()));
        if !feeds {
            self.stop_live_view("stopped: its live session ended");
        }
    }

    /// Hands an operator's note to the live view server, when it runs.
    pub(crate) fn live_view_note(&mut self, note: &Note) {
        if let Some(server) = &self.live_view
            && server.note_sender().try_send(note.clone()).is_err()
        {
            self.notify(
                NoticeLevel::Warning,
                "The live view server is behind: this note did not reach its viewers (it is \
                 in the session and any recording).",
            );
        }
    }

    fn live_view_mark(&mut self, label: &str) {
        let t = self.now();
        self.apply(&Update::net(Remark::Mark {
            t,
            kind: MarkKind::Network,
            label: label.to_owned(),
        }));
    }
}

/// The status bar's item for a live view server at `address` with `stats`.
pub fn live_view_words(address: SocketAddr, stats: &LiveStats) -> LiveViewLine {
    let viewers = match stats.viewers {
        1 => "1 viewer".to_owned(),
        n => format!("{n} viewers"),
    };
    let mut text = format!("Live view ws://{address} · {viewers}");
    let mut hover = String::new();
    for v in &stats.per_viewer {
        if v.not_received > 0 {
            let _ = write!(text, " · {} lost {}", v.peer, v.not_received);
        }
        let _ = write!(
            hover,
            "\nviewer {}: sent {} messages, {} not received (its connection could not keep up)",
            v.peer, v.sent, v.not_received
        );
    }
    let gone = stats
        .not_received
        .saturating_sub(stats.per_viewer.iter().map(|v| v.not_received).sum::<u64>());
    if gone > 0 {
        let _ = write!(text, " · {gone} lost by viewers gone");
        let _ = write!(hover, "\nviewers that left did not receive {gone} messages");
    }
    if stats.dropped > 0 {
        let _ = write!(text, " · {} not decoded", stats.dropped);
        let _ = write!(
            hover,
            "\n{} datagrams were not decoded for any viewer: the server fell behind",
            stats.dropped
        );
    }
    let lost = stats.not_received + stats.dropped;
    let short = if lost > 0 {
        format!("live {} · lost {lost}", stats.viewers)
    } else {
        format!("live {}", stats.viewers)
    };
    LiveViewLine {
        text,
        short,
        hover: hover.trim_start().to_owned(),
        losing: lost > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::live_view_words;
    use crate::record::live::{LiveStats, ViewerStats};

    #[test]
    fn each_viewer_that_did_not_receive_everything_is_named_with_its_count() {
        let at = "127.0.0.1:8765".parse().unwrap();
        let mut stats = LiveStats {
            viewers: 2,
            ..LiveStats::default()
        };
        let viewer = |port: u16, sent: u64, not_received: u64| ViewerStats {
            peer: ([127, 0, 0, 1], port).into(),
            sent,
            not_received,
        };
        stats.per_viewer = vec![viewer(40000, 9000, 0), viewer(40112, 3000, 5474)];
        stats.not_received = 5474;
        let line = live_view_words(at, &stats);
        assert_eq!(
            line.text,
            "Live view ws://127.0.0.1:8765 · 2 viewers · 127.0.0.1:40112 lost 5474"
        );
        assert_eq!(line.short, "live 2 · lost 5474");
        assert!(line.losing);
        assert!(
            line.hover
                .contains("viewer 127.0.0.1:40000: sent 9000 messages, 0 not received")
        );
        // Nobody lost anything: nothing said of losses, not in the warning colour.
        stats.per_viewer = vec![viewer(40000, 9000, 0)];
        stats.viewers = 1;
        stats.not_received = 0;
        let line = live_view_words(at, &stats);
        assert_eq!(line.text, "Live view ws://127.0.0.1:8765 · 1 viewer");
        assert!(!line.losing);
    }
}
