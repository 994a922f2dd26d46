//! `jaus-ocu record`: the network side without a GUI, recording every datagram it sends and
//! receives to an MCAP file, with progress on the terminal. Stops after `--duration`, on
//! Ctrl-C (the file is finished properly) or when writing fails.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;

use super::probe::NetArgs;
use crate::model::events::Note;
use crate::model::state::ArmState;
use crate::model::vehicle::Vehicle;
use crate::net::tap::{Epoch, Tap};
use crate::net::thread::NetConfig;
use crate::record::recorder::{RecordError, Recorder, RecorderConfig, RecorderStats};
use crate::ui::theme::ScenePalette;

/// Arguments of `jaus-ocu record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where to look and who we are (the same network side as the GUI).
    #[command(flatten)]
    pub net: NetArgs,
    /// The recording to write (MCAP; created or overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// No progress line (errors and the final summary only).
    #[arg(long, short)]
    pub quiet: bool,
    /// Record the raw datagrams only, without the decoded JSON channels (for traffic beyond
    /// about 250 000 datagrams/s, which the decoded channels cannot keep up with; replay
    /// needs only the raw channels).
    #[arg(long)]
    pub no_decoded: bool,
    /// Without the Foxglove channels (`/foxglove/transforms`, `/foxglove/scene`,
    /// `/foxglove/log`: every arm in Foxglove's 3D panel); the `/jaus/*` channels stay.
    #[arg(long)]
    pub no_foxglove: bool,
    /// An operator note written into the recording at S seconds of the session (its notes
    /// channel `/ocu/notes` and a `foxglove.Log` line), as the GUI's notes are: `TEXT@S`,
    /// `@S` for a bookmark. Repeatable.
    #[arg(long, value_name = "TEXT@S")]
    pub note: Vec<String>,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, for the clearance in `/jaus/arm_state` and
    /// `/jaus/events`. Without it only the arms' own cylinders are checked.
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<PathBuf>,
}

/// `--note TEXT@S`: the note, or what is wrong with it.
pub fn parse_note(arg: &str) -> Result<Note> {
    let Some((text, at)) = arg.rsplit_once('@') else {
        bail!(
            "--note {arg}: give TEXT@SECONDS (e.g. \"valve opened@12.5\", or @12.5 for a bookmark)"
        );
    };
    match at.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(Note::new(t, text, None)),
        _ => bail!(
            "--note {arg}: \"{at}\" is not a time; give seconds of the session after the @ \
             (e.g. \"valve opened@12.5\")"
        ),
    }
}

fn clock(s: f64) -> String {
    let s = s.max(0.0) as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// One arm in the progress line: "126.1.10 (6 joints, live)".
fn one_arm(state: &ArmState) -> String {
    match (state.selected, &state.spec) {
        (None, _) => "?".to_owned(),
        (Some(id), None) => format!("{id}, waiting for its specification"),
        (Some(id), Some(spec)) => {
            let link = state.link.name();
            format!("{id} ({} joints, {link})", spec.joints.len())
        }
    }
}

/// Every arm followed, or what is known while none is.
fn arm_line(vehicle: &Vehicle<ArmState>) -> String {
    if vehicle.arm_count() == 0 {
        return format!(
            "{} component(s), no manipulator yet",
            vehicle.network().components.len()
        );
    }
    vehicle
        .arms()
        .map(|(_, s)| one_arm(s))
        .collect::<Vec<_>>()
        .join(", ")
}

fn progress(stats: &RecorderStats, elapsed: f64, vehicle: &Vehicle<ArmState>) -> String {
    format!(
        "recording {}  {}  rx {}  tx {}  decoded {}  {:.1} MB  dropped {}  arms {}",
        stats.path.display(),
        clock(elapsed),
        stats.rx,
        stats.tx,
        stats.decoded,
        stats.bytes as f64 / 1e6,
        stats.dropped,
        arm_line(vehicle)
    )
}

/// Runs the subcommand. Exit status 0 when the recording was finished, 1 when writing failed
/// (what was written before the failure stays readable), 2 for wrong arguments.
pub fn run(args: &RecordArgs) -> Result<i32> {
    let duration = parse_duration(args.duration)?;
    let notes = args
        .note
        .iter()
        .map(|n| parse_note(n))
        .collect::<Result<Vec<_>>>()?;
    let (cfg, _identity, vehicle) = args.net.net_config_with_vehicle(args.vehicle.as_deref())?;
    // The recorder starts first and shares the session's clock, so the first datagram the
    // network side sends is recorded and replay times equal live times.
    let epoch = Epoch::now();
    let tap = Tap::new();
    let mut rcfg = recorder_config(args, &cfg, epoch.unix_ns, &tap);
    rcfg.vehicle = vehicle;
    let recorder = Recorder::start(rcfg)?;
    tap.connect(recorder.sender());
    // Each note carries its own time; the recorder thread takes them at once.
    let note_tx = recorder.note_sender();
    for note in notes {
        if note_tx.send(note).is_err() {
            break;
        }
    }
    let (net, looked) = args.net.spawn_tapped(cfg, &tap, epoch)?;
    if let Some(buffer) = net.short_receive_buffer() {
        // A recording is where a burst lost at the socket is lost for good: say it up front.
        tracing::warn!(
            "record: {}",
            crate::net::socket::short_buffer_advice(buffer)
        );
    }

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second Ctrl-C while finishing falls back to the default (the file stays readable
        // up to the last flush).
        if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)) {
            tracing::warn!("record: Ctrl-C will not finish the file cleanly: {e}");
        }
    }
    if !args.quiet {
        eprintln!(
            "recording to {} (looking at {looked}); Ctrl-C to stop",
            args.out.display()
        );
    }
    // Every arm's latest state (the network side follows every manipulator it finds; no
    // histories grow over a long recording).
    let mut vehicle: Vehicle<ArmState> = Vehicle::new();
    let start = Instant::now();
    // Beyond what the clock can hold means "until Ctrl-C".
    let until = duration.and_then(|d| start.checked_add(d));
    let mut last_line = Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut failure = None;
    loop {
        if let Ok(u) = net.updates().recv_timeout(Duration::from_millis(50)) {
            vehicle.apply(&u);
            for u in net.updates().try_iter() {
                vehicle.apply(&u);
            }
        }
        let stats = recorder.stats();
        if !stats.running {
            failure = Some(
                stats
                    .error
                    .clone()
                    .unwrap_or_else(|| "the recorder stopped".to_string()),
            );
            break;
        }
        let now = Instant::now();
        if interrupted.load(Ordering::Relaxed) || until.is_some_and(|u| now >= u) {
            break;
        }
        if !args.quiet && now - last_line >= Duration::from_secs(1) {
            last_line = now;
            let line = progress(&stats, (now - start).as_secs_f64(), &vehicle);
            if tty {
                eprint!("\r\x1b[2K{line}");
            } else {
                eprintln!("{line}");
            }
        }
    }
    if tty && !args.quiet {
        eprintln!();
    }
    // Leave politely (cancel events, release control): those datagrams are recorded too.
    net.shutdown(Duration::from_millis(300));
    tap.disconnect();
    let result = recorder.stop();
    let elapsed = start.elapsed().as_secs_f64();
    Ok(conclude(result, failure, &vehicle, &looked, elapsed))
}

/// `--duration`: a positive number of seconds the clock can hold, or none (until Ctrl-C).
fn parse_duration(duration: Option<f64>) -> Result<Option<Duration>> {
    match duration {
        Some(d) if d.is_finite() && d > 0.0 => {
            Ok(Some(Duration::try_from_secs_f64(d).map_err(|_| {
                anyhow::anyhow!("--duration {d}: too long; give seconds, e.g. 3600")
            })?))
        }
        Some(d) => anyhow::bail!("--duration {d}: give a positive number of seconds"),
        None => Ok(None),
    }
}

/// The recorder's configuration: the file, the session's clock (`unix_ns` at its start), the
/// tap, and the session metadata saying who recorded and where it looked.
fn recorder_config(args: &RecordArgs, cfg: &NetConfig, unix_ns: u64, tap: &Tap) -> RecorderConfig {
    let mut rcfg = RecorderConfig::new(args.out.clone(), unix_ns);
    rcfg.decoded = !args.no_decoded;
    if !args.no_foxglove {
        rcfg.foxglove = Some(ScenePalette::new(true).foxglove_look());
    }
    rcfg.tap = Some(tap.clone());
    rcfg.metadata
        .insert("ocu_id".into(), cfg.client.id.to_string());
    rcfg.metadata.insert(
        "connect".into(),
        cfg.client
            .connect
            .iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    );
    if let Some(c) = args.net.component {
        rcfg.metadata.insert("component".into(), c.to_string());
    }
    rcfg.metadata
        .insert("recorded_by".into(), "jaus-ocu record".into());
    rcfg
}

/// Says how the recording ended and returns the exit status: 0 finished, 1 writing failed.
fn conclude(
    result: Result<RecorderStats, RecordError>,
    failure: Option<String>,
    vehicle: &Vehicle<ArmState>,
    looked: &str,
    elapsed: f64,
) -> i32 {
    match (result, failure) {
        (Ok(stats), None) => {
            eprintln!(
                "wrote {}: {} datagrams ({} received, {} sent), {} decoded messages, {:.1} MB, {}{}",
                stats.path.display(),
                stats.rx + stats.tx,
                stats.rx,
                stats.tx,
                stats.decoded,
                stats.bytes as f64 / 1e6,
                clock(elapsed),
                if stats.dropped > 0 {
                    format!(
                        "; {} datagrams were NOT recorded because the disk could not keep up (noted in the file's session_end metadata)",
                        stats.dropped
                    )
                } else {
                    String::new()
                }
            );
            if vehicle.arm_count() == 0 {
                eprintln!(
                    "note: no manipulator answered (looked at {looked}); the recording holds the discovery traffic only"
                );
            }
            0
        }
        (_, Some(why)) => {
            eprintln!("error: {why}");
            1
        }
        (Err(e), None) => {
            eprintln!("error: {e}");
            1
        }
    }
}

#[cfg(test)]
mod note_tests {
    use super::parse_note;

    #[test]
    fn a_note_is_text_at_seconds_and_a_bookmark_has_no_text() {
        let n = parse_note("valve opened@12.5").unwrap();
        assert_eq!((n.t, n.text.as_str()), (12.5, "valve opened"));
        let b = parse_note("@2").unwrap();
        assert_eq!((b.t, b.text.as_str()), (2.0, ""));
        let at = parse_note("mail a@b.c@3").unwrap();
        assert_eq!(at.text, "mail a@b.c");
        for bad in ["no time", "x@", "x@-1", "x@soon", "x@inf"] {
            let e = parse_note(bad).unwrap_err().to_string();
            assert!(e.contains("--note") && e.contains("12.5"), "{bad}: {e}");
        }
    }
}
