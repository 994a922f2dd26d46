// Links, joints, triads and markers: a key light from above plus a headlight, or flat colour
// (u_lit = 0) for markers whose exact colour must show.

uniform vec3 u_eye;
uniform vec4 u_color;
uniform float u_lit;

in vec3 v_world;
in vec3 v_normal;
in vec3 v_local;

layout (location = 0) out vec4 out_color;

void main() {
    vec3 n = normalize(v_normal);
    vec3 to_eye = normalize(u_eye - v_world);
    float facing = abs(dot(n, to_eye));
    float key = max(dot(n, normalize(vec3(0.35, 0.25, 1.0))), 0.0);
    float shade = 0.3 + 0.4 * facing + 0.35 * key;
    float highlight = 0.25 * pow(facing, 32.0);
    vec3 lit = u_color.rgb * shade + vec3(highlight);
    out_color = vec4(mix(u_color.rgb, lit, u_lit), u_color.a);
}
