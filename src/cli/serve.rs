//! `jaus-ocu serve`: the live view server without a GUI (a van, a server): the live session
//! of every arm the network side follows — or a recording played at 1×, looping — served to
//! Foxglove and Lichtblick over their WebSocket protocol, read-only
//! ([`crate::record::live`]). Stops after `--duration` or on Ctrl-C.

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
use crate::net::tap::{Epoch, Tap, WireRecord};
use crate::net::thread::NetHandle;
use crate::record::live::{DEFAULT_LISTEN, LiveConfig, LiveServer, LiveStats};
use crate::record::source::WireSource;
use crate::ui::theme::ScenePalette;

/// Arguments of `jaus-ocu serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A recording (.mcap) or capture (.pcap/.pcapng) to serve instead of the live session:
    /// played at 1×, from the start again at its end (viewers are told to clear).
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
    /// With FILE: play it once, not in a loop.
    #[arg(long)]
    pub once: bool,
    /// No progress line (errors and the final summary only).
    #[arg(long, short)]
    pub quiet: bool,
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

fn progress(stats: &LiveStats, elapsed: f64, arms: &str) -> String {
    format!(
        "live view  {:.0} s  viewers {}  datagrams {}  messages {}  dropped {}  arms {arms}",
        elapsed, stats.viewers, stats.datagrams, stats.messages, stats.dropped
    )
}

fn serve_live(args: &ServeArgs, done: &dyn Fn() -> bool) -> Result<i32> {
    let (mut cfg, _identity) = args.net.net_config()?;
    let epoch = Epoch::now();
    let tap = Tap::new();
    let mut server = LiveServer::start(&LiveConfig::new(args.listen, epoch.unix_ns, Some(look())))?;
    server.attach(&tap);
    cfg.tap = tap.clone();
    cfg.epoch = Some(epoch);
    let looked = args.net.looked_at(&cfg);
    let net = NetHandle::spawn(cfg).context("starting the network side")?;
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
    eprintln!(
        "stopped serving: {} datagrams decoded, {} messages sent, {} lost while behind",
        stats.datagrams, stats.messages, stats.dropped
    );
    Ok(0)
}

fn serve_file(args: &ServeArgs, path: &std::path::Path, done: &dyn Fn() -> bool) -> Result<i32> {
    let open = || {
        WireSource::open(path, crate::jaus::judp::PORT)
            .with_context(|| format!("cannot serve {}", path.display()))
    };
    let mut source = open()?;
    let mut first = WireRecord::empty();
    if !source.next_into(&mut first) {
        anyhow::bail!(
            "cannot serve {}: it holds no JUDP datagram{}",
            path.display(),
            source
                .stopped()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        );
    }
    let origin = source.info().time_origin(Some(&first));
    let server = LiveServer::start(&LiveConfig::new(args.listen, origin, Some(look())))?;
    announce(&server, &format!("{} at 1×", path.display()));
    let start = Instant::now();
    let mut last_line = Instant::now();
    let mut pending = Some(first);
    let mut passes = 1u64;
    'play: loop {
        // Records are due at their own spacing from this pass's first.
        let pass_start = Instant::now();
        let t0 = pending.as_ref().map_or(0, |r| r.t_ns);
        while let Some(rec) = pending.take() {
            let due = Duration::from_nanos(rec.t_ns.saturating_sub(t0));
            while pass_start.elapsed() < due {
                if done() {
                    break 'play;
                }
                let left = due.saturating_sub(pass_start.elapsed());
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
            server.offer(rec);
            let mut next = WireRecord::empty();
            if source.next_into(&mut next) {
                pending = Some(next);
            }
            if !args.quiet && last_line.elapsed() >= Duration::from_secs(5) {
                last_line = Instant::now();
                eprintln!(
                    "{}",
                    progress(
                        &server.stats(),
                        start.elapsed().as_secs_f64(),
                        &format!("pass {passes}")
                    )
                );
            }
        }
        if let Some(problem) = source.stopped() {
            eprintln!(
                "serve: {}: {problem}; what came before it was served",
                path.display()
            );
        }
        if args.once || done() {
            break;
        }
        // From the start again: viewers clear what they have and see the file anew.
        source = open()?;
        let mut rec = WireRecord::empty();
        if !source.next_into(&mut rec) {
            break;
        }
        // The previous pass's last records are decoded before the restart (two channels:
        // their order is not kept otherwise).
        let drained = Instant::now();
        while server.queued() > 0 && drained.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        server.restart(origin);
        pending = Some(rec);
        passes += 1;
    }
    // With --once, the viewers keep the last state until the end of --duration or Ctrl-C.
    while args.once && !done() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stats = server.stats();
    server.stop();
    eprintln!(
        "stopped serving: {} datagrams decoded, {} messages sent, {} lost while behind, {passes} pass(es)",
        stats.datagrams, stats.messages, stats.dropped
    );
    Ok(0)
}
