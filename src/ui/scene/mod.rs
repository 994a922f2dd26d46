//! The 3D arm view: bounding cylinders, links, joints, tool point, frames and a ground grid,
//! drawn with three-d's core (programs from `shaders/`) inside an egui paint callback.
//!
//! Three parts, as in egui's `custom_3d_glow` example:
//! - [`SceneInput`] and [`Camera`]: plain data, what to draw and from where;
//! - [`Scene`]: the GPU side (compiled programs, unit meshes), made once from a
//!   [`three_d::Context`] and kept behind `Arc<Mutex<..>>` because the callback must be
//!   `Send + Sync`; [`Scene::render`] draws into whatever framebuffer is bound, which lets the
//!   offscreen test render exactly what the window shows;
//! - [`ArmView`]: the egui widget (allocate, orbit/pan/zoom, paint callback).
//!
//! **Frames.** Inputs are in the vehicle frame (+x front, +y right, +z down, metres). The scene
//! is drawn in a *world* frame with z up: world = (x, −y, −z), i.e. the vehicle frame turned
//! 180° about its x axis (a rotation, so handedness and the arm's shape are kept). The ground
//! grid is the vehicle's z = 0 plane. [`Camera`] angles are measured in the world frame.
//!
//! **The vehicle.** The focused arm ([`SceneInput::pose`]) is drawn in full colour; the
//! other arms of its subsystem ([`SceneInput::others`]) at their own mounts, dimmed toward the
//! background, each with its limits tint, and grey when its link is lost.
//!
//! **Draw order.** The ground grid first, blended over the background (so the view's ground
//! can be kept as a picture of its own and copied under a moving arm: [`Scene::paint_cached`]);
//! then the opaque parts (links, joints, triads) write depth; every translucent part
//! (bounding volumes, the ghost arm) is blended back to front without writing depth; the live
//! tool-point marker is drawn last, over everything, so the operator never loses it inside a
//! bounding volume. A part below the ground is drawn over the grid, not under it. The window
//! needs a depth buffer: `NativeOptions { depth_buffer: 24, .. }`.

pub mod cache;
mod camera;
mod draw;
mod mesh;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use eframe::egui;
use eframe::egui_glow;
use glam::{DMat3, DMat4, DVec3};
use three_d::{
    Blend, ClearState, Context, Cull, DepthTest, ElementBuffer, Mat3, Mat4, Program, RenderStates,
    RenderTarget, ScissorBox, Vec3, Vec4, VertexBuffer, Viewport, WriteMask,
};

use crate::model::clearance::Zone;
use crate::model::clearance::obstacles::ObstacleShape;
use crate::model::kinematics::ArmPose;
use crate::model::update::ComponentId;
use crate::ui::gl_ffi::GlPicture;
pub use crate::ui::theme::ScenePalette;
pub use camera::Camera;
use draw::{DrawList, Item, Shape, Style, rgba};
use mesh::{CpuMesh, unit_cube, unit_cylinder, unit_sphere};

const MESH_VERT: &str = include_str!("../../../shaders/mesh.vert");
const SOLID_FRAG: &str = include_str!("../../../shaders/solid.frag");
const VOLUME_FRAG: &str = include_str!("../../../shaders/volume.frag");
const GRID_VERT: &str = include_str!("../../../shaders/grid.vert");
const GRID_FRAG: &str = include_str!("../../../shaders/grid.frag");

/// What to draw this frame (all geometry in the VEHICLE frame, metres: +x front, +y right,
/// +z down).
#[derive(Debug, Clone, PartialEq)]
pub struct SceneInput {
    /// The live arm (from `model::kinematics::forward`). With neither a pose nor a ghost only
    /// the grid is drawn.
    pub pose: Option<ArmPose>,
    /// A preset being previewed, drawn as a translucent ghost arm.
    pub ghost: Option<ArmPose>,
    /// Per joint (joint 1 first), 0..1: how close to a limit. Tints that joint's bounding
    /// cylinders amber, then red. Missing entries count as 0.
    pub joint_warning: Vec<f32>,
    /// Radius for cylinders whose specification gives none, m; those are drawn banded so they
    /// cannot be mistaken for reported radii.
    pub default_radius: f64,
    /// Draw each joint axis (z of each joint frame) as a thin line.
    pub show_axes: bool,
    /// Draw an x/y/z triad at each joint frame.
    pub show_frames: bool,
    /// Dark theme.
    pub dark: bool,
    /// The other arms of the vehicle (the focused arm's subsystem), each at its mount, drawn
    /// dimmed beside the focused arm ([`SceneInput::pose`]), greyed when their link is lost.
    pub others: Vec<SceneArm>,
    /// The vehicle file's obstacles and ground, and the pairs near contact (issue 45).
    pub clearance: SceneClearance,
}

/// What the 3D view draws of clearance (issue 45), vehicle frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SceneClearance {
    /// The focused arm (the one [`SceneInput::pose`] draws), for [`SceneClearance::tinted`].
    pub focus: Option<ComponentId>,
    /// The ground's vehicle z, m (+z down), when the vehicle file gives one: the grid is
    /// drawn there and what of an arm is below it is striped.
    pub ground: Option<f64>,
    /// The vehicle file's obstacles, drawn translucent.
    pub obstacles: Vec<SceneObstacle>,
    /// Arm cylinders tinted by the zone of a pair they are in: the arm, the index into its
    /// pose's cylinders, the zone (amber inside the band or margin, red in contact).
    pub tinted: Vec<(ComponentId, usize, Zone)>,
    /// Lines between the closest points of the pairs shown.
    pub lines: Vec<GapLine>,
    /// Some arm reaches below the ground: the camera may orbit under it.
    pub below_ground: bool,
}

/// One obstacle of the vehicle file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneObstacle {
    /// Its shape, vehicle frame.
    pub shape: ObstacleShape,
    /// The zone of the nearest pair it is in, when one is shown.
    pub zone: Option<Zone>,
}

/// A line between the closest points of a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapLine {
    /// The point of the first part, vehicle frame, m.
    pub on_a: DVec3,
    /// The point of the other, m.
    pub on_b: DVec3,
    /// The surface gap, m (negative: overlapping).
    pub gap: f64,
    /// Where the pair stands.
    pub zone: Zone,
    /// Its gap is written beside it (the focused arm's nearest pair and pairs in contact:
    /// every pair's would pile up where an arm folds).
    pub label: bool,
}

/// An arm drawn beside the focused one.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneArm {
    /// Which arm.
    pub id: ComponentId,
    /// Where it is (vehicle frame, its mount included).
    pub pose: ArmPose,
    /// Per joint, 0..1: how close to a limit (as [`SceneInput::joint_warning`]).
    pub joint_warning: Vec<f32>,
    /// Its link is lost: what is drawn is its last known pose, greyed.
    pub lost: bool,
    /// Its preset poses (vehicle frame): where it can go, for framing the whole vehicle.
    pub presets: Vec<ArmPose>,
}

impl Default for SceneInput {
    fn default() -> Self {
        Self {
            others: Vec::new(),
            pose: None,
            ghost: None,
            joint_warning: Vec::new(),
            default_radius: 0.03,
            show_axes: false,
            show_frames: false,
            dark: true,
            clearance: SceneClearance::default(),
        }
    }
}

/// Why the GPU side of the scene could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A program in `shaders/` did not compile or link for this GL context.
    #[error("the 3D view's {program} shader does not compile on this OpenGL: {message}")]
    Shader {
        /// Which program: "solid", "volume" or "grid".
        program: &'static str,
        /// The driver's message.
        message: String,
    },
    /// three-d could not wrap the GL context.
    #[error("the 3D view cannot use this OpenGL context: {0}")]
    Context(String),
}

/// A unit mesh on the GPU.
struct GpuMesh {
    positions: VertexBuffer<[f32; 3]>,
    normals: VertexBuffer<[f32; 3]>,
    indices: ElementBuffer<u32>,
}

impl GpuMesh {
    fn new(context: &Context, mesh: &CpuMesh) -> Self {
        Self {
            positions: VertexBuffer::new_with_data(context, &mesh.positions),
            normals: VertexBuffer::new_with_data(context, &mesh.normals),
            indices: ElementBuffer::new_with_data(context, &mesh.indices),
        }
    }
}

fn mat4(m: DMat4) -> Mat4 {
    Mat4::from(m.as_mat4().to_cols_array_2d())
}

fn mat3(m: DMat3) -> Mat3 {
    Mat3::from(m.as_mat3().to_cols_array_2d())
}

fn vec3(v: DVec3) -> Vec3 {
    Vec3::from(v.as_vec3().to_array())
}

const OPAQUE: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR_AND_DEPTH,
    depth_test: DepthTest::Less,
    blend: Blend::Disabled,
    cull: Cull::Back,
};

const TRANSLUCENT: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::Less,
    blend: Blend::TRANSPARENCY,
    cull: Cull::Back,
};

const GRID: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::LessOrEqual,
    blend: Blend::TRANSPARENCY,
    cull: Cull::None,
};

const OVERLAY: RenderStates = RenderStates {
    write_mask: WriteMask::COLOR,
    depth_test: DepthTest::Always,
    blend: Blend::Disabled,
    cull: Cull::Back,
};

/// The view's last picture (a framebuffer of the viewport's size, in the scene's context) and
/// what it shows (the caller's number).
struct Picture {
    frame: GlPicture,
    generation: u64,
}

/// The view's ground (the background and the grid, which depend only on the camera, the
/// size and the theme), kept while those stay: a moving arm is drawn over a copy of it, so
/// the grid's shader (about a third of a render under a software renderer) runs only when
/// the camera moves.
struct Ground {
    frame: GlPicture,
    camera: Camera,
    dark: bool,
}

/// The GPU side: created once from the GL context (its programs and buffers belong to it);
/// kept in `Arc<Mutex<..>>` for the paint callback.
pub struct Scene {
    context: Context,
    solid: Program,
    volume: Program,
    grid: Program,
    cylinder: GpuMesh,
    sphere: GpuMesh,
    cube: GpuMesh,
    square: GpuMesh,
    /// The last picture rendered by [`Scene::paint_cached`].
    picture: Option<Picture>,
    /// The ground under it.
    ground: Option<Ground>,
    /// Grounds rendered.
    ground_renders: u64,
    /// Pictures rendered (the view is drawn more often: from its picture).
    renders: u64,
}

impl Scene {
    /// Compiles the programs in `shaders/` and uploads the unit meshes.
    pub fn new(context: &Context) -> Result<Self, SceneError> {
        let program = |name, vertex, fragment| {
            Program::from_source(context, vertex, fragment).map_err(|e| SceneError::Shader {
                program: name,
                message: e.to_string(),
            })
        };
        let square = CpuMesh {
            positions: vec![
                [-1.0, -1.0, 0.0],
                [1.0, -1.0, 0.0],
                [1.0, 1.0, 0.0],
                [-1.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            indices: vec![0, 1, 2, 0, 2, 3],
        };
        Ok(Self {
            context: context.clone(),
            solid: program("solid", MESH_VERT, SOLID_FRAG)?,
            volume: program("volume", MESH_VERT, VOLUME_FRAG)?,
            grid: program("grid", GRID_VERT, GRID_FRAG)?,
            picture: None,
            ground: None,
            ground_renders: 0,
            renders: 0,
            cylinder: GpuMesh::new(context, &unit_cylinder(32)),
            sphere: GpuMesh::new(context, &unit_sphere(32, 16)),
            cube: GpuMesh::new(context, &unit_cube()),
            square: GpuMesh::new(context, &square),
        })
    }

    /// The context the scene was made in; draw only into framebuffers of this context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The colour [`Scene::paint`] clears to.
    pub fn clear_state(dark: bool) -> ClearState {
        let [r, g, b] = ScenePalette::new(dark).background;
        ClearState::color_and_depth(r, g, b, 1.0, 1.0)
    }

    /// Clears `clip` ∩ `viewport` of `target` and renders `input` into it: what the egui
    /// callback does with the window (`RenderTarget::screen`) and the test with a texture.
    pub fn paint(
        &mut self,
        target: &RenderTarget<'_>,
        viewport: Viewport,
        clip: ScissorBox,
        input: &SceneInput,
        camera: &Camera,
    ) {
        let scissor = clip.intersection(viewport);
        if scissor.width == 0 || scissor.height == 0 {
            return;
        }
        target.clear_partially(scissor, Self::clear_state(input.dark));
        let Ok(_) = target.write_partially::<std::convert::Infallible>(scissor, || {
            self.render(viewport, input, camera);
            Ok(())
        });
    }

    /// As [`Scene::paint`], through the view's picture: when the picture is not of
    /// `generation` (the caller numbers what it shows and counts up on a visible change,
    /// [`cache::visibly_changed`]) or not of the viewport's size, the scene is rendered into
    /// the picture first; then the picture is copied into `clip` ∩
    /// `viewport` of `target`. Under a software renderer the copy costs a fraction of a render.
    pub fn paint_cached(
        &mut self,
        target: &RenderTarget<'_>,
        viewport: Viewport,
        clip: ScissorBox,
        input: &SceneInput,
        camera: &Camera,
        generation: u64,
    ) {
        let scissor = clip.intersection(viewport);
        if scissor.width == 0 || scissor.height == 0 {
            return;
        }
        let (width, height) = (viewport.width, viewport.height);
        let picture = match self.picture.take() {
            Some(p) if p.frame.size() == (width, height) && p.generation == generation => p,
            kept => {
                let frame = match kept.filter(|p| p.frame.size() == (width, height)) {
                    Some(p) => p.frame,
                    None => match GlPicture::new(&self.context, width, height) {
                        Ok(frame) => frame,
                        Err(e) => {
                            // Without a picture of its own the view is rendered every frame.
                            tracing::warn!("3D view drawn without its cached picture: {e}");
                            self.paint(target, viewport, clip, input, camera);
                            return;
                        }
                    },
                };
                let whole = Viewport::new_at_origo(width, height);
                let into = RenderTarget::from_framebuffer(
                    &self.context,
                    width,
                    height,
                    frame.framebuffer(),
                );
                let ground = self.ground_for(width, height, input.dark, camera);
                if let Some(ground) = ground {
                    ground.copy_into(&frame);
                    into.clear_partially(whole.into(), ClearState::depth(1.0));
                    let Ok(_) =
                        into.write_partially::<std::convert::Infallible>(whole.into(), || {
                            self.render_parts(whole, input, camera);
                            Ok(())
                        });
                } else {
                    self.paint(&into, whole, whole.into(), input, camera);
                }
                // The framebuffer is the picture's: three-d must not delete it.
                let _ = into.into_framebuffer();
                self.renders += 1;
                Picture { frame, generation }
            }
        };
        let Ok(_) = target.write_partially::<std::convert::Infallible>(scissor, || {
            picture.frame.blit(viewport.x, viewport.y);
            Ok(())
        });
        self.picture = Some(picture);
    }

    /// The picture of the background and grid of `camera` at `width` × `height` in the
    /// theme, rendered when the kept one shows another; `None` when the driver refuses a
    /// picture for it (then the view is rendered whole).
    fn ground_for(
        &mut self,
        width: u32,
        height: u32,
        dark: bool,
        camera: &Camera,
    ) -> Option<&GlPicture> {
        let kept = self.ground.as_ref().is_some_and(|g| {
            g.frame.size() == (width, height) && g.dark == dark && g.camera == *camera
        });
        if kept {
            return self.ground.as_ref().map(|g| &g.frame);
        }
        let frame = match self.ground.take() {
            Some(g) if g.frame.size() == (width, height) => g.frame,
            _ => match GlPicture::new(&self.context, width, height) {
                Ok(frame) => frame,
                Err(e) => {
                    tracing::warn!("3D view drawn without its ground picture: {e}");
                    return None;
                }
            },
        };
        let whole = Viewport::new_at_origo(width, height);
        let into =
            RenderTarget::from_framebuffer(&self.context, width, height, frame.framebuffer());
        into.clear_partially(whole.into(), Self::clear_state(dark));
        let Ok(_) = into.write_partially::<std::convert::Infallible>(whole.into(), || {
            self.draw_grid(camera, dark, whole);
            Ok(())
        });
        // The framebuffer is the picture's: three-d must not delete it.
        let _ = into.into_framebuffer();
        self.ground_renders += 1;
        let ground = self.ground.insert(Ground {
            frame,
            camera: *camera,
            dark,
        });
        Some(&ground.frame)
    }

    /// How many grounds (background and grid) [`Scene::paint_cached`] rendered: one per
    /// camera, size and theme, however often the arm moves.
    pub fn ground_renders(&self) -> u64 {
        self.ground_renders
    }

    /// How many pictures [`Scene::paint_cached`] rendered.
    pub fn renders(&self) -> u64 {
        self.renders
    }

    /// Renders `input` with `camera` into the currently bound framebuffer, in `viewport`
    /// (x, y, w, h in pixels, GL bottom-left origin). Clears nothing; the caller sets the
    /// scissor box (see [`Scene::paint`]).
    pub fn render(&mut self, viewport: Viewport, input: &SceneInput, camera: &Camera) {
        if viewport.width == 0 || viewport.height == 0 {
            return;
        }
        self.draw_grid(camera, input.dark, viewport);
        self.render_parts(viewport, input, camera);
    }

    /// Renders everything of `input` but the grid (see [`Scene::render`]).
    fn render_parts(&mut self, viewport: Viewport, input: &SceneInput, camera: &Camera) {
        if viewport.width == 0 || viewport.height == 0 {
            return;
        }
        let palette = ScenePalette::new(input.dark);
        let aspect = f64::from(viewport.width) / f64::from(viewport.height);
        let view_projection = camera.view_projection(aspect);
        let eye = camera.eye_world();
        // The tool point's marker keeps its size on screen, near or far.
        let marker = input.pose.as_ref().map(|p| {
            camera.metres_per_pixel_at(p.tool_point_vehicle.to_array(), f64::from(viewport.height))
                * Camera::MARKER_PX
        });
        let mut list = DrawList::build(input, &palette, marker);
        // What of an arm is below this world height is striped (no ground: nothing is).
        let below = Below {
            ground: input.clearance.ground.map_or(f32::MIN, |z| (-z) as f32),
            colour: palette.below_ground,
        };

        for item in &list.opaque {
            self.draw(item, view_projection, eye, OPAQUE, viewport, below);
        }
        // Back to front; each volume's far side before its near side.
        list.translucent.sort_by(|a, b| {
            b.centre
                .distance_squared(eye)
                .total_cmp(&a.centre.distance_squared(eye))
        });
        for item in &list.translucent {
            if matches!(item.style, Style::Volume { .. }) {
                let back = RenderStates {
                    cull: Cull::Front,
                    ..TRANSLUCENT
                };
                self.draw(item, view_projection, eye, back, viewport, below);
            }
            self.draw(item, view_projection, eye, TRANSLUCENT, viewport, below);
        }
        for item in &list.overlay {
            self.draw(item, view_projection, eye, OVERLAY, viewport, below);
        }
    }

    fn draw(
        &self,
        item: &Item,
        view_projection: DMat4,
        eye: DVec3,
        states: RenderStates,
        viewport: Viewport,
        below: Below,
    ) {
        let program = match item.style {
            Style::Solid { color, lit } => {
                let p = &self.solid;
                p.use_uniform("u_color", Vec4::from(color));
                p.use_uniform("u_lit", if lit { 1.0f32 } else { 0.0 });
                p
            }
            Style::Volume {
                color,
                rim_alpha,
                dash_period,
            } => {
                let p = &self.volume;
                p.use_uniform("u_color", Vec4::from(color));
                p.use_uniform("u_rim_alpha", rim_alpha);
                p.use_uniform("u_dashed", if dash_period.is_some() { 1.0f32 } else { 0.0 });
                let bands = dash_period.map_or(1.0, |d| item.local_z_metres / d.max(1e-6));
                p.use_uniform("u_dash_count", bands as f32);
                p
            }
        };
        program.use_uniform("u_view_projection", mat4(view_projection));
        program.use_uniform("u_model", mat4(item.model));
        program.use_uniform("u_normal_matrix", mat3(item.normal_matrix));
        program.use_uniform("u_eye", vec3(eye));
        let ground = if item.striped_below {
            below.ground
        } else {
            f32::MIN
        };
        program.use_uniform("u_ground", ground);
        program.use_uniform("u_below_color", Vec3::from(below.colour));
        let mesh = match item.shape {
            Shape::Cylinder => &self.cylinder,
            Shape::Sphere => &self.sphere,
            Shape::Box => &self.cube,
        };
        program.use_vertex_attribute("a_position", &mesh.positions);
        program.use_vertex_attribute("a_normal", &mesh.normals);
        program.draw_elements(states, viewport, &mesh.indices);
    }

    /// The ground grid of `camera` in `viewport`, blended over what is there.
    fn draw_grid(&self, camera: &Camera, dark: bool, viewport: Viewport) {
        let aspect = f64::from(viewport.width) / f64::from(viewport.height);
        let view_projection = camera.view_projection(aspect);
        let palette = ScenePalette::new(dark);
        let distance = camera.distance.max(0.01);
        // Minor lines a power of ten apart, about a tenth of the view.
        let spacing = 10f64.powf(distance.log10().floor()) / 10.0;
        let centre = camera.target_world();
        let p = &self.grid;
        p.use_uniform("u_view_projection", mat4(view_projection));
        p.use_uniform(
            "u_center",
            three_d::Vec2::new(centre.x as f32, centre.y as f32),
        );
        p.use_uniform("u_extent", (distance * 12.0).max(5.0) as f32);
        p.use_uniform("u_ground", camera.ground as f32);
        p.use_uniform("u_eye", vec3(camera.eye_world()));
        p.use_uniform("u_spacing", spacing as f32);
        p.use_uniform("u_fade_distance", (distance * 4.0).max(2.0) as f32);
        p.use_uniform("u_minor_color", Vec4::from(palette.grid_minor));
        p.use_uniform("u_major_color", Vec4::from(palette.grid_major));
        p.use_uniform("u_x_axis_color", Vec4::from(rgba(palette.x_axis, 0.8)));
        p.use_uniform("u_y_axis_color", Vec4::from(rgba(palette.y_axis, 0.8)));
        p.use_vertex_attribute("a_position", &self.square.positions);
        p.draw_elements(GRID, viewport, &self.square.indices);
    }
}

/// Where the ground is for the shaders' stripes under it: world z (`f32::MIN`: none) and the
/// stripes' colour.
#[derive(Debug, Clone, Copy)]
struct Below {
    ground: f32,
    colour: [f32; 3],
}

/// How the view is painted: through its picture ([`Scene::paint_cached`]), or, for measuring
/// what the 3D view costs (ARCHITECTURE.md, "Where a frame's time goes"), as the environment
/// variable `JAUS_OCU_3D` asks: `direct` renders every frame into the window (as before the
/// picture), `off` paints nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaintMode {
    /// Through the picture (the default).
    Cached,
    /// Rendered into the window every frame.
    Direct,
    /// Not painted.
    Off,
}

impl PaintMode {
    /// The mode `JAUS_OCU_3D` asks for (read once).
    pub fn from_env() -> Self {
        static MODE: OnceLock<PaintMode> = OnceLock::new();
        *MODE.get_or_init(|| match std::env::var("JAUS_OCU_3D").as_deref() {
            Ok("direct") => PaintMode::Direct,
            Ok("off") => PaintMode::Off,
            _ => PaintMode::Cached,
        })
    }
}

/// GPU state shared with the paint callback.
enum Gpu {
    /// Not made yet (no frame painted).
    Pending,
    /// Ready to draw.
    Ready(Box<Scene>),
    /// Could not be made; the message is shown in place of the view.
    Failed(String),
}

/// The 3D arm view widget: allocates the rect, handles orbit (drag), pan (right/middle drag
/// or shift+drag), zoom (scroll, pinch or ctrl+scroll); paints through
/// an `egui::PaintCallback` with `egui_glow::CallbackFn`. The camera is the caller's (it
/// outlives the GPU side: see [`ArmView::new`]).
pub struct ArmView {
    scene: Arc<Mutex<Gpu>>,
    /// What the view's picture shows (see [`cache`]), numbered: the paint callback renders
    /// the picture again when its number differs (a frame whose callback never ran, a
    /// discarded pass, cannot leave an old picture on the screen).
    rendered: Option<Arc<(u64, cache::Rendered)>>,
    /// The last frame asked for a new picture.
    changed: bool,
}

impl Default for ArmView {
    fn default() -> Self {
        Self::new()
    }
}

impl ArmView {
    /// Orbit radians per dragged point.
    const ORBIT_PER_POINT: f64 = 0.008;

    /// A view whose GPU side is made on the first paint (in the GL context that paints it;
    /// replacing the view with a new one frees it).
    pub fn new() -> Self {
        Self {
            scene: Arc::new(Mutex::new(Gpu::Pending)),
            rendered: None,
            changed: false,
        }
    }

    /// Whether the last frame drawn changed what the view shows visibly (a pose moved by
    /// more than [`cache::VISIBLE_PX`], the camera, the size, ...): the picture was rendered
    /// again. While it is, the arm or the camera moves and the window is drawn at the frame
    /// rate; otherwise the view costs a copy of its picture.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// Pictures rendered so far (0 before the first paint, or without a GL context).
    pub fn renders(&self) -> u64 {
        match &*self.scene.lock().unwrap_or_else(PoisonError::into_inner) {
            Gpu::Ready(scene) => scene.renders(),
            Gpu::Pending | Gpu::Failed(_) => 0,
        }
    }

    /// Shows the view in all the space `ui` has, seen from `camera`, and turns, pans and
    /// zooms the camera as the mouse asks.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        input: SceneInput,
        camera: &mut Camera,
    ) -> egui::Response {
        let size = ui.available_size().max(egui::vec2(64.0, 64.0));
        let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
        camera.aspect = f64::from(rect.width() / rect.height().max(1.0));
        response.widget_info(|| {
            egui::WidgetInfo::labeled(egui::Role::Canvas, ui.is_enabled(), "3D arm view")
        });
        interact(camera, ui, &response, input.clearance.below_ground);

        if !ui.is_rect_visible(rect) {
            return response;
        }
        let ppp = ui.ctx().pixels_per_point();
        let next = cache::Rendered {
            input,
            camera: *camera,
            size_px: [rect.width() * ppp, rect.height() * ppp],
        };
        self.changed = self
            .rendered
            .as_ref()
            .is_none_or(|r| cache::visibly_changed(&r.1, &next));
        if self.changed {
            let generation = self.rendered.as_ref().map_or(0, |r| r.0 + 1);
            self.rendered = Some(Arc::new((generation, next)));
        }
        let failure = match &*self.scene.lock().unwrap_or_else(PoisonError::into_inner) {
            Gpu::Failed(message) => Some(message.clone()),
            Gpu::Pending | Gpu::Ready(_) => None,
        };
        if let Some(message) = failure {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                message,
                egui::FontId::proportional(14.0),
                ui.visuals().error_fg_color,
            );
            return response;
        }
        let scene = Arc::clone(&self.scene);
        // The picture keeps showing what it was rendered from until a visible change.
        let Some(drawn) = self.rendered.as_ref().map(Arc::clone) else {
            return response;
        };
        let callback = egui_glow::CallbackFn::new(move |info, painter| {
            paint_callback(&scene, &info, painter, drawn.0, &drawn.1);
        });
        ui.painter().add(egui::PaintCallback {
            rect,
            callback: Arc::new(callback),
        });
        response
    }
}

/// Orbit (drag), pan (right/middle or shift+drag), zoom (scroll or pinch); a double-click is
/// the caller's (the 3D panel follows the arm again). The eye orbits under the ground with
/// Ctrl, or freely while `below_ground` (an arm reaches under it).
fn interact(camera: &mut Camera, ui: &egui::Ui, response: &egui::Response, below_ground: bool) {
    let shift = ui.input(|i| i.modifiers.shift);
    let delta = response.drag_delta();
    let pixels_per_point = f64::from(ui.ctx().pixels_per_point());
    if response.dragged_by(egui::PointerButton::Secondary)
        || response.dragged_by(egui::PointerButton::Middle)
        || (shift && response.dragged_by(egui::PointerButton::Primary))
    {
        camera.pan(
            f64::from(delta.x) * pixels_per_point,
            f64::from(delta.y) * pixels_per_point,
            f64::from(response.rect.height()) * pixels_per_point,
        );
    } else if response.dragged_by(egui::PointerButton::Primary) {
        // Ctrl lets the eye go under the ground: only then is a view from below deliberate;
        // and whenever an arm reaches below the ground, so the part under it can be seen.
        let below = below_ground || ui.input(|i| i.modifiers.ctrl);
        camera.orbit(
            -f64::from(delta.x) * ArmView::ORBIT_PER_POINT,
            f64::from(delta.y) * ArmView::ORBIT_PER_POINT,
            below,
        );
    }
    if response.hovered() {
        let (scroll, zoom, pointer) = ui.input(|i| {
            (
                i.smooth_scroll_delta.y,
                i.zoom_delta(),
                i.pointer.hover_pos(),
            )
        });
        // Toward what is under the pointer, so zooming in on a joint keeps it in view.
        let ndc = pointer.map_or([0.0, 0.0], |p| {
            let r = response.rect;
            [
                f64::from((p.x - r.center().x) / (r.width() * 0.5).max(1.0)),
                f64::from((r.center().y - p.y) / (r.height() * 0.5).max(1.0)),
            ]
        });
        if scroll != 0.0 {
            camera.zoom_at((-f64::from(scroll) * 0.002).exp(), ndc);
            // The view used the wheel: a surrounding scroll area must not scroll too.
            ui.ctx().input_mut(|i| i.smooth_scroll_delta.y = 0.0);
        }
        if zoom != 1.0 {
            camera.zoom_at(1.0 / f64::from(zoom), ndc);
        }
    }
}

/// Runs inside `egui_glow`'s paint: makes the scene on first use, then clears and draws the
/// view's rect only (the rest of the window is egui's).
fn paint_callback(
    scene: &Mutex<Gpu>,
    info: &egui::PaintCallbackInfo,
    painter: &egui_glow::Painter,
    generation: u64,
    drawn: &cache::Rendered,
) {
    let mode = PaintMode::from_env();
    if mode == PaintMode::Off {
        return;
    }
    let mut gpu = scene.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(*gpu, Gpu::Pending) {
        let made = Context::from_gl_context(painter.gl().clone())
            .map_err(|e| SceneError::Context(e.to_string()))
            .and_then(|context| Scene::new(&context));
        *gpu = match made {
            Ok(scene) => Gpu::Ready(Box::new(scene)),
            Err(e) => {
                tracing::error!("3D view disabled: {e}");
                Gpu::Failed(e.to_string())
            }
        };
    }
    let Gpu::Ready(scene) = &mut *gpu else {
        return;
    };
    let view = info.viewport_in_pixels();
    let clip = info.clip_rect_in_pixels();
    let viewport = Viewport {
        x: view.left_px,
        y: view.from_bottom_px,
        width: view.width_px.max(0) as u32,
        height: view.height_px.max(0) as u32,
    };
    let clip = ScissorBox {
        x: clip.left_px,
        y: clip.from_bottom_px,
        width: clip.width_px.max(0) as u32,
        height: clip.height_px.max(0) as u32,
    };
    let [width, height] = info.screen_size_px;
    let target = RenderTarget::screen(scene.context(), width, height);
    if mode == PaintMode::Direct {
        scene.paint(&target, viewport, clip, &drawn.input, &drawn.camera);
    } else {
        scene.paint_cached(
            &target,
            viewport,
            clip,
            &drawn.input,
            &drawn.camera,
            generation,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::camera::to_world;
    use super::*;

    #[test]
    fn unit_meshes_are_wound_counter_clockwise_seen_from_outside() {
        let sphere = unit_sphere(12, 8);
        for t in sphere.indices.chunks(3) {
            let [a, b, c] =
                [t[0], t[1], t[2]].map(|i| glam::Vec3::from(sphere.positions[i as usize]));
            let normal = (b - a).cross(c - a);
            assert!(normal.dot(a + b + c) > 0.0, "triangle {t:?} faces inwards");
        }
        // For the cylinder, "outside" is away from the axis on the side and along ±z on
        // the caps.
        let cylinder = unit_cylinder(12);
        for t in cylinder.indices.chunks(3) {
            let [a, b, c] =
                [t[0], t[1], t[2]].map(|i| glam::Vec3::from(cylinder.positions[i as usize]));
            let normal = (b - a).cross(c - a);
            let n = glam::Vec3::from(cylinder.normals[t[0] as usize]);
            assert!(normal.dot(n) > 0.0, "triangle {t:?} faces inwards");
        }
    }

    #[test]
    fn vehicle_down_is_world_down_and_right_is_world_minus_y() {
        assert_eq!(
            to_world(DVec3::new(1.0, 2.0, 3.0)),
            DVec3::new(1.0, -2.0, -3.0)
        );
        // A 180° turn about x keeps the frame right-handed.
        let x = to_world(DVec3::X);
        let y = to_world(DVec3::Y);
        assert_eq!(x.cross(y), to_world(DVec3::Z));
    }

    #[test]
    fn camera_projects_its_target_to_the_viewport_centre() {
        let camera = Camera::default();
        let p = camera.project(camera.target, [400.0, 300.0]).unwrap();
        assert!(
            (p[0] - 200.0).abs() < 1e-3 && (p[1] - 150.0).abs() < 1e-3,
            "{p:?}"
        );
        // Above the target (vehicle −z) is up on screen.
        let mut above = camera.target;
        above[2] -= 0.1;
        assert!(camera.project(above, [400.0, 300.0]).unwrap()[1] < 150.0);
        // The eye itself and points behind it do not project.
        let behind =
            (DVec3::from_array(camera.eye()) * 2.0 - DVec3::from_array(camera.target)).to_array();
        assert_eq!(camera.project(behind, [400.0, 300.0]), None);
    }

    #[test]
    fn pan_moves_the_target_across_the_screen() {
        let mut camera = Camera::default();
        let before = camera.target;
        camera.pan(100.0, 0.0, 300.0);
        // Dragging right moves the scene right: the old target now appears right of centre.
        let p = camera.project(before, [400.0, 300.0]).unwrap();
        assert!(p[0] > 250.0 && (p[1] - 150.0).abs() < 1.0, "{p:?}");
    }

    #[test]
    fn warning_tint_goes_from_base_through_amber_to_red() {
        let palette = ScenePalette::new(true);
        let base = palette.cylinder;
        assert_eq!(palette.warning_tint(base, 0.0), base);
        assert_eq!(palette.warning_tint(base, f32::NAN), base);
        let red = palette.warning_tint(base, 1.0);
        assert!((0..3).all(|i| (red[i] - palette.at_limit[i]).abs() < 1e-6));
        let near = palette.warning_tint(base, 0.34);
        let amber = [0, 1, 2]
            .map(|i| palette.near_limit[i] + (palette.at_limit[i] - palette.near_limit[i]) * 0.34);
        assert!((0..3).all(|i| (near[i] - amber[i]).abs() < 1e-6));
    }
}
