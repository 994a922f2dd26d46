// The cached picture, texel for texel (the texture has the viewport's size, nearest
// filtering): what the scene rendered, without lighting or blending again.

uniform sampler2D u_picture;

in vec2 v_uv;

layout (location = 0) out vec4 out_color;

void main() {
    out_color = texture(u_picture, v_uv);
}
