//! Index lists in Slurm's range form (`bit_fmt`): CPU ids for a cpuset,
//! GRES indexes in `scontrol show job -d`, as `0-3,8,10-11`.

/// `idx` sorted and de-duplicated, consecutive runs as `a-b`, joined by
/// commas; empty for no index.
pub fn format_ranges(idx: &[u32]) -> String {
    let mut v = idx.to_vec();
    v.sort_unstable();
    v.dedup();
    // (start, end) runs of consecutive indexes.
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for n in v {
        match runs.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(n) => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_become_ranges() {
        assert_eq!(format_ranges(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_ranges(&[1, 2]), "1-2");
        assert_eq!(format_ranges(&[0, 2, 4]), "0,2,4");
        assert_eq!(format_ranges(&[5]), "5");
        assert_eq!(format_ranges(&[]), "");
    }

    #[test]
    fn unsorted_and_repeated_input() {
        assert_eq!(format_ranges(&[3, 0, 1, 1, 3]), "0-1,3");
        assert_eq!(format_ranges(&[7, 7, 7]), "7");
    }

    #[test]
    fn the_largest_index_does_not_overflow() {
        assert_eq!(
            format_ranges(&[u32::MAX, u32::MAX - 1, 0]),
            "0,4294967294-4294967295"
        );
    }
}
