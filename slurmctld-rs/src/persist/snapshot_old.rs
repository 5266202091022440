//! Snapshot body shapes older than the current one ([`super::snapshot`]),
//! each lifted to the next. Formats 1-4 save each job's request in its wire
//! encoding (at the job's submit version); each added a section:
//! 2 the running steps, 3 arrays and dependencies, 4 the jobs in special
//! exit.

use super::migrate::{Before, Migrate};
use super::records::{self, Common};
use super::shared::{get_nested, DecResult};
use super::steps;
use crate::state::array::Arrays;
use crate::state::depend::Deps;
use crate::state::req::JobReq;
use crate::state::step::JobSteps;
use crate::state::Controller;
use slurm_wire::msg::job_desc::JobDescMsg;
use slurm_wire::pack::Reader;
use slurm_wire::ProtocolVersion;

/// A job's request in formats 1-4, lifted to the compact form.
fn wire_req(r: &mut Reader<'_>, v: ProtocolVersion) -> DecResult<JobReq> {
    Ok(JobReq::new(get_nested::<JobDescMsg>(r, v)?))
}

/// Format 1: the jobs and the nodes' state.
pub(super) struct BodyV1 {
    pub(super) common: Common,
}

impl Migrate for BodyV1 {
    const SINCE: u32 = 1;
    type Previous = Before<Controller>;
    type Cx = Controller;

    fn decode_own(r: &mut Reader<'_>, c: &Controller) -> DecResult<Self> {
        Ok(BodyV1 {
            common: records::get_common(r, c, wire_req)?,
        })
    }

    fn migrate(p: Before<Controller>) -> Self {
        p.never()
    }
}

/// Format 2: the running steps after.
pub(super) struct BodyV2 {
    pub(super) common: Common,
    pub(super) steps: Vec<(u32, JobSteps)>,
}

impl Migrate for BodyV2 {
    const SINCE: u32 = 2;
    type Previous = BodyV1;
    type Cx = Controller;

    fn decode_own(r: &mut Reader<'_>, c: &Controller) -> DecResult<Self> {
        let BodyV1 { common } = BodyV1::decode_own(r, c)?;
        Ok(BodyV2 {
            common,
            steps: steps::get_steps(r, c)?,
        })
    }

    /// Format 1 forgot the steps.
    fn migrate(p: BodyV1) -> Self {
        BodyV2 {
            common: p.common,
            steps: Vec::new(),
        }
    }
}

/// Format 3: arrays and dependencies after.
pub(super) struct BodyV3 {
    pub(super) common: Common,
    pub(super) steps: Vec<(u32, JobSteps)>,
    pub(super) arrays: (Arrays, Deps),
}

impl Migrate for BodyV3 {
    const SINCE: u32 = 3;
    type Previous = BodyV2;
    type Cx = Controller;

    fn decode_own(r: &mut Reader<'_>, c: &Controller) -> DecResult<Self> {
        let BodyV2 { common, steps } = BodyV2::decode_own(r, c)?;
        Ok(BodyV3 {
            common,
            steps,
            arrays: crate::state::array::get_state(r)?,
        })
    }

    fn migrate(p: BodyV2) -> Self {
        BodyV3 {
            common: p.common,
            steps: p.steps,
            arrays: Default::default(),
        }
    }
}

/// Format 4: the jobs in special exit after.
pub(super) struct BodyV4 {
    pub(super) common: Common,
    pub(super) steps: Vec<(u32, JobSteps)>,
    pub(super) arrays: (Arrays, Deps),
    pub(super) special_exit: Vec<u32>,
}

impl Migrate for BodyV4 {
    const SINCE: u32 = 4;
    type Previous = BodyV3;
    type Cx = Controller;

    fn decode_own(r: &mut Reader<'_>, c: &Controller) -> DecResult<Self> {
        let BodyV3 {
            common,
            steps,
            arrays,
        } = BodyV3::decode_own(r, c)?;
        Ok(BodyV4 {
            common,
            steps,
            arrays,
            special_exit: records::get_special_exit(r)?,
        })
    }

    fn migrate(p: BodyV3) -> Self {
        BodyV4 {
            common: p.common,
            steps: p.steps,
            arrays: p.arrays,
            special_exit: Vec::new(),
        }
    }
}

/// The snapshot body as format `format` laid it out: fixtures for the
/// tests of the migrations.
#[cfg(test)]
pub(crate) fn encode_format(c: &Controller, format: u32) -> Vec<u8> {
    use super::shared::put_nested;
    use crate::state::array::put_state as put_arrays;
    use records::put_special_exit;
    use slurm_wire::pack::Writer;
    use steps::put_steps;
    let sections: &[fn(&mut Writer, &Controller)] = match format {
        BodyV1::SINCE => &[],
        BodyV2::SINCE => &[put_steps],
        BodyV3::SINCE => &[put_steps, put_arrays],
        BodyV4::SINCE => &[put_steps, put_arrays, put_special_exit],
        _ => return super::snapshot::encode_state(c),
    };
    let mut w = Writer::new();
    records::put_common(&mut w, c, |w, j| {
        put_nested(w, &j.req.to_desc().unwrap(), j.submit_version)
    });
    for put in sections {
        put(&mut w, c);
    }
    w.into_vec()
}
