//! The in-memory client + simulator harness (filled in by the next commit).
