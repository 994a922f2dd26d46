//! The simulated manipulator component: a real JAUS component on JUDP, built on `jaus/`.
//! Used by `jaus-ocu sim`, by `demo` (in-process, over loopback UDP) and by tests.
//!
//! `component` is sans-I/O: it takes `(now, datagram)` and `tick(now)` and returns datagrams to
//! send; the socket loop around it (with fault injection) is `crate::net::server`, because
//! `net/` is the only owner of sockets.

pub mod arm_file;
pub mod component;
pub mod motion;
pub mod rng;
