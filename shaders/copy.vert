// The 3D view's cached picture drawn over the view's viewport: the unit square's corners
// (±1, ±1) are the viewport's corners. three-d prepends the #version line.

in vec3 a_position;

out vec2 v_uv;

void main() {
    v_uv = a_position.xy * 0.5 + 0.5;
    gl_Position = vec4(a_position.xy, 0.0, 1.0);
}
