//! Numbers and times as the operator reads them: durations, wall-clock time at a session
//! time, digit groups, playback speed, and joint values in the chosen units. One module, so
//! every panel writes a time or a count the same way.

/// `t` seconds as `H:MM:SS` (or `H:MM:SS.mmm`), e.g. `0:41:12`; hours grow as needed.
pub fn format_hms(t: f64, millis: bool) -> String {
    let sign = if t < 0.0 { "-" } else { "" };
    let t = if t.is_finite() { t.abs() } else { 0.0 };
    let total_ms = (t * 1000.0).round() as u64;
    let (h, m, s, ms) = (
        total_ms / 3_600_000,
        total_ms / 60_000 % 60,
        total_ms / 1000 % 60,
        total_ms % 1000,
    );
    if millis {
        format!("{sign}{h}:{m:02}:{s:02}.{ms:03}")
    } else {
        format!("{sign}{h}:{m:02}:{s:02}")
    }
}

/// The wall-clock time of session time `t`: `start_ns + t` (never before the epoch).
pub fn wall_ns(start_ns: u64, t: f64) -> u64 {
    let offset = (t * 1e9).round();
    if offset >= 0.0 {
        start_ns.saturating_add(offset as u64)
    } else {
        start_ns.saturating_sub((-offset) as u64)
    }
}

/// `n` with spaces between groups of three digits: `45 123`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `1.5×`, `0.25×`.
pub fn format_speed(speed: f64) -> String {
    let text = format!("{speed:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}×")
}

/// A joint position with its unit: degrees or radians for a revolute joint, millimetres or
/// metres for a prismatic one.
pub fn format_joint_value(v: f64, prismatic: bool, degrees: bool, millimetres: bool) -> String {
    match (prismatic, degrees, millimetres) {
        (false, true, _) => format!("{:.1}°", v.to_degrees()),
        (false, false, _) => format!("{v:.3} rad"),
        (true, _, true) => format!("{:.1} mm", v * 1000.0),
        (true, _, false) => format!("{v:.4} m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_is_start_plus_elapsed() {
        assert_eq!(wall_ns(1_000_000_000, 1.5), 2_500_000_000);
        assert_eq!(wall_ns(1_000_000_000, -2.0), 0);
    }

    #[test]
    fn durations_and_counts_read_well() {
        assert_eq!(format_hms(2472.0, false), "0:41:12");
        assert_eq!(format_hms(3723.4567, true), "1:02:03.457");
        assert_eq!(format_hms(-1.5, true), "-0:00:01.500");
        assert_eq!(group_digits(45_123), "45 123");
        assert_eq!(group_digits(1_234_567), "1 234 567");
        assert_eq!(group_digits(12), "12");
        assert_eq!(format_speed(0.25), "0.25×");
        assert_eq!(format_speed(10.0), "10×");
        assert_eq!(format_speed(0.1), "0.1×");
    }
}
