//! Files of one `Key=Value` per line (cgroup.conf, slurmdbd.conf): every key
//! checked against its file's keyword table, the last value of a key wins.

use crate::error::{ConfError, Location};
use crate::keywords::Keyword;
use crate::lexer::{self, Line, LineSink};
use crate::units;

/// A key, its value as written, and where.
pub(crate) type Entry = (&'static str, String, Location);

/// What a file says of a keyword it accepts (defunct, not implemented ...).
pub(crate) type Note = fn(&'static Keyword, &Location, &mut Vec<String>);

pub(crate) struct Flat {
    table: &'static [Keyword],
    note: Note,
    pub(crate) raw: Vec<Entry>,
    pub(crate) warnings: Vec<String>,
}

impl Flat {
    pub(crate) fn new(table: &'static [Keyword], note: Note) -> Self {
        Flat {
            table,
            note,
            raw: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub(crate) fn entry(&self, key: &str) -> Option<(&str, &Location)> {
        self.raw
            .iter()
            .rev()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, at)| (v.as_str(), at))
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.entry(key).map(|(v, _)| v)
    }

    pub(crate) fn string(&self, key: &str) -> Option<String> {
        self.get(key).map(str::to_string)
    }

    // Values were checked against the keyword's type when read.
    pub(crate) fn bool_or(&self, key: &str, d: bool) -> bool {
        self.get(key).and_then(units::parse_bool).unwrap_or(d)
    }

    pub(crate) fn f32_or(&self, key: &str, d: f32) -> f32 {
        self.get(key).and_then(units::parse_f32).unwrap_or(d)
    }

    pub(crate) fn u16(&self, key: &str) -> Option<u16> {
        self.get(key).and_then(|v| units::parse_u16(v).ok())
    }

    pub(crate) fn u32(&self, key: &str) -> Option<u32> {
        self.get(key).and_then(|v| units::parse_u32(v).ok())
    }

    pub(crate) fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| units::parse_u64(v).ok())
    }
}

impl LineSink for Flat {
    fn line(&mut self, line: &Line) -> Result<(), ConfError> {
        let at = &line.at;
        let Some((p, kw)) = lexer::keyword_pair(line, self.table)? else {
            return Ok(());
        };
        lexer::expect_end(p.rest, at)?;
        kw.check(p.value, at)?;
        (self.note)(kw, at, &mut self.warnings);
        self.raw.push((kw.name, p.value.to_string(), at.clone()));
        Ok(())
    }
}

/// The last value written for `key` (any case).
pub(crate) fn last<'a>(raw: &'a [Entry], key: &str) -> Option<&'a str> {
    raw.iter()
        .rev()
        .find(|(k, _, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v, _)| v.as_str())
}
