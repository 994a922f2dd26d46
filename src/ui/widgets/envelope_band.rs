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
//! A column is left out where both the band's top and its bottom pass within a tolerance
//! (a quarter of a pixel, as [`crate::ui::simplify`] allows a line) of the straight edges
//! drawn from the last column kept to the next one kept (checked against every column left
//! out, at most [`MAX_SKIP`] in a row, one pass): a flat or steadily changing band is a few
//! quads.
//!
//! Raw runs (zoomed in, every sample drawn) keep `egui_plot`'s `Line`.

use eframe::egui::{self, Color32, Mesh, Shape, pos2};
use egui_plot::{ItemId, PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotTransform};

use crate::model::history::Lines;

/// The steepest edge slope the feathering widens for (beyond it, a near-vertical edge of a
/// column only a pixel wide, the band's fill covers the feathering anyway).
const MAX_SLOPE_FACTOR: f32 = 4.0;

/// The most columns left out in a row.
pub const MAX_SKIP: usize = 256;

/// One signal's decimated runs as a band mesh (module documentation).
pub struct EnvelopeBand {
    base: PlotItemBase,
    id: ItemId,
    /// The min/max pair of each column, run after run.
    lines: Lines,
    colour: Color32,
    width: f32,
    /// How far a band edge may pass from a column left out, points.
    tolerance: f32,
    bounds: PlotBounds,
}

impl EnvelopeBand {
    /// The band of decimated `lines` (min/max pairs, each pair one column), in `colour`,
    /// widened by `width` points (the stroke width a `Line` would have), identified by `id`
    /// within its plot.
    pub fn new(lines: Lines, colour: Color32, width: f32, id: impl std::hash::Hash) -> Self {
        let mut bounds = PlotBounds::NOTHING;
        if let (Some(first), Some(last)) = (lines.points.first(), lines.points.last()) {
            let (lo, hi) = lines
                .points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p[1]), b.max(p[1]))
                });
            bounds.extend_with(&egui_plot::PlotPoint::new(first[0], lo));
            bounds.extend_with(&egui_plot::PlotPoint::new(last[0], hi));
        }
        Self {
            base: PlotItemBase::new(String::new()),
            id: ItemId::new(id),
            lines,
            colour,
            width,
            tolerance: 0.0,
            bounds,
        }
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
        let columns = self.lines.points.len() / 2;
        let mut mesh = Mesh::default();
        let per = if feathering > 0.0 { 4 } else { 2 };
        mesh.reserve_vertices(per * (columns + self.lines.breaks.len() + 1));
        mesh.reserve_triangles(3 * per * columns);
        let mut edges: Vec<(f32, f32, f32)> = Vec::with_capacity(columns.min(4096));
        let mut kept: Vec<(f32, f32, f32)> = Vec::with_capacity(columns.min(4096));
        for run in self.lines.runs() {
            edges.clear();
            for pair in run.chunks_exact(2) {
                let x = ((sx0 + (pair[0][0] - x0) * kx) as f32).clamp(frame.left(), frame.right());
                let a = (sy0 + (pair[0][1] - y0) * ky) as f32;
                let b = (sy0 + (pair[1][1] - y0) * ky) as f32;
                let centre = 0.5 * (a + b);
                let half = 0.5 * ((b - a).abs() + self.width);
                edges.push((x, centre - half, centre + half));
            }
            if let [(x, top, bottom)] = edges[..] {
                // One column: a stroke-wide quad.
                let w = 0.5 * self.width;
                edges = vec![(x - w, top, bottom), (x + w, top, bottom)];
            }
            let drawn = if self.tolerance > 0.0 {
                reduce(&edges, self.tolerance, &mut kept);
                &kept
            } else {
                &edges
            };
            self.strip(drawn, feathering, &mut mesh);
        }
        mesh
    }

    /// Appends the strip through the columns `(x, top, bottom)` (screen points).
    fn strip(&self, edges: &[(f32, f32, f32)], feathering: f32, mesh: &mut Mesh) {
        let colour = self.colour;
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

impl PlotItem for EnvelopeBand {
    fn shapes(&self, ui: &egui::Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let options = ui.ctx().tessellation_options(|o| *o);
        let feathering = if options.feathering {
            options.feathering_size_in_pixels / ui.ctx().pixels_per_point()
        } else {
            0.0
        };
        let mesh = self.mesh(transform, feathering);
        if !mesh.is_empty() {
            shapes.push(Shape::mesh(mesh));
        }
    }

    fn initialize(&mut self, _x_range: std::ops::RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        self.colour
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
