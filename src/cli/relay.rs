//! `jaus-ocu relay` (hidden): a lossy two-way relay between an OCU and an arm on this machine,
//! for measuring the emergency stop over a link that loses datagrams both ways (issue 44;
//! `tests/relay.rs`, `.ci/estop-relay.sh`). The simulator's own `sim --loss` drops only what
//! the arm sends.
//!
//! The OCU sends to `--listen`; the relay sends on to the arm at `--to` from the same socket,
//! and what the arm sends back goes to the last address that sent from the OCU side
//! ([`crate::net::relay::Relay`]). Each direction loses its own fraction, drawn from `--seed`.
//! `--log` writes one JSON line per datagram: `t` (seconds since the relay started), `unix`
//! (the same instant as UNIX time, to compare with other processes' clocks), `dir`
//! (`up` = OCU → arm, `down`), `fate` (`forwarded`, `dropped`, `no_ocu`), `from`, `to`,
//! `bytes`, `messages` (the JAUS message of each block, named by our codec) and `undecodable`
//! (why, when the datagram or a block did not decode).
//!
//! Bounded in every way: loopback addresses only (anything else is refused, exit status 2),
//! for at most [`MAX_SECONDS`] and [`MAX_DATAGRAMS`] datagrams, [`MAX_LOG_LINES`] log lines;
//! it stops by itself. It only forwards what it receives, one for one.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use crate::net::link::Link;
use crate::net::relay::{Counts, Direction, Fate, Loss, Relay, contents};

/// The longest `--duration`, seconds.
pub const MAX_SECONDS: f64 = super::flood::MAX_SECONDS;
/// The most datagrams relayed in one run (both directions together).
pub const MAX_DATAGRAMS: u64 = 20_000_000;
/// The most lines written to `--log`; later datagrams are counted, not logged.
pub const MAX_LOG_LINES: u64 = 2_000_000;

/// Arguments of `jaus-ocu relay`.
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Where the OCU sends: a loopback address of 127.0.0.0/8 with its port (e.g.
    /// 127.0.0.1:3800). Datagrams to the arm leave from it too.
    #[arg(long, value_name = "ADDR", value_parser = parse_loopback)]
    pub listen: SocketAddr,
    /// The arm: a loopback address of 127.0.0.0/8 with its port.
    #[arg(long, value_name = "ADDR", value_parser = parse_loopback)]
    pub to: SocketAddr,
    /// Fraction of datagrams lost each way, 0 to 1 (e.g. 0.4).
    #[arg(long, value_name = "P", value_parser = parse_probability,
          conflicts_with_all = ["loss_up", "loss_down"])]
    pub loss: Option<f64>,
    /// Fraction lost from the OCU to the arm, 0 to 1 (default 0).
    #[arg(long, value_name = "P", value_parser = parse_probability)]
    pub loss_up: Option<f64>,
    /// Fraction lost from the arm to the OCU, 0 to 1 (default 0).
    #[arg(long, value_name = "P", value_parser = parse_probability)]
    pub loss_down: Option<f64>,
    /// Seed of the drop decisions: equal seeds drop the same datagrams of equal traffic.
    #[arg(long, value_name = "N", default_value_t = 44)]
    pub seed: u64,
    /// How long to relay, seconds (at most 600); the relay then stops by itself.
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = super::flood::parse_seconds)]
    pub duration: f64,
    /// Write one JSON line per datagram to FILE (replaced if it exists).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Print the summary at the end as one JSON object.
    #[arg(long)]
    pub json: bool,
}

impl RelayArgs {
    /// The loss of each direction: `--loss` both ways, else `--loss-up` / `--loss-down`.
    fn loss(&self) -> Loss {
        match self.loss {
            Some(p) => Loss { up: p, down: p },
            None => Loss {
                up: self.loss_up.unwrap_or(0.0),
                down: self.loss_down.unwrap_or(0.0),
            },
        }
    }
}

/// `--listen`, `--to`: an address as `--connect` takes it, refused unless it is in
/// 127.0.0.0/8.
fn parse_loopback(text: &str) -> Result<SocketAddr, String> {
    let addr = super::parse_peer_addr(text)?;
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_loopback() => Ok(addr),
        _ => Err(format!(
            "{addr} is not a loopback address of 127.0.0.0/8: the relay listens and forwards \
             only on this machine (test traffic must never leave it); give e.g. 127.0.0.1:3800"
        )),
    }
}

/// `--loss*`: a fraction from 0 to 1.
fn parse_probability(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{text}' is not a loss probability: give a fraction from 0 to 1, e.g. 0.4 for 40 %"
        )),
    }
}

/// The per-datagram log, bounded.
struct Log {
    out: BufWriter<File>,
    lines: u64,
    skipped: u64,
}

impl Log {
    fn create(path: &PathBuf) -> Result<Self> {
        let file = File::create(path).with_context(|| {
            format!(
                "cannot create the log {} (give a writable path with --log)",
                path.display()
            )
        })?;
        Ok(Self {
            out: BufWriter::new(file),
            lines: 0,
            skipped: 0,
        })
    }

    /// Writes one line and flushes it, so that a reader sees each datagram as it passes.
    fn write(&mut self, line: &serde_json::Value) -> Result<()> {
        if self.lines >= MAX_LOG_LINES {
            self.skipped += 1;
            return Ok(());
        }
        writeln!(self.out, "{line}")
            .and_then(|()| self.out.flush())
            .context("writing the relay log")?;
        self.lines += 1;
        Ok(())
    }
}

/// Why the relay stopped.
#[derive(Debug, Clone, Copy)]
enum Stopped {
    Duration,
    Count,
}

/// Runs `jaus-ocu relay`: exit status 0 when it ran its course.
pub fn run(args: &RelayArgs) -> Result<i32> {
    if args.listen == args.to {
        bail!(
            "--listen and --to are both {}: the relay would send to itself; give the arm's \
             address to --to and another port to --listen",
            args.to
        );
    }
    let mut relay = Relay::new(args.to, args.loss(), args.seed).map_err(anyhow::Error::msg)?;
    let mut log = args.log.as_ref().map(Log::create).transpose()?;
    let mut link = Link::open(args.listen).map_err(|e| {
        anyhow::anyhow!(
            "cannot listen on UDP {}: {} (choose another address with --listen)",
            args.listen,
            std::io::Error::from(e.kind())
        )
    })?;
    // The relay's clock (seconds since the link opened) as UNIX time, for the log's `unix`.
    let unix_at_open = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
        - link.now();
    let loss = relay.loss();
    eprintln!(
        "relay: on udp {} (the OCU side) to the arm at {}, losing {:.0} % up and {:.0} % down \
         (seed {}), for {} s",
        args.listen,
        args.to,
        loss.up * 100.0,
        loss.down * 100.0,
        args.seed,
        args.duration
    );
    let mut handled = 0u64;
    let stopped = loop {
        if handled >= MAX_DATAGRAMS {
            break Stopped::Count;
        }
        let Some(d) = link
            .recv_until(args.duration)
            .context("receiving on the relay's socket")?
        else {
            break Stopped::Duration;
        };
        handled += 1;
        let decision = relay.receive(d.from);
        if let (Fate::Forwarded, Some(to)) = (decision.fate, decision.to)
            && link.send(to, &d.bytes).is_err()
        {
            // An ICMP "port unreachable" or a full buffer: the link lost it, counted.
            relay.send_failed(decision.direction);
        }
        if let Some(log) = log.as_mut() {
            let c = contents(&d.bytes);
            log.write(&json!({
                "t": d.at,
                "unix": unix_at_open + d.at,
                "dir": decision.direction.name(),
                "fate": decision.fate.name(),
                "from": d.from.to_string(),
                "to": decision.to.map(|a| a.to_string()),
                "bytes": d.bytes.len(),
                "messages": c.messages,
                "undecodable": c.undecodable,
            }))?;
        }
    };
    report(args, &relay, log.as_ref(), link.now(), stopped);
    Ok(0)
}

fn counts_json(c: Counts) -> serde_json::Value {
    json!({
        "received": c.received,
        "forwarded": c.forwarded,
        "dropped": c.dropped,
        "no_ocu": c.no_ocu,
        "send_errors": c.send_errors,
    })
}

fn report(args: &RelayArgs, relay: &Relay, log: Option<&Log>, elapsed: f64, stopped: Stopped) {
    let (up, down) = (relay.counts(Direction::Up), relay.counts(Direction::Down));
    let loss = relay.loss();
    if args.json {
        println!(
            "{}",
            json!({
                "listen": args.listen.to_string(),
                "to": args.to.to_string(),
                "ocu": relay.ocu().map(|a| a.to_string()),
                "seconds": elapsed,
                "stopped": match stopped {
                    Stopped::Duration => "duration",
                    Stopped::Count => "count",
                },
                "seed": args.seed,
                "loss": { "up": loss.up, "down": loss.down },
                "up": counts_json(up),
                "down": counts_json(down),
                "log": args.log.as_ref().map(|p| p.display().to_string()),
                "log_lines": log.map_or(0, |l| l.lines),
                "log_lines_skipped": log.map_or(0, |l| l.skipped),
            })
        );
        return;
    }
    let words = |c: Counts| {
        let mut s = format!(
            "received {}, forwarded {}, dropped {}",
            c.received, c.forwarded, c.dropped
        );
        if c.no_ocu > 0 {
            let _ = write!(s, ", {} before any OCU sent", c.no_ocu);
        }
        if c.send_errors > 0 {
            let _ = write!(s, ", {} refused by the system", c.send_errors);
        }
        s
    };
    let why = match stopped {
        Stopped::Duration => String::new(),
        Stopped::Count => format!(" (stopped after {MAX_DATAGRAMS} datagrams)"),
    };
    println!(
        "relay: {elapsed:.1} s{why}: up (OCU → arm) {}; down (arm → OCU) {}",
        words(up),
        words(down)
    );
    if let Some(l) = log.filter(|l| l.skipped > 0) {
        println!(
            "relay: the log holds the first {} datagrams; {} more were not logged",
            l.lines, l.skipped
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_loopback, parse_probability};

    #[test]
    fn refuses_every_address_but_ipv4_loopback() {
        assert!(parse_loopback("127.0.0.1:4000").is_ok());
        assert!(parse_loopback("127.3.2.1:4000").is_ok());
        for bad in [
            "10.0.0.5:3794",
            "192.168.1.20",
            "239.255.0.1:3794",
            "[::2]:1",
            "0.0.0.0:1",
        ] {
            let e = parse_loopback(bad).unwrap_err();
            assert!(e.contains("not a loopback address"), "{bad}: {e}");
        }
    }

    // The duration is `flood::parse_seconds`, tested there.
    #[test]
    fn loss_is_a_fraction() {
        assert_eq!(parse_probability("0.4"), Ok(0.4));
        assert_eq!(parse_probability("1"), Ok(1.0));
        for bad in ["-0.1", "1.1", "40%", "nan", "x"] {
            assert!(parse_probability(bad).is_err(), "{bad}");
        }
    }
}
