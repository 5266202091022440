//! What the result of an outbound RPC means for the cluster: the command
//! fed back to the state machine. Decided here, not in the agent, so the
//! daemon's agent and a test's fake nodes feed back the same commands.

use super::command::{Command, Purpose};
use slurm_wire::errno::{ESLURMD_KILL_JOB_ALREADY_COMPLETE, SLURM_ERROR};
use slurm_wire::Message;

/// How an RPC to a slurmd ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The node answered.
    Reply(&'a Message),
    /// No answer: not reachable, timed out, refused the connection or the
    /// credential.
    Failed,
}

/// The command that `outcome` of an RPC sent to `node` for `purpose` feeds
/// back, if any. `last_load` gives the node's last known CPU load and free
/// memory, kept when a ping is answered without them.
pub fn command_for(
    node: &str,
    purpose: &Purpose,
    outcome: Outcome<'_>,
    last_load: impl FnOnce() -> (u32, u64),
) -> Option<Command> {
    let node = node.to_string();
    match (purpose, outcome) {
        (Purpose::Ping, Outcome::Reply(Message::ResponsePingSlurmd(p))) => {
            Some(Command::NodeResponded {
                node,
                cpu_load: p.cpu_load,
                free_mem: p.free_mem,
            })
        }
        (Purpose::Ping, Outcome::Reply(_)) => {
            let (cpu_load, free_mem) = last_load();
            Some(Command::NodeResponded {
                node,
                cpu_load,
                free_mem,
            })
        }
        (Purpose::Ping, Outcome::Failed) => Some(Command::NodeUnreachable { node }),
        (Purpose::Launch { job_id }, Outcome::Reply(Message::ResponseSlurmRc(rc)))
            if rc.return_code != 0 =>
        {
            Some(Command::LaunchFailed {
                job_id: *job_id,
                node,
                rc: rc.return_code as i32,
            })
        }
        (Purpose::Launch { job_id }, Outcome::Failed) => Some(Command::LaunchFailed {
            job_id: *job_id,
            node,
            rc: SLURM_ERROR,
        }),
        // No epilog message will follow: the node is done with the job.
        (Purpose::Terminate { job_id }, Outcome::Reply(Message::ResponseSlurmRc(rc)))
            if rc.return_code as i32 == ESLURMD_KILL_JOB_ALREADY_COMPLETE =>
        {
            Some(Command::TerminateDone {
                job_id: *job_id,
                node,
            })
        }
        // A node that misses a terminate is caught by its ping or its next
        // registration; a signal's result changes nothing.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::msg::common::{PingSlurmdRespMsg, ReturnCodeMsg};

    fn rc(n: i32) -> Message {
        Message::ResponseSlurmRc(ReturnCodeMsg {
            return_code: n as u32,
        })
    }

    fn none() -> (u32, u64) {
        panic!("the last load is not asked for here")
    }

    #[test]
    fn a_ping_answer_reports_the_node_alive_with_its_load() {
        let p = Message::ResponsePingSlurmd(PingSlurmdRespMsg {
            cpu_load: 3,
            free_mem: 4,
            node_name: None,
        });
        let c = command_for("n1", &Purpose::Ping, Outcome::Reply(&p), none);
        assert!(
            matches!(c, Some(Command::NodeResponded { ref node, cpu_load: 3, free_mem: 4 }) if node == "n1"),
            "{c:?}"
        );
        // An RC answer keeps the last known load.
        let c = command_for("n1", &Purpose::Ping, Outcome::Reply(&rc(0)), || (7, 8));
        assert!(
            matches!(
                c,
                Some(Command::NodeResponded {
                    cpu_load: 7,
                    free_mem: 8,
                    ..
                })
            ),
            "{c:?}"
        );
        let c = command_for("n1", &Purpose::Ping, Outcome::Failed, none);
        assert!(matches!(c, Some(Command::NodeUnreachable { .. })), "{c:?}");
    }

    #[test]
    fn a_refused_or_lost_launch_is_reported_with_its_code() {
        let launch = Purpose::Launch { job_id: 5 };
        assert!(command_for("n1", &launch, Outcome::Reply(&rc(0)), none).is_none());
        let c = command_for("n1", &launch, Outcome::Reply(&rc(4005)), none);
        assert!(
            matches!(
                c,
                Some(Command::LaunchFailed {
                    job_id: 5,
                    rc: 4005,
                    ..
                })
            ),
            "{c:?}"
        );
        let c = command_for("n1", &launch, Outcome::Failed, none);
        assert!(
            matches!(
                c,
                Some(Command::LaunchFailed {
                    rc: SLURM_ERROR,
                    ..
                })
            ),
            "{c:?}"
        );
    }

    #[test]
    fn only_already_complete_ends_a_terminate_without_an_epilog() {
        let t = Purpose::Terminate { job_id: 9 };
        let c = command_for(
            "n2",
            &t,
            Outcome::Reply(&rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE)),
            none,
        );
        assert!(
            matches!(c, Some(Command::TerminateDone { job_id: 9, ref node }) if node == "n2"),
            "{c:?}"
        );
        assert!(command_for("n2", &t, Outcome::Reply(&rc(0)), none).is_none());
        assert!(command_for("n2", &t, Outcome::Failed, none).is_none());
        let s = Purpose::Signal { job_id: 9 };
        assert!(command_for("n2", &s, Outcome::Failed, none).is_none());
    }
}
