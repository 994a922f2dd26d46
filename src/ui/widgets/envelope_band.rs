//! A decimated plot line drawn as one mesh: an `egui_plot` item ([`EnvelopeBand`]) that takes
//! the min/max pair of each pixel column of a signal's runs ([`Lines`] from
//! [`crate::model::history::EnvelopeCache::lines`]) and emits a single triangle strip per run.
//!
//! `egui_plot`'s `Line` draws such pairs as a band too (its `BandShape`, the column's min to
//! max widened by the stroke width, so a flat signal is still a line of that width), but gets
//! there by collecting the points into buckets and handing epaint a closed outline that epaint
//! feathers and triangulates as a general polygon: a large part of a frame with hours of
//! data in six plots. Here the outline is known to be a strip, so the triangles are written
//! directly: two vertices per column (the band's top and bottom) and two triangles between
//! neighbouring columns; with feathering on (`TessellationOptions::feathering`, off under a
//! software renderer), four per column, the outer two transparent and half the feathering
//! width outside the band, the inner two half of it inside (the offset grows with the edge's
//! slope so a steep edge is feathered as wide as a flat one), as epaint feathers a shape. A
//! run of a single column is drawn as a stroke-wide quad. Column x positions are clamped to
//! the plot's frame (the cache's first and last columns lie partly outside the window).
//! Two columns with samples that lie apart (columns without samples between them) are joined
//! by a stroke-wide line, not a band ([`bridge_empty_columns`]): nothing is painted where no
//! sample was (a band interpolated across them drew wedges over a signal at rest, issue 46).
//! A column is left out where both the band's top and its bottom pass within a tolerance
//! (a quarter of a pixel, as [`crate::ui::simplify`] allows a line) of the straight edges
//! drawn from the last column kept to the next one kept (checked against every column left
//! out, at most [`MAX_SKIP`] in a row, one pass): a flat or steadily changing band is a few
//! quads.
//!
//! Raw runs (zoomed in, every sample drawn) keep `egui_plot`'s `Line`.
//!
//! **Its own primitive.** epaint appends every mesh of a clip rectangle into one growing mesh,
//! and a band of a thousand columns appended after a plot's grid made that mesh reallocate
//! and copy itself (and touch fresh pages) every frame: half of a frame's tessellation. A
//! band drawn with a texture of its own ([`EnvelopeBand::texture`], a white pixel) starts a
//! primitive of its own instead, filled in one copy.
//!
//! A band given a [`BandMemo`] keeps its mesh there and draws the same mesh again (shared,
//! not rebuilt) while its lines (the same [`Arc`]), the plot's transform and the drawing
//! options are unchanged, the time axis having slid by less than [`SLIDE_TOLERANCE`] (an
//! eighth of a point) since it was built: a frame that changes no column's min/max builds no
//! mesh, even following the drawn time.

use std::sync::{Arc, Mutex};

use eframe::egui::{self, Color32, Mesh, Rect, Shape, pos2};
use egui_plot::{ItemId, PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotTransform};

use crate::model::history::Lines;

/// The steepest edge slope the feathering widens for (beyond it, a near-vertical edge of a
/// column only a pixel wide, the band's fill covers the feathering anyway).
const MAX_SLOPE_FACTOR: f32 = 4.0;

/// A column on screen: its x, the band's top and its bottom, points.
pub type Edge = (f32, f32, f32);

/// The most columns left out in a row.
pub const MAX_SKIP: usize = 256;

/// Decimated runs of one signal, or of several ([`EnvelopeBand::with`]: one mesh for all of
/// a lane's signals), as a band mesh (module documentation).
pub struct EnvelopeBand<'a> {
    base: PlotItemBase,
    id: ItemId,
    /// The signals, drawn in order.
    parts: Vec<Part>,
    width: f32,
    /// How far a band edge may pass from a column left out, points.
    tolerance: f32,
    bounds: PlotBounds,
    memo: Option<&'a BandMemo>,
    texture: egui::TextureId,
}

/// One signal of a band.
struct Part {
    /// The min/max pair of each column, run after run.
    lines: Arc<Lines>,
    /// Their smallest and largest value.
    range: (f64, f64),
    /// What the values are multiplied by when drawn (a unit's scale).
    scale: f64,
    colour: Color32,
}

/// Where a band keeps its mesh from frame to frame (module documentation): one per band
/// drawn, owned by whoever draws it.
#[derive(Debug, Default)]
pub struct BandMemo {
    held: Mutex<Option<Held>>,
    /// Meshes built through it.
    built: std::sync::atomic::AtomicU64,
}

/// A mesh and what it was built from.
#[derive(Debug)]
struct Held {
    /// Each part's lines, scale and colour.
    parts: Vec<(Arc<Lines>, f64, Color32)>,
    key: MeshKey,
    mesh: Arc<Mesh>,
}

/// Everything besides the parts a band's mesh depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MeshKey {
    frame: Rect,
    /// The plot's x range, its y range.
    x: (f64, f64),
    y: (f64, f64),
    feathering: f32,
    width: f32,
    tolerance: f32,
    texture: egui::TextureId,
}

/// How far a held mesh may lie from where a new one would be drawn, points: a plot that
/// follows the drawn time over a long window slides by a small part of a pixel each frame,
/// and its band is built again once the slide adds up to this.
pub const SLIDE_TOLERANCE: f32 = 0.125;

impl MeshKey {
    /// Whether a mesh built for `self` draws within [`SLIDE_TOLERANCE`] of one built for
    /// `new`: everything equal but the x range, which slid less than that (and kept its
    /// length within a hundredth of it).
    fn serves(&self, new: &Self) -> bool {
        let px = f64::from(new.frame.width()) / (new.x.1 - new.x.0);
        let slide = ((new.x.0 - self.x.0) * px).abs();
        let stretch = (((new.x.1 - new.x.0) - (self.x.1 - self.x.0)) * px).abs();
        let same = Self { x: new.x, ..*self } == *new;
        same && slide < f64::from(SLIDE_TOLERANCE) && stretch < f64::from(SLIDE_TOLERANCE) / 100.0
    }
}

impl BandMemo {
    /// Meshes built through this memo so far (a frame that reused the held one built none).
    pub fn built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The mesh held (the one last drawn through this memo).
    pub fn mesh(&self) -> Option<Arc<Mesh>> {
        self.held
            .lock()
            .ok()
            .and_then(|h| h.as_ref().map(|h| h.mesh.clone()))
    }

    /// Bytes the held mesh takes.
    pub fn memory_bytes(&self) -> usize {
        self.held.lock().map_or(0, |h| {
            h.as_ref().map_or(0, |h| {
                h.mesh.vertices.capacity() * std::mem::size_of::<egui::epaint::Vertex>()
                    + h.mesh.indices.capacity() * 4
            })
        })
    }
}

impl<'a> EnvelopeBand<'a> {
    /// The band of decimated `lines` (min/max pairs, each pair one column), in `colour`,
    /// widened by `width` points (the stroke width a `Line` would have), identified by `id`
    /// within its plot.
    pub fn new(
        lines: impl Into<Arc<Lines>>,
        colour: Color32,
        width: f32,
        id: impl std::hash::Hash,
    ) -> Self {
        let lines = lines.into();
        let (lo, hi) = lines
            .points
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p[1]), b.max(p[1]))
            });
        Self::with_range(lines, (lo, hi), colour, width, id)
    }

    /// [`Self::new`] for lines whose smallest and largest values are known (`range`, in the
    /// lines' own units).
    pub fn with_range(
        lines: impl Into<Arc<Lines>>,
        range: (f64, f64),
        colour: Color32,
        width: f32,
        id: impl std::hash::Hash,
    ) -> Self {
        let mut band = Self {
            base: PlotItemBase::new(String::new()),
            id: ItemId::new(id),
            parts: vec![Part {
                lines: lines.into(),
                range,
                scale: 1.0,
                colour,
            }],
            width,
            tolerance: 0.0,
            bounds: PlotBounds::NOTHING,
            memo: None,
            texture: egui::TextureId::default(),
        };
        band.bounds = band.bounds_of_parts();
        band
    }

    /// The plot bounds of every part's values as drawn.
    fn bounds_of_parts(&self) -> PlotBounds {
        let mut bounds = PlotBounds::NOTHING;
        for p in &self.parts {
            if let (Some(first), Some(last)) = (p.lines.points.first(), p.lines.points.last()) {
                let (a, b) = (p.range.0 * p.scale, p.range.1 * p.scale);
                bounds.extend_with(&egui_plot::PlotPoint::new(first[0], a.min(b)));
                bounds.extend_with(&egui_plot::PlotPoint::new(last[0], a.max(b)));
            }
        }
        bounds
    }

    /// Draws the values multiplied by `scale` (a unit's; 1 by default), every signal's so
    /// far.
    pub fn scale(mut self, scale: f64) -> Self {
        for p in &mut self.parts {
            p.scale = scale;
        }
        self.bounds = self.bounds_of_parts();
        self
    }

    /// Draws `other`'s signals too, after these, in the same mesh (each in its colour and
    /// scale; this band's width, tolerance, texture and memo).
    pub fn with(mut self, other: EnvelopeBand<'_>) -> Self {
        self.parts.extend(other.parts);
        self.bounds = self.bounds_of_parts();
        self
    }

    /// Draws with `texture`, whose every texel must be white (the font atlas by default, its
    /// white corner): a texture of the band's own gives it its own primitive (module
    /// documentation).
    pub fn texture(mut self, texture: egui::TextureId) -> Self {
        self.texture = texture;
        self
    }

    /// Keeps the mesh in `memo` and draws it again while nothing it depends on changed
    /// (module documentation).
    pub fn memo(mut self, memo: &'a BandMemo) -> Self {
        self.memo = Some(memo);
        self
    }

    /// Leaves out columns the band passes within `tolerance` points of (module
    /// documentation); 0, the default, keeps every column.
    pub fn tolerance(mut self, tolerance: f32) -> Self {
        self.tolerance = tolerance.max(0.0);
        self
    }

    /// The mesh drawn through `transform`, feathered `feathering` points wide (0: none).
    pub fn mesh(&self, transform: &PlotTransform, feathering: f32) -> Mesh {
        let frame = *transform.frame();
        let bounds = transform.bounds();
        // The transform is affine: two evaluations per axis instead of one call per value.
        let (x0, y0) = (bounds.min()[0], bounds.min()[1]);
        let (x1, y1) = (bounds.max()[0], bounds.max()[1]);
        let sx0 = f64::from(transform.position_from_point_x(x0));
        let sy0 = f64::from(transform.position_from_point_y(y0));
        let kx = (f64::from(transform.position_from_point_x(x1)) - sx0) / (x1 - x0);
        let ky = (f64::from(transform.position_from_point_y(y1)) - sy0) / (y1 - y0);
        let map = Affine {
            sx: sx0 - x0 * kx,
            kx,
            sy: sy0 - y0 * ky,
            ky,
            frame,
        };
        let mut mesh = Mesh::default();
        // Room for every part at once (a reservation per part reallocated the mesh per part).
        let per = if feathering > 0.0 { 4 } else { 2 };
        let (columns, runs) = self.parts.iter().fold((0, 0), |(c, r), p| {
            (c + p.lines.points.len() / 2, r + p.lines.breaks.len() + 1)
        });
        mesh.reserve_vertices(per * (columns + runs));
        mesh.reserve_triangles(3 * per * columns);
        let mut scratch = (Vec::new(), Vec::new());
        for part in &self.parts {
            self.part_mesh(part, &map, feathering, &mut mesh, &mut scratch);
        }
        // Every vertex samples the white corner (uv 0, 0) of the font atlas or, on a texture
        // of the band's own, its one white texel.
        mesh.texture_id = self.texture;
        mesh
    }

    /// Appends `part`'s strips to `mesh` through `map`, `scratch` reused from part to part.
    fn part_mesh(
        &self,
        part: &Part,
        map: &Affine,
        feathering: f32,
        mesh: &mut Mesh,
        (edges, kept): &mut (Vec<Edge>, Vec<Edge>),
    ) {
        let Affine {
            sx,
            kx,
            sy,
            ky,
            frame,
        } = *map;
        // A value `v` of the lines is drawn at `v · scale` on the plot: at `sy + v · ky`.
        let ky = ky * part.scale;
        let mut bridged = Vec::new();
        for run in part.lines.runs() {
            edges.clear();
            for pair in run.chunks_exact(2) {
                let x = ((sx + pair[0][0] * kx) as f32).clamp(frame.left(), frame.right());
                let a = (sy + pair[0][1] * ky) as f32;
                let b = (sy + pair[1][1] * ky) as f32;
                let centre = 0.5 * (a + b);
                let half = 0.5 * ((b - a).abs() + self.width);
                edges.push((x, centre - half, centre + half));
            }
            if let [(x, top, bottom)] = edges[..] {
                // One column: a stroke-wide quad.
                let w = 0.5 * self.width;
                edges.clear();
                edges.extend([(x - w, top, bottom), (x + w, top, bottom)]);
            } else {
                bridge_empty_columns(edges, self.width, &mut bridged);
                std::mem::swap(edges, &mut bridged);
            }
            let drawn = if self.tolerance > 0.0 {
                reduce(edges, self.tolerance, kept);
                &kept[..]
            } else {
                &edges[..]
            };
            strip(drawn, part.colour, feathering, mesh);
        }
    }
}

/// The most two neighbouring columns may lie apart, points, for the band between them to be
/// drawn as a band (columns are a point apart or less: more means columns without samples
/// lie between them).
pub const ADJACENT_PX: f32 = 1.5;

/// `edges` (`(x, top, bottom)` of each column with samples, x increasing) into `out`, with
/// every stretch of columns without samples between two columns drawn as a stroke-wide line
/// (`width` points) instead of a band: a band interpolated across empty columns would paint
/// values that no sample had (a wedge from a column that spans a motion's start or end to
/// the next sample, seconds later, of a signal reported on change). Each column keeps its
/// band over half a point either side; the line goes from the first column's value nearest
/// the next one's to the next one's value nearest the first's (exact for columns of one
/// sample, the usual case where columns lie apart).
pub fn bridge_empty_columns(edges: &[Edge], width: f32, out: &mut Vec<Edge>) {
    out.clear();
    let w = 0.5 * width;
    let centre = |e: &Edge| 0.5 * (e.1 + e.2);
    for (i, &e) in edges.iter().enumerate() {
        out.push(e);
        let Some(&next) = edges.get(i + 1) else {
            continue;
        };
        if next.0 - e.0 <= ADJACENT_PX {
            continue;
        }
        // The band's values, without the stroke's widening.
        let (lo, hi) = (e.1 + w, (e.2 - w).max(e.1 + w));
        let (next_lo, next_hi) = (next.1 + w, (next.2 - w).max(next.1 + w));
        let from = centre(&next).clamp(lo, hi);
        let to = centre(&e).clamp(next_lo, next_hi);
        let (x0, x1) = (e.0 + 0.5, next.0 - 0.5);
        out.extend([
            (x0, e.1, e.2),
            (x0, from - w, from + w),
            (x1, to - w, to + w),
            (x1, next.1, next.2),
        ]);
    }
}

/// Plot values to screen points: `x` at `sx + x·kx` (clamped to `frame`), `y` at `sy + y·ky`.
#[derive(Debug, Clone, Copy)]
struct Affine {
    sx: f64,
    kx: f64,
    sy: f64,
    ky: f64,
    frame: Rect,
}

/// Appends the strip through the columns `(x, top, bottom)` (screen points) in `colour`.
fn strip(edges: &[(f32, f32, f32)], colour: Color32, feathering: f32, mesh: &mut Mesh) {
    let first = mesh.vertices.len() as u32;
    if feathering <= 0.0 {
        for &(x, top, bottom) in edges {
            mesh.colored_vertex(pos2(x, top), colour);
            mesh.colored_vertex(pos2(x, bottom), colour);
        }
        for i in 0..edges.len().saturating_sub(1) as u32 {
            let v = first + 2 * i;
            mesh.add_triangle(v, v + 1, v + 2);
            mesh.add_triangle(v + 1, v + 3, v + 2);
        }
        return;
    }
    let h = 0.5 * feathering;
    // How much an edge's vertical offset grows for its perpendicular width to be `h`.
    let factor = |i: usize, y: fn(&(f32, f32, f32)) -> f32| -> f32 {
        let a = &edges[i.saturating_sub(1)];
        let b = &edges[(i + 1).min(edges.len() - 1)];
        let dx = (b.0 - a.0).abs().max(f32::EPSILON);
        let slope = (y(b) - y(a)) / dx;
        (1.0 + slope * slope).sqrt().min(MAX_SLOPE_FACTOR)
    };
    for (i, &(x, top, bottom)) in edges.iter().enumerate() {
        let ht = h * factor(i, |e| e.1);
        let hb = h * factor(i, |e| e.2);
        let (mut inner_top, mut inner_bottom) = (top + ht, bottom - hb);
        let mut fill = colour;
        if inner_top > inner_bottom {
            // Thinner than the feathering: meet in the middle, fade as epaint does.
            let middle = 0.5 * (top + bottom);
            inner_top = middle;
            inner_bottom = middle;
            fill = colour.gamma_multiply(((bottom - top) / (ht + hb)).clamp(0.0, 1.0));
        }
        mesh.colored_vertex(pos2(x, top - ht), Color32::TRANSPARENT);
        mesh.colored_vertex(pos2(x, inner_top), fill);
        mesh.colored_vertex(pos2(x, inner_bottom), fill);
        mesh.colored_vertex(pos2(x, bottom + hb), Color32::TRANSPARENT);
    }
    for i in 0..edges.len().saturating_sub(1) as u32 {
        let v = first + 4 * i;
        for r in 0..3 {
            let (a, b) = (v + r, v + r + 1);
            mesh.add_triangle(a, b, a + 4);
            mesh.add_triangle(b, b + 4, a + 4);
        }
    }
}

/// The columns of `edges` (`(x, top, bottom)`, x increasing) to draw into `out`: the first,
/// the last, and each one without which some column between its neighbours kept would be
/// more than `tolerance` from the straight top or bottom edge drawn past it. One pass: the
/// slopes from the last column kept that pass within `tolerance` of every column skipped
/// since are kept as an interval per edge (the sleeve method of [`crate::ui::simplify`]).
fn reduce(edges: &[(f32, f32, f32)], tolerance: f32, out: &mut Vec<(f32, f32, f32)>) {
    out.clear();
    let n = edges.len();
    if n <= 2 {
        out.extend_from_slice(edges);
        return;
    }
    let mut a = 0;
    out.push(edges[0]);
    while a + 1 < n {
        let p = edges[a];
        let (mut top_lo, mut top_hi) = (f32::NEG_INFINITY, f32::INFINITY);
        let (mut bottom_lo, mut bottom_hi) = (f32::NEG_INFINITY, f32::INFINITY);
        let mut b = a + 1;
        while b + 1 < n && b - a <= MAX_SKIP {
            // Column `b` would be skipped: the slopes that pass within the tolerance of it.
            let c = edges[b];
            let dx = c.0 - p.0;
            let q = edges[b + 1];
            let qx = q.0 - p.0;
            if dx <= 0.0 || qx <= 0.0 {
                break;
            }
            top_lo = top_lo.max((c.1 - tolerance - p.1) / dx);
            top_hi = top_hi.min((c.1 + tolerance - p.1) / dx);
            bottom_lo = bottom_lo.max((c.2 - tolerance - p.2) / dx);
            bottom_hi = bottom_hi.min((c.2 + tolerance - p.2) / dx);
            let (top, bottom) = ((q.1 - p.1) / qx, (q.2 - p.2) / qx);
            if !(top_lo..=top_hi).contains(&top) || !(bottom_lo..=bottom_hi).contains(&bottom) {
                break;
            }
            b += 1;
        }
        out.push(edges[b]);
        a = b;
    }
}

impl EnvelopeBand<'_> {
    /// The mesh drawn through `transform`, feathered `feathering` points wide: the memo's
    /// when it was built from the same parts and options for a transform within
    /// [`SLIDE_TOLERANCE`] of this one, else a new one (kept in the memo).
    pub fn drawn_mesh(&self, transform: &PlotTransform, feathering: f32) -> Arc<Mesh> {
        let (min, max) = (transform.bounds().min(), transform.bounds().max());
        let key = MeshKey {
            frame: *transform.frame(),
            x: (min[0], max[0]),
            y: (min[1], max[1]),
            feathering,
            width: self.width,
            tolerance: self.tolerance,
            texture: self.texture,
        };
        let Some(mut held) = self.memo.and_then(|m| m.held.lock().ok()) else {
            return Arc::new(self.mesh(transform, feathering));
        };
        if let Some(h) = held.as_ref()
            && h.key.serves(&key)
            && h.parts.len() == self.parts.len()
            && h.parts
                .iter()
                .zip(&self.parts)
                .all(|((lines, scale, colour), p)| {
                    Arc::ptr_eq(lines, &p.lines)
                        && scale.to_bits() == p.scale.to_bits()
                        && *colour == p.colour
                })
        {
            return h.mesh.clone();
        }
        let mesh = Arc::new(self.mesh(transform, feathering));
        if let Some(memo) = self.memo {
            memo.built
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        *held = Some(Held {
            parts: self
                .parts
                .iter()
                .map(|p| (p.lines.clone(), p.scale, p.colour))
                .collect(),
            key,
            mesh: mesh.clone(),
        });
        mesh
    }
}

impl PlotItem for EnvelopeBand<'_> {
    fn shapes(&self, ui: &egui::Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let options = ui.ctx().tessellation_options(|o| *o);
        let feathering = if options.feathering {
            options.feathering_size_in_pixels / ui.ctx().pixels_per_point()
        } else {
            0.0
        };
        let mesh = self.drawn_mesh(transform, feathering);
        if !mesh.is_empty() {
            shapes.push(Shape::Mesh(mesh));
        }
    }

    fn initialize(&mut self, _x_range: std::ops::RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        self.parts
            .first()
            .map_or(Color32::TRANSPARENT, |p| p.colour)
    }

    fn allow_hover(&self) -> bool {
        false
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::None
    }

    fn bounds(&self) -> PlotBounds {
        self.bounds
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }

    fn id(&self) -> ItemId {
        self.id
    }
}
