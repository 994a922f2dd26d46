//! `jaus-ocu flood` (hidden): sends the datagrams of an untrusted sender
//! ([`crate::sim::hostile`]) to OCUs and arms on this machine, to prove they stay up and
//! keep their facts (issue 29; `tests/hostile.rs`, `.ci/flood.sh`).
//!
//! Bounded in every way: loopback addresses only (anything else is refused, exit status 2),
//! at most [`MAX_RATE`] datagrams a second for at most [`MAX_SECONDS`], paced against a
//! deadline per datagram, and it stops by itself. Each datagram goes to every `--to`
//! address; the summary says how many of each kind were sent and the rate achieved.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use crate::jaus::JausId;
use crate::net::socket::{self, Membership, Sink};
use crate::sim::component::DEFAULT_ID;
use crate::sim::hostile::{Hostile, Kind};

/// The highest `--rate`, datagrams a second to each address.
pub const MAX_RATE: u32 = 10_000;
/// The longest `--seconds`.
pub const MAX_SECONDS: f64 = 600.0;
/// How far the pacing may fall behind before the datagrams it missed are skipped rather than
/// sent in a burst (a stalled process must not turn into a burst at many times the rate).
const MAX_LAG: Duration = Duration::from_millis(250);

/// Arguments of `jaus-ocu flood`.
#[derive(Debug, Args)]
pub struct FloodArgs {
    /// Where to send: a loopback address with its port, 127.0.0.0/8 or `[::1]` (repeatable;
    /// each datagram goes to every one). Any other address is refused: hostile traffic never
    /// leaves this machine.
    #[arg(long, value_name = "ADDR", required = true, value_parser = parse_loopback)]
    pub to: Vec<SocketAddr>,
    /// Datagrams a second to each address (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RATE)))]
    pub rate: u32,
    /// How long to send, seconds (at most 600).
    #[arg(long, value_name = "S", default_value_t = 20.0, value_parser = parse_seconds)]
    pub seconds: f64,
    /// The real arm's JAUS ID, carried by the spoofed facts.
    #[arg(long, value_name = "S.N.C", default_value_t = DEFAULT_ID)]
    pub arm_id: JausId,
    /// The OCU's own JAUS ID, carried by the datagrams that pose as it (`probe --json` says
    /// it in `ocu_id`; set it with the OCU's `--jaus-id`). Repeatable: each datagram is aimed
    /// at one of them (or at every component).
    #[arg(long, value_name = "S.N.C", required = true)]
    pub ocu_id: Vec<JausId>,
    /// Seed of the generator: equal seeds send equal datagrams.
    #[arg(long, value_name = "N", default_value_t = 29)]
    pub seed: u64,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `--to`: an address as `--connect` takes it, refused unless it is loopback.
fn parse_loopback(text: &str) -> Result<SocketAddr, String> {
    let addr = super::parse_peer_addr(text)?;
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(format!(
            "{addr} is not a loopback address: flood sends only to 127.0.0.0/8 or [::1] \
             (hostile traffic must never leave this machine)"
        ))
    }
}

/// `--seconds` (and `relay --duration`): positive, at most [`MAX_SECONDS`].
pub(super) fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "'{text}' is not a duration: give seconds, more than 0 and at most {MAX_SECONDS}"
        )),
    }
}

/// What was sent.
#[derive(Debug, Default)]
struct Tally {
    /// Datagrams sent, each address counted.
    sent: u64,
    /// Bytes sent.
    bytes: u64,
    /// Sends the system refused, and the first reason.
    errors: u64,
    first_error: Option<String>,
    /// Datagrams the pacing skipped after falling behind by more than [`MAX_LAG`].
    skipped: u64,
    /// Datagrams sent, by kind.
    kinds: BTreeMap<Kind, u64>,
}

/// The sending sockets: one per address family in use, bound to loopback.
struct Senders {
    v4: Option<UdpSocket>,
    v6: Option<UdpSocket>,
}

impl Senders {
    fn bind(to: &[SocketAddr]) -> Result<Self> {
        let bind = |addr: SocketAddr| {
            socket::bind(addr, Membership::Component)
                .with_context(|| format!("binding the sending socket on {addr}"))
        };
        Ok(Self {
            v4: to
                .iter()
                .any(SocketAddr::is_ipv4)
                .then(|| bind(SocketAddr::from(([127, 0, 0, 1], 0))))
                .transpose()?,
            v6: to
                .iter()
                .any(SocketAddr::is_ipv6)
                .then(|| bind(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0))))
                .transpose()?,
        })
    }

    fn send(&mut self, bytes: &[u8], to: SocketAddr) -> std::io::Result<()> {
        let socket = if to.is_ipv4() {
            self.v4.as_mut()
        } else {
            self.v6.as_mut()
        };
        match socket {
            Some(s) => Sink::send_to(s, bytes, to),
            None => Err(std::io::Error::other("no socket for this address family")),
        }
    }
}

/// Runs `jaus-ocu flood`: exit status 0 when datagrams went out, 1 when every send failed.
pub fn run(args: &FloodArgs) -> Result<i32> {
    let mut senders = Senders::bind(&args.to)?;
    let mut hostile = Hostile::new(args.seed, args.arm_id, &args.ocu_id);
    let mut tally = Tally::default();
    let rate = f64::from(args.rate);
    let total = (rate * args.seconds).ceil() as u64;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(args.seconds);
    let mut i = 0u64;
    while i < total {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        let now = Instant::now();
        if now >= end {
            break;
        }
        if due > now {
            std::thread::sleep(due - now);
        } else if now - due > MAX_LAG {
            // Fallen behind (a stalled process): skip to the datagram due now.
            let now_index = ((now - start).as_secs_f64() * rate) as u64;
            tally.skipped += now_index.saturating_sub(i);
            i = now_index;
            continue;
        }
        let (kind, datagram) = hostile.next_datagram();
        for &to in &args.to {
            match senders.send(&datagram, to) {
                Ok(()) => {
                    tally.sent += 1;
                    tally.bytes += datagram.len() as u64;
                    *tally.kinds.entry(kind).or_default() += 1;
                }
                Err(e) => {
                    tally.errors += 1;
                    tally
                        .first_error
                        .get_or_insert_with(|| format!("{to}: {e}"));
                }
            }
        }
        i += 1;
    }
    let elapsed = start.elapsed().as_secs_f64().max(1e-9);
    report(args, &tally, elapsed);
    Ok(i32::from(tally.sent == 0))
}

fn report(args: &FloodArgs, tally: &Tally, elapsed: f64) {
    let per_address = tally.sent as f64 / args.to.len() as f64 / elapsed;
    if args.json {
        let kinds: serde_json::Map<String, serde_json::Value> = Kind::ALL
            .iter()
            .map(|k| {
                (
                    k.name().to_owned(),
                    tally.kinds.get(k).copied().unwrap_or(0).into(),
                )
            })
            .collect();
        println!(
            "{}",
            json!({
                "sent": tally.sent,
                "bytes": tally.bytes,
                "addresses": args.to.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "seconds": elapsed,
                "rate_per_address": per_address,
                "rate_asked": args.rate,
                "skipped": tally.skipped,
                "send_errors": tally.errors,
                "first_error": tally.first_error,
                "seed": args.seed,
                "arm_id": args.arm_id.to_string(),
                "ocu_ids": args.ocu_id.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "kinds": kinds,
            })
        );
        return;
    }
    let kinds: Vec<String> = Kind::ALL
        .iter()
        .map(|k| format!("{k} {}", tally.kinds.get(k).copied().unwrap_or(0)))
        .collect();
    let errors = match &tally.first_error {
        Some(e) => format!(", {} send errors (first: {e})", tally.errors),
        None => String::new(),
    };
    let skipped = if tally.skipped > 0 {
        format!(", {} skipped after falling behind", tally.skipped)
    } else {
        String::new()
    };
    println!(
        "flood: sent {} datagrams ({:.1} MB) to {} address(es) in {elapsed:.2} s, {per_address:.1}/s \
         each (asked {}/s){skipped}{errors}: {}",
        tally.sent,
        tally.bytes as f64 / 1e6,
        args.to.len(),
        args.rate,
        kinds.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::{parse_loopback, parse_seconds};

    #[test]
    fn refuses_every_address_but_loopback() {
        assert!(parse_loopback("127.0.0.1:4000").is_ok());
        assert!(parse_loopback("127.3.2.1:4000").is_ok());
        assert!(parse_loopback("[::1]:4000").is_ok());
        assert!(parse_loopback("localhost:4000").is_ok());
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

    #[test]
    fn seconds_are_positive_and_bounded() {
        assert_eq!(parse_seconds("5"), Ok(5.0));
        assert_eq!(parse_seconds("600"), Ok(600.0));
        for bad in ["0", "-1", "601", "nan", "inf", "x"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
