//! The 3D scene rendered offscreen through EGL on Mesa's software device (no display, no
//! GPU), checked against forward kinematics and `Camera::project`: the tool marker is where
//! the kinematics put it, bounding cylinders show along their axes, the ghost arm changes
//! pixels where it projects, and an empty scene is the grid alone.
//!
//! Needs Mesa's EGL at run time (Debian: `libegl1 libegl-mesa0 libgl1-mesa-dri`); without it
//! every test here fails and says so. `target/scene_render.png` is the full scene, for a human.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::too_many_lines,
    reason = "tests and benchmarks report a failure by panicking; a scenario reads best whole"
)]

use std::path::Path;

use jaus_ocu::model::arm::{ArmSpec, Mount};
use jaus_ocu::model::kinematics::{ArmPose, CylinderKind, forward};
use jaus_ocu::model::update::ComponentId;
use jaus_ocu::sim::arm_file::ArmFile;
use jaus_ocu::ui::scene::{
    Camera, GapLine, Scene, SceneArm, SceneClearance, SceneInput, SceneObstacle, ScenePalette,
};
use three_d::{
    ClearState, DepthTexture2D, Interpolation, RenderTarget, ScissorBox, Texture2D, Viewport,
    Wrapping,
};

const WIDTH: u32 = 400;
const HEIGHT: u32 = 300;

use jaus_ocu::ui::gl_ffi::Headless;

fn headless() -> Headless {
    jaus_ocu::ui::gl_ffi::headless().unwrap_or_else(|e| panic!("{e}"))
}

/// An RGBA image, rows top-down (as `RenderTarget::read_color` returns them).
struct Frame {
    pixels: Vec<[u8; 4]>,
}

impl Frame {
    fn at(&self, x: f32, y: f32) -> Option<[u8; 4]> {
        let (x, y) = (x.floor(), y.floor());
        if x < 0.0 || y < 0.0 || x >= WIDTH as f32 || y >= HEIGHT as f32 {
            return None;
        }
        Some(self.pixels[y as usize * WIDTH as usize + x as usize])
    }

    /// Centroid (pixel centres) and count of the pixels within `tolerance` of `rgb`.
    fn centroid_of(&self, rgb: [u8; 3], tolerance: u8) -> Option<([f32; 2], usize)> {
        let mut sum = [0.0f64; 2];
        let mut count = 0;
        for (i, p) in self.pixels.iter().enumerate() {
            if (0..3).all(|c| p[c].abs_diff(rgb[c]) <= tolerance) {
                sum[0] += (i % WIDTH as usize) as f64 + 0.5;
                sum[1] += (i / WIDTH as usize) as f64 + 0.5;
                count += 1;
            }
        }
        (count > 0).then(|| {
            (
                [
                    (sum[0] / count as f64) as f32,
                    (sum[1] / count as f64) as f32,
                ],
                count,
            )
        })
    }

    fn save(&self, path: &Path) {
        let bytes: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        image::save_buffer(path, &bytes, WIDTH, HEIGHT, image::ExtendedColorType::Rgba8)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}

fn render(gl: &Headless, scene: &mut Scene, input: &SceneInput, camera: &Camera) -> Frame {
    render_with(gl, scene, input, camera, None)
}

/// As [`render`]; with `Some(generation)` through the view's picture
/// ([`Scene::paint_cached`]), as the window draws it.
fn render_with(
    gl: &Headless,
    scene: &mut Scene,
    input: &SceneInput,
    camera: &Camera,
    generation: Option<u64>,
) -> Frame {
    let color = Texture2D::new_empty::<[u8; 4]>(
        &gl.gl,
        WIDTH,
        HEIGHT,
        Interpolation::Nearest,
        Interpolation::Nearest,
        None,
        Wrapping::ClampToEdge,
        Wrapping::ClampToEdge,
    );
    let depth = DepthTexture2D::new::<f32>(
        &gl.gl,
        WIDTH,
        HEIGHT,
        Wrapping::ClampToEdge,
        Wrapping::ClampToEdge,
    );
    let target = RenderTarget::new(color.as_color_target(None), depth.as_depth_target());
    let viewport = Viewport::new_at_origo(WIDTH, HEIGHT);
    match generation {
        None => scene.paint(&target, viewport, viewport.into(), input, camera),
        Some(g) => scene.paint_cached(&target, viewport, viewport.into(), input, camera, g),
    }
    Frame {
        pixels: target.read_color::<[u8; 4]>(),
    }
}

/// The PUMA 560 of `assets/arms/puma560.toml`, mounted upright (its file mounts it at the
/// identity, which hangs it below the ground of a z-down vehicle frame), with reported
/// radii on the pedestal and the upper arm so both cylinder styles show (the file gives none).
fn puma() -> (ArmSpec, Vec<Vec<f64>>) {
    let file = ArmFile::builtin("puma560").expect("the PUMA 560 is built in");
    let mut spec = file.spec;
    spec.mount = Some(Mount {
        position: [0.0; 3],
        orientation: [0.0, 1.0, 0.0, 0.0],
    });
    spec.joints[0].axis_radius = Some(0.09);
    spec.joints[2].link_radius = Some(0.06);
    let presets = file.presets.into_iter().map(|p| p.positions).collect();
    (spec, presets)
}

const Q: [f64; 6] = [0.3, 0.6, -1.2, 0.4, -0.7, 1.1];

fn live_pose() -> ArmPose {
    forward(&puma().0, &Q, [0.0; 3]).unwrap()
}

fn ghost_pose() -> ArmPose {
    // Preset "Zero": far enough from Q that the two arms separate on screen.
    let (spec, presets) = puma();
    forward(&spec, &presets[0], [0.0; 3]).unwrap()
}

/// Looks at the arm from behind-left and above, the whole arm and its ghost in view.
fn camera() -> Camera {
    Camera {
        target: [0.3, 0.0, -0.65],
        yaw: 2.2,
        pitch: 0.35,
        distance: 2.0,
        ..Camera::default()
    }
}

fn input(pose: Option<ArmPose>) -> SceneInput {
    SceneInput {
        pose,
        ghost: None,
        joint_warning: vec![0.0; 6],
        default_radius: 0.04,
        show_axes: false,
        show_frames: false,
        dark: true,
        others: Vec::new(),
        clearance: SceneClearance::default(),
    }
}

fn project(camera: &Camera, p: glam::DVec3) -> [f32; 2] {
    camera
        .project(p.to_array(), [WIDTH as f32, HEIGHT as f32])
        .expect("in front of the camera")
}

fn u8_rgb(rgb: [f32; 3]) -> [u8; 3] {
    rgb.map(|c| (c * 255.0).round() as u8)
}

#[test]
fn tool_marker_is_drawn_where_the_camera_projects_the_tool_point() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile");
    let pose = live_pose();
    let expected = project(&camera(), pose.tool_point_vehicle);

    // The showcase for a human, and the same check on it: ghost, near-limit tint, axes and
    // frames must not hide or move the marker.
    let showcase = SceneInput {
        ghost: Some(ghost_pose()),
        joint_warning: vec![0.0, 0.0, 0.7, 0.0, 0.0, 0.0],
        show_axes: true,
        show_frames: true,
        ..input(Some(pose.clone()))
    };
    let png = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/scene_render.png");
    for (name, scene_input) in [("plain", input(Some(pose.clone()))), ("showcase", showcase)] {
        let frame = render(&gl, &mut scene, &scene_input, &camera());
        if name == "showcase" {
            frame.save(&png);
        }
        let marker = u8_rgb(ScenePalette::new(true).tool_marker);
        let (centroid, count) = frame
            .centroid_of(marker, 3)
            .unwrap_or_else(|| panic!("{name}: no pixel has the tool marker colour {marker:?}"));
        assert!(count >= 20, "{name}: only {count} marker pixels");
        let error =
            ((centroid[0] - expected[0]).powi(2) + (centroid[1] - expected[1]).powi(2)).sqrt();
        assert!(
            error < 2.0,
            "{name}: marker centroid {centroid:?} is {error:.2} px from the projected tool point {expected:?}"
        );
    }
}

#[test]
fn bounding_cylinders_tint_the_pixels_along_their_axes() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile");
    let camera = camera();
    let pose = live_pose();
    let mut bare = pose.clone();
    bare.cylinders.clear();
    let with = render(&gl, &mut scene, &input(Some(pose.clone())), &camera);
    let without = render(&gl, &mut scene, &input(Some(bare)), &camera);
    let palette = ScenePalette::new(true);
    let eye = glam::DVec3::from_array(camera.eye());

    // The upper arm (joint 3's link cylinder, reported radius) and joint 4's offset cylinder
    // (no radius: default radius, banded style).
    for (joint, kind, tint, min_share) in [
        (3, CylinderKind::LinkLength, palette.cylinder, 0.8),
        (4, CylinderKind::Offset, palette.cylinder_default, 0.4),
    ] {
        let c = pose
            .cylinders
            .iter()
            .find(|c| c.joint == joint && c.kind == kind)
            .unwrap();
        let (from, to) = (
            pose.mount.transform_point3(c.from),
            pose.mount.transform_point3(c.to),
        );
        let radius = c.radius.unwrap_or(0.04);
        // Half a radius beside the axis, across the line of sight: inside the volume, clear
        // of the thin links.
        let side = (to - from).cross(eye - from).normalize() * radius * 0.5;
        let tint = tint.map(|v| v * 255.0);
        let samples = 21;
        let mut tinted = 0;
        for i in 0..samples {
            let t = 0.15 + 0.7 * i as f64 / (samples - 1) as f64;
            let [x, y] = project(&camera, from.lerp(to, t) + side);
            let (a, b) = (with.at(x, y).unwrap(), without.at(x, y).unwrap());
            // How far the pixel moved towards the tint, in 0..255 units.
            let towards: Vec<f32> = (0..3).map(|k| tint[k] - f32::from(b[k])).collect();
            let length = towards.iter().map(|v| v * v).sum::<f32>().sqrt().max(1.0);
            let moved: f32 = (0..3)
                .map(|k| (f32::from(a[k]) - f32::from(b[k])) * towards[k] / length)
                .sum();
            if moved > 6.0 {
                tinted += 1;
            }
        }
        let share = tinted as f64 / samples as f64;
        assert!(
            share >= min_share,
            "joint {joint} {kind:?}: only {tinted}/{samples} samples along the axis are tinted"
        );
    }
}

#[test]
fn ghost_arm_changes_pixels_only_where_it_projects() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile");
    let camera = camera();
    let pose = live_pose();
    let ghost = ghost_pose();
    let alone = render(&gl, &mut scene, &input(Some(pose.clone())), &camera);
    let with_ghost = SceneInput {
        ghost: Some(ghost.clone()),
        ..input(Some(pose.clone()))
    };
    let both = render(&gl, &mut scene, &with_ghost, &camera);
    let live_tool = project(&camera, pose.tool_point_vehicle);

    // Points along the ghost's links and its tool point; not along the pedestal, which
    // joint 1 turns about its own axis, so the live arm's opaque pedestal hides the ghost's.
    // Where the live arm passes in front of the ghost nothing changes, hence a share.
    let links = |pose: &ArmPose| -> Vec<(glam::DVec3, glam::DVec3)> {
        let origins: Vec<glam::DVec3> = std::iter::once(pose.mount.translation)
            .chain(pose.frames.iter().map(|f| (pose.mount * *f).translation))
            .collect();
        origins
            .windows(2)
            .filter(|w| w[0].distance(w[1]) > 0.05)
            .map(|w| (w[0], w[1]))
            .collect()
    };
    let live_links = links(&pose);
    let mut points = vec![ghost.tool_point_vehicle];
    for (a, b) in links(&ghost) {
        if live_links
            .iter()
            .any(|(c, d)| a.distance(*c) < 0.02 && b.distance(*d) < 0.02)
        {
            continue;
        }
        points.extend((1..=5).map(|i| a.lerp(b, 0.1 + 0.8 * f64::from(i) / 6.0)));
    }
    let mut changed = 0;
    for p in &points {
        let [x, y] = project(&camera, *p);
        assert!(
            ((x - live_tool[0]).powi(2) + (y - live_tool[1]).powi(2)).sqrt() > 15.0,
            "sample {p} falls on the live tool marker; pick another ghost pose"
        );
        let (a, b) = (alone.at(x, y).unwrap(), both.at(x, y).unwrap());
        let difference: u32 = (0..3).map(|k| u32::from(a[k].abs_diff(b[k]))).sum();
        if difference > 20 {
            changed += 1;
        }
    }
    assert!(
        points.len() >= 8 && changed * 4 >= points.len() * 3,
        "the ghost changed only {changed} of {} pixels where its links and tool point project",
        points.len()
    );
    // Far from both arms (the top corners) nothing changes.
    for (x, y) in [(2.0, 2.0), (WIDTH as f32 - 3.0, 2.0)] {
        assert_eq!(alone.at(x, y), both.at(x, y), "pixel ({x}, {y})");
    }
}

#[test]
fn empty_scene_draws_the_grid_only() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile");
    for dark in [true, false] {
        let palette = ScenePalette::new(dark);
        let frame = render(
            &gl,
            &mut scene,
            &SceneInput {
                dark,
                ..input(None)
            },
            &camera(),
        );
        let marker = u8_rgb(palette.tool_marker);
        assert!(
            frame.centroid_of(marker, 40).is_none(),
            "dark = {dark}: tool marker colour in an empty scene"
        );
        let background = u8_rgb(palette.background);
        let grid = frame
            .pixels
            .iter()
            .filter(|p| (0..3).any(|k| p[k].abs_diff(background[k]) > 8))
            .count();
        assert!(grid > 500, "dark = {dark}: only {grid} grid pixels");
        // Above the horizon there is nothing but the background.
        for x in 0..WIDTH {
            let p = frame.at(x as f32, 1.0).unwrap();
            assert!(
                (0..3).all(|k| p[k].abs_diff(background[k]) <= 1),
                "dark = {dark}: pixel ({x}, 1) = {p:?}, background {background:?}"
            );
        }
    }
}

#[test]
fn fit_puts_every_point_of_the_arm_inside_the_view() {
    let pose = live_pose();
    let mut camera = camera();
    camera.fit(&pose);
    let points = std::iter::once(pose.mount.translation)
        .chain(pose.frames.iter().map(|f| (pose.mount * *f).translation))
        .chain([pose.tool_point_vehicle])
        .chain(
            pose.cylinders
                .iter()
                .flat_map(|c| [c.from, c.to].map(|p| pose.mount.transform_point3(p))),
        );
    for p in points {
        let [x, y] = project(&camera, p);
        assert!(
            (0.0..=WIDTH as f32).contains(&x) && (0.0..=HEIGHT as f32).contains(&y),
            "{p} projects to ({x}, {y}), outside the {WIDTH}×{HEIGHT} view"
        );
    }
}

/// The PUMA of [`live_pose`] at another mount of the vehicle: `dy` m to its right.
fn beside(dy: f64) -> ArmPose {
    let (mut spec, _) = puma();
    if let Some(m) = &mut spec.mount {
        m.position[1] += dy;
    }
    forward(&spec, &Q, [0.0; 3]).unwrap()
}

#[test]
fn the_other_arms_of_the_vehicle_are_drawn_at_their_mounts_dimmed_or_grey_when_lost() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile");
    let palette = ScenePalette::new(true);
    let mut camera = camera();
    let (left, right) = (beside(-0.7), beside(0.7));
    camera.fit_all(&[live_pose(), left.clone(), right.clone()]);
    let other = |id: u8, pose: &ArmPose, lost: bool| SceneArm {
        id: ComponentId::new(126, 1, id),
        pose: pose.clone(),
        joint_warning: Vec::new(),
        lost,
        presets: Vec::new(),
    };
    let vehicle = SceneInput {
        others: vec![other(11, &left, false), other(12, &right, true)],
        ..input(Some(live_pose()))
    };
    let frame = render(&gl, &mut scene, &vehicle, &camera);
    frame.save(&Path::new(env!("CARGO_MANIFEST_DIR")).join("target/scene_render_vehicle.png"));
    // Each arm's tool marker where its own tool point projects: the focused one in its
    // colour, the other dimmed toward the background, the lost one grey.
    for (pose, rgb, what) in [
        (live_pose(), palette.tool_marker, "focused"),
        (left, palette.dimmed(palette.tool_marker), "other"),
        (right, palette.lost, "lost"),
    ] {
        let expected = project(&camera, pose.tool_point_vehicle);
        let want = u8_rgb(rgb);
        let got = frame.at(expected[0], expected[1]).expect("in the frame");
        assert!(
            (0..3).all(|c| got[c].abs_diff(want[c]) <= 3),
            "{what}: {got:?} at its projected tool point {expected:?}, not its marker {want:?}"
        );
    }
}

#[test]
fn the_picture_copied_into_the_window_equals_the_scene_rendered_directly_until_it_changes() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).unwrap();
    let live = input(Some(live_pose()));
    let direct = render(&gl, &mut scene, &live, &camera());
    assert_eq!(scene.renders(), 0);
    let cached = render_with(&gl, &mut scene, &live, &camera(), Some(1));
    assert_eq!(scene.renders(), 1);
    let differ = direct
        .pixels
        .iter()
        .zip(&cached.pixels)
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differ, 0,
        "{differ} pixels of the picture differ from the direct render"
    );
    // The same number: the picture is copied again, not rendered, even for another input
    // (the caller decides what is a visible change).
    let ghost = SceneInput {
        ghost: Some(ghost_pose()),
        ..live.clone()
    };
    let kept = render_with(&gl, &mut scene, &ghost, &camera(), Some(1));
    assert_eq!(scene.renders(), 1);
    assert_eq!(kept.pixels, cached.pixels);
    // A new number renders what the input shows now.
    let fresh = render_with(&gl, &mut scene, &ghost, &camera(), Some(2));
    assert_eq!(scene.renders(), 2);
    assert_eq!(
        fresh.pixels,
        render(&gl, &mut scene, &ghost, &camera()).pixels
    );
    assert_ne!(fresh.pixels, kept.pixels);
}

#[test]
fn the_ground_is_rendered_once_per_camera_while_the_arm_moves_over_it() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).unwrap();
    let (spec, poses) = puma();
    let mut generation = 0;
    for q in &poses {
        generation += 1;
        let moved = input(Some(forward(&spec, q, [0.0; 3]).unwrap()));
        let cached = render_with(&gl, &mut scene, &moved, &camera(), Some(generation));
        // The arm over the kept ground is what a render of the whole scene draws.
        assert_eq!(
            cached.pixels,
            render(&gl, &mut scene, &moved, &camera()).pixels,
            "pose {q:?}"
        );
    }
    assert_eq!(scene.renders(), poses.len() as u64);
    assert_eq!(scene.ground_renders(), 1, "the camera stayed: one ground");
    // Another camera, another ground (and what it shows is the new view's).
    let mut turned = camera();
    turned.yaw += 0.4;
    let live = input(Some(live_pose()));
    let cached = render_with(&gl, &mut scene, &live, &turned, Some(generation + 1));
    assert_eq!(scene.ground_renders(), 2);
    assert_eq!(
        cached.pixels,
        render(&gl, &mut scene, &live, &turned).pixels
    );
    // Another theme, another ground.
    let light = SceneInput {
        dark: !live.dark,
        ..live.clone()
    };
    render_with(&gl, &mut scene, &light, &turned, Some(generation + 2));
    assert_eq!(scene.ground_renders(), 3);
}

/// `input` painted into a window larger than the view, whose pixels start magenta: the view at
/// an offset, clipped by `clip` (as egui's panels clip it), directly or through the picture.
fn paint_offset(
    gl: &Headless,
    scene: &mut Scene,
    input: &SceneInput,
    clip: ScissorBox,
    generation: Option<u64>,
) -> Vec<[u8; 4]> {
    let (w, h) = (WIDTH + 60, HEIGHT + 40);
    let color = Texture2D::new_empty::<[u8; 4]>(
        &gl.gl,
        w,
        h,
        Interpolation::Nearest,
        Interpolation::Nearest,
        None,
        Wrapping::ClampToEdge,
        Wrapping::ClampToEdge,
    );
    let depth =
        DepthTexture2D::new::<f32>(&gl.gl, w, h, Wrapping::ClampToEdge, Wrapping::ClampToEdge);
    let target = RenderTarget::new(color.as_color_target(None), depth.as_depth_target());
    target.clear(ClearState::color_and_depth(1.0, 0.0, 1.0, 1.0, 1.0));
    let viewport = Viewport {
        x: 35,
        y: 25,
        width: WIDTH,
        height: HEIGHT,
    };
    match generation {
        None => scene.paint(&target, viewport, clip, input, &camera()),
        Some(g) => scene.paint_cached(&target, viewport, clip, input, &camera(), g),
    }
    target.read_color::<[u8; 4]>()
}

#[test]
fn the_picture_lands_where_the_view_is_and_only_inside_its_clip() {
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).unwrap();
    let live = input(Some(live_pose()));
    // The view rendered on its own, at the origin of a target of its size.
    let alone = render(&gl, &mut scene, &live, &camera()).pixels;
    // The clip cuts the view's left and bottom edges and reaches past its right one.
    let clip = ScissorBox {
        x: 60,
        y: 10,
        width: WIDTH + 20,
        height: HEIGHT - 20,
    };
    let cached = paint_offset(&gl, &mut scene, &live, clip, Some(7));
    assert_eq!(scene.renders(), 1);
    let magenta = [255, 0, 255, 255];
    let w = (WIDTH + 60) as usize;
    let (mut inside, mut wrong) = (0, 0);
    for (i, pixel) in cached.iter().enumerate() {
        // `read_color` gives rows from the top; GL counts them from the bottom.
        let (x, y) = ((i % w) as u32, HEIGHT + 40 - 1 - (i / w) as u32);
        let in_view = (35..35 + WIDTH).contains(&x) && (25..25 + HEIGHT).contains(&y);
        let in_clip = (60..60 + WIDTH + 20).contains(&x) && (10..HEIGHT - 10).contains(&y);
        let expected = if in_view && in_clip {
            inside += 1;
            alone[((HEIGHT - 1 - (y - 25)) * WIDTH + (x - 35)) as usize]
        } else {
            magenta
        };
        wrong += usize::from(*pixel != expected);
    }
    assert!(
        inside > 80_000,
        "the clip leaves {inside} pixels of the view"
    );
    assert_eq!(
        wrong, 0,
        "{wrong} pixels are not the view's picture, shifted and clipped"
    );
}

#[test]
fn obstacles_the_gap_line_and_what_is_below_the_ground_are_drawn_distinctly() {
    use jaus_ocu::model::clearance::Zone;
    use jaus_ocu::model::clearance::geometry::OrientedBox;
    use jaus_ocu::model::clearance::obstacles::ObstacleShape;
    let gl = headless();
    let mut scene = Scene::new(&gl.gl).expect("the shaders compile with the clearance uniforms");
    let palette = ScenePalette::new(true);
    let camera = camera();
    let pose = live_pose();
    let plain = input(Some(pose.clone()));
    let before = render(&gl, &mut scene, &plain, &camera);
    // A box beside the arm, a line from the base to the tool point, and the ground raised
    // to the height of the arm's middle, so its upper half is above and its lower half below.
    let mid_z = 0.5 * (pose.mount.translation.z + pose.tool_point_vehicle.z);
    let centre = glam::DVec3::new(0.0, -0.6, mid_z);
    let cleared = SceneInput {
        clearance: SceneClearance {
            ground: Some(pose.mount.translation.z - 0.05),
            obstacles: vec![SceneObstacle {
                shape: ObstacleShape::Box(OrientedBox {
                    pose: glam::DAffine3::from_translation(centre),
                    half: glam::DVec3::splat(0.1),
                }),
                zone: None,
            }],
            lines: vec![GapLine {
                on_a: pose.tool_point_vehicle,
                on_b: centre,
                gap: 0.04,
                zone: Zone::Band,
                label: true,
            }],
            ..SceneClearance::default()
        },
        ..plain.clone()
    };
    let after = render(&gl, &mut scene, &cleared, &camera);
    after.save(&Path::new(env!("CARGO_MANIFEST_DIR")).join("target/scene_render_clearance.png"));
    let at = |f: &Frame, p: glam::DVec3| {
        let [x, y] = project(&camera, p);
        f.at(x, y).expect("in the frame")
    };
    assert_ne!(
        at(&before, centre),
        at(&after, centre),
        "the obstacle is drawn"
    );
    // The line's middle, in the band's amber, over everything.
    let mid = (pose.tool_point_vehicle + centre) * 0.5;
    let want = u8_rgb(palette.near_limit);
    let got = at(&after, mid);
    assert!(
        (0..3).all(|c| got[c].abs_diff(want[c]) <= 3),
        "{got:?} at the line's middle, not amber {want:?}"
    );
    // The mount is 5 cm under the raised ground: the pedestal there is striped red, so the
    // red channel gains over the plain picture there.
    let base = pose.mount.translation + glam::DVec3::new(0.0, 0.0, -0.02);
    let (b, a) = (at(&before, base), at(&after, base));
    assert!(
        i32::from(a[0]) - i32::from(a[2]) > i32::from(b[0]) - i32::from(b[2]) + 20,
        "below the ground: {a:?}, not redder than {b:?}"
    );
}
