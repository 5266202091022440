//! Prolog and Epilog (slurm.conf), run as root on this node with stock's
//! script environment.

use crate::env::Env;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Prolog,
    Epilog,
}

impl Context {
    fn name(self) -> &'static str {
        match self {
            Context::Prolog => "prolog_slurmd",
            Context::Epilog => "epilog_slurmd",
        }
    }
}

/// What the scripts are told about the job.
#[derive(Debug, Clone, Default)]
pub struct ScriptJob {
    pub job_id: u32,
    pub uid: u32,
    pub gid: u32,
    pub user_name: String,
    pub node_list: String,
    pub partition: Option<String>,
    pub work_dir: Option<String>,
    pub cluster_name: String,
    pub node_name: String,
    pub conf_path: String,
    pub spank_env: Vec<String>,
    /// Epilog only.
    pub exit_code: Option<u32>,
    pub derived_ec: Option<u32>,
}

/// The environment of a prolog or epilog (nothing inherited from slurmd
/// beyond a sane PATH).
pub fn script_env(job: &ScriptJob, ctx: Context) -> Env {
    let mut e = Env::default();
    e.set(
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    );
    for s in &job.spank_env {
        if let Some((k, v)) = s.split_once('=') {
            e.set(&format!("SPANK_{k}"), v);
        }
    }
    e.set("SLURM_SCRIPT_CONTEXT", ctx.name());
    e.set("SLURMD_NODENAME", job.node_name.as_str());
    e.set("SLURM_CLUSTER_NAME", job.cluster_name.as_str());
    e.set("SLURM_CONF", job.conf_path.as_str());
    e.set("SLURM_JOB_ID", job.job_id.to_string());
    e.set("SLURM_JOBID", job.job_id.to_string());
    e.set("SLURM_JOB_UID", job.uid.to_string());
    e.set("SLURM_UID", job.uid.to_string());
    e.set("SLURM_JOB_GID", job.gid.to_string());
    e.set("SLURM_JOB_USER", job.user_name.as_str());
    e.set("SLURM_JOB_NODELIST", job.node_list.as_str());
    if let Some(p) = &job.partition {
        e.set("SLURM_JOB_PARTITION", p.as_str());
    }
    if let Some(w) = &job.work_dir {
        e.set("SLURM_JOB_WORK_DIR", w.as_str());
    }
    if ctx == Context::Epilog {
        if let Some(x) = job.exit_code {
            e.set("SLURM_JOB_EXIT_CODE", x.to_string());
            e.set(
                "SLURM_JOB_EXIT_CODE2",
                format!("{}:{}", (x >> 8) & 0xff, x & 0x7f),
            );
        }
        if let Some(x) = job.derived_ec {
            e.set("SLURM_JOB_DERIVED_EC", x.to_string());
        }
    }
    e
}

/// Runs each script in turn; the first failure's raw wait status (or -1
/// when it could not run) is returned.
pub async fn run_all(
    paths: &[String],
    job: &ScriptJob,
    ctx: Context,
    timeout: Duration,
) -> Result<(), i32> {
    let env = script_env(job, ctx);
    for p in paths.iter().filter(|p| !p.is_empty()) {
        let mut cmd = tokio::process::Command::new(p);
        cmd.env_clear()
            .envs(env.iter())
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let status = match cmd.spawn() {
            Ok(mut c) => match tokio::time::timeout(timeout, c.wait()).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::error!("job {}: {}: wait: {e}", job.job_id, p);
                    return Err(-1);
                }
                Err(_) => {
                    tracing::error!("job {}: {} timed out", job.job_id, p);
                    return Err(-1);
                }
            },
            Err(e) => {
                tracing::error!("job {}: cannot run {}: {e}", job.job_id, p);
                return Err(-1);
            }
        };
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            tracing::error!("job {}: {} {status}", job.job_id, p);
            return Err(status.into_raw());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> ScriptJob {
        ScriptJob {
            job_id: 9,
            uid: 1000,
            gid: 100,
            user_name: "alice".into(),
            node_list: "n1".into(),
            partition: Some("debug".into()),
            node_name: "n1".into(),
            spank_env: vec!["FOO=bar".into(), "junk".into()],
            exit_code: Some(2 << 8),
            ..Default::default()
        }
    }

    #[test]
    fn env_by_context() {
        let p = script_env(&job(), Context::Prolog);
        assert_eq!(p.get("SLURM_SCRIPT_CONTEXT"), Some("prolog_slurmd"));
        assert_eq!(p.get("SLURM_JOB_ID"), Some("9"));
        assert_eq!(p.get("SLURM_JOB_USER"), Some("alice"));
        assert_eq!(p.get("SPANK_FOO"), Some("bar"));
        assert_eq!(p.get("SLURM_JOB_EXIT_CODE"), None);
        let e = script_env(&job(), Context::Epilog);
        assert_eq!(e.get("SLURM_SCRIPT_CONTEXT"), Some("epilog_slurmd"));
        assert_eq!(e.get("SLURM_JOB_EXIT_CODE2"), Some("2:0"));
    }

    #[tokio::test]
    async fn failures_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("ok.sh");
        let bad = d.path().join("bad.sh");
        let out = d.path().join("out");
        std::fs::write(
            &ok,
            format!(
                "#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT\" > {}\n",
                out.display()
            ),
        )
        .unwrap();
        std::fs::write(&bad, "#!/bin/sh\nexit 3\n").unwrap();
        for p in [&ok, &bad] {
            std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let s = |p: &std::path::Path| p.display().to_string();
        let t = Duration::from_secs(10);
        assert_eq!(run_all(&[s(&ok)], &job(), Context::Prolog, t).await, Ok(()));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "9 prolog_slurmd\n");
        assert_eq!(
            run_all(&[s(&ok), s(&bad)], &job(), Context::Epilog, t).await,
            Err(3 << 8)
        );
        assert_eq!(
            run_all(&["/nonexistent/x".into()], &job(), Context::Epilog, t).await,
            Err(-1)
        );
    }
}
