//! Exports from a session: CSV of joint and force/torque series over a time range.
//!
//! Columns: `t_s`, then joint positions `q_*`, velocities `qd_*`, efforts `effort_*`, joint
//! torques/forces `tau_*` (one per joint, named after the specification's joint names when it
//! has them, else numbered from 1), then `fx,fy,fz,tx,ty,tz`. One row per distinct sample time
//! of any series in the range (the sorted time columns merged); a series without a sample at
//! exactly that time leaves its cells empty, as does a part the report did not carry. Values
//! are written as the session stores them (`f32`, shortest form that reads back the same).
//! Only the current history of each series is exported: samples of an earlier arm (another
//! joint count) do not fit these columns.

use std::fmt::Write as _;
use std::io::Write;

use crate::model::history::History;
use crate::model::session::Session;

/// A CSV-safe column name part: letters, digits, `_`, `-` and `.` kept, the rest `_`.
fn column_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Joint column names for a series with `n` channels: the specification's names when it has
/// one per channel, else 1-based numbers.
fn joint_columns(session: &Session, prefix: &str, n: usize) -> Vec<String> {
    let names: Option<Vec<String>> = session.latest.spec.as_ref().and_then(|spec| {
        if spec.joints.len() != n {
            return None;
        }
        spec.joints
            .iter()
            .map(|j| j.name.as_deref().map(column_name))
            .collect()
    });
    match names {
        Some(names) => names.iter().map(|n| format!("{prefix}_{n}")).collect(),
        None => (1..=n).map(|i| format!("{prefix}{i}")).collect(),
    }
}

/// Writes joint positions, velocities, efforts, joint torques and end-effector force/torque
/// sampled in `[t0, t1]` as CSV (one row per sample time, empty cells where a series has no
/// sample at that time); returns the rows written.
pub fn write_csv(session: &Session, t0: f64, t1: f64, w: &mut dyn Write) -> std::io::Result<usize> {
    // (history, channels written) per series; F/T leaves out the derived |F|.
    let series: [(&History, usize); 5] = [
        (&session.positions, session.positions.channels()),
        (&session.velocities, session.velocities.channels()),
        (&session.efforts, session.efforts.channels()),
        (
            &session.joint_force_torques,
            session.joint_force_torques.channels(),
        ),
        (&session.ft, session.ft.channels().min(6)),
    ];
    let mut header = vec!["t_s".to_string()];
    for ((_, n), prefix) in series[..4].iter().zip(["q", "qd", "effort", "tau"]) {
        header.extend(joint_columns(session, prefix, *n));
    }
    header.extend(
        ["fx", "fy", "fz", "tx", "ty", "tz"]
            .iter()
            .take(series[4].1)
            .map(std::string::ToString::to_string),
    );
    writeln!(w, "{}", header.join(","))?;

    if t1 < t0 || t0.is_nan() || t1.is_nan() {
        return Ok(0);
    }
    // A cursor and an end per series over its samples in [t0, t1].
    let mut cursor: Vec<usize> = series.iter().map(|(h, _)| h.index_at(t0)).collect();
    let end: Vec<usize> = series
        .iter()
        .map(|(h, _)| h.times().partition_point(|x| *x <= t1))
        .collect();
    let mut line = String::new();
    let mut rows = 0;
    loop {
        let next = series
            .iter()
            .zip(cursor.iter().zip(&end))
            .filter(|(_, (c, e))| c < e)
            .filter_map(|((h, _), (c, _))| h.time(*c))
            .min_by(f64::total_cmp);
        let Some(t) = next else { break };
        line.clear();
        let _ = write!(line, "{t}");
        for (k, (h, n)) in series.iter().enumerate() {
            let here = cursor[k] < end[k] && h.time(cursor[k]) == Some(t);
            for c in 0..*n {
                line.push(',');
                if here && let Some(v) = h.value(c, cursor[k]).filter(|v| !v.is_nan()) {
                    // Stored as f32: its shortest form, not the f64 widening's digits.
                    let _ = write!(line, "{}", v as f32);
                }
            }
            if here {
                cursor[k] += 1;
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        rows += 1;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arm::{ArmSpec, Joint};
    use crate::model::update::Update;

    fn csv(s: &Session, t0: f64, t1: f64) -> (usize, Vec<String>) {
        let mut out = Vec::new();
        let rows = write_csv(s, t0, t1, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        (rows, text.lines().map(str::to_string).collect())
    }

    #[test]
    fn merges_sample_times_and_leaves_cells_empty_where_a_series_has_no_sample() {
        let mut s = Session::new();
        for (t, q) in [(1.0, [0.5, -0.25]), (2.0, [1.5, 0.75]), (3.0, [2.5, 0.125])] {
            s.apply(&Update::JointPositions {
                t,
                values: q.to_vec(),
            });
        }
        s.apply(&Update::ForceTorque {
            t: 2.0,
            force: [Some(1.0), None, Some(-2.0)],
            torque: [Some(0.5); 3],
        });
        s.apply(&Update::ForceTorque {
            t: 2.5,
            force: [Some(0.1); 3],
            torque: [None; 3],
        });
        let (rows, lines) = csv(&s, 1.5, 3.0);
        assert_eq!(rows, 3);
        assert_eq!(lines[0], "t_s,q1,q2,fx,fy,fz,tx,ty,tz");
        assert_eq!(lines[1], "2,1.5,0.75,1,,-2,0.5,0.5,0.5");
        assert_eq!(lines[2], "2.5,,,0.1,0.1,0.1,,,");
        assert_eq!(lines[3], "3,2.5,0.125,,,,,,");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn names_joint_columns_after_the_specification() {
        let mut s = Session::new();
        let joint = |name: &str| Joint {
            name: Some(name.into()),
            ..Joint::revolute(0.0, 0.0, 0.0)
        };
        s.apply(&Update::Specification {
            t: 0.0,
            spec: ArmSpec {
                mount: None,
                joints: vec![joint("turret"), joint("upper arm")],
            },
        });
        s.apply(&Update::JointPositions {
            t: 1.0,
            values: vec![1.0, 2.0],
        });
        s.apply(&Update::JointVelocities {
            t: 1.0,
            values: vec![3.0, 4.0],
        });
        s.apply(&Update::JointEfforts {
            t: 1.0,
            values: vec![5.0, 6.0, 7.0],
        });
        let (rows, lines) = csv(&s, 0.0, 10.0);
        assert_eq!(rows, 1);
        assert_eq!(
            lines[0],
            "t_s,q_turret,q_upper_arm,qd_turret,qd_upper_arm,effort1,effort2,effort3,fx,fy,fz,tx,ty,tz"
        );
        assert_eq!(lines[1], "1,1,2,3,4,5,6,7,,,,,,");
    }

    #[test]
    fn an_empty_or_reversed_range_writes_only_the_header() {
        let mut s = Session::new();
        s.apply(&Update::JointPositions {
            t: 1.0,
            values: vec![1.0],
        });
        assert_eq!(csv(&s, 2.0, 3.0).0, 0);
        let (rows, lines) = csv(&s, 3.0, 0.0);
        assert_eq!((rows, lines.len()), (0, 1));
    }
}
