// Arm meshes (unit cylinder along +z from 0 to 1, unit sphere) placed by a model matrix.
// World frame: x front, y left, z up (the vehicle frame turned 180° about x).
// three-d prepends the #version line (330 core or 300 es).

uniform mat4 u_view_projection;
uniform mat4 u_model;
uniform mat3 u_normal_matrix;

in vec3 a_position;
in vec3 a_normal;

out vec3 v_world;
out vec3 v_normal;
out vec3 v_local;

void main() {
    vec4 world = u_model * vec4(a_position, 1.0);
    v_world = world.xyz;
    v_normal = u_normal_matrix * a_normal;
    v_local = a_position;
    gl_Position = u_view_projection * world;
}
