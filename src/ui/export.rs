//! Exports from the UI: CSV of the joint and force/torque series over a time range, and the
//! 3D view as PNG. Both write on their own threads (`jaus-export-csv`, `jaus-export-png`) and
//! report back through a channel the UI polls; errors become notices.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError, bounded};
use eframe::egui;

use super::files::Jobs;
use super::format::{format_hms, group_digits};
use super::notice::{Notice, NoticeLevel};
use super::sources::read_vehicle;
use crate::model::arm::ArmSpec;
use crate::model::kinematics::DEFAULT_CYLINDER_RADIUS;
use crate::model::session::Session;
use crate::model::signals::{PlotLayout, Series, SignalInfo, Units};
use crate::model::update::ComponentId;
use crate::model::vehicle::SharedVehicle;
use crate::record::export::write_csv;
use crate::record::urdf::{UrdfOptions, write_urdf};

/// How long the window may take to deliver a screenshot before the export gives up.
pub const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(5);

/// An export being written: its result is the message for the operator.
pub struct ExportJob {
    rx: Receiver<Result<String, String>>,
}

/// A screenshot asked of the window, to be cropped to the 3D view and saved.
pub struct PendingShot {
    path: PathBuf,
    rx: Receiver<Arc<egui::ColorImage>>,
    asked: Instant,
}

/// Runs `work` on a thread named `name`; its result comes back through the job, and `ctx`
/// is woken then. Fails with a message when the thread cannot start.
pub(crate) fn spawn_job(
    name: &str,
    ctx: Option<egui::Context>,
    work: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> Result<ExportJob, String> {
    let (tx, rx) = bounded(1);
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
            if let Some(ctx) = ctx {
                ctx.request_repaint();
            }
        })
        .map_err(|e| format!("The export could not start: {e}"))?;
    Ok(ExportJob { rx })
}

/// The columns of a CSV export from the window: what the plots show (their signals, hidden
/// ones left out, in the units shown), or every series when the plots are hidden.
#[derive(Debug, Clone, PartialEq)]
pub enum CsvColumns {
    /// Joint positions, velocities, efforts, joint torques and end-effector force/torque as
    /// stored (SI), the columns `jaus-ocu export --csv` writes.
    Everything,
    /// The plots' signals in the units shown.
    Plotted(PlotLayout, Units),
}

/// The columns the window's CSV export writes with `settings`: the plots' signals while the
/// plots are shown, else every series.
pub fn csv_columns(settings: &super::settings::Settings) -> CsvColumns {
    if settings.show_plots {
        CsvColumns::Plotted(
            settings.plots.clone(),
            super::panels::plots::units(settings),
        )
    } else {
        CsvColumns::Everything
    }
}

/// Writes the CSV of `[t0, t1]` of `arm` in `vehicle` (the focused arm when `None`) to `path`,
/// off the UI thread: `columns` says which.
pub fn export_csv(
    vehicle: SharedVehicle,
    arm: Option<ComponentId>,
    path: PathBuf,
    (t0, t1): (f64, f64),
    columns: CsvColumns,
    ctx: Option<egui::Context>,
) -> Result<ExportJob, String> {
    spawn_job("jaus-export-csv", ctx, move || {
        let file = std::fs::File::create(&path).map_err(|e| {
            format!(
                "Cannot create {}: {e} (choose another folder or file name)",
                path.display()
            )
        })?;
        let mut w = std::io::BufWriter::new(file);
        let rows = {
            let s = read_vehicle(&vehicle);
            let arm = s.arm_or_focused(arm);
            match &columns {
                CsvColumns::Everything => write_csv(arm, t0, t1, &mut w),
                CsvColumns::Plotted(layout, units) => {
                    let signals = layout.shown_signals(arm);
                    write_signals_csv(arm, &signals, *units, t0, t1, &mut w)
                }
            }
        }
        .and_then(|rows| w.flush().map(|()| rows))
        .map_err(|e| {
            format!(
                "Writing {} failed: {e} (is the disk full? the file is incomplete)",
                path.display()
            )
        })?;
        Ok(format!(
            "Exported {} rows ({} to {}) to {}",
            group_digits(rows as u64),
            format_hms(t0.max(0.0), true),
            format_hms(t1.max(0.0), true),
            path.display()
        ))
    })
}

/// A CSV header cell: the signal's name and unit, quoted when it holds a comma or a quote.
fn header_cell(name: &str, unit: &str) -> String {
    let cell = format!("{name} ({unit})");
    if cell.contains([',', '"']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell
    }
}

/// Writes `signals` of `session` sampled in `[t0, t1]` as CSV in the units shown: `t_s`, then
/// a column per signal named with its unit (`J1 position (°)`, `Fx (N)`); one row per
/// distinct sample time of the series involved, empty cells where a series has no sample at
/// that time or the value is missing. Returns the rows written.
pub fn write_signals_csv(
    session: &Session,
    signals: &[SignalInfo],
    units: Units,
    t0: f64,
    t1: f64,
    w: &mut dyn Write,
) -> std::io::Result<usize> {
    let mut header = vec!["t_s".to_string()];
    header.extend(signals.iter().map(|s| header_cell(&s.name, s.unit(units))));
    writeln!(w, "{}", header.join(","))?;
    if t1 < t0 || t0.is_nan() || t1.is_nan() {
        return Ok(0);
    }
    // The series involved, each with a cursor and an end over its samples in [t0, t1].
    let mut series: Vec<Series> = signals.iter().map(|s| s.signal.series).collect();
    series.sort();
    series.dedup();
    let histories: Vec<_> = series.iter().map(|s| s.history(session)).collect();
    let mut cursor: Vec<usize> = histories.iter().map(|h| h.index_at(t0)).collect();
    let end: Vec<usize> = histories
        .iter()
        .map(|h| h.times().partition_point(|x| *x <= t1))
        .collect();
    let slot: Vec<usize> = signals
        .iter()
        .map(|s| {
            series
                .iter()
                .position(|x| *x == s.signal.series)
                .unwrap_or(0)
        })
        .collect();
    let mut line = String::new();
    let mut rows = 0;
    loop {
        let next = (0..histories.len())
            .filter(|&k| cursor[k] < end[k])
            .filter_map(|k| histories[k].time(cursor[k]))
            .min_by(f64::total_cmp);
        let Some(t) = next else { break };
        let here: Vec<bool> = (0..histories.len())
            .map(|k| cursor[k] < end[k] && histories[k].time(cursor[k]) == Some(t))
            .collect();
        line.clear();
        let _ = write!(line, "{t}");
        for (s, &k) in signals.iter().zip(&slot) {
            line.push(',');
            if here[k]
                && let Some(v) = histories[k]
                    .value(s.signal.channel, cursor[k])
                    .filter(|v| !v.is_nan())
            {
                let v = v * s.scale(units);
                // Stored as f32: its shortest form (scaled ones at f32 precision too).
                let _ = write!(line, "{}", v as f32);
            }
        }
        for (k, h) in here.iter().enumerate() {
            if *h {
                cursor[k] += 1;
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        rows += 1;
    }
    Ok(rows)
}

/// Writes the URDF of `spec` (the arm shown) to `path`, off the UI thread: written to a
/// temporary file beside it and renamed, so a failure leaves nothing under the name.
pub fn export_urdf(
    spec: ArmSpec,
    name: String,
    tool_point: Option<[f64; 3]>,
    path: PathBuf,
    ctx: Option<egui::Context>,
) -> Result<ExportJob, String> {
    spawn_job("jaus-export-urdf", ctx, move || {
        let options = UrdfOptions {
            name,
            tool_point,
            default_radius: DEFAULT_CYLINDER_RADIUS,
        };
        let text = write_urdf(&spec, &options)
            .map_err(|e| format!("The arm's specification cannot be written as URDF: {e}"))?;
        let partial = path.with_extension("urdf.partial");
        std::fs::write(&partial, text.as_bytes())
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                format!(
                    "Cannot write {}: {e} (choose another folder or file name)",
                    path.display()
                )
            })?;
        Ok(format!(
            "Exported \"{}\" ({} joints) as URDF to {}",
            options.name,
            spec.joint_count(),
            path.display()
        ))
    })
}

/// Asks the window for a screenshot; when it arrives ([`poll`]) the 3D view is cropped out
/// and saved to `path`.
pub fn request_png(ctx: &egui::Context, path: PathBuf) -> PendingShot {
    let (tx, rx) = bounded(1);
    let waker = ctx.clone();
    ctx.request_screenshot(move |image| {
        let _ = tx.send(image);
        waker.request_repaint();
    });
    PendingShot {
        path,
        rx,
        asked: Instant::now(),
    }
}

/// The part of `image` (a screenshot at `pixels_per_point`) under `rect` (points), clamped to
/// the image; `None` when nothing is left.
pub fn crop(
    image: &egui::ColorImage,
    rect: egui::Rect,
    pixels_per_point: f32,
) -> Option<image::RgbaImage> {
    let [w, h] = image.size;
    let px = |v: f32, max: usize| ((v * pixels_per_point).round().max(0.0) as usize).min(max);
    let (x0, x1) = (px(rect.min.x, w), px(rect.max.x, w));
    let (y0, y1) = (px(rect.min.y, h), px(rect.max.y, h));
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let mut out = image::RgbaImage::new((x1 - x0) as u32, (y1 - y0) as u32);
    for (y, row) in (y0..y1).enumerate() {
        for (x, col) in (x0..x1).enumerate() {
            let c = image.pixels.get(row * w + col)?;
            out.put_pixel(x as u32, y as u32, image::Rgba(c.to_srgba_unmultiplied()));
        }
    }
    Some(out)
}

fn save_png(image: &image::RgbaImage, path: &Path) -> Result<String, String> {
    image
        .save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| {
            format!(
                "Cannot write {}: {e} (choose another folder or file name)",
                path.display()
            )
        })?;
    Ok(format!(
        "Saved the 3D view ({}×{} pixels) to {}",
        image.width(),
        image.height(),
        path.display()
    ))
}

/// Polls the exports and the screenshot (every frame): messages for the operator. The
/// screenshot is cropped to `view3d` (where the 3D view was drawn, in points).
pub fn poll(jobs: &mut Jobs, ctx: &egui::Context, view3d: Option<egui::Rect>) -> Vec<Notice> {
    let mut notices = Vec::new();
    jobs.exports.retain(|job| match job.rx.try_recv() {
        Ok(Ok(text)) => {
            notices.push(Notice::new(NoticeLevel::Info, text));
            false
        }
        Ok(Err(text)) => {
            notices.push(Notice::new(NoticeLevel::Error, text));
            false
        }
        Err(TryRecvError::Empty) => true,
        Err(TryRecvError::Disconnected) => {
            notices.push(Notice::new(
                NoticeLevel::Error,
                "The export stopped unexpectedly; try again.",
            ));
            false
        }
    });
    let Some(shot) = &jobs.shot else {
        return notices;
    };
    match shot.rx.try_recv() {
        Ok(image) => {
            let Some(shot) = jobs.shot.take() else {
                return notices;
            };
            match view3d.and_then(|r| crop(&image, r, ctx.pixels_per_point())) {
                Some(cropped) => {
                    let job = spawn_job("jaus-export-png", Some(ctx.clone()), move || {
                        save_png(&cropped, &shot.path)
                    });
                    match job {
                        Ok(job) => jobs.exports.push(job),
                        Err(e) => notices.push(Notice::new(NoticeLevel::Error, e)),
                    }
                }
                None => notices.push(Notice::new(
                    NoticeLevel::Error,
                    "The 3D view was not on screen when the screenshot was taken; nothing exported.",
                )),
            }
        }
        Err(TryRecvError::Empty) if shot.asked.elapsed() < SCREENSHOT_TIMEOUT => {}
        Err(_) => {
            jobs.shot = None;
            notices.push(Notice::new(
                NoticeLevel::Error,
                "The window did not deliver a screenshot (is it minimised?); nothing exported.",
            ));
        }
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arm::{ArmSpec, Joint};
    use crate::model::signals::{PlotSpec, SignalRef};
    use crate::model::update::ArmFact;

    #[test]
    fn the_csv_holds_the_plotted_signals_in_shown_units_hidden_ones_left_out() {
        let mut s = Session::new();
        s.apply_arm(&ArmFact::Specification {
            t: 0.0,
            spec: ArmSpec {
                mount: None,
                joints: vec![
                    Joint::revolute(0.0, 0.0, 0.0),
                    Joint::prismatic(0.0, 0.0, 0.0, 0.0, 1.0),
                ],
            },
        });
        for (t, q) in [(1.0, [0.5, 0.25]), (2.0, [1.0, 0.5]), (3.0, [1.5, 0.75])] {
            s.apply_arm(&ArmFact::JointPositions {
                t,
                values: q.to_vec(),
            });
        }
        s.apply_arm(&ArmFact::ForceTorque {
            t: 2.5,
            force: [Some(1.0), None, Some(-2.0)],
            torque: [Some(0.5); 3],
        });
        let ft = |c| SignalRef::new(Series::ForceTorque, c);
        let mut torque = PlotSpec::of_signals(2, &[ft(3), ft(0)]);
        torque.hidden.push(ft(3));
        let layout = PlotLayout {
            plots: vec![
                PlotSpec::of_series(1, &[Series::Positions]),
                torque,
                // A signal this arm lacks is left out, not an empty column.
                PlotSpec::of_signals(3, &[SignalRef::new(Series::Velocities, 6)]),
            ],
        };
        let units = Units {
            degrees: true,
            millimetres: true,
        };
        let signals = layout.shown_signals(&s);
        let mut out = Vec::new();
        let rows = write_signals_csv(&s, &signals, units, 1.5, 3.0, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(rows, 3);
        assert_eq!(lines[0], "t_s,J1 position (°),J2 position (mm),Fx (N)");
        assert_eq!(lines[1], format!("2,{},500,", 1.0f64.to_degrees() as f32));
        assert_eq!(lines[2], "2.5,,,1");
        assert_eq!(lines[3], format!("3,{},750,", 1.5f64.to_degrees() as f32));
        assert_eq!(lines.len(), 4);
        // Radians and metres as stored when the toggles say so.
        let mut out = Vec::new();
        write_signals_csv(&s, &signals, Units::default(), 2.0, 2.0, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "t_s,J1 position (rad),J2 position (m),Fx (N)\n2,1,0.5,\n"
        );
    }

    #[allow(
        clippy::disallowed_methods,
        reason = "a test pattern, not a colour of the UI"
    )]
    fn image(w: usize, h: usize) -> egui::ColorImage {
        let pixels = (0..w * h)
            .map(|i| egui::Color32::from_rgb((i % w) as u8, (i / w) as u8, 7))
            .collect();
        egui::ColorImage::new([w, h], pixels)
    }

    #[test]
    fn crop_takes_the_rect_in_pixels() {
        let img = image(40, 30);
        let rect = egui::Rect::from_min_max(egui::pos2(5.0, 4.0), egui::pos2(10.0, 8.0));
        let out = crop(&img, rect, 2.0).expect("inside");
        assert_eq!(out.dimensions(), (10, 8));
        assert_eq!(out.get_pixel(0, 0).0, [10, 8, 7, 255]);
        assert_eq!(out.get_pixel(9, 7).0, [19, 15, 7, 255]);
    }

    #[test]
    fn crop_clamps_to_the_image_and_refuses_nothing() {
        let img = image(20, 10);
        let rect = egui::Rect::from_min_max(egui::pos2(15.0, 5.0), egui::pos2(100.0, 100.0));
        let out = crop(&img, rect, 1.0).expect("partly inside");
        assert_eq!(out.dimensions(), (5, 5));
        let outside = egui::Rect::from_min_max(egui::pos2(50.0, 50.0), egui::pos2(60.0, 60.0));
        assert!(crop(&img, outside, 1.0).is_none());
    }
}
