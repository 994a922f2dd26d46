//! The crate's one `unsafe` module, named for what it holds: the foreign calls (EGL, GL,
//! glibc).
//!
//! Offscreen OpenGL without a display or GPU: an EGL context on Mesa's software device, made
//! current either without a surface ([`headless`], for the render tests, which draw into their
//! own textures) or on a pbuffer ([`headless_pbuffer`], for `jaus-ocu screenshot`: the pbuffer
//! is framebuffer 0, so `egui_glow` and the 3D view's paint callback run exactly as in a window).
//!
//! It also holds [`GlPicture`], the 3D view's cached picture: a framebuffer of its own that
//! three-d renders into and that is copied to the window with `glBlitFramebuffer` (under a
//! software renderer a memory copy, where drawing it as a textured quad shaded every pixel:
//! about 6 ms a frame at 1280×800, ARCHITECTURE.md "Where a frame's time goes").
//!
//! And [`keep_frame_memory`]: the window's allocator settings (`mallopt`, an FFI call).
//!
//! This is the crate's one exception to "no `unsafe`": glutin and glow expose EGL device
//! displays, configs, context and surface creation, GL function loading, and GL calls that
//! three-d does not wrap (framebuffer objects of our own, blits) only as `unsafe` FFI entry
//! points, and there is no safe alternative in this stack (three-d 0.19 dropped its headless
//! context and keeps its blit private). The calls below are the whole of it; each carries its
//! safety argument.
#![allow(unsafe_code)]

use std::num::NonZeroU32;
use std::sync::Arc;

use glutin::api::egl::config::Config;
use glutin::api::egl::context::{NotCurrentContext, PossiblyCurrentContext};
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::api::egl::surface::Surface;
use glutin::config::{Api, ConfigSurfaceTypes, ConfigTemplate, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::*;
use glutin::surface::{PbufferSurface, SurfaceAttributesBuilder};

use eframe::glow::{self, HasContext};

/// Debian packages that provide Mesa's EGL and software rasterizer.
pub const PACKAGES: &str = "libegl1 libegl-mesa0 libgl1-mesa-dri";

/// A GL context current on this thread without any surface. Field order is drop order: the
/// GL wrappers go before the EGL context they call into. Not `Send`: use it on one thread.
pub struct Headless {
    /// three-d's context over the GL functions.
    pub gl: three_d::Context,
    /// The raw glow context (`egui_glow`'s painter takes this).
    pub glow: Arc<eframe::glow::Context>,
    _context: PossiblyCurrentContext,
    _display: Display,
}

/// A GL context current on this thread with an RGBA8 pbuffer (24-bit depth) of a fixed size:
/// framebuffer 0 is the pbuffer, so whatever draws "to the screen" draws into it, and
/// `glReadPixels` reads it back. Field order is drop order (GL wrapper, context, surface,
/// display). Not `Send`: use it on one thread.
pub struct HeadlessSurface {
    /// The raw glow context (`egui_glow`'s painter takes this).
    pub glow: Arc<eframe::glow::Context>,
    /// Width of the pbuffer, pixels.
    pub width: u32,
    /// Height of the pbuffer, pixels.
    pub height: u32,
    _context: PossiblyCurrentContext,
    _surface: Surface<PbufferSurface>,
    _display: Display,
}

/// Opens an EGL display on Mesa's software device (`EGL_MESA_device_software`).
fn software_display() -> Result<Display, String> {
    let devices: Vec<Device> = Device::query_devices()
        .map_err(|e| {
            format!(
                "cannot enumerate EGL devices ({e}); install Mesa's EGL: apt-get install {PACKAGES}"
            )
        })?
        .collect();
    let device = devices
        .iter()
        .find(|d| d.extensions().contains("EGL_MESA_device_software"))
        .ok_or_else(|| {
            let found: Vec<_> = devices.iter().map(|d| (d.name(), d.vendor())).collect();
            format!(
                "no EGL device has EGL_MESA_device_software (found {found:?}); install Mesa's EGL: apt-get install {PACKAGES}"
            )
        })?;
    // SAFETY: no raw display handle is given; the device comes from `query_devices`.
    unsafe { Display::with_device(device, None) }
        .map_err(|e| format!("cannot open an EGL display on the software device: {e}"))
}

/// The first config of `display` that matches `template` and `accept`.
fn find_config(
    display: &Display,
    template: ConfigTemplate,
    accept: impl Fn(&Config) -> bool,
) -> Result<Config, String> {
    // SAFETY: the template refers to no native window.
    let mut configs = unsafe { display.find_configs(template) }
        .map_err(|e| format!("EGL has no configs: {e}"))?;
    configs.find(|c| accept(c)).ok_or_else(|| {
        "the software EGL device offers no matching desktop OpenGL config".to_string()
    })
}

/// An OpenGL 3.3 core context on `config` (not yet current).
fn create_context(display: &Display, config: &Config) -> Result<NotCurrentContext, String> {
    let attributes = ContextAttributesBuilder::new()
        .with_profile(GlProfile::Core)
        .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
        .build(None);
    // SAFETY: `config` comes from `display`; no window handle is involved.
    unsafe { display.create_context(config, &attributes) }
        .map_err(|e| format!("cannot create an OpenGL 3.3 core context: {e}"))
}

/// Loads the GL functions of the context current on this thread.
///
/// # Safety
/// A context of `display` must be current on this thread, and stay current (and alive) for
/// as long as the returned context is used.
unsafe fn load_gl(display: &Display) -> Arc<eframe::glow::Context> {
    // SAFETY: the caller guarantees a current context of `display` that outlives the loader's
    // use; `get_proc_address` returns that display's GL entry points.
    Arc::new(unsafe {
        eframe::glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name))
    })
}

/// Creates the context, or says why it could not and which packages provide EGL.
pub fn headless() -> Result<Headless, String> {
    let display = software_display()?;
    let template = ConfigTemplateBuilder::new()
        .with_api(Api::OPENGL)
        .with_surface_type(ConfigSurfaceTypes::empty())
        .build();
    let config = find_config(&display, template, |_| true)?;
    let context = create_context(&display, &config)?
        .make_current_surfaceless()
        .map_err(|e| format!("cannot make the context current without a surface: {e}"))?;
    // SAFETY: the context is current on this thread and outlives every GL call made through
    // the returned wrappers (field order of `Headless`, which is not `Send`).
    let glow = unsafe { load_gl(&display) };
    let gl = three_d::Context::from_gl_context(glow.clone())
        .map_err(|e| format!("three-d cannot use the EGL context: {e}"))?;
    Ok(Headless {
        gl,
        glow,
        _context: context,
        _display: display,
    })
}

/// Creates a context with a `width` × `height` RGBA8 pbuffer (24-bit depth) and makes it
/// current, or says why it could not (and which packages provide EGL).
pub fn headless_pbuffer(width: u32, height: u32) -> Result<HeadlessSurface, String> {
    let (Some(w), Some(h)) = (NonZeroU32::new(width), NonZeroU32::new(height)) else {
        return Err(format!(
            "a pbuffer needs a non-zero size, not {width}x{height}"
        ));
    };
    let display = software_display()?;
    let template = ConfigTemplateBuilder::new()
        .with_api(Api::OPENGL)
        .with_surface_type(ConfigSurfaceTypes::PBUFFER)
        .with_alpha_size(8)
        .with_depth_size(24)
        .build();
    // EGL lists configs with at least the requested sizes; prefer exactly RGBA8, depth 24.
    let exact = |c: &Config| {
        matches!(
            c.color_buffer_type(),
            Some(glutin::config::ColorBufferType::Rgb {
                r_size: 8,
                g_size: 8,
                b_size: 8
            })
        ) && c.alpha_size() == 8
            && c.depth_size() >= 24
            && c.num_samples() == 0
    };
    let config = find_config(&display, template.clone(), exact)
        .or_else(|_| find_config(&display, template, |_| true))
        .map_err(|e| format!("{e} (wanted a pbuffer with RGBA8 and 24-bit depth)"))?;
    let attributes = SurfaceAttributesBuilder::<PbufferSurface>::new().build(w, h);
    // SAFETY: `config` comes from `display`; a pbuffer involves no native window or pixmap.
    let surface = unsafe { display.create_pbuffer_surface(&config, &attributes) }
        .map_err(|e| format!("cannot create a {width}x{height} EGL pbuffer: {e}"))?;
    let context = create_context(&display, &config)?
        .make_current(&surface)
        .map_err(|e| format!("cannot make the context current on the pbuffer: {e}"))?;
    // SAFETY: the context is current on this thread (on the pbuffer) and outlives every GL
    // call made through the returned wrapper (field order of `HeadlessSurface`, not `Send`).
    let glow = unsafe { load_gl(&display) };
    Ok(HeadlessSurface {
        glow,
        width,
        height,
        _context: context,
        _surface: surface,
        _display: display,
    })
}

/// A picture the GL context keeps: an RGBA8 colour texture and a 24-bit depth buffer of a
/// fixed size, attached to a framebuffer object of its own. three-d renders into it
/// (`RenderTarget::from_framebuffer` with [`GlPicture::framebuffer`], then `into_framebuffer`
/// so three-d does not delete it); [`GlPicture::blit`] copies its colour into the framebuffer
/// bound for drawing. Use it only on the thread and in the context that made it (the paint
/// callback's, or a test's headless context); dropping it deletes the GL objects.
pub struct GlPicture {
    gl: Arc<glow::Context>,
    framebuffer: glow::Framebuffer,
    colour: glow::Texture,
    depth: glow::Renderbuffer,
    width: u32,
    height: u32,
}

impl GlPicture {
    /// Makes a `width` × `height` picture in the context current on this thread (`gl` is its
    /// function table), or says why the driver refused it.
    pub fn new(gl: &Arc<glow::Context>, width: u32, height: u32) -> Result<Self, String> {
        let (Ok(w), Ok(h)) = (i32::try_from(width), i32::try_from(height)) else {
            return Err(format!("a picture of {width}x{height} pixels is too large"));
        };
        if w == 0 || h == 0 {
            return Err(format!(
                "a picture needs a non-zero size, not {width}x{height}"
            ));
        }
        // SAFETY: `gl` is the function table of the context current on this thread (the
        // caller's contract above). Every call creates, configures or binds objects made here,
        // with sizes checked above and no client memory (`Slice(None)` allocates only); the
        // bindings this changes (texture, renderbuffer, both framebuffer targets) are restored
        // before returning, so egui's and three-d's state is as they left it.
        unsafe {
            let framebuffers_before = (
                gl.get_parameter_framebuffer(glow::DRAW_FRAMEBUFFER_BINDING),
                gl.get_parameter_framebuffer(glow::READ_FRAMEBUFFER_BINDING),
            );
            let texture_before = gl.get_parameter_texture(glow::TEXTURE_BINDING_2D);
            let colour = gl.create_texture()?;
            gl.bind_texture(glow::TEXTURE_2D, Some(colour));
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA8 as i32,
                w,
                h,
                0,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelUnpackData::Slice(None),
            );
            for filter in [glow::TEXTURE_MIN_FILTER, glow::TEXTURE_MAG_FILTER] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, filter, glow::NEAREST as i32);
            }
            gl.bind_texture(glow::TEXTURE_2D, texture_before);
            let depth = gl.create_renderbuffer()?;
            gl.bind_renderbuffer(glow::RENDERBUFFER, Some(depth));
            gl.renderbuffer_storage(glow::RENDERBUFFER, glow::DEPTH_COMPONENT24, w, h);
            gl.bind_renderbuffer(glow::RENDERBUFFER, None);
            let framebuffer = gl.create_framebuffer()?;
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            gl.framebuffer_texture_2d(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::TEXTURE_2D,
                Some(colour),
                0,
            );
            gl.framebuffer_renderbuffer(
                glow::FRAMEBUFFER,
                glow::DEPTH_ATTACHMENT,
                glow::RENDERBUFFER,
                Some(depth),
            );
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, framebuffers_before.0);
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, framebuffers_before.1);
            let picture = Self {
                gl: Arc::clone(gl),
                framebuffer,
                colour,
                depth,
                width,
                height,
            };
            if status == glow::FRAMEBUFFER_COMPLETE {
                Ok(picture)
            } else {
                // Dropping `picture` deletes what was made.
                Err(format!(
                    "the GL driver cannot render into a {width}x{height} RGBA8 picture with a 24-bit depth buffer (framebuffer status 0x{status:x})"
                ))
            }
        }
    }

    /// The framebuffer object to render into (three-d: `RenderTarget::from_framebuffer`).
    pub fn framebuffer(&self) -> glow::Framebuffer {
        self.framebuffer
    }

    /// Width and height, pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Copies the picture, pixel for pixel, to `(x, y)` (bottom-left, pixels) of the
    /// framebuffer bound for drawing, within its scissor box when the scissor test is on.
    pub fn blit(&self, x: i32, y: i32) {
        // Sizes were checked to fit `i32` in `new`.
        let (w, h) = (self.width as i32, self.height as i32);
        // SAFETY: the picture's context is current on this thread (the type's contract); the
        // read framebuffer is this picture's complete framebuffer, the draw framebuffer is the
        // caller's, the rectangles lie within the picture (GL clips the destination), and the
        // read binding is restored afterwards.
        unsafe {
            let read_before = self
                .gl
                .get_parameter_framebuffer(glow::READ_FRAMEBUFFER_BINDING);
            self.gl
                .bind_framebuffer(glow::READ_FRAMEBUFFER, Some(self.framebuffer));
            self.gl.blit_framebuffer(
                0,
                0,
                w,
                h,
                x,
                y,
                x + w,
                y + h,
                glow::COLOR_BUFFER_BIT,
                glow::NEAREST,
            );
            self.gl
                .bind_framebuffer(glow::READ_FRAMEBUFFER, read_before);
        }
    }

    /// Copies this picture's colour, pixel for pixel, over the whole of `into` (a picture of
    /// the same size; of another size the copy is cut or leaves an edge), whatever scissor box
    /// is set: [`GlPicture::blit`] with `into` bound for drawing. The caller's draw binding and
    /// scissor test are kept.
    pub fn copy_into(&self, into: &GlPicture) {
        // SAFETY: both pictures belong to the context current on this thread (the type's
        // contract) and `into`'s framebuffer is complete; the draw binding and the scissor
        // test are restored after the blit.
        unsafe {
            let gl = &self.gl;
            let draw_before = gl.get_parameter_framebuffer(glow::DRAW_FRAMEBUFFER_BINDING);
            let scissor_before = gl.is_enabled(glow::SCISSOR_TEST);
            gl.disable(glow::SCISSOR_TEST);
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, Some(into.framebuffer));
            self.blit(0, 0);
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, draw_before);
            if scissor_before {
                gl.enable(glow::SCISSOR_TEST);
            }
        }
    }
}

impl Drop for GlPicture {
    fn drop(&mut self) {
        // SAFETY: the objects were made in this context (current on this thread: the type's
        // contract) and are deleted once; GL unbinds a deleted framebuffer that is bound.
        unsafe {
            self.gl.delete_framebuffer(self.framebuffer);
            self.gl.delete_renderbuffer(self.depth);
            self.gl.delete_texture(self.colour);
        }
    }
}

/// Keeps the memory a frame frees for the next frame instead of giving it back to the system
/// at once. A frame allocates and frees megabytes (egui's meshes, Mesa's vertex buffers);
/// glibc returned the top of the heap after each frame (`brk`) and the next frame faulted the
/// pages in again, zeroed: about 3 % of a core in the live window at 1280×800 under llvmpipe
/// (ARCHITECTURE.md, "Where a frame's time goes"). Up to 64 MiB of freed memory now stays with
/// the process, and blocks up to 32 MiB come from the heap (glibc's own upper bound for its
/// adaptive threshold) rather than from a mapping of their own. Only glibc has `mallopt`;
/// elsewhere this does nothing.
pub fn keep_frame_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only sets glibc's allocator parameters (it takes the arena lock
        // itself, so any thread may call it at any time); the values are within the ranges
        // glibc accepts, and a refused value is reported as 0 and leaves the default.
        let set = unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20) == 1
                && libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) == 1
        };
        if !set {
            tracing::debug!("glibc refused the allocator settings; frames may fault pages in");
        }
    }
}

/// The OpenGL renderer's name (`GL_RENDERER`), such as "llvmpipe (LLVM 19.1.7, 256 bits)"
/// for Mesa's software renderer.
pub fn renderer_name(gl: &glow::Context) -> String {
    // SAFETY: `glGetString(GL_RENDERER)` reads a constant string of the current context;
    // eframe calls its app creator with its context current on this thread, and glow copies
    // the string before returning.
    unsafe { gl.get_parameter_string(glow::RENDERER) }
}
