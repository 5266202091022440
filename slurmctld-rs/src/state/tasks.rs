//! Array task lists (`1-9:2,12`, `[0-3]`): parsed with every element and
//! the span of them all bounded before any id is expanded. A leaf, shared
//! by arrays and dependencies.

use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("empty job array specification")]
    Empty,
    #[error("bad job array element {0:?}")]
    Element(String),
    #[error("array task id {id} is not below MaxArraySize {max}")]
    TooLarge { id: u32, max: u32 },
    #[error("job array specification spans more than {0} task ids")]
    TooMuch(u64),
}

/// Stock's ceiling on `MaxArraySize` (slurm.conf refuses more).
pub const MAX_MAX_ARRAY_SIZE: u32 = 4_000_001;

pub(super) fn num(s: &str) -> Result<u32, ArrayError> {
    s.trim()
        .parse::<u32>()
        .map_err(|_| ArrayError::Element(s.to_string()))
}

/// Task ids of a list such as `1-9:2,12` (no throttle), each below `max`
/// (MaxArraySize). Every element is checked before any is expanded, and
/// the ids the elements span together are bounded too (`0-1000` repeated
/// a million times would otherwise cost a billion inserts).
pub fn parse_tasks(s: &str, max: u32) -> Result<BTreeSet<u32>, ArrayError> {
    let ranges = task_ranges(s, max)?;
    let mut tasks = BTreeSet::new();
    for (lo, hi, step) in ranges {
        let mut t = lo;
        while t <= hi {
            tasks.insert(t);
            match t.checked_add(step) {
                Some(n) => t = n,
                None => break,
            }
        }
    }
    if tasks.is_empty() {
        return Err(ArrayError::Empty);
    }
    Ok(tasks)
}

/// The `(lo, hi, step)` elements of a task list, each within `max`, and
/// spanning at most twice `max` ids in all (overlaps allowed, floods not).
pub fn task_ranges(s: &str, max: u32) -> Result<Vec<(u32, u32, u32)>, ArrayError> {
    let s = s.trim();
    let s = s
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(s);
    let budget = 2 * u64::from(max.min(MAX_MAX_ARRAY_SIZE)) + 64;
    let mut spanned = 0u64;
    let mut out = Vec::new();
    for el in s.split(',') {
        if el.is_empty() {
            return Err(ArrayError::Element(el.to_string()));
        }
        let (range, step) = match el.split_once(':') {
            Some((r, st)) => (r, num(st)?),
            None => (el, 1),
        };
        if step == 0 {
            return Err(ArrayError::Element(el.to_string()));
        }
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let v = num(range)?;
                (v, v)
            }
        };
        if lo > hi {
            return Err(ArrayError::Element(el.to_string()));
        }
        if hi >= max {
            return Err(ArrayError::TooLarge { id: hi, max });
        }
        spanned += u64::from(hi - lo) / u64::from(step) + 1;
        if spanned > budget {
            return Err(ArrayError::TooMuch(budget));
        }
        out.push((lo, hi, step));
    }
    if out.is_empty() {
        return Err(ArrayError::Empty);
    }
    Ok(out)
}
