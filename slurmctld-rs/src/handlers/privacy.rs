//! PrivateData for one requester: what the operators (root, SlurmUser)
//! see and others may not.

use crate::private_data::PrivateData;
use crate::state::Controller;
use slurm_rpc::rc_message;
use slurm_wire::errno::ESLURM_ACCESS_DENIED;
use slurm_wire::Message;

pub struct Privacy {
    flags: PrivateData,
    uid: u32,
    operator: bool,
}

impl Privacy {
    pub fn of(snap: &Controller, uid: u32) -> Privacy {
        Privacy {
            flags: PrivateData::parse(snap.conf().raw.raw("PrivateData")),
            uid,
            operator: snap.conf().is_admin(uid),
        }
    }

    /// The requester's uid when they may see only their own jobs.
    pub fn own_jobs_only(&self) -> Option<u32> {
        (!self.flags.all_jobs_visible(self.operator)).then_some(self.uid)
    }

    pub fn nodes(&self) -> bool {
        self.flags.nodes_visible(self.operator)
    }

    pub fn partitions(&self) -> bool {
        self.flags.partitions_visible(self.operator)
    }

    /// Stock's answer to a listing PrivateData keeps from this user.
    pub fn refuse(&self, what: &str) -> Message {
        tracing::error!(
            uid = self.uid,
            "Security violation, {what} RPC (PrivateData)"
        );
        rc_message(ESLURM_ACCESS_DENIED)
    }
}
