//! jaus-ocu: an operator control unit for SAE JAUS robotic manipulators.
//!
//! See ARCHITECTURE.md for the module map and the data flow from socket to pixel.

pub mod cli;
pub mod conform;
pub mod jaus;
pub mod model;
pub mod net;
pub mod record;
pub mod sim;
pub mod ui;
