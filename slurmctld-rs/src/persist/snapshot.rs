//! The snapshot body in its current shape (format 5 on): the jobs (each
//! request in the controller's compact form) and nodes, then the running
//! steps, job arrays and dependencies, the jobs in special exit, and the
//! cores jobs hold. Older shapes are read by [`super::snapshot_old`] and
//! lifted to this one.

use super::migrate::Migrate;
use super::records::{self, Common, JobCores};
use super::shared::DecResult;
use super::snapshot_old::BodyV4;
use super::steps;
use crate::state::array::Arrays;
use crate::state::depend::Deps;
use crate::state::step::JobSteps;
use crate::state::Controller;
use slurm_wire::pack::{Reader, Writer};

/// The snapshot body of format 5 on.
pub(super) struct Body {
    common: Common,
    steps: Vec<(u32, JobSteps)>,
    arrays: (Arrays, Deps),
    special_exit: Vec<u32>,
    cores: Vec<JobCores>,
}

impl Migrate for Body {
    const SINCE: u32 = 5;
    type Previous = BodyV4;
    type Cx = Controller;

    fn decode_own(r: &mut Reader<'_>, c: &Controller) -> DecResult<Self> {
        Ok(Body {
            common: records::get_common(r, c, |r, _| crate::state::req::JobReq::load(r))?,
            steps: steps::get_steps(r, c)?,
            arrays: crate::state::array::get_state(r)?,
            special_exit: records::get_special_exit(r)?,
            cores: records::get_cores(r)?,
        })
    }

    /// Format 4 had no cores section: they are chosen again.
    fn migrate(p: BodyV4) -> Self {
        Body {
            common: p.common,
            steps: p.steps,
            arrays: p.arrays,
            special_exit: p.special_exit,
            cores: Vec::new(),
        }
    }
}

impl Body {
    /// Sets what the body holds in `c` (fresh from the configuration).
    pub(super) fn apply(self, c: &mut Controller) {
        self.common.apply(c);
        steps::apply_steps(self.steps, c);
        let (arrays, deps) = self.arrays;
        c.restore_arrays(arrays, deps);
        records::apply_special_exit(self.special_exit, c);
        records::apply_cores(self.cores, c);
        c.rebuild_node_usage();
    }
}

/// The current snapshot body of `c`.
pub fn encode_state(c: &Controller) -> Vec<u8> {
    let mut w = Writer::new();
    records::put_common(&mut w, c, |w, j| j.req.save(w));
    steps::put_steps(&mut w, c);
    crate::state::array::put_state(&mut w, c);
    records::put_special_exit(&mut w, c);
    records::put_cores(&mut w, c);
    w.into_vec()
}

/// Restores a snapshot body of `format` (checked to be no newer than ours)
/// into `c` (fresh from the current configuration).
pub fn restore_state(c: &mut Controller, b: &[u8], format: u32) -> DecResult<()> {
    let mut r = Reader::new(b);
    let body = Body::decode(format, &mut r, c)?;
    r.finish()?;
    body.apply(c);
    Ok(())
}
