//! What the controller holds of job dependencies, apart from the
//! dependency commands so that [`super::controller::Controller`] can hold
//! it without naming them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepType {
    After,
    AfterAny,
    AfterNotOk,
    AfterOk,
    AfterCorr,
    Singleton,
}

impl DepType {
    pub(super) fn name(self) -> &'static str {
        match self {
            DepType::After => "after",
            DepType::AfterAny => "afterany",
            DepType::AfterNotOk => "afternotok",
            DepType::AfterOk => "afterok",
            DepType::AfterCorr => "aftercorr",
            DepType::Singleton => "singleton",
        }
    }
    pub(super) fn code(self) -> u8 {
        self as u8
    }
    pub(super) fn of(c: u8) -> Option<Self> {
        [
            DepType::After,
            DepType::AfterAny,
            DepType::AfterNotOk,
            DepType::AfterOk,
            DepType::AfterCorr,
            DepType::Singleton,
        ]
        .get(usize::from(c))
        .copied()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepState {
    Unfulfilled,
    Fulfilled,
    Failed,
}

impl DepState {
    pub(super) fn name(self) -> &'static str {
        match self {
            DepState::Unfulfilled => "unfulfilled",
            DepState::Fulfilled => "fulfilled",
            DepState::Failed => "failed",
        }
    }
}

/// One dependency of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    pub ty: DepType,
    /// 0 for singleton.
    pub job_id: u32,
    /// NO_VAL: a plain job; INFINITE: a whole array; else one array task.
    pub task: u32,
    /// `after:ID+MIN`, in seconds.
    pub time: u32,
    pub state: DepState,
    /// Joined with `?` (any), not `,` (all).
    pub or: bool,
}

impl Dep {
    /// A dependency, not yet joined with `?`.
    pub fn new(ty: DepType, job_id: u32, task: u32, time: u32, state: DepState) -> Self {
        Dep {
            ty,
            job_id,
            task,
            time,
            state,
            or: false,
        }
    }
}

/// Dependencies by job id, in a persistent map (O(1) to publish).
pub type Deps = super::table::Table<u32, Vec<Dep>>;
