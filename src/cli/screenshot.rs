//! `jaus-ocu screenshot`: the demo UI rendered offscreen to a PNG, no display needed (EGL on
//! Mesa's software device). The simulated arm runs its idle tour for a few simulated seconds
//! first, in memory, so the picture shows the arm away from home and the plots filled. With
//! `--replay FILE`, the replay window of a recording or capture at `--at` seconds instead;
//! with `--scenario emergency|emergency-held|taken|lost`, the session ends in an emergency
//! stop (without or with control held), another OCU taking control, or a lost link;
//! `--scenario vehicle-two-arms` is two arms on one vehicle; `--scenario joint-plots` plots
//! every joint's position and velocity; `--scenario event-log` opens the event log (after
//! `emergency-held`) with a note and a bookmark; `--scenario shift` holds ten minutes within
//! a memory budget of two thirds of their size.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use super::sim::load_arm;
use crate::record::player::Replay;
use crate::ui::app::OcuApp;
use crate::ui::screenshot;
use crate::ui::settings::Settings;

/// Simulated seconds before the picture is taken.
pub const SESSION_S: f64 = 6.0;

/// Largest width or height accepted, pixels.
pub const MAX_SIDE: u32 = 8192;

/// Arguments of `jaus-ocu screenshot`.
#[derive(Debug, Args)]
pub struct ScreenshotArgs {
    /// The PNG to write.
    #[arg(long, value_name = "FILE.png")]
    pub out: PathBuf,
    /// Arm description (TOML) or built-in name: demo, puma560, ur5e.
    #[arg(long, value_name = "FILE", default_value = "demo")]
    pub arm: String,
    /// Image size in pixels, `WIDTHxHEIGHT`.
    #[arg(long, value_name = "WxH", default_value = "1280x800")]
    pub size: String,
    /// Render the replay of this recording (.mcap) or capture (.pcap, .pcapng) instead of the
    /// demo.
    #[arg(long, value_name = "FILE", conflicts_with = "arm")]
    pub replay: Option<PathBuf>,
    /// With --replay: the time to show, seconds from the start (default: the middle).
    #[arg(long, value_name = "S", requires = "replay")]
    pub at: Option<f64>,
    /// How the simulated session ends: normal, emergency (then the emergency stop pressed,
    /// and a second more), emergency-held (control taken, then the emergency stop),
    /// taken (control taken, then another OCU with a higher authority takes it), lost (then
    /// the arm silent for 4 s: the link lost), vehicle-two-arms (two arms on one vehicle,
    /// 126.1.10 and 126.1.11 at their own mounts), joint-plots (every joint's position and
    /// velocity plotted), event-log (the event log open, with a note and a bookmark), shift
    /// (ten minutes held within a memory budget of two thirds of their size: the far past as an
    /// envelope).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "normal",
        conflicts_with = "replay"
    )]
    pub scenario: String,
}

/// The smallest image: the window's minimum size (smaller, the panels overlap).
pub fn min_size() -> (u32, u32) {
    let min = crate::ui::native_options("")
        .viewport
        .min_inner_size
        .unwrap_or(eframe::egui::vec2(800.0, 500.0));
    (min.x.ceil() as u32, min.y.ceil() as u32)
}

/// Parses `WIDTHxHEIGHT` (e.g. `1280x800`), from [`min_size`] up to [`MAX_SIDE`] pixels a side.
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--size {text}: expected WIDTHxHEIGHT in pixels, e.g. 1280x800");
    let (w, h) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    let (min_w, min_h) = min_size();
    if !(min_w..=MAX_SIDE).contains(&w) || !(min_h..=MAX_SIDE).contains(&h) {
        return Err(format!(
            "--size {text}: the UI needs at least {min_w}x{min_h} (the window's minimum) and at most {MAX_SIDE} pixels a side"
        ));
    }
    Ok((w, h))
}

/// Runs the session, renders and writes the PNG.
pub fn run(args: &ScreenshotArgs) -> Result<i32> {
    let started = Instant::now();
    let (width, height) = parse_size(&args.size).map_err(|e| anyhow!(e))?;
    if args.out.as_os_str().is_empty() {
        bail!("--out: give the PNG file to write");
    }
    // Fail before the session and the render when the file cannot be written anyway.
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        bail!(
            "cannot write {}: the folder {} does not exist",
            args.out.display(),
            dir.display()
        );
    }
    let scenario = screenshot::Scenario::parse(&args.scenario).map_err(|e| anyhow!(e))?;
    let mut app = match &args.replay {
        Some(path) => replay_app(path, args.at)?,
        None => {
            let arm = load_arm(&args.arm).with_context(|| {
                format!(
                    "--arm {}: not a built-in arm (demo, puma560, ur5e) nor a readable arm file",
                    args.arm
                )
            })?;
            let mut app = screenshot::scenario_app(arm, SESSION_S, scenario);
            // The plots show the whole session, not a 30 s window that is mostly empty.
            if scenario != screenshot::Scenario::Shift {
                app.settings.plot_window_s = SESSION_S;
            }
            app
        }
    };
    let image = screenshot::render(&mut app, width, height)
        .map_err(|e| anyhow!("cannot render offscreen: {e}"))?;
    image
        .save_with_format(&args.out, image::ImageFormat::Png)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "wrote {} ({width}x{height}) in {:.2} s",
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(0)
}

/// The replay window of `path`, loaded completely, with the cursor at `at` (default: the middle).
fn replay_app(path: &std::path::Path, at: Option<f64>) -> Result<OcuApp> {
    let replay = Replay::open(path, crate::jaus::judp::PORT, None)?;
    let progress = replay.wait();
    if let Some(why) = &progress.stopped {
        eprintln!("warning: {}: {why}", path.display());
    }
    let span = replay
        .session
        .read()
        .map_err(|_| anyhow!("the loader failed"))?
        .span();
    let Some((t0, t1)) = span else {
        bail!("{}: nothing to show (no JAUS traffic)", path.display());
    };
    let t = match at {
        Some(at) if !(at.is_finite() && (0.0..=t1 - t0).contains(&at)) => bail!(
            "--at {at}: give a time between 0 and {:.3} s (the length of {})",
            t1 - t0,
            path.display()
        ),
        Some(at) => t0 + at,
        None => f64::midpoint(t0, t1),
    };
    let mut app = OcuApp::with_replay(replay, Settings::default());
    app.seek(t);
    Ok(app)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_or_say_what_is_expected() {
        assert_eq!(parse_size("1280x800"), Ok((1280, 800)));
        assert_eq!(parse_size(" 800X500 "), Ok((800, 500)));
        assert!(parse_size("10").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_size("axb").unwrap_err().contains("WIDTHxHEIGHT"));
        assert_eq!(parse_size("800x500"), Ok((800, 500)));
        assert!(
            parse_size("799x500")
                .unwrap_err()
                .contains("at least 800x500")
        );
        assert!(
            parse_size("800x499")
                .unwrap_err()
                .contains("at least 800x500")
        );
        assert!(parse_size("100000x800").unwrap_err().contains("at most"));
    }
}
