//! JAUS IDs (wire reference §4.3): subsystem, node, component, with 65535/255/255 wildcards.

use std::fmt;
use std::str::FromStr;

/// A JAUS component address. On the wire: component, node, subsystem (u16 LE), i.e. the u32
/// `subsystem << 16 | node << 8 | component` little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JausId {
    /// Subsystem 1..=65534; 65535 = all subsystems.
    pub subsystem: u16,
    /// Node 1..=254; 255 = all nodes.
    pub node: u8,
    /// Component 1..=254; 255 = all components.
    pub component: u8,
}

impl JausId {
    /// The global broadcast address 65535.255.255.
    pub const BROADCAST: JausId = JausId::new(u16::MAX, u8::MAX, u8::MAX);

    /// A JAUS ID from its parts.
    pub const fn new(subsystem: u16, node: u8, component: u8) -> Self {
        Self {
            subsystem,
            node,
            component,
        }
    }

    /// From the 32-bit value `subsystem << 16 | node << 8 | component`.
    pub const fn from_u32(v: u32) -> Self {
        Self::new((v >> 16) as u16, (v >> 8) as u8, v as u8)
    }

    /// The 32-bit value `subsystem << 16 | node << 8 | component`.
    pub const fn to_u32(self) -> u32 {
        (self.subsystem as u32) << 16 | (self.node as u32) << 8 | self.component as u32
    }

    /// From the four wire bytes.
    pub const fn from_bytes(b: [u8; 4]) -> Self {
        Self::from_u32(u32::from_le_bytes(b))
    }

    /// The four wire bytes.
    pub const fn to_bytes(self) -> [u8; 4] {
        self.to_u32().to_le_bytes()
    }

    /// Whether any part is a wildcard.
    pub const fn is_wildcard(self) -> bool {
        self.subsystem == u16::MAX || self.node == u8::MAX || self.component == u8::MAX
    }

    /// Whether any part is the reserved value 0 (never a valid address).
    pub const fn has_reserved_zero(self) -> bool {
        self.subsystem == 0 || self.node == 0 || self.component == 0
    }

    /// Whether a message addressed to `self` (possibly with wildcards) reaches `target`.
    pub const fn matches(self, target: JausId) -> bool {
        (self.subsystem == u16::MAX || self.subsystem == target.subsystem)
            && (self.node == u8::MAX || self.node == target.node)
            && (self.component == u8::MAX || self.component == target.component)
    }
}

impl fmt::Display for JausId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.subsystem, self.node, self.component)
    }
}

/// Why a JAUS ID string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a JAUS ID: expected SUBSYSTEM.NODE.COMPONENT, e.g. 126.1.10 (subsystem 0..65535, node and component 0..255)"
)]
pub struct ParseJausIdError(String);

impl FromStr for JausId {
    type Err = ParseJausIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseJausIdError(s.to_owned());
        let mut parts = s.trim().split('.');
        let (Some(a), Some(b), Some(c), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err());
        };
        Ok(JausId::new(
            a.parse().map_err(|_| err())?,
            b.parse().map_err(|_| err())?,
            c.parse().map_err(|_| err())?,
        ))
    }
}

impl serde::Serialize for JausId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_are_component_node_subsystem_le() {
        let id = JausId::new(126, 1, 10);
        assert_eq!(id.to_bytes(), [0x0a, 0x01, 0x7e, 0x00]);
        assert_eq!(JausId::from_bytes(id.to_bytes()), id);
    }

    #[test]
    fn format_py_id_vector_reads_subsystem_1000() {
        // §5.4: the bytes 02 01 e8 03 are component 2, node 1, subsystem 1000.
        assert_eq!(
            JausId::from_bytes([0x02, 0x01, 0xe8, 0x03]),
            JausId::new(1000, 1, 2)
        );
    }

    #[test]
    fn wildcards_match_any_part() {
        let target = JausId::new(126, 1, 10);
        assert!(JausId::BROADCAST.matches(target));
        assert!(JausId::new(126, 255, 255).matches(target));
        assert!(!JausId::new(127, 255, 255).matches(target));
        assert!(target.matches(target));
    }

    #[test]
    fn parses_and_prints_dotted_form() {
        assert_eq!("126.1.10".parse::<JausId>(), Ok(JausId::new(126, 1, 10)));
        assert!("126.1".parse::<JausId>().is_err());
        assert!("126.1.300".parse::<JausId>().is_err());
        assert_eq!(JausId::new(65535, 255, 255).to_string(), "65535.255.255");
    }
}
