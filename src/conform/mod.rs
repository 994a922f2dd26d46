//! `jaus-ocu conform`: a conformance check of one JAUS component at the wire. The tester
//! ([`tester`]) frames every datagram itself on a plain socket ([`crate::net::link`]), the
//! suites ([`suites`], one file each) run checks that each end in a verdict with its reason,
//! its reference and the frames that prove it ([`check`]), and the run ([`run`]) collects
//! them with what was learnt (the interface statement) into a [`run::Report`], written as
//! text, Markdown, HTML, `JUnit` XML or JSON ([`report`]) beside the evidence capture
//! ([`evidence`]).
//!
//! Inside the folder, lower first: check < tester < run < suites < target < evidence < report.

pub mod check;
pub mod evidence;
pub mod report;
pub mod run;
pub mod suites;
pub mod target;
pub mod tester;
