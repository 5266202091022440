//! Generic resources: what a node has (its `Gres=` line) and what a job
//! asks for per node (`tres_per_node`, from `--gres`). Pure parsing and
//! counting; allocation of device indexes is in [`crate::sched`].

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

/// `4`, `2K`, `1M`, `1G`: a count with an optional binary suffix.
fn count(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1u64 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1u64 << 30),
        't' | 'T' => (&s[..s.len() - 1], 1u64 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
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
