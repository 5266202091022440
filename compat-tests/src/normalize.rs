//! Normalisation of client output so that two clusters' outputs compare equal
//! when they differ only in job ids, times, host addresses, cluster names or
//! host-specific measurements.

/// Replacements known to the scenario (job ids it created, the cluster name).
#[derive(Default, Debug, Clone)]
pub struct Subst {
    /// (literal, placeholder), applied as whole words.
    pub words: Vec<(String, String)>,
    /// (job id, placeholder), applied only where a job id stands (see
    /// [`replace_job_id`]): small ids like 1 also occur as counts.
    pub job_ids: Vec<(String, String)>,
}

impl Subst {
    pub fn add(&mut self, literal: &str, placeholder: &str) {
        if !literal.is_empty() && !self.words.iter().any(|(l, _)| l == literal) {
            self.words
                .push((literal.to_string(), placeholder.to_string()));
        }
    }

    pub fn add_job(&mut self, id: &str, placeholder: &str) {
        if !id.is_empty() && !self.job_ids.iter().any(|(l, _)| l == id) {
            self.job_ids.push((id.to_string(), placeholder.to_string()));
        }
    }
}

/// What precedes a job id in client output (compared lower-cased).
const JOB_ID_PREFIXES: &[&str] = &[
    "jobid=",
    "arrayjobid=",
    "job ",
    "job id ",
    "jobid ",
    "job_id ",
    "slurm-",
    "stepid=",
    "job=",
];

/// Replace job id `id` where it is a whole word that either starts the line
/// (squeue rows) or follows a job-id prefix (`JobId=`, `job `, `slurm-`).
pub fn replace_job_id(s: &str, id: &str, ph: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let first = s.len() - s.trim_start().len();
    let mut out = String::new();
    let mut last = 0;
    let mut from = 0;
    while let Some(k) = s[from..].find(id) {
        let i = from + k;
        let end = i + id.len();
        from = end;
        let before = s[..i].chars().last();
        let after = s[end..].chars().next();
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            continue;
        }
        let ctx = i == first || JOB_ID_PREFIXES.iter().any(|p| lower[..i].ends_with(p));
        if ctx {
            out.push_str(&s[last..i]);
            out.push_str(ph);
            last = end;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// Keys whose values depend on the machine or the moment, not on the protocol.
const VOLATILE_KEYS: &[&str] = &[
    "CPULoad",
    "FreeMem",
    "OS",
    "BootTime",
    "SlurmdStartTime",
    "LastBusyTime",
    "ResumeAfterTime",
    "Version",
    "RunTime",
    "SubmitTime",
    "EligibleTime",
    "AccrueTime",
    "StartTime",
    "EndTime",
    "Deadline",
    "SuspendTime",
    "LastSchedEval",
    "JobId",
    "ArrayJobId",
    "BatchHost",
    "AllocNode:Sid",
    "CurrentWatts",
    "AveWatts",
];

pub fn normalize(text: &str, subst: &Subst) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = line.trim_end().to_string();
        for (lit, ph) in &subst.words {
            l = replace_word(&l, lit, ph);
        }
        for (id, ph) in &subst.job_ids {
            l = replace_job_id(&l, id, ph);
        }
        l = volatile_values(&l);
        l = pattern_tokens(&l);
        // column widths follow the data (e.g. job id lengths): compare words, not spacing
        out.push_str(&l.split_whitespace().collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Replace `lit` where it is not part of a longer word.
pub fn replace_word(s: &str, lit: &str, ph: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    let mut prev: Option<char> = None;
    while let Some(i) = rest.find(lit) {
        let before = rest[..i].chars().last().or(prev);
        let after = rest[i + lit.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(lit);
        } else {
            out.push_str(ph);
        }
        prev = lit.chars().last();
        rest = &rest[i + lit.len()..];
    }
    out.push_str(rest);
    out
}

/// `Key=value` for volatile keys -> `Key=*`.
fn volatile_values(s: &str) -> String {
    let mut out = String::new();
    let mut i = 0;
    let b = s.as_bytes();
    while i < s.len() {
        let mut matched = false;
        for k in VOLATILE_KEYS {
            let kb = k.as_bytes();
            if b[i..].starts_with(kb)
                && b.get(i + kb.len()) == Some(&b'=')
                && (i == 0 || !is_word(b[i - 1] as char))
            {
                out.push_str(k);
                out.push_str("=*");
                i += kb.len() + 1;
                // OS= values contain spaces up to the next key; others end at whitespace
                if *k == "OS" {
                    while i < s.len() && !(b[i] == b' ' && s[i..].trim_start().is_empty()) {
                        i += 1;
                    }
                } else {
                    while i < s.len() && !b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                }
                matched = true;
                break;
            }
        }
        if !matched {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Token-level patterns: timestamps, durations, IPv4 addresses.
fn pattern_tokens(s: &str) -> String {
    // split into runs of [0-9A-Za-z:.\-T_] and the rest
    let mut out = String::new();
    let mut tok = String::new();
    let flush = |tok: &mut String, out: &mut String| {
        if !tok.is_empty() {
            out.push_str(&classify(tok));
            tok.clear();
        }
    };
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '-' | '_') {
            tok.push(c);
        } else {
            flush(&mut tok, &mut out);
            out.push(c);
        }
    }
    flush(&mut tok, &mut out);
    out
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn classify(tok: &str) -> String {
    // 2026-11-30T03:24:47, or with milliseconds (log timestamps)
    let secs = |t: &str| {
        t.len() == 19
            && t.as_bytes()[4] == b'-'
            && t.as_bytes()[10] == b'T'
            && all_digits(&t[..4])
            && all_digits(&t[11..13])
    };
    if secs(tok)
        || (tok.len() == 23
            && secs(&tok[..19])
            && tok.as_bytes()[19] == b'.'
            && all_digits(&tok[20..]))
    {
        return "<TIME>".into();
    }
    // a.b.c.d(:port)
    let addr = tok.split(':').next().unwrap_or("");
    let parts: Vec<&str> = addr.split('.').collect();
    if parts.len() == 4 && parts.iter().all(|p| all_digits(p) && p.len() <= 3) {
        return "<ADDR>".into();
    }
    // durations: [D-]HH:MM:SS, MM:SS
    let (days, rest) = match tok.split_once('-') {
        Some((d, r)) if all_digits(d) => (true, r),
        _ => (false, tok),
    };
    let fields: Vec<&str> = rest.split(':').collect();
    if (fields.len() == 2 || fields.len() == 3 || days)
        && fields.len() >= 2
        && fields.iter().all(|f| all_digits(f))
    {
        return "<DUR>".into();
    }
    tok.to_string()
}

/// Line-by-line difference, for messages.
pub fn diff(a_label: &str, a: &str, b_label: &str, b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let al: Vec<&str> = a.lines().collect();
    let bl: Vec<&str> = b.lines().collect();
    let mut s = String::new();
    let n = al.len().max(bl.len());
    for i in 0..n {
        let x = al.get(i).copied();
        let y = bl.get(i).copied();
        if x != y {
            s.push_str(&format!(
                "  line {}:\n    {a_label:>5}: {}\n    {b_label:>5}: {}\n",
                i + 1,
                x.unwrap_or("<missing>"),
                y.unwrap_or("<missing>")
            ));
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_only_where_ids_stand() {
        let mut s = Subst::default();
        s.add_job("1", "<JOB1>");
        let n = normalize(
            "    1 debug sleeper alice R 0:03 1 n1\nJobId=1 JobName=x\nPriority=1 NumNodes=1 TresPerNode=gres/gpu:1\nStdOut=/home/alice/slurm-1.out\nSubmitted batch job 1\nerror on job id 1: denied",
            &s,
        );
        assert_eq!(
            n,
            "<JOB1> debug sleeper alice R <DUR> 1 n1\nJobId=* JobName=x\nPriority=1 NumNodes=1 TresPerNode=gres/gpu:1\nStdOut=/home/alice/slurm-<JOB1>.out\nSubmitted batch job <JOB1>\nerror on job id <JOB1>: denied\n"
        );
    }

    #[test]
    fn squeue_row() {
        let mut s = Subst::default();
        s.add_job("42", "<JOB1>");
        let n = normalize(
            "             42     debug  sleeper    alice  R       0:03      1 n1\n",
            &s,
        );
        assert_eq!(n, "<JOB1> debug sleeper alice R <DUR> 1 n1\n");
    }

    #[test]
    fn node_fields() {
        let s = Subst::default();
        let n = normalize(
            "   OS=Linux 6.1.0 #1 SMP  \n   BootTime=2026-11-30T03:24:47 SlurmdStartTime=x\n   NodeAddr=10.101.1.1 Port=6818 LastBusyTime=2026-11-30T03:31:43",
            &s,
        );
        assert_eq!(
            n,
            "OS=*\nBootTime=* SlurmdStartTime=*\nNodeAddr=<ADDR> Port=6818 LastBusyTime=*\n"
        );
    }

    #[test]
    fn words_only() {
        assert_eq!(replace_word("job 12 n12 12", "12", "J"), "job J n12 J");
        assert_eq!(classify("10.77.24.10:6817"), "<ADDR>");
        assert_eq!(classify("1-02:03:04"), "<DUR>");
        assert_eq!(classify("n[1-2]"), "n[1-2]");
        assert_eq!(classify("24.11.5"), "24.11.5");
    }

    #[test]
    fn times_with_and_without_milliseconds() {
        let s = Subst::default();
        assert_eq!(
            normalize(
                "[2026-11-30T10:27:11.006] error: *** JOB 5 CANCELLED AT 2026-11-30T10:27:11 ***",
                &s
            ),
            "[<TIME>] error: *** JOB 5 CANCELLED AT <TIME> ***\n"
        );
        assert_eq!(
            classify("2026-11-30T10:27:11.0061"),
            "2026-11-30T10:27:11.0061"
        );
    }
}
