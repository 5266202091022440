//! The daemon's state that the RPC handler (daemon), batch jobs and steps
//! share. A leaf of the shell: it names neither the handler nor the steps
//! (only the step registry it holds).

use crate::cgroup::Hierarchy;
use crate::cred::{Revocations, Trusted};
use crate::ctld::Controller;
use crate::node::NodeCfg;
use crate::step::registry::Registry;
use slurm_conf::{CgroupConf, SlurmConf};
use slurm_rpc::AuthCtx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Static facts of this daemon.
pub struct Settings {
    pub conf: SlurmConf,
    pub conf_path: String,
    pub node: NodeCfg,
    pub slurm_user_uid: u32,
    pub spool_dir: String,
    pub start_time: i64,
    pub gres: Vec<crate::gres::GresRec>,
    /// This node's GRES device files (gres.conf File=), in index order
    /// per GRES name.
    pub gres_files: Vec<crate::alloc::GresFile>,
    /// The hierarchy jobs are contained in (None: CgroupPlugin=disabled or
    /// nothing mounted; jobs are then tracked by session).
    pub cgroups: Option<Hierarchy>,
    pub cgroup_conf: CgroupConf,
    /// Top directory of our cgroup tree.
    pub cgroup_root: String,
    /// Where supervisors log, and how much.
    pub log_file: Option<String>,
    pub log_level: String,
}

/// A job this node runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct JobState {
    /// The supervisor's pid, once started.
    pub(crate) stepd: Option<i32>,
    /// The supervisor has exited: the script is over and reported.
    pub(crate) done: bool,
    /// A termination arrived: do not start it, or stop it.
    pub(crate) killed: bool,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) user_name: String,
    pub(crate) node_list: String,
    pub(crate) partition: Option<String>,
    pub(crate) work_dir: Option<String>,
}

/// What the RPC handler, batch jobs and steps share.
pub struct Daemon {
    pub settings: Settings,
    pub ctld: Controller,
    pub auth: AuthCtx,
    jobs: Mutex<HashMap<u32, JobState>>,
    /// Steps launched by srun.
    pub steps: Registry,
    /// Jobs ended here, whose old credentials are refused.
    pub revoked: Revocations,
    /// Step credentials used here, refused a second time.
    pub seen: crate::cred::SeenCredentials,
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Daemon {
    pub fn new(settings: Settings, ctld: Controller, auth: AuthCtx) -> Arc<Self> {
        let window = crate::cred::cred_expire(settings.conf.auth_info.as_deref());
        let revoked = Revocations::load(Some(&settings.spool_dir), window, now());
        let seen = crate::cred::SeenCredentials::load(Some(&settings.spool_dir), window, now());
        Arc::new(Daemon {
            revoked,
            seen,
            settings,
            ctld,
            auth,
            jobs: Mutex::new(HashMap::new()),
            steps: Default::default(),
        })
    }

    pub(crate) fn jobs(&self) -> std::sync::MutexGuard<'_, HashMap<u32, JobState>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn trusted(&self) -> Trusted {
        Trusted {
            slurm_user_uid: self.settings.slurm_user_uid,
        }
    }

    pub(crate) fn node_name(&self) -> &str {
        &self.settings.node.name
    }
}
