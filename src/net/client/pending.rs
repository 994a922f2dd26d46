//! The parts of a command in flight the client keeps per arm: [`Pending`] (a command sent and
//! not yet judged, with its tries and backoff) and [`Transition`] (a preset move in progress).
//! A leaf: the arm's record (`arm.rs`) holds them, `commands.rs` drives them.

use crate::jaus::iop::TransitionStatus;
use crate::model::command::CommandKind;

/// First interval between tries, s (doubled after each, at most [`MAX_BACKOFF`]); the fixed
/// interval between the tries of a status command and between the status queries that
/// follow its arrival.
pub(super) const FIRST_BACKOFF: f64 = 0.25;
/// Longest interval between tries, s.
pub(super) const MAX_BACKOFF: f64 = 1.0;
/// How many tries of a status command are remembered for their ACK: every try of 4 s at
/// [`FIRST_BACKOFF`] apart (twice the default command time).
pub(super) const ACKED_TRIES: usize = 16;
/// How long a refused transition waits for the status that says why, s.
pub(super) const REASON_WAIT: f64 = 0.5;

/// A command sent and not yet judged.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) kind: CommandKind,
    /// When it was first sent.
    pub(super) sent: f64,
    /// How many times it was sent.
    pub(super) tries: u8,
    /// When it is sent again (if still pending).
    pub(super) next_try: f64,
    pub(super) backoff: f64,
    /// A status received after the arm acknowledged the command (so after it arrived)
    /// showed the opposite of the effect: the evidence of a refusal.
    pub(super) contrary: bool,
    /// The JUDP sequence numbers of the tries that asked for an ACK (the last
    /// [`ACKED_TRIES`]): a late ACK of an early try still says the command arrived.
    pub(super) acked_seqs: [Option<u16>; ACKED_TRIES],
    /// When the arm first acknowledged a try: the command arrived.
    pub(super) arrived: Option<f64>,
}

impl Pending {
    pub(super) fn new(kind: CommandKind, now: f64) -> Self {
        Self {
            kind,
            sent: now,
            tries: 1,
            next_try: now + FIRST_BACKOFF,
            backoff: FIRST_BACKOFF,
            contrary: false,
            acked_seqs: [None; ACKED_TRIES],
            arrived: None,
        }
    }

    /// Remembers the sequence number of a try that asked for an ACK.
    pub(super) fn asked_ack(&mut self, seq: Option<u16>) {
        if seq.is_some() {
            self.acked_seqs.rotate_right(1);
            self.acked_seqs[0] = seq;
        }
    }

    /// Schedules the next try after one was sent at `now`.
    pub(super) fn retried(&mut self, now: f64) {
        self.tries = self.tries.saturating_add(1);
        self.backoff = (self.backoff * 2.0).min(MAX_BACKOFF);
        self.next_try = now + self.backoff;
    }

    /// Schedules the next try of a status command after one was sent at `now`: a fixed
    /// [`FIRST_BACKOFF`] apart. A status command is idempotent and a few bytes, and each try
    /// lost on a lossy link (30 % each way loses half the round trips) is a quarter second
    /// of the operator's wait, not a doubling one; eight tries in 2 s leave a 0.5 % chance
    /// that none arrives and is acknowledged there, four with backoff left 7 %.
    pub(super) fn retried_steadily(&mut self, now: f64) {
        self.tries = self.tries.saturating_add(1);
        self.backoff = FIRST_BACKOFF;
        self.next_try = now + FIRST_BACKOFF;
    }

    /// When the verdict is due: `timeout` after the first try, but a command the arm
    /// acknowledged with no status seen since waits for that status until `timeout` after
    /// the acknowledgement (at most twice `timeout` in all): the arrival is known, the
    /// evidence of its effect is a status away, and "no answer" would hide an answer the
    /// next query brings.
    pub(super) fn verdict_at(&self, timeout: f64) -> f64 {
        match self.arrived {
            Some(at) if !self.contrary => (self.sent + timeout).max(at + timeout),
            _ => self.sent + timeout,
        }
    }

    /// When the next thing happens: a try, or the verdict ([`Pending::verdict_at`]).
    pub(super) fn deadline(&self, timeout: f64) -> f64 {
        self.next_try.min(self.verdict_at(timeout))
    }
}

/// A preset move in progress.
#[derive(Debug, Clone)]
pub(super) struct Transition {
    pub(super) pose_id: u8,
    /// Every request ID used for it (a retry takes a new one); the last is the current one.
    pub(super) request_ids: Vec<u8>,
    pub(super) sent: f64,
    /// Tries in a row without a sign of progress (moving towards the pose, or at it).
    pub(super) tries: u8,
    pub(super) next_check: f64,
    pub(super) backoff: f64,
    /// A pose report arrived since the last check: moving to our pose (`Some(true)`) or not.
    pub(super) progress: Option<bool>,
    /// The arm refused the current request: when, and its status code; the outcome waits
    /// up to [`REASON_WAIT`] for the status that says why.
    pub(super) refused: Option<(f64, TransitionStatus)>,
}

impl Transition {
    pub(super) fn deadline(&self, timeout: f64) -> f64 {
        let d = self.next_check.min(self.sent + timeout);
        match self.refused {
            Some((t, _)) => d.min(t + REASON_WAIT),
            None => d,
        }
    }
}
