//! `--vehicle FILE`: the vehicle file every command that checks clearance reads (ground,
//! obstacles, pairs allowed to touch; `model::clearance::obstacles`).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::model::clearance::obstacles::VehicleGeometry;

/// The vehicle file at `path`, or none (`None`: only the arms' own cylinders are checked).
/// A file that cannot be read or used is an error naming it and what to fix.
pub fn load(path: Option<&Path>) -> Result<Arc<VehicleGeometry>> {
    let Some(path) = path else {
        return Ok(Arc::default());
    };
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--vehicle {}: cannot read it (give the path of a vehicle file, e.g. \
             assets/vehicles/demo.toml)",
            path.display()
        )
    })?;
    Ok(Arc::new(VehicleGeometry::parse(
        &text,
        &path.display().to_string(),
    )?))
}
