//! RESPONSE_BUILD_INFO (`scontrol show config`) from the parsed slurm.conf,
//! with stock's defaults for what the file leaves unset, per the
//! requester's release where stock's defaults differ.

use crate::state::Controller;
use slurm_wire::msg::config::{ScriptList, SlurmConf as WireConf, SlurmCtlConfInfoMsg};
use slurm_wire::ProtocolVersion as V;

/// `SELECT_*` bits of `select_type_param` (slurm.h).
fn select_type_param(p: &slurm_conf::Params) -> u16 {
    let mut bits = 0u16;
    for (k, _) in p.iter() {
        bits |= match k.to_ascii_uppercase().as_str() {
            "CR_CPU" => 0x0001,
            "CR_SOCKET" => 0x0002,
            "CR_CORE" => 0x0004,
            "CR_BOARD" => 0x0008,
            "CR_MEMORY" => 0x0010,
            "CR_CPU_MEMORY" => 0x0011,
            "CR_SOCKET_MEMORY" => 0x0012,
            "CR_CORE_MEMORY" => 0x0014,
            "CR_ONE_TASK_PER_CORE" => 0x0100,
            "CR_PACK_NODES" => 0x0200,
            "CR_CORE_DEFAULT_DIST_BLOCK" => 0x1000,
            "CR_LLN" => 0x4000,
            _ => 0,
        };
    }
    bits
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

fn nonempty(p: &slurm_conf::Params) -> Option<String> {
    (!p.is_empty()).then(|| p.as_str().to_string())
}

fn scripts(v: &[String]) -> ScriptList {
    ScriptList(v.iter().map(|s| Some(s.clone())).collect())
}

pub fn build_info(c: &Controller, slurm_user_name: &str, now: i64, v: V) -> SlurmCtlConfInfoMsg {
    let k = &c.conf().raw;
    let mut w = WireConf::with_defaults();
    let old = v < V::V23_11;
    w.last_update = now;
    w.boot_time = c.boot_time();
    w.accounting_storage_type = k
        .accounting_storage_type
        .clone()
        .or_else(|| old.then(|| some("accounting_storage/none")).flatten());
    w.accounting_storage_host = k
        .accounting_storage_host
        .clone()
        .or_else(|| some("localhost"));
    w.accounting_storage_port = k.accounting_storage_port.unwrap_or(0);
    w.accounting_storage_user = k
        .accounting_storage_user
        .clone()
        .or_else(|| some(slurm_user_name));
    w.accounting_storage_tres = some("cpu,mem,energy,node,billing,fs/disk,vmem,pages");
    w.authtype = some(&k.auth_type);
    w.authinfo = k.auth_info.clone();
    w.cluster_name = k.cluster_name.clone();
    w.control_machine = k
        .slurmctld_hosts
        .iter()
        .map(|h| Some(h.hostname.clone()))
        .collect();
    w.control_addr = k
        .slurmctld_hosts
        .iter()
        .map(|h| Some(h.addr.clone()))
        .collect();
    w.cred_type = some(&k.cred_type);
    w.epilog = scripts(&k.epilog);
    w.prolog = scripts(&k.prolog);
    w.first_job_id = k.first_job_id;
    w.next_job_id = c.next_job_id();
    w.hash_val = k.hash_val;
    w.hash_plugin = (v >= V::V24_05).then(|| some("hash/k12")).flatten();
    w.tls_type = (v >= V::V24_05).then(|| some("tls/none")).flatten();
    w.inactive_limit = k.inactive_limit;
    w.job_acct_gather_type = k.job_acct_gather_type.clone();
    w.job_comp_type = k.job_comp_type.clone();
    w.job_comp_user = some(slurm_user_name);
    w.kill_wait = k.kill_wait;
    w.max_batch_requeue = 5;
    w.max_job_cnt = k.max_job_count;
    w.max_array_sz = k.max_array_size;
    w.max_node_cnt = c.nodes().len() as u32;
    w.min_job_age = k.min_job_age;
    w.mpi_default = k.mpi_default.clone();
    w.msg_timeout = k.message_timeout;
    w.batch_start_timeout = k.batch_start_timeout;
    w.over_time_limit = k.over_time_limit;
    w.priority_type = some(&k.priority_type);
    w.private_data = crate::private_data::PrivateData::parse(k.raw("PrivateData")).0;
    w.priority_weight_age = k.priority_weights.age;
    w.priority_weight_assoc = k.priority_weights.assoc;
    w.priority_weight_fs = k.priority_weights.fairshare;
    w.priority_weight_js = k.priority_weights.job_size;
    w.priority_weight_part = k.priority_weights.partition;
    w.priority_weight_qos = k.priority_weights.qos;
    w.proctrack_type = some(&k.proctrack_type);
    w.ret2service = k.return_to_service;
    w.sched_params = nonempty(&k.scheduler_parameters);
    w.schedtype = some(&k.scheduler_type);
    w.select_type = some(&k.select_type);
    w.select_type_param = select_type_param(&k.select_type_parameters);
    w.slurm_conf = Some(k.path.display().to_string());
    w.slurm_user_id = c.conf().slurm_user_uid;
    w.slurm_user_name = some(slurm_user_name);
    w.slurmd_user_name = some(&k.slurmd_user);
    w.slurmctld_addr = k.slurmctld_addr.clone();
    w.slurmctld_debug = k.slurmctld_debug as u16;
    w.slurmctld_logfile = k.slurmctld_log_file.clone();
    w.slurmctld_params = nonempty(&k.slurmctld_parameters);
    w.slurmctld_pidfile = some(&k.slurmctld_pid_file);
    w.slurmctld_port = u32::from(k.slurmctld_port.first);
    w.slurmctld_port_count = k.slurmctld_port.count;
    w.slurmctld_timeout = k.slurmctld_timeout;
    w.slurmd_debug = k.slurmd_debug as u16;
    w.slurmd_logfile = k.slurmd_log_file.clone();
    w.slurmd_params = nonempty(&k.slurmd_parameters);
    w.slurmd_pidfile = some(&k.slurmd_pid_file);
    w.slurmd_port = u32::from(k.slurmd_port);
    w.slurmd_spooldir = some(&k.slurmd_spool_dir);
    w.slurmd_timeout = k.slurmd_timeout;
    w.state_save_location = some(&k.state_save_location);
    // 22.05 names its no-op default; later releases print (null).
    w.task_plugin = k
        .task_plugin
        .clone()
        .or_else(|| (v < V::V23_02).then(|| some("task/none")).flatten());
    w.tmp_fs = some(&k.tmp_fs);
    w.tree_width = k.tree_width;
    w.comm_params = nonempty(&k.communication_parameters);
    w.gres_plugins = (!k.gres_types.is_empty()).then(|| k.gres_types.join(","));
    w.health_check_program = k.health_check_program.clone();
    w.health_check_interval = k.health_check_interval;
    w.health_check_node_state = if v >= V::V26_05 { 255 } else { 15 };
    w.prolog_epilog_timeout = slurm_wire::pack::NO_VAL16;
    w.prolog_timeout = slurm_wire::pack::NO_VAL16;
    w.epilog_timeout = slurm_wire::pack::NO_VAL16;
    w.get_env_timeout = 2;
    w.topology_plugin = some(if v >= V::V25_05 {
        "topology/flat"
    } else if v >= V::V23_02 {
        "topology/default"
    } else {
        "topology/none"
    });
    w.version = Some(format!("{}.0", v.release()));
    w.def_mem_per_cpu = k.def_mem.map(|m| m.to_wire()).unwrap_or(0);
    w.max_mem_per_cpu = k.max_mem.map(|m| m.to_wire()).unwrap_or(0);
    SlurmCtlConfInfoMsg::from(w)
}
