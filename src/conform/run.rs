//! Running the suites: the facts they share (the interface statement), one check at a time
//! with its frames, and the [`Report`] at the end.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::net::SocketAddr;

use serde::Serialize;

use crate::jaus::core::{QueryIdentification, QueryStatus, QueryType, ServiceRec};
use crate::jaus::message::ids;
use crate::jaus::{JausId, Message};

use super::check::{CheckResult, Outcome, Verdict};
use super::tester::{Direction, Received, Sent, Tester, Wire, name_of};

/// A test suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    /// JUDP: header, sequence numbers, ACK/NAK, fragmentation, duplicates (§4).
    Transport,
    /// Discovery: identification, services, versions (§8.1, §8.2).
    Discovery,
    /// Liveness: the heartbeat (§8.2).
    Liveness,
    /// Events: create, confirm, update, cancel, query (§8.2).
    Events,
    /// `AccessControl`: request, release, authority, timeout (§8.2).
    AccessControl,
    /// Management: the state machine and emergencies (§8.2).
    Management,
    /// The manipulator services (§6, §7); motion only with `--allow-motion`.
    Manipulator,
    /// Malformed and truncated messages (optional: not run unless named).
    Robustness,
}

impl Suite {
    /// Every suite, in the order they run.
    pub const ALL: [Suite; 8] = [
        Suite::Discovery,
        Suite::Transport,
        Suite::Liveness,
        Suite::Events,
        Suite::AccessControl,
        Suite::Management,
        Suite::Manipulator,
        Suite::Robustness,
    ];

    /// The suites run when none is named: all but robustness.
    pub fn defaults() -> Vec<Suite> {
        Self::ALL
            .into_iter()
            .filter(|s| *s != Suite::Robustness)
            .collect()
    }

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Transport => "transport",
            Suite::Discovery => "discovery",
            Suite::Liveness => "liveness",
            Suite::Events => "events",
            Suite::AccessControl => "access-control",
            Suite::Management => "management",
            Suite::Manipulator => "manipulator",
            Suite::Robustness => "robustness",
        }
    }

    /// The suite named `name`; the error lists the names.
    pub fn parse(name: &str) -> Result<Suite, String> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
                format!("no suite `{name}`: the suites are {}", names.join(", "))
            })
    }
}

/// What the run was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The suites, run in [`Suite::ALL`]'s order.
    pub suites: Vec<Suite>,
    /// Authority code of the tester's control requests.
    pub authority: u8,
    /// Motion commands may be sent (small, slow, inside the limits, then stopped).
    pub allow_motion: bool,
}

/// A message the component answered, for the interface statement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Answered {
    /// The query.
    pub query: String,
    /// The reply.
    pub reply: String,
}

/// An event rate the component confirmed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateConfirmed {
    /// The report the event carries.
    pub report: String,
    /// Hz asked for.
    pub requested_hz: f64,
    /// Hz confirmed.
    pub confirmed_hz: f64,
    /// Hz measured over the check's window, when it was measured.
    pub measured_hz: Option<f64>,
}

/// What the checks learnt about the component: shared by later checks and printed as its
/// interface statement.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    /// Its `ReportIdentification` (type and text), when it answered.
    pub identification: Option<String>,
    /// The services it listed for itself; `None` when it did not answer `QueryServices`.
    pub services: Option<Vec<ServiceRec>>,
    /// Queries answered.
    pub answered: BTreeSet<Answered>,
    /// Queries not answered within the reply bound.
    pub unanswered: BTreeSet<String>,
    /// Event rates confirmed.
    pub rates: Vec<RateConfirmed>,
    /// Its access-control timeout in seconds (`ReportTimeout`), when read.
    pub control_timeout_s: Option<u8>,
    /// Named deviations seen, with their reference (e.g. `§9 C13`).
    pub deviations: BTreeMap<String, String>,
}

impl Facts {
    /// Whether it offers the service whose URI ends with `name` (e.g. `core:Events`, matching
    /// `urn:jaus:jss:core:Events`): listed, or inherited by a listed service (§6.1, §8.1: a
    /// component may list only its most derived services). `None` when its services are
    /// unknown, or, for a core service, when it lists a service whose parents we do not know
    /// (it may inherit it).
    pub fn lists(&self, name: &str) -> Option<bool> {
        let services = self.services.as_ref()?;
        let mut unknown_parents = false;
        for r in services {
            let mut uri = r.uri.as_str();
            loop {
                if uri.ends_with(name) {
                    return Some(true);
                }
                match parent(uri) {
                    Parent::Of(p) => uri = p,
                    Parent::Root => break,
                    Parent::Unknown => {
                        unknown_parents = true;
                        break;
                    }
                }
            }
        }
        // Only core services are inherited by services outside the sets we know (mobility
        // drivers inherit Management): nothing else offers a manipulator or IOP service.
        (!unknown_parents || !name.starts_with("core:")).then_some(false)
    }

    /// `Some(not applicable)` when the component's services are known and `name` is not
    /// among them; checks of that service then do not run.
    pub fn requires(&self, name: &str) -> Option<Outcome> {
        (self.lists(name) == Some(false)).then(|| {
            Outcome::not_applicable(format!("the component does not list urn:jaus:jss:{name}"))
        })
    }

    /// Said after "no reply" when the services are unknown.
    pub fn unknown_note(&self) -> &'static str {
        if self.services.is_none() {
            " (its services are unknown: it did not answer QueryServices)"
        } else {
            ""
        }
    }
}

/// A service's parent in the inheritance of the definitions.
enum Parent {
    Of(&'static str),
    Root,
    Unknown,
}

/// The parent of service `uri`: core v1.1 (§8.1), manipulator v2.0 (§6.1), IOP (§7).
fn parent(uri: &str) -> Parent {
    const EVENTS: &str = "urn:jaus:jss:core:Events";
    const ACCESS: &str = "urn:jaus:jss:core:AccessControl";
    const MANAGEMENT: &str = "urn:jaus:jss:core:Management";
    let Some(name) = uri.rsplit(':').next() else {
        return Parent::Unknown;
    };
    if uri.starts_with("urn:jaus:jss:core:") {
        return match name {
            "Transport" => Parent::Root,
            "Events" => Parent::Of("urn:jaus:jss:core:Transport"),
            "AccessControl" | "Liveness" | "Discovery" => Parent::Of(EVENTS),
            "Management" | "Time" => Parent::Of(ACCESS),
            "ListManager" => Parent::Of(MANAGEMENT),
            _ => Parent::Unknown,
        };
    }
    if uri.starts_with("urn:jaus:jss:manipulator:") {
        return match name {
            "ManipulatorSpecificationService"
            | "ManipulatorJointPositionSensor"
            | "ManipulatorJointVelocitySensor"
            | "ManipulatorJointForceTorqueSensor"
            | "PanTiltSpecificationService"
            | "PanTiltJointPositionSensor"
            | "PanTiltJointVelocitySensor" => Parent::Of(EVENTS),
            "ManipulatorEndEffectorPoseSensor"
            | "ManipulatorEndEffectorVelocityStateSensor"
            | "ManipulatorToolOffsetService"
            | "ManipulatorJointMotionProfile"
            | "PanTiltMotionProfileService" => Parent::Of(ACCESS),
            "ManipulatorListDriver" => Parent::Of("urn:jaus:jss:core:ListManager"),
            n if n.ends_with("ListDriver") => {
                Parent::Of("urn:jaus:jss:manipulator:ManipulatorListDriver")
            }
            n if n.ends_with("Driver") || n.starts_with("Primitive") => Parent::Of(MANAGEMENT),
            _ => Parent::Unknown,
        };
    }
    if uri.starts_with("urn:jaus:jss:iop:") {
        // UNCONFIRMED (the IOP documents are not in the reference): a sensor inherits Events,
        // a service that moves the arm Management, as their manipulator siblings do.
        return match name {
            "ManipulatorEndEffectorForceTorqueSensor" => Parent::Of(EVENTS),
            "PresetPose" => Parent::Of(MANAGEMENT),
            _ => Parent::Unknown,
        };
    }
    Parent::Unknown
}

/// Sends `query`, waits for `reply_id` from the target within the reply bound, and notes the
/// answer (or its absence) for the interface statement.
pub fn ask<W: Wire>(
    t: &mut Tester<W>,
    facts: &mut Facts,
    query: &Message,
    reply_id: u16,
) -> io::Result<(Sent, Option<Received>)> {
    let (sent, reply) = t.query(query, reply_id)?;
    if reply.is_some() {
        facts.answered.insert(Answered {
            query: query.name().into(),
            reply: name_of(reply_id),
        });
    } else {
        facts.unanswered.insert(query.name().into());
    }
    Ok((sent, reply))
}

/// A run in progress: the tester, the facts, the results so far.
pub struct Run<'a, W: Wire> {
    /// The tester.
    pub tester: &'a mut Tester<W>,
    /// What was learnt.
    pub facts: Facts,
    /// The options.
    pub options: Options,
    results: Vec<CheckResult>,
    suite: &'static str,
    /// When the component stopped answering (seconds into the run) and the frame of its
    /// last answer: the checks after the one that found it are not run.
    silent: Option<(f64, Option<u32>)>,
}

impl<'a, W: Wire> Run<'a, W> {
    /// A run of `options` with `tester`.
    pub fn new(tester: &'a mut Tester<W>, options: Options) -> Self {
        Run {
            tester,
            facts: Facts::default(),
            options,
            results: Vec::new(),
            suite: "",
            silent: None,
        }
    }

    /// Runs one check: drains the wire, runs `f`, and records its outcome with the frames it
    /// spanned. An I/O error fails the check with the error.
    pub fn check(
        &mut self,
        name: impl Into<String>,
        title: impl Into<String>,
        reference: &'static str,
        f: impl FnOnce(&mut Tester<W>, &mut Facts, &Options) -> io::Result<Outcome>,
    ) {
        let (name, title) = (name.into(), title.into());
        let before = self.tester.frame_count();
        let started = self.tester.now();
        let outcome = if let Some((since, _)) = self.silent {
            Outcome::not_run(format!(
                "not run: the component is silent (no answer since {since:.1} s)"
            ))
        } else {
            let outcome = match self
                .tester
                .drain()
                .and_then(|()| f(self.tester, &mut self.facts, &self.options))
            {
                Ok(o) => o,
                Err(e) => Outcome::fail(format!("the check could not run: {e}")),
            };
            self.silence_of(outcome)
        };
        let seconds = self.tester.now() - started;
        let frames = self.tester.frames_since(before);
        tracing::debug!("conform {}.{name}: {}", self.suite, outcome.verdict);
        self.results.push(CheckResult {
            suite: self.suite,
            name,
            title,
            reference,
            outcome,
            frames,
            seconds,
        });
    }

    /// `outcome` as it stands, unless it failed and the component, asked a query it answered
    /// earlier in the run, does not answer it within the reply bound: then it stopped
    /// answering, said once here with the time and the frame of its last answer, and the
    /// later checks are not run (a dead component is one verdict, not one failure per
    /// check). A live component answers the query at once: a failed check costs it one round
    /// trip.
    fn silence_of(&mut self, outcome: Outcome) -> Outcome {
        if outcome.verdict != Verdict::Fail {
            return outcome;
        }
        // A query it answered before (Management_11 of JTS answers no discovery query).
        let probe: Option<(Message, u16)> = [
            (Message::from(QueryStatus), ids::ReportStatus),
            (
                QueryIdentification {
                    query_type: QueryType::Subsystem,
                }
                .into(),
                ids::ReportIdentification,
            ),
        ]
        .into_iter()
        .find(|(q, r)| {
            self.facts.answered.contains(&Answered {
                query: q.name().into(),
                reply: name_of(*r),
            })
        });
        let Some((query, reply_id)) = probe else {
            return outcome;
        };
        if !matches!(self.tester.query(&query, reply_id), Ok((_, None))) {
            return outcome;
        }
        let last = self.last_answer();
        let since = last.map_or(0.0, |(at, _)| at);
        self.silent = Some((since, last.map(|(_, f)| f)));
        let frame = last.map_or_else(String::new, |(_, f)| format!(", its last answer frame {f}"));
        let mut silent = Outcome::fail(format!(
            "the component stopped answering at {since:.1} s{frame}: after this check {} \
             (answered earlier) got no reply within {:.1} s; the later checks are not run. \
             This check said: {}",
            query.name(),
            self.tester.reply_bound,
            outcome.reason
        ));
        silent.evidence = outcome.evidence;
        silent
    }

    /// The time (seconds into the run) and frame of the component's last datagram.
    fn last_answer(&self) -> Option<(f64, u32)> {
        let addr = self.tester.addr;
        self.tester
            .frames()
            .iter()
            .rev()
            .find(|f| f.direction == Direction::Received && f.remote == addr)
            .map(|f| (f.at, f.number))
    }

    /// Checks from here on belong to `suite`.
    pub fn begin_suite(&mut self, suite: Suite) {
        self.suite = suite.name();
    }

    /// The results so far.
    pub fn results(&self) -> &[CheckResult] {
        &self.results
    }

    /// The report: the results and the interface statement.
    pub fn finish(mut self, header: ReportHeader) -> Report {
        // Grouped by suite, in the order suites run (a closing check joins its suite).
        self.results.sort_by_key(|c| {
            Suite::ALL
                .iter()
                .position(|s| s.name() == c.suite)
                .unwrap_or(usize::MAX)
        });
        Report {
            header,
            target: self.tester.target,
            address: self.tester.addr,
            tester: self.tester.me,
            reply_bound_s: self.tester.reply_bound,
            frames: self.tester.frame_count(),
            malformed_received: self.tester.malformed.len(),
            strangers: self.tester.strangers,
            unrecorded: self.tester.unrecorded,
            suites: self.options.suites.iter().map(|s| s.name()).collect(),
            allow_motion: self.options.allow_motion,
            facts: self.facts,
            checks: self.results,
        }
    }
}

/// What a report says about the run itself.
#[derive(Debug, Clone, Serialize)]
pub struct ReportHeader {
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// Seconds it took.
    pub seconds: f64,
    /// The tool: `jaus-ocu x.y.z`.
    pub tool: String,
    /// The evidence capture's file name, when one was written.
    pub capture: Option<String>,
}

/// A whole run's findings.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// About the run.
    pub header: ReportHeader,
    /// The component under test.
    pub target: JausId,
    /// Where it was.
    pub address: SocketAddr,
    /// The tester's JAUS ID.
    pub tester: JausId,
    /// Seconds each reply was waited for.
    pub reply_bound_s: f64,
    /// Frames in the capture.
    pub frames: u32,
    /// Datagrams received that were not JUDP v2.
    pub malformed_received: usize,
    /// Datagrams from other addresses than the component's once it was found: not read.
    pub strangers: u64,
    /// Datagrams received past the capture's bound: not read, not in the capture.
    pub unrecorded: u64,
    /// The suites run.
    pub suites: Vec<&'static str>,
    /// Whether motion was allowed.
    pub allow_motion: bool,
    /// The interface statement.
    pub facts: Facts,
    /// Every check.
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// Checks with `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.checks
            .iter()
            .filter(|c| c.outcome.verdict == verdict)
            .count()
    }

    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.count(Verdict::Fail) == 0
    }
}
