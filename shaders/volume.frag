// Bounding cylinders (and the spheres that stand for zero-length ones): translucent, with a
// fresnel rim so the outline of every volume stays readable where several overlap.
// u_dashed = 1 marks a radius the specification does not give: the volume is then drawn in
// bands along its axis, every other band showing only the rim.

uniform vec3 u_eye;
uniform vec4 u_color;        // rgb tint; a = opacity facing the viewer
uniform float u_rim_alpha;   // opacity at grazing angles
uniform float u_dashed;
uniform float u_dash_count;  // bands per unit of the mesh's local z
uniform float u_ground;      // world z of the ground: below it the volume is striped
uniform vec3 u_below_color;  // the stripes' colour

in vec3 v_world;
in vec3 v_normal;
in vec3 v_local;

layout (location = 0) out vec4 out_color;

void main() {
    vec3 n = normalize(v_normal);
    vec3 to_eye = normalize(u_eye - v_world);
    float rim = pow(1.0 - abs(dot(n, to_eye)), 2.0);
    float alpha = mix(u_color.a, u_rim_alpha, rim);
    vec3 rgb = mix(u_color.rgb * 0.85, min(u_color.rgb * 1.3 + vec3(0.12), vec3(1.0)), rim);
    if (u_dashed > 0.5) {
        float band = step(0.5, fract(v_local.z * u_dash_count));
        alpha = mix(u_rim_alpha * rim * 0.6, alpha, band);
    }
    if (v_world.z < u_ground) {
        // Below the ground (issue 45): diagonal stripes, never mistaken for a tint.
        float stripe = step(0.5, fract((v_world.x + v_world.y + v_world.z) * 25.0));
        rgb = mix(rgb, u_below_color, 0.35 + 0.5 * stripe);
        alpha = max(alpha, 0.2 + 0.3 * stripe);
    }
    if (alpha < 0.004) {
        discard;
    }
    out_color = vec4(rgb, alpha);
}
