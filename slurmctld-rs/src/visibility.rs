//! Which partitions a requester sees in the job, node and partition
//! listings, as stock's build_visible_parts: without SHOW_ALL (`-a`), a
//! user who is not an operator does not see Hidden partitions nor those
//! whose AllowGroups leave them out; nodes only in such partitions, and
//! jobs in them, are left out too. Root and SlurmUser see everything. The
//! same in 22.05, 24.11 and 26.05.

use crate::state::config::ClusterConf;
use crate::state::job::{Job, UserInfo};
use crate::state::partition;
use std::sync::Arc;

/// `SHOW_ALL` in a listing request's show_flags.
pub const SHOW_ALL: u16 = 0x0001;

/// The partitions a requester sees, by index; None: all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Visible(Option<Arc<[bool]>>);

impl Visible {
    /// Every partition (an operator, SHOW_ALL, or nothing to hide).
    pub fn all() -> Self {
        Visible(None)
    }

    /// For a requester with `show_flags`; `user` is looked up only when a
    /// partition could be hidden from them.
    pub fn of(
        conf: &ClusterConf,
        uid: u32,
        show_flags: u16,
        user: impl FnOnce() -> UserInfo,
    ) -> Self {
        if show_flags & SHOW_ALL != 0
            || conf.is_admin(uid)
            || conf
                .partitions
                .iter()
                .all(|p| !p.conf.hidden && p.allow_gids.is_none())
        {
            return Visible::all();
        }
        let user = user();
        let seen: Arc<[bool]> = conf
            .partitions
            .iter()
            .map(|p| !p.conf.hidden && partition::group_allowed(conf, p, &user))
            .collect();
        if seen.iter().all(|&s| s) {
            return Visible::all();
        }
        Visible(Some(seen))
    }

    pub fn partition(&self, i: usize) -> bool {
        self.0
            .as_ref()
            .is_none_or(|s| s.get(i).copied().unwrap_or(true))
    }

    /// A job is left out when its partition is.
    pub fn job(&self, j: &Job) -> bool {
        self.partition(j.part)
    }

    /// Per node: false for a node that is in partitions but in none seen
    /// (a node in no partition is always seen). None: all are seen.
    pub fn nodes(&self, conf: &ClusterConf) -> Option<Vec<bool>> {
        self.0.as_ref()?;
        let mut member = vec![false; conf.nodes.len()];
        let mut seen = vec![false; conf.nodes.len()];
        for (pi, p) in conf.partitions.iter().enumerate() {
            for &n in &p.nodes {
                if let Some(m) = member.get_mut(n) {
                    *m = true;
                }
                if self.partition(pi) {
                    if let Some(s) = seen.get_mut(n) {
                        *s = true;
                    }
                }
            }
        }
        Some(member.iter().zip(&seen).map(|(&m, &s)| !m || s).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::testkit::{cluster_conf, user};

    const CONF: &str = "ClusterName=t\nSlurmctldHost=ctl\nSlurmUser=root\n\
        NodeName=n[1-4] CPUs=1\n\
        PartitionName=open Nodes=n1 Default=YES\n\
        PartitionName=secret Nodes=n2,n3 Hidden=YES\n\
        PartitionName=wheel Nodes=n3,n4 AllowGroups=wheel\n";

    fn conf() -> ClusterConf {
        let mut c = cluster_conf(CONF);
        c.resolve_allow_groups(|n| (n == "wheel").then_some(10));
        c
    }

    #[test]
    fn hidden_and_other_groups_partitions_are_not_seen_without_show_all() {
        let c = conf();
        let v = Visible::of(&c, 1000, 0, || user(1000, 1000));
        assert_eq!(
            (0..3).map(|i| v.partition(i)).collect::<Vec<_>>(),
            [true, false, false]
        );
        // n3 is in two partitions, neither seen; n4 only in wheel.
        assert_eq!(v.nodes(&c), Some(vec![true, false, false, false]));
        // A member of wheel sees it (and n3 through it).
        let member = UserInfo {
            gids: vec![10],
            ..user(1001, 1001)
        };
        let v = Visible::of(&c, 1001, 0, || member);
        assert_eq!(v.nodes(&c), Some(vec![true, false, true, true]));
    }

    #[test]
    fn show_all_operators_and_plain_clusters_see_everything() {
        let c = conf();
        let no_lookup = || -> UserInfo { panic!("no lookup needed") };
        assert_eq!(Visible::of(&c, 1000, SHOW_ALL, no_lookup), Visible::all());
        assert_eq!(Visible::of(&c, 0, 0, no_lookup), Visible::all());
        let plain = cluster_conf(
            "ClusterName=t\nSlurmctldHost=ctl\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n",
        );
        assert_eq!(Visible::of(&plain, 1000, 0, no_lookup), Visible::all());
        assert_eq!(Visible::all().nodes(&c), None);
    }

    #[test]
    fn listings_leave_out_what_is_not_seen() {
        use crate::state::testkit::{controller, job_id, submit_desc, true_job};
        use slurm_wire::msg::job_desc::JobDescMsg;
        use slurm_wire::ProtocolVersion as V;
        let mut c = controller(CONF);
        let mut cc = (**c.conf()).clone();
        cc.resolve_allow_groups(|n| (n == "wheel").then_some(10));
        *c.conf_mut() = Arc::new(cc);
        let mut ids = Vec::new();
        for part in ["open", "secret", "wheel"] {
            let d = JobDescMsg {
                partition: Some(part.into()),
                ..true_job()
            };
            // root submits: AllowGroups does not stop it.
            ids.push(job_id(
                submit_desc(&mut c, 1000, user(0, 0), V::V24_11, d).0,
            ));
        }
        let alice = Visible::of(c.conf(), 1000, 0, || user(1000, 1000));
        let names: Vec<_> = crate::views::partition_info_msg(&c, V::V24_11, &alice)
            .partition_array
            .into_iter()
            .map(|p| p.name.unwrap())
            .collect();
        assert_eq!(names, ["open"]);
        let jobs: Vec<u32> = crate::views::job_listing(&c, None, None, &alice, 0, V::V24_11)
            .job_array
            .iter()
            .map(|j| j.step_id.job_id)
            .collect();
        assert_eq!(jobs, [ids[0]]);
        for v in [V::V22_05, V::V24_11, V::V26_05] {
            let m = crate::views::node_info_msg(&c, v, &alice);
            let seen: Vec<_> = m.visible().filter_map(|n| n.name.clone()).collect();
            assert_eq!(seen, ["n1"], "{v:?}");
            assert_eq!(m.node_array.len(), 4, "slots are kept: {v:?}");
            // What goes on the wire decodes the same.
            let bytes = slurm_wire::pack::encode_to_vec(&m, v);
            let back: slurm_wire::msg::node::NodeInfoMsg =
                slurm_wire::pack::decode_exact(&bytes, v).unwrap();
            let names: Vec<_> = back.visible().filter_map(|n| n.name.clone()).collect();
            assert_eq!(names, ["n1"], "{v:?}");
        }
        // With SHOW_ALL (`sinfo -a`, `squeue -a`) everything is listed.
        let all = Visible::of(c.conf(), 1000, SHOW_ALL, || user(1000, 1000));
        let m = crate::views::partition_info_msg(&c, V::V24_11, &all);
        assert_eq!(m.partition_array.len(), 3);
        let m = crate::views::job_listing(&c, None, None, &all, SHOW_ALL, V::V24_11);
        assert_eq!(m.job_array.len(), 3);
    }
}
