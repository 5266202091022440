//! The dependency grammar against the hand parser it replaced (kept here
//! as `legacy`): same dependencies, same refusals.

use super::*;
use crate::state::testkit::{controller_up, job_id, submit, TWO_NODES};
use proptest::prelude::*;

/// The hand parser as it was before the nom grammar; read only by the
/// differential tests.
mod legacy {
    use super::*;
    use crate::state::depend::MAX_DEPENDENCIES;

    pub(super) fn parse_dependency(
        c: &Controller,
        me: Option<u32>,
        spec: &str,
        refuse_unknown: bool,
    ) -> Result<Vec<Dep>, StateError> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "0" {
            return Ok(Vec::new());
        }
        let mut deps: Vec<Dep> = Vec::new();
        let mut any_or = false;
        let max_task = c.max_array_size();
        let mut seen: std::collections::HashSet<(u8, u32, u32)> = Default::default();
        let mut push = |deps: &mut Vec<Dep>, d: Dep| -> Result<(), StateError> {
            if seen.insert((d.ty.code(), d.job_id, d.task)) {
                if deps.len() >= MAX_DEPENDENCIES {
                    tracing::info!("dependency refused: more than {MAX_DEPENDENCIES} elements");
                    return Err(StateError::Dependency);
                }
                deps.push(d);
            }
            Ok(())
        };
        let mut rest = spec;
        loop {
            let lower = rest.to_ascii_lowercase();
            let sep_after: Option<char>;
            if lower.starts_with("singleton") {
                let mut t = &rest[9..];
                let state = take_state(&mut t)?;
                push(
                    &mut deps,
                    Dep {
                        ty: DepType::Singleton,
                        job_id: 0,
                        task: NO_VAL,
                        time: 0,
                        state,
                        or: false,
                    },
                )?;
                sep_after = t.chars().next();
                if !matches!(sep_after, None | Some(',') | Some('?')) {
                    return Err(StateError::Dependency);
                }
                rest = t.get(1..).unwrap_or("");
            } else if !rest.contains(':') && rest.starts_with(|c: char| c.is_ascii_digit()) {
                // The old form: a bare job id means afterany.
                let (tok, tail) = match rest.find(',') {
                    Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                    None => (rest, None),
                };
                for (job_id, mut task) in ids_of(tok, max_task)? {
                    if c.is_same_job(me, job_id, task) {
                        return Err(StateError::Dependency);
                    }
                    c.dep_target_exists(job_id, &mut task);
                    push(
                        &mut deps,
                        Dep {
                            ty: DepType::AfterAny,
                            job_id,
                            task,
                            time: 0,
                            state: DepState::Unfulfilled,
                            or: false,
                        },
                    )?;
                }
                match tail {
                    Some(t) => {
                        rest = t;
                        continue;
                    }
                    None => break,
                }
            } else {
                let ty = [
                    ("afternotok:", DepType::AfterNotOk),
                    ("aftercorr:", DepType::AfterCorr),
                    ("afterany:", DepType::AfterAny),
                    ("afterok:", DepType::AfterOk),
                    ("after:", DepType::After),
                ]
                .into_iter()
                .find(|(p, _)| lower.starts_with(p));
                let Some((prefix, ty)) = ty else {
                    return Err(StateError::Dependency);
                };
                let mut t = &rest[prefix.len()..];
                // job_id[_task][+time][(state)], joined by ':'.
                loop {
                    let end = t.find([':', ',', '?', '+', '(']).unwrap_or(t.len());
                    let ids = ids_of(&t[..end], max_task)?;
                    t = &t[end..];
                    let mut time = 0u32;
                    if let Some(x) = t.strip_prefix('+') {
                        let n = x.find(|c: char| !c.is_ascii_digit()).unwrap_or(x.len());
                        let m: u32 = x[..n].parse().map_err(|_| StateError::Dependency)?;
                        if m == 0 {
                            return Err(StateError::Dependency);
                        }
                        time = m.saturating_mul(60);
                        t = &x[n..];
                    }
                    let state = take_state(&mut t)?;
                    for (job_id, mut task) in ids {
                        let exists = c.dep_target_exists(job_id, &mut task);
                        // Without the job, afterok/afternotok could never
                        // be decided: stock refuses them.
                        if !exists
                            && refuse_unknown
                            && matches!(ty, DepType::AfterOk | DepType::AfterNotOk)
                        {
                            return Err(StateError::Dependency);
                        }
                        if c.is_same_job(me, job_id, task) {
                            return Err(StateError::Dependency);
                        }
                        push(
                            &mut deps,
                            Dep {
                                ty,
                                job_id,
                                task,
                                time,
                                state,
                                or: false,
                            },
                        )?;
                    }
                    match t.chars().next() {
                        Some(':') => t = &t[1..],
                        None | Some(',') | Some('?') => break,
                        Some(_) => return Err(StateError::Dependency),
                    }
                }
                sep_after = t.chars().next();
                rest = t.get(1..).unwrap_or("");
            }
            match sep_after {
                Some('?') => any_or = true,
                Some(',') => {}
                _ => break,
            }
        }
        if any_or {
            for d in &mut deps {
                d.or = true;
            }
        }
        Ok(deps)
    }

    /// `(state)` after a dependency; `fulfilled` may not be asked for.
    fn take_state(t: &mut &str) -> Result<DepState, StateError> {
        let Some(x) = t.strip_prefix('(') else {
            return Ok(DepState::Unfulfilled);
        };
        let Some(end) = x.find(')') else {
            return Err(StateError::Dependency);
        };
        let state = if x[..end].eq_ignore_ascii_case("failed") {
            DepState::Failed
        } else {
            DepState::Unfulfilled
        };
        *t = &x[end + 1..];
        Ok(state)
    }

    /// `12`, `12_3`, `12_*`, `12_[1-3]` -> (job id, task) pairs. A range's
    /// task ids are below `max_task` (MaxArraySize; stock's _xlate_array_dep
    /// fits them in a bitmap that size): checked before it is expanded. A
    /// single task id needs no bound (it is looked up, not expanded).
    pub fn ids_of(tok: &str, max_task: u32) -> Result<Vec<(u32, u32)>, StateError> {
        let (id, task) = match tok.split_once('_') {
            Some((a, b)) => (a, Some(b)),
            None => (tok, None),
        };
        let job_id: u32 = id.parse().map_err(|_| StateError::Dependency)?;
        if job_id == 0 {
            return Err(StateError::Dependency);
        }
        Ok(match task {
            None => vec![(job_id, NO_VAL)],
            Some("*") => vec![(job_id, INFINITE)],
            Some(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                let task: u32 = t.parse().map_err(|_| StateError::Dependency)?;
                // NO_VAL and INFINITE mean "the job" and "the whole array".
                if task >= NO_VAL {
                    return Err(StateError::Dependency);
                }
                vec![(job_id, task)]
            }
            Some(t) => crate::state::tasks::parse_tasks(t, max_task)
                .map_err(|_| StateError::Dependency)?
                .into_iter()
                .map(|t| (job_id, t))
                .collect(),
        })
    }
}

/// A controller holding plain jobs 1-2 and a 4-task array 3 (tasks 0-3).
fn ctrl() -> Controller {
    let mut c = controller_up(TWO_NODES, &["n1", "n2"], 4, 1000);
    for _ in 0..2 {
        job_id(submit(&mut c, 1000, |_| {}).0);
    }
    job_id(submit(&mut c, 1000, |d| d.array_inx = Some("0-3".into())).0);
    c
}

fn all_ways(c: &Controller, spec: &str) {
    for me in [None, Some(1), Some(3)] {
        for refuse in [false, true] {
            assert_eq!(
                c.parse_dependency(me, spec, refuse),
                legacy::parse_dependency(c, me, spec, refuse),
                "{spec:?} me={me:?} refuse={refuse}"
            );
        }
    }
}

/// Hand-picked cases; they pass on the legacy parser too.
#[test]
fn cases() {
    let c = ctrl();
    for spec in [
        "",
        " ",
        "0",
        "1",
        "1,2",
        "1,2,",
        ",1",
        "3",
        "3_1",
        "3_*",
        "3_[0-2]",
        "3_[0,2]",
        "9",
        "afterok:1",
        "AFTEROK:1:2",
        "afterok:1,afterany:2",
        "afterok:1?afterany:2",
        "after:1+5",
        "after:1+0",
        "after:1+",
        "after:1+5(failed)",
        "after:1(failed)+5",
        "afterany:1(FAILED)",
        "afterany:1(x)",
        "afterany:1(",
        "afterok:",
        "afterok::1",
        "afterok:1:",
        "singleton",
        "SINGLETON(failed)",
        "singleton,1",
        "singletonx",
        "1,singleton",
        "1,afterok:2",
        "afterok:2,1",
        "afterok:2?1",
        "1?2",
        "aftercorr:3",
        "afternotok:9",
        "afterok:3_4294967294",
        "afterok:3_4294967295",
        "afterok:3_99999999999",
        "afterok:0",
        "afterok:1_",
        "1_",
        "1_+3",
        "afterok:3_[0-4000000000]",
        "afterany:+1",
        "after:1+99999999999",
        "afterburner:1",
        " afterok:1 ",
        "afterok:1\n",
        "after\u{212a}:1",
        "aftero\u{212a}:1",
        "singleto\u{212a}",
        "3_1-2",
        "afterany:3_1-2:1",
    ] {
        all_ways(&c, spec);
    }
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("afterok:".to_string()),
        Just("afterany:".to_string()),
        Just("after:".to_string()),
        Just("afternotok:".to_string()),
        Just("aftercorr:".to_string()),
        Just("singleton".to_string()),
        Just("(failed)".to_string()),
        Just("(x)".to_string()),
        "[0-9]{1,2}",
        "_[0-9*]{0,2}",
        "_\\[[0-9,\\-]{0,5}\\]",
        "[+:,?()_ ]",
    ]
}

proptest! {
    #[test]
    fn grammar_matches_legacy(parts in prop::collection::vec(token(), 0..8)) {
        let c = ctrl();
        all_ways(&c, &parts.concat());
    }

    #[test]
    fn grammar_matches_legacy_on_any_text(s in "[a-z0-9_:,?()+*\\[\\] \\-]{0,16}") {
        let c = ctrl();
        all_ways(&c, &s);
    }
}
