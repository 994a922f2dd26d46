//! The arm file as written: every key optional where the schema allows, checked afterwards by
//! [`super::rules`]. Serde reads and writes exactly the schema in the module above.

use serde::{Deserialize, Serialize};

use super::ArmFile;
use crate::model::arm::JointType;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileRepr {
    pub(super) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) mount: Option<MountRepr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) tool: Option<ToolRepr>,
    #[serde(default, rename = "joint")]
    pub(super) joints: Vec<JointRepr>,
    #[serde(default, rename = "preset", skip_serializing_if = "Vec::is_empty")]
    pub(super) presets: Vec<PresetRepr>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MountRepr {
    pub(super) position: [f64; 3],
    pub(super) orientation: [f64; 4],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolRepr {
    pub(super) point: [f64; 3],
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum KindRepr {
    Revolute,
    Prismatic,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JointRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) name: Option<String>,
    #[serde(rename = "type")]
    pub(super) kind: KindRepr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) link_length: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) twist: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) offset: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) angle: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max_effort: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) axis_radius: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) link_radius: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) home: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PresetRepr {
    // Wider than u8 so an out-of-range ID gets our message rather than serde's.
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) positions: Vec<f64>,
}

impl From<&ArmFile> for FileRepr {
    fn from(a: &ArmFile) -> Self {
        let joints = a
            .spec
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let later = i > 0;
                let revolute = j.kind == JointType::Revolute;
                JointRepr {
                    name: j.name.clone(),
                    kind: match j.kind {
                        JointType::Revolute => KindRepr::Revolute,
                        JointType::Prismatic => KindRepr::Prismatic,
                    },
                    link_length: later.then_some(j.link_length),
                    twist: later.then_some(j.twist),
                    offset: revolute.then_some(j.offset),
                    angle: (!revolute).then_some(j.angle),
                    min: j.min,
                    max: j.max,
                    max_speed: j.max_speed,
                    max_effort: j.max_effort,
                    axis_radius: j.axis_radius,
                    link_radius: if later { j.link_radius } else { None },
                    home: a.home.get(i).copied(),
                }
            })
            .collect();
        FileRepr {
            name: a.name.clone(),
            mount: a.spec.mount.map(|m| MountRepr {
                position: m.position,
                orientation: m.orientation,
            }),
            tool: Some(ToolRepr {
                point: a.tool_point,
            }),
            joints,
            presets: a
                .presets
                .iter()
                .map(|p| PresetRepr {
                    id: i64::from(p.id),
                    name: p.name.clone(),
                    positions: p.positions.clone(),
                })
                .collect(),
        }
    }
}
