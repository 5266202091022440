//! Numbers, times, memory sizes, booleans and log levels, parsed the way
//! Slurm's C parser reads them (base-prefixed integers, `K` multipliers,
//! `UNLIMITED`/`INFINITE`, `d-h:m:s` times, `str_to_mbytes` suffixes).

use std::fmt;

use nom::branch::alt;
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map, opt};
use nom::sequence::{pair, preceded, terminated, tuple};
use nom::IResult;

/// Slurm's `INFINITE` (u32 all-ones).
pub const INFINITE: u32 = u32::MAX;
/// Slurm's `NO_VAL`.
pub const NO_VAL: u32 = u32::MAX - 1;
pub const INFINITE16: u16 = u16::MAX;
pub const NO_VAL16: u16 = u16::MAX - 1;
pub const INFINITE64: u64 = u64::MAX;
pub const NO_VAL64: u64 = u64::MAX - 1;

/// A time limit: either unlimited or a finite amount (unit given by the
/// function that produced it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeLimit {
    Unlimited,
    Finite(u32),
}

impl TimeLimit {
    /// The value as Slurm stores it on the wire (`INFINITE` when unlimited).
    pub fn as_u32(self) -> u32 {
        match self {
            TimeLimit::Unlimited => INFINITE,
            TimeLimit::Finite(v) => v,
        }
    }
}

impl fmt::Display for TimeLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeLimit::Unlimited => f.write_str("UNLIMITED"),
            TimeLimit::Finite(v) => write!(f, "{v}"),
        }
    }
}

pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn is_unlimited_word(s: &str) -> bool {
    s.eq_ignore_ascii_case("UNLIMITED") || s.eq_ignore_ascii_case("INFINITE")
}

/// Digits as `%d` reads them: saturating like strtol, then narrowed to C
/// `int` (so odd inputs match stock).
fn digits(i: &str) -> IResult<&str, i64> {
    map(digit1, |d: &str| {
        d.bytes().fold(0i64, |v, c| {
            v.saturating_mul(10).saturating_add(i64::from(c - b'0'))
        })
    })(i)
}

fn int(i: &str) -> IResult<&str, i32> {
    map(digits, |v| v as i32)(i)
}

fn colon_int(i: &str) -> IResult<&str, i32> {
    preceded(char(':'), int)(i)
}

/// `-D`: scanf reads it as a negative day count.
fn negative_days(i: &str) -> IResult<&str, [i32; 4]> {
    map(preceded(char('-'), digits), |d| {
        [d.saturating_neg() as i32, 0, 0, 0]
    })(i)
}

/// `D-`, `D-H`, `D-H:M`, `D-H:M:S`.
fn with_days(i: &str) -> IResult<&str, [i32; 4]> {
    map(
        tuple((
            terminated(int, char('-')),
            opt(pair(int, opt(pair(colon_int, opt(colon_int))))),
        )),
        |(d, hms)| match hms {
            None => [d, 0, 0, 0],
            Some((h, None)) => [d, h, 0, 0],
            Some((h, Some((m, sec)))) => [d, h, m, sec.unwrap_or(0)],
        },
    )(i)
}

/// `M`, `M:S`, `H:M:S`.
fn clock(i: &str) -> IResult<&str, [i32; 4]> {
    map(
        pair(int, opt(pair(colon_int, opt(colon_int)))),
        |(a, rest)| match rest {
            None => [0, 0, a, 0],
            Some((b, None)) => [0, 0, a, b],
            Some((b, Some(c))) => [0, a, b, c],
        },
    )(i)
}

/// Days, hours, minutes, seconds of a whole time string. (`with_days`
/// and `clock` may both read the leading number: twice at most.)
fn time_fields(i: &str) -> IResult<&str, [i32; 4]> {
    all_consuming(alt((negative_days, with_days, clock)))(i)
}

/// Upstream `time_str2secs`: seconds, `-1` for unlimited, `-2` (NO_VAL) on
/// error. Kept with C `int` arithmetic so odd inputs match stock.
pub fn time_str2secs(s: &str) -> i32 {
    if s == "-1" || is_unlimited_word(s) {
        return -1;
    }
    let Ok((_, [d, h, m, sec])) = time_fields(s) else {
        return NO_VAL as i32;
    };
    d.wrapping_mul(86400)
        .wrapping_add(h.wrapping_mul(3600))
        .wrapping_add(m.wrapping_mul(60))
        .wrapping_add(sec)
}

/// Upstream `time_str2mins`: like [`time_str2secs`] rounded up to minutes.
pub fn time_str2mins(s: &str) -> i32 {
    let i = time_str2secs(s);
    if i != -1 && i != NO_VAL as i32 {
        i.wrapping_add(59) / 60
    } else {
        i
    }
}

/// A time limit in minutes, `None` where Slurm reports a bad value.
pub fn parse_minutes(s: &str) -> Option<TimeLimit> {
    to_limit(time_str2mins(s))
}

/// A time limit in seconds, `None` where Slurm reports a bad value.
pub fn parse_seconds(s: &str) -> Option<TimeLimit> {
    to_limit(time_str2secs(s))
}

fn to_limit(v: i32) -> Option<TimeLimit> {
    if v == -1 {
        Some(TimeLimit::Unlimited)
    } else if v < 0 {
        None
    } else {
        Some(TimeLimit::Finite(v as u32))
    }
}

/// Upstream `str_to_mbytes`: MB by default, `K` rounds up, `G`/`T` scale;
/// an optional trailing `B` is allowed after the unit.
pub fn str_to_mbytes(s: &str) -> Option<u64> {
    let (num, rest) = c_strtol_i64(s)?;
    if num < 0 {
        return None;
    }
    let num = num as u64;
    let mut chars = rest.chars();
    let unit = match chars.next() {
        None => return Some(num),
        Some(c) => c.to_ascii_uppercase(),
    };
    match chars.as_str() {
        "" | "B" | "b" => {}
        _ => return None,
    }
    match unit {
        'K' => Some(num.div_ceil(1024)),
        'M' => Some(num),
        'G' => num.checked_mul(1024),
        'T' => num.checked_mul(1024 * 1024),
        _ => None,
    }
}

/// Upstream `suffix_mult`: multiplier for `k`, `KiB`, `KB`, ... `P`.
pub fn suffix_mult(suffix: &str) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    let v: u64 = match s.as_str() {
        "" => 1,
        "k" | "kib" => 1 << 10,
        "kb" => 1_000,
        "m" | "mib" => 1 << 20,
        "mb" => 1_000_000,
        "g" | "gib" => 1 << 30,
        "gb" => 1_000_000_000,
        "t" | "tib" => 1 << 40,
        "tb" => 1_000_000_000_000,
        "p" | "pib" => 1 << 50,
        "pb" => 1_000_000_000_000_000,
        _ => return None,
    };
    Some(v)
}

/// Slurm booleans: YES/UP/TRUE/1 and NO/DOWN/FALSE/0, any case.
pub fn parse_bool(s: &str) -> Option<bool> {
    const T: [&str; 4] = ["yes", "up", "true", "1"];
    const F: [&str; 4] = ["no", "down", "false", "0"];
    if T.iter().any(|t| s.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if F.iter().any(|f| s.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// `strtol(s, &end, 10)`: value and the unparsed tail; `None` on overflow or
/// when no digits were found (strtol would return 0 at the start).
pub(crate) fn c_strtol_i64(s: &str) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    let mut pos = 0;
    while b.get(pos).is_some_and(|&c| is_c_space(c)) {
        pos += 1;
    }
    let mut neg = false;
    if let Some(&c) = b.get(pos) {
        if c == b'+' || c == b'-' {
            neg = c == b'-';
            pos += 1;
        }
    }
    let start = pos;
    let mut val: i64 = 0;
    while let Some(&c) = b.get(pos) {
        if !c.is_ascii_digit() {
            break;
        }
        let d = i64::from(c - b'0');
        val = val.checked_mul(10)?;
        val = if neg {
            val.checked_sub(d)?
        } else {
            val.checked_add(d)?
        };
        pos += 1;
    }
    if pos == start {
        return None;
    }
    Some((val, s.get(pos..).unwrap_or("")))
}

/// `atoi`/`strtol` that yields 0 on garbage, as several upstream fields do.
pub(crate) fn c_atol(s: &str) -> i64 {
    c_strtol_i64(s).map(|(v, _)| v).unwrap_or(0)
}

/// `strtoul(s, &end, 0)` limited to u64: `(value, rest)`, or `None` on
/// overflow. No digits yields `(0, s)` like C.
fn c_strtoul_base0(s: &str) -> Option<(u64, &str, bool)> {
    let b = s.as_bytes();
    let mut pos = 0;
    while b.get(pos).is_some_and(|&c| is_c_space(c)) {
        pos += 1;
    }
    let mut neg = false;
    if let Some(&c) = b.get(pos) {
        if c == b'+' || c == b'-' {
            neg = c == b'-';
            pos += 1;
        }
    }
    let mut radix = 10u32;
    if b.get(pos) == Some(&b'0') {
        if matches!(b.get(pos + 1), Some(b'x') | Some(b'X'))
            && b.get(pos + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            radix = 16;
            pos += 2;
        } else {
            radix = 8;
        }
    }
    let start = pos;
    let mut val: u64 = 0;
    while let Some(&c) = b.get(pos) {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        val = val
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(d))?;
        pos += 1;
    }
    if pos == start {
        return Some((0, s, false));
    }
    let val = if neg { val.wrapping_neg() } else { val };
    Some((val, s.get(pos..).unwrap_or(""), true))
}

/// Why an integer value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumError {
    Invalid,
    OutOfRange,
    Negative,
}

fn parse_unsigned(s: &str, max: u64, k_suffix: bool, infinite: u64) -> Result<u64, NumError> {
    let Some((mut num, mut rest, _)) = c_strtoul_base0(s) else {
        return Err(NumError::OutOfRange);
    };
    if k_suffix && (rest.starts_with('k') || rest.starts_with('K')) {
        num = num.checked_mul(1024).ok_or(NumError::OutOfRange)?;
        rest = rest.get(1..).unwrap_or("");
    }
    if !rest.is_empty() {
        if is_unlimited_word(s) {
            return Ok(infinite);
        }
        return Err(NumError::Invalid);
    }
    if s.starts_with('-') {
        return Err(NumError::Negative);
    }
    if num > max {
        return Err(NumError::OutOfRange);
    }
    Ok(num)
}

/// A `uint16` option (`UNLIMITED`/`INFINITE` give `INFINITE16`).
pub fn parse_u16(s: &str) -> Result<u16, NumError> {
    parse_unsigned(s, u64::from(u16::MAX), false, u64::from(INFINITE16)).map(|v| v as u16)
}

/// A `uint32` option; a trailing `K` multiplies by 1024.
pub fn parse_u32(s: &str) -> Result<u32, NumError> {
    parse_unsigned(s, u64::from(u32::MAX), true, u64::from(INFINITE)).map(|v| v as u32)
}

/// A `uint64` option; a trailing `K` multiplies by 1024.
pub fn parse_u64(s: &str) -> Result<u64, NumError> {
    parse_unsigned(s, u64::MAX, true, INFINITE64)
}

/// A `float` option (`UNLIMITED`/`INFINITE` give infinity).
pub fn parse_f32(s: &str) -> Option<f32> {
    if s.is_empty() {
        return Some(0.0);
    }
    if let Ok(v) = s.parse::<f32>() {
        return Some(v);
    }
    if is_unlimited_word(s) {
        return Some(f32::INFINITY);
    }
    None
}

/// Daemon log levels, numbered as Slurm numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Quiet = 0,
    Fatal = 1,
    Error = 2,
    Info = 3,
    Verbose = 4,
    Debug = 5,
    Debug2 = 6,
    Debug3 = 7,
    Debug4 = 8,
    Debug5 = 9,
}

impl LogLevel {
    const ALL: [LogLevel; 10] = [
        LogLevel::Quiet,
        LogLevel::Fatal,
        LogLevel::Error,
        LogLevel::Info,
        LogLevel::Verbose,
        LogLevel::Debug,
        LogLevel::Debug2,
        LogLevel::Debug3,
        LogLevel::Debug4,
        LogLevel::Debug5,
    ];

    /// Name or number as `SlurmctldDebug` accepts; numbers above 9 clamp.
    pub fn parse(s: &str) -> Option<LogLevel> {
        if s.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
            let n = c_atol(s).clamp(0, 9) as usize;
            return Self::ALL.get(n).copied();
        }
        Self::ALL
            .iter()
            .copied()
            .find(|l| l.name().eq_ignore_ascii_case(s))
    }

    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Quiet => "quiet",
            LogLevel::Fatal => "fatal",
            LogLevel::Error => "error",
            LogLevel::Info => "info",
            LogLevel::Verbose => "verbose",
            LogLevel::Debug => "debug",
            LogLevel::Debug2 => "debug2",
            LogLevel::Debug3 => "debug3",
            LogLevel::Debug4 => "debug4",
            LogLevel::Debug5 => "debug5",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_table() {
        let cases: &[(&str, Option<TimeLimit>)] = &[
            ("UNLIMITED", Some(TimeLimit::Unlimited)),
            ("infinite", Some(TimeLimit::Unlimited)),
            ("-1", Some(TimeLimit::Unlimited)),
            ("0", Some(TimeLimit::Finite(0))),
            ("30", Some(TimeLimit::Finite(30))),
            ("5:30", Some(TimeLimit::Finite(6))),
            ("5:00", Some(TimeLimit::Finite(5))),
            ("1:02:03", Some(TimeLimit::Finite(63))),
            ("2:00:00", Some(TimeLimit::Finite(120))),
            ("7-00:00:00", Some(TimeLimit::Finite(7 * 1440))),
            ("1-2", Some(TimeLimit::Finite(1440 + 120))),
            ("1-2:30", Some(TimeLimit::Finite(1440 + 150))),
            ("1-0:0:1", Some(TimeLimit::Finite(1441))),
            ("3-", Some(TimeLimit::Finite(3 * 1440))),
            ("7-xx", None),
            ("", None),
            ("1:2:3:4", None),
            ("1-2-3", None),
            ("1:2-3", None),
            (":5", None),
            ("5:", None),
            ("-5", None),
            ("abc", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_minutes(s), *want, "{s}");
        }
        assert_eq!(time_str2secs("5:30"), 330);
        assert_eq!(time_str2secs("1-0"), 86400);
        assert_eq!(time_str2secs("bad"), -2);
    }

    #[test]
    fn memory_table() {
        let cases: &[(&str, Option<u64>)] = &[
            ("100", Some(100)),
            ("1024K", Some(1)),
            ("1025k", Some(2)),
            ("1KB", Some(1)),
            ("16M", Some(16)),
            ("2G", Some(2048)),
            ("2gb", Some(2048)),
            ("1T", Some(1 << 20)),
            ("-1", None),
            ("12X", None),
            ("G", None),
            ("1GG", None),
        ];
        for (s, want) in cases {
            assert_eq!(str_to_mbytes(s), *want, "{s}");
        }
    }

    #[test]
    fn numbers_and_bools() {
        assert_eq!(parse_u16("10"), Ok(10));
        assert_eq!(parse_u16("0x10"), Ok(16));
        assert_eq!(parse_u16("010"), Ok(8));
        assert_eq!(parse_u16("65536"), Err(NumError::OutOfRange));
        assert_eq!(parse_u16("UNLIMITED"), Ok(INFINITE16));
        assert_eq!(parse_u16("-1"), Err(NumError::Negative));
        assert_eq!(parse_u32("4K"), Ok(4096));
        assert_eq!(parse_u32("4G"), Err(NumError::Invalid));
        assert_eq!(parse_u64("infinite"), Ok(INFINITE64));
        for t in ["YES", "yes", "True", "1", "UP"] {
            assert_eq!(parse_bool(t), Some(true));
        }
        for f in ["NO", "false", "0", "down"] {
            assert_eq!(parse_bool(f), Some(false));
        }
        assert_eq!(parse_bool("maybe"), None);
        assert_eq!(suffix_mult("KiB"), Some(1024));
        assert_eq!(suffix_mult("kb"), Some(1000));
        assert_eq!(suffix_mult("x"), None);
        assert_eq!(LogLevel::parse("debug2"), Some(LogLevel::Debug2));
        assert_eq!(LogLevel::parse("7"), Some(LogLevel::Debug3));
        assert_eq!(LogLevel::parse("loud"), None);
    }
}

/// The hand-written time reader the nom grammar replaced, kept only to
/// compare against.
#[cfg(test)]
mod legacy {
    use super::{is_unlimited_word, NO_VAL};

    /// Only digits, '-' and ':' in a shape Slurm accepts as a time.
    fn valid_timespec(s: &str) -> bool {
        let (mut digits, mut dashes, mut colons) = (0u32, 0u32, 0u32);
        let mut in_digits = false;
        for b in s.bytes() {
            match b {
                b'0'..=b'9' => {
                    if !in_digits {
                        digits += 1;
                        in_digits = true;
                    }
                }
                b'-' => {
                    in_digits = false;
                    dashes += 1;
                    if colons > 0 {
                        return false;
                    }
                }
                b':' => {
                    in_digits = false;
                    colons += 1;
                }
                _ => return false,
            }
        }
        if digits == 0 || dashes > 1 || colons > 2 {
            return false;
        }
        let needed = match (dashes > 0, colons) {
            (true, 1) => 3,
            (true, 2) => 4,
            (false, 1) => 2,
            (false, 2) => 3,
            _ => 0,
        };
        digits >= needed
    }

    /// Reads `%d` then literal separators in turn, like `sscanf`; returns the
    /// integers converted before the first mismatch.
    fn scan_ints(s: &str, seps: &[u8]) -> Vec<i32> {
        let b = s.as_bytes();
        let mut pos = 0usize;
        let mut out = Vec::new();
        let mut seps = seps.iter();
        loop {
            let start = pos;
            let mut neg = false;
            if let Some(&c) = b.get(pos) {
                if c == b'-' || c == b'+' {
                    neg = c == b'-';
                    pos += 1;
                }
            }
            let digits_start = pos;
            let mut val: i64 = 0;
            while let Some(&c) = b.get(pos) {
                if !c.is_ascii_digit() {
                    break;
                }
                // strtol saturates on overflow; scanf then narrows to int.
                val = val.saturating_mul(10).saturating_add(i64::from(c - b'0'));
                pos += 1;
            }
            if pos == digits_start {
                let _ = start;
                return out;
            }
            let v = if neg { val.saturating_neg() } else { val };
            out.push(v as i32);
            match seps.next() {
                Some(&sep) if b.get(pos) == Some(&sep) => pos += 1,
                _ => return out,
            }
        }
    }

    /// Upstream `time_str2secs`: seconds, `-1` for unlimited, `-2` (NO_VAL) on
    /// error. Kept with C `int` arithmetic so odd inputs match stock.
    pub fn time_str2secs(s: &str) -> i32 {
        const NOVAL: i32 = NO_VAL as i32;
        if s.is_empty() {
            return NOVAL;
        }
        if s == "-1" || is_unlimited_word(s) {
            return -1;
        }
        if !valid_timespec(s) {
            return NOVAL;
        }
        let (d, h, m, sec);
        if s.contains('-') {
            let v = scan_ints(s, b"-::");
            d = v.first().copied().unwrap_or(0).wrapping_mul(86400);
            h = v.get(1).copied().unwrap_or(0).wrapping_mul(3600);
            m = v.get(2).copied().unwrap_or(0).wrapping_mul(60);
            sec = v.get(3).copied().unwrap_or(0);
        } else {
            let v = scan_ints(s, b"::");
            let a = v.first().copied().unwrap_or(0);
            let b = v.get(1).copied().unwrap_or(0);
            if v.len() == 3 {
                d = 0;
                h = a.wrapping_mul(3600);
                m = b.wrapping_mul(60);
                sec = v.get(2).copied().unwrap_or(0);
            } else {
                // minutes[:seconds]
                d = 0;
                h = 0;
                m = a.wrapping_mul(60);
                sec = b;
            }
        }
        d.wrapping_add(h).wrapping_add(m).wrapping_add(sec)
    }
}

#[cfg(test)]
mod grammar_props {
    use proptest::prelude::*;

    use super::*;

    /// Time-like text: numbers (some past `int`), dashes, colons and
    /// strays, in any order.
    fn time_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "0",
            "1",
            "5",
            "59",
            "60",
            "99",
            "007",
            "2147483647",
            "2147483648",
            "4294967296",
            "99999999999999999999",
            "-",
            ":",
            "::",
            "--",
            "+",
            " ",
            "a",
            "UNLIMITED",
            "é",
        ]);
        prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
    }

    /// Hand-picked cases; they pass on the legacy reader too.
    #[test]
    fn time_corpus() {
        for s in [
            "",
            "-",
            "-1",
            "-5",
            "-0",
            "--5",
            "5",
            "5:",
            ":5",
            "5:30",
            "1:2:3",
            "1:2:3:4",
            "1::2",
            "1-",
            "1-2",
            "1-2:3",
            "1-2:3:4",
            "1-2:3:4:5",
            "1-:2",
            "1-2:",
            "1-2::3",
            "1-2-3",
            "1:2-3",
            "-1:2",
            "-1:2:3",
            "-1-",
            "3-",
            "7-00:00:00",
            "+5",
            " 5",
            "5 ",
            "0x10",
            "2147483647",
            "2147483648",
            "4294967296",
            "99999999999999999999",
            "-99999999999999999999",
            "24855-3:14:8",
            "35791394:7",
            "1:35791394:0",
            "UNLIMITED",
            "infinite",
            "٣",
            "1-٣",
        ] {
            assert_eq!(time_str2secs(s), legacy::time_str2secs(s), "{s:?}");
        }
    }

    /// Every string of up to six of these symbols.
    #[test]
    fn short_times_match_legacy() {
        const SYMS: [&str; 7] = ["0", "7", "-", ":", "+", " ", "99999999999"];
        let mut idx = Vec::new();
        loop {
            let s: String = idx.iter().map(|&k: &usize| SYMS[k]).collect();
            assert_eq!(time_str2secs(&s), legacy::time_str2secs(&s), "{s:?}");
            // Next index vector, shortest first.
            let mut k = 0;
            loop {
                match idx.get_mut(k) {
                    Some(d) if *d + 1 < SYMS.len() => {
                        *d += 1;
                        break;
                    }
                    Some(d) => {
                        *d = 0;
                        k += 1;
                    }
                    None => {
                        idx.push(0);
                        break;
                    }
                }
            }
            if idx.len() > 6 {
                return;
            }
        }
    }

    proptest! {
        #[test]
        fn time_matches_legacy(s in time_text()) {
            prop_assert_eq!(time_str2secs(&s), legacy::time_str2secs(&s), "{:?}", s);
        }

        #[test]
        fn time_matches_legacy_on_any_text(s in "[0-9:\\- ]{0,10}") {
            prop_assert_eq!(time_str2secs(&s), legacy::time_str2secs(&s), "{:?}", s);
        }
    }
}
