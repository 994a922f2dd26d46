//! The MCAP layout jaus-ocu writes and reads: raw channels (one per direction and peer,
//! message = the UDP payload untouched), decoded JSON channels with JSON Schema for Foxglove
//! and Lichtblick, and metadata records.
//!
//! SKELETON: being written (issue 6).
