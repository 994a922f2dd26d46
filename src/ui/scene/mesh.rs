//! The unit meshes the scene scales into links, joints and volumes, before upload.

/// A mesh before upload: triangles wound counter-clockwise seen from outside.
pub(super) struct CpuMesh {
    pub(super) positions: Vec<[f32; 3]>,
    pub(super) normals: Vec<[f32; 3]>,
    pub(super) indices: Vec<u32>,
}

/// Radius 1 about the z axis, from z = 0 to z = 1, with flat caps.
pub(super) fn unit_cylinder(segments: u32) -> CpuMesh {
    let mut mesh = CpuMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
    };
    let ring = |i: u32| {
        let angle = std::f32::consts::TAU * i as f32 / segments as f32;
        (angle.cos(), angle.sin())
    };
    // Side: a bottom and a top vertex per segment edge, normals radial.
    for i in 0..=segments {
        let (c, s) = ring(i);
        mesh.positions.extend([[c, s, 0.0], [c, s, 1.0]]);
        mesh.normals.extend([[c, s, 0.0], [c, s, 0.0]]);
    }
    for i in 0..segments {
        let (b0, t0, b1, t1) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
        mesh.indices.extend([b0, b1, t1, b0, t1, t0]);
    }
    // Caps: a centre and a ring each, normals along ∓z.
    for (z, normal_z) in [(0.0, -1.0), (1.0, 1.0)] {
        let centre = mesh.positions.len() as u32;
        mesh.positions.push([0.0, 0.0, z]);
        mesh.normals.push([0.0, 0.0, normal_z]);
        for i in 0..=segments {
            let (c, s) = ring(i);
            mesh.positions.push([c, s, z]);
            mesh.normals.push([0.0, 0.0, normal_z]);
        }
        for i in 0..segments {
            let (a, b) = (centre + 1 + i, centre + 2 + i);
            if normal_z > 0.0 {
                mesh.indices.extend([centre, a, b]);
            } else {
                mesh.indices.extend([centre, b, a]);
            }
        }
    }
    mesh
}

/// Radius 1 about the origin.
pub(super) fn unit_sphere(slices: u32, stacks: u32) -> CpuMesh {
    let mut mesh = CpuMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
    };
    for i in 0..=stacks {
        let polar = std::f32::consts::PI * i as f32 / stacks as f32;
        for j in 0..=slices {
            let azimuth = std::f32::consts::TAU * j as f32 / slices as f32;
            let p = [
                polar.sin() * azimuth.cos(),
                polar.sin() * azimuth.sin(),
                polar.cos(),
            ];
            mesh.positions.push(p);
            mesh.normals.push(p);
        }
    }
    let row = slices + 1;
    for i in 0..stacks {
        for j in 0..slices {
            let (a, b) = (i * row + j, (i + 1) * row + j);
            // No zero-area triangles at the poles, where a whole row is one point.
            if i + 1 < stacks {
                mesh.indices.extend([a, b, b + 1]);
            }
            if i > 0 {
                mesh.indices.extend([a, b + 1, a + 1]);
            }
        }
    }
    mesh
}

/// The cube from −1 to 1 on every axis, a face's normal at each of its four corners.
pub(super) fn unit_cube() -> CpuMesh {
    let mut mesh = CpuMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
    };
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut n = [0.0f32; 3];
            n[axis] = sign;
            // Two axes spanning the face, ordered so (u × v) points along the normal.
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = mesh.positions.len() as u32;
            for (a, b) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = n;
                p[u] = a * sign;
                p[v] = b;
                mesh.positions.push(p);
                mesh.normals.push(n);
            }
            mesh.indices
                .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    mesh
}
