//! The work area's tiles (`egui_tiles`, as Rerun): the 3D view, the joint gauges, the plots, the
//! presets, the event log and the arm list, which the operator splits, resizes, tabs and closes.
//! The tree is saved with the [`Settings`](crate::ui::settings::Settings); a saved tree that does
//! not load (or holds no 3D view) is replaced by the default one ([`NamedLayout::Laptop`]).
//!
//! What must never be covered or cut lives outside the tiles (`app/frame.rs`): the top bar with
//! the emergency stop, the banner's strip, the status bar and the timeline.

use eframe::egui;
use egui_tiles::{Container, Linear, LinearDir, Tile, TileId, Tiles, Tree};
use serde::{Deserialize, Serialize};

/// One tile's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pane {
    /// The 3D view of the arm (never closed).
    View3d,
    /// The joint gauges.
    Gauges,
    /// The force/torque and signal plots.
    Plots,
    /// The preset pose picker.
    Presets,
    /// The event log.
    EventLog,
    /// The arms of the session.
    Arms,
}

impl Pane {
    /// Every pane, each once in every tree.
    pub const ALL: [Pane; 6] = [
        Pane::View3d,
        Pane::Gauges,
        Pane::Plots,
        Pane::Presets,
        Pane::EventLog,
        Pane::Arms,
    ];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::View3d => "3D view",
            Pane::Gauges => "Joints",
            Pane::Plots => "Plots",
            Pane::Presets => "Presets",
            Pane::EventLog => "Event log",
            Pane::Arms => "Arms",
        }
    }
}

/// The layouts the View → Layout menu offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedLayout {
    /// A laptop's 1280×800 or 1366×768, the default: gauges (the arm list a tab behind them)
    /// left, the 3D view the whole height of the centre (about 630 points tall at 1280×800),
    /// right the plots (the event log a tab beside them) over the presets.
    Laptop,
    /// A laptop's window with the plots wide under the 3D view (the view about 250 points
    /// tall at 1280×800), presets over the event log right.
    LaptopWidePlots,
    /// A desk screen (1920×1080): as the laptop's, with the event log under the presets.
    Desk,
    /// An 800×600 window: the gauges, presets, arms and log as tabs left of the 3D view and
    /// the plots.
    Small,
}

impl NamedLayout {
    /// Every named layout, in the menu's order.
    pub const ALL: [NamedLayout; 4] = [
        NamedLayout::Laptop,
        NamedLayout::LaptopWidePlots,
        NamedLayout::Desk,
        NamedLayout::Small,
    ];

    /// The menu's words.
    pub fn name(self) -> &'static str {
        match self {
            NamedLayout::Laptop => "Laptop (1280×800)",
            NamedLayout::LaptopWidePlots => "Laptop, wide plots",
            NamedLayout::Desk => "Desk (1920×1080)",
            NamedLayout::Small => "Small window (800×600)",
        }
    }

    /// The layout's tree.
    pub fn tree(self) -> Tree<Pane> {
        let mut tiles = Tiles::default();
        let pane = |tiles: &mut Tiles<Pane>, p| tiles.insert_pane(p);
        let view = pane(&mut tiles, Pane::View3d);
        let plots = pane(&mut tiles, Pane::Plots);
        let gauges = pane(&mut tiles, Pane::Gauges);
        let presets = pane(&mut tiles, Pane::Presets);
        let log = pane(&mut tiles, Pane::EventLog);
        let arms = pane(&mut tiles, Pane::Arms);
        let centre = |tiles: &mut Tiles<Pane>| {
            linear(tiles, LinearDir::Vertical, &[(view, 1.0), (plots, 1.35)])
        };
        let root = match self {
            NamedLayout::Laptop => {
                // The 3D view the whole height of the centre (in a laptop's 550–600 points
                // of work area, sharing it with three plots under it left the view the
                // smallest tile, 250 points: issue 46). The presets take the height five
                // presets need, the plots the rest. Two tabs a side at most (at 800 wide three would scroll);
                // right, the plots over the presets, the log (off by default) a tab with
                // the plots: turned on, it is in front, as tall as they are.
                let left = tiles.insert_tab_tile(vec![gauges, arms]);
                let review = tiles.insert_tab_tile(vec![plots, log]);
                // Hidden until the View menu's tick (or the settings) turn it on, which
                // brings it to the front.
                tiles.set_visible(log, false);
                let right = linear(
                    &mut tiles,
                    LinearDir::Vertical,
                    &[(review, 2.6), (presets, 1.0)],
                );
                linear(
                    &mut tiles,
                    LinearDir::Horizontal,
                    &[(left, 0.62), (view, 1.1), (right, 1.1)],
                )
            }
            NamedLayout::LaptopWidePlots => {
                // Two tabs a side at most (at 800 wide three would scroll); the log, off by
                // default, under the presets: turned on, it is seen at once.
                let middle = centre(&mut tiles);
                let left = tiles.insert_tab_tile(vec![gauges, arms]);
                let right = linear(
                    &mut tiles,
                    LinearDir::Vertical,
                    &[(presets, 1.0), (log, 1.6)],
                );
                linear(
                    &mut tiles,
                    LinearDir::Horizontal,
                    &[(left, 0.7), (middle, 2.0), (right, 0.55)],
                )
            }
            NamedLayout::Desk => {
                let middle = centre(&mut tiles);
                let under = tiles.insert_tab_tile(vec![log, arms]);
                let right = linear(
                    &mut tiles,
                    LinearDir::Vertical,
                    &[(presets, 1.0), (under, 1.0)],
                );
                linear(
                    &mut tiles,
                    LinearDir::Horizontal,
                    &[(gauges, 0.6), (middle, 2.0), (right, 0.6)],
                )
            }
            NamedLayout::Small => {
                let middle = centre(&mut tiles);
                let left = tiles.insert_tab_tile(vec![gauges, presets, arms, log]);
                linear(
                    &mut tiles,
                    LinearDir::Horizontal,
                    &[(left, 0.9), (middle, 2.0)],
                )
            }
        };
        Tree::new(tree_id(), root, tiles)
    }
}

/// A linear container of `children` with their shares.
fn linear(tiles: &mut Tiles<Pane>, dir: LinearDir, children: &[(TileId, f32)]) -> TileId {
    let mut l = Linear::new(dir, children.iter().map(|(id, _)| *id).collect());
    for (id, share) in children {
        l.shares.set_share(*id, *share);
    }
    tiles.insert_container(Container::Linear(l))
}

/// The tree's egui ID (the same in every layout, so a drag in progress survives a change).
fn tree_id() -> egui::Id {
    egui::Id::unique("jaus-ocu work area")
}

/// The tile tree, as saved with the settings: the tree in JSON, in one string (a string
/// loads or fails on its own, so a tree that does not, from an older or a damaged file,
/// never costs the other settings). Loading never fails: a tree that does not parse, or is
/// not one this window can draw ([`TileLayout::valid`]), is the default.
#[derive(Clone, PartialEq)]
pub struct TileLayout(pub Tree<Pane>);

impl Default for TileLayout {
    fn default() -> Self {
        Self(NamedLayout::Laptop.tree())
    }
}

impl std::fmt::Debug for TileLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tree has no Debug of its own: its panes, and which are hidden.
        let (shown, hidden): (Vec<Pane>, Vec<Pane>) = Pane::ALL
            .into_iter()
            .filter(|p| self.tile_of(*p).is_some())
            .partition(|p| {
                self.tile_of(*p)
                    .is_some_and(|id| self.0.tiles.is_visible(id))
            });
        write!(f, "TileLayout {{ shown: {shown:?}, hidden: {hidden:?} }}")
    }
}

impl Serialize for TileLayout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let json = serde_json::to_string(&self.0).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&json)
    }
}

impl<'de> Deserialize<'de> for TileLayout {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LayoutVisitor)
    }
}

impl TileLayout {
    /// The layout saved as `json`, or the default when it is not a tree this window can draw.
    pub fn from_json(json: &str) -> Self {
        match serde_json::from_str::<Tree<Pane>>(json) {
            Ok(tree) if Self::valid(&tree) => Self(tree),
            Ok(_) => {
                tracing::warn!("the saved tile layout is incomplete: the default layout");
                Self::default()
            }
            Err(e) => {
                tracing::warn!("the saved tile layout does not load ({e}): the default layout");
                Self::default()
            }
        }
    }
}

/// Reads a saved layout: its JSON string, or anything else (read and thrown away) as the
/// default.
struct LayoutVisitor;

impl<'de> serde::de::Visitor<'de> for LayoutVisitor {
    type Value = TileLayout;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tile layout in JSON")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TileLayout, E> {
        Ok(TileLayout::from_json(v))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<TileLayout, E> {
        Ok(TileLayout::default())
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<TileLayout, D::Error> {
        TileLayout::deserialize(d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<TileLayout, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(TileLayout::default())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<TileLayout, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(TileLayout::default())
    }
}

impl TileLayout {
    /// Whether `tree` can be drawn: it has a root, every child it names exists, and each
    /// pane is in it exactly once (the 3D view among them).
    pub fn valid(tree: &Tree<Pane>) -> bool {
        let Some(root) = tree.root() else {
            return false;
        };
        if tree.tiles.get(root).is_none() {
            return false;
        }
        let children_exist = tree.tiles.tiles().all(|t| match t {
            Tile::Pane(_) => true,
            Tile::Container(c) => c.children().all(|id| tree.tiles.get(*id).is_some()),
        });
        let once = Pane::ALL.iter().all(|p| {
            tree.tiles
                .tiles()
                .filter(|t| matches!(t, Tile::Pane(q) if q == p))
                .count()
                == 1
        });
        children_exist && once
    }

    /// The tile of `pane`.
    pub fn tile_of(&self, pane: Pane) -> Option<TileId> {
        self.0.tiles.find_pane(&pane)
    }

    /// Shows or hides `pane`'s tile (a hidden tile keeps its place for when it comes back).
    pub fn set_visible(&mut self, pane: Pane, visible: bool) {
        if let Some(id) = self.tile_of(pane)
            && self.0.tiles.is_visible(id) != visible
        {
            self.0.tiles.set_visible(id, visible);
        }
    }

    /// Keeps the 3D view at least `view_min` points tall (its tile's chrome included) in a
    /// column `height` points tall where it shares a vertical split with the plots: the
    /// split's shares are moved toward the view (a drag stops there), while the plots keep
    /// `plots_min`. Returns `false` when the column cannot give both their least: the
    /// plots must give way.
    pub fn keep_view3d(&mut self, height: f32, view_min: f32, plots_min: f32) -> bool {
        let Some((parent, view_child, share, others)) = self.view3d_split() else {
            return true;
        };
        if height * share / (share + others) >= view_min {
            return true;
        }
        if view_min + plots_min > height {
            return false;
        }
        // view_min / height of the column for the view: share / (share + others).
        let f = view_min / height;
        let wanted = others * f / (1.0 - f);
        if let Some(Tile::Container(Container::Linear(l))) = self.0.tiles.get_mut(parent) {
            l.shares.set_share(view_child, wanted);
        }
        true
    }

    /// Keeps `pane` (shown: its own tile, or the front tab of a tab tile) at least `min`
    /// points tall, its tab bar included, in the vertical split it is a part of, in a
    /// column `height` points tall: its share is raised (a drag stops there). A pane that
    /// spans its column's height, or sits behind another tab, is left alone.
    pub fn keep_height(&mut self, pane: Pane, height: f32, min: f32) {
        let Some((parent, child)) = self.vertical_part(pane) else {
            return;
        };
        let Some(Tile::Container(Container::Linear(l))) = self.0.tiles.get(parent) else {
            return;
        };
        let share = l.shares[child];
        let others = others_share(&self.0.tiles, l, child);
        if others <= 0.0 || height <= min || height * share / (share + others) >= min {
            return;
        }
        let f = min / height;
        let wanted = others * f / (1.0 - f);
        if let Some(Tile::Container(Container::Linear(l))) = self.0.tiles.get_mut(parent) {
            l.shares.set_share(child, wanted);
        }
    }

    /// Whether `pane` and `other` are parts of one vertical split (one column), `pane`
    /// shown and not spanning the column's height.
    pub fn share_a_column(&self, pane: Pane, other: Pane) -> bool {
        match (self.vertical_part(pane), self.tile_of(other)) {
            (Some((parent, child)), Some(o)) => {
                self.is_under(o, parent) && !self.is_under(o, child)
            }
            _ => false,
        }
    }

    /// The vertical split `pane` is a part of: the split and its child that holds the pane;
    /// `None` where the pane is hidden, behind another tab, or spans its column's height.
    fn vertical_part(&self, pane: Pane) -> Option<(TileId, TileId)> {
        let tiles = &self.0.tiles;
        let mut child = self.tile_of(pane)?;
        if !tiles.is_visible(child) {
            return None;
        }
        while let Some(parent) = tiles.parent_of(child) {
            match tiles.get(parent)? {
                Tile::Container(Container::Tabs(t)) if t.active != Some(child) => return None,
                Tile::Container(Container::Linear(l)) => {
                    return (l.dir == LinearDir::Vertical).then_some((parent, child));
                }
                _ => child = parent,
            }
        }
        None
    }

    /// The vertical split the 3D view shares with the visible plots: the split, the view's
    /// side of it, its share and the other visible children's shares.
    fn view3d_split(&self) -> Option<(TileId, TileId, f32, f32)> {
        let tiles = &self.0.tiles;
        let view = self.tile_of(Pane::View3d)?;
        let plots = self.tile_of(Pane::Plots)?;
        if !tiles.is_visible(plots) {
            return None;
        }
        let chain = |mut id: TileId| {
            let mut out = vec![id];
            while let Some(p) = tiles.parent_of(id) {
                out.push(p);
                id = p;
            }
            out
        };
        let (v, p) = (chain(view), chain(plots));
        // The innermost container holding both, with the view's child of it.
        let (i, parent) = v
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, id)| p.contains(id))?;
        let Some(Tile::Container(Container::Linear(l))) = tiles.get(*parent) else {
            return None;
        };
        if l.dir != LinearDir::Vertical {
            return None;
        }
        let view_child = v[i - 1];
        let others = others_share(tiles, l, view_child);
        let share = l.shares[view_child];
        (share + others > 0.0).then_some((*parent, view_child, share, others))
    }

    /// Whether `pane`'s tile is shown (the tree's own flag).
    pub fn is_visible(&self, pane: Pane) -> bool {
        self.tile_of(pane)
            .is_some_and(|id| self.0.tiles.is_visible(id))
    }

    /// Brings `pane` to the front of its tabs.
    pub fn make_active(&mut self, pane: Pane) {
        if let Some(id) = self.tile_of(pane) {
            self.0.make_active(|tid, _| tid == id);
        }
    }
}

/// The shares of `l`'s visible children other than `child`, summed.
fn others_share(tiles: &Tiles<Pane>, l: &Linear, child: TileId) -> f32 {
    l.children
        .iter()
        .filter(|c| **c != child && tiles.is_visible(**c))
        .map(|c| l.shares[*c])
        .sum()
}

/// The rects the tiles were drawn in this frame, for what is drawn over them (the notices)
/// and for tests: a pane's rect only while it is laid out (visible, the active tab).
pub fn pane_rects(tree: &Tree<Pane>) -> Vec<(Pane, egui::Rect)> {
    tree.tiles
        .iter()
        .filter_map(|(id, t)| match t {
            Tile::Pane(p) if tree.tiles.is_visible_in_layout(*id) => {
                tree.tiles.rect(*id).map(|r| (*p, r))
            }
            _ => None,
        })
        .collect()
}

impl TileLayout {
    /// The tab container that stacks the 3D view with other tiles (an ancestor of the view
    /// with more than one tab, hidden tabs included: turned on from the View menu, one would
    /// come to the front and hide the arm), the innermost first; `None` when the view has
    /// its tile to itself.
    pub fn view3d_stacked_in(&self) -> Option<TileId> {
        let tiles = &self.0.tiles;
        let mut id = self.tile_of(Pane::View3d)?;
        while let Some(parent) = tiles.parent_of(id) {
            if let Some(Tile::Container(Container::Tabs(t))) = tiles.get(parent)
                && t.children.len() > 1
            {
                return Some(parent);
            }
            id = parent;
        }
        None
    }

    /// The panes stacked with the 3D view (their tabs beside its own), for the notice that
    /// says what was moved.
    pub fn stacked_with_view3d(&self) -> Vec<Pane> {
        let Some(tabs) = self.view3d_stacked_in() else {
            return Vec::new();
        };
        let view = self.tile_of(Pane::View3d);
        Pane::ALL
            .into_iter()
            .filter(|p| *p != Pane::View3d)
            .filter(|p| {
                self.tile_of(*p).is_some_and(|mut id| {
                    // In the stack and not on the view's side of it.
                    while let Some(parent) = self.0.tiles.parent_of(id) {
                        if parent == tabs {
                            return view.is_none_or(|v| !self.is_under(v, id));
                        }
                        id = parent;
                    }
                    false
                })
            })
            .collect()
    }

    /// Whether `tile` is `ancestor` or inside it.
    fn is_under(&self, mut tile: TileId, ancestor: TileId) -> bool {
        loop {
            if tile == ancestor {
                return true;
            }
            match self.0.tiles.parent_of(tile) {
                Some(p) => tile = p,
                None => return false,
            }
        }
    }

    /// Gives the 3D view a tile of its own again: the tabs stacked with it move to a tab
    /// container of their own under it (the view keeps its place and its size). Returns
    /// whether anything moved.
    pub fn unstack_view3d(&mut self) -> bool {
        let mut moved = false;
        // Each pass takes one stack apart; a tree holds six panes, so a few passes at most.
        for _ in 0..Pane::ALL.len() {
            let Some(stack) = self.view3d_stacked_in() else {
                return moved;
            };
            let Some(view) = self.tile_of(Pane::View3d) else {
                return moved;
            };
            let Some(Tile::Container(Container::Tabs(tabs))) = self.0.tiles.get(stack) else {
                return moved;
            };
            let (keep, others): (Vec<TileId>, Vec<TileId>) =
                tabs.children.iter().partition(|c| self.is_under(view, **c));
            let tiles = &mut self.0.tiles;
            if let Some(Tile::Container(Container::Tabs(tabs))) = tiles.get_mut(stack) {
                tabs.children.clone_from(&keep);
                if let Some(k) = keep.first() {
                    tabs.set_active(*k);
                }
            }
            let aside = tiles.insert_tab_tile(others);
            let parent = tiles.parent_of(stack);
            let split = tiles.insert_container(Container::Linear(Linear::new(
                LinearDir::Vertical,
                vec![stack, aside],
            )));
            match parent {
                Some(p) => {
                    if let Some(Tile::Container(c)) = tiles.get_mut(p) {
                        let _ = c.replace_child(stack, split);
                    }
                }
                None => self.0.root = Some(split),
            }
            moved = true;
        }
        moved
    }
}

/// Layout changes kept for Ctrl+Z ([`crate::ui::commands::UiCommand::UndoLayout`]), at most.
pub const UNDO_DEPTH: usize = 20;

/// A layout as undo restores it: the tree and which panes the View menu shows.
#[derive(Clone, PartialEq)]
pub struct LayoutSnapshot {
    /// The tree.
    pub tiles: TileLayout,
    /// Whether each pane of [`Pane::ALL`] is shown (the 3D view always is).
    pub shown: [bool; 6],
}

/// The layout changes to undo, newest last, and the layout as the last frame left it (to
/// see changes made from outside the tiles: the View menu, a named layout, Reset layout).
#[derive(Default)]
pub struct LayoutHistory {
    undo: Vec<LayoutSnapshot>,
    last: Option<LayoutSnapshot>,
    /// A split was being dragged in the last frame (a drag is one change, not one a frame).
    resizing: bool,
}

impl LayoutHistory {
    /// Keeps `before` as the layout Ctrl+Z goes back to.
    pub fn push(&mut self, before: LayoutSnapshot) {
        if self.undo.last() == Some(&before) {
            return;
        }
        if self.undo.len() >= UNDO_DEPTH {
            self.undo.remove(0);
        }
        self.undo.push(before);
    }

    /// The layout before the last change, taken off the list.
    pub fn pop(&mut self) -> Option<LayoutSnapshot> {
        self.undo.pop()
    }

    /// How many changes can be undone.
    pub fn len(&self) -> usize {
        self.undo.len()
    }

    /// Whether there is nothing to undo.
    pub fn is_empty(&self) -> bool {
        self.undo.is_empty()
    }

    /// At the start of a frame: a layout changed since the last frame from outside the tiles
    /// is a change to undo.
    pub fn begin(&mut self, now: &LayoutSnapshot) {
        if let Some(last) = self.last.take()
            && last != *now
        {
            self.push(last);
        }
    }

    /// At the end of a frame: the layout as it is left, and whether a split is being
    /// dragged; returns whether this frame's resize is the start of a drag.
    pub fn end(&mut self, now: LayoutSnapshot, resizing: bool) -> bool {
        self.last = Some(now);
        let started = resizing && !self.resizing;
        self.resizing = resizing;
        started
    }

    /// Forgets everything (the other mode's layout is drawn now: its own changes only).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}
