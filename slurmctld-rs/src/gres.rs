//! Generic resources: what a node has (its `Gres=` line) and what a job
//! asks for per node (`tres_per_node`, from `--gres`). Pure parsing and
//! counting; allocation of device indexes is in [`crate::sched`].

use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{all_consuming, opt, recognize};
use nom::sequence::{pair, preceded};
use nom::IResult;

/// One `name[:type]:count` item of a node's `Gres=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGres {
    pub name: String,
    pub type_name: Option<String>,
    pub count: u64,
}

/// One GRES a job wants on each of its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresReq {
    pub name: String,
    /// `None`: any type.
    pub type_name: Option<String>,
    pub count: u64,
}

/// Why a `--gres` request cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid generic resource specification `{0}`")]
pub struct BadGres(pub String);

/// `4`, `+4`, `2K`, `1m`: decimal digits (a `+` allowed, as `str::parse`
/// takes it) and an optional binary suffix, nothing after.
fn count_parts(i: &str) -> IResult<&str, (&str, Option<char>)> {
    all_consuming(pair(
        recognize(preceded(opt(char('+')), digit1)),
        opt(one_of("kKmMgGtT")),
    ))(i)
}

/// A count with its suffix applied; `None` when it is not one or does not
/// fit.
fn count(s: &str) -> Option<u64> {
    let (_, (digits, suffix)) = count_parts(s).ok()?;
    let shift = match suffix.map(|c| c.to_ascii_uppercase()) {
        Some('K') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some('T') => 40,
        _ => 0,
    };
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// Splits `name[:type][:count]` (a trailing `(S:0-1)` socket binding or
/// `:no_consume` flag is ignored). A missing count is 1.
fn item(s: &str) -> Option<(String, Option<String>, u64)> {
    let s = s.split('(').next()?.trim();
    let mut parts: Vec<&str> = s.split(':').collect();
    parts.retain(|p| !p.eq_ignore_ascii_case("no_consume"));
    let name = parts.first().filter(|n| !n.is_empty())?.to_string();
    match parts.len() {
        1 => Some((name, None, 1)),
        2 => match count(parts[1]) {
            Some(n) => Some((name, None, n)),
            None => Some((name, Some(parts[1].to_string()), 1)),
        },
        3 => Some((name, Some(parts[1].to_string()), count(parts[2])?)),
        _ => None,
    }
}

/// A node's `Gres=` (`gpu:a100:4,nic:1`); items that cannot be read are
/// left out (slurm-conf reported them when the file was read).
pub fn parse_node_gres(s: &str) -> Vec<NodeGres> {
    s.split(',')
        .filter(|t| !t.trim().is_empty() && !t.trim().eq_ignore_ascii_case("(null)"))
        .filter_map(item)
        .map(|(name, type_name, count)| NodeGres {
            name,
            type_name,
            count,
        })
        .collect()
}

/// A job's `tres_per_node` (`gres/gpu:a100:2,gres/nic`; 22.05 clients
/// write `gres:gpu:2`). Non-GRES TRES (none exist per node today) are
/// ignored.
pub fn parse_per_node(s: &str) -> Result<Vec<GresReq>, BadGres> {
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let Some(rest) = t.strip_prefix("gres/").or_else(|| t.strip_prefix("gres:")) else {
            continue;
        };
        let (name, type_name, count) = item(rest).ok_or_else(|| BadGres(t.to_string()))?;
        if count == 0 {
            continue;
        }
        out.push(GresReq {
            name,
            type_name,
            count,
        });
    }
    Ok(out)
}

impl GresReq {
    pub fn matches(&self, g: &NodeGres) -> bool {
        self.name == g.name && (self.type_name.is_none() || self.type_name == g.type_name)
    }

    /// How many the node has in all that could serve this request.
    pub fn available_in(&self, have: &[NodeGres]) -> u64 {
        have.iter()
            .filter(|g| self.matches(g))
            .map(|g| g.count)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_gres_lines() {
        let g = parse_node_gres("gpu:a100:4,gpu:v100:2(S:0),nic,mps:2K");
        assert_eq!(
            g,
            vec![
                NodeGres {
                    name: "gpu".into(),
                    type_name: Some("a100".into()),
                    count: 4
                },
                NodeGres {
                    name: "gpu".into(),
                    type_name: Some("v100".into()),
                    count: 2
                },
                NodeGres {
                    name: "nic".into(),
                    type_name: None,
                    count: 1
                },
                NodeGres {
                    name: "mps".into(),
                    type_name: None,
                    count: 2048
                },
            ]
        );
        assert!(parse_node_gres("").is_empty());
    }

    #[test]
    fn job_requests_of_both_spellings() {
        let r = parse_per_node("gres/gpu:a100:2,gres:nic").unwrap();
        assert_eq!(r[0].type_name.as_deref(), Some("a100"));
        assert_eq!(r[0].count, 2);
        assert_eq!(r[1].name, "nic");
        assert_eq!(r[1].count, 1);
        let any = parse_per_node("gres/gpu:3").unwrap();
        assert_eq!(any[0].type_name, None);
        let have = parse_node_gres("gpu:a100:4,gpu:v100:2");
        assert_eq!(any[0].available_in(&have), 6);
        assert_eq!(r[0].available_in(&have), 4);
        assert!(parse_per_node("gres/gpu:a:b:c").is_err());
    }
}

/// The hand-written item reader the nom grammar replaced, kept only to
/// compare against.
#[cfg(test)]
mod legacy {
    pub(super) fn count(s: &str) -> Option<u64> {
        let (num, mult) = match s.chars().last()? {
            'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
            'm' | 'M' => (&s[..s.len() - 1], 1u64 << 20),
            'g' | 'G' => (&s[..s.len() - 1], 1u64 << 30),
            't' | 'T' => (&s[..s.len() - 1], 1u64 << 40),
            _ => (s, 1),
        };
        num.parse::<u64>().ok()?.checked_mul(mult)
    }

    pub(super) fn item(s: &str) -> Option<(String, Option<String>, u64)> {
        let s = s.split('(').next()?.trim();
        let mut parts: Vec<&str> = s.split(':').collect();
        parts.retain(|p| !p.eq_ignore_ascii_case("no_consume"));
        let name = parts.first().filter(|n| !n.is_empty())?.to_string();
        match parts.len() {
            1 => Some((name, None, 1)),
            2 => match count(parts[1]) {
                Some(n) => Some((name, None, n)),
                None => Some((name, Some(parts[1].to_string()), 1)),
            },
            3 => Some((name, Some(parts[1].to_string()), count(parts[2])?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod grammar_props {
    use super::*;

    /// Pieces of GRES-like text: names, types, counts with suffixes, flags
    /// and socket bindings, with separators in odd places.
    const PIECES: &[&str] = &[
        "gpu",
        "a100",
        "gres/",
        "gres:",
        ":",
        "::",
        ",",
        "(S:0-1)",
        "(",
        ")",
        "no_consume",
        "NO_CONSUME",
        "4",
        "0",
        "+2",
        "-1",
        "2K",
        "1m",
        "3G",
        "1t",
        "k",
        "T",
        "x",
        "18446744073709551615",
        "17179869184",
        "16777216K",
        " ",
        "\t",
        "é",
        "(null)",
    ];

    /// `parse_per_node` over the legacy item reader.
    fn legacy_per_node(s: &str) -> Result<Vec<GresReq>, BadGres> {
        let mut out = Vec::new();
        for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let Some(rest) = t.strip_prefix("gres/").or_else(|| t.strip_prefix("gres:")) else {
                continue;
            };
            let (name, type_name, count) =
                legacy::item(rest).ok_or_else(|| BadGres(t.to_string()))?;
            if count > 0 {
                out.push(GresReq {
                    name,
                    type_name,
                    count,
                });
            }
        }
        Ok(out)
    }

    fn same(s: &str) {
        assert_eq!(item(s), legacy::item(s), "{s:?}");
        assert_eq!(count(s), legacy::count(s), "{s:?}");
        assert_eq!(parse_per_node(s), legacy_per_node(s), "{s:?}");
    }

    /// Hand-picked cases; they pass on the legacy reader too.
    #[test]
    fn gres_corpus() {
        for s in [
            "",
            "gpu",
            "gpu:",
            ":4",
            "gpu:4",
            "gpu:a100",
            "gpu:a100:4",
            "gpu:a100:x",
            "gpu:4k",
            "gpu:4K",
            "gpu:k",
            "gpu:+4",
            "gpu:-4",
            "gpu: 4",
            "gpu:4 ",
            " gpu:4",
            "gpu:a:b:c",
            "gpu:no_consume:2",
            "gpu:a:no_consume:2",
            "gpu:2(S:0-1)",
            "gpu(S:0):2",
            "gpu:é",
            "gpu:1é",
            "gpu:18446744073709551615",
            "gpu:18446744073709551616",
            "gpu:18014398509481984K",
            "gpu:17592186044416K",
            "gpu:a100:0",
            "gpu::2",
            "gpu:a100:",
            "gpu:4T",
            "gpu:٣",
            "4",
            "+4",
            "4kB",
            "kk",
            "1_0",
            "gres/gpu:2,gres:nic:a:b:c",
        ] {
            same(s);
        }
    }

    /// Every text of up to three pieces.
    #[test]
    fn short_texts_match_legacy() {
        let mut s = String::new();
        for a in PIECES {
            for b in PIECES {
                for c in PIECES {
                    s.clear();
                    s.push_str(a);
                    same(&s);
                    s.push_str(b);
                    same(&s);
                    s.push_str(c);
                    same(&s);
                }
            }
        }
    }

    /// Longer texts from a fixed xorshift stream (this crate has no
    /// proptest), some of them prefixed like a job's request.
    #[test]
    fn long_texts_match_legacy() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut s = String::new();
        for _ in 0..20_000 {
            s.clear();
            if next() % 2 == 0 {
                s.push_str("gres/");
            }
            for _ in 0..next() % 12 {
                s.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            same(&s);
        }
    }
}
