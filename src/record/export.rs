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
//!
//! Several arms ([`write_vehicle_csv`]): every arm's columns in turn (arms by ID), each column
//! name prefixed with its arm's JAUS ID and a slash (`126.1.10/q1`, `126.1.11/fx`), rows the
//! sample times of every arm merged. One arm is written without the prefix (the columns it
//! always had), whichever function writes it.

use std::fmt::Write as _;
use std::io::Write;

use crate::model::history::History;
use crate::model::session::Session;
use crate::model::update::ComponentId;
use crate::model::vehicle::Vehicle;

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
/// sample at that time); returns the rows written. One arm's session, unprefixed columns.
pub fn write_csv(session: &Session, t0: f64, t1: f64, w: &mut dyn Write) -> std::io::Result<usize> {
    write_sessions(&[("", session)], t0, t1, w)
}

/// [`write_csv`] of several arms of `vehicle`: `arm` alone when given (unprefixed columns, as
/// [`write_csv`]), else every arm (columns prefixed `S.N.C/` when there are several; see the
/// module's doc). Returns the rows written, and the arms written (none when `arm` is not in
/// the vehicle: then only `t_s` is written).
pub fn write_vehicle_csv(
    vehicle: &Vehicle,
    arm: Option<ComponentId>,
    t0: f64,
    t1: f64,
    w: &mut dyn Write,
) -> std::io::Result<(usize, Vec<ComponentId>)> {
    let arms: Vec<(ComponentId, &Session)> = match arm {
        Some(id) => vehicle.arm(id).map(|s| (id, s)).into_iter().collect(),
        None => vehicle.arms().collect(),
    };
    let prefixes: Vec<String> = if arms.len() > 1 {
        arms.iter().map(|(id, _)| format!("{id}/")).collect()
    } else {
        vec![String::new(); arms.len()]
    };
    let sessions: Vec<(&str, &Session)> = prefixes
        .iter()
        .zip(&arms)
        .map(|(p, (_, s))| (p.as_str(), *s))
        .collect();
    let rows = write_sessions(&sessions, t0, t1, w)?;
    Ok((rows, arms.into_iter().map(|(id, _)| id).collect()))
}

/// The five series of one arm: (history, channels written); F/T leaves out the derived |F|.
fn series(session: &Session) -> [(&History, usize); 5] {
    [
        (&session.positions, session.positions.channels()),
        (&session.velocities, session.velocities.channels()),
        (&session.efforts, session.efforts.channels()),
        (
            &session.joint_force_torques,
            session.joint_force_torques.channels(),
        ),
        (&session.ft, session.ft.channels().min(6)),
    ]
}

/// The CSV of every `(column prefix, session)` in turn, rows merged over all their series.
fn write_sessions(
    sessions: &[(&str, &Session)],
    t0: f64,
    t1: f64,
    w: &mut dyn Write,
) -> std::io::Result<usize> {
    let mut header = vec!["t_s".to_string()];
    let mut series_all: Vec<(&History, usize)> = Vec::with_capacity(5 * sessions.len());
    for (arm_prefix, session) in sessions {
        let arm_series = series(session);
        for ((_, n), prefix) in arm_series[..4].iter().zip(["q", "qd", "effort", "tau"]) {
            header.extend(
                joint_columns(session, prefix, *n)
                    .into_iter()
                    .map(|c| format!("{arm_prefix}{c}")),
            );
        }
        header.extend(
            ["fx", "fy", "fz", "tx", "ty", "tz"]
                .iter()
                .take(arm_series[4].1)
                .map(|c| format!("{arm_prefix}{c}")),
        );
        series_all.extend(arm_series);
    }
    let series = series_all;
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
    use crate::model::update::{ArmFact, Update};

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
            s.apply_arm(&ArmFact::JointPositions {
                t,
                values: q.to_vec(),
            });
        }
        s.apply_arm(&ArmFact::ForceTorque {
            t: 2.0,
            force: [Some(1.0), None, Some(-2.0)],
            torque: [Some(0.5); 3],
        });
        s.apply_arm(&ArmFact::ForceTorque {
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
        s.apply_arm(&ArmFact::Specification {
            t: 0.0,
            spec: ArmSpec {
                mount: None,
                joints: vec![joint("turret"), joint("upper arm")],
            },
        });
        s.apply_arm(&ArmFact::JointPositions {
            t: 1.0,
            values: vec![1.0, 2.0],
        });
        s.apply_arm(&ArmFact::JointVelocities {
            t: 1.0,
            values: vec![3.0, 4.0],
        });
        s.apply_arm(&ArmFact::JointEfforts {
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
        s.apply_arm(&ArmFact::JointPositions {
            t: 1.0,
            values: vec![1.0],
        });
        assert_eq!(csv(&s, 2.0, 3.0).0, 0);
        let (rows, lines) = csv(&s, 3.0, 0.0);
        assert_eq!((rows, lines.len()), (0, 1));
    }

    #[test]
    fn several_arms_get_prefixed_columns_and_merged_rows() {
        let (a, b) = (ComponentId::new(126, 1, 10), ComponentId::new(126, 1, 11));
        let mut v: Vehicle = Vehicle::new();
        v.apply(&Update::arm(
            a,
            ArmFact::JointPositions {
                t: 1.0,
                values: vec![0.5],
            },
        ));
        v.apply(&Update::arm(
            b,
            ArmFact::JointPositions {
                t: 1.5,
                values: vec![0.25, 0.75],
            },
        ));
        let mut out = Vec::new();
        let (rows, arms) = write_vehicle_csv(&v, None, 0.0, 10.0, &mut out).unwrap();
        assert_eq!((rows, arms), (2, vec![a, b]));
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let ft = |id: &str| {
            ["fx", "fy", "fz", "tx", "ty", "tz"]
                .map(|c| format!("{id}/{c}"))
                .join(",")
        };
        assert_eq!(
            lines[0],
            format!(
                "t_s,126.1.10/q1,{},126.1.11/q1,126.1.11/q2,{}",
                ft("126.1.10"),
                ft("126.1.11")
            )
        );
        assert_eq!(lines[1], "1,0.5,,,,,,,,,,,,,,");
        assert_eq!(lines[2], "1.5,,,,,,,,0.25,0.75,,,,,,");
        // One arm picked: its columns as write_csv writes them.
        let mut out = Vec::new();
        let (rows, arms) = write_vehicle_csv(&v, Some(b), 0.0, 10.0, &mut out).unwrap();
        assert_eq!((rows, arms), (1, vec![b]));
        assert!(String::from_utf8(out).unwrap().starts_with("t_s,q1,q2,fx,"));
        // An arm the vehicle does not have: the header alone.
        let mut out = Vec::new();
        let other = ComponentId::new(1, 1, 1);
        let (rows, arms) = write_vehicle_csv(&v, Some(other), 0.0, 10.0, &mut out).unwrap();
        assert_eq!((rows, arms.len()), (0, 0));
        assert_eq!(out, b"t_s\n");
    }
}
