//! The session's memory budget: how much the history of a session (live or replay) may hold
//! before its older samples are kept as a min/max envelope only (`model::history`).
//!
//! The budget is, in order: `--memory-limit` for this run, else the one set in the settings
//! (View → Memory), else [`DEFAULT_SHARE`] of the machine's memory, between [`AUTO_FLOOR`] and
//! [`AUTO_CEILING`]. Rerun's viewer defaults to 75 % of RAM; an OCU shares the laptop with the
//! operator's other tools for a whole shift, so it takes a quarter, and never more than 4 GiB:
//! twelve hours of joint positions and force/torque at 1 kHz held as an envelope take about a
//! tenth of that.

use std::fmt;

/// Share of physical memory the automatic budget takes.
pub const DEFAULT_SHARE: f64 = 0.25;

/// The automatic budget never exceeds this, bytes (4 GiB).
pub const AUTO_CEILING: u64 = 4 << 30;

/// The automatic budget is at least this, bytes (256 MiB), however small the machine.
pub const AUTO_FLOOR: u64 = 256 << 20;

/// The automatic budget when the machine's memory cannot be read, bytes (1 GiB).
pub const UNKNOWN_RAM_BUDGET: u64 = 1 << 30;

/// The smallest budget accepted from the operator, bytes (32 MiB): below it the envelope of a
/// long session alone would not fit.
pub const MIN_LIMIT: u64 = 32 << 20;

/// Where the budget in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetSource {
    /// `--memory-limit` on the command line (this run only).
    CommandLine,
    /// Set in the settings (View → Memory).
    Settings,
    /// [`DEFAULT_SHARE`] of the machine's memory.
    Automatic,
}

/// The budget in force and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Bytes the session's history may hold.
    pub bytes: u64,
    /// Where it came from.
    pub source: BudgetSource,
}

impl Budget {
    /// The budget: `command_line` (as given), else `settings` (at least [`MIN_LIMIT`]: the file
    /// may have been edited by hand), else the automatic one for `ram` bytes of physical
    /// memory (`None`: unknown).
    pub fn choose(command_line: Option<u64>, settings: Option<u64>, ram: Option<u64>) -> Self {
        match (command_line, settings) {
            // `parse_limit` has refused less than `MIN_LIMIT` already (tests set less).
            (Some(bytes), _) => Self {
                bytes,
                source: BudgetSource::CommandLine,
            },
            (None, Some(bytes)) => Self {
                bytes: bytes.max(MIN_LIMIT),
                source: BudgetSource::Settings,
            },
            (None, None) => Self {
                bytes: automatic(ram),
                source: BudgetSource::Automatic,
            },
        }
    }

    /// The budget as `Vehicle::set_memory_budget` takes it.
    pub fn as_usize(self) -> usize {
        usize::try_from(self.bytes).unwrap_or(usize::MAX)
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match self.source {
            BudgetSource::CommandLine => "set by --memory-limit for this run",
            BudgetSource::Settings => "set in View → Memory",
            BudgetSource::Automatic => {
                "automatic: a quarter of this machine's memory, at most 4 GiB"
            }
        };
        write!(f, "{} ({from})", format_bytes(self.bytes))
    }
}

/// The automatic budget for `ram` bytes of physical memory.
pub fn automatic(ram: Option<u64>) -> u64 {
    ram.map_or(UNKNOWN_RAM_BUDGET, |r| {
        ((r as f64 * DEFAULT_SHARE) as u64).clamp(AUTO_FLOOR, AUTO_CEILING)
    })
}

/// The machine's physical memory, bytes (`MemTotal` of `/proc/meminfo`; `None` where there is
/// no such file).
pub fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

/// `MemTotal` of a `/proc/meminfo` text, bytes.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => value.checked_mul(1024),
        Some(_) => None,
    }
}

/// A size as the operator writes it: `512M`, `2G`, `1.5GiB`, `800MB`, `1073741824`, or a
/// share of this machine's memory, `25%`. Units are binary (M = MiB, G = GiB). The result is
/// at least [`MIN_LIMIT`]; an error says what was wrong and what is accepted.
pub fn parse_limit(text: &str, ram: Option<u64>) -> Result<u64, String> {
    let forms = "write a size such as 512M, 2G, 1.5GiB or 25% (of this machine's memory)";
    let s = text.trim();
    let bytes = if let Some(share) = s.strip_suffix('%') {
        let share: f64 = share
            .trim()
            .parse()
            .map_err(|_| format!("memory limit {text:?} is not a number of percent: {forms}"))?;
        if !(share > 0.0 && share <= 100.0) {
            return Err(format!(
                "memory limit {text:?}: a share must be above 0 % and at most 100 %"
            ));
        }
        let ram = ram.ok_or_else(|| {
            format!(
                "memory limit {text:?}: this machine's memory could not be read \
                 (/proc/meminfo); give a size such as 2G instead"
            )
        })?;
        (ram as f64 * share / 100.0) as u64
    } else {
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (number, unit) = s.split_at(split);
        let number: f64 = number
            .parse()
            .map_err(|_| format!("memory limit {text:?} does not start with a number: {forms}"))?;
        let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            other => {
                return Err(format!(
                    "memory limit {text:?}: unknown unit {other:?}: {forms}"
                ));
            }
        };
        if !number.is_finite() || number <= 0.0 {
            return Err(format!("memory limit {text:?} must be above zero: {forms}"));
        }
        (number * scale as f64) as u64
    };
    if bytes < MIN_LIMIT {
        return Err(format!(
            "memory limit {text:?} is {}: at least {} is needed (the envelope of a long \
             session alone takes tens of MB)",
            format_bytes(bytes),
            format_bytes(MIN_LIMIT)
        ));
    }
    Ok(bytes)
}

/// A byte count for people: `812 MB`, `1.9 GB` (binary units, as [`parse_limit`] reads them).
pub fn format_bytes(bytes: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    const GIB: f64 = (1u64 << 30) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GB", b / GIB)
    } else if b >= 10.0 * MIB {
        format!("{:.0} MB", b / MIB)
    } else if b >= MIB {
        format!("{:.1} MB", b / MIB)
    } else {
        format!("{:.0} kB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_automatic_budget_is_a_quarter_of_memory_between_floor_and_ceiling() {
        assert_eq!(automatic(Some(8 * GIB)), 2 * GIB);
        assert_eq!(automatic(Some(64 * GIB)), AUTO_CEILING);
        assert_eq!(automatic(Some(512 << 20)), AUTO_FLOOR);
        assert_eq!(automatic(None), UNKNOWN_RAM_BUDGET);
    }

    #[test]
    fn the_command_line_wins_over_the_settings_and_both_over_automatic() {
        let ram = Some(16 * GIB);
        let b = Budget::choose(Some(GIB), Some(2 * GIB), ram);
        assert_eq!((b.bytes, b.source), (GIB, BudgetSource::CommandLine));
        let b = Budget::choose(None, Some(2 * GIB), ram);
        assert_eq!((b.bytes, b.source), (2 * GIB, BudgetSource::Settings));
        let b = Budget::choose(None, None, ram);
        assert_eq!((b.bytes, b.source), (4 * GIB, BudgetSource::Automatic));
        // A settings file edited by hand below the least is raised to it.
        assert_eq!(Budget::choose(None, Some(1), ram).bytes, MIN_LIMIT);
    }

    #[test]
    fn limits_parse_in_binary_units_and_shares() {
        let ram = Some(8 * GIB);
        assert_eq!(parse_limit("512M", ram), Ok(512 << 20));
        assert_eq!(parse_limit("2G", ram), Ok(2 * GIB));
        assert_eq!(parse_limit("1.5GiB", ram), Ok(3 * GIB / 2));
        assert_eq!(parse_limit(" 800 MB ", ram), Ok(800 << 20));
        assert_eq!(parse_limit("1073741824", ram), Ok(GIB));
        assert_eq!(parse_limit("25%", ram), Ok(2 * GIB));
    }

    #[test]
    fn bad_limits_say_what_is_accepted() {
        let ram = Some(8 * GIB);
        for bad in ["", "lots", "2X", "-1G", "0", "150%", "0%", "nan%"] {
            let e = parse_limit(bad, ram).expect_err(bad);
            assert!(e.contains("memory limit"), "{bad}: {e}");
        }
        assert!(parse_limit("2X", ram).unwrap_err().contains("512M, 2G"));
        assert!(
            parse_limit("1M", ram)
                .unwrap_err()
                .contains("at least 32 MB")
        );
        assert!(
            parse_limit("10%", None)
                .unwrap_err()
                .contains("give a size")
        );
    }

    #[test]
    fn meminfo_is_read_in_kilobytes() {
        let text = "MemTotal:       24588128 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_meminfo(text), Some(24_588_128 * 1024));
        assert_eq!(parse_meminfo("nothing"), None);
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(format_bytes(812 << 20), "812 MB");
        assert_eq!(format_bytes(2 * GIB), "2.0 GB");
        assert_eq!(format_bytes(3 << 10), "3 kB");
        assert_eq!(format_bytes(5 << 19), "2.5 MB");
    }
}
