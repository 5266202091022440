//! Slurm hostlist expressions (`cn[001-480]`, `rack[1-2]-n[01-08]`, ...).
//!
//! Ranges are kept compact; the ranged string form follows Slurm's
//! `hostlist_ranged_string` so node lists we print match stock daemons.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{char, digit0, digit1};
use nom::combinator::{eof, opt};
use nom::sequence::{pair, preceded};
use nom::IResult;
use thiserror::Error;

/// Most hosts one hostlist may hold; guards against `n[0-999999999]`.
pub const MAX_HOSTS: usize = 1_000_000;
/// Most bytes the expanded names may take (long prefixes or paddings).
pub const MAX_EXPANDED_BYTES: usize = 64 << 20;
/// Most bracket groups in one name, bounding recursion.
pub const MAX_BRACKET_GROUPS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostlistError {
    #[error("'[' without matching ']' in \"{0}\"")]
    UnclosedBracket(String),
    #[error("invalid range \"{0}\"")]
    BadRange(String),
    #[error("more than {MAX_HOSTS} hosts")]
    TooManyHosts,
    #[error("expanded names would exceed {MAX_EXPANDED_BYTES} bytes")]
    TooLarge,
    #[error("more than {MAX_BRACKET_GROUPS} bracket groups in \"{0}\"")]
    TooManyBrackets(String),
}

/// One run of hosts: `prefix` + zero-padded numbers `lo..=hi`, or a single
/// host with no numeric suffix (`single`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Range {
    prefix: String,
    lo: u64,
    hi: u64,
    width: usize,
    single: bool,
}

impl Range {
    fn single(name: &str) -> Range {
        Range {
            prefix: name.to_string(),
            lo: 0,
            hi: 0,
            width: 0,
            single: true,
        }
    }

    fn count(&self) -> u64 {
        if self.single {
            1
        } else {
            self.hi.saturating_sub(self.lo).saturating_add(1)
        }
    }

    /// Bytes of all expanded names, for the size cap.
    fn expanded_bytes(&self) -> usize {
        let each = self.prefix.len().saturating_add(self.width.max(20));
        (self.count() as usize).saturating_mul(each)
    }

    fn host(&self, n: u64) -> String {
        if self.single {
            self.prefix.clone()
        } else {
            format!("{}{:0w$}", self.prefix, n, w = self.width)
        }
    }
}

/// An ordered list of host names, stored as ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hostlist {
    ranges: Vec<Range>,
    count: usize,
    bytes: usize,
}

fn digits_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

fn zero_padded(n: u64, width: usize) -> usize {
    width.saturating_sub(digits_len(n))
}

/// Two widths are compatible when padding either number to either width
/// leaves at least one of them unchanged; adjusts one width like upstream.
fn width_equiv(n: u64, wn: &mut usize, m: u64, wm: &mut usize) -> bool {
    if *wn == *wm {
        return true;
    }
    let npad = zero_padded(n, *wn);
    let nmpad = zero_padded(n, *wm);
    let mpad = zero_padded(m, *wm);
    let mnpad = zero_padded(m, *wn);
    if npad != nmpad && mpad != mnpad {
        false
    } else {
        if npad != nmpad {
            *wm = *wn;
        } else {
            *wn = *wm;
        }
        true
    }
}

fn width_compatible(a: &Range, b: &Range) -> bool {
    let (mut wa, mut wb) = (a.width, b.width);
    width_equiv(a.lo, &mut wa, b.lo, &mut wb)
}

/// Natural string order (digit runs compared by value), as Slurm sorts
/// host prefixes.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    // Identical leading bytes compare equal under any rule, but a digit run
    // is judged from its first digit: resume at the start of the run the
    // first difference falls in. Without this jump, sorting 100,000 hosts
    // that share a long prefix re-scans that prefix on every comparison.
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let mut start = same;
    while start > 0 && at(a, start - 1).is_ascii_digit() {
        start -= 1;
    }
    let (mut ai, mut bi) = (start, start);
    loop {
        while at(a, ai).is_ascii_whitespace() {
            ai += 1;
        }
        while at(b, bi).is_ascii_whitespace() {
            bi += 1;
        }
        let (ca, cb) = (at(a, ai), at(b, bi));
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let r = if ca == b'0' || cb == b'0' {
                cmp_left(a, ai, b, bi)
            } else {
                cmp_right(a, ai, b, bi)
            };
            if r != Ordering::Equal {
                return r;
            }
            // Equal runs are byte-identical; re-comparing each of their
            // tails (as a digit-by-digit walk would) is quadratic.
            while at(a, ai).is_ascii_digit() {
                ai += 1;
                bi += 1;
            }
            continue;
        }
        if ca == 0 && cb == 0 {
            return Ordering::Equal;
        }
        match ca.cmp(&cb) {
            Ordering::Equal => {}
            o => return o,
        }
        ai += 1;
        bi += 1;
    }
}

/// Digit runs with a leading zero compare digit by digit.
fn cmp_left(a: &[u8], mut ai: usize, b: &[u8], mut bi: usize) -> Ordering {
    loop {
        let ca = a.get(ai).copied().unwrap_or(0);
        let cb = b.get(bi).copied().unwrap_or(0);
        match (ca.is_ascii_digit(), cb.is_ascii_digit()) {
            (false, false) => return Ordering::Equal,
            (false, true) => return Ordering::Less,
            (true, false) => return Ordering::Greater,
            _ => {}
        }
        match ca.cmp(&cb) {
            Ordering::Equal => {}
            o => return o,
        }
        ai += 1;
        bi += 1;
    }
}

/// Other digit runs: the longer run is bigger, else the first difference.
fn cmp_right(a: &[u8], mut ai: usize, b: &[u8], mut bi: usize) -> Ordering {
    let mut bias = Ordering::Equal;
    loop {
        let ca = a.get(ai).copied().unwrap_or(0);
        let cb = b.get(bi).copied().unwrap_or(0);
        match (ca.is_ascii_digit(), cb.is_ascii_digit()) {
            (false, false) => return bias,
            (false, true) => return Ordering::Less,
            (true, false) => return Ordering::Greater,
            _ => {}
        }
        if bias == Ordering::Equal {
            bias = ca.cmp(&cb);
        }
        ai += 1;
        bi += 1;
    }
}

/// Natural order, then plain byte order so only identical prefixes tie.
fn prefix_order(a: &str, b: &str) -> Ordering {
    natural_cmp(a, b).then_with(|| a.cmp(b))
}

fn prefix_cmp(h1: &Range, h2: &Range) -> Ordering {
    // A host without numeric suffix sorts before ranges of the same prefix.
    prefix_order(&h1.prefix, &h2.prefix).then_with(|| h2.single.cmp(&h1.single))
}

fn range_cmp(h1: &Range, h2: &Range) -> Ordering {
    prefix_cmp(h1, h2).then_with(|| {
        if width_compatible(h1, h2) {
            h1.lo.cmp(&h2.lo)
        } else {
            h1.width.cmp(&h2.width)
        }
    })
}

/// Stable merge sort by [`range_cmp`]. Slurm's order is not a strict total
/// order for odd width mixes, and `slice::sort_by` may panic on such
/// comparators; merging never does.
fn merge_sort(mut v: Vec<Range>) -> Vec<Range> {
    if v.len() <= 1 {
        return v;
    }
    let right = v.split_off(v.len() / 2);
    let (left, right) = (merge_sort(v), merge_sort(right));
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        let take_left = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => range_cmp(b, a) != Ordering::Less,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        let next = if take_left { l.next() } else { r.next() };
        out.extend(next);
    }
}

/// Same bracket group when printing: same prefix and both numeric.
fn within_range(h1: &Range, h2: &Range) -> bool {
    prefix_cmp(h1, h2) == Ordering::Equal && !h1.single && !h2.single
}

fn is_sep(b: u8) -> bool {
    matches!(b, b'\t' | b',' | b' ' | b'\n')
}

fn find_from(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&x| x == c)
        .map(|p| p + from)
}

/// `find_from` that remembers its last answer, so that the tokenizer's
/// searches from increasing positions scan each byte once in all (a long
/// list without brackets was quadratic).
struct Finder {
    c: u8,
    /// (searched from, result) of the last search.
    last: Option<(usize, Option<usize>)>,
}

impl Finder {
    fn new(c: u8) -> Self {
        Self { c, last: None }
    }

    fn find(&mut self, b: &[u8], from: usize) -> Option<usize> {
        if let Some((f, r)) = self.last {
            if from >= f && r.is_none_or(|r| from <= r) {
                return r;
            }
        }
        let r = find_from(b, from, self.c);
        self.last = Some((from, r));
        r
    }
}

/// Splits on separators but keeps `[...]` groups (which contain commas)
/// inside one token.
fn tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0usize;
    let (mut opens, mut closes) = (Finder::new(b'['), Finder::new(b']'));
    loop {
        while b.get(pos).is_some_and(|&c| is_sep(c)) {
            pos += 1;
        }
        if pos >= b.len() {
            return out;
        }
        let start = pos;
        let mut parse = start;
        'outer: loop {
            while b.get(pos).is_some_and(|&c| !is_sep(c)) {
                pos += 1;
            }
            loop {
                let Some(open) = opens.find(b, parse) else {
                    break 'outer;
                };
                if open > pos {
                    break 'outer;
                }
                let Some(close) = closes.find(b, parse) else {
                    break 'outer;
                };
                if close < open {
                    break 'outer;
                }
                if close < pos {
                    parse = close + 1;
                } else {
                    pos = close;
                    break;
                }
            }
        }
        if let Some(tok) = s.get(start..pos) {
            out.push(tok);
        }
    }
}

struct NumRange {
    lo: u64,
    hi: u64,
    width: usize,
}

fn parse_num(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `lo`, `lo-` or `lo-hi`: decimal digits only (no sign), `hi` may be
/// left out.
fn range_item(i: &str) -> IResult<&str, (&str, Option<&str>)> {
    pair(digit1, opt(preceded(char('-'), digit0)))(i)
}

/// `range_item` joined by commas. Items are read and checked in turn, each
/// up to its comma or the end before its bounds: the first bad item
/// decides the error.
fn parse_range_list(s: &str) -> Result<Vec<NumRange>, HostlistError> {
    let bad = || HostlistError::BadRange(s.to_string());
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let (after, ((lo_s, hi_s), sep)) =
            pair(range_item, alt((tag(","), eof)))(rest).map_err(|_| bad())?;
        let lo = parse_num(lo_s).ok_or_else(bad)?;
        let hi = match hi_s {
            Some("") | None => lo,
            Some(h) => parse_num(h).ok_or_else(bad)?,
        };
        if lo > hi {
            return Err(bad());
        }
        if hi - lo >= MAX_HOSTS as u64 {
            return Err(HostlistError::TooManyHosts);
        }
        out.push(NumRange {
            lo,
            hi,
            width: lo_s.len(),
        });
        if sep.is_empty() {
            return Ok(out);
        }
        rest = after;
    }
}

impl Hostlist {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a hostlist expression.
    pub fn parse(s: &str) -> Result<Self, HostlistError> {
        let mut hl = Hostlist::new();
        for tok in tokens(s) {
            hl.push_token(tok)?;
        }
        Ok(hl)
    }

    fn push_token(&mut self, tok: &str) -> Result<(), HostlistError> {
        if tok.matches('[').count() > MAX_BRACKET_GROUPS {
            return Err(HostlistError::TooManyBrackets(tok.to_string()));
        }
        let Some(open) = tok.rfind('[') else {
            return self.push_host(tok);
        };
        let prefix = tok.get(..open).unwrap_or("");
        let inner = tok.get(open + 1..).unwrap_or("");
        let Some(close) = inner.find(']') else {
            return Err(HostlistError::UnclosedBracket(tok.to_string()));
        };
        let after = inner.get(close + 1..).unwrap_or("");
        let suffix = if after.is_empty() || after.starts_with(',') {
            None
        } else {
            Some(after)
        };
        let ranges = parse_range_list(inner.get(..close).unwrap_or(""))?;
        self.push_range_list(prefix, suffix, &ranges)
    }

    /// Earlier bracket groups in the prefix expand outermost.
    fn push_range_list(
        &mut self,
        prefix: &str,
        suffix: Option<&str>,
        ranges: &[NumRange],
    ) -> Result<(), HostlistError> {
        if let Some(p) = prefix.rfind('[') {
            let tail = prefix.get(p + 1..).unwrap_or("");
            if let Some(q) = tail.rfind(']') {
                let before = prefix.get(..p).unwrap_or("");
                let inner = tail.get(..q).unwrap_or("");
                let after = tail.get(q + 1..).unwrap_or("");
                let recurse = before.contains('[');
                for pr in parse_range_list(inner)? {
                    for j in pr.lo..=pr.hi {
                        let np = format!("{before}{j:0w$}{after}", w = pr.width);
                        if recurse {
                            self.push_range_list(&np, suffix, ranges)?;
                        } else {
                            for r in ranges {
                                self.push_hr(&np, suffix, r)?;
                            }
                        }
                    }
                }
                return Ok(());
            }
        }
        for r in ranges {
            self.push_hr(prefix, suffix, r)?;
        }
        Ok(())
    }

    fn push_hr(
        &mut self,
        prefix: &str,
        suffix: Option<&str>,
        r: &NumRange,
    ) -> Result<(), HostlistError> {
        let n = r.hi - r.lo + 1;
        if (self.count as u64).saturating_add(n) > MAX_HOSTS as u64 {
            return Err(HostlistError::TooManyHosts);
        }
        let each = prefix.len() + r.width.max(20) + suffix.map_or(0, str::len);
        if self.bytes.saturating_add((n as usize).saturating_mul(each)) > MAX_EXPANDED_BYTES {
            return Err(HostlistError::TooLarge);
        }
        match suffix {
            // Hosts with a suffix are not numeric ranges any more.
            Some(sfx) => {
                for i in r.lo..=r.hi {
                    let name = format!("{prefix}{i:0w$}{sfx}", w = r.width);
                    self.push_range(Range::single(&name));
                }
            }
            None => self.push_range(Range {
                prefix: prefix.to_string(),
                lo: r.lo,
                hi: r.hi,
                width: r.width,
                single: false,
            }),
        }
        Ok(())
    }

    fn push_range(&mut self, mut hr: Range) {
        self.count += hr.count() as usize;
        self.bytes = self.bytes.saturating_add(hr.expanded_bytes());
        if let Some(tail) = self.ranges.last_mut() {
            if hr.lo.checked_sub(1) == Some(tail.hi)
                && prefix_cmp(tail, &hr) == Ordering::Equal
                && width_equiv(tail.lo, &mut tail.width, hr.lo, &mut hr.width)
            {
                tail.hi = hr.hi;
                return;
            }
        }
        self.ranges.push(hr);
    }

    /// Appends one host name (not parsed as an expression).
    pub fn push_host(&mut self, name: &str) -> Result<(), HostlistError> {
        if self.count >= MAX_HOSTS {
            return Err(HostlistError::TooManyHosts);
        }
        if self.bytes.saturating_add(name.len().max(20)) > MAX_EXPANDED_BYTES {
            return Err(HostlistError::TooLarge);
        }
        let digits = name
            .bytes()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let split = name.len() - digits;
        let hr = match (name.get(..split), name.get(split..)) {
            (Some(prefix), Some(num)) if digits > 0 => match num.parse::<u64>() {
                Ok(n) => Range {
                    prefix: prefix.to_string(),
                    lo: n,
                    hi: n,
                    width: digits,
                    single: false,
                },
                Err(_) => Range::single(name),
            },
            _ => Range::single(name),
        };
        self.push_range(hr);
        Ok(())
    }

    /// Appends every host of another list.
    pub fn extend_from(&mut self, other: &Hostlist) -> Result<(), HostlistError> {
        if self.count.saturating_add(other.count) > MAX_HOSTS {
            return Err(HostlistError::TooManyHosts);
        }
        if self.bytes.saturating_add(other.bytes) > MAX_EXPANDED_BYTES {
            return Err(HostlistError::TooLarge);
        }
        for r in &other.ranges {
            self.push_range(r.clone());
        }
        Ok(())
    }

    /// Number of hosts (duplicates included).
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Host names in order, generated lazily.
    pub fn iter(&self) -> Hosts<'_> {
        Hosts {
            ranges: &self.ranges,
            idx: 0,
            next: None,
        }
    }

    /// All host names in order.
    pub fn expand(&self) -> Vec<String> {
        self.iter().collect()
    }

    /// The n-th host (0-based).
    pub fn nth(&self, mut n: usize) -> Option<String> {
        for r in &self.ranges {
            let c = r.count() as usize;
            if n < c {
                return Some(r.host(r.lo + n as u64));
            }
            n -= c;
        }
        None
    }

    /// Whether `name` is one of the hosts.
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Index of the first occurrence of `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        let mut base = 0usize;
        for r in &self.ranges {
            if r.single {
                if r.prefix == name {
                    return Some(base);
                }
            } else if let Some(num) = name.strip_prefix(r.prefix.as_str()) {
                if let Some(n) = parse_num(num) {
                    if n >= r.lo && n <= r.hi && format!("{:0w$}", n, w = r.width) == num {
                        return Some(base + (n - r.lo) as usize);
                    }
                }
            }
            base += r.count() as usize;
        }
        None
    }

    /// Sorts hosts in Slurm's order, keeping duplicates.
    pub fn sort(&mut self) {
        let old = merge_sort(std::mem::take(&mut self.ranges));
        self.count = 0;
        self.bytes = 0;
        for r in old {
            self.push_range(r);
        }
    }

    /// Sorts and drops duplicate hosts (upstream `hostlist_uniq`).
    pub fn uniq(&mut self) {
        let old = merge_sort(std::mem::take(&mut self.ranges));
        let mut out: Vec<Range> = Vec::with_capacity(old.len());
        for mut h2 in old {
            if let Some(h1) = out.last_mut() {
                if prefix_cmp(h1, &h2) == Ordering::Equal
                    && width_equiv(h1.lo, &mut h1.width, h2.lo, &mut h2.width)
                {
                    if h1.single && h2.single {
                        continue;
                    }
                    if h2.lo.checked_sub(1) == Some(h1.hi) || h1.hi >= h2.lo {
                        h1.hi = h1.hi.max(h2.hi);
                        continue;
                    }
                }
            }
            out.push(h2);
        }
        self.count = out.iter().map(|r| r.count() as usize).sum();
        self.bytes = out.iter().map(Range::expanded_bytes).sum();
        self.ranges = out;
    }

    /// Host names without brackets, comma separated.
    pub fn to_deranged_string(&self) -> String {
        self.expand().join(",")
    }
}

/// Iterator over host names of a [`Hostlist`].
pub struct Hosts<'a> {
    ranges: &'a [Range],
    idx: usize,
    next: Option<u64>,
}

impl Iterator for Hosts<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            let r = self.ranges.get(self.idx)?;
            let n = self.next.unwrap_or(r.lo);
            if n <= r.hi && (n == r.lo || !r.single) {
                self.next = n.checked_add(1);
                if self.next.is_none() {
                    self.idx += 1;
                }
                return Some(r.host(n));
            }
            self.idx += 1;
            self.next = None;
        }
    }
}

impl fmt::Display for Hostlist {
    /// The bracketed form, e.g. `n[1-3,5],login1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0usize;
        while let Some(first) = self.ranges.get(i) {
            if i > 0 {
                f.write_str(",")?;
            }
            let bracket = first.count() > 1
                || self
                    .ranges
                    .get(i + 1)
                    .is_some_and(|next| within_range(first, next));
            f.write_str(&first.prefix)?;
            if bracket {
                f.write_str("[")?;
            }
            // Consecutive numeric ranges of the same prefix share brackets.
            let mut prev: Option<&Range> = None;
            while let Some(r) = self.ranges.get(i) {
                if let Some(p) = prev {
                    if !within_range(r, p) {
                        break;
                    }
                    f.write_str(",")?;
                }
                if !r.single {
                    write!(f, "{:0w$}", r.lo, w = r.width)?;
                    if r.lo < r.hi {
                        write!(f, "-{:0w$}", r.hi, w = r.width)?;
                    }
                }
                prev = Some(r);
                i += 1;
            }
            if bracket {
                f.write_str("]")?;
            }
        }
        Ok(())
    }
}

impl FromStr for Hostlist {
    type Err = HostlistError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Hostlist::parse(s)
    }
}

/// Expands a hostlist expression into host names.
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    Ok(Hostlist::parse(expr)?.expand())
}

/// Compresses host names into a sorted, de-duplicated ranged string.
pub fn compress<S: AsRef<str>>(names: &[S]) -> Result<String, HostlistError> {
    let mut hl = Hostlist::new();
    for n in names {
        hl.push_host(n.as_ref())?;
    }
    hl.uniq();
    Ok(hl.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(s: &str) -> Vec<String> {
        expand(s).unwrap()
    }

    #[test]
    fn expansion() {
        assert_eq!(exp("n[1-3]"), ["n1", "n2", "n3"]);
        assert_eq!(
            exp("gpu[01-04,07]"),
            ["gpu01", "gpu02", "gpu03", "gpu04", "gpu07"]
        );
        assert_eq!(exp("a,b c\tn[9-10]"), ["a", "b", "c", "n9", "n10"]);
        assert_eq!(exp("n[1-2]-ib"), ["n1-ib", "n2-ib"]);
        let r = exp("rack[1-2]-n[01-08]");
        assert_eq!(r.len(), 16);
        assert_eq!(r.first().unwrap(), "rack1-n01");
        assert_eq!(r.get(8).unwrap(), "rack2-n01");
        assert_eq!(exp("a[1-2]b[3-4]c"), ["a1b3c", "a1b4c", "a2b3c", "a2b4c"]);
        assert_eq!(exp("cn[001-480]").len(), 480);
        assert_eq!(exp("cn[001-480]").last().unwrap(), "cn480");
        assert_eq!(exp(""), Vec::<String>::new());
        assert_eq!(exp("10.0.0.[1-2]"), ["10.0.0.1", "10.0.0.2"]);
    }

    #[test]
    fn bad_expressions() {
        assert!(matches!(
            expand("n[1-2"),
            Err(HostlistError::UnclosedBracket(_))
        ));
        assert!(expand("n[3-1]").is_err());
        assert!(expand("n[a-b]").is_err());
        assert!(expand("n[]").is_err());
        assert!(expand("n[1--2]").is_err());
        assert_eq!(expand("n[0-1000000]"), Err(HostlistError::TooManyHosts));
        assert_eq!(
            expand("a[0-999]b[0-999]c[0-9]"),
            Err(HostlistError::TooManyHosts)
        );
        assert!(expand("n[0-999999]").is_ok());
        let deep = format!("{}n", "a[1]".repeat(100));
        assert!(matches!(
            expand(&deep),
            Err(HostlistError::TooManyBrackets(_))
        ));
        let wide = format!("n[{}1-{}9]", "0".repeat(5000), "0".repeat(5000));
        assert!(Hostlist::parse(&wide).unwrap().len() == 9);
        let wide = format!("n[{}1-900000]", "0".repeat(5000));
        assert_eq!(Hostlist::parse(&wide), Err(HostlistError::TooLarge));
        let long = format!("{}[1-100000]", "p".repeat(1000));
        assert_eq!(Hostlist::parse(&long), Err(HostlistError::TooLarge));
    }

    /// The digit-by-digit walk `natural_cmp` shortcuts (strnatcmp's order).
    fn natural_cmp_walk(a: &str, b: &str) -> Ordering {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
        let (mut ai, mut bi) = (0usize, 0usize);
        loop {
            while at(a, ai).is_ascii_whitespace() {
                ai += 1;
            }
            while at(b, bi).is_ascii_whitespace() {
                bi += 1;
            }
            let (ca, cb) = (at(a, ai), at(b, bi));
            if ca.is_ascii_digit() && cb.is_ascii_digit() {
                let r = if ca == b'0' || cb == b'0' {
                    cmp_left(a, ai, b, bi)
                } else {
                    cmp_right(a, ai, b, bi)
                };
                if r != Ordering::Equal {
                    return r;
                }
            }
            if ca == 0 && cb == 0 {
                return Ordering::Equal;
            }
            if ca != cb {
                return ca.cmp(&cb);
            }
            ai += 1;
            bi += 1;
        }
    }

    proptest::proptest! {
        #[test]
        fn natural_cmp_matches_the_walk(a in "[a0-9 ]{0,12}", b in "[a0-9 ]{0,12}", p in "[a1 ]{0,6}") {
            let (a, b) = (format!("{p}{a}"), format!("{p}{b}"));
            proptest::prop_assert_eq!(natural_cmp(&a, &b), natural_cmp_walk(&a, &b), "{:?} vs {:?}", a, b);
        }
    }

    /// A fuzz find: 666,666 single hosts with a 19-byte numeric prefix took
    /// 40 s to sort under coverage instrumentation (quadratic in the prefix).
    #[test]
    fn long_numeric_prefixes_sort_and_compress() {
        let mut hl = Hostlist::parse("32066666666400096qB[2-20000,1]\x01\t").unwrap();
        assert_eq!(hl.len(), 20000);
        hl.uniq();
        assert_eq!(hl.len(), 20000);
        let again = Hostlist::parse(&hl.to_string()).unwrap();
        assert_eq!(again.expand(), hl.expand());
        assert_eq!(again.nth(0).as_deref(), Some("32066666666400096qB1\x01"));
    }

    #[test]
    fn compression() {
        assert_eq!(compress(&["n1", "n2", "n3", "n5"]).unwrap(), "n[1-3,5]");
        assert_eq!(
            compress(&["n5", "n3", "n1", "n2", "n2"]).unwrap(),
            "n[1-3,5]"
        );
        assert_eq!(
            compress(&["gpu01", "gpu02", "gpu07"]).unwrap(),
            "gpu[01-02,07]"
        );
        assert_eq!(compress(&["n9", "n10"]).unwrap(), "n[9-10]");
        assert_eq!(compress(&["n1", "n01"]).unwrap(), "n[1,01]");
        assert_eq!(compress(&["login", "n1"]).unwrap(), "login,n1");
        assert_eq!(compress(&["n10", "n9", "m2"]).unwrap(), "m2,n[9-10]");
        assert_eq!(compress(&["x"; 0]).unwrap(), "");
        let hl: Hostlist = "rack[1-2]-n[01-08]".parse().unwrap();
        assert_eq!(hl.to_string(), "rack1-n[01-08],rack2-n[01-08]");
        assert_eq!(hl.len(), 16);
        assert!(hl.contains("rack2-n05"));
        assert!(!hl.contains("rack2-n5"));
        assert!(!hl.contains("rack3-n05"));
        assert_eq!(hl.nth(9).as_deref(), Some("rack2-n02"));
    }
}

/// The hand-written range-list reader the nom grammar replaced, kept only
/// to compare against.
#[cfg(test)]
mod legacy {
    use super::{parse_num, HostlistError, NumRange, MAX_HOSTS};

    pub(super) fn parse_range_list(s: &str) -> Result<Vec<NumRange>, HostlistError> {
        let bad = || HostlistError::BadRange(s.to_string());
        let mut out = Vec::new();
        for part in s.split(',') {
            if part.contains('x') {
                return Err(bad());
            }
            let (lo_s, hi_s) = match part.split_once('-') {
                Some((l, h)) => (l, Some(h)),
                None => (part, None),
            };
            let lo = parse_num(lo_s).ok_or_else(bad)?;
            let hi = match hi_s {
                Some("") | None => lo,
                Some(h) => parse_num(h).ok_or_else(bad)?,
            };
            if lo > hi || hi - lo >= MAX_HOSTS as u64 {
                return Err(if lo > hi {
                    bad()
                } else {
                    HostlistError::TooManyHosts
                });
            }
            out.push(NumRange {
                lo,
                hi,
                width: lo_s.len(),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod grammar_props {
    use proptest::prelude::*;

    use super::*;

    type Flat = Result<Vec<(u64, u64, usize)>, HostlistError>;

    fn flat(r: Result<Vec<NumRange>, HostlistError>) -> Flat {
        r.map(|v| v.into_iter().map(|n| (n.lo, n.hi, n.width)).collect())
    }

    /// Range lists that are mostly well formed, then bent by one edit.
    fn range_list() -> impl Strategy<Value = String> {
        let num = prop_oneof![
            "[0-9]{1,4}",
            "0{0,3}[1-9][0-9]{0,2}",
            "[0-9]{19,21}",
            Just(String::new()),
        ];
        let item = (num.clone(), prop::option::of(num))
            .prop_map(|(lo, hi)| hi.map_or(lo.clone(), |h| format!("{lo}-{h}")));
        let list = prop::collection::vec(item, 1..5).prop_map(|v| v.join(","));
        let edit = (
            any::<prop::sample::Index>(),
            prop::sample::select(vec!["", "-", ",", "x", " ", "]", "[", "+", "٣", "--"]),
            0usize..3,
        );
        (list, edit).prop_map(|(s, (at, ins, cut))| {
            let i = at.index(s.len() + 1);
            let end = (i + cut).min(s.len());
            format!("{}{ins}{}", &s[..i], &s[end..])
        })
    }

    /// Hand-picked cases; they pass on the legacy reader too.
    #[test]
    fn range_list_corpus() {
        for s in [
            "",
            ",",
            "1",
            "1,",
            ",1",
            "1-",
            "-1",
            "1--2",
            "1-2-3",
            "01-10",
            "10-01",
            "3-1",
            "0-999999",
            "0-1000000",
            "5-1000004",
            "1x",
            "0x1",
            "1,2-3,004-7",
            "1 ,2",
            "18446744073709551615",
            "18446744073709551616",
            "1-18446744073709551616",
            "0-2000000,x",
            "x,0-2000000",
            "+1",
            "1-+2",
            "٣",
            "1-2,",
            "0001-2",
            "0-1000000-0",
            "0-1000000x",
        ] {
            assert_eq!(
                flat(parse_range_list(s)),
                flat(legacy::parse_range_list(s)),
                "{s:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn range_list_matches_legacy(s in range_list()) {
            prop_assert_eq!(flat(parse_range_list(&s)), flat(legacy::parse_range_list(&s)), "{:?}", s);
        }

        #[test]
        fn range_list_matches_legacy_on_any_text(s in "[0-9x,\\- ]{0,12}") {
            prop_assert_eq!(flat(parse_range_list(&s)), flat(legacy::parse_range_list(&s)), "{:?}", s);
        }
    }
}
