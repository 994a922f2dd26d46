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
//! No point is dropped (no `simplify`): there is one pair per pixel column already.
//!
//! Raw runs (zoomed in, every sample drawn) keep `egui_plot`'s `Line`.

use eframe::egui::{self, Color32, Mesh, Shape, pos2};
use egui_plot::{ItemId, PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotTransform};

use crate::model::history::Lines;

/// The steepest edge slope the feathering widens for (beyond it, a near-vertical edge of a
/// column only a pixel wide, the band's fill covers the feathering anyway).
const MAX_SLOPE_FACTOR: f32 = 4.0;

/// One signal's decimated runs as a band mesh (module documentation).
pub struct EnvelopeBand {
    base: PlotItemBase,
    id: ItemId,
    /// Each column's middle time, min and max, run after run.
    columns: Vec<[f64; 3]>,
    /// Where each run after the first starts in `columns`.
    breaks: Vec<usize>,
    colour: Color32,
    width: f32,
    bounds: PlotBounds,
}

impl EnvelopeBand {
    /// The band of decimated `lines` (min/max pairs, each pair one column), in `colour`,
    /// widened by `width` points (the stroke width a `Line` would have), identified by `id`
    /// within its plot.
    pub fn new(lines: &Lines, colour: Color32, width: f32, id: impl std::hash::Hash) -> Self {
        let mut columns = Vec::with_capacity(lines.points.len() / 2);
        let mut bounds = PlotBounds::NOTHING;
        for pair in lines.points.chunks_exact(2) {
            let (lo, hi) = (pair[0][1].min(pair[1][1]), pair[0][1].max(pair[1][1]));
            columns.push([pair[0][0], lo, hi]);
            bounds.extend_with(&egui_plot::PlotPoint::new(pair[0][0], lo));
            bounds.extend_with(&egui_plot::PlotPoint::new(pair[0][0], hi));
        }
        Self {
            base: PlotItemBase::new(String::new()),
            id: ItemId::new(id),
            columns,
            breaks: lines.breaks.iter().map(|b| b / 2).collect(),
            colour,
            width,
            bounds,
        }
    }

    /// The runs of columns.
    fn runs(&self) -> impl Iterator<Item = &[[f64; 3]]> {
        let starts = std::iter::once(0).chain(self.breaks.iter().copied());
        let ends = self
            .breaks
            .iter()
            .copied()
            .chain(std::iter::once(self.columns.len()));
        starts
            .zip(ends)
            .map(|(a, b)| &self.columns[a..b])
            .filter(|r| !r.is_empty())
    }

    /// The mesh drawn through `transform`, feathered `feathering` points wide (0: none).
    pub fn mesh(&self, transform: &PlotTransform, feathering: f32) -> Mesh {
        let frame = *transform.frame();
        let mut mesh = Mesh::default();
        let per = if feathering > 0.0 { 4 } else { 2 };
        mesh.reserve_vertices(per * (self.columns.len() + self.breaks.len() + 1));
        mesh.reserve_triangles(3 * per * self.columns.len());
        let mut edges: Vec<(f32, f32, f32)> = Vec::new();
        for run in self.runs() {
            edges.clear();
            for c in run {
                let x = transform
                    .position_from_point_x(c[0])
                    .clamp(frame.left(), frame.right());
                let a = transform.position_from_point_y(c[2]);
                let b = transform.position_from_point_y(c[1]);
                let centre = 0.5 * (a + b);
                let half = 0.5 * ((b - a).abs() + self.width);
                edges.push((x, centre - half, centre + half));
            }
            if let [(x, top, bottom)] = edges[..] {
                // One column: a stroke-wide quad.
                let w = 0.5 * self.width;
                edges = vec![(x - w, top, bottom), (x + w, top, bottom)];
            }
            self.strip(&edges, feathering, &mut mesh);
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
