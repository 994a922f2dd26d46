//! The catalogue of plottable signals: every channel of a session's sampled histories (joint
//! positions, velocities, efforts and forces/torques per joint, end-effector force/torque),
//! with its name ("J3 position", "Fx") and what it measures, so the plots, the CSV export and
//! the tests name and scale a signal the same way.
//!
//! A [`SignalRef`] (series and channel) is what is persisted; it is resolved against the arm
//! shown with [`describe`], which says `None` for a signal this arm does not have (a saved
//! "J7 position" on a 6-joint arm), never panicking. A [`PlotSpec`] may hold whole series
//! ("every joint's position"), which follow the arm's joint count.

use serde::{Deserialize, Serialize};

use super::history::History;
use super::session::{FT_CHANNELS, Session};

/// A sampled series of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Series {
    /// Joint positions, one channel per joint.
    Positions,
    /// Joint velocities, one channel per joint.
    Velocities,
    /// Joint efforts (percent of maximum), one channel per joint.
    Efforts,
    /// Joint torques (revolute) or forces (prismatic), one channel per joint.
    JointForceTorques,
    /// End-effector force/torque, channels [`FT_CHANNELS`].
    ForceTorque,
}

impl Series {
    /// Every series, in the order the picker lists them.
    pub const ALL: [Series; 5] = [
        Series::ForceTorque,
        Series::Positions,
        Series::Velocities,
        Series::Efforts,
        Series::JointForceTorques,
    ];

    /// The series' title in the picker.
    pub fn title(self) -> &'static str {
        match self {
            Series::Positions => "Joint positions",
            Series::Velocities => "Joint velocities",
            Series::Efforts => "Joint efforts",
            Series::JointForceTorques => "Joint torques / forces",
            Series::ForceTorque => "End-effector force / torque",
        }
    }

    /// Whether the series has one channel per joint.
    pub fn per_joint(self) -> bool {
        self != Series::ForceTorque
    }

    /// The session's history of this series.
    pub fn history(self, session: &Session) -> &History {
        match self {
            Series::Positions => &session.positions,
            Series::Velocities => &session.velocities,
            Series::Efforts => &session.efforts,
            Series::JointForceTorques => &session.joint_force_torques,
            Series::ForceTorque => &session.ft,
        }
    }

    /// The word after a joint's name ("J3 position"); short form for mixed legends.
    fn words(self, prismatic: bool) -> (&'static str, &'static str) {
        match (self, prismatic) {
            (Series::Positions, _) => ("position", "pos"),
            (Series::Velocities, _) => ("velocity", "vel"),
            (Series::Efforts, _) => ("effort", "eff"),
            (Series::JointForceTorques, false) => ("torque", "torque"),
            (Series::JointForceTorques, true) => ("force", "force"),
            (Series::ForceTorque, _) => ("", ""),
        }
    }
}

/// One plottable signal: a channel of a series (the joint index from 0, or the index into
/// [`FT_CHANNELS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SignalRef {
    /// Which series.
    pub series: Series,
    /// Which channel of it.
    pub channel: usize,
}

impl SignalRef {
    /// The signal `channel` of `series`.
    pub const fn new(series: Series, channel: usize) -> Self {
        Self { series, channel }
    }
}

/// What a signal measures (its unit follows from this and the unit settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A revolute joint's position: rad stored, degrees or radians shown.
    Angle,
    /// A prismatic joint's position: m stored, millimetres or metres shown.
    Length,
    /// A revolute joint's velocity: rad/s stored.
    AngularVelocity,
    /// A prismatic joint's velocity: m/s stored.
    LinearVelocity,
    /// An effort, percent of the joint's maximum.
    Percent,
    /// A torque, N·m.
    Torque,
    /// A force, N.
    Force,
}

/// The operator's unit choices (the gauges' toggles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Units {
    /// Angles in degrees (else radians).
    pub degrees: bool,
    /// Lengths in millimetres (else metres).
    pub millimetres: bool,
}

impl Quantity {
    /// The unit shown for this quantity.
    pub fn unit(self, units: Units) -> &'static str {
        match self {
            Quantity::Angle if units.degrees => "°",
            Quantity::Angle => "rad",
            Quantity::Length if units.millimetres => "mm",
            Quantity::Length => "m",
            Quantity::AngularVelocity if units.degrees => "°/s",
            Quantity::AngularVelocity => "rad/s",
            Quantity::LinearVelocity if units.millimetres => "mm/s",
            Quantity::LinearVelocity => "m/s",
            Quantity::Percent => "%",
            Quantity::Torque => "N·m",
            Quantity::Force => "N",
        }
    }

    /// The factor from the stored SI value to the value shown.
    pub fn scale(self, units: Units) -> f64 {
        match self {
            Quantity::Angle | Quantity::AngularVelocity if units.degrees => {
                180.0 / std::f64::consts::PI
            }
            Quantity::Length | Quantity::LinearVelocity if units.millimetres => 1000.0,
            _ => 1.0,
        }
    }
}

/// A signal resolved against the arm shown.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalInfo {
    /// The signal.
    pub signal: SignalRef,
    /// Its full name: "J3 position", "Fx".
    pub name: String,
    /// Its short name in a legend of one series: "J3", "Fx".
    pub short: String,
    /// Its name in a legend of several series: "J3 pos", "Fx".
    pub medium: String,
    /// What it measures.
    pub quantity: Quantity,
}

impl SignalInfo {
    /// The unit shown.
    pub fn unit(&self, units: Units) -> &'static str {
        self.quantity.unit(units)
    }

    /// The factor from stored to shown values.
    pub fn scale(&self, units: Units) -> f64 {
        self.quantity.scale(units)
    }
}

/// The number of joints of the arm in `session`: its specification's, else the most
/// channels of its joint histories.
pub fn joint_count(session: &Session) -> usize {
    match &session.latest.spec {
        Some(spec) => spec.joints.len(),
        None => Series::ALL
            .iter()
            .filter(|s| s.per_joint())
            .map(|s| s.history(session).channels())
            .max()
            .unwrap_or(0),
    }
}

/// How many channels `series` has on the arm in `session`.
pub fn channel_count(session: &Session, series: Series) -> usize {
    if series.per_joint() {
        joint_count(session)
    } else {
        FT_CHANNELS.len()
    }
}

/// `signal` resolved against the arm in `session`; `None` when the arm has no such signal.
pub fn describe(session: &Session, signal: SignalRef) -> Option<SignalInfo> {
    let SignalRef { series, channel } = signal;
    if channel >= channel_count(session, series) {
        return None;
    }
    if series == Series::ForceTorque {
        let name = FT_CHANNELS.get(channel)?.to_string();
        let quantity = if (3..6).contains(&channel) {
            Quantity::Torque
        } else {
            Quantity::Force
        };
        return Some(SignalInfo {
            signal,
            short: name.clone(),
            medium: name.clone(),
            name,
            quantity,
        });
    }
    let prismatic = session
        .latest
        .spec
        .as_ref()
        .and_then(|s| s.joints.get(channel))
        .is_some_and(super::arm::Joint::is_prismatic);
    let quantity = match (series, prismatic) {
        (Series::Positions, false) => Quantity::Angle,
        (Series::Positions, true) => Quantity::Length,
        (Series::Velocities, false) => Quantity::AngularVelocity,
        (Series::Velocities, true) => Quantity::LinearVelocity,
        (Series::Efforts, _) => Quantity::Percent,
        (_, false) => Quantity::Torque,
        (_, true) => Quantity::Force,
    };
    let (word, abbrev) = series.words(prismatic);
    let short = format!("J{}", channel + 1);
    Some(SignalInfo {
        signal,
        name: format!("{short} {word}"),
        medium: format!("{short} {abbrev}"),
        short,
        quantity,
    })
}

/// Every signal of the arm in `session`, series by series ([`Series::ALL`]).
pub fn catalogue(session: &Session) -> Vec<SignalInfo> {
    Series::ALL
        .iter()
        .flat_map(|&series| {
            (0..channel_count(session, series))
                .filter_map(move |c| describe(session, SignalRef::new(series, c)))
        })
        .collect()
}

/// One plot's signals, as the operator chose them (persisted).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PlotSpec {
    /// A number no other plot of the layout has (the plot's identity across frames).
    pub id: u32,
    /// Whole series: every joint of the arm shown (however many it has).
    pub series: Vec<Series>,
    /// Single signals, after the whole series.
    pub signals: Vec<SignalRef>,
    /// Signals hidden by the operator (their legend chip clicked).
    pub hidden: Vec<SignalRef>,
}

impl PlotSpec {
    /// A plot of whole series.
    pub fn of_series(id: u32, series: &[Series]) -> Self {
        Self {
            id,
            series: series.to_vec(),
            ..Self::default()
        }
    }

    /// A plot of single signals.
    pub fn of_signals(id: u32, signals: &[SignalRef]) -> Self {
        Self {
            id,
            signals: signals.to_vec(),
            ..Self::default()
        }
    }

    /// The plot's signals on an arm whose `series` has `count(series)` channels: the whole
    /// series expanded, then the single signals, each once, in order. Signals the arm lacks
    /// are kept (shown as unavailable).
    pub fn expand(&self, count: impl Fn(Series) -> usize) -> Vec<SignalRef> {
        let mut out: Vec<SignalRef> = Vec::new();
        for &s in &self.series {
            for c in 0..count(s) {
                let r = SignalRef::new(s, c);
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        for r in &self.signals {
            if !out.contains(r) {
                out.push(*r);
            }
        }
        out
    }

    /// The plot's signals on the arm in `session` ([`PlotSpec::expand`]).
    pub fn signals_on(&self, session: &Session) -> Vec<SignalRef> {
        self.expand(|s| channel_count(session, s))
    }

    /// Whether `signal` is in the plot (alone or by its series).
    pub fn contains(&self, signal: SignalRef) -> bool {
        self.series.contains(&signal.series) || self.signals.contains(&signal)
    }

    /// Puts `signal` in the plot or takes it out. Taking one joint out of a whole series
    /// turns the series into single signals (the others of `count` channels stay).
    pub fn toggle(&mut self, signal: SignalRef, count: usize) {
        if self.series.contains(&signal.series) {
            self.series.retain(|s| *s != signal.series);
            for c in (0..count).filter(|c| *c != signal.channel) {
                let r = SignalRef::new(signal.series, c);
                if !self.signals.contains(&r) {
                    self.signals.push(r);
                }
            }
            self.signals.retain(|r| *r != signal);
        } else if self.signals.contains(&signal) {
            self.signals.retain(|r| *r != signal);
        } else {
            self.signals.push(signal);
        }
        self.hidden
            .retain(|r| self.series.contains(&r.series) || self.signals.contains(r));
    }

    /// Puts the whole `series` in the plot (every joint) or takes all of it out.
    pub fn set_series(&mut self, series: Series, on: bool) {
        self.signals.retain(|r| r.series != series);
        self.series.retain(|s| *s != series);
        if on {
            self.series.push(series);
        }
        self.hidden.retain(|r| on || r.series != series);
    }

    /// Whether the plot shows nothing.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty() && self.signals.is_empty()
    }
}

/// The plots of the plot panel, top to bottom (persisted in the settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlotLayout {
    /// The plots.
    pub plots: Vec<PlotSpec>,
}

/// The most plots the panel holds.
pub const MAX_PLOTS: usize = 8;

impl Default for PlotLayout {
    /// End-effector force (Fx Fy Fz |F|), torque (Tx Ty Tz), and every joint's position.
    fn default() -> Self {
        let ft = |c| SignalRef::new(Series::ForceTorque, c);
        Self {
            plots: vec![
                PlotSpec::of_signals(1, &[ft(0), ft(1), ft(2), ft(6)]),
                PlotSpec::of_signals(2, &[ft(3), ft(4), ft(5)]),
                PlotSpec::of_series(3, &[Series::Positions]),
            ],
        }
    }
}

impl PlotLayout {
    /// Adds an empty plot at the bottom (at most [`MAX_PLOTS`]); its index.
    pub fn add(&mut self) -> Option<usize> {
        if self.plots.len() >= MAX_PLOTS {
            return None;
        }
        let id = self.plots.iter().map(|p| p.id).max().unwrap_or(0) + 1;
        self.plots.push(PlotSpec {
            id,
            ..PlotSpec::default()
        });
        Some(self.plots.len() - 1)
    }

    /// Removes the plot at `index` (nothing when there is none).
    pub fn remove(&mut self, index: usize) {
        if index < self.plots.len() {
            self.plots.remove(index);
        }
    }

    /// The signals the plots draw on the arm in `session`, plot after plot, each once:
    /// hidden signals and signals the arm lacks left out.
    pub fn shown_signals(&self, session: &Session) -> Vec<SignalInfo> {
        let mut out: Vec<SignalInfo> = Vec::new();
        for plot in &self.plots {
            for r in plot.signals_on(session) {
                if plot.hidden.contains(&r) || out.iter().any(|i| i.signal == r) {
                    continue;
                }
                if let Some(info) = describe(session, r) {
                    out.push(info);
                }
            }
        }
        out
    }

    /// Gives plots sharing an id (a hand-edited settings file) ids of their own.
    pub fn fix_ids(&mut self) {
        let mut seen = std::collections::BTreeSet::new();
        let mut next = self.plots.iter().map(|p| p.id).max().unwrap_or(0) + 1;
        for p in &mut self.plots {
            if !seen.insert(p.id) {
                p.id = next;
                seen.insert(next);
                next += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arm::{ArmSpec, Joint};
    use crate::model::update::ArmFact;

    fn arm(joints: usize, prismatic_at: Option<usize>) -> Session {
        let mut s = Session::new();
        let joints = (0..joints)
            .map(|i| {
                if Some(i) == prismatic_at {
                    Joint::prismatic(0.0, 0.0, 0.0, 0.0, 1.0)
                } else {
                    Joint::revolute(0.0, 0.0, 0.0)
                }
            })
            .collect();
        s.apply_arm(&ArmFact::Specification {
            t: 0.0,
            spec: ArmSpec {
                mount: None,
                joints,
            },
        });
        s
    }

    #[test]
    fn names_units_and_scales_follow_the_joint_type_and_the_unit_toggles() {
        let s = arm(3, Some(2));
        let deg = Units {
            degrees: true,
            millimetres: false,
        };
        let rad_mm = Units {
            degrees: false,
            millimetres: true,
        };
        let j1 = describe(&s, SignalRef::new(Series::Positions, 0)).unwrap();
        assert_eq!(j1.name, "J1 position");
        assert_eq!((j1.unit(deg), j1.unit(rad_mm)), ("°", "rad"));
        assert!((j1.scale(deg) - 57.295_779_5).abs() < 1e-6);
        let j3 = describe(&s, SignalRef::new(Series::Positions, 2)).unwrap();
        assert_eq!((j3.unit(deg), j3.unit(rad_mm)), ("m", "mm"));
        assert!((j3.scale(rad_mm) - 1000.0).abs() < 1e-12);
        let v = describe(&s, SignalRef::new(Series::Velocities, 0)).unwrap();
        assert_eq!((v.name.as_str(), v.unit(deg)), ("J1 velocity", "°/s"));
        let e = describe(&s, SignalRef::new(Series::Efforts, 1)).unwrap();
        assert_eq!((e.name.as_str(), e.unit(deg)), ("J2 effort", "%"));
        let tau = describe(&s, SignalRef::new(Series::JointForceTorques, 0)).unwrap();
        let force = describe(&s, SignalRef::new(Series::JointForceTorques, 2)).unwrap();
        assert_eq!((tau.name.as_str(), tau.unit(deg)), ("J1 torque", "N·m"));
        assert_eq!((force.name.as_str(), force.unit(deg)), ("J3 force", "N"));
        let fx = describe(&s, SignalRef::new(Series::ForceTorque, 0)).unwrap();
        let tz = describe(&s, SignalRef::new(Series::ForceTorque, 5)).unwrap();
        let mag = describe(&s, SignalRef::new(Series::ForceTorque, 6)).unwrap();
        assert_eq!((fx.name.as_str(), fx.unit(deg)), ("Fx", "N"));
        assert_eq!((tz.name.as_str(), tz.unit(deg)), ("Tz", "N·m"));
        assert_eq!((mag.name.as_str(), mag.unit(deg)), ("|F|", "N"));
        // 7 F/T channels and 4 series of 3 joints.
        assert_eq!(catalogue(&s).len(), 7 + 4 * 3);
    }

    #[test]
    fn a_signal_the_arm_lacks_is_unavailable_not_a_panic() {
        let s = arm(6, None);
        assert!(describe(&s, SignalRef::new(Series::Positions, 6)).is_none());
        assert!(describe(&s, SignalRef::new(Series::ForceTorque, 7)).is_none());
        assert!(describe(&s, SignalRef::new(Series::Velocities, usize::MAX)).is_none());
        // Without a specification, the joint count comes from the samples.
        let mut bare = Session::new();
        assert!(describe(&bare, SignalRef::new(Series::Positions, 0)).is_none());
        bare.apply_arm(&ArmFact::JointPositions {
            t: 1.0,
            values: vec![0.0; 4],
        });
        assert!(describe(&bare, SignalRef::new(Series::Positions, 3)).is_some());
        assert!(describe(&bare, SignalRef::new(Series::Efforts, 3)).is_some());
        assert!(describe(&bare, SignalRef::new(Series::Positions, 4)).is_none());
    }

    #[test]
    fn whole_series_follow_the_joint_count_and_toggling_one_joint_keeps_the_others() {
        let mut p = PlotSpec::of_series(1, &[Series::Positions]);
        let seven = |_| 7;
        assert_eq!(p.expand(seven).len(), 7);
        assert_eq!(p.expand(|_| 6).len(), 6);
        p.toggle(SignalRef::new(Series::Positions, 2), 7);
        let left = p.expand(seven);
        assert_eq!(left.len(), 6);
        assert!(!left.contains(&SignalRef::new(Series::Positions, 2)));
        p.toggle(SignalRef::new(Series::ForceTorque, 6), 7);
        assert!(p.contains(SignalRef::new(Series::ForceTorque, 6)));
        p.set_series(Series::Positions, true);
        assert_eq!(p.expand(seven).len(), 8);
        p.set_series(Series::Positions, false);
        assert_eq!(
            p.expand(seven),
            vec![SignalRef::new(Series::ForceTorque, 6)]
        );
    }

    #[test]
    fn the_layout_survives_serde_and_adds_plots_with_their_own_ids() {
        let mut layout = PlotLayout::default();
        assert_eq!(layout.plots.len(), 3);
        let i = layout.add().unwrap();
        layout.plots[i].toggle(SignalRef::new(Series::Velocities, 6), 7);
        layout.plots[i]
            .hidden
            .push(SignalRef::new(Series::Velocities, 6));
        let text = serde_json::to_string(&layout).unwrap();
        let back: PlotLayout = serde_json::from_str(&text).unwrap();
        assert_eq!(back, layout);
        assert_eq!(back.plots[3].id, 4);
        // Missing fields take their defaults; duplicate ids are made unique.
        let mut odd: PlotLayout =
            serde_json::from_str(r#"{"plots":[{"id":2},{"id":2,"series":["velocities"]}]}"#)
                .unwrap();
        odd.fix_ids();
        assert_ne!(odd.plots[0].id, odd.plots[1].id);
        while layout.add().is_some() {}
        assert_eq!(layout.plots.len(), MAX_PLOTS);
    }
}
