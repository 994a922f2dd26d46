//! Offscreen OpenGL without a display or GPU: an EGL context on Mesa's software device, made
//! current without a surface, for `jaus-ocu screenshot` and the render tests.
//!
//! This is the crate's one exception to "no `unsafe`": glutin and glow expose EGL device
//! displays, configs, context creation and GL function loading only as `unsafe` FFI entry
//! points, and there is no safe alternative in this stack (three-d 0.19 dropped its headless
//! context). The four calls below are the whole of it; each carries its safety argument.
#![allow(unsafe_code)]

use std::sync::Arc;

use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::config::{Api, ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::*;

/// Debian packages that provide Mesa's EGL and software rasterizer.
pub const PACKAGES: &str = "libegl1 libegl-mesa0 libgl1-mesa-dri";

/// A GL context current on this thread without any surface. Field order is drop order: the
/// GL wrappers go before the EGL context they call into. Not `Send`: use it on one thread.
pub struct Headless {
    /// three-d's context over the GL functions.
    pub gl: three_d::Context,
    /// The raw glow context (egui_glow's painter takes this).
    pub glow: Arc<eframe::glow::Context>,
    _context: PossiblyCurrentContext,
    _display: Display,
}

/// Creates the context, or says why it could not and which packages provide EGL.
pub fn headless() -> Result<Headless, String> {
    let devices: Vec<Device> = Device::query_devices()
        .map_err(|e| format!("cannot enumerate EGL devices ({e}); install Mesa's EGL: apt-get install {PACKAGES}"))?
        .collect();
    let device = devices
        .iter()
        .find(|d| d.extensions().contains("EGL_MESA_device_software"))
        .ok_or_else(|| {
            let found: Vec<_> = devices.iter().map(|d| (d.name(), d.vendor())).collect();
            format!("no EGL device has EGL_MESA_device_software (found {found:?}); install Mesa's EGL: apt-get install {PACKAGES}")
        })?;
    // SAFETY: no raw display handle is given; the device comes from `query_devices`.
    let display = unsafe { Display::with_device(device, None) }
        .map_err(|e| format!("cannot open an EGL display on the software device: {e}"))?;
    let template = ConfigTemplateBuilder::new()
        .with_api(Api::OPENGL)
        .with_surface_type(ConfigSurfaceTypes::empty())
        .build();
    // SAFETY: the template refers to no native window.
    let config = unsafe { display.find_configs(template) }
        .map_err(|e| format!("EGL has no configs: {e}"))?
        .next()
        .ok_or("the software EGL device offers no desktop OpenGL config")?;
    let attributes = ContextAttributesBuilder::new()
        .with_profile(GlProfile::Core)
        .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
        .build(None);
    // SAFETY: `config` comes from `display`; no window handle is involved.
    let context = unsafe { display.create_context(&config, &attributes) }
        .map_err(|e| format!("cannot create an OpenGL 3.3 core context: {e}"))?
        .make_current_surfaceless()
        .map_err(|e| format!("cannot make the context current without a surface: {e}"))?;
    // SAFETY: the context is current on this thread and outlives every GL call made through
    // the returned wrappers (field order of `Headless`, which is not `Send`).
    let glow = Arc::new(unsafe {
        eframe::glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name))
    });
    let gl = three_d::Context::from_gl_context(glow.clone()).map_err(|e| format!("three-d cannot use the EGL context: {e}"))?;
    Ok(Headless {
        gl,
        glow,
        _context: context,
        _display: display,
    })
}
