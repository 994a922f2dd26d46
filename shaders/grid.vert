// The ground grid: a square of the vehicle's ground plane (world z = 0) around the camera
// target, sized to the camera distance.

uniform mat4 u_view_projection;
uniform vec2 u_center;
uniform float u_extent;

in vec3 a_position;   // unit square, corners at (±1, ±1, 0)

out vec2 v_ground;

void main() {
    v_ground = u_center + a_position.xy * u_extent;
    gl_Position = u_view_projection * vec4(v_ground, 0.0, 1.0);
}
