//! `--constraint` expressions, parsed once into a small AST and matched
//! against node feature lists. No I/O.
//!
//! The forms and rules follow stock slurmctld (build_feature_list and
//! node selection), not a general boolean grammar:
//! - `&` (or `,`) and `|` combine left to right with no precedence, so
//!   `a|b&c` is `(a|b)&c`;
//! - one level of parentheses, no counts inside them;
//! - one set of brackets (not inside parentheses): `[a|b]` wants every
//!   node to have the same alternative, `[a*2&b*4]` wants that many nodes
//!   with each feature; inside brackets `&` needs counts and `|` forbids
//!   them;
//! - `a*N` outside brackets only on a lone feature (23.02 on; 22.05 took
//!   counts on several).

/// How two terms are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
}

impl Op {
    fn apply(self, a: bool, b: bool) -> bool {
        match self {
            Op::And => a && b,
            Op::Or => a || b,
        }
    }
}

/// A feature, or a parenthesised list of them evaluated left to right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Atom {
    Feature(String),
    Group {
        first: String,
        rest: Vec<(Op, String)>,
    },
}

impl Atom {
    /// Whether a node with features `have` (comma-separated) matches.
    pub fn matches(&self, have: Option<&str>) -> bool {
        match self {
            Atom::Feature(f) => has(have, f),
            Atom::Group { first, rest } => rest
                .iter()
                .fold(has(have, first), |acc, (op, f)| op.apply(acc, has(have, f))),
        }
    }

    fn names(&self) -> Vec<&str> {
        match self {
            Atom::Feature(f) => vec![f.as_str()],
            Atom::Group { first, rest } => std::iter::once(first.as_str())
                .chain(rest.iter().map(|(_, f)| f.as_str()))
                .collect(),
        }
    }
}

/// The bracketed part of a constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bracket {
    /// `[a|b|(c&d)]`: all nodes share one of the alternatives.
    Matching(Vec<Atom>),
    /// `[a*2&b*4]`: at least that many nodes with each.
    Counts(Vec<(Atom, u32)>),
}

/// One term of the top-level list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// An atom, with a node count (0: none).
    Atom(Atom, u32),
    Bracket(Bracket),
}

/// A parsed `--constraint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    pub first: Term,
    pub rest: Vec<(Op, Term)>,
}

/// Why a constraint is refused (stock answers all with
/// ESLURM_INVALID_FEATURE).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("empty constraint")]
    Empty,
    #[error("'{0}' without a feature before it")]
    MissingFeature(char),
    #[error("'*' must be requested with a positive integer, after a feature or parentheses")]
    BadCount,
    #[error("imbalanced brackets")]
    Brackets,
    #[error("more than one set of brackets")]
    TwoBrackets,
    #[error("imbalanced parentheses")]
    Parens,
    #[error("unexpected character {0:?}")]
    Unexpected(char),
    #[error("'*' outside of brackets with more than one feature")]
    OuterCount,
    #[error("count must be used with '&' in brackets")]
    XandNeedsCount,
    #[error("count must not be used with '|' in brackets")]
    MorWithCount,
    #[error("both '&' and '|' in brackets")]
    MixedBracket,
    #[error("constraint longer than {MAX_LEN} bytes")]
    TooLong,
    #[error("more than {MAX_FEATURES} features in a constraint")]
    TooManyFeatures,
}

/// Bytes one constraint may have: it is parsed again, and tested against
/// every candidate node, on each scheduling pass.
pub const MAX_LEN: usize = 4096;
/// Feature names one constraint may mention (each is looked up on every
/// node at submit).
pub const MAX_FEATURES: usize = 256;

/// Whether comma-separated `have` lists feature `f`.
fn has(have: Option<&str>, f: &str) -> bool {
    have.unwrap_or("").split(',').any(|h| h.trim() == f)
}

const SPECIAL: &[char] = &['&', '|', ',', '*', '[', ']', '(', ')'];

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    /// 22.05's rules (see [`Constraint::parse_with`]).
    v22: bool,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos..).and_then(|r| r.chars().next())
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn op(&mut self) -> Option<Op> {
        match self.peek()? {
            '&' | ',' => {
                self.pos += 1;
                Some(Op::And)
            }
            '|' => {
                self.pos += 1;
                Some(Op::Or)
            }
            _ => None,
        }
    }

    fn name(&mut self, before: char) -> Result<String, ParseError> {
        let rest = self.s.get(self.pos..).unwrap_or("");
        let len = rest.find(SPECIAL).unwrap_or(rest.len());
        if len == 0 {
            return Err(match self.peek() {
                Some('*') => ParseError::BadCount,
                Some(c @ ('&' | '|' | ',')) => ParseError::MissingFeature(norm(c)),
                Some(']') => ParseError::Brackets,
                Some(')') => ParseError::Parens,
                // `[` or `(` where a feature was wanted: stock counts a
                // second opener as imbalance.
                Some('[') => ParseError::Brackets,
                Some('(') => ParseError::Parens,
                Some(c) => ParseError::Unexpected(c),
                None => ParseError::MissingFeature(before),
            });
        }
        let n = rest.get(..len).unwrap_or("").to_string();
        self.pos += len;
        Ok(n)
    }

    /// `*N` if present (0 if not).
    fn count(&mut self) -> Result<u32, ParseError> {
        if self.peek() != Some('*') {
            return Ok(0);
        }
        self.pos += 1;
        let rest = self.s.get(self.pos..).unwrap_or("");
        let len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u32 = rest
            .get(..len)
            .and_then(|d| d.parse().ok())
            .ok_or(ParseError::BadCount)?;
        if n == 0 {
            return Err(ParseError::BadCount);
        }
        self.pos += len;
        // Stock reads the number with strtol and passes over what follows
        // up to the next operator (`a*2x` is `a*2`).
        self.skip_name();
        Ok(n)
    }

    /// Passes over feature-name characters.
    fn skip_name(&mut self) {
        let rest = self.s.get(self.pos..).unwrap_or("");
        self.pos += rest.find(SPECIAL).unwrap_or(rest.len());
    }

    /// A feature or a parenthesised group.
    fn atom(&mut self, in_bracket: bool) -> Result<Atom, ParseError> {
        if self.peek() == Some('[') {
            return Err(if in_bracket {
                ParseError::Brackets
            } else {
                ParseError::TwoBrackets
            });
        }
        if self.peek() != Some('(') {
            return Ok(Atom::Feature(self.name('&')?));
        }
        self.pos += 1;
        if self.peek() == Some('[') {
            return Err(ParseError::Brackets);
        }
        let first = self.name('(')?;
        let mut rest = Vec::new();
        loop {
            match self.peek() {
                Some(')') => {
                    self.pos += 1;
                    break;
                }
                Some('*') => return Err(ParseError::BadCount),
                None => return Err(ParseError::Parens),
                _ => {}
            }
            let Some(op) = self.op() else {
                return Err(match self.bump() {
                    Some('[' | ']') => ParseError::Brackets,
                    Some('(') => ParseError::Parens,
                    Some(c) => ParseError::Unexpected(c),
                    None => ParseError::Parens,
                });
            };
            let before = if op == Op::And { '&' } else { '|' };
            rest.push((op, self.name(before)?));
        }
        Ok(if rest.is_empty() {
            Atom::Feature(first)
        } else {
            Atom::Group { first, rest }
        })
    }

    /// After an atom or `]`: an operator, a closer, or the end. (22.05
    /// passed over a name right after `)` or `]`: `(a)b` is `a`.)
    fn after_term(&mut self) -> Result<(), ParseError> {
        if self.v22 {
            self.skip_name();
        }
        match self.peek() {
            None | Some('&' | '|' | ',' | ']') => Ok(()),
            Some('*') => Err(ParseError::BadCount),
            Some('(' | ')') => Err(ParseError::Parens),
            Some('[') => Err(ParseError::TwoBrackets),
            Some(c) => Err(ParseError::Unexpected(c)),
        }
    }

    fn bracket(&mut self) -> Result<Bracket, ParseError> {
        // '[' already taken
        let mut items = vec![self.counted(true)?];
        let mut ops = Vec::new();
        loop {
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                None => return Err(ParseError::Brackets),
                _ => {}
            }
            let Some(op) = self.op() else {
                return Err(ParseError::Brackets);
            };
            ops.push(op);
            items.push(self.counted(true)?);
        }
        let and = ops.contains(&Op::And);
        let or = ops.contains(&Op::Or);
        if and && or {
            return Err(ParseError::MixedBracket);
        }
        if and {
            if items.iter().any(|(_, n)| *n == 0) {
                return Err(ParseError::XandNeedsCount);
            }
            return Ok(Bracket::Counts(items));
        }
        if or && items.iter().any(|(_, n)| *n > 0) {
            return Err(ParseError::MorWithCount);
        }
        // `[a*2]` is `a*2`; `[a]` is `a`.
        if let [(a, n)] = items.as_slice() {
            if *n > 0 {
                return Ok(Bracket::Counts(vec![(a.clone(), *n)]));
            }
        }
        Ok(Bracket::Matching(
            items.into_iter().map(|(a, _)| a).collect(),
        ))
    }

    fn counted(&mut self, in_bracket: bool) -> Result<(Atom, u32), ParseError> {
        let a = self.atom(in_bracket)?;
        let n = self.count()?;
        self.after_term()?;
        Ok((a, n))
    }

    fn term(&mut self, brackets_seen: &mut bool) -> Result<Term, ParseError> {
        if self.peek() == Some('[') {
            if *brackets_seen {
                return Err(ParseError::TwoBrackets);
            }
            *brackets_seen = true;
            self.pos += 1;
            let b = self.bracket()?;
            self.after_term()?;
            if self.peek() == Some(']') {
                return Err(ParseError::Brackets);
            }
            return Ok(Term::Bracket(b));
        }
        let (a, n) = self.counted(false)?;
        if self.peek() == Some(']') {
            return Err(ParseError::Brackets);
        }
        Ok(Term::Atom(a, n))
    }
}

/// `,` reads as `&`, as stock rewrites it.
fn norm(c: char) -> char {
    if c == ',' {
        '&'
    } else {
        c
    }
}

impl Constraint {
    /// Parses `s` by the rules of a 23.02+ controller.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        Self::parse_with(s, false)
    }

    /// Parses `s`; `v22`: by 22.05's rules, which allowed `a*N` on
    /// several features outside brackets and a name right after `)` or
    /// `]` (ignored).
    pub fn parse_with(s: &str, v22: bool) -> Result<Self, ParseError> {
        if s.is_empty() {
            return Err(ParseError::Empty);
        }
        if s.len() > MAX_LEN {
            return Err(ParseError::TooLong);
        }
        let mut p = Parser { s, pos: 0, v22 };
        let mut seen = false;
        let first = p.term(&mut seen)?;
        let mut rest = Vec::new();
        while let Some(op) = p.op() {
            // A trailing operator is ignored, as stock does.
            if p.peek().is_none() {
                break;
            }
            rest.push((op, p.term(&mut seen)?));
            if rest.len() >= MAX_FEATURES {
                return Err(ParseError::TooManyFeatures);
            }
        }
        if let Some(c) = p.peek() {
            return Err(ParseError::Unexpected(c));
        }
        let c = Constraint { first, rest };
        if c.names().len() > MAX_FEATURES {
            return Err(ParseError::TooManyFeatures);
        }
        if !v22 && c.terms().any(|t| matches!(t, Term::Atom(_, n) if *n > 0)) && c.names().len() > 1
        {
            return Err(ParseError::OuterCount);
        }
        Ok(c)
    }

    fn terms(&self) -> impl Iterator<Item = &Term> {
        std::iter::once(&self.first).chain(self.rest.iter().map(|(_, t)| t))
    }

    /// Every feature name the constraint mentions.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for t in self.terms() {
            match t {
                Term::Atom(a, _) => out.extend(a.names()),
                Term::Bracket(Bracket::Matching(v)) => v.iter().for_each(|a| out.extend(a.names())),
                Term::Bracket(Bracket::Counts(v)) => {
                    v.iter().for_each(|(a, _)| out.extend(a.names()))
                }
            }
        }
        out
    }

    /// How many matching-OR alternatives the placement has to try, in
    /// order (1 when there is no `[a|b]`).
    pub fn alternatives(&self) -> usize {
        self.terms()
            .find_map(|t| match t {
                Term::Bracket(Bracket::Matching(v)) => Some(v.len().max(1)),
                _ => None,
            })
            .unwrap_or(1)
    }

    /// Whether a node with features `have` may be in an allocation that
    /// uses matching-OR alternative `alt`. A counted bracket lets in a
    /// node with any of its features (stock's rest-of-job nodes).
    pub fn node_ok(&self, have: Option<&str>, alt: usize) -> bool {
        let val = |t: &Term| match t {
            Term::Atom(a, _) => a.matches(have),
            Term::Bracket(Bracket::Matching(v)) => v.get(alt).is_some_and(|a| a.matches(have)),
            Term::Bracket(Bracket::Counts(v)) => v.iter().any(|(a, _)| a.matches(have)),
        };
        self.rest
            .iter()
            .fold(val(&self.first), |acc, (op, t)| op.apply(acc, val(t)))
    }

    /// Whether a node matches with some alternative.
    pub fn node_ok_any(&self, have: Option<&str>) -> bool {
        (0..self.alternatives()).any(|k| self.node_ok(have, k))
    }

    /// The counted sets, in order: what the nodes must have, how many,
    /// and whether they must be nodes no earlier set took (inside
    /// brackets; counts outside them, 22.05's, may share nodes).
    pub fn counts(&self) -> Vec<Counted<'_>> {
        let mut out = Vec::new();
        for t in self.terms() {
            match t {
                Term::Atom(atom, n) if *n > 0 => out.push(Counted {
                    atom,
                    count: *n,
                    distinct: false,
                }),
                Term::Bracket(Bracket::Counts(v)) => {
                    out.extend(v.iter().map(|(atom, n)| Counted {
                        atom,
                        count: *n,
                        distinct: true,
                    }))
                }
                _ => {}
            }
        }
        out
    }

    /// Nodes the counted sets need at least: the bracket's sum, or the
    /// largest count outside brackets, whichever is more.
    pub fn counted_nodes(&self) -> u32 {
        let c = self.counts();
        let sum = c
            .iter()
            .filter(|x| x.distinct)
            .fold(0u32, |acc, x| acc.saturating_add(x.count));
        let max = c
            .iter()
            .filter(|x| !x.distinct)
            .map(|x| x.count)
            .max()
            .unwrap_or(0);
        sum.max(max)
    }
}

/// One counted set of a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted<'a> {
    pub atom: &'a Atom,
    pub count: u32,
    /// Nodes an earlier set took do not count (stock's XAND).
    pub distinct: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Constraint {
        match Constraint::parse(s) {
            Ok(c) => c,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn f(s: &str) -> Atom {
        Atom::Feature(s.into())
    }

    #[test]
    fn parses_the_forms_scripts_use() {
        assert_eq!(
            p("a&b"),
            Constraint {
                first: Term::Atom(f("a"), 0),
                rest: vec![(Op::And, Term::Atom(f("b"), 0))]
            }
        );
        assert_eq!(p("a,b"), p("a&b"));
        assert_eq!(
            p("(a|b)&c"),
            Constraint {
                first: Term::Atom(
                    Atom::Group {
                        first: "a".into(),
                        rest: vec![(Op::Or, "b".into())]
                    },
                    0
                ),
                rest: vec![(Op::And, Term::Atom(f("c"), 0))]
            }
        );
        assert_eq!(
            p("[rack1|rack2]").first,
            Term::Bracket(Bracket::Matching(vec![f("rack1"), f("rack2")]))
        );
        assert_eq!(
            p("[rack1*2&rack2*4]").first,
            Term::Bracket(Bracket::Counts(vec![(f("rack1"), 2), (f("rack2"), 4)]))
        );
        assert_eq!(p("a*3").first, Term::Atom(f("a"), 3));
        let c = p("ib&[(r1&x)|r2]");
        assert_eq!(c.alternatives(), 2);
        assert_eq!(c.names(), ["ib", "r1", "x", "r2"]);
        // A trailing operator is dropped, as stock does.
        assert_eq!(p("a&"), p("a"));
    }

    #[test]
    fn refuses_what_stock_refuses() {
        use ParseError::*;
        for (s, e) in [
            ("", Empty),
            ("&a", MissingFeature('&')),
            ("a||b", MissingFeature('|')),
            ("a*0", BadCount),
            ("a*", BadCount),
            ("*2", BadCount),
            ("(a*2)", BadCount),
            ("[a|b", Brackets),
            ("a|b]", Brackets),
            ("[a|b]&[c|d]", TwoBrackets),
            ("[[a]]", Brackets),
            ("([a|b])", Brackets),
            ("(a|b", Parens),
            ("((a))", Parens),
            ("a)", Parens),
            ("(a)b", Unexpected('b')),
            ("a(b)", Parens),
            // 23.02 on: counts outside brackets only on a lone feature.
            ("a*2&b*2", OuterCount),
            ("a*2&b", OuterCount),
            ("[a&b]", XandNeedsCount),
            ("[a*1&b]", XandNeedsCount),
            ("[a*1|b]", MorWithCount),
            ("[a|b*1]", MorWithCount),
            ("[a|b&c*1]", MixedBracket),
        ] {
            assert_eq!(Constraint::parse(s), Err(e), "{s:?}");
        }
        // Stock passes over what follows a count.
        assert_eq!(p("a*2x"), p("a*2"));
        // 22.05 took `(a)b` as `a`.
        let v22 = |s: &str| Constraint::parse_with(s, true).map_err(|e| e.to_string());
        assert_eq!(v22("(r1)ib").map(|c| c.names().len()), Ok(1));
        let names = |c: Constraint| c.names().join(" ");
        assert_eq!(v22("[a|b]c&d").map(names), Ok("a b d".to_string()));
        assert!(Constraint::parse("[a|b]c&d").is_err());
        // 22.05 took several counts outside brackets.
        let c = Constraint::parse_with("a*2&b*2", true).map_err(|e| e.to_string());
        // (They may share nodes: at least 2.)
        assert_eq!(c.map(|c| c.counted_nodes()), Ok(2));
    }

    #[test]
    fn and_or_are_left_to_right() {
        // `a|b&c` is (a|b)&c: a node with only `a` fails.
        let c = p("a|b&c");
        assert!(!c.node_ok_any(Some("a")));
        assert!(c.node_ok_any(Some("a,c")));
        assert!(c.node_ok_any(Some("b,c")));
        let c = p("(a|b)&c");
        assert!(c.node_ok_any(Some("c,b")));
        assert!(!c.node_ok_any(Some("a,b")));
        assert!(!c.node_ok_any(None));
        assert!(p("a,b").node_ok_any(Some("b, a")));
        assert!(!p("a,b").node_ok_any(Some("a")));
    }

    #[test]
    fn matching_or_takes_one_alternative_per_allocation() {
        let c = p("ib&[rack1|rack2]");
        assert_eq!(c.alternatives(), 2);
        // Alternative 0 lets in only rack1 nodes, 1 only rack2 ones.
        assert!(c.node_ok(Some("ib,rack1"), 0));
        assert!(!c.node_ok(Some("ib,rack2"), 0));
        assert!(c.node_ok(Some("ib,rack2"), 1));
        assert!(
            !c.node_ok(Some("rack2"), 1),
            "outside the bracket still applies"
        );
        assert!(!c.node_ok(Some("ib,rack1"), 5));
    }

    #[test]
    fn counts_name_their_sets() {
        let c = p("[rack1*2&rack2*4]");
        let sets: Vec<(&Atom, u32, bool)> = c
            .counts()
            .iter()
            .map(|x| (x.atom, x.count, x.distinct))
            .collect();
        assert_eq!(sets, [(&f("rack1"), 2, true), (&f("rack2"), 4, true)]);
        assert_eq!(c.counted_nodes(), 6);
        // Any node with one of the counted features may make up the rest.
        assert!(c.node_ok_any(Some("rack2")));
        assert!(!c.node_ok_any(Some("rack3")));
        let a = f("a");
        assert_eq!(
            p("a*2").counts(),
            [Counted {
                atom: &a,
                count: 2,
                distinct: false
            }]
        );
        assert_eq!(p("[a|b]").counts(), []);
    }
}
