//! The grammar of a dependency list, parsed before any job is looked up:
//!
//! ```text
//! list    := "" | "0" | clause (("," | "?") clause)*      any "?" makes the list OR'ed
//! clause  := "singleton" state?
//!          | type ":" item (":" item)*
//!          | job                                           the old form: afterany
//! type    := "after" | "afterany" | "afterok" | "afternotok" | "aftercorr"   (any case)
//! item    := job ("+" minutes)? state?                     a job ends at one of ":,?+("
//! job     := id ("_" tasks)?                               tasks: "*", a task id, or a range list
//! state   := "(" text ")"                                  "(failed)" in any case, else unfulfilled
//! ```
//!
//! A bare job id is taken for the old form only where no ':' follows in
//! the rest of the list, as stock decides it. Each byte is read once: a
//! list as long as a message allows parses in linear time.

use super::deps::{DepState, DepType};
use nom::branch::alt;
use nom::bytes::complete::{take_till, take_until};
use nom::character::complete::{char, digit0, digit1};
use nom::combinator::{map, map_res, opt, value, verify};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded};
use nom::IResult;
use slurm_wire::pack::NO_VAL;

/// Where a dependency list stops making sense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("bad dependency list at byte {offset}")]
pub struct DepSyntaxError {
    pub offset: usize,
}

/// The tasks a job reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tasks<'a> {
    /// No `_`: the job itself (or every task, for an array).
    Job,
    /// `_*`: the whole array.
    All,
    /// `_3`: one task id, looked up rather than expanded.
    One(u32),
    /// `_[1-3]`, `_1-3:2`: a task list, bounded and expanded by
    /// [`super::tasks::parse_tasks`].
    List(&'a str),
}

/// `12`, `12_3`, `12_*`, `12_[1-3]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRef<'a> {
    pub job_id: u32,
    pub tasks: Tasks<'a>,
}

/// One job of a typed clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    pub job: JobRef<'a>,
    /// `+N`: minutes, never 0.
    pub minutes: u32,
    pub state: DepState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clause<'a> {
    Singleton(DepState),
    /// A bare job id: afterany, unfulfilled.
    Bare(JobRef<'a>),
    Typed {
        ty: DepType,
        items: Vec<Item<'a>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DepList<'a> {
    pub clauses: Vec<Clause<'a>>,
    /// Joined by `?`: any one clause satisfied is enough.
    pub any_or: bool,
}

/// Parses a whole dependency list (surrounding blanks ignored).
pub fn parse(spec: &str) -> Result<DepList<'_>, DepSyntaxError> {
    let lead = spec.len() - spec.trim_start().len();
    let s = spec.trim();
    let mut list = DepList::default();
    if s.is_empty() || s == "0" {
        return Ok(list);
    }
    let pos = |rest: &str| s.len() - rest.len();
    let offset = |rest: &str| lead + pos(rest);
    // The old form needs a list with no ':' from there on.
    let bare_from = s.rfind(':').map_or(0, |i| i + 1);
    let mut rest = s;
    loop {
        let bare_ok = pos(rest) >= bare_from;
        let (after, c) = clause(rest, bare_ok).map_err(|_| DepSyntaxError {
            offset: offset(rest),
        })?;
        list.clauses.push(c);
        match after.as_bytes().first() {
            None => return Ok(list),
            Some(b'?') => list.any_or = true,
            Some(b',') => {}
            Some(_) => {
                return Err(DepSyntaxError {
                    offset: offset(after),
                })
            }
        }
        rest = &after[1..];
    }
}

/// `12`, `12_3`, `12_*`, `12_[1-3]`, and nothing more.
pub fn job_ref(tok: &str) -> Result<JobRef<'_>, DepSyntaxError> {
    match job(tok) {
        Ok(("", j)) => Ok(j),
        Ok((rest, _)) => Err(DepSyntaxError {
            offset: tok.len() - rest.len(),
        }),
        Err(_) => Err(DepSyntaxError { offset: 0 }),
    }
}

fn clause(s: &str, bare_ok: bool) -> IResult<&str, Clause<'_>> {
    if let Some(t) = tag_ci(s, "singleton") {
        let (t, state) = state(t)?;
        return Ok((t, Clause::Singleton(state)));
    }
    if bare_ok && s.starts_with(|c: char| c.is_ascii_digit()) {
        let (t, tok) = take_till(|c| c == ',')(s)?;
        let (_, j) = whole(job)(tok)?;
        return Ok((t, Clause::Bare(j)));
    }
    let (t, ty) = dep_type(s)?;
    let (t, items) = separated_list1(char(':'), item)(t)?;
    Ok((t, Clause::Typed { ty, items }))
}

fn dep_type(s: &str) -> IResult<&str, DepType> {
    const TYPES: [(&str, DepType); 5] = [
        ("afternotok:", DepType::AfterNotOk),
        ("aftercorr:", DepType::AfterCorr),
        ("afterany:", DepType::AfterAny),
        ("afterok:", DepType::AfterOk),
        ("after:", DepType::After),
    ];
    TYPES
        .iter()
        .find_map(|(p, ty)| tag_ci(s, p).map(|t| (t, *ty)))
        .ok_or_else(|| fail(s))
}

fn item(s: &str) -> IResult<&str, Item<'_>> {
    let (t, tok) = take_till(|c| matches!(c, ':' | ',' | '?' | '+' | '('))(s)?;
    let (_, job) = whole(job)(tok)?;
    let (t, minutes) = opt(preceded(
        char('+'),
        verify(map_res(digit0, str::parse::<u32>), |m| *m != 0),
    ))(t)?;
    let (t, state) = state(t)?;
    Ok((
        t,
        Item {
            job,
            minutes: minutes.unwrap_or(0),
            state,
        },
    ))
}

fn job(s: &str) -> IResult<&str, JobRef<'_>> {
    let (t, job_id) = verify(map_res(digit1, str::parse::<u32>), |id| *id != 0)(s)?;
    let (t, tasks) = opt(preceded(char('_'), tasks))(t)?;
    Ok((
        t,
        JobRef {
            job_id,
            tasks: tasks.unwrap_or(Tasks::Job),
        },
    ))
}

fn tasks(s: &str) -> IResult<&str, Tasks<'_>> {
    alt((
        value(Tasks::All, whole(char('*'))),
        // NO_VAL and INFINITE mean "the job" and "the whole array".
        map(
            whole(verify(map_res(digit1, str::parse::<u32>), |t| *t < NO_VAL)),
            Tasks::One,
        ),
        // A list is checked where it is expanded; digits alone that
        // overflow are not a list either.
        map(
            verify(nom::combinator::rest, |r: &str| {
                !r.bytes().all(|b| b.is_ascii_digit()) || r.is_empty()
            }),
            Tasks::List,
        ),
    ))(s)
}

fn state(s: &str) -> IResult<&str, DepState> {
    map(
        opt(delimited(char('('), take_until(")"), char(')'))),
        |inner: Option<&str>| match inner {
            Some(x) if x.eq_ignore_ascii_case("failed") => DepState::Failed,
            _ => DepState::Unfulfilled,
        },
    )(s)
}

/// `p` must take all of its input.
fn whole<'a, O>(
    mut p: impl FnMut(&'a str) -> IResult<&'a str, O>,
) -> impl FnMut(&'a str) -> IResult<&'a str, O> {
    move |s| {
        let (t, o) = p(s)?;
        if t.is_empty() {
            Ok((t, o))
        } else {
            Err(fail(t))
        }
    }
}

/// ASCII-only case-insensitive prefix (nom's `tag_no_case` folds Unicode,
/// which can make a prefix of a different byte length match).
fn tag_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.as_bytes().get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix.as_bytes())
        .then(|| &s[prefix.len()..])
}

fn fail(s: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(s, nom::error::ErrorKind::Verify))
}
