//! Clearance (issue 45): how far every bounding cylinder of every followed arm is from the
//! others, from the vehicle's obstacles and from the ground, and which pairs may touch.
//!
//! - [`geometry`]: capsules, boxes, the ground and their signed surface gaps (closed form).
//! - [`obstacles`]: the vehicle file (ground, obstacles, pairs allowed by design).
//! - [`scene`]: the bodies placed from the same kinematics the 3D view draws, and the gap
//!   of every checked pair.
//! - this file: the allowed pairs and [`Clearance`], the per-vehicle tracker every consumer
//!   (the jog, the window, the recording, `probe`) runs on the same facts.
//! - [`guard`]: the jog's check of each command on the pose one stop distance ahead.
//!
//! **Allowed pairs**, each listed with its depth and why, never silent:
//! - the vehicle file's `[[allow]]` (a depth, or never checked);
//! - pairs found overlapping in the arm's own reported presets (its maker says those poses
//!   are safe), each allowed no deeper than its deepest overlap there;
//! - pairs already in contact when first seen: allowed as deep as they are, and the
//!   allowance follows the pair as it opens, never as it closes — only motion that opens it
//!   passes the guard.
//!
//! An allowed pair's *effective gap* is its gap plus the depth allowed: zero at the deepest
//! allowed overlap. Its stop margin is zero (the depth is a pose known safe, not a guess);
//! every other pair stops at [`Settings::margin`] and slows inside [`Settings::band`].
//!
//! Sans-I/O and bounded: at most [`MAX_TRACKED_ARMS`] arms, and per arm as many pairs as
//! its cylinders make.

pub mod geometry;
pub mod guard;
pub mod obstacles;
pub mod path;
pub mod scene;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use obstacles::VehicleGeometry;
use scene::{ArmInput, PairGap, PairKey, Part, gaps, part_name};

use crate::model::arm::ArmSpec;
use crate::model::id::ComponentId;
use crate::model::update::PresetInfo;

/// Most arms tracked (the model's own bound on followed arms).
pub const MAX_TRACKED_ARMS: usize = crate::model::update::MAX_ARMS;

/// Default warning band, m: gap-closing motion slows inside it.
pub const DEFAULT_BAND_M: f64 = 0.05;
/// Default stop margin, m: gap-closing motion stops here.
pub const DEFAULT_MARGIN_M: f64 = 0.015;
/// The smallest margin a setting may give, m: below it the arm's own tracking error and the
/// cylinders' 0.3 mm resolution eat the gap.
pub const MARGIN_FLOOR_M: f64 = 0.005;
/// The smallest band beyond the margin, m (a band no wider than the margin is a wall).
pub const BAND_FLOOR_M: f64 = 0.01;

/// An overlap shallower than this beyond what is allowed is not a first-seen contact, m
/// (rounding, and the wire's 0.3 mm resolution).
const FIRST_SEEN_FLOOR_M: f64 = 0.0005;

/// Where gap-closing motion slows and stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Warning band, m: motion closing a gap smaller than this is slowed.
    pub band: f64,
    /// Stop margin, m: motion closing a gap is stopped here.
    pub margin: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            band: DEFAULT_BAND_M,
            margin: DEFAULT_MARGIN_M,
        }
    }
}

impl Settings {
    /// These settings with the floors applied: a margin of at least [`MARGIN_FLOOR_M`], a
    /// band at least [`BAND_FLOOR_M`] wider than the margin (not-a-number: the default).
    pub fn floored(self) -> Settings {
        let d = Settings::default();
        let margin = if self.margin.is_nan() {
            d.margin
        } else {
            self.margin
        }
        .max(MARGIN_FLOOR_M);
        let band = if self.band.is_nan() {
            d.band
        } else {
            self.band
        }
        .max(margin + BAND_FLOOR_M);
        Settings { band, margin }
    }
}

/// Why a pair may touch.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowSource {
    /// The vehicle file says so.
    File {
        /// Its words.
        why: String,
    },
    /// It overlaps in one of the arm's reported presets.
    Preset {
        /// The preset where it overlaps deepest.
        name: String,
    },
    /// It was in contact when first seen.
    FirstSeen,
}

impl std::fmt::Display for AllowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllowSource::File { why } if why.is_empty() => f.write_str("vehicle file"),
            AllowSource::File { why } => write!(f, "vehicle file: {why}"),
            AllowSource::Preset { name } => write!(f, "deepest in preset {name:?}"),
            AllowSource::FirstSeen => f.write_str("in contact when first seen; only opening"),
        }
    }
}

/// A pair allowed to touch.
#[derive(Debug, Clone, PartialEq)]
pub struct Allowance {
    /// How deep, m; `None`: never checked.
    pub depth: Option<f64>,
    /// Why.
    pub source: AllowSource,
}

/// Where a pair's effective gap stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Zone {
    /// Overlapping (deeper than allowed).
    Contact,
    /// Inside the stop margin.
    Margin,
    /// Inside the warning band.
    Band,
    /// Clear.
    Clear,
}

impl Zone {
    /// In words.
    pub fn name(self) -> &'static str {
        match self {
            Zone::Contact => "in contact",
            Zone::Margin => "inside the stop margin",
            Zone::Band => "inside the warning band",
            Zone::Clear => "clear",
        }
    }
}

/// One checked pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The pair and its geometry.
    pub gap: PairGap,
    /// The depth it may overlap, m (0 unless allowed).
    pub allowed: f64,
    /// The gap plus the depth allowed, m: what the band and margin apply to.
    pub effective: f64,
    /// Where it stands.
    pub zone: Zone,
}

/// The pairs whose effective gap may be slowed or stopped for: the margin and band of a
/// pair (an allowed one stops at its allowance).
pub fn limits(settings: &Settings, allowed: bool) -> (f64, f64) {
    if allowed {
        (0.0, settings.band - settings.margin)
    } else {
        (settings.margin, settings.band)
    }
}

fn zone(effective: f64, margin: f64, band: f64) -> Zone {
    if effective < 0.0 {
        Zone::Contact
    } else if effective < margin {
        Zone::Margin
    } else if effective < band {
        Zone::Band
    } else {
        Zone::Clear
    }
}

/// One arm's facts clearance needs.
#[derive(Debug, Clone, Copy)]
pub struct ArmFacts<'a> {
    /// The arm's ID, specification and positions.
    pub input: ArmInput<'a>,
    /// Its reported presets (those with positions count).
    pub presets: &'a [PresetInfo],
}

#[derive(Debug, Clone, Default)]
struct ArmTrack {
    /// The specification the preset allowances were computed for.
    spec: Option<ArmSpec>,
    /// The presets they were computed from (id, positions).
    presets: Vec<(u8, Vec<f64>)>,
    /// Pairs overlapping in presets: depth and the preset.
    from_presets: BTreeMap<PairKey, (f64, String)>,
}

/// The per-vehicle clearance tracker: allowed pairs kept as arms are seen, and the gaps of
/// every checked pair at the latest positions.
#[derive(Debug, Clone)]
pub struct Clearance {
    settings: Settings,
    vehicle: Arc<VehicleGeometry>,
    arms: BTreeMap<ComponentId, ArmTrack>,
    /// Pairs in contact when first seen: the depth still allowed.
    first_seen: BTreeMap<PairKey, f64>,
    /// Arms already seen with positions (their first-seen contacts taken).
    seen: BTreeSet<ComponentId>,
    /// The latest check.
    checked: Vec<Checked>,
    /// The depth the vehicle file and the presets allow each pair (recomputed when an arm,
    /// its specification or its presets change): looked up for every pair of every check.
    static_allow: foldhash::HashMap<PairKey, f64>,
    /// The pairs never checked, likewise.
    never: BTreeSet<PairKey>,
}

impl Default for Clearance {
    fn default() -> Self {
        Clearance::new(Settings::default(), Arc::new(VehicleGeometry::default()))
    }
}

impl Clearance {
    /// A tracker for `vehicle` with `settings` (floored).
    pub fn new(settings: Settings, vehicle: Arc<VehicleGeometry>) -> Clearance {
        Clearance {
            settings: settings.floored(),
            vehicle,
            arms: BTreeMap::new(),
            first_seen: BTreeMap::new(),
            seen: BTreeSet::new(),
            checked: Vec::new(),
            static_allow: foldhash::HashMap::default(),
            never: BTreeSet::new(),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Sets the band and margin (floored).
    pub fn set_settings(&mut self, settings: Settings) {
        self.settings = settings.floored();
        self.rezone();
    }

    /// The vehicle file in force.
    pub fn vehicle(&self) -> &Arc<VehicleGeometry> {
        &self.vehicle
    }

    /// Takes the arms' latest facts: preset allowances recomputed when the specification or
    /// the presets changed, first-seen contacts taken for arms seen for the first time (and
    /// opened as they open), every pair measured.
    pub fn update(&mut self, arms: &[ArmFacts<'_>]) {
        let arms = &arms[..arms.len().min(MAX_TRACKED_ARMS)];
        let before = self.arms.len();
        self.arms
            .retain(|id, _| arms.iter().any(|a| a.input.id == *id));
        let mut changed = before != self.arms.len();
        for a in arms {
            let track = self.arms.entry(a.input.id).or_default();
            let with_positions = a
                .presets
                .iter()
                .filter_map(|p| p.positions.as_ref().map(|q| (p.id, q)));
            let same_presets = track.presets.len() == with_positions.clone().count()
                && track
                    .presets
                    .iter()
                    .zip(with_positions.clone())
                    .all(|((i, q), (j, r))| *i == j && q == r);
            if track.spec.as_ref() != Some(a.input.spec) || !same_presets {
                track.from_presets = preset_overlaps(a.input, a.presets, &self.vehicle);
                track.spec = Some(a.input.spec.clone());
                track.presets = with_positions.map(|(i, q)| (i, q.clone())).collect();
                changed = true;
            }
        }
        if changed {
            self.recompute_static();
        }
        let inputs: Vec<ArmInput<'_>> = arms.iter().map(|a| a.input).collect();
        let never = &self.never;
        let all = gaps(&inputs, &self.vehicle, |k| {
            never.is_empty() || !never.contains(k)
        });
        // First sight: a pair in contact beyond what is otherwise allowed is allowed as it
        // is; afterwards its allowance only shrinks.
        let new: Vec<ComponentId> = inputs
            .iter()
            .map(|a| a.id)
            .filter(|id| !self.seen.contains(id))
            .collect();
        for g in &all {
            // Only an overlap can be a first-seen contact, and only a pair already one can
            // open: every other pair skips the lookups.
            if g.contact.gap >= 0.0 && self.first_seen.is_empty() {
                continue;
            }
            let key = PairKey::new(g.a, g.b);
            let other = self.allowance_depth(&key);
            let depth = (-g.contact.gap - other).max(0.0);
            let first = [g.a.arm(), g.b.arm()]
                .into_iter()
                .flatten()
                .any(|id| new.contains(&id));
            if first && depth > FIRST_SEEN_FLOOR_M {
                self.first_seen.insert(key, depth);
            } else if let Some(d) = self.first_seen.get_mut(&key) {
                *d = d.min(depth);
            }
        }
        self.first_seen.retain(|k, d| {
            *d > FIRST_SEEN_FLOOR_M
                && [k.0.arm(), k.1.arm()]
                    .into_iter()
                    .flatten()
                    .all(|id| inputs.iter().any(|a| a.id == id))
        });
        self.seen.extend(new);
        self.seen.retain(|id| inputs.iter().any(|a| a.id == *id));
        self.checked = all.into_iter().map(|g| self.check(g)).collect();
    }

    fn rezone(&mut self) {
        let checked = std::mem::take(&mut self.checked);
        self.checked = checked.into_iter().map(|c| self.check(c.gap)).collect();
    }

    /// Measures one pair against its allowance.
    pub fn check(&self, gap: PairGap) -> Checked {
        let key = PairKey::new(gap.a, gap.b);
        let first = if self.first_seen.is_empty() {
            0.0
        } else {
            self.first_seen.get(&key).copied().unwrap_or(0.0)
        };
        let allowed = self.allowance_depth(&key) + first;
        let (margin, band) = limits(&self.settings, allowed > 0.0);
        let effective = gap.contact.gap + allowed;
        Checked {
            gap,
            allowed,
            effective,
            zone: zone(effective, margin, band),
        }
    }

    /// The pairs never checked (the vehicle file allows them with no depth).
    pub fn never_checked(&self) -> BTreeSet<PairKey> {
        self.never.clone()
    }

    /// The file's and the presets' allowances and the pairs never checked, for the arms
    /// tracked now.
    fn recompute_static(&mut self) {
        let mut never = BTreeSet::new();
        let mut allow: foldhash::HashMap<PairKey, f64> = foldhash::HashMap::default();
        for a in &self.vehicle.allow {
            for key in self.file_pairs(a) {
                match a.depth {
                    None => {
                        never.insert(key);
                    }
                    Some(d) => {
                        let e = allow.entry(key).or_insert(0.0);
                        *e = e.max(d);
                    }
                }
            }
        }
        for track in self.arms.values() {
            for (key, (d, _)) in &track.from_presets {
                let e = allow.entry(*key).or_insert(0.0);
                *e = e.max(*d);
            }
        }
        self.never = never;
        self.static_allow = allow;
    }

    /// The concrete pairs a file allowance names, over the arms tracked.
    fn file_pairs(&self, a: &obstacles::FileAllow) -> Vec<PairKey> {
        let mut out = Vec::new();
        for (id, track) in &self.arms {
            if a.arm.is_some_and(|x| x != *id) {
                continue;
            }
            let Some(spec) = &track.spec else { continue };
            let parts = arm_parts(*id, spec);
            let others = || {
                parts.iter().copied().chain(
                    (0..self.vehicle.obstacles.len())
                        .map(Part::Obstacle)
                        .chain(std::iter::once(Part::Ground)),
                )
            };
            for x in parts.iter().filter(|p| p.is(&a.a) || p.is(&a.b)) {
                for y in others().filter(|p| p != x && (p.is(&a.a) || p.is(&a.b))) {
                    if (x.is(&a.a) && y.is(&a.b)) || (x.is(&a.b) && y.is(&a.a)) {
                        out.push(PairKey::new(*x, y));
                    }
                }
            }
        }
        out
    }

    /// The depth the file and the presets allow a pair, m (0: none).
    fn allowance_depth(&self, key: &PairKey) -> f64 {
        self.static_allow.get(key).copied().unwrap_or(0.0)
    }

    /// Every allowed pair with its depth (`None`: never checked) and why, for the window
    /// and `probe`: the file's, the presets', the first-seen ones.
    pub fn allowed(&self) -> Vec<(PairKey, Allowance)> {
        let mut out: BTreeMap<PairKey, Allowance> = BTreeMap::new();
        let mut put = |key: PairKey, a: Allowance| {
            let deeper = match out.get(&key) {
                None => true,
                Some(old) => match (old.depth, a.depth) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(o), Some(n)) => n > o,
                },
            };
            if deeper {
                out.insert(key, a);
            }
        };
        for a in &self.vehicle.allow {
            for key in self.file_pairs(a) {
                put(
                    key,
                    Allowance {
                        depth: a.depth,
                        source: AllowSource::File { why: a.why.clone() },
                    },
                );
            }
        }
        for track in self.arms.values() {
            for (key, (d, name)) in &track.from_presets {
                put(
                    *key,
                    Allowance {
                        depth: Some(*d),
                        source: AllowSource::Preset { name: name.clone() },
                    },
                );
            }
        }
        for (key, d) in &self.first_seen {
            let total = self.allowance_depth(key) + d;
            out.insert(
                *key,
                Allowance {
                    depth: Some(total),
                    source: AllowSource::FirstSeen,
                },
            );
        }
        out.into_iter().collect()
    }

    /// Every pair checked at the latest positions.
    pub fn checked(&self) -> &[Checked] {
        &self.checked
    }

    /// The pair of `arm` not allowed to touch with the smallest gap: what the window shows
    /// beside the jog ([`Clearance::nearest_allowed`] gives the allowed ones).
    pub fn nearest(&self, arm: ComponentId) -> Option<&Checked> {
        self.of_arm(arm)
            .filter(|c| c.allowed == 0.0)
            .min_by(|a, b| a.effective.total_cmp(&b.effective))
    }

    /// The allowed pair of `arm` nearest its allowed depth (effective gap).
    pub fn nearest_allowed(&self, arm: ComponentId) -> Option<&Checked> {
        self.of_arm(arm)
            .filter(|c| c.allowed > 0.0)
            .min_by(|a, b| a.effective.total_cmp(&b.effective))
    }

    /// The checked pairs of `arm`.
    pub fn of_arm(&self, arm: ComponentId) -> impl Iterator<Item = &Checked> {
        self.checked
            .iter()
            .filter(move |c| c.gap.a.arm() == Some(arm) || c.gap.b.arm() == Some(arm))
    }

    /// A pair in words: "`wrist_roll` (joint 5) and turret (joint 1)"; parts of another arm
    /// than `arm` carry its ID.
    pub fn pair_words(
        &self,
        arm: Option<ComponentId>,
        a: &Part,
        b: &Part,
        joint_name: impl Fn(ComponentId, usize) -> Option<String> + Copy,
    ) -> String {
        let name = |p: &Part| {
            let other = p.arm().is_some() && p.arm() != arm;
            part_name(p, joint_name, &self.vehicle, other)
        };
        format!("{} and {}", name(a), name(b))
    }
}

/// Every cylinder part of an arm (for naming file pairs).
fn arm_parts(id: ComponentId, spec: &ArmSpec) -> Vec<Part> {
    let mut out = Vec::with_capacity(2 * spec.joints.len());
    for k in 1..=spec.joints.len() {
        if k > 1 {
            out.push(Part::Cylinder {
                arm: id,
                index: out.len(),
                joint: k,
                link: true,
            });
        }
        out.push(Part::Cylinder {
            arm: id,
            index: out.len(),
            joint: k,
            link: false,
        });
    }
    out
}

/// Pairs of one arm (with the vehicle) overlapping in its presets: the deepest overlap and
/// the preset it is in.
fn preset_overlaps(
    arm: ArmInput<'_>,
    presets: &[PresetInfo],
    vehicle: &VehicleGeometry,
) -> BTreeMap<PairKey, (f64, String)> {
    let mut out: BTreeMap<PairKey, (f64, String)> = BTreeMap::new();
    for p in presets {
        let Some(q) = &p.positions else { continue };
        let input = ArmInput {
            positions: q,
            ..arm
        };
        for g in gaps(&[input], vehicle, |_| true) {
            let depth = -g.contact.gap;
            if depth <= 0.0 {
                continue;
            }
            let key = PairKey::new(g.a, g.b);
            if out.get(&key).is_none_or(|(d, _)| depth > *d) {
                out.insert(key, (depth, p.name.clone()));
            }
        }
    }
    out
}

/// The joint names of `spec` as [`Clearance::pair_words`] takes them.
pub fn joint_name(spec: &ArmSpec, joint: usize) -> Option<String> {
    spec.joints.get(joint.checked_sub(1)?)?.name.clone()
}
