//! Calendar arithmetic on the proleptic Gregorian calendar: conversions between days since 1970-01-01 and
//! calendar, ISO week, ordinal and quarter dates, month arithmetic, and the supported year range.
//!
//! Everything here is pure integer math with no errors except range checks: callers validate fields first.

/// The supported years, as in openCypher implementations built on `java.time`.
pub const MIN_YEAR: i64 = -999_999_999;
pub const MAX_YEAR: i64 = 999_999_999;

pub const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub const SECONDS_PER_DAY: i64 = 86_400;
pub const NANOS_PER_DAY: i64 = SECONDS_PER_DAY * NANOS_PER_SECOND;

/// Days since 1970-01-01 of `year-month-day`. `month` is 1..=12 and `day` 1..=31; out-of-range days roll over.
/// Computed in 128 bits, so years far outside the supported range give a wrong answer rather than a panic.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Howard Hinnant's algorithm, on eras of 400 years.
    let y = year as i128 - if month <= 2 { 1 } else { 0 };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i128;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i128 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i64
}

/// The calendar date of a day number: `(year, month, day)`. Defined for every `i64`.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days as i128 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year as i64, month, day)
}

pub fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

pub fn days_in_year(year: i64) -> u32 {
    if is_leap(year) {
        366
    } else {
        365
    }
}

/// Day numbers of the first and last supported dates.
pub fn min_days() -> i64 {
    days_from_civil(MIN_YEAR, 1, 1)
}

pub fn max_days() -> i64 {
    days_from_civil(MAX_YEAR, 12, 31)
}

pub fn days_in_range(days: i64) -> bool {
    (min_days()..=max_days()).contains(&days)
}

/// ISO day of week: Monday 1 .. Sunday 7.
pub fn day_of_week(days: i64) -> u32 {
    // 1970-01-01 was a Thursday.
    ((days + 3).rem_euclid(7) + 1) as u32
}

/// Day of the year, 1-based.
pub fn ordinal_day(days: i64) -> u32 {
    let (y, _, _) = civil_from_days(days);
    (days - days_from_civil(y, 1, 1) + 1) as u32
}

pub fn quarter(month: u32) -> u32 {
    (month - 1) / 3 + 1
}

/// Day of the quarter, 1-based.
pub fn day_of_quarter(days: i64) -> u32 {
    let (y, m, _) = civil_from_days(days);
    let first = days_from_civil(y, (quarter(m) - 1) * 3 + 1, 1);
    (days - first + 1) as u32
}

pub fn days_in_quarter(year: i64, quarter: u32) -> u32 {
    let first = (quarter - 1) * 3 + 1;
    (first..first + 3).map(|m| days_in_month(year, m)).sum()
}

/// The Monday that starts week 1 of ISO week-year `year` (the week holding the year's first Thursday).
pub fn week_year_start(year: i64) -> i64 {
    let jan4 = days_from_civil(year, 1, 4);
    jan4 - (day_of_week(jan4) as i64 - 1)
}

/// How many ISO weeks week-year `year` has: 52 or 53.
pub fn weeks_in_year(year: i64) -> u32 {
    ((week_year_start(year + 1) - week_year_start(year)) / 7) as u32
}

/// The ISO week date of a day: `(week_year, week, day_of_week)`.
pub fn week_date(days: i64) -> (i64, u32, u32) {
    let (y, _, _) = civil_from_days(days);
    let mut wy = y;
    if days < week_year_start(y) {
        wy = y - 1;
    } else if days >= week_year_start(y + 1) {
        wy = y + 1;
    }
    let week = ((days - week_year_start(wy)) / 7 + 1) as u32;
    (wy, week, day_of_week(days))
}

pub fn from_week_date(week_year: i64, week: u32, day_of_week: u32) -> i64 {
    week_year_start(week_year) + (week as i64 - 1) * 7 + (day_of_week as i64 - 1)
}

pub fn from_ordinal(year: i64, ordinal_day: u32) -> i64 {
    days_from_civil(year, 1, 1) + ordinal_day as i64 - 1
}

pub fn from_quarter(year: i64, quarter: u32, day_of_quarter: u32) -> i64 {
    days_from_civil(year, (quarter - 1) * 3 + 1, 1) + day_of_quarter as i64 - 1
}

/// `days` moved by `months` calendar months, the day of month clamped to the target month's length
/// (2020-01-31 plus one month is 2020-02-29). `None` when the year leaves the supported range.
pub fn add_months(days: i64, months: i64) -> Option<i64> {
    if months == 0 {
        return Some(days);
    }
    let (y, m, d) = civil_from_days(days);
    let total = (y as i128) * 12 + (m as i128 - 1) + months as i128;
    let year = total.div_euclid(12);
    if year < MIN_YEAR as i128 || year > MAX_YEAR as i128 {
        return None;
    }
    let year = year as i64;
    let month = (total.rem_euclid(12) + 1) as u32;
    Some(days_from_civil(year, month, d.min(days_in_month(year, month))))
}

/// Whole calendar months from one date-and-time to another, truncated towards zero, as `java.time` counts them:
/// a month is complete once the day of month and the time of day have been reached again.
pub fn months_between(from_days: i64, from_nanos: i64, to_days: i64, to_nanos: i64) -> i64 {
    let mut end = to_days;
    if to_days > from_days && to_nanos < from_nanos {
        end -= 1;
    } else if to_days < from_days && to_nanos > from_nanos {
        end += 1;
    }
    let (y1, m1, d1) = civil_from_days(from_days);
    let (y2, m2, d2) = civil_from_days(end);
    let packed1 = (y1 * 12 + m1 as i64 - 1) * 32 + d1 as i64;
    let packed2 = (y2 * 12 + m2 as i64 - 1) * 32 + d2 as i64;
    (packed2 - packed1) / 32
}

/// Whole days from one date-and-time to another, truncated towards zero.
pub fn days_between(from_days: i64, from_nanos: i64, to_days: i64, to_nanos: i64) -> i64 {
    let mut end = to_days;
    if to_days > from_days && to_nanos < from_nanos {
        end -= 1;
    } else if to_days < from_days && to_nanos > from_nanos {
        end += 1;
    }
    end - from_days
}

/// Splits seconds since the epoch into a day number and the second of that day.
pub fn split_seconds(seconds: i64) -> (i64, i64) {
    (seconds.div_euclid(SECONDS_PER_DAY), seconds.rem_euclid(SECONDS_PER_DAY))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(days_from_civil(1984, 10, 11)), (1984, 10, 11));
        assert_eq!(day_of_week(days_from_civil(1984, 10, 11)), 4);
        assert_eq!(ordinal_day(days_from_civil(1984, 10, 11)), 285);
        assert_eq!(day_of_quarter(days_from_civil(1984, 11, 11)), 42);
        assert_eq!(civil_from_days(min_days()), (MIN_YEAR, 1, 1));
        assert_eq!(civil_from_days(max_days()), (MAX_YEAR, 12, 31));
    }

    #[test]
    fn iso_weeks_from_the_tck() {
        let ymd = |d: i64| civil_from_days(d);
        assert_eq!(ymd(from_week_date(1816, 1, 1)), (1816, 1, 1));
        assert_eq!(ymd(from_week_date(1816, 52, 1)), (1816, 12, 23));
        assert_eq!(ymd(from_week_date(1817, 1, 1)), (1816, 12, 30));
        assert_eq!(ymd(from_week_date(1817, 30, 1)), (1817, 7, 21));
        assert_eq!(ymd(from_week_date(1818, 53, 1)), (1818, 12, 28));
        assert_eq!(ymd(from_week_date(1819, 1, 1)), (1819, 1, 4));
        assert_eq!(ymd(from_week_date(1817, 1, 2)), (1816, 12, 31));
        assert_eq!(ymd(from_week_date(1984, 10, 3)), (1984, 3, 7));
        assert_eq!(weeks_in_year(1818), 53);
        assert_eq!(weeks_in_year(1817), 52);
        assert_eq!(week_date(days_from_civil(1984, 1, 1)), (1983, 52, 7));
        assert_eq!(week_date(days_from_civil(1984, 10, 11)), (1984, 41, 4));
        assert_eq!(week_date(days_from_civil(1984, 11, 11)), (1984, 45, 7));
    }

    #[test]
    fn month_arithmetic_clamps() {
        let d = days_from_civil(2020, 1, 31);
        assert_eq!(civil_from_days(add_months(d, 1).unwrap()), (2020, 2, 29));
        assert_eq!(civil_from_days(add_months(d, -13).unwrap()), (2018, 12, 31));
        assert_eq!(add_months(max_days(), 1), None);
    }

    #[test]
    fn months_between_counts_like_java_time() {
        let m = |a: (i64, u32, u32), b: (i64, u32, u32)| {
            months_between(days_from_civil(a.0, a.1, a.2), 0, days_from_civil(b.0, b.1, b.2), 0)
        };
        assert_eq!(m((1984, 10, 11), (2015, 6, 24)), 368);
        assert_eq!(m((2018, 3, 11), (2016, 6, 24)), -20);
        assert_eq!(m((2020, 1, 31), (2020, 2, 29)), 0);
    }

    proptest! {
        #[test]
        fn civil_round_trip(days in min_days()..=max_days()) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m));
            prop_assert!(d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn week_and_ordinal_round_trip(days in min_days() + 7..=max_days() - 7) {
            let (wy, w, dow) = week_date(days);
            prop_assert!(w >= 1 && w <= weeks_in_year(wy));
            prop_assert_eq!(from_week_date(wy, w, dow), days);
            let (y, m, _) = civil_from_days(days);
            prop_assert_eq!(from_ordinal(y, ordinal_day(days)), days);
            prop_assert_eq!(from_quarter(y, quarter(m), day_of_quarter(days)), days);
        }

        #[test]
        fn consecutive_days_advance_weekday(days in -1_000_000_000i64..1_000_000_000) {
            prop_assert_eq!(day_of_week(days + 1), day_of_week(days) % 7 + 1);
        }
    }
}
