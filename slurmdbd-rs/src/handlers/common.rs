//! What the handlers share: stock's constants, the outcome of a handler,
//! table names, and a column list that becomes parameterised SQL.

use crate::db::tables::{valid_cluster_name, Table};
use crate::db::DbError;
use mysql_async::Value;

/// `NO_VAL` / `NO_VAL64` / `INFINITE64` (slurm.h).
pub const NO_VAL: u32 = 0xffff_fffe;
pub const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
pub const INFINITE64: u64 = u64::MAX;

/// `enum job_states` and its flags (slurm.h).
pub mod job_state {
    pub const PENDING: u32 = 0;
    pub const RUNNING: u32 = 1;
    pub const SUSPENDED: u32 = 2;
    pub const COMPLETE: u32 = 3;
    pub const CANCELLED: u32 = 4;
    pub const FAILED: u32 = 5;
    pub const OOM: u32 = 11;
    pub const BASE: u32 = 0xff;
    pub const REQUEUE: u32 = 1 << 10;
    pub const RESIZING: u32 = 1 << 13;
    pub const REVOKED: u32 = 1 << 19;
}

/// `SIG_OOM`: the exit status slurmd reports for an OOM-killed step.
pub const SIG_OOM: u32 = 253;
/// `SLURMDB_JOB_FLAG_START_R`: the dbd has the job's start record.
pub const JOB_FLAG_START_R: u32 = 1 << 4;
/// `JOB_SEND_ENV` / `JOB_SEND_SCRIPT`: ID_RC flags asking the controller
/// for DBD_JOB_HEAVY (the hash was new).
pub const JOB_SEND_ENV: u64 = 1 << 6;
pub const JOB_SEND_SCRIPT: u64 = 1 << 35;
/// `NODE_STATE_DOWN`, `NODE_STATE_POWERED_DOWN`.
pub const NODE_STATE_DOWN: u32 = 1;
pub const NODE_STATE_POWERED_DOWN: u32 = 1 << 12;

/// What a handler answers: stock's return code and comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub rc: i32,
    pub comment: Option<String>,
}

impl Done {
    pub const OK: Done = Done {
        rc: 0,
        comment: None,
    };

    pub fn rc(rc: i32) -> Done {
        Done { rc, comment: None }
    }

    pub fn err(rc: i32, comment: impl Into<String>) -> Done {
        Done {
            rc,
            comment: Some(comment.into()),
        }
    }
}

/// A cluster's table in SQL; the name was checked when the connection
/// named its cluster.
pub fn table(cluster: &str, t: &Table) -> Result<String, DbError> {
    if !valid_cluster_name(cluster) {
        return Err(DbError::BadClusterName(cluster.into()));
    }
    Ok(t.sql_name(Some(cluster)))
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A user's name as stock's `uid_to_string` gives it (txn rows' actor).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}

/// `WIFSIGNALED` of a wait status.
pub fn signalled(status: u32) -> bool {
    let sig = status & 0x7f;
    sig != 0 && sig != 0x7f
}

/// Columns and their values, in order; only static names go into SQL.
#[derive(Debug, Default)]
pub struct Cols {
    names: Vec<&'static str>,
    vals: Vec<Value>,
    /// `update` terms that are expressions with one `?` each.
    terms: Vec<&'static str>,
    term_vals: Vec<Value>,
}

impl Cols {
    pub fn set(&mut self, name: &'static str, v: impl Into<Value>) -> &mut Self {
        self.names.push(name);
        self.vals.push(v.into());
        self
    }

    /// Set only when there is a value: stock leaves the column out (its
    /// default) when the message had none.
    pub fn some(&mut self, name: &'static str, v: &Option<String>) -> &mut Self {
        if let Some(v) = v {
            self.set(name, v.as_str());
        }
        self
    }

    /// An update term with one `?` (`derived_ec = greatest(?, derived_ec)`).
    pub fn term(&mut self, term: &'static str, v: impl Into<Value>) -> &mut Self {
        self.terms.push(term);
        self.term_vals.push(v.into());
        self
    }

    pub fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    /// `insert into T (..) values (?, ..) on duplicate key update ..`:
    /// every column but `keep` takes the new value, `greatest` ones the
    /// larger of old and new; `extra` are further update terms.
    pub fn upsert(
        self,
        table: &str,
        keep: &[&str],
        greatest: &[&str],
        extra: &[&str],
    ) -> (String, Vec<Value>) {
        let marks = vec!["?"; self.names.len()].join(", ");
        let mut upd: Vec<String> = self
            .names
            .iter()
            .filter(|n| !keep.contains(n))
            .map(|n| {
                let q = quoted(n);
                if greatest.contains(n) {
                    format!("{q} = greatest({q}, values({q}))")
                } else {
                    format!("{q} = values({q})")
                }
            })
            .collect();
        upd.extend(extra.iter().map(|s| s.to_string()));
        let names: Vec<String> = self.names.iter().map(|n| quoted(n)).collect();
        (
            format!(
                "insert into {table} ({}) values ({marks}) on duplicate key update {}",
                names.join(", "),
                upd.join(", ")
            ),
            self.vals,
        )
    }

    /// `update T set a = ?, .. <extra> where <cond>` with `cond`'s values
    /// after the columns'; `greatest` columns keep the larger value.
    pub fn update(
        mut self,
        table: &str,
        greatest: &[&str],
        extra: &[&str],
        cond: &str,
        cond_vals: Vec<Value>,
    ) -> (String, Vec<Value>) {
        let mut set: Vec<String> = self
            .names
            .iter()
            .map(|n| {
                let q = quoted(n);
                if greatest.contains(n) {
                    format!("{q} = greatest({q}, ?)")
                } else {
                    format!("{q} = ?")
                }
            })
            .collect();
        set.extend(self.terms.iter().map(|s| s.to_string()));
        set.extend(extra.iter().map(|s| s.to_string()));
        self.vals.extend(self.term_vals);
        self.vals.extend(cond_vals);
        (
            format!("update {table} set {} where {cond}", set.join(", ")),
            self.vals,
        )
    }
}

/// Stock's column names include `partition`, a reserved word.
fn quoted(name: &str) -> String {
    format!("`{name}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_never_enter_the_sql() {
        let mut c = Cols::default();
        c.set("id_job", 7u32)
            .set("state", 1u32)
            .some("account", &Some("x'); drop table t; --".into()))
            .some("wckey", &None);
        assert!(c.has("account") && !c.has("wckey"));
        let (sql, vals) = c.upsert(
            "\"c_job_table\"",
            &["id_job"],
            &["state"],
            &["mod_time = 1"],
        );
        assert_eq!(
            sql,
            "insert into \"c_job_table\" (`id_job`, `state`, `account`) values (?, ?, ?) on \
             duplicate key update `state` = greatest(`state`, values(`state`)), `account` = \
             values(`account`), mod_time = 1"
        );
        assert_eq!(vals.len(), 3);
        let mut c = Cols::default();
        c.set("nodelist", "n1")
            .term("derived_ec = greatest(?, derived_ec)", 2u32)
            .set("state", 3u32);
        let (sql, vals) = c.update(
            "t",
            &["state"],
            &["m = 1"],
            "job_db_inx = ?",
            vec![9u64.into()],
        );
        assert_eq!(
            sql,
            "update t set `nodelist` = ?, `state` = greatest(`state`, ?), \
             derived_ec = greatest(?, derived_ec), m = 1 where job_db_inx = ?"
        );
        assert_eq!(
            vals,
            vec![Value::from("n1"), 3u32.into(), 2u32.into(), 9u64.into()]
        );
    }

    #[test]
    fn signalled_is_wifsignaled() {
        assert!(signalled(9));
        assert!(!signalled(0));
        assert!(!signalled(1 << 8));
        assert!(!signalled(0x7f));
    }
}
