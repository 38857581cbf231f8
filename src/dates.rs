//! UTC calendar dates from Unix-epoch nanoseconds, without a date library (the same code must run
//! in the browser, where there is no system time zone database anyway).

/// A UTC date and time of day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcDateTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

/// The UTC calendar date of `utc_ns` ns since 1970-01-01 (H. Hinnant's civil-from-days).
pub fn from_unix_ns(utc_ns: i64) -> UtcDateTime {
    let secs = utc_ns.div_euclid(1_000_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    UtcDateTime {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: rem % 3600 / 60,
        second: rem % 60,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        // 2026-01-25T02:26:42Z (testcuda_report1's session start)
        let c = super::from_unix_ns(1_769_308_002_162_486_533);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2026, 1, 25, 2, 26, 42)
        );
        let e = super::from_unix_ns(0);
        assert_eq!((e.year, e.month, e.day), (1970, 1, 1));
        let leap = super::from_unix_ns(951_782_400_000_000_000); // 2000-02-29
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
    }
}
