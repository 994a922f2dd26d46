//! The simulated manipulator component: a real JAUS component on JUDP, built on `jaus/` and
//! `net/` (the simulator uses the network side, never the reverse). Used by `jaus-ocu sim`, by
//! `demo` (in-process, over loopback UDP) and by tests.
//!
//! `component` is sans-I/O: it takes `(now, datagram)` and `tick(now)` and returns datagrams to
//! send; `host` is the socket loop around it (with fault injection); `harness` wires the real
//! client to simulated components in memory under a fake clock (tests, screenshots, benches);
//! `hostile` makes the datagrams of an untrusted sender (`jaus-ocu flood`, issue 29).

pub mod arm_file;
pub mod component;
pub mod harness;
pub mod host;
pub mod hostile;
pub mod motion;
pub mod vehicle;
