//! Offscreen OpenGL without a display or GPU: an EGL context on Mesa's software device, made
//! current either without a surface ([`headless`], for the render tests, which draw into their
//! own textures) or on a pbuffer ([`headless_pbuffer`], for `jaus-ocu screenshot`: the pbuffer
//! is framebuffer 0, so `egui_glow` and the 3D view's paint callback run exactly as in a window).
//!
//! This is the crate's one exception to "no `unsafe`": glutin and glow expose EGL device
//! displays, configs, context and surface creation and GL function loading only as `unsafe`
//! FFI entry points, and there is no safe alternative in this stack (three-d 0.19 dropped its
//! headless context). The calls below are the whole of it; each carries its safety argument.
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
