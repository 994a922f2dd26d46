//! The decoded side of a session, one pipeline for every sink: wire records → the replay
//! [`Observer`] → [`Update`]s → the decoded JSON channels (`/jaus/*`, [`format`]), the
//! arm-state summary ([`summary`]) with each arm's clearance ([`clearance`]: one tracker of
//! every arm, fed from the summaries' arm state whenever positions, a specification or
//! presets change; a pair entering the warning band, the stop margin or contact is an event
//! on `/jaus/events` and a warning on `/foxglove/log`), the Foxglove channels ([`FoxgloveStream`]), the operator's
//! notes and one metadata record per arm. The MCAP recorder
//! ([`crate::record::recorder`]) writes what it hands out into a file, the live view server
//! ([`crate::record::live`]) sends it to Foxglove viewers: the same messages, built by this
//! code, so one Foxglove layout works live and on a recording.
//!
//! Sans-I/O: the caller feeds records (with their log time) and ticks, and writes each
//! [`Out`] it is handed. Each message says whether it is *latched* — the newest of its kind
//! for its arm (specification, summary, scene, transforms), what a reader that starts late
//! needs at once.
//!
//! [`format`]: crate::record::format
//! [`clearance`]: crate::record::clearance
//! [`summary`]: crate::record::summary

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::clearance::obstacles::VehicleGeometry;
use crate::model::events::Note;
use crate::model::update::{ArmFact, ComponentId, MAX_ARMS, NetFact, Signal, Update};
use crate::net::tap::WireRecord;
use crate::record::clearance::{ClearanceEvent, ClearanceWatch};
use crate::record::format::{self, DecodedTopic};
use crate::record::foxglove::{FoxgloveStream, FoxgloveTopic, LogLevel, SceneLook};
use crate::record::observer::{Observer, ObserverStats};
use crate::record::summary::{self, Summaries};

/// Spacing of the decoded samples per channel while a sink is behind: 10 ms, the highest
/// default event rate (end-effector force/torque, 100 Hz).
pub const THIN_INTERVAL_NS: u64 = 10_000_000;

/// Shortest log time between two clearance measurements, ns: 1 ms, the fastest an arm
/// reports its positions. A flood of positions costs at most a thousand measurements a
/// second ([`THIN_INTERVAL_NS`] apart while a sink is behind); the newest positions are
/// measured at the next record or tick once it has passed.
pub const CLEARANCE_INTERVAL_NS: u64 = 1_000_000;

/// A JSON channel of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// A decoded JAUS channel.
    Decoded(DecodedTopic),
    /// The arm-state summary, `/jaus/arm_state`.
    ArmState,
    /// A Foxglove channel.
    Foxglove(FoxgloveTopic),
    /// The operator's notes, `/ocu/notes`.
    Notes,
}

impl Channel {
    /// Every channel, in [`Channel::index`] order.
    pub const ALL: [Channel; 12] = [
        Channel::Decoded(DecodedTopic::JointPositions),
        Channel::Decoded(DecodedTopic::JointVelocities),
        Channel::Decoded(DecodedTopic::JointEfforts),
        Channel::Decoded(DecodedTopic::JointForceTorques),
        Channel::Decoded(DecodedTopic::ForceTorque),
        Channel::Decoded(DecodedTopic::Specification),
        Channel::Decoded(DecodedTopic::Events),
        Channel::ArmState,
        Channel::Foxglove(FoxgloveTopic::Transforms),
        Channel::Foxglove(FoxgloveTopic::Scene),
        Channel::Foxglove(FoxgloveTopic::Log),
        Channel::Notes,
    ];

    /// Position in [`Channel::ALL`], for per-channel tables.
    pub fn index(self) -> usize {
        match self {
            Channel::Decoded(d) => d.index(),
            Channel::ArmState => DecodedTopic::ALL.len(),
            Channel::Foxglove(f) => DecodedTopic::ALL.len() + 1 + f as usize,
            Channel::Notes => DecodedTopic::ALL.len() + 1 + FoxgloveTopic::ALL.len(),
        }
    }

    /// The topic.
    pub fn topic(self) -> &'static str {
        match self {
            Channel::Decoded(d) => d.topic(),
            Channel::ArmState => summary::ARM_STATE_TOPIC,
            Channel::Foxglove(f) => f.topic(),
            Channel::Notes => format::NOTES_TOPIC,
        }
    }

    /// The schema's name and its JSON Schema text.
    pub fn schema(self) -> (&'static str, &'static str) {
        match self {
            Channel::Decoded(d) => (d.schema_name(), d.schema()),
            Channel::ArmState => (summary::SCHEMA_ARM_STATE_NAME, summary::SCHEMA_ARM_STATE),
            Channel::Foxglove(f) => f.schema(),
            Channel::Notes => (format::SCHEMA_NOTE_NAME, format::SCHEMA_NOTE),
        }
    }

    /// The channel of `topic`, if it is one of the pipeline's.
    pub fn from_topic(topic: &str) -> Option<Channel> {
        Self::ALL.into_iter().find(|c| c.topic() == topic)
    }
}

/// What the pipeline hands its sink.
#[derive(Debug)]
pub enum Out<'a> {
    /// A JSON message.
    Message {
        /// Its channel.
        channel: Channel,
        /// Its log time, ns since the Unix epoch.
        log_time: u64,
        /// The JSON text.
        bytes: &'a [u8],
        /// The arm it is about, if one.
        arm: Option<ComponentId>,
        /// The newest of its kind for its arm: a late reader needs it at once.
        latched: bool,
    },
    /// An arm's metadata record (`arm/S.N.C`: its joints, ID and name), once per arm, when
    /// its first specification is seen.
    ArmMetadata {
        /// The record's name ([`format::arm_metadata_name`]).
        name: String,
        /// Its keys and values.
        metadata: BTreeMap<String, String>,
    },
}

/// How the pipeline is set up.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// The session's time origin, ns since the Unix epoch.
    pub start_ns: u64,
    /// Also the Foxglove channels, drawn with this look (`None`: none).
    pub foxglove: Option<SceneLook>,
    /// The vehicle file clearance measures against (`None`: the arms' own cylinders only,
    /// no ground and no obstacles).
    pub vehicle: Option<Arc<VehicleGeometry>>,
}

/// The pipeline (see the module doc).
#[derive(Debug)]
pub struct Pipeline {
    start_ns: u64,
    /// Made when the first record arrives.
    observer: Option<Observer>,
    updates: Vec<Update>,
    json: Vec<u8>,
    foxglove: Option<FoxgloveStream>,
    summaries: Summaries,
    clearance: ClearanceWatch,
    /// Log time of the last clearance update, ns (for thinning while behind).
    clearance_ns: Option<u64>,
    clearance_events: Vec<ClearanceEvent>,
    /// The sink was behind at the last record.
    behind: bool,
    names: HashMap<ComponentId, String>,
    /// Arms whose metadata record is out (at most [`MAX_ARMS`]: the observer follows no
    /// more).
    arms_written: Vec<ComponentId>,
    /// Log time of the last sample handed out per arm and sample channel, for thinning.
    last_sample_ns: Vec<(Option<ComponentId>, [Option<u64>; DecodedTopic::ALL.len()])>,
    thinned: u64,
    /// The newest log time seen.
    now_ns: u64,
}

impl Pipeline {
    /// A pipeline with nothing seen yet.
    pub fn new(cfg: PipelineConfig) -> Self {
        Self {
            start_ns: cfg.start_ns,
            observer: None,
            updates: Vec::new(),
            json: Vec::new(),
            foxglove: cfg.foxglove.map(FoxgloveStream::new),
            summaries: Summaries::new(cfg.start_ns),
            clearance: ClearanceWatch::new(cfg.vehicle),
            clearance_ns: None,
            clearance_events: Vec::new(),
            behind: false,
            names: HashMap::new(),
            arms_written: Vec::new(),
            last_sample_ns: Vec::new(),
            thinned: 0,
            now_ns: 0,
        }
    }

    /// Decodes one record and hands `emit` what it yields, at the record's time. With
    /// `behind` (the sink's queue is filling up), a decoded joint or force/torque sample
    /// is handed out only if [`THIN_INTERVAL_NS`] passed since the last one on its channel
    /// for its arm; the rest is counted ([`Pipeline::thinned`]).
    pub fn observe<E>(
        &mut self,
        rec: &WireRecord,
        behind: bool,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start_ns = self.start_ns;
        self.observer
            .get_or_insert_with(|| Observer::new(start_ns))
            .observe(rec, &mut self.updates);
        self.apply(std::iter::empty(), rec.t_ns, behind, emit)
    }

    /// Hands out `updates` as if the observer had decoded them from one record at
    /// `log_time` (a source already decoded: the model's own facts, tests); `behind` as for
    /// [`Pipeline::observe`].
    pub fn apply<E>(
        &mut self,
        updates: impl IntoIterator<Item = Update>,
        log_time: u64,
        behind: bool,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.updates.extend(updates);
        self.now_ns = self.now_ns.max(log_time);
        if !self.updates.is_empty() {
            self.hand_out(log_time, behind, emit)?;
        }
        self.behind = behind;
        self.tick(log_time, emit)
    }

    /// Time passes with nothing received (`now_ns`, ns since the Unix epoch): measures the
    /// newest positions' clearance if not yet measured, and hands out the summaries that are
    /// due (the age of an arm's last report grows while it is silent).
    pub fn tick<E>(
        &mut self,
        now_ns: u64,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.measure(now_ns, self.behind, emit)?;
        if !self.summaries.any_due(now_ns) {
            return Ok(());
        }
        let due: Vec<ComponentId> = self.summaries.due(now_ns).collect();
        for arm in due {
            if self
                .summaries
                .write(arm, now_ns, &self.clearance, &mut self.json)
            {
                emit(Out::Message {
                    channel: Channel::ArmState,
                    log_time: now_ns,
                    bytes: &self.json,
                    arm: Some(arm),
                    latched: true,
                })?;
            }
        }
        Ok(())
    }

    /// The end of the input at `end_ns`: closes every arm's trailing silence.
    pub fn finish<E>(
        &mut self,
        end_ns: u64,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(observer) = &mut self.observer {
            observer.finish(end_ns, &mut self.updates);
            self.hand_out(end_ns, false, emit)?;
        }
        Ok(())
    }

    /// An operator's note at its session time: on the notes channel and as a
    /// `foxglove.Log` line.
    pub fn note<E>(
        &mut self,
        note: &Note,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = if note.t.is_finite() {
            note.t.max(0.0)
        } else {
            0.0
        };
        let log_time = self.start_ns.saturating_add((t * 1e9) as u64);
        format::encode_note(note, &mut self.json);
        emit(Out::Message {
            channel: Channel::Notes,
            log_time,
            bytes: &self.json,
            arm: None,
            latched: false,
        })?;
        let name = match &note.arm {
            Some(arm) => format!("{arm}/note"),
            None => "note".to_owned(),
        };
        crate::record::foxglove::log(
            &mut self.json,
            log_time,
            LogLevel::Info,
            &name,
            &note.label(),
        );
        emit(Out::Message {
            channel: Channel::Foxglove(FoxgloveTopic::Log),
            log_time,
            bytes: &self.json,
            arm: None,
            latched: false,
        })
    }

    /// Measures clearance at `log_time` when positions, a specification or presets changed
    /// (at most every [`CLEARANCE_INTERVAL_NS`], [`THIN_INTERVAL_NS`] while behind), and
    /// hands out an event per pair that entered a zone.
    fn measure<E>(
        &mut self,
        log_time: u64,
        behind: bool,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let interval = if behind {
            THIN_INTERVAL_NS
        } else {
            CLEARANCE_INTERVAL_NS
        };
        if self
            .clearance_ns
            .is_some_and(|l| log_time.saturating_sub(l) < interval)
        {
            return Ok(());
        }
        if !self.summaries.take_moved() {
            return Ok(());
        }
        self.clearance_ns = Some(log_time);
        let mut events = std::mem::take(&mut self.clearance_events);
        events.clear();
        self.clearance
            .update(&self.summaries.arm_facts(), log_time, &mut events);
        let t = log_time.saturating_sub(self.start_ns) as f64 * 1e-9;
        for e in &events {
            self.summaries.touch(e.arm);
            format::encode_clearance_event(&mut self.json, t, e);
            emit(Out::Message {
                channel: Channel::Decoded(DecodedTopic::Events),
                log_time,
                bytes: &self.json,
                arm: Some(e.arm),
                latched: false,
            })?;
            if self.foxglove.is_some() {
                crate::record::foxglove::log(
                    &mut self.json,
                    log_time,
                    LogLevel::Warning,
                    &format!("{}/clearance", e.arm),
                    &e.label(),
                );
                emit(Out::Message {
                    channel: Channel::Foxglove(FoxgloveTopic::Log),
                    log_time,
                    bytes: &self.json,
                    arm: Some(e.arm),
                    latched: false,
                })?;
            }
        }
        self.clearance_events = events;
        Ok(())
    }

    /// Decoded samples left out while behind.
    pub fn thinned(&self) -> u64 {
        self.thinned
    }

    /// What the observer has seen (none before the first record).
    pub fn observer_stats(&self) -> Option<ObserverStats> {
        self.observer.as_ref().map(Observer::stats)
    }

    /// The session's time origin, ns since the Unix epoch.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Hands out the observer's pending updates at `log_time`.
    fn hand_out<E>(
        &mut self,
        log_time: u64,
        behind: bool,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut updates = std::mem::take(&mut self.updates);
        for u in updates.drain(..) {
            self.arm_facts(&u, emit)?;
            if let Some(stream) = &mut self.foxglove {
                let arm = u.arm_id();
                stream.update(&u, log_time, &mut |topic, bytes| {
                    emit(Out::Message {
                        channel: Channel::Foxglove(topic),
                        log_time,
                        bytes,
                        arm,
                        latched: topic != FoxgloveTopic::Log,
                    })
                })?;
            }
            if behind && self.thin(&u, log_time) {
                continue;
            }
            let Some(topic) = format::encode_update(&u, &mut self.json) else {
                continue;
            };
            emit(Out::Message {
                channel: Channel::Decoded(topic),
                log_time,
                bytes: &self.json,
                arm: u.arm_id(),
                latched: topic == DecodedTopic::Specification,
            })?;
        }
        // Keep the allocation for the next record.
        self.updates = updates;
        Ok(())
    }

    /// Names, arm metadata and the summaries' facts of one update.
    fn arm_facts<E>(
        &mut self,
        u: &Update,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match u {
            Update::Net(NetFact::Component { info, .. }) => {
                if let Some(name) = &info.identification {
                    if self.names.len() >= 1024 && !self.names.contains_key(&info.id) {
                        // Bounded as the observer's own tables (hostile input only).
                        self.names.clear();
                    }
                    self.names.insert(info.id, name.clone());
                    self.summaries.name(info.id, name);
                }
            }
            Update::Arm { arm, fact } => {
                self.summaries.apply(*arm, fact);
                if let ArmFact::Specification { spec, .. } = fact
                    && !self.arms_written.contains(arm)
                    && self.arms_written.len() < MAX_ARMS
                {
                    self.arms_written.push(*arm);
                    let mut metadata = BTreeMap::from([
                        (
                            format::KEY_JOINTS.to_owned(),
                            spec.joint_count().to_string(),
                        ),
                        (format::KEY_COMPONENT_ID.to_owned(), arm.to_string()),
                    ]);
                    if let Some(name) = self.names.get(arm) {
                        metadata.insert(format::KEY_NAME.to_owned(), name.clone());
                    }
                    emit(Out::ArmMetadata {
                        name: format::arm_metadata_name(*arm),
                        metadata,
                    })?;
                }
            }
            Update::Net(_) => {}
        }
        Ok(())
    }

    /// Whether to leave sample `u` out (thinning while behind); counts it.
    fn thin(&mut self, u: &Update, log_time: u64) -> bool {
        let Some(topic) = sample_topic(u) else {
            return false;
        };
        let arm = u.arm_id();
        let i = self
            .last_sample_ns
            .iter()
            .position(|(a, _)| *a == arm)
            .unwrap_or_else(|| {
                self.last_sample_ns
                    .push((arm, [None; DecodedTopic::ALL.len()]));
                self.last_sample_ns.len() - 1
            });
        let last = &mut self.last_sample_ns[i].1[topic.index()];
        if last.is_some_and(|l| log_time.saturating_sub(l) < THIN_INTERVAL_NS) {
            self.thinned += 1;
            return true;
        }
        *last = Some(log_time);
        false
    }
}

/// The decoded channel of a sample update (the updates thinning may leave out), if it is one.
fn sample_topic(u: &Update) -> Option<DecodedTopic> {
    Some(match u.coalesce_key()?.1 {
        Signal::JointPositions => DecodedTopic::JointPositions,
        Signal::JointVelocities => DecodedTopic::JointVelocities,
        Signal::JointEfforts => DecodedTopic::JointEfforts,
        Signal::JointForceTorques => DecodedTopic::JointForceTorques,
        Signal::EndEffectorForceTorque => DecodedTopic::ForceTorque,
        Signal::CurrentPose | Signal::Status => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_channel_has_its_own_index_and_topic() {
        for (i, c) in Channel::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i, "{c:?}");
            assert_eq!(Channel::from_topic(c.topic()), Some(c));
            let (_, schema) = c.schema();
            let v: serde_json::Value = serde_json::from_str(schema).unwrap();
            assert_eq!(v["type"], "object", "{c:?}");
        }
    }
}
