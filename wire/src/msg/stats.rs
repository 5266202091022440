//! `sdiag`: REQUEST_STATS_INFO 2035 and RESPONSE_STATS_INFO 2036.
//!
//! Layout history of the response (from the unpack side of each release):
//! - 22.05, 23.02: `parts_packed`, then (when non-zero) the controller
//!   counters, then the RPC tables.
//! - 23.11: `schedule_exit` and `bf_exit` arrays join the counters.
//! - 24.05 .. 25.05: `rpc_queue_enabled` (and, when set, four per-type
//!   queue arrays) follows the per-type RPC table.
//! - 25.11, 26.05: no `parts_packed` (the counters are always there) and
//!   `schedule_cycle_sum` widens to 64 bits.

use crate::codec::error::{PResult, WireError};
use crate::error::DecodeErrorKind;
use crate::wire;

/// `command_id` values of `stats_info_request_msg_t` (slurm.h: reset is 0).
pub const STAT_COMMAND_RESET: u16 = 0;
pub const STAT_COMMAND_GET: u16 = 1;

wire! {
    /// `stats_info_request_msg_t`.
    pub struct StatsInfoRequestMsg {
        pub command_id: u16,
    }
}

wire! {
    /// The controller counters part of `stats_info_response_msg_t`
    /// (what `parts_packed` gated before 25.11).
    pub struct StatsParts {
        pub req_time: i64,
        pub req_time_start: i64,
        pub server_thread_count: u32,
        pub agent_queue_size: u32,
        pub agent_count: u32,
        pub agent_thread_count: u32,
        pub dbd_agent_queue_size: u32,
        pub gettimeofday_latency: u32,
        pub jobs_submitted: u32,
        pub jobs_started: u32,
        pub jobs_completed: u32,
        pub jobs_canceled: u32,
        pub jobs_failed: u32,
        pub jobs_pending: u32,
        pub jobs_running: u32,
        pub job_states_ts: i64,
        pub schedule_cycle_max: u32,
        pub schedule_cycle_last: u32,
        /// 32 bits on the wire before 25.11 (a field placed twice).
        [V25_11..] pub schedule_cycle_sum: u64,
        #[wire(with = sum32)] [..V25_11] => schedule_cycle_sum,
        pub schedule_cycle_counter: u32,
        pub schedule_cycle_depth: u32,
        /// 23.11 on.
        [V23_11..] pub schedule_exit: Vec<u32>,
        pub schedule_queue_len: u32,
        pub bf_backfilled_jobs: u32,
        pub bf_last_backfilled_jobs: u32,
        pub bf_cycle_counter: u32,
        pub bf_cycle_sum: u64,
        pub bf_cycle_last: u32,
        pub bf_last_depth: u32,
        pub bf_last_depth_try: u32,
        pub bf_queue_len: u32,
        pub bf_cycle_max: u32,
        pub bf_when_last_cycle: i64,
        pub bf_depth_sum: u32,
        pub bf_depth_try_sum: u32,
        pub bf_queue_len_sum: u32,
        pub bf_table_size: u32,
        pub bf_table_size_sum: u32,
        pub bf_active: u32,
        pub bf_backfilled_het_jobs: u32,
        /// 23.11 on.
        [V23_11..] pub bf_exit: Vec<u32>,
    }
}

/// Older clients keep a 32-bit `schedule_cycle_sum`; it wraps as it does in stock.
mod sum32 {
    use crate::codec::error::PResult;
    use crate::codec::{prim, BufMut};
    use crate::ProtocolVersion;

    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut u64) -> PResult<'a, ()> {
        let (i, x) = prim::u32(i)?;
        *f = u64::from(x);
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &u64) {
        b.put_u32(*f as u32)
    }
}

/// One entry of the RPC queue table (`rpc_queue_type_id[i]`,
/// `rpc_queue_count[i]`); the wire carries two arrays that must agree in
/// length.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RpcQueueStat {
    pub type_id: u32,
    pub count: u32,
}

/// One entry of the RPC dump table (`rpc_dump_types[i]`,
/// `rpc_dump_hostlist[i]`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RpcDump {
    pub type_id: u32,
    pub hostlist: Option<String>,
}

wire! {
    /// `stats_info_response_msg_t`.
    pub struct StatsInfoResponseMsg {
        /// Before 25.11: zero means `parts` is absent. From 25.11 it is not on
        /// the wire and decodes as 1.
        [..V25_11] pub parts_packed: u32,
        #[wire(with = implied_one)] [V25_11..] => parts_packed,
        #[wire(if = |s| s.parts_packed != 0)] [..V25_11] pub parts: StatsParts,
        [V25_11..] => parts,
        pub rpc_type_size: u32,
        pub rpc_type_id: Vec<u16>,
        pub rpc_type_cnt: Vec<u32>,
        /// Microseconds.
        pub rpc_type_time: Vec<u64>,
        /// 24.05 on; the four arrays below follow only when non-zero.
        [V24_05..] pub rpc_queue_enabled: u8,
        #[wire(if = |s| s.rpc_queue_enabled != 0)] [V24_05..] pub rpc_type_queued: Vec<u16>,
        #[wire(if = |s| s.rpc_queue_enabled != 0)] [V24_05..] pub rpc_type_dropped: Vec<u64>,
        #[wire(if = |s| s.rpc_queue_enabled != 0)] [V24_05..] pub rpc_type_cycle_last: Vec<u16>,
        #[wire(if = |s| s.rpc_queue_enabled != 0)] [V24_05..] pub rpc_type_cycle_max: Vec<u16>,
        pub rpc_user_size: u32,
        pub rpc_user_id: Vec<u32>,
        pub rpc_user_cnt: Vec<u32>,
        /// Microseconds.
        pub rpc_user_time: Vec<u64>,
        #[wire(with = rpc_queue)] pub rpc_queue: Vec<RpcQueueStat>,
        #[wire(with = rpc_dump)] pub rpc_dump: Vec<RpcDump>,
    }
}

/// 25.11 dropped `parts_packed`: the counters are always there, so it reads as 1 and sends nothing.
mod implied_one {
    use crate::codec::error::PResult;
    use crate::codec::BufMut;
    use crate::ProtocolVersion;

    pub fn parse<'a>(i: &'a [u8], _: ProtocolVersion, f: &mut u32) -> PResult<'a, ()> {
        *f = 1;
        Ok((i, ()))
    }
    pub fn put<B: BufMut>(_: &mut B, _: ProtocolVersion, _: &u32) {}
}

/// Two arrays that must agree in length make one table; a mismatch is reported at the second one.
fn mismatch<'a, T>(what: &'static str, len: usize, at: &'a [u8]) -> PResult<'a, T> {
    let value = len as u64;
    WireError::fail(DecodeErrorKind::BadValue { what, value }, at)
}

/// `rpc_queue_type_id[]` then `rpc_queue_count[]`.
mod rpc_queue {
    use super::{mismatch, RpcQueueStat};
    use crate::codec::error::{named, PResult};
    use crate::codec::{prim, BufMut};
    use crate::pack::Wire;
    use crate::ProtocolVersion;

    pub fn parse<'a>(
        i: &'a [u8],
        v: ProtocolVersion,
        f: &mut Vec<RpcQueueStat>,
    ) -> PResult<'a, ()> {
        let (at, ids) = named(Vec::<u32>::parse(i, v), "rpc_queue_type_id")?;
        let (r, counts) = named(Vec::<u32>::parse(at, v), "rpc_queue_count")?;
        if counts.len() != ids.len() {
            return mismatch("rpc_queue_count length", counts.len(), at);
        }
        *f = ids
            .into_iter()
            .zip(counts)
            .map(|(type_id, count)| RpcQueueStat { type_id, count })
            .collect();
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &[RpcQueueStat]) {
        prim::put_count(b, f.len());
        for q in f {
            b.put_u32(q.type_id);
        }
        prim::put_count(b, f.len());
        for q in f {
            b.put_u32(q.count);
        }
    }
}

/// `rpc_dump_types[]` then `rpc_dump_hostlist[]`.
mod rpc_dump {
    use super::{mismatch, RpcDump};
    use crate::codec::error::{named, PResult};
    use crate::codec::{prim, BufMut};
    use crate::pack::Wire;
    use crate::ProtocolVersion;

    pub fn parse<'a>(i: &'a [u8], v: ProtocolVersion, f: &mut Vec<RpcDump>) -> PResult<'a, ()> {
        let (at, types) = named(Vec::<u32>::parse(i, v), "rpc_dump_types")?;
        let (r, hosts) = named(Vec::<Option<String>>::parse(at, v), "rpc_dump_hostlist")?;
        if hosts.len() != types.len() {
            return mismatch("rpc_dump_hostlist length", hosts.len(), at);
        }
        *f = types
            .into_iter()
            .zip(hosts)
            .map(|(type_id, hostlist)| RpcDump { type_id, hostlist })
            .collect();
        Ok((r, ()))
    }
    pub fn put<B: BufMut>(b: &mut B, _: ProtocolVersion, f: &[RpcDump]) {
        prim::put_count(b, f.len());
        for d in f {
            b.put_u32(d.type_id);
        }
        prim::put_count(b, f.len());
        for d in f {
            prim::put_str(b, d.hostlist.as_deref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::test_util::round_trip_all;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    fn sample() -> StatsInfoResponseMsg {
        StatsInfoResponseMsg {
            parts_packed: 1,
            parts: StatsParts {
                req_time: 1_790_000_000,
                jobs_submitted: 7,
                schedule_cycle_sum: 12345,
                schedule_exit: vec![1, 2, 3, 4, 5, 6],
                bf_exit: vec![0; 6],
                ..Default::default()
            },
            rpc_type_size: 2,
            rpc_type_id: vec![1008, 2003],
            rpc_type_cnt: vec![3, 4],
            rpc_type_time: vec![300, 800],
            rpc_user_size: 1,
            rpc_user_id: vec![0],
            rpc_user_cnt: vec![7],
            rpc_user_time: vec![1100],
            ..Default::default()
        }
    }

    #[test]
    fn round_trips_in_every_release() {
        round_trip_all(&sample());
        round_trip_all(&StatsInfoRequestMsg {
            command_id: STAT_COMMAND_GET,
        });
    }

    #[test]
    fn layout_sizes_follow_the_release_history() {
        let m = sample();
        let len = |v| encode_to_vec(&m, v).len();
        // 23.11 adds two arrays of 6 u32 plus their counts.
        assert_eq!(
            len(ProtocolVersion::V23_11) - len(ProtocolVersion::V23_02),
            2 * (4 + 6 * 4)
        );
        // 24.05 adds the queue flag byte.
        assert_eq!(
            len(ProtocolVersion::V24_05) - len(ProtocolVersion::V23_11),
            1
        );
        // 25.11 drops parts_packed (4) and widens the cycle sum (+4).
        assert_eq!(len(ProtocolVersion::V25_11), len(ProtocolVersion::V25_05));
        let b = encode_to_vec(&m, ProtocolVersion::V26_05);
        // First field is req_time from 25.11 on.
        assert_eq!(&b[..8], &1_790_000_000i64.to_be_bytes());
        let b = encode_to_vec(&m, ProtocolVersion::V22_05);
        assert_eq!(&b[..4], &1u32.to_be_bytes());
    }

    #[test]
    fn no_parts_before_25_11_skips_the_counters() {
        let m = StatsInfoResponseMsg {
            parts_packed: 0,
            parts: StatsParts {
                jobs_submitted: 9,
                ..Default::default()
            },
            ..Default::default()
        };
        let b = encode_to_vec(&m, ProtocolVersion::V24_11);
        let back: StatsInfoResponseMsg = decode_exact(&b, ProtocolVersion::V24_11).unwrap();
        assert_eq!(back.parts.jobs_submitted, 0);
        let b = encode_to_vec(&m, ProtocolVersion::V26_05);
        let back: StatsInfoResponseMsg = decode_exact(&b, ProtocolVersion::V26_05).unwrap();
        assert_eq!(back.parts.jobs_submitted, 9);
        assert_eq!(back.parts_packed, 1);
    }

    #[test]
    fn mismatched_queue_arrays_are_rejected() {
        let mut b = encode_to_vec(&StatsInfoResponseMsg::default(), ProtocolVersion::V22_05);
        // Replace the four empty tail arrays: one queue type id, but no
        // queue counts.
        b.truncate(b.len() - 16);
        for x in [1u32, 7, 0, 0, 0] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        let e = decode_exact::<StatsInfoResponseMsg>(&b, ProtocolVersion::V22_05).unwrap_err();
        assert!(e.to_string().contains("rpc_queue_count"), "{e}");
    }
}
