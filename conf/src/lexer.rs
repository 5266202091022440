//! Physical → logical lines (continuations, comments, escapes), `Include`,
//! the config hash, and `key=value` splitting shared by every file format.

use std::io::Read;
use std::path::{Path, PathBuf};

use nom::branch::alt;
use nom::bytes::complete::{take, take_until, take_while, take_while1};
use nom::character::complete::{char, one_of, satisfy};
use nom::combinator::{not, opt, value, verify};
use nom::sequence::{delimited, pair, preceded, terminated, tuple};
use nom::IResult;

use crate::error::{ConfError, Location};
use crate::keywords::Keyword;
use crate::units::is_c_space;

/// Nesting limit for `Include`; stock has none and overflows its stack.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Largest file we read; bigger files are refused rather than buffered.
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// Reads an included file; tests and fuzzers can supply their own.
pub type Loader<'a> = &'a dyn Fn(&Path) -> std::io::Result<Vec<u8>>;

/// Reads a file from disk, bounded by [`MAX_FILE_SIZE`]. Non-regular files
/// read as empty, as stock treats any zero-size file.
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Ok(Vec::new());
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE_SIZE {
        return Err(std::io::Error::other("file too large"));
    }
    Ok(buf)
}

/// Folds bytes into Slurm's config hash (the `hash_val` slurmd sends at
/// registration). Bytes are taken as signed `char`, as on x86-64 builds.
pub fn config_hash_update(mut hash: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        hash ^= ((b as i8 as i32) << 8) as u32;
        for _ in 0..8 {
            hash = if hash & 0x8000 != 0 {
                (hash << 1) ^ 4129
            } else {
                hash << 1
            };
        }
    }
    hash
}

/// One logical line after continuation, comment and escape handling.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub at: Location,
    pub text: String,
}

/// Cuts at the first unescaped `#` outside a quoted value.
fn strip_comment(chunk: &[u8]) -> &[u8] {
    let mut bs = 0usize;
    let mut in_quote = false;
    let mut last_nonspace = 0u8;
    for (i, &c) in chunk.iter().enumerate() {
        match c {
            b'#' if bs & 1 == 0 && !in_quote => return chunk.get(..i).unwrap_or(chunk),
            b'"' if bs & 1 == 0 => {
                if in_quote {
                    in_quote = false;
                } else if last_nonspace == b'=' {
                    in_quote = true;
                }
            }
            _ => {}
        }
        bs = if c == b'\\' { bs + 1 } else { 0 };
        if !is_c_space(c) {
            last_nonspace = c;
        }
    }
    chunk
}

/// Length without a trailing continuation backslash (and what follows it),
/// or `None` if the chunk does not continue.
fn continuation_len(chunk: &[u8]) -> Option<usize> {
    let mut bs = 0usize;
    let mut run_start = 0usize;
    for (i, &c) in chunk.iter().enumerate().rev() {
        if c == b'\\' {
            bs += 1;
        } else if is_c_space(c) && bs == 0 {
            continue;
        } else {
            run_start = i + 1;
            break;
        }
    }
    (bs % 2 == 1).then(|| run_start + bs - 1)
}

fn strip_escapes(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut it = line.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            match it.next() {
                Some(&n) => out.push(n),
                None => break,
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits a file into logical lines; each comes with the raw bytes that
/// feed the hash (a physical line stops at its first NUL, like `strlen`).
fn logical_lines(bytes: &[u8]) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
    let mut physical = bytes.split_inclusive(|&b| b == b'\n').map(|l| {
        let end = l.iter().position(|&b| b == 0).unwrap_or(l.len());
        l.get(..end).unwrap_or(l)
    });
    let mut out = Vec::new();
    let mut line_no = 1usize;
    loop {
        let mut raw = Vec::new();
        let mut buf = Vec::new();
        let mut merged = 0usize;
        for chunk in physical.by_ref() {
            merged += 1;
            raw.extend_from_slice(chunk);
            let chunk = strip_comment(chunk);
            match continuation_len(chunk) {
                Some(n) => buf.extend_from_slice(chunk.get(..n).unwrap_or(chunk)),
                None => {
                    buf.extend_from_slice(chunk);
                    break;
                }
            }
        }
        if merged == 0 {
            return out;
        }
        out.push((line_no, raw, strip_escapes(&buf)));
        line_no += merged;
    }
}

/// Receives logical lines from [`walk`].
pub(crate) trait LineSink {
    fn line(&mut self, line: &Line) -> Result<(), ConfError>;
    /// Value substituted for `%c` in `Include` paths.
    fn cluster_name(&self) -> Option<String> {
        None
    }
}

pub(crate) struct Walker<'a> {
    pub loader: Loader<'a>,
    pub hash: u32,
    stack: Vec<PathBuf>,
}

impl<'a> Walker<'a> {
    pub fn new(loader: Loader<'a>) -> Self {
        Walker {
            loader,
            hash: 0,
            stack: Vec::new(),
        }
    }

    /// Feeds every logical line of `bytes` (named `origin`) to `sink`,
    /// following `Include` lines.
    pub fn walk(
        &mut self,
        bytes: &[u8],
        origin: &Path,
        sink: &mut dyn LineSink,
    ) -> Result<(), ConfError> {
        let file = origin.display().to_string();
        self.stack
            .push(std::fs::canonicalize(origin).unwrap_or_else(|_| origin.to_path_buf()));
        let result = self.walk_inner(bytes, origin, &file, sink);
        self.stack.pop();
        result
    }

    fn walk_inner(
        &mut self,
        bytes: &[u8],
        origin: &Path,
        file: &str,
        sink: &mut dyn LineSink,
    ) -> Result<(), ConfError> {
        for (line_no, raw, text) in logical_lines(bytes) {
            self.hash = config_hash_update(self.hash, &raw);
            if text.is_empty() {
                continue;
            }
            let line = Line {
                at: Location::new(file, line_no),
                text: String::from_utf8_lossy(&text).into_owned(),
            };
            if let Some(target) = include_target(&line)? {
                self.include(&target, origin, &line, sink)?;
            } else {
                sink.line(&line)?;
            }
        }
        Ok(())
    }

    fn include(
        &mut self,
        target: &str,
        origin: &Path,
        line: &Line,
        sink: &mut dyn LineSink,
    ) -> Result<(), ConfError> {
        let mut name = target.to_string();
        if name.contains("%c") {
            let Some(cluster) = sink.cluster_name() else {
                return Err(ConfError::invalid(
                    &line.at,
                    format!("Include {target}: %c used before ClusterName is set"),
                ));
            };
            name = name.replace("%c", &cluster.to_lowercase());
        }
        if name.contains('*') {
            return Err(ConfError::invalid(
                &line.at,
                format!("Include {name}: glob patterns are not supported"),
            ));
        }
        let path = Path::new(&name);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            origin.parent().unwrap_or(Path::new("")).join(path)
        };
        let canon = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self.stack.len() > MAX_INCLUDE_DEPTH || self.stack.contains(&canon) {
            return Err(ConfError::IncludeLoop {
                at: line.at.clone(),
                path: path.display().to_string(),
            });
        }
        let bytes = (self.loader)(&path).map_err(|e| ConfError::Include {
            at: line.at.clone(),
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        self.walk(&bytes, &path, sink)
    }
}

fn c_space(c: char) -> bool {
    c.is_ascii() && is_c_space(c as u8)
}

fn blanks(i: &str) -> IResult<&str, &str> {
    take_while(c_space)(i)
}

/// A run of non-blank text.
fn word(i: &str) -> IResult<&str, &str> {
    take_while1(|c| !c_space(c))(i)
}

/// `Include` in any case, then at least one blank.
fn include_keyword(i: &str) -> IResult<&str, &str> {
    terminated(
        verify(take(7usize), |k: &str| k.eq_ignore_ascii_case("include")),
        take_while1(c_space),
    )(i)
}

/// `Include <file>` (keyword at the very start of the line, any case).
fn include_target(line: &Line) -> Result<Option<String>, ConfError> {
    let Ok((rest, _)) = include_keyword(&line.text) else {
        return Ok(None);
    };
    match terminated(word, blanks)(rest) {
        Ok(("", target)) => Ok(Some(target.to_string())),
        _ => Err(ConfError::Syntax {
            at: line.at.clone(),
            text: line.text.clone(),
        }),
    }
}

pub(crate) fn is_blank(s: &str) -> bool {
    s.bytes().all(is_c_space)
}

/// One `key=value` pair and the text after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pair<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub rest: &'a str,
}

/// `[A-Za-z0-9_.]+`
fn key(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')(i)
}

/// `=`, `+=`, `-=`, `*=` or `/=` (the operator is not kept).
fn assign(i: &str) -> IResult<&str, ()> {
    value((), pair(opt(one_of("-*+/")), char('=')))(i)
}

/// `"..."` followed by a blank or the end; without them the quote is
/// part of a plain value.
fn quoted(i: &str) -> IResult<&str, &str> {
    terminated(
        delimited(char('"'), take_until("\""), char('"')),
        not(satisfy(|c| !c_space(c))),
    )(i)
}

/// Splits the next `key[op]=value` pair, mirroring stock's regular
/// expression: keys are `[A-Za-z0-9_.]+`, values are `"quoted"` or run to
/// the next whitespace.
pub(crate) fn next_pair(s: &str) -> Option<Pair<'_>> {
    // A `quoted` that fails has searched only up to the next quote, which
    // the next quoted value starts with: a line is still read in linear
    // time.
    let (rest, (key, value)) = tuple((
        preceded(blanks, key),
        preceded(tuple((blanks, assign, blanks)), alt((quoted, word))),
    ))(s)
    .ok()?;
    Some(Pair { key, value, rest })
}

/// Key/value pairs of one line, checked against a keyword table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields {
    pub items: Vec<(&'static Keyword, String)>,
}

impl Fields {
    /// Latest value set for `name` (stock keeps the last one).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.items
            .iter()
            .rev()
            .find(|(k, _)| k.name.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Values of `self` override those of `older` (DEFAULT line merging).
    pub fn merged_over(&self, older: &Fields) -> Fields {
        let mut items: Vec<_> = older
            .items
            .iter()
            .filter(|(k, _)| !self.has(k.name))
            .cloned()
            .collect();
        items.extend(self.items.iter().cloned());
        Fields { items }
    }
}

/// Parses the remaining `key=value` pairs of a line against `table`; all
/// text must be consumed.
pub(crate) fn parse_fields(
    rest: &str,
    table: &'static [Keyword],
    at: &Location,
) -> Result<Fields, ConfError> {
    let mut fields = Fields::default();
    let mut cur = rest;
    while let Some(p) = next_pair(cur) {
        let Some(kw) = crate::keywords::lookup(table, p.key) else {
            return Err(ConfError::UnknownKey {
                at: at.clone(),
                key: p.key.to_string(),
            });
        };
        kw.check(p.value, at)?;
        // Latest value wins; replacing keeps the list as short as the table.
        fields.items.retain(|(k, _)| !std::ptr::eq(*k, kw));
        fields.items.push((kw, p.value.to_string()));
        cur = p.rest;
    }
    if !is_blank(cur) {
        return Err(ConfError::Syntax {
            at: at.clone(),
            text: cur.trim().to_string(),
        });
    }
    Ok(fields)
}

/// Reads `path` and hands it to a file type's parser; included files are
/// read from disk too.
pub(crate) fn load_file<T>(
    path: &Path,
    parse: fn(&[u8], &Path, Loader<'_>) -> Result<T, ConfError>,
) -> Result<T, ConfError> {
    let bytes = read_file(path).map_err(|e| ConfError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    parse(&bytes, path, &read_file)
}

/// The first `key=value` of a line and its keyword in `table`; `None` for a
/// blank line. Unknown keys and stray text are errors naming file:line.
pub(crate) fn keyword_pair<'a>(
    line: &'a Line,
    table: &'static [Keyword],
) -> Result<Option<(Pair<'a>, &'static Keyword)>, ConfError> {
    let at = &line.at;
    let Some(p) = next_pair(&line.text) else {
        if is_blank(&line.text) {
            return Ok(None);
        }
        return Err(ConfError::Syntax {
            at: at.clone(),
            text: line.text.trim().to_string(),
        });
    };
    let Some(kw) = crate::keywords::lookup(table, p.key) else {
        return Err(ConfError::UnknownKey {
            at: at.clone(),
            key: p.key.to_string(),
        });
    };
    Ok(Some((p, kw)))
}

/// Errors unless only blanks follow a single-valued option.
pub(crate) fn expect_end(rest: &str, at: &Location) -> Result<(), ConfError> {
    if is_blank(rest) {
        Ok(())
    } else {
        Err(ConfError::Syntax {
            at: at.clone(),
            text: rest.trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<(usize, String)> {
        logical_lines(s.as_bytes())
            .into_iter()
            .map(|(n, _, t)| (n, String::from_utf8(t).unwrap()))
            .collect()
    }

    #[test]
    fn continuation_comments_escapes() {
        let l = lines("a=1 # c\nb=2 \\\n  c=3\n\\#x=\\\\y\nd=\"q # not\" # yes\n");
        assert_eq!(l.first().unwrap(), &(1, "a=1 ".to_string()));
        assert_eq!(l.get(1).unwrap(), &(2, "b=2   c=3\n".to_string()));
        assert_eq!(l.get(2).unwrap(), &(4, "#x=\\y\n".to_string()));
        assert_eq!(l.get(3).unwrap(), &(5, "d=\"q # not\" ".to_string()));
    }

    #[test]
    fn pairs() {
        let p = next_pair("  Key = \"a b\" Next=1").unwrap();
        assert_eq!((p.key, p.value, p.rest), ("Key", "a b", " Next=1"));
        let p = next_pair("K=\"ab\"cd").unwrap();
        assert_eq!(p.value, "\"ab\"cd");
        let p = next_pair("K=\"\"").unwrap();
        assert_eq!(p.value, "");
        assert!(next_pair("K=").is_none());
        assert!(next_pair("=v").is_none());
        let p = next_pair("K+=v").unwrap();
        assert_eq!(p.value, "v");
    }

    #[test]
    fn hash_known_value() {
        // Bytes ≥ 0x80 are sign-extended like x86 `char`.
        assert_eq!(config_hash_update(0, b""), 0);
        let h = config_hash_update(0, b"a\n");
        assert_eq!(h, config_hash_update(config_hash_update(0, b"a"), b"\n"));
        assert_ne!(
            config_hash_update(0, &[0xff]),
            config_hash_update(0, &[0x7f])
        );
    }
}

/// The hand-written readers the nom grammar replaced, kept only to compare
/// against.
#[cfg(test)]
mod legacy {
    use super::{is_blank, is_c_space, ConfError, Line, Pair};

    fn find_quote(b: &[u8], from: usize) -> Option<usize> {
        b.get(from..)?
            .iter()
            .position(|&c| c == b'"')
            .map(|p| p + from)
    }

    pub(super) fn include_target(line: &Line) -> Result<Option<String>, ConfError> {
        let t = line.text.as_bytes();
        let is_include = t
            .get(..7)
            .is_some_and(|k| k.eq_ignore_ascii_case(b"include"))
            && t.get(7).is_some_and(|&c| is_c_space(c));
        if !is_include {
            return Ok(None);
        }
        let rest = line
            .text
            .get(7..)
            .unwrap_or("")
            .trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
        let end = rest
            .find(|c: char| c.is_ascii() && is_c_space(c as u8))
            .unwrap_or(rest.len());
        let (target, tail) = rest.split_at(end);
        if target.is_empty() || !is_blank(tail) {
            return Err(ConfError::Syntax {
                at: line.at.clone(),
                text: line.text.clone(),
            });
        }
        Ok(Some(target.to_string()))
    }

    pub(super) fn next_pair(s: &str) -> Option<Pair<'_>> {
        let b = s.as_bytes();
        let mut i = 0usize;
        while b.get(i).is_some_and(|&c| is_c_space(c)) {
            i += 1;
        }
        let key_start = i;
        while b
            .get(i)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            i += 1;
        }
        let key = s.get(key_start..i)?;
        if key.is_empty() {
            return None;
        }
        while b.get(i).is_some_and(|&c| is_c_space(c)) {
            i += 1;
        }
        if b.get(i)
            .is_some_and(|&c| matches!(c, b'-' | b'*' | b'+' | b'/'))
        {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            return None;
        }
        i += 1;
        while b.get(i).is_some_and(|&c| is_c_space(c)) {
            i += 1;
        }
        let vstart = i;
        if b.get(vstart) == Some(&b'"') {
            if let Some(close) = find_quote(b, vstart + 1) {
                let after = b.get(close + 1);
                if after.is_none_or(|&c| is_c_space(c)) {
                    return Some(Pair {
                        key,
                        value: s.get(vstart + 1..close)?,
                        rest: s.get(close + 1..)?,
                    });
                }
            }
        }
        while b.get(i).is_some_and(|&c| !is_c_space(c)) {
            i += 1;
        }
        if i == vstart {
            return None;
        }
        Some(Pair {
            key,
            value: s.get(vstart..i)?,
            rest: s.get(i..)?,
        })
    }
}

#[cfg(test)]
mod grammar_props {
    use proptest::prelude::*;

    use super::*;

    fn line(text: &str) -> Line {
        Line {
            at: Location::new("slurm.conf", 3),
            text: text.to_string(),
        }
    }

    /// Every pair of a line, as `parse_fields` walks them, and what is left.
    fn pairs(mut s: &str, next: fn(&str) -> Option<Pair<'_>>) -> (Vec<Pair<'_>>, &str) {
        let mut out = Vec::new();
        while let Some(p) = next(s) {
            s = p.rest;
            out.push(p);
        }
        (out, s)
    }

    /// Config-like text: keys, operators, quotes and blanks in odd places.
    fn conf_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "NodeName",
            "Include",
            "include",
            "INCLUDE",
            "a.b_c",
            "K",
            "=",
            "+=",
            "-=",
            "*=",
            "/=",
            "==",
            "\"",
            "\"\"",
            "\"a b\"",
            "v",
            "/etc/x.conf",
            "%c",
            " ",
            "  ",
            "\t",
            "\n",
            "\x0b",
            "\x0c",
            "\r",
            "#",
            "é",
            "İ",
            "K\u{212a}",
            "1",
            ",",
            "\\",
        ]);
        prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    /// Hand-picked cases; they pass on the legacy readers too.
    #[test]
    fn lexer_corpus() {
        let cases = [
            "",
            " ",
            "K=v",
            "  K = v  N=1",
            "K=\"a b\" N=1",
            "K=\"a\"b",
            "K=\"a",
            "K=\"\"",
            "K=\"\"x",
            "K= \"q\"",
            "K=",
            "=v",
            "K+=v",
            "K + =v",
            "K +=v",
            "K+ =v",
            "K==v",
            "K*=v",
            "K/=v",
            "K-=v",
            "K.a_b=1",
            "K=é",
            "Ké=1",
            "K=\"é\"",
            "K=\t\"x\"\ty",
            "K=\"x K=\"y",
            "K=\"x\" K=\"y\"",
            "Include a",
            "include\ta b",
            "INCLUDE  x  ",
            "Include",
            "Include ",
            "Includex a",
            "Include=a",
            "include\x0ba",
            "İnclude a",
            "Includé a",
            "Include \"a b\"",
        ];
        for s in cases {
            assert_eq!(pairs(s, next_pair), pairs(s, legacy::next_pair), "{s:?}");
            assert_eq!(
                include_target(&line(s)),
                legacy::include_target(&line(s)),
                "{s:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn pairs_match_legacy(s in conf_text()) {
            prop_assert_eq!(pairs(&s, next_pair), pairs(&s, legacy::next_pair), "{:?}", s);
        }

        #[test]
        fn include_matches_legacy(s in conf_text()) {
            prop_assert_eq!(include_target(&line(&s)), legacy::include_target(&line(&s)), "{:?}", s);
        }
    }
}
