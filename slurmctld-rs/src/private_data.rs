//! slurm.conf's `PrivateData`: which information only its owner and the
//! operators (root, SlurmUser) may see. Read as stock reads it, by
//! substrings anywhere in the value, case-insensitively (`jobs`, `Job`
//! and `myjobs` all set the job bit).

/// PRIVATE_DATA_* bits (slurm.h), as build info carries them.
pub const JOBS: u16 = 1 << 0;
pub const NODES: u16 = 1 << 1;
pub const PARTITIONS: u16 = 1 << 2;
pub const USAGE: u16 = 1 << 3;
pub const USERS: u16 = 1 << 4;
pub const ACCOUNTS: u16 = 1 << 5;
pub const RESERVATIONS: u16 = 1 << 6;
/// 22.05's PRIVATE_CLOUD_NODES (a display choice, not a privacy one).
pub const CLOUD: u16 = 1 << 7;
pub const EVENTS: u16 = 1 << 8;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrivateData(pub u16);

impl PrivateData {
    pub fn parse(value: Option<&str>) -> PrivateData {
        let Some(v) = value else {
            return PrivateData(0);
        };
        let v = v.to_ascii_lowercase();
        if v.contains("all") {
            return PrivateData(0xffff);
        }
        let words = [
            ("account", ACCOUNTS),
            ("cloud", CLOUD),
            ("event", EVENTS),
            ("job", JOBS),
            ("node", NODES),
            ("partition", PARTITIONS),
            ("reservation", RESERVATIONS),
            ("usage", USAGE),
            ("user", USERS),
        ];
        PrivateData(
            words
                .iter()
                .filter(|(w, _)| v.contains(w))
                .fold(0, |a, (_, b)| a | b),
        )
    }

    pub fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }

    /// Whether every job may be seen, not only one's own (no accounting,
    /// so no account coordinators).
    pub fn all_jobs_visible(self, operator: bool) -> bool {
        !self.has(JOBS) || operator
    }

    /// Whether `uid` may list nodes (stock refuses the whole listing).
    pub fn nodes_visible(self, operator: bool) -> bool {
        !self.has(NODES) || operator
    }

    /// Whether `uid` may list partitions (stock refuses the listing).
    pub fn partitions_visible(self, operator: bool) -> bool {
        !self.has(PARTITIONS) || operator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_as_stock_reads_it() {
        assert_eq!(PrivateData::parse(None), PrivateData(0));
        assert_eq!(
            PrivateData::parse(Some("jobs,Nodes,usage")),
            PrivateData(JOBS | NODES | USAGE)
        );
        // "users" also holds "user"; "accounts" "account".
        assert_eq!(
            PrivateData::parse(Some("accounts,users")),
            PrivateData(ACCOUNTS | USERS)
        );
        assert_eq!(PrivateData::parse(Some("ALL")), PrivateData(0xffff));
        assert_eq!(
            PrivateData::parse(Some("partition,reservation,events,cloud")),
            PrivateData(PARTITIONS | RESERVATIONS | EVENTS | CLOUD)
        );
    }

    #[test]
    fn owners_and_operators_see_private_jobs() {
        assert!(!PrivateData(JOBS).all_jobs_visible(false));
        assert!(PrivateData(JOBS).all_jobs_visible(true));
        assert!(PrivateData(NODES).all_jobs_visible(false));
        assert!(!PrivateData(NODES).nodes_visible(false));
        assert!(PrivateData(NODES).nodes_visible(true));
        assert!(PrivateData(JOBS).partitions_visible(false));
        assert!(!PrivateData(PARTITIONS).partitions_visible(false));
    }
}
