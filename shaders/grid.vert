// The ground grid: a square of the ground plane (world z = u_ground: the vehicle's ground, or
// under an arm that hangs from its mount) around the camera target, sized to the camera distance.

uniform mat4 u_view_projection;
uniform vec2 u_center;
uniform float u_extent;
uniform float u_ground; // world z of the grid (0: the vehicle's ground)

in vec3 a_position;   // unit square, corners at (±1, ±1, 0)

out vec2 v_ground;

void main() {
    v_ground = u_center + a_position.xy * u_extent;
    gl_Position = u_view_projection * vec4(v_ground, u_ground, 1.0);
}
