//! Captured bodies checked against what the stock client printed.

/// Lines the 26.05 capture up with what `scontrol show config` printed.
#[test]
fn capture_matches_scontrol_output() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let pcap = std::fs::read(dir.join("26.05/scontrol-show-config.pcap"))
        .unwrap_or_else(|e| panic!("fixtures not found at {} ({e})", dir.display()));
    let streams = slurm_decode::read_streams(&pcap).unwrap();
    let (msgs, _) = slurm_decode::decode_streams(&streams);
    let conf = msgs
        .iter()
        .find_map(|m| match &m.outcome {
            Ok(slurm_decode::Decoded::Rpc { msg, .. }) => match msg.as_ref() {
                slurm_wire::Message::ResponseBuildInfo(c) => Some(c.clone()),
                _ => None,
            },
            _ => None,
        })
        .expect("a RESPONSE_BUILD_INFO in the capture");
    assert_eq!(conf.max_job_cnt, 10_000);
    assert_eq!(conf.cluster_name.as_deref(), Some("mv26"));
    assert_eq!(conf.slurmctld_port, 6817);
    assert_eq!(conf.slurmd_port, 6818);
    assert_eq!(conf.hash_plugin.as_deref(), Some("hash/k12"));
    assert_eq!(conf.select_type.as_deref(), Some("select/cons_tres"));
    let d = slurm_wire::msg::config::SlurmConf::with_defaults();
    assert_eq!(conf.cpu_freq_govs, d.cpu_freq_govs);
    assert_eq!(conf.max_job_id, d.max_job_id);
    assert_eq!(conf.bcast_exclude, d.bcast_exclude);
}
