// Links, joints, triads and markers: a key light from above plus a headlight, or flat colour
// (u_lit = 0) for markers whose exact colour must show.

uniform vec3 u_eye;
uniform vec4 u_color;
uniform float u_lit;
uniform float u_ground;      // world z of the ground: below it the surface is striped
uniform vec3 u_below_color;  // the stripes' colour

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
    vec3 rgb = mix(u_color.rgb, lit, u_lit);
    if (v_world.z < u_ground) {
        // Below the ground (issue 45): diagonal stripes.
        float stripe = step(0.5, fract((v_world.x + v_world.y + v_world.z) * 25.0));
        rgb = mix(rgb, u_below_color, 0.3 + 0.5 * stripe);
    }
    out_color = vec4(rgb, u_color.a);
}
