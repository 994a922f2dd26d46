//! `jaus-ocu serve`: the live view server without a GUI (a van, a server): the live session
//! of every arm the network side follows — or a recording, under Foxglove's playback control
//! (`record::live_file`) — served to Foxglove and Lichtblick over their WebSocket protocol,
//! read-only ([`crate::record::live`]). Stops after `--duration`, on Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

use super::probe::NetArgs;
use crate::model::state::ArmState;
use crate::model::vehicle::Vehicle;
use crate::net::tap::{Epoch, Tap};
use crate::record::live::{DEFAULT_LISTEN, LiveConfig, LiveServer, LiveStats};
use crate::record::live_file;
use crate::ui::theme::ScenePalette;

/// Arguments of `jaus-ocu serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A recording (.mcap) or capture (.pcap/.pcapng) to serve instead of the live session:
    /// played at 1×; Foxglove's playback bar plays, pauses, seeks and changes its speed.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Where to look and who we are (the same network side as the GUI; ignored with FILE).
    #[command(flatten)]
    pub net: NetArgs,
    /// Where viewers connect: loopback by default. Another address (0.0.0.0 for every
    /// interface) lets anyone who reaches this machine watch the arms: prefer an SSH tunnel
    /// (README, "A live view for Foxglove"). Port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// With FILE: from the start again at its end (default: it ends, and Play in Foxglove's
    /// playback bar starts it again).
    #[arg(long = "loop")]
    pub r#loop: bool,
    /// No progress line (errors and the final summary only).
    #[arg(long, short)]
    pub quiet: bool,
    /// The vehicle file (TOML, as `assets/vehicles/demo.toml`): the ground, the vehicle's
    /// obstacles and the pairs allowed to touch, for the clearance in `/jaus/arm_state` and
    /// `/jaus/events`. Without it only the arms' own cylinders are checked.
    #[arg(long, value_name = "FILE")]
    pub vehicle: Option<PathBuf>,
}

/// Runs the subcommand. Exit status 0 when it stopped as asked, 1 when the server or the
/// network side could not start or the file could not be read.
pub fn run(args: &ServeArgs) -> Result<i32> {
    let duration = match args.duration {
        Some(d) if d.is_finite() && d > 0.0 => Some(Duration::from_secs_f64(d.min(1e9))),
        Some(d) => anyhow::bail!("--duration {d}: give a positive number of seconds"),
        None => None,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)) {
            tracing::warn!("serve: Ctrl-C will not stop cleanly: {e}");
        }
    }
    let start = Instant::now();
    let until = duration.and_then(|d| start.checked_add(d));
    let done =
        move || interrupted.load(Ordering::Relaxed) || until.is_some_and(|u| Instant::now() >= u);
    match &args.file {
        Some(path) => serve_file(args, path, &done),
        None => serve_live(args, &done),
    }
}

fn look() -> crate::record::foxglove::SceneLook {
    ScenePalette::new(true).foxglove_look()
}

fn announce(server: &LiveServer, what: &str) {
    // On stdout, one line, for scripts that wait for it.
    println!(
        "serving {what} on ws://{} (Foxglove: Open connection → Foxglove WebSocket); read-only",
        server.address()
    );
}

/// One progress line: the feed's losses (`not decoded`: datagrams the server was too busy to
/// decode), every viewer's (`not received`: messages its connection could not take), then
/// each viewer that lost some.
fn progress(stats: &LiveStats, elapsed: f64, arms: &str) -> String {
    format!(
        "live view  {:.0} s  viewers {}  datagrams {}  messages {}  not decoded {}  \
         not received {}{}  arms {arms}",
        elapsed,
        stats.viewers,
        stats.datagrams,
        stats.messages,
        stats.dropped,
        stats.not_received,
        per_viewer(stats)
    )
}

/// ` (127.0.0.1:40112 5474 of 60000)` for each viewer connected that did not receive
/// everything it was sent (empty when none).
fn per_viewer(stats: &LiveStats) -> String {
    let losing: Vec<String> = stats
        .per_viewer
        .iter()
        .filter(|v| v.not_received > 0)
        .map(|v| {
            format!(
                "{} {} of {}",
                v.peer,
                v.not_received,
                v.sent + v.not_received
            )
        })
        .collect();
    if losing.is_empty() {
        String::new()
    } else {
        format!(" ({})", losing.join(", "))
    }
}

/// The last line: what was decoded and sent, and what was lost where.
fn summary(stats: &LiveStats) -> String {
    format!(
        "stopped serving: {} datagrams decoded, {} messages sent, {} datagrams not decoded \
         while behind, {} messages not received by viewers{}",
        stats.datagrams,
        stats.messages,
        stats.dropped,
        stats.not_received,
        per_viewer(stats)
    )
}

fn serve_live(args: &ServeArgs, done: &dyn Fn() -> bool) -> Result<i32> {
    let (cfg, _identity, vehicle) = args.net.net_config_with_vehicle(args.vehicle.as_deref())?;
    let epoch = Epoch::now();
    let tap = Tap::new();
    let mut live = LiveConfig::new(args.listen, epoch.unix_ns, Some(look()));
    live.vehicle = vehicle;
    let mut server = LiveServer::start(&live)?;
    server.attach(&tap);
    let (net, looked) = args.net.spawn_tapped(cfg, &tap, epoch)?;
    announce(&server, &format!("the live session (looking at {looked})"));
    let mut vehicle: Vehicle<ArmState> = Vehicle::new();
    let start = Instant::now();
    let mut last_line = Instant::now();
    while !done() {
        if let Ok(u) = net.updates().recv_timeout(Duration::from_millis(50)) {
            vehicle.apply(&u);
            for u in net.updates().try_iter() {
                vehicle.apply(&u);
            }
        }
        if !args.quiet && last_line.elapsed() >= Duration::from_secs(5) {
            last_line = Instant::now();
            let arms = vehicle
                .arms()
                .map(|(id, s)| format!("{id} {}", s.link.name()))
                .collect::<Vec<_>>()
                .join(", ");
            eprintln!(
                "{}",
                progress(&server.stats(), start.elapsed().as_secs_f64(), &arms)
            );
        }
    }
    // Leave politely (cancel events, release control); viewers see it happen.
    net.shutdown(Duration::from_millis(300));
    let stats = server.stats();
    server.stop();
    eprintln!("{}", summary(&stats));
    Ok(0)
}

fn serve_file(args: &ServeArgs, path: &std::path::Path, done: &dyn Fn() -> bool) -> Result<i32> {
    let vehicle = super::read_vehicle_file(args.vehicle.as_deref())?;
    let port = crate::jaus::judp::PORT;
    let span = live_file::span(path, port)
        .with_context(|| format!("cannot serve {}", path.display()))?
        .with_context(|| format!("cannot serve {}: it holds no JUDP datagram", path.display()))?;
    let mut cfg = LiveConfig::new(args.listen, span.origin, Some(look()));
    cfg.playback = Some((span.first_ns, span.last_ns));
    cfg.vehicle = vehicle;
    let server = LiveServer::start(&cfg)?;
    announce(
        &server,
        &format!(
            "{} ({:.1} s, Foxglove's playback bar plays, pauses, seeks{})",
            path.display(),
            (span.last_ns - span.first_ns) as f64 * 1e-9,
            if args.r#loop { ", looping" } else { "" }
        ),
    );
    let start = Instant::now();
    let last_line = std::cell::Cell::new(Instant::now());
    let quiet = args.quiet;
    let progress_done = || {
        if !quiet && last_line.get().elapsed() >= Duration::from_secs(5) {
            last_line.set(Instant::now());
            eprintln!(
                "{}",
                progress(
                    &server.stats(),
                    start.elapsed().as_secs_f64(),
                    "from the file"
                )
            );
        }
        done()
    };
    let mut problem = |why: &str| {
        eprintln!(
            "serve: {}: {why}; what came before it was served",
            path.display()
        );
    };
    let passes = live_file::play(
        &server,
        path,
        port,
        &span,
        args.r#loop,
        &progress_done,
        &mut problem,
    )
    .with_context(|| format!("cannot serve {}", path.display()))?;
    let stats = server.stats();
    server.stop();
    eprintln!("{}, {passes} pass(es)", summary(&stats));
    Ok(0)
}
