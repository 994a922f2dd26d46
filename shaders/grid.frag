// Procedural grid lines (minor every u_spacing, major every 10), one pixel wide at any
// distance, fading out with distance from the eye; the vehicle's x and y axes tinted.

uniform vec3 u_eye;
uniform float u_ground;
uniform float u_spacing;
uniform float u_fade_distance;
uniform vec4 u_minor_color;
uniform vec4 u_major_color;
uniform vec4 u_x_axis_color;
uniform vec4 u_y_axis_color;

in vec2 v_ground;

layout (location = 0) out vec4 out_color;

// Coverage of the grid line nearest `coord` (lines at integer coordinates), antialiased.
float line_coverage(vec2 coord, float width) {
    vec2 w = fwidth(coord);
    vec2 distance = abs(fract(coord - 0.5) - 0.5) / max(w, vec2(1e-6));
    float coverage = 1.0 - min(min(distance.x, distance.y) / width, 1.0);
    // Lines closer together than a few pixels would only make moiré: let them fade.
    return coverage * (1.0 - smoothstep(0.25, 0.5, max(w.x, w.y)));
}

void main() {
    float minor = line_coverage(v_ground / u_spacing, 1.0);
    float major = line_coverage(v_ground / (u_spacing * 10.0), 1.3);
    vec2 w = fwidth(v_ground);
    float x_axis = 1.0 - min(abs(v_ground.y) / max(1.5 * w.y, 1e-6), 1.0);
    float y_axis = 1.0 - min(abs(v_ground.x) / max(1.5 * w.x, 1e-6), 1.0);

    vec4 color = vec4(u_minor_color.rgb, u_minor_color.a * minor);
    color = mix(color, vec4(u_major_color.rgb, u_major_color.a), major);
    color = mix(color, u_y_axis_color, y_axis);
    color = mix(color, u_x_axis_color, x_axis);

    float distance = length(vec3(v_ground, u_ground) - u_eye);
    color.a *= 1.0 - smoothstep(0.35 * u_fade_distance, u_fade_distance, distance);
    if (color.a < 0.004) {
        discard;
    }
    out_color = color;
}
