//! The controller's own RPCs: ping, configuration, statistics, shutdown
//! and reconfigure.

use super::caller::Caller;
use crate::build_info::build_info;
use crate::shared::{now, Control, Shared};
use slurm_rpc::rc_message;
use slurm_wire::errno::*;
use slurm_wire::msg::common::{NoFederation, ShutdownMsg};
use slurm_wire::msg::stats::STAT_COMMAND_RESET;
use slurm_wire::Message;

/// REQUEST_PING (scontrol ping): anyone.
pub fn ping() -> Message {
    rc_message(SLURM_SUCCESS)
}

/// REQUEST_FED_INFO: not federated, the NULL federation record, as stock
/// without one.
pub fn fed_info() -> Message {
    Message::ResponseFedInfo(NoFederation)
}

/// REQUEST_BUILD_INFO (scontrol show config): anyone.
pub fn config(sh: &Shared, who: &Caller) -> Message {
    let snap = sh.snapshot();
    Message::ResponseBuildInfo(build_info(&snap, &sh.slurm_user_name, now(), who.version))
}

/// REQUEST_STATS_INFO (sdiag): anyone; `sdiag -r` operators only.
pub fn stats(sh: &Shared, who: &Caller, command_id: u16) -> Message {
    let snap = sh.snapshot();
    if command_id == STAT_COMMAND_RESET {
        if !snap.conf().is_admin(who.uid) {
            tracing::error!(
                uid = who.uid,
                "Security violation: REQUEST_STATS_INFO reset"
            );
            return rc_message(ESLURM_ACCESS_DENIED);
        }
        sh.stats.reset(now(), snap.counters());
        return rc_message(SLURM_SUCCESS);
    }
    Message::ResponseStatsInfo(sh.stats.response(&snap, now(), who.version))
}

/// Operators only, as stock's REQUEST_SHUTDOWN and REQUEST_RECONFIGURE.
fn refused(sh: &Shared, who: &Caller, what: &str) -> Option<Message> {
    if sh.snapshot().conf().is_admin(who.uid) {
        return None;
    }
    tracing::error!(uid = who.uid, "{what} from non-admin refused");
    Some(rc_message(ESLURM_USER_ID_MISSING))
}

/// REQUEST_SHUTDOWN (scontrol shutdown).
pub fn shutdown(sh: &Shared, who: &Caller, m: ShutdownMsg) -> Message {
    if let Some(r) = refused(sh, who, "REQUEST_SHUTDOWN") {
        return r;
    }
    // options 0: all daemons; 1: controller with a core; 2: controller.
    sh.control(if m.options == 0 {
        Control::ShutdownAll
    } else {
        Control::Shutdown
    });
    rc_message(SLURM_SUCCESS)
}

/// REQUEST_RECONFIGURE (scontrol reconfigure).
pub fn reconfigure(sh: &Shared, who: &Caller) -> Message {
    if let Some(r) = refused(sh, who, "REQUEST_RECONFIGURE") {
        return r;
    }
    sh.control(Control::Reconfigure);
    rc_message(SLURM_SUCCESS)
}
