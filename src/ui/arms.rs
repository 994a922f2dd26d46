//! The vehicle's arms as the window shows them beside the focused one: a row per arm for the
//! arm lists (the live area's, from each arm's newest state; the past area's, from each
//! arm's state at the drawn time), and every arm of the focused arm's subsystem placed at its
//! mount for the 3D view. No egui here: plain data the panels draw.
//!
//! The gauges, presets, plots and timeline show the focused arm only (a strip per arm would
//! halve what each shows at 8 arms, and the operator commands one arm at a time); the list
//! and the 3D view are where every arm is seen at once.

use std::collections::BTreeSet;

use super::scene::SceneArm;
use super::words::status_word;
use crate::model::kinematics;
use crate::model::state::{ArmState, Freshness};
use crate::model::update::{ComponentId, LinkState};

/// One arm in a list: who it is and its state in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmRow {
    /// The arm.
    pub id: ComponentId,
    /// Its identification, when it gave one.
    pub name: String,
    /// The OCU keeps its state (a session); `false` for a manipulator only found.
    pub followed: bool,
    /// Its link in words: `live`, `stale`, `LINK LOST`, `searching`, `connecting`, `found`,
    /// `lost`.
    pub link: String,
    /// Its management state in words (`state unknown` while its link is lost).
    pub status: String,
    /// Who holds control, as it reported it (`ArmState::control_words`).
    pub control: String,
    /// The link is lost (the arm is drawn greyed).
    pub lost: bool,
    /// The view is about this arm.
    pub focused: bool,
    /// Where it is followed (or was found), empty while unknown.
    pub address: String,
    /// Another address answering with its ID (not followed), empty when none.
    pub address_other: String,
}

impl ArmRow {
    /// The row of a followed arm from its state.
    pub fn of(id: ComponentId, state: &ArmState, focused: bool) -> Self {
        let name = state
            .components
            .get(&id)
            .and_then(|c| c.0.identification.clone())
            .unwrap_or_default();
        let freshness = state.freshness();
        let link = match (state.link, &freshness) {
            (LinkState::Idle, _) => "searching",
            (LinkState::Connecting, _) => "connecting",
            (_, Freshness::Lost { .. }) => "LINK LOST",
            (_, Freshness::Stale { .. }) => "stale",
            _ => "live",
        };
        let status = if freshness.is_lost() {
            "state unknown"
        } else {
            status_word(state.status)
        };
        Self {
            id,
            name,
            followed: true,
            link: link.to_string(),
            status: status.to_string(),
            control: state.control_words(),
            lost: freshness.is_lost(),
            focused,
            address: state
                .address
                .or_else(|| state.components.get(&id).map(|c| c.0.address))
                .map(|a| a.to_string())
                .unwrap_or_default(),
            address_other: state
                .address_other
                .map(|a| a.to_string())
                .unwrap_or_default(),
        }
    }

    /// The row of a manipulator found on the network whose state is not kept.
    fn found(id: ComponentId, name: Option<&str>, address: String, lost: bool) -> Self {
        Self {
            id,
            name: name.unwrap_or_default().to_string(),
            followed: false,
            link: if lost { "lost" } else { "found" }.to_string(),
            status: "state unknown".to_string(),
            control: "not followed".to_string(),
            lost,
            focused: false,
            address,
            address_other: String::new(),
        }
    }

    /// Where the arm is, in words (its row's tooltip): `126.1.10 followed at
    /// 127.0.0.1:3794`, with another address answering under its ID when there is one.
    pub fn where_words(&self) -> String {
        let verb = if self.followed {
            "followed at"
        } else {
            "found at"
        };
        let mut o = if self.address.is_empty() {
            format!("{}: address not known yet", self.id)
        } else {
            format!("{} {verb} {}", self.id, self.address)
        };
        if !self.address_other.is_empty() {
            o = format!(
                "{o}; its ID also answers at {} (not followed: two components under one ID?)",
                self.address_other
            );
        }
        o
    }

    /// The row in one line: `126.1.10 demo arm — live · READY · free`.
    pub fn text(&self) -> String {
        let name = if self.name.is_empty() {
            String::new()
        } else {
            format!(" {}", self.name)
        };
        if self.followed {
            format!(
                "{}{name} — {} · {} · {}",
                self.id, self.link, self.status, self.control
            )
        } else {
            format!("{}{name} — {}", self.id, self.link)
        }
    }
}

/// The rows of every arm in `arms` (ID order, so grouped by subsystem), then of the
/// manipulators `found` on the network whose state is not kept (they can be focused all the
/// same: the network side then follows them).
pub fn rows<'a>(
    arms: impl Iterator<Item = (ComponentId, &'a ArmState)>,
    found: Option<&ArmState>,
    focus: Option<ComponentId>,
) -> Vec<ArmRow> {
    let mut rows: Vec<ArmRow> = arms
        .map(|(id, s)| ArmRow::of(id, s, Some(id) == focus))
        .collect();
    let followed: BTreeSet<ComponentId> = rows.iter().map(|r| r.id).collect();
    if let Some(state) = found {
        rows.extend(
            state
                .components
                .values()
                .filter(|(c, _)| c.manipulator && !followed.contains(&c.id))
                .map(|(c, lost)| {
                    ArmRow::found(
                        c.id,
                        c.identification.as_deref(),
                        c.address.to_string(),
                        *lost,
                    )
                }),
        );
    }
    rows.sort_by_key(|r| r.id);
    rows
}

/// The arms drawn beside the focused one: every arm of `focus`'s subsystem (of every arm
/// while none is focused) whose specification and positions are known, at its mount, tinted
/// by its own limits and greyed when its link is lost.
pub fn scene_arms<'a>(
    arms: impl Iterator<Item = (ComponentId, &'a ArmState)>,
    focus: Option<ComponentId>,
) -> Vec<SceneArm> {
    arms.filter(|(id, _)| Some(*id) != focus && focus.is_none_or(|f| f.subsystem == id.subsystem))
        .filter_map(|(id, state)| {
            let spec = state.spec.as_ref()?;
            let q = state.positions.as_ref()?;
            let tool = state.tool_point.unwrap_or([0.0; 3]);
            let pose = kinematics::forward(spec, &q.value, tool).ok()?;
            Some(SceneArm {
                id,
                pose,
                joint_warning: state.joint_warnings(),
                lost: state.freshness().is_lost(),
                presets: super::panels::view3d::preset_poses(state),
            })
        })
        .collect()
}

/// How many followed arms of `focus`'s subsystem "stop all" reaches, and the subsystem.
pub fn stop_all_reach(rows: &[ArmRow], focus: Option<ComponentId>) -> Option<(usize, u16)> {
    let subsystem = focus?.subsystem;
    let n = rows
        .iter()
        .filter(|r| r.followed && r.id.subsystem == subsystem)
        .count();
    Some((n.max(1), subsystem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::update::{ArmFact, ControlState, ManagementState, NetFact};

    fn arm(c: u8, link: LinkState, status: ManagementState) -> (ComponentId, ArmState) {
        let id = ComponentId::new(126, 1, c);
        let mut s = ArmState::default();
        s.apply_net(&NetFact::Selected { t: 0.0, id });
        for fact in [
            ArmFact::Link {
                t: 0.0,
                state: link,
            },
            ArmFact::Status {
                t: 0.0,
                state: status,
            },
        ] {
            s.apply_arm(&fact);
        }
        (id, s)
    }

    #[test]
    fn each_row_says_its_own_arms_link_state_and_control() {
        let a = arm(10, LinkState::Live, ManagementState::Ready);
        let mut b = arm(11, LinkState::Lost, ManagementState::Emergency);
        b.1.control = ControlState::Held { authority: 100 };
        let rows = rows([(a.0, &a.1), (b.0, &b.1)].into_iter(), None, Some(a.0));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].text(), "126.1.10 — live · READY · control not held");
        assert!(rows[0].focused && !rows[1].focused);
        assert_eq!(
            rows[1].text(),
            "126.1.11 — LINK LOST · state unknown · control held (authority 100)"
        );
        assert!(rows[1].lost);
    }

    #[test]
    fn stop_all_counts_the_followed_arms_of_the_focused_subsystem() {
        let a = arm(10, LinkState::Live, ManagementState::Ready);
        let b = arm(11, LinkState::Live, ManagementState::Ready);
        let other = (ComponentId::new(127, 1, 10), a.1.clone());
        let rows = rows(
            [(a.0, &a.1), (b.0, &b.1), (other.0, &other.1)].into_iter(),
            None,
            Some(b.0),
        );
        assert_eq!(stop_all_reach(&rows, Some(b.0)), Some((2, 126)));
        assert_eq!(stop_all_reach(&rows, None), None);
    }
}
