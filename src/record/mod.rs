//! Recording, replay and capture import.
pub mod capture;
