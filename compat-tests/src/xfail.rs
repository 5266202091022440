//! Expected failures. A cell (scenario x client version x implementation) that
//! matches an entry is reported XFAIL when it fails, and XPASS -- a failure of
//! the run -- when it passes: remove the entry then, so the marks stay true.
//! Fields: implementation, scenario, client version ("*" matches all), reason.

pub struct XFail {
    pub imp: &'static str,
    pub scenario: &'static str,
    pub version: &'static str,
    pub reason: &'static str,
}

pub const XFAILS: &[XFail] = &[
    XFail {
        imp: "rs",
        scenario: "sbatch_gres",
        version: "*",
        reason: "slurmd-rs does not set CUDA_VISIBLE_DEVICES from the credential's GRES yet (stock slurmd under slurmctld-rs does)",
    },
    XFail {
        imp: "rs",
        scenario: "srun_gres",
        version: "*",
        reason: "GPUs are not given to steps yet: no CUDA_VISIBLE_DEVICES",
    },
];

pub fn lookup(imp: &str, scenario: &str, version: &str) -> Option<&'static str> {
    XFAILS
        .iter()
        .find(|x| {
            (x.imp == "*" || x.imp == imp)
                && (x.scenario == "*" || x.scenario == scenario)
                && (x.version == "*" || x.version == version)
        })
        .map(|x| x.reason)
}
