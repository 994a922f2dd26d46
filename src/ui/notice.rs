//! A message for the operator ([`Notice`]): what a command or a file job came to, and what to
//! do next; how long each stays ([`Notice::expires_after`]), and the list's rules (the same
//! message again merged with a count, at most [`MAX_NOTICES`]). Drawn by
//! [`super::panels::notices`].

/// How serious a notice is (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// Something finished as asked.
    Info,
    /// Done, but not completely (a truncated file).
    Warning,
    /// Failed.
    Error,
}

/// A message for the operator, shown until it expires ([`Notice::expires_after`]) or is
/// dismissed.
#[derive(Debug, Clone)]
pub struct Notice {
    /// How serious.
    pub level: NoticeLevel,
    /// What happened and what to do.
    pub text: String,
    /// When it was first drawn (egui's input time, seconds): it expires from then.
    pub since: Option<f64>,
    /// How many times it was said (the same level and text, merged into this one).
    pub count: u32,
}

impl PartialEq for Notice {
    fn eq(&self, other: &Self) -> bool {
        self.level == other.level && self.text == other.text
    }
}

/// Seconds an Info notice stays once drawn.
pub const INFO_SECONDS: f64 = 6.0;

/// Seconds a warning stays once drawn.
pub const WARNING_SECONDS: f64 = 20.0;

impl Notice {
    /// A notice of `level` saying `text`.
    pub fn new(level: NoticeLevel, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
            since: None,
            count: 1,
        }
    }

    /// Its text as shown: `… (×3)` when it was said three times.
    pub fn shown_text(&self) -> String {
        if self.count > 1 {
            format!("{} (×{})", self.text, self.count)
        } else {
            self.text.clone()
        }
    }

    /// Seconds it stays once drawn; `None`: until dismissed (an error).
    pub fn expires_after(&self) -> Option<f64> {
        match self.level {
            NoticeLevel::Info => Some(INFO_SECONDS),
            NoticeLevel::Warning => Some(WARNING_SECONDS),
            NoticeLevel::Error => None,
        }
    }
}

/// Stamps the notices first drawn at `now` (egui's input time) and drops those expired;
/// returns in how many seconds the next one expires.
pub fn expire(notices: &mut Vec<Notice>, now: f64) -> Option<f64> {
    for n in notices.iter_mut() {
        n.since.get_or_insert(now);
    }
    notices.retain(|n| {
        n.expires_after()
            .zip(n.since)
            .is_none_or(|(after, since)| now - since < after)
    });
    notices
        .iter()
        .filter_map(|n| Some(n.since? + n.expires_after()? - now))
        .reduce(f64::min)
}

/// Notices kept at most (the oldest go first).
pub const MAX_NOTICES: usize = 6;

/// Adds `notice` to `notices`, newest last: the same message (level and text) as one shown
/// already is merged into it, counted, made the newest and shown for its full time again.
pub fn push(notices: &mut Vec<Notice>, notice: Notice) {
    if let Some(i) = notices.iter().position(|n| *n == notice) {
        let mut same = notices.remove(i);
        same.count = same.count.saturating_add(notice.count);
        same.since = None;
        notices.push(same);
        return;
    }
    if notices.len() >= MAX_NOTICES {
        notices.remove(0);
    }
    notices.push(notice);
}
