//! [`ComponentId`]: which JAUS component a fact is about or a command is for. A leaf of
//! `model/`, so that the two doors ([`super::update`] and [`super::command`]) both name it
//! without naming each other.

/// A component's address on the JAUS network: subsystem.node.component. The domain's own
/// type (the codec has its `JausId`; `net::reports` converts at the boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ComponentId {
    /// Subsystem, 1..=65534.
    pub subsystem: u16,
    /// Node, 1..=254.
    pub node: u8,
    /// Component, 1..=254.
    pub component: u8,
}

impl ComponentId {
    /// The ID `subsystem.node.component`.
    pub const fn new(subsystem: u16, node: u8, component: u8) -> Self {
        Self {
            subsystem,
            node,
            component,
        }
    }
}

impl std::fmt::Display for ComponentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.subsystem, self.node, self.component)
    }
}

impl serde::Serialize for ComponentId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
