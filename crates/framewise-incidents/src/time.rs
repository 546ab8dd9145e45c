//! `at` timestamps: UTC, ISO 8601, milliseconds, `Z` (`2026-12-01T16:20:00.000Z`), the form
//! JavaScript's `Date.prototype.toISOString` writes, so records sort as strings.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `at` for now.
pub fn now_iso() -> String {
    iso_from_system_time(SystemTime::now())
}

/// `at` for a wall-clock instant (instants before 1970 clamp to the epoch).
pub fn iso_from_system_time(at: SystemTime) -> String {
    iso_from_unix_ms(
        at.duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_millis() as i64,
    )
}

/// `at` for milliseconds since the Unix epoch.
pub fn iso_from_unix_ms(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(86_400_000);
    let ms_of_day = unix_ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (second, milli) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, in 400-year eras).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(iso_from_unix_ms(0), "1970-01-01T00:00:00.000Z");
        // `new Date(951782400123).toISOString()`: a leap day.
        assert_eq!(
            iso_from_unix_ms(951_782_400_123),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            iso_from_unix_ms(1_796_142_000_000),
            "2026-12-01T16:20:00.000Z"
        );
        assert_eq!(iso_from_unix_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            iso_from_unix_ms(4_107_542_399_999),
            "2100-02-28T23:59:59.999Z"
        );
    }
}
