//! Batch stdout/stderr file names: the `%j`-style patterns of sbatch's
//! `--output`/`--error`, expanded the way the stock step daemon does.

use slurm_wire::pack::NO_VAL;

/// What the patterns can refer to, for one batch job on this node.
#[derive(Debug, Clone, Default)]
pub struct FnameCtx {
    pub job_id: u32,
    /// `NO_VAL` for a job that is not part of an array.
    pub array_job_id: u32,
    pub array_task_id: u32,
    pub job_name: String,
    pub user_name: String,
    /// This host's name (`%N`).
    pub hostname: String,
    /// This node's index in the job (`%n`).
    pub node_id: u32,
    pub work_dir: String,
}

/// Upstream caps the zero padding at ten digits.
const MAX_WIDTH: usize = 10;

/// The default name when sbatch sent none.
pub fn default_pattern(array_task_id: u32) -> &'static str {
    if array_task_id == NO_VAL {
        "slurm-%J.out"
    } else {
        "slurm-%A_%a.out"
    }
}

/// Drops backslashes (a doubled one stays as one). `None` when there were
/// none: a name with a backslash is taken literally, unexpanded.
fn remove_backslashes(s: &str) -> Option<String> {
    if !s.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            if it.peek() == Some(&'\\') {
                out.push('\\');
                it.next();
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Expands `format` for the batch step (task 0 on node `ctx.node_id`).
/// Relative names are made relative to the work directory.
pub fn expand(format: &str, ctx: &FnameCtx) -> String {
    // A bare number selects the task whose output goes there; the batch
    // script is task 0 and everything else is discarded.
    if !format.is_empty() && format.bytes().all(|b| b.is_ascii_digit()) {
        return if format.parse::<u64>().ok() == Some(0) {
            relative(format, ctx)
        } else {
            "/dev/null".into()
        };
    }
    if let Some(lit) = remove_backslashes(format) {
        return relative(&lit, ctx);
    }
    relative(&expand_patterns(format, ctx), ctx)
}

fn relative(name: &str, ctx: &FnameCtx) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    let mut out = ctx.work_dir.clone();
    if !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(name);
    out
}

fn expand_patterns(format: &str, ctx: &FnameCtx) -> String {
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars.get(i).copied().unwrap_or_default();
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'%') {
            out.push('%');
            i += 2;
            continue;
        }
        // Optional width, then the conversion character.
        let mut j = i + 1;
        let mut width: usize = 0;
        while let Some(d) = chars.get(j).and_then(|c| c.to_digit(10)) {
            width = width.saturating_mul(10).saturating_add(d as usize);
            j += 1;
        }
        let width = width.min(MAX_WIDTH);
        let num = |n: u32| format!("{n:0width$}");
        let Some(&conv) = chars.get(j) else {
            // A trailing "%" or "%3": kept as written.
            out.extend(chars.get(i..).unwrap_or_default());
            break;
        };
        let rep = match conv {
            'a' => Some(num(ctx.array_task_id)),
            'b' => Some(num(ctx.array_task_id % 10)),
            'A' => Some(num(if ctx.array_task_id == NO_VAL {
                ctx.job_id
            } else {
                ctx.array_job_id
            })),
            // The batch step's %J is the bare job id.
            'j' | 'J' => Some(num(ctx.job_id)),
            'n' => Some(num(ctx.node_id)),
            'N' => Some(ctx.hostname.clone()),
            's' => Some("batch".to_string()),
            't' => Some(num(0)),
            'u' => Some(ctx.user_name.clone()),
            'x' => Some(ctx.job_name.clone()),
            _ => None,
        };
        match rep {
            Some(r) => {
                out.push_str(&r);
                i = j + 1;
            }
            None => {
                // Unknown conversion: left as written.
                out.extend(chars.get(i..=j).unwrap_or_default());
                i = j + 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> FnameCtx {
        FnameCtx {
            job_id: 42,
            array_job_id: 40,
            array_task_id: 7,
            job_name: "wrap".into(),
            user_name: "alice".into(),
            hostname: "n1".into(),
            node_id: 0,
            work_dir: "/home/alice".into(),
        }
    }

    #[test]
    fn every_pattern() {
        let c = ctx();
        assert_eq!(
            expand("/o/%j-%J-%x-%A-%a-%b-%N-%n-%u-%s-%t-%%.out", &c),
            "/o/42-42-wrap-40-7-7-n1-0-alice-batch-0-%.out"
        );
    }

    #[test]
    fn padding_and_cap() {
        let c = ctx();
        assert_eq!(expand("/o/%3a_%5j", &c), "/o/007_00042");
        assert_eq!(expand("/o/%12j", &c), "/o/0000000042");
        // Width is ignored for names.
        assert_eq!(expand("/o/%4N", &c), "/o/n1");
    }

    #[test]
    fn relative_to_work_dir_and_literals() {
        let mut c = ctx();
        assert_eq!(expand("out-%j", &c), "/home/alice/out-42");
        c.work_dir = "/".into();
        assert_eq!(expand("o", &c), "/o");
        assert_eq!(expand("/x/%q%", &c), "/x/%q%");
        assert_eq!(expand("/x/100%%", &c), "/x/100%");
        assert_eq!(expand("/x/a\\%j", &c), "/x/a%j");
        assert_eq!(expand("/x/a\\\\b", &c), "/x/a\\b");
    }

    #[test]
    fn non_array_job() {
        let c = FnameCtx {
            array_task_id: NO_VAL,
            array_job_id: 0,
            ..ctx()
        };
        assert_eq!(
            expand(default_pattern(c.array_task_id), &c),
            "/home/alice/slurm-42.out"
        );
        assert_eq!(expand("%A", &c), "/home/alice/42");
        let arr = ctx();
        assert_eq!(
            expand(default_pattern(arr.array_task_id), &arr),
            "/home/alice/slurm-40_7.out"
        );
    }

    #[test]
    fn task_number_selects_task_zero() {
        let c = ctx();
        assert_eq!(expand("0", &c), "/home/alice/0");
        assert_eq!(expand("3", &c), "/dev/null");
    }
}
