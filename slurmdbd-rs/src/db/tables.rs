//! Stock 26.05's tables as data (`accounting_storage_mysql.c`): each
//! column's definition text, the keys and table options, from which both
//! the `create table` and the row stock keeps in `table_defs_table` are
//! made. The texts are stock's own, byte for byte: stock compares the
//! stored definition with the one it builds, and alters the table on any
//! difference (dropping columns it does not know).

/// One column: its name and its SQL definition (type, default, null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col {
    pub name: &'static str,
    pub def: &'static str,
}

/// A key, its columns written as in SQL (`name(42), server(42), type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Primary(&'static str),
    /// A unique index; without a name MariaDB names it after its first column.
    Unique(Option<&'static str>, &'static str),
    Index(&'static str, &'static str),
}

/// A table: global (`name` as is) or per cluster (`"<cluster>_<name>"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub cols: &'static [Col],
    pub keys: &'static [Key],
    /// Table options after the column list (`auto_increment=1001`).
    pub options: &'static str,
}

const fn c(name: &'static str, def: &'static str) -> Col {
    Col { name, def }
}

const fn t(name: &'static str, cols: &'static [Col], keys: &'static [Key]) -> Table {
    Table {
        name,
        cols,
        keys,
        options: "",
    }
}

use Key::{Index, Primary, Unique};

/// Every release keeps this one itself (`mysql_common.c`); it is not in
/// its own table of definitions.
pub const TABLE_DEFS: &str = "table_defs_table";

/// `create table if not exists` of [`TABLE_DEFS`], as stock makes it.
pub const TABLE_DEFS_CREATE: &str = "create table if not exists table_defs_table \
     (creation_time int unsigned not null, mod_time int unsigned default 0 not null, \
     table_name text not null, definition text not null, \
     primary key (table_name(50))) engine='innodb'";

/// `CONVERT_VERSION` of stock 25.05 .. 26.05 (`as_mysql_convert.c`).
pub const CONVERT_VERSION: i32 = 16;

const CREATED: Col = c("creation_time", "bigint unsigned not null");
const MODIFIED: Col = c("mod_time", "bigint unsigned default 0 not null");
const DELETED: Col = c("deleted", "tinyint default 0");
const DELETED_NN: Col = c("deleted", "tinyint default 0 not null");

const ARCHIVE_MOD: &[Key] = &[
    Index("archive_delete", "deleted"),
    Index("archive_purge", "mod_time"),
];

pub const CONVERT_VERSION_TABLE: Table = t(
    "convert_version_table",
    &[
        c("mod_time", "bigint unsigned default 0 not null"),
        c("version", "int default 0"),
    ],
    &[Primary("version")],
);

pub const CLUSTER_TABLE: Table = t(
    "cluster_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("name", "tinytext not null"),
        c("id", "smallint"),
        c("control_host", "tinytext not null default ''"),
        c("control_port", "int unsigned not null default 0"),
        c("last_port", "int unsigned not null default 0"),
        c("rpc_version", "smallint unsigned not null default 0"),
        c("classification", "smallint unsigned default 0"),
        c("dimensions", "smallint unsigned default 1"),
        c("flags", "int unsigned default 0"),
        c("federation", "tinytext not null"),
        c("features", "text not null default ''"),
        c("fed_id", "int unsigned default 0 not null"),
        c("fed_state", "smallint unsigned not null"),
    ],
    &[Primary("name(42)")],
);

pub const TXN_TABLE: Table = t(
    "txn_table",
    &[
        c("deleted", "tinyint default 0 not null"),
        c("id", "int not null auto_increment"),
        c("timestamp", "bigint unsigned default 0 not null"),
        c("action", "smallint not null"),
        c("name", "text not null"),
        c("actor", "tinytext not null"),
        c("cluster", "tinytext not null default ''"),
        c("info", "blob"),
    ],
    &[
        Primary("id"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "timestamp, cluster(42)"),
    ],
);

pub const TRES_TABLE: Table = Table {
    options: " auto_increment=1001",
    ..t(
        "tres_table",
        &[
            CREATED,
            c("deleted", "tinyint default 0 not null"),
            c("id", "int not null auto_increment"),
            c("type", "tinytext not null"),
            c("name", "tinytext not null default ''"),
        ],
        &[Primary("id"), Unique(Some("udex"), "type(42), name(42)")],
    )
};

pub const ACCT_COORD_TABLE: Table = t(
    "acct_coord_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("acct", "tinytext not null"),
        c("user", "tinytext not null"),
    ],
    &[Primary("acct(42), user(42)"), Index("user", "user(42)")],
);

pub const ACCT_TABLE: Table = t(
    "acct_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("flags", "int unsigned default 0"),
        c("name", "tinytext not null"),
        c("description", "text not null"),
        c("organization", "text not null"),
    ],
    &[Primary("name(42)")],
);

pub const RES_TABLE: Table = t(
    "res_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("id", "int not null auto_increment"),
        c("name", "tinytext not null"),
        c("description", "text default null"),
        c("manager", "tinytext not null"),
        c("server", "tinytext not null"),
        c("count", "int unsigned default 0"),
        c("type", "int unsigned default 0"),
        c("flags", "int unsigned default 0"),
        c("last_consumed", "int unsigned default 0"),
    ],
    &[
        Primary("id"),
        Unique(Some("udex"), "name(42), server(42), type"),
    ],
);

pub const CLUS_RES_TABLE: Table = t(
    "clus_res_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("cluster", "tinytext not null"),
        c("res_id", "int not null"),
        c("allowed", "int unsigned default 0"),
    ],
    &[Primary("res_id, cluster(42)")],
);

pub const QOS_TABLE: Table = t(
    "qos_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("id", "int not null auto_increment"),
        c("name", "tinytext not null"),
        c("description", "text"),
        c("flags", "int unsigned default 0"),
        c("grace_time", "int unsigned default NULL"),
        c("max_jobs_pa", "int default NULL"),
        c("max_jobs_per_user", "int default NULL"),
        c("max_jobs_accrue_pa", "int default NULL"),
        c("max_jobs_accrue_pu", "int default NULL"),
        c("min_prio_thresh", "int default NULL"),
        c("max_submit_jobs_pa", "int default NULL"),
        c("max_submit_jobs_per_user", "int default NULL"),
        c("max_tres_pa", "text not null default ''"),
        c("max_tres_pj", "text not null default ''"),
        c("max_tres_pn", "text not null default ''"),
        c("max_tres_pu", "text not null default ''"),
        c("max_tres_mins_pj", "text not null default ''"),
        c("max_tres_run_mins_pa", "text not null default ''"),
        c("max_tres_run_mins_pu", "text not null default ''"),
        c("min_tres_pj", "text not null default ''"),
        c("max_wall_duration_per_job", "int default NULL"),
        c("grp_jobs", "int default NULL"),
        c("grp_jobs_accrue", "int default NULL"),
        c("grp_submit_jobs", "int default NULL"),
        c("grp_tres", "text not null default ''"),
        c("grp_tres_mins", "text not null default ''"),
        c("grp_tres_run_mins", "text not null default ''"),
        c("grp_wall", "int default NULL"),
        c("preempt", "text not null default ''"),
        c("preempt_mode", "int default 0"),
        c("preempt_exempt_time", "int unsigned default NULL"),
        c("priority", "int unsigned default 0"),
        c("usage_factor", "double default 1.0 not null"),
        c("usage_thres", "double default NULL"),
        c("limit_factor", "double default NULL"),
    ],
    &[Primary("id"), Unique(Some("udex"), "name(42)")],
);

pub const USER_TABLE: Table = t(
    "user_table",
    &[
        CREATED,
        MODIFIED,
        DELETED,
        c("name", "tinytext not null"),
        c("admin_level", "smallint default 1 not null"),
    ],
    &[Primary("name(42)")],
);

pub const FEDERATION_TABLE: Table = t(
    "federation_table",
    &[
        c("creation_time", "int unsigned not null"),
        c("mod_time", "int unsigned default 0 not null"),
        DELETED,
        c("name", "tinytext not null"),
        c("flags", "int unsigned default 0"),
    ],
    &[Primary("name(42)")],
);

/// The global tables before the per-cluster ones, in stock's order.
pub const GLOBAL_BEFORE_CLUSTERS: &[Table] =
    &[CONVERT_VERSION_TABLE, CLUSTER_TABLE, TXN_TABLE, TRES_TABLE];

/// The global tables after the per-cluster ones.
pub const GLOBAL_AFTER_CLUSTERS: &[Table] = &[
    ACCT_COORD_TABLE,
    ACCT_TABLE,
    RES_TABLE,
    CLUS_RES_TABLE,
    QOS_TABLE,
    USER_TABLE,
    FEDERATION_TABLE,
];

const ASSOC_COLS: &[Col] = &[
    CREATED,
    MODIFIED,
    DELETED_NN,
    c("comment", "text"),
    c("flags", "int unsigned default 0 not null"),
    c("is_def", "tinyint default 0 not null"),
    c("id_assoc", "int unsigned not null auto_increment"),
    c("user", "tinytext not null default ''"),
    c("acct", "tinytext not null"),
    c("partition", "tinytext not null default ''"),
    c("parent_acct", "tinytext not null default ''"),
    c("id_parent", "int unsigned not null"),
    c("lineage", "text"),
    c("shares", "int default 1 not null"),
    c("max_jobs", "int default NULL"),
    c("max_jobs_accrue", "int default NULL"),
    c("min_prio_thresh", "int default NULL"),
    c("max_submit_jobs", "int default NULL"),
    c("max_tres_pj", "text not null default ''"),
    c("max_tres_pn", "text not null default ''"),
    c("max_tres_mins_pj", "text not null default ''"),
    c("max_tres_run_mins", "text not null default ''"),
    c("max_wall_pj", "int default NULL"),
    c("grp_jobs", "int default NULL"),
    c("grp_jobs_accrue", "int default NULL"),
    c("grp_submit_jobs", "int default NULL"),
    c("grp_tres", "text not null default ''"),
    c("grp_tres_mins", "text not null default ''"),
    c("grp_tres_run_mins", "text not null default ''"),
    c("grp_wall", "int default NULL"),
    c("priority", "int unsigned default NULL"),
    c("def_qos_id", "int default NULL"),
    c("qos", "blob not null default ''"),
    c("delta_qos", "blob not null default ''"),
];

const CLUSTER_USAGE_COLS: &[Col] = &[
    CREATED,
    MODIFIED,
    DELETED_NN,
    c("id_tres", "int not null"),
    c("time_start", "bigint unsigned not null"),
    c("count", "bigint unsigned default 0 not null"),
    c("alloc_secs", "bigint unsigned default 0 not null"),
    c("down_secs", "bigint unsigned default 0 not null"),
    c("pdown_secs", "bigint unsigned default 0 not null"),
    c("idle_secs", "bigint unsigned default 0 not null"),
    c("plan_secs", "bigint unsigned default 0 not null"),
    c("over_secs", "bigint unsigned default 0 not null"),
];

const ID_USAGE_COLS: &[Col] = &[
    CREATED,
    MODIFIED,
    DELETED_NN,
    c("id", "int unsigned not null"),
    c("id_alt", "int unsigned default 0 not null"),
    c("id_tres", "int default 1 not null"),
    c("time_start", "bigint unsigned not null"),
    c("alloc_secs", "bigint unsigned default 0 not null"),
];

const ID_USAGE_KEYS: &[Key] = &[
    Primary("id, id_tres, time_start"),
    ARCHIVE_MOD[0],
    ARCHIVE_MOD[1],
];

const QOS_USAGE_KEYS: &[Key] = &[
    Primary("id, id_alt, id_tres, time_start"),
    ARCHIVE_MOD[0],
    ARCHIVE_MOD[1],
];

const CLUSTER_USAGE_KEYS: &[Key] = &[
    Primary("id_tres, time_start"),
    ARCHIVE_MOD[0],
    ARCHIVE_MOD[1],
];

pub const EVENT_TABLE: Table = t(
    "event_table",
    &[
        DELETED_NN,
        c("time_start", "bigint unsigned not null"),
        c("time_end", "bigint unsigned default 0 not null"),
        c("node_name", "tinytext default '' not null"),
        c("extra", "text"),
        c("cluster_nodes", "text not null default ''"),
        c("instance_id", "text"),
        c("instance_type", "text"),
        c("reason", "tinytext not null"),
        c("reason_uid", "int unsigned default 0xfffffffe not null"),
        c("state", "int unsigned default 0 not null"),
        c("tres", "text not null default ''"),
    ],
    &[
        Primary("node_name(42), time_start"),
        Index("rollup", "time_start, time_end, state"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "time_end"),
    ],
);

pub const JOB_TABLE: Table = t(
    "job_table",
    &[
        c("job_db_inx", "bigint unsigned not null auto_increment"),
        MODIFIED,
        DELETED_NN,
        c("account", "tinytext"),
        c("admin_comment", "text"),
        c("array_task_str", "text"),
        c("array_max_tasks", "int unsigned default 0 not null"),
        c("array_task_pending", "int unsigned default 0 not null"),
        c("constraints", "text default ''"),
        c("container", "text"),
        c("cpus_req", "int unsigned not null"),
        c("derived_ec", "int unsigned default 0 not null"),
        c("derived_es", "text"),
        c("env_hash_inx", "bigint unsigned default 0 not null"),
        c("exclusive", "tinytext"),
        c("exit_code", "int unsigned default 0 not null"),
        c("extra", "text"),
        c("flags", "int unsigned default 0 not null"),
        c("failed_node", "tinytext"),
        c("job_name", "tinytext not null"),
        c("id_assoc", "int unsigned not null"),
        c("id_array_job", "int unsigned default 0 not null"),
        c("id_array_task", "int unsigned default 0xfffffffe not null"),
        c("id_block", "tinytext"),
        c("id_job", "int unsigned not null"),
        c("id_qos", "int unsigned default 0 not null"),
        c("id_resv", "int unsigned not null"),
        c("id_wckey", "int unsigned not null"),
        c("id_user", "int unsigned not null"),
        c("id_group", "int unsigned not null"),
        c("het_job_id", "int unsigned not null"),
        c("het_job_offset", "int unsigned not null"),
        c("kill_requid", "int unsigned default null"),
        c("state_reason_prev", "int unsigned not null"),
        c("licenses", "text"),
        c("mcs_label", "tinytext default ''"),
        c("mem_req", "bigint unsigned default 0 not null"),
        c("nodelist", "text"),
        c("nodes_alloc", "int unsigned not null"),
        c("node_inx", "text"),
        c("oversubscribe", "tinytext"),
        c("partition", "tinytext not null"),
        c("priority", "int unsigned not null"),
        c("qos_req", "text"),
        c("restart_cnt", "smallint unsigned default 0"),
        c("resv_req", "text"),
        c("script_hash_inx", "bigint unsigned default 0 not null"),
        c("sluid", "bigint unsigned default 0 not null"),
        c("state", "int unsigned not null"),
        c("timelimit", "int unsigned default 0 not null"),
        c("time_submit", "bigint unsigned default 0 not null"),
        c("time_eligible", "bigint unsigned default 0 not null"),
        c("time_start", "bigint unsigned default 0 not null"),
        c("time_end", "bigint unsigned default 0 not null"),
        c("time_suspended", "bigint unsigned default 0 not null"),
        c("gres_used", "text not null default ''"),
        c("wckey", "tinytext not null default ''"),
        c("work_dir", "text not null default ''"),
        c("segment_size", "smallint unsigned default 0 not null"),
        c("std_err", "text not null default ''"),
        c("std_in", "text not null default ''"),
        c("std_out", "text not null default ''"),
        c("submit_line", "longtext"),
        c("system_comment", "text"),
        c("tres_alloc", "text not null default ''"),
        c("tres_req", "text not null default ''"),
    ],
    &[
        Primary("job_db_inx"),
        Unique(None, "id_job, time_submit"),
        Index("old_tuple", "id_job, id_assoc, time_submit"),
        Index("rollup", "time_eligible, time_end"),
        Index("rollup2", "time_end, time_eligible"),
        Index("nodes_alloc", "nodes_alloc"),
        Index("wckey", "id_wckey"),
        Index("qos", "id_qos"),
        Index("association", "id_assoc"),
        Index("array_job", "id_array_job"),
        Index("het_job", "het_job_id"),
        Index("reserv", "id_resv"),
        Index("sacct_def", "id_user, time_start, time_end"),
        Index("sacct_def2", "id_user, time_end, time_eligible"),
        Index("env_hash_inx", "env_hash_inx"),
        Index("script_hash_inx", "script_hash_inx"),
        Index("sluid", "sluid"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "time_end"),
    ],
);

const HASH_KEYS_ARCHIVE: [Key; 2] = [
    Index("archive_delete", "deleted"),
    Index("archive_purge", "last_used"),
];

pub const JOB_ENV_TABLE: Table = t(
    "job_env_table",
    &[
        DELETED_NN,
        c("hash_inx", "bigint unsigned not null auto_increment"),
        c("last_used", "timestamp DEFAULT CURRENT_TIMESTAMP not null"),
        c("env_hash", "text not null"),
        c("env_vars", "longtext"),
    ],
    &[
        Primary("hash_inx"),
        Unique(Some("env_hash_inx"), "env_hash(66)"),
        HASH_KEYS_ARCHIVE[0],
        HASH_KEYS_ARCHIVE[1],
    ],
);

pub const JOB_SCRIPT_TABLE: Table = t(
    "job_script_table",
    &[
        DELETED_NN,
        c("hash_inx", "bigint unsigned not null auto_increment"),
        c("last_used", "timestamp DEFAULT CURRENT_TIMESTAMP not null"),
        c("script_hash", "text not null"),
        c("batch_script", "longtext"),
    ],
    &[
        Primary("hash_inx"),
        Unique(Some("script_hash_inx"), "script_hash(66)"),
        HASH_KEYS_ARCHIVE[0],
        HASH_KEYS_ARCHIVE[1],
    ],
);

pub const LAST_RAN_TABLE: Table = t(
    "last_ran_table",
    &[
        c("hourly_rollup", "bigint unsigned default 0 not null"),
        c("daily_rollup", "bigint unsigned default 0 not null"),
        c("monthly_rollup", "bigint unsigned default 0 not null"),
    ],
    &[Primary("hourly_rollup, daily_rollup, monthly_rollup")],
);

pub const RESV_TABLE: Table = t(
    "resv_table",
    &[
        c("id_resv", "int unsigned default 0 not null"),
        DELETED_NN,
        c("assoclist", "text not null default ''"),
        c("flags", "bigint unsigned default 0 not null"),
        c("nodelist", "text not null default ''"),
        c("node_inx", "text not null default ''"),
        c("resv_name", "text not null"),
        c("time_start", "bigint unsigned default 0 not null"),
        c("time_end", "bigint unsigned default 0 not null"),
        c("time_force", "bigint unsigned default 0 not null"),
        c("tres", "text not null default ''"),
        c("unused_wall", "double unsigned default 0.0 not null"),
        c("comment", "text"),
    ],
    &[
        Primary("id_resv, time_start"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "time_end"),
    ],
);

pub const STEP_TABLE: Table = t(
    "step_table",
    &[
        c("job_db_inx", "bigint unsigned not null"),
        DELETED_NN,
        c("exit_code", "int default 0 not null"),
        c("id_step", "int not null"),
        c("step_het_comp", "int unsigned default 0xfffffffe not null"),
        c("kill_requid", "int unsigned default null"),
        c("nodelist", "text not null"),
        c("nodes_alloc", "int unsigned not null"),
        c("node_inx", "text"),
        c("state", "smallint unsigned not null"),
        c("step_name", "text not null"),
        c("task_cnt", "int unsigned not null"),
        c("task_dist", "int default 0 not null"),
        c("time_start", "bigint unsigned default 0 not null"),
        c("time_end", "bigint unsigned default 0 not null"),
        c("time_suspended", "bigint unsigned default 0 not null"),
        c("timelimit", "int unsigned default 0 not null"),
        c("user_sec", "bigint unsigned default 0 not null"),
        c("user_usec", "int unsigned default 0 not null"),
        c("sys_sec", "bigint unsigned default 0 not null"),
        c("sys_usec", "int unsigned default 0 not null"),
        c("act_cpufreq", "double unsigned default 0.0 not null"),
        c("consumed_energy", "bigint unsigned default 0 not null"),
        c("container", "text"),
        c("req_cpufreq_min", "int unsigned default 0 not null"),
        c("req_cpufreq", "int unsigned default 0 not null"),
        c("req_cpufreq_gov", "int unsigned default 0 not null"),
        c("cwd", "text not null default ''"),
        c("std_err", "text not null default ''"),
        c("std_in", "text not null default ''"),
        c("std_out", "text not null default ''"),
        c("submit_line", "longtext"),
        c("tres_alloc", "text not null default ''"),
        c("tres_usage_in_ave", "text not null default ''"),
        c("tres_usage_in_max", "text not null default ''"),
        c("tres_usage_in_max_taskid", "text not null default ''"),
        c("tres_usage_in_max_nodeid", "text not null default ''"),
        c("tres_usage_in_min", "text not null default ''"),
        c("tres_usage_in_min_taskid", "text not null default ''"),
        c("tres_usage_in_min_nodeid", "text not null default ''"),
        c("tres_usage_in_tot", "text not null default ''"),
        c("tres_usage_out_ave", "text not null default ''"),
        c("tres_usage_out_max", "text not null default ''"),
        c("tres_usage_out_max_taskid", "text not null default ''"),
        c("tres_usage_out_max_nodeid", "text not null default ''"),
        c("tres_usage_out_min", "text not null default ''"),
        c("tres_usage_out_min_taskid", "text not null default ''"),
        c("tres_usage_out_min_nodeid", "text not null default ''"),
        c("tres_usage_out_tot", "text not null default ''"),
    ],
    &[
        Primary("job_db_inx, id_step, step_het_comp"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "time_end"),
    ],
);

pub const SUSPEND_TABLE: Table = t(
    "suspend_table",
    &[
        DELETED_NN,
        c("job_db_inx", "bigint unsigned not null"),
        c("id_assoc", "int not null"),
        c("time_start", "bigint unsigned default 0 not null"),
        c("time_end", "bigint unsigned default 0 not null"),
    ],
    &[
        Primary("job_db_inx, time_start"),
        Index("archive_delete", "deleted"),
        Index("archive_purge", "time_end"),
    ],
);

pub const WCKEY_TABLE: Table = t(
    "wckey_table",
    &[
        CREATED,
        MODIFIED,
        DELETED_NN,
        c("is_def", "tinyint default 0 not null"),
        c("id_wckey", "int unsigned not null auto_increment"),
        c("wckey_name", "tinytext not null default ''"),
        c("user", "tinytext not null"),
    ],
    &[
        Primary("id_wckey"),
        Unique(Some("udex"), "wckey_name(42), user(42)"),
    ],
);

pub const ASSOC_TABLE: Table = t(
    "assoc_table",
    ASSOC_COLS,
    &[
        Primary("id_assoc"),
        Unique(Some("udex"), "user(42), acct(42), `partition`(42)"),
    ],
);

/// The per-cluster tables in the order stock creates them.
pub const CLUSTER_TABLES: &[Table] = &[
    ASSOC_TABLE,
    t("assoc_usage_day_table", ID_USAGE_COLS, ID_USAGE_KEYS),
    t("assoc_usage_hour_table", ID_USAGE_COLS, ID_USAGE_KEYS),
    t("assoc_usage_month_table", ID_USAGE_COLS, ID_USAGE_KEYS),
    t("usage_day_table", CLUSTER_USAGE_COLS, CLUSTER_USAGE_KEYS),
    t("usage_hour_table", CLUSTER_USAGE_COLS, CLUSTER_USAGE_KEYS),
    t("usage_month_table", CLUSTER_USAGE_COLS, CLUSTER_USAGE_KEYS),
    EVENT_TABLE,
    JOB_TABLE,
    JOB_ENV_TABLE,
    JOB_SCRIPT_TABLE,
    LAST_RAN_TABLE,
    t("qos_usage_day_table", ID_USAGE_COLS, QOS_USAGE_KEYS),
    t("qos_usage_hour_table", ID_USAGE_COLS, QOS_USAGE_KEYS),
    t("qos_usage_month_table", ID_USAGE_COLS, QOS_USAGE_KEYS),
    RESV_TABLE,
    STEP_TABLE,
    SUSPEND_TABLE,
    WCKEY_TABLE,
    t("wckey_usage_day_table", ID_USAGE_COLS, ID_USAGE_KEYS),
    t("wckey_usage_hour_table", ID_USAGE_COLS, ID_USAGE_KEYS),
    t("wckey_usage_month_table", ID_USAGE_COLS, ID_USAGE_KEYS),
];

/// A cluster name stock accepts as part of a table name; anything else
/// is refused before it comes near SQL. Stock lower-cases cluster names
/// when it reads slurm.conf; we take them as sent.
pub fn valid_cluster_name(name: &str) -> bool {
    // 42 is the prefix length of stock's name keys; a table name must
    // also fit MariaDB's 64 (the longest suffix is 23).
    !name.is_empty()
        && name.len() <= 40
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl Table {
    /// The name stock gives the table in SQL and in `table_defs_table`:
    /// global tables bare, a cluster's double-quoted (ANSI_QUOTES).
    /// `cluster` must have passed [`valid_cluster_name`].
    pub fn sql_name(&self, cluster: Option<&str>) -> String {
        match cluster {
            None => self.name.to_string(),
            Some(c) => format!("\"{c}_{}\"", self.name),
        }
    }

    /// The unquoted name as MariaDB lists it.
    pub fn plain_name(&self, cluster: Option<&str>) -> String {
        match cluster {
            None => self.name.to_string(),
            Some(c) => format!("{c}_{}", self.name),
        }
    }

    /// What follows the columns in stock's `create table` (its "ending").
    fn ending(&self) -> String {
        let mut s = String::new();
        for k in self.keys {
            s.push_str(", ");
            s.push_str(&k.sql());
        }
        s.push(')');
        s.push_str(self.options);
        s
    }

    /// `create table if not exists`, as stock builds it.
    pub fn create_sql(&self, cluster: Option<&str>) -> String {
        let cols: Vec<String> = self
            .cols
            .iter()
            .map(|c| format!("`{}` {}", c.name, c.def))
            .collect();
        format!(
            "create table if not exists {} ({}{} engine='innodb'",
            self.sql_name(cluster),
            cols.join(", "),
            self.ending()
        )
    }

    /// The definition stock stores in `table_defs_table` for this table,
    /// and builds again on each start to compare (`mysql_common.c`): the
    /// `alter table` that would make an existing table current.
    pub fn definition(&self, cluster: Option<&str>) -> String {
        let mut q = format!("alter table {}", self.sql_name(cluster));
        for c in self.cols {
            q.push_str(&format!(" modify `{}` {},", c.name, c.def));
        }
        let mut unique_seen = false;
        for k in self.keys {
            match k {
                Primary(_) => q.push_str(&format!(" drop primary key, add {},", k.sql())),
                // Stock takes only the first unique index of the ending.
                Unique(..) if unique_seen => {}
                Unique(..) => {
                    unique_seen = true;
                    q.push_str(&format!(" drop index {}, add {},", k.name(), k.sql()));
                }
                Index(..) => q.push_str(&format!(" drop key {}, add {},", k.name(), k.sql())),
            }
        }
        q.pop();
        q.push(';');
        q
    }
}

impl Key {
    fn sql(&self) -> String {
        match self {
            Primary(cols) => format!("primary key ({cols})"),
            Unique(Some(n), cols) => format!("unique index {n} ({cols})"),
            Unique(None, cols) => format!("unique index ({cols})"),
            Index(n, cols) => format!("key {n} ({cols})"),
        }
    }

    /// The index's name in MariaDB.
    pub fn name(&self) -> &'static str {
        match self {
            Primary(_) => "PRIMARY",
            Unique(Some(n), _) | Index(n, _) => n,
            Unique(None, cols) => cols
                .split(['(', ',', ' ', ')'])
                .find(|s| !s.is_empty())
                .unwrap_or(cols),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_the_alter_that_makes_the_table_current() {
        let d = TRES_TABLE.definition(None);
        assert_eq!(
            d,
            "alter table tres_table modify `creation_time` bigint unsigned not null, \
             modify `deleted` tinyint default 0 not null, \
             modify `id` int not null auto_increment, modify `type` tinytext not null, \
             modify `name` tinytext not null default '', \
             drop primary key, add primary key (id), \
             drop index udex, add unique index udex (type(42), name(42));"
        );
        // A cluster's table is named in double quotes; an unnamed unique
        // index is dropped by its first column's name.
        let j = JOB_TABLE.definition(Some("c1"));
        assert!(j.starts_with("alter table \"c1_job_table\" modify `job_db_inx` "));
        assert!(j.contains(
            " drop index id_job, add unique index (id_job, time_submit), drop key old_tuple, \
             add key old_tuple (id_job, id_assoc, time_submit),"
        ));
        assert!(j.ends_with(" drop key archive_purge, add key archive_purge (time_end);"));
    }

    #[test]
    fn create_sql_has_every_column_then_the_keys_and_options() {
        let q = TRES_TABLE.create_sql(None);
        assert!(q.starts_with("create table if not exists tres_table (`creation_time` "));
        assert!(q.ends_with(
            ", primary key (id), unique index udex (type(42), name(42))) auto_increment=1001 \
             engine='innodb'"
        ));
        let q = ASSOC_TABLE.create_sql(Some("x"));
        assert!(q.contains("unique index udex (user(42), acct(42), `partition`(42)))"));
    }

    #[test]
    fn names_and_lists_are_whole() {
        let mut names: Vec<&str> = GLOBAL_BEFORE_CLUSTERS
            .iter()
            .chain(GLOBAL_AFTER_CLUSTERS)
            .chain(CLUSTER_TABLES)
            .map(|t| t.name)
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a table listed twice");
        assert_eq!(n, 11 + 22);
        for t in CLUSTER_TABLES.iter().chain(GLOBAL_AFTER_CLUSTERS) {
            let mut cols: Vec<&str> = t.cols.iter().map(|c| c.name).collect();
            cols.sort_unstable();
            cols.dedup();
            assert_eq!(cols.len(), t.cols.len(), "{}: a column twice", t.name);
        }
    }

    #[test]
    fn cluster_names_that_can_not_be_table_names_are_refused() {
        for ok in ["c1", "acc26", "my_cluster", "a-b"] {
            assert!(valid_cluster_name(ok), "{ok}");
        }
        for bad in ["", "C1", "a\"b", "a`b", "a b", "x;drop", &"a".repeat(41)] {
            assert!(!valid_cluster_name(bad), "{bad}");
        }
    }
}
