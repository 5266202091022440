//! The result of an outbound RPC as the agent hands it back: what the
//! answer was, reported as [`Command::RpcDone`]. What it means is decided
//! by [`meaning`] inside the state machine; the daemon's agent and a test's
//! fake nodes report the same way.

use super::command::{meaning, Command, Meaning, Purpose, RpcOutcome};
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

impl Outcome<'_> {
    /// The part of the answer the state machine reads.
    pub fn summary(self) -> RpcOutcome {
        match self {
            Outcome::Failed => RpcOutcome::Failed,
            Outcome::Reply(Message::ResponsePingSlurmd(p)) => RpcOutcome::Load {
                cpu_load: p.cpu_load,
                free_mem: p.free_mem,
            },
            Outcome::Reply(Message::ResponseSlurmRc(rc)) => RpcOutcome::Rc(rc.return_code as i32),
            Outcome::Reply(_) => RpcOutcome::Other,
        }
    }
}

/// The report of `outcome` of an RPC sent to `node` for `purpose`; None
/// when it changes nothing (not worth a trip to the state machine).
pub fn report(node: &str, purpose: &Purpose, outcome: Outcome<'_>) -> Option<Command> {
    let outcome = outcome.summary();
    if meaning(purpose, &outcome) == Meaning::Nothing {
        return None;
    }
    Some(Command::RpcDone {
        node: node.to_string(),
        purpose: purpose.clone(),
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wire::errno::{ESLURMD_KILL_JOB_ALREADY_COMPLETE, SLURM_ERROR};
    use slurm_wire::msg::common::{PingSlurmdRespMsg, ReturnCodeMsg};

    fn rc(n: i32) -> Message {
        Message::ResponseSlurmRc(ReturnCodeMsg {
            return_code: n as u32,
        })
    }

    /// What the state machine makes of the report (Nothing: none sent).
    fn meant(purpose: &Purpose, o: Outcome<'_>) -> Meaning {
        match report("n1", purpose, o) {
            Some(Command::RpcDone {
                node,
                purpose,
                outcome,
            }) => {
                assert_eq!(node, "n1");
                let m = meaning(&purpose, &outcome);
                assert_ne!(m, Meaning::Nothing, "a report that changes nothing");
                m
            }
            Some(c) => panic!("{c:?}"),
            None => Meaning::Nothing,
        }
    }

    #[test]
    fn a_ping_answer_reports_the_node_alive_with_its_load() {
        let p = Message::ResponsePingSlurmd(PingSlurmdRespMsg {
            cpu_load: 3,
            free_mem: 4,
            node_name: None,
        });
        assert_eq!(
            meant(&Purpose::Ping, Outcome::Reply(&p)),
            Meaning::Alive { load: Some((3, 4)) }
        );
        // An RC answer keeps the last known load.
        assert_eq!(
            meant(&Purpose::Ping, Outcome::Reply(&rc(0))),
            Meaning::Alive { load: None }
        );
        assert_eq!(meant(&Purpose::Ping, Outcome::Failed), Meaning::Unreachable);
    }

    #[test]
    fn a_refused_or_lost_launch_is_reported_with_its_code() {
        let launch = Purpose::Launch { job_id: 5 };
        assert_eq!(meant(&launch, Outcome::Reply(&rc(0))), Meaning::Nothing);
        assert_eq!(
            meant(&launch, Outcome::Reply(&rc(4005))),
            Meaning::LaunchFailed {
                job_id: 5,
                rc: 4005
            }
        );
        assert_eq!(
            meant(&launch, Outcome::Failed),
            Meaning::LaunchFailed {
                job_id: 5,
                rc: SLURM_ERROR
            }
        );
    }

    #[test]
    fn only_already_complete_ends_a_terminate_without_an_epilog() {
        let t = Purpose::Terminate { job_id: 9 };
        assert_eq!(
            meant(&t, Outcome::Reply(&rc(ESLURMD_KILL_JOB_ALREADY_COMPLETE))),
            Meaning::TerminateDone { job_id: 9 }
        );
        assert_eq!(meant(&t, Outcome::Reply(&rc(0))), Meaning::Nothing);
        assert_eq!(meant(&t, Outcome::Failed), Meaning::Nothing);
        let s = Purpose::Signal { job_id: 9 };
        assert_eq!(meant(&s, Outcome::Failed), Meaning::Nothing);
        assert_eq!(
            meant(&Purpose::Reregister, Outcome::Failed),
            Meaning::Nothing
        );
    }
}
