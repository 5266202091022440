//! `jobacctinfo_t` as packed by `jobacctinfo_pack` (slurm_jobacct_gather.c,
//! later interfaces/jobacct_gather.c). One layout for every supported release.

use super::slurmdb::SlurmdbTresRec;
use crate::codec::shape;
use crate::wire;

wire! {
    /// The accounting sample itself (what follows the `u8 1` present flag).
    ///
    /// The fourteen usage arrays all carry `tres_count` elements upstream, but
    /// each has its own count on the wire, so they are kept as separate Vecs.
    pub struct JobAcctInfoData {
        pub user_cpu_sec: u64,
        pub user_cpu_usec: u32,
        pub sys_cpu_sec: u64,
        pub sys_cpu_usec: u32,
        pub act_cpufreq: u32,
        pub consumed_energy: u64,
        pub tres_ids: Vec<u32>,
        pub tres_list: Option<Vec<SlurmdbTresRec>>,
        pub tres_usage_in_max: Vec<u64>,
        pub tres_usage_in_max_nodeid: Vec<u64>,
        pub tres_usage_in_max_taskid: Vec<u64>,
        pub tres_usage_in_min: Vec<u64>,
        pub tres_usage_in_min_nodeid: Vec<u64>,
        pub tres_usage_in_min_taskid: Vec<u64>,
        pub tres_usage_in_tot: Vec<u64>,
        pub tres_usage_out_max: Vec<u64>,
        pub tres_usage_out_max_nodeid: Vec<u64>,
        pub tres_usage_out_max_taskid: Vec<u64>,
        pub tres_usage_out_min: Vec<u64>,
        pub tres_usage_out_min_nodeid: Vec<u64>,
        pub tres_usage_out_min_taskid: Vec<u64>,
        pub tres_usage_out_tot: Vec<u64>,
    }
}

wire! {
    /// `jobacctinfo_pack`: a `u8` present flag (0 when accounting gathering is
    /// off), then the sample. Upstream treats any non-zero byte as present;
    /// `flag8` insists on 0/1 so that re-encoding is exact.
    pub struct JobAcctInfo(#[wire(with = shape::flag8)] pub Option<JobAcctInfoData>);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{decode_exact, encode_to_vec};
    use crate::ProtocolVersion;

    #[test]
    fn jobacct_roundtrips_with_tres() {
        let d = JobAcctInfoData {
            user_cpu_sec: 3,
            user_cpu_usec: 4,
            tres_ids: vec![1, 2],
            tres_list: Some(vec![SlurmdbTresRec {
                id: 1,
                count: 2,
                name: Some("cpu".into()),
                ..Default::default()
            }]),
            tres_usage_in_max: vec![5, 6],
            tres_usage_out_tot: vec![7, 8],
            ..Default::default()
        };
        for v in ProtocolVersion::ALL {
            for x in [JobAcctInfo(None), JobAcctInfo(Some(d.clone()))] {
                let b = encode_to_vec(&x, v);
                assert_eq!(decode_exact::<JobAcctInfo>(&b, v), Ok(x));
            }
        }
        assert_eq!(
            encode_to_vec(&JobAcctInfo(None), ProtocolVersion::V24_11),
            [0]
        );
    }
}
