//! The simulated manipulator component: a real JAUS component on JUDP, built on `jaus/`.
//! Used by `jaus-ocu sim`, by `demo` (in-process, over loopback UDP) and by tests.
//!
//! `component` is sans-I/O: it takes `(now, datagram)` and `tick(now)` and returns datagrams to
//! send; `server` is the thin socket loop around it, with fault injection.

pub mod arm_file;
pub mod component;
pub mod motion;
pub mod rng;
pub mod server;
