//! `jaus-ocu decode`: one datagram (or bare message) from hex arguments, or one per line from
//! standard input.

use std::io::{BufRead, Write};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use super::parse_hex;
use crate::jaus::dump::{datagram_error_json, decode_datagram, message_line};
use crate::jaus::{DecodeContext, JointKind, Message};

/// Arguments of `jaus-ocu decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Write JSON (one object per datagram) instead of the human dump.
    #[arg(long)]
    pub json: bool,
    /// The hex is a bare JAUS message (message ID + body), not a JUDP datagram.
    #[arg(long)]
    pub message: bool,
    /// Joint types base to tip, e.g. `RRPRRR` (R revolute, P prismatic): resolves the
    /// ambiguous type-and-units code 1 sent by OpenJAUS peers.
    #[arg(long, value_name = "TYPES")]
    pub joints: Option<String>,
    /// Hex bytes, with or without spaces (several arguments are joined); `-` reads one
    /// datagram per line from standard input.
    #[arg(required = true, value_name = "HEX")]
    pub hex: Vec<String>,
}

fn context(joints: Option<&str>) -> Result<DecodeContext> {
    let Some(j) = joints else {
        return Ok(DecodeContext::NONE);
    };
    let kinds = j
        .chars()
        .map(|c| match c.to_ascii_uppercase() {
            'R' => Ok(JointKind::Revolute),
            'P' => Ok(JointKind::Prismatic),
            other => bail!("--joints: '{other}' is not a joint type; use R (revolute) or P (prismatic), e.g. RRPRRR"),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DecodeContext {
        joint_kinds: Some(kinds),
    })
}

/// The JSON and lines for one input, and whether it decoded cleanly.
fn decode_one(
    bytes: &[u8],
    bare_message: bool,
    ctx: &DecodeContext,
) -> (serde_json::Value, Vec<String>, bool) {
    if bare_message {
        return match Message::parse_with(bytes, ctx) {
            Ok(m) => (m.to_json(), vec![message_line(&m)], true),
            Err(e) => (
                datagram_error_json(&e),
                vec![format!("UNDECODABLE {e}")],
                false,
            ),
        };
    }
    match decode_datagram(bytes, ctx, None) {
        Ok(d) => (d.to_json(), d.to_lines(), d.is_clean()),
        Err(e) => (
            datagram_error_json(&e),
            vec![format!("UNDECODABLE {e}")],
            false,
        ),
    }
}

/// Runs the subcommand. Exit status: 0 when decoded (stdin mode: always, bad lines are reported
/// inline), 1 when the single datagram given as arguments does not decode.
pub fn run(args: &DecodeArgs) -> Result<i32> {
    let ctx = context(args.joints.as_deref())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.hex.len() == 1 && args.hex[0] == "-" {
        let stdin = std::io::stdin();
        for (n, line) in stdin.lock().lines().enumerate() {
            let line = line.context("reading standard input")?;
            if line.trim().is_empty() {
                continue;
            }
            match parse_hex(&line) {
                Ok(bytes) => {
                    let (j, lines, _) = decode_one(&bytes, args.message, &ctx);
                    if args.json {
                        writeln!(out, "{j}")?;
                    } else {
                        for l in lines {
                            writeln!(out, "{}: {l}", n + 1)?;
                        }
                    }
                }
                Err(e) => {
                    if args.json {
                        writeln!(
                            out,
                            "{}",
                            json!({ "error": format!("line {}: {e}", n + 1), "offset": null })
                        )?;
                    } else {
                        writeln!(out, "{}: BAD HEX {e}", n + 1)?;
                    }
                }
            }
        }
        out.flush()?;
        return Ok(0);
    }
    let text = args.hex.join(" ");
    let bytes = parse_hex(&text).map_err(|e| anyhow::anyhow!("HEX: {e}"))?;
    let (j, lines, clean) = decode_one(&bytes, args.message, &ctx);
    if args.json {
        writeln!(out, "{j}")?;
    } else {
        for l in lines {
            writeln!(out, "{l}")?;
        }
    }
    out.flush()?;
    Ok(i32::from(!clean))
}
