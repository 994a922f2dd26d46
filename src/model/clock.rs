//! Wall-clock time for people: ns since the Unix epoch as UTC calendar fields and text. Hand
//! written (proleptic Gregorian, Howard Hinnant's `civil_from_days`) rather than a date crate
//! for three formatters; shared by the recorder's metadata, `inspect` and the timeline.

/// A moment in UTC, split into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    /// Year.
    pub year: i64,
    /// Month 1..=12.
    pub month: u32,
    /// Day 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub minute: u32,
    /// Second 0..=59.
    pub second: u32,
    /// Millisecond 0..=999.
    pub millis: u32,
}

/// Splits ns since the Unix epoch into UTC calendar fields (proleptic Gregorian; Howard
/// Hinnant's `civil_from_days`).
pub fn utc(ns: u64) -> Utc {
    let ms = ns / 1_000_000;
    let days = (ms / 86_400_000) as i64;
    let ms_of_day = ms % 86_400_000;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Utc {
        year,
        month,
        day,
        hour: (ms_of_day / 3_600_000) as u32,
        minute: (ms_of_day / 60_000 % 60) as u32,
        second: (ms_of_day / 1000 % 60) as u32,
        millis: (ms_of_day % 1000) as u32,
    }
}

/// `HH:MM:SS.mmm` in UTC.
pub fn format_utc_time(ns: u64) -> String {
    let u = utc(ns);
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        u.hour, u.minute, u.second, u.millis
    )
}

/// `YYYY-MM-DD` in UTC.
pub fn format_utc_date(ns: u64) -> String {
    let u = utc(ns);
    format!("{:04}-{:02}-{:02}", u.year, u.month, u.day)
}

/// `unix_ns` as RFC 3339 UTC with milliseconds, e.g. `2025-03-01T12:34:56.789Z`.
pub fn rfc3339_utc(unix_ns: u64) -> String {
    let u = utc(unix_ns);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        u.year, u.month, u.day, u.hour, u.minute, u.second, u.millis
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_fields_match_known_instants() {
        // 2024-02-29T23:59:59.999Z, a leap day.
        let ns = 1_709_251_199_999_000_000;
        assert_eq!(
            utc(ns),
            Utc {
                year: 2024,
                month: 2,
                day: 29,
                hour: 23,
                minute: 59,
                second: 59,
                millis: 999
            }
        );
        assert_eq!(format_utc_time(ns), "23:59:59.999");
        assert_eq!(format_utc_date(ns), "2024-02-29");
        assert_eq!(format_utc_date(0), "1970-01-01");
        // 2000-03-01T00:00:00Z.
        assert_eq!(format_utc_date(951_868_800_000_000_000), "2000-03-01");
    }

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29T23:59:59.999Z (leap day of a century leap year).
        assert_eq!(
            rfc3339_utc(951_868_799_999_000_000),
            "2000-02-29T23:59:59.999Z"
        );
        // 2024-12-31T12:00:00Z.
        assert_eq!(
            rfc3339_utc(1_735_646_400_000_000_000),
            "2024-12-31T12:00:00.000Z"
        );
    }
}
