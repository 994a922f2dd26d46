//! The window's clearance (issue 45): one [`Clearance`] tracker over every arm at the drawn
//! time (the live sessions' latest states while following live, the states at the cursor
//! otherwise: live and replay share the path), against the vehicle file the window was
//! started with; what the clearance line and the 3D view are handed from it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::OcuApp;
use crate::model::arm::ArmSpec;
use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::clearance::scene::{ArmInput, Part};
use crate::model::clearance::{ArmFacts, Checked, Clearance, Zone, joint_name};
use crate::model::state::ArmState;
use crate::model::update::ComponentId;
use crate::ui::panels::clearance::{AllowedLine, ClearanceView, PairLine};
use crate::ui::scene::{GapLine, SceneClearance, SceneObstacle};
use crate::ui::sources::read_vehicle;

/// How much deeper than allowed an allowed pair must go before the window shows it, m: an
/// allowed pair sits at its allowed depth (effective gap 0) in the very preset it was
/// measured in, and the wire's resolution (0.3 mm) makes that a hair either side.
pub const ALLOWED_SLACK_M: f64 = 0.001;

/// Whether the window shows a checked pair as near contact: a pair not allowed to touch
/// inside the band or closer, or an allowed one deeper than its depth.
fn worth_showing(k: &Checked) -> bool {
    if k.allowed > 0.0 {
        k.effective < -ALLOWED_SLACK_M
    } else {
        k.zone != Zone::Clear
    }
}

impl OcuApp {
    /// Before Go to: the live focused arm's clearance at preset `pose_id` and along a
    /// joint-interpolated path to it, in words (advice: the arm plans its own path; empty
    /// when the arm's positions or the preset's are not known).
    pub(crate) fn preset_advice(&self, pose_id: u8) -> Vec<String> {
        let Some(live) = self.sources.live_source() else {
            return Vec::new();
        };
        let v = read_vehicle(&live.vehicle);
        let Some(arm) = v.focused_id() else {
            return Vec::new();
        };
        let states: Vec<(ComponentId, &ArmState)> =
            v.arms().map(|(id, s)| (id, &s.latest)).collect();
        crate::model::clearance::path::preset_advice(
            self.clearance.settings(),
            self.clearance.vehicle().clone(),
            &states,
            arm,
            pose_id,
        )
        .map(|a| a.words)
        .unwrap_or_default()
    }

    /// Measures clearance against `vehicle` from now on (`--vehicle`; the network thread's
    /// jog guard is given the same file).
    pub fn set_vehicle_geometry(&mut self, vehicle: Arc<VehicleGeometry>) {
        self.clearance = Clearance::new(self.settings.clearance(), vehicle);
    }

    /// The clearance tracker at the drawn time.
    pub fn clearance(&self) -> &Clearance {
        &self.clearance
    }

    /// The arm clearance is said for: the focused one.
    fn clearance_arm(&self) -> Option<ComponentId> {
        self.focus.or_else(|| self.with_drawn(|s| s.selected))
    }

    /// Takes every arm's state at the drawn time into the tracker (each frame: the check
    /// costs microseconds) and the band and margin of the settings.
    pub(crate) fn sync_clearance(&mut self) {
        let settings = self.settings.clearance();
        if self.clearance.settings() != settings {
            self.clearance.set_settings(settings);
        }
        if self.drawn.is_some() {
            let arms = facts(self.drawn_arms.iter().map(|(id, s)| (*id, s)));
            self.clearance.update(&arms);
        } else {
            let v = read_vehicle(self.sources.vehicle());
            let arms = facts(v.arms().map(|(id, s)| (id, &s.latest)));
            self.clearance.update(&arms);
        }
    }

    /// The joint names of every arm drawn, for the pairs' words.
    fn specs(&self) -> BTreeMap<ComponentId, ArmSpec> {
        let mut out = BTreeMap::new();
        if self.drawn.is_some() {
            for (id, s) in &self.drawn_arms {
                if let Some(spec) = &s.spec {
                    out.insert(*id, spec.clone());
                }
            }
        } else {
            let v = read_vehicle(self.sources.vehicle());
            for (id, s) in v.arms() {
                if let Some(spec) = &s.latest.spec {
                    out.insert(id, spec.clone());
                }
            }
        }
        out
    }

    /// What the clearance line beside the jog strip shows.
    pub(crate) fn clearance_view(&self) -> ClearanceView {
        let c = &self.clearance;
        let arm = self.clearance_arm();
        let specs = self.specs();
        let names =
            |id: ComponentId, joint: usize| specs.get(&id).and_then(|s| joint_name(s, joint));
        let words = |a: &Part, b: &Part| c.pair_words(arm, a, b, names);
        let line = |k: &Checked| PairLine {
            words: words(&k.gap.a, &k.gap.b),
            gap: k.effective,
            zone: k.zone,
        };
        let vehicle = c.vehicle();
        ClearanceView {
            // The live arm's jog: what the network side's guard said last.
            guard: self.with_live_state(|s| s.jog.clearance.clone()).flatten(),
            nearest: arm.and_then(|a| c.nearest(a)).map(line),
            nearest_allowed: arm
                .and_then(|a| c.nearest_allowed(a))
                .filter(|k| worth_showing(k))
                .map(line),
            allowed: c
                .allowed()
                .into_iter()
                .map(|(k, a)| AllowedLine {
                    words: words(&k.0, &k.1),
                    depth: a.depth,
                    why: a.source.to_string(),
                })
                .collect(),
            vehicle: if vehicle.origin.is_empty() {
                "none (the arms' own cylinders only; --vehicle FILE)".into()
            } else {
                format!("{} ({})", vehicle.name, vehicle.origin)
            },
        }
    }

    /// What the 3D view draws of the clearance: the obstacles, the ground, the pairs of the
    /// focused arm in the band or closer (and its nearest pair) tinted with a line between
    /// their closest points.
    pub(crate) fn scene_clearance(&self) -> SceneClearance {
        let c = &self.clearance;
        let vehicle = c.vehicle();
        let arm = self.clearance_arm();
        let mut shown: Vec<&Checked> = c.checked().iter().filter(|k| worth_showing(k)).collect();
        let nearest = arm.and_then(|a| c.nearest(a));
        if let Some(n) = nearest
            && !shown.iter().any(|k| std::ptr::eq(*k, n))
        {
            shown.push(n);
        }
        let mut out = SceneClearance {
            focus: arm,
            ground: vehicle.ground.map(|g| g.z),
            obstacles: vehicle
                .obstacles
                .iter()
                .map(|o| SceneObstacle {
                    shape: o.shape,
                    zone: None,
                })
                .collect(),
            ..SceneClearance::default()
        };
        for k in shown {
            for part in [k.gap.a, k.gap.b] {
                match part {
                    Part::Cylinder { arm, index, .. } => out.tinted.push((arm, index, k.zone)),
                    Part::Obstacle(i) => {
                        if let Some(o) = out.obstacles.get_mut(i) {
                            o.zone = Some(o.zone.map_or(k.zone, |z| z.min(k.zone)));
                        }
                    }
                    Part::Ground => {}
                }
            }
            out.lines.push(GapLine {
                on_a: k.gap.contact.on_a,
                on_b: k.gap.contact.on_b,
                gap: k.gap.contact.gap,
                zone: k.zone,
                label: k.zone == Zone::Contact || nearest.is_some_and(|n| std::ptr::eq(k, n)),
            });
        }
        out.below_ground = c
            .checked()
            .iter()
            .any(|k| k.gap.b == Part::Ground && k.gap.contact.gap < 0.0);
        out
    }
}

/// The facts of every arm with a specification and positions.
fn facts<'a>(arms: impl Iterator<Item = (ComponentId, &'a ArmState)>) -> Vec<ArmFacts<'a>> {
    arms.filter_map(|(id, s)| {
        let spec = s.spec.as_ref()?;
        let positions = s.positions.as_ref()?;
        Some(ArmFacts {
            input: ArmInput {
                id,
                spec,
                positions: &positions.value,
            },
            presets: &s.presets,
        })
    })
    .collect()
}
