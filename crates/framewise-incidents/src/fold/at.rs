//! Reading `at` timestamps and window bounds back into milliseconds since the Unix epoch.
//!
//! Records write `at` as `2026-12-01T16:20:00.000Z`; people type bounds as that, without the
//! fraction, with an offset (`+02:00`), or as a bare date (`2026-12-01`, midnight UTC). What
//! does not parse is `None`: a record without a readable time is left out of every fold, as
//! the reference's `Date.parse` leaves it out.

/// Milliseconds since the Unix epoch of an ISO 8601 / RFC 3339 instant, or of a bare date
/// (its midnight, UTC). `None` when `text` is neither.
pub fn unix_ms_from_iso(text: &str) -> Option<i64> {
    let text = text.trim();
    let bytes = text.as_bytes();
    let (year, month, day) = (
        digits(bytes, 0, 4)?,
        digits(bytes, 5, 2)?,
        digits(bytes, 8, 2)?,
    );
    if bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') {
        return None;
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if bytes.len() == 10 {
        return Some(days * 86_400_000);
    }
    if !matches!(bytes.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute) = (digits(bytes, 11, 2)?, digits(bytes, 14, 2)?);
    if bytes.get(13) != Some(&b':') {
        return None;
    }
    // Seconds are optional (`2026-12-01T16:20Z`), as `Date.parse` allows.
    let (second, mut at) = if bytes.get(16) == Some(&b':') {
        (digits(bytes, 17, 2)?, 19)
    } else {
        (0, 16)
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut milli = 0i64;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        let fraction = text.get(start..at)?;
        if fraction.is_empty() {
            return None;
        }
        // Milliseconds: the first three digits, padded; finer digits are dropped.
        let padded = format!("{fraction:0<3}");
        milli = padded.get(..3)?.parse().ok()?;
    }
    let offset_minutes = match text.get(at..)? {
        "" | "Z" | "z" => 0,
        zone => {
            let sign = match zone.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let zone = zone.as_bytes();
            let (h, m) = match zone.len() {
                6 if zone.get(3) == Some(&b':') => (digits(zone, 1, 2)?, digits(zone, 4, 2)?),
                5 => (digits(zone, 1, 2)?, digits(zone, 3, 2)?),
                3 => (digits(zone, 1, 2)?, 0),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 60 + m)
        }
    };
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + milli)
}

/// The decimal number in `bytes[at..at + len]`, all digits.
fn digits(bytes: &[u8], at: usize, len: usize) -> Option<i64> {
    let field = bytes.get(at..at + len)?;
    field.iter().try_fold(0i64, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
    })
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iso_from_unix_ms;

    #[test]
    fn reads_back_what_records_write() {
        for ms in [0, 951_782_400_123, 1_796_142_000_000, -1, 4_107_542_399_999] {
            assert_eq!(unix_ms_from_iso(&iso_from_unix_ms(ms)), Some(ms), "{ms}");
        }
    }

    #[test]
    fn accepts_what_people_type() {
        let noon = unix_ms_from_iso("2026-12-01T12:00:00.000Z");
        assert_eq!(unix_ms_from_iso("2026-12-01T12:00:00Z"), noon);
        assert_eq!(unix_ms_from_iso("2026-12-01T12:00Z"), noon);
        assert_eq!(unix_ms_from_iso("2026-12-01 12:00:00"), noon);
        assert_eq!(unix_ms_from_iso("2026-12-01T14:00:00+02:00"), noon);
        assert_eq!(unix_ms_from_iso("2026-12-01T07:00:00-0500"), noon);
        assert_eq!(
            unix_ms_from_iso("2026-12-01T12:00:00.5Z"),
            noon.map(|n| n + 500)
        );
        assert_eq!(
            unix_ms_from_iso("2026-12-01T12:00:00.123456Z"),
            noon.map(|n| n + 123)
        );
        assert_eq!(
            unix_ms_from_iso("2026-12-01"),
            noon.map(|n| n - 12 * 3_600_000)
        );
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for junk in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-02-30",
            "2026-12-01T25:00:00Z",
            "2026-12-01T12:00:00.Z",
            "2026-12-01T12:00:00 UTC",
            "2026/12/01",
            "2026-12-01T12",
        ] {
            assert_eq!(unix_ms_from_iso(junk), None, "{junk}");
        }
        assert!(unix_ms_from_iso("2024-02-29").is_some(), "a leap day");
        assert_eq!(unix_ms_from_iso("2023-02-29"), None);
    }
}
