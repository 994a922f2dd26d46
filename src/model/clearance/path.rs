//! Clearance of a preset move, as advice before Go to: the target pose and the straight
//! joint-space path to it, sampled. The arm plans its own path (JAUS says nothing of it), so
//! the path is said as what a joint-interpolated move would pass, never as a promise.

use super::scene::{ArmInput, PairKey, gaps};
use super::{Checked, Clearance, Zone, joint_name};

/// How much deeper than allowed an allowed pair goes before it is said, m (the wire's
/// 0.3 mm resolution either side of the allowed depth).
const ALLOWED_SLACK_M: f64 = 0.0005;

/// Points sampled along the path (the target included, the start not).
pub const PATH_SAMPLES: usize = 32;

/// What a preset move would meet.
#[derive(Debug, Clone, PartialEq)]
pub struct PathAdvice {
    /// The nearest pair at the target (smallest effective gap).
    pub target: Option<Checked>,
    /// The pair that comes nearest along the path, and where (0..1 of the way).
    pub path: Option<(Checked, f64)>,
    /// Pairs in contact at the target with another arm or an obstacle or the ground: Go to
    /// asks for a confirmation naming them.
    pub touches: Vec<Checked>,
    /// The words: one line for the target, one for the path, one per touching pair.
    pub words: Vec<String>,
}

/// The arm `arm` (at its current positions) moving to `target` among `others`.
pub fn preset_path(
    c: &Clearance,
    arm: ArmInput<'_>,
    target: &[f64],
    others: &[ArmInput<'_>],
) -> PathAdvice {
    let never = c.never_checked();
    let at = |q: &[f64]| -> Vec<Checked> {
        let mut arms = vec![ArmInput {
            positions: q,
            ..arm
        }];
        arms.extend_from_slice(others);
        gaps(&arms, c.vehicle(), |k: &PairKey| {
            (k.0.arm() == Some(arm.id) || k.1.arm() == Some(arm.id)) && !never.contains(k)
        })
        .into_iter()
        .map(|g| c.check(g))
        .collect()
    };
    // An allowed pair sits at its allowed depth in its own preset: it is news only deeper.
    let nearest = |v: Vec<Checked>| {
        v.into_iter()
            .filter(|x| x.allowed == 0.0 || x.effective < -ALLOWED_SLACK_M)
            .min_by(|a, b| a.effective.total_cmp(&b.effective))
    };
    let mut path: Option<(Checked, f64)> = None;
    if target.len() == arm.positions.len() {
        for k in 1..=PATH_SAMPLES {
            let s = k as f64 / PATH_SAMPLES as f64;
            let q: Vec<f64> = arm
                .positions
                .iter()
                .zip(target)
                .map(|(a, b)| a + (b - a) * s)
                .collect();
            if let Some(n) = nearest(at(&q))
                && path.as_ref().is_none_or(|(p, _)| n.effective < p.effective)
            {
                path = Some((n, s));
            }
        }
    }
    let at_target = at(target);
    let touches: Vec<Checked> = at_target
        .iter()
        .filter(|x| {
            x.zone == Zone::Contact && (x.gap.a.arm() != x.gap.b.arm() || x.gap.b.arm().is_none())
        })
        .cloned()
        .collect();
    let target = nearest(at_target);
    let spec_of = |id| {
        std::iter::once(&arm)
            .chain(others)
            .find(|a| a.id == id)
            .map(|a| a.spec)
    };
    let words_of = |x: &Checked| {
        let pair = c.pair_words(Some(arm.id), &x.gap.a, &x.gap.b, |id, j| {
            spec_of(id).and_then(|s| joint_name(s, j))
        });
        let allowed = if x.allowed > 0.0 {
            format!(", allowed {:.0} mm deep", x.allowed * 1000.0)
        } else {
            String::new()
        };
        format!(
            "{pair} {:.0} mm{allowed} ({})",
            x.gap.contact.gap * 1000.0,
            x.zone.name()
        )
    };
    let mut words = Vec::new();
    if let Some(t) = &target {
        words.push(format!("At the target: nearest {}", words_of(t)));
    }
    if let Some((p, s)) = &path {
        words.push(format!(
            "Along a joint-interpolated path ({:.0} % of the way; the arm plans its own): {}",
            s * 100.0,
            words_of(p)
        ));
    }
    for t in &touches {
        words.push(format!("The target touches: {}", words_of(t)));
    }
    PathAdvice {
        target,
        path,
        touches,
        words,
    }
}

/// The advice for arm `arm` going to its preset `pose_id`, from the arms' latest states
/// (every arm with a specification and positions), in `vehicle` with `settings`: `None`
/// when the arm, its positions or the preset's positions are not known.
pub fn preset_advice(
    settings: super::Settings,
    vehicle: std::sync::Arc<super::obstacles::VehicleGeometry>,
    states: &[(
        crate::model::id::ComponentId,
        &crate::model::state::ArmState,
    )],
    arm: crate::model::id::ComponentId,
    pose_id: u8,
) -> Option<PathAdvice> {
    let facts: Vec<super::ArmFacts<'_>> = states
        .iter()
        .filter_map(|(id, s)| {
            let spec = s.spec.as_ref()?;
            let q = &s.positions.as_ref()?.value;
            (q.len() == spec.joints.len()).then_some(super::ArmFacts {
                input: ArmInput {
                    id: *id,
                    spec,
                    positions: q,
                },
                presets: &s.presets,
            })
        })
        .collect();
    let me = facts.iter().find(|f| f.input.id == arm)?;
    let target = me
        .presets
        .iter()
        .find(|p| p.id == pose_id)?
        .positions
        .as_ref()?;
    let mut c = Clearance::new(settings, vehicle);
    c.update(&facts);
    let others: Vec<ArmInput<'_>> = facts
        .iter()
        .filter(|f| f.input.id != arm)
        .map(|f| f.input)
        .collect();
    Some(preset_path(&c, me.input, target, &others))
}
