//! Placeholder until issue 6 lands.
fn main() {}
