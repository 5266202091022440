//! Keyword tables: every option name stock Slurm 22.05, 24.11 and 26.05
//! accept in each file, with its value type and the versions that know it.

use crate::error::{ConfError, Location};
use crate::units;

pub const V22_05: u8 = 1;
pub const V24_11: u8 = 2;
pub const V26_05: u8 = 4;

/// How stock Slurm stores an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    U16,
    U32,
    U64,
    Bool,
    Float,
    /// May be given many times; every value is kept.
    Array,
    /// The value names a record and the rest of the line holds its fields.
    Line,
}

/// One recognised option.
#[derive(Debug, PartialEq, Eq)]
pub struct Keyword {
    pub name: &'static str,
    pub kind: Kind,
    /// Versions (bit set of `V*`) that accept the option.
    pub versions: u8,
    /// Versions in which the option is accepted but ignored.
    pub defunct: u8,
}

const fn kw(name: &'static str, kind: Kind, versions: u8, defunct: u8) -> Keyword {
    Keyword {
        name,
        kind,
        versions,
        defunct,
    }
}

impl Keyword {
    /// Rejects values stock would refuse for this option's type.
    pub(crate) fn check(&self, value: &str, at: &Location) -> Result<(), ConfError> {
        let ok = match self.kind {
            Kind::U16 => units::parse_u16(value).is_ok(),
            Kind::U32 => units::parse_u32(value).is_ok(),
            Kind::U64 => units::parse_u64(value).is_ok(),
            Kind::Bool => units::parse_bool(value).is_some(),
            Kind::Float => units::parse_f32(value).is_some(),
            Kind::Str | Kind::Array | Kind::Line => true,
        };
        if ok {
            Ok(())
        } else {
            let kind = if self.kind == Kind::Bool {
                "boolean"
            } else {
                "number"
            };
            Err(ConfError::value(at, self.name, kind, value))
        }
    }

    /// Defunct in every version that knows it from 24.11 on.
    pub fn is_defunct(&self) -> bool {
        let newer = self.versions & (V24_11 | V26_05);
        newer != 0 && self.defunct & newer == newer
    }
}

/// Case-insensitive lookup, as stock matches option names.
pub fn lookup(table: &'static [Keyword], name: &str) -> Option<&'static Keyword> {
    table.iter().find(|k| k.name.eq_ignore_ascii_case(name))
}

const ALL: u8 = V22_05 | V24_11 | V26_05;

/// `SlurmctldHost=` takes no further keys.
pub static SLURMCTLD_HOST: &[Keyword] = &[];

/// Top-level `gres.conf` keywords.
pub static GRES_TOP: &[Keyword] = &[
    kw("AutoDetect", Kind::Str, ALL, 0),
    kw("Name", Kind::Line, ALL, 0),
    kw("NodeName", Kind::Line, ALL, 0),
];

/// Keys of one `gres.conf` record.
pub static GRES: &[Keyword] = &[
    kw("AutoDetect", Kind::Str, ALL, 0),
    kw("Cores", Kind::Str, ALL, 0),
    kw("Count", Kind::Str, ALL, 0),
    kw("CPUs", Kind::Str, ALL, 0),
    kw("File", Kind::Str, ALL, 0),
    kw("Files", Kind::Str, ALL, 0),
    kw("Flags", Kind::Str, ALL, 0),
    kw("Link", Kind::Str, ALL, 0),
    kw("Links", Kind::Str, ALL, 0),
    kw("MultipleFiles", Kind::Str, ALL, 0),
    kw("Name", Kind::Str, ALL, 0),
    kw("Type", Kind::Str, ALL, 0),
];

/// `cgroup.conf` keywords of 22.05, 24.11 and 26.05.
pub static CGROUP: &[Keyword] = &[
    kw("AllowedDevicesFile", Kind::Str, ALL, 0),
    kw("AllowedKmemSpace", Kind::Float, V22_05, 0),
    kw("AllowedRAMSpace", Kind::Float, ALL, 0),
    kw("AllowedSwapSpace", Kind::Float, ALL, 0),
    kw("CgroupAutomount", Kind::Bool, ALL, V24_11 | V26_05),
    kw("CgroupJobIdPaths", Kind::Bool, V26_05, 0),
    kw("CgroupMountpoint", Kind::Str, ALL, 0),
    kw("CgroupPlugin", Kind::Str, ALL, 0),
    kw("CgroupReleaseAgentDir", Kind::Str, V22_05 | V24_11, 0),
    kw("CgroupSlice", Kind::Str, V26_05, 0),
    kw("ConstrainCores", Kind::Bool, ALL, 0),
    kw("ConstrainDevices", Kind::Bool, ALL, 0),
    kw("ConstrainKmemSpace", Kind::Bool, V22_05, 0),
    kw("ConstrainRAMSpace", Kind::Bool, ALL, 0),
    kw("ConstrainSwapSpace", Kind::Bool, ALL, 0),
    kw("EnableControllers", Kind::Bool, V24_11 | V26_05, 0),
    kw("EnableExtraControllers", Kind::Str, V26_05, 0),
    kw("IgnoreSystemd", Kind::Bool, ALL, 0),
    kw("IgnoreSystemdOnFailure", Kind::Bool, ALL, 0),
    kw("MaxKmemPercent", Kind::Float, V22_05, 0),
    kw("MaxRAMPercent", Kind::Float, ALL, 0),
    kw("MaxSwapPercent", Kind::Float, ALL, 0),
    kw("MemoryLimitEnforcement", Kind::Bool, ALL, 0),
    kw("MemoryLimitThreshold", Kind::Float, ALL, 0),
    kw("MemorySwappiness", Kind::U64, ALL, 0),
    kw("MinKmemSpace", Kind::U64, V22_05, 0),
    kw("MinRAMSpace", Kind::U64, ALL, 0),
    kw("SignalChildrenProcesses", Kind::Bool, V24_11 | V26_05, 0),
    kw("SystemdTimeout", Kind::U64, V24_11 | V26_05, 0),
];

/// `slurmdbd.conf` keywords of 22.05, 24.11 and 26.05 (stock's
/// `read_slurmdbd_conf` table; no release dropped one).
pub static SLURMDBD: &[Keyword] = &[
    kw("AllowNoDefAcct", Kind::Bool, ALL, 0),
    kw("AllResourcesAbsolute", Kind::Bool, V24_11 | V26_05, 0),
    kw("ArchiveDir", Kind::Str, ALL, 0),
    kw("ArchiveEvents", Kind::Bool, ALL, 0),
    kw("ArchiveJobEnv", Kind::Bool, V26_05, 0),
    kw("ArchiveJobs", Kind::Bool, ALL, 0),
    kw("ArchiveJobScript", Kind::Bool, V26_05, 0),
    kw("ArchiveResvs", Kind::Bool, ALL, 0),
    kw("ArchiveScript", Kind::Str, ALL, 0),
    kw("ArchiveSteps", Kind::Bool, ALL, 0),
    kw("ArchiveSuspend", Kind::Bool, ALL, 0),
    kw("ArchiveTXN", Kind::Bool, ALL, 0),
    kw("ArchiveUsage", Kind::Bool, ALL, 0),
    kw("AuthAltParameters", Kind::Str, ALL, 0),
    kw("AuthAltTypes", Kind::Str, ALL, 0),
    kw("AuthInfo", Kind::Str, ALL, 0),
    kw("AuthType", Kind::Str, ALL, 0),
    kw("CommitDelay", Kind::U16, ALL, 0),
    kw("CommunicationParameters", Kind::Str, ALL, 0),
    kw("DbdAddr", Kind::Str, ALL, 0),
    kw("DbdBackupHost", Kind::Str, ALL, 0),
    kw("DbdHost", Kind::Str, ALL, 0),
    kw("DbdPort", Kind::U16, ALL, 0),
    kw("DebugFlags", Kind::Str, ALL, 0),
    kw("DebugLevel", Kind::Str, ALL, 0),
    kw("DebugLevelSyslog", Kind::Str, ALL, 0),
    kw("DefaultQOS", Kind::Str, ALL, 0),
    kw("DisableArchiveCommands", Kind::Bool, V26_05, 0),
    kw("DisableCoordDBD", Kind::Bool, V24_11 | V26_05, 0),
    kw("DisableRollups", Kind::Bool, V26_05, 0),
    kw("HashPlugin", Kind::Str, V24_11 | V26_05, 0),
    kw("JobPurge", Kind::U32, ALL, 0),
    kw("LogFile", Kind::Str, ALL, 0),
    kw("LogTimeFormat", Kind::Str, ALL, 0),
    kw("MaxPurgeLimit", Kind::U32, V26_05, 0),
    kw("MaxQueryTimeRange", Kind::Str, ALL, 0),
    kw("MessageTimeout", Kind::U16, ALL, 0),
    kw("Parameters", Kind::Str, ALL, 0),
    kw("PidFile", Kind::Str, ALL, 0),
    kw("PluginDir", Kind::Str, ALL, 0),
    kw("PrivateData", Kind::Str, ALL, 0),
    kw("PurgeEventAfter", Kind::Str, ALL, 0),
    kw("PurgeEventMonths", Kind::U32, ALL, 0),
    kw("PurgeJobAfter", Kind::Str, ALL, 0),
    kw("PurgeJobEnvAfter", Kind::Str, V26_05, 0),
    kw("PurgeJobMonths", Kind::U32, ALL, 0),
    kw("PurgeJobScriptAfter", Kind::Str, V26_05, 0),
    kw("PurgeResvAfter", Kind::Str, ALL, 0),
    kw("PurgeStepAfter", Kind::Str, ALL, 0),
    kw("PurgeStepMonths", Kind::U32, ALL, 0),
    kw("PurgeSuspendAfter", Kind::Str, ALL, 0),
    kw("PurgeSuspendMonths", Kind::U32, ALL, 0),
    kw("PurgeTXNAfter", Kind::Str, ALL, 0),
    kw("PurgeTXNMonths", Kind::U32, ALL, 0),
    kw("PurgeUsageAfter", Kind::Str, ALL, 0),
    kw("PurgeUsageMonths", Kind::U32, ALL, 0),
    kw("SlurmUser", Kind::Str, ALL, 0),
    kw("StepPurge", Kind::U32, ALL, 0),
    kw("StorageBackupHost", Kind::Str, ALL, 0),
    kw("StorageHost", Kind::Str, ALL, 0),
    kw("StorageLoc", Kind::Str, ALL, 0),
    kw("StorageParameters", Kind::Str, ALL, 0),
    kw("StoragePass", Kind::Str, ALL, 0),
    kw("StoragePassScript", Kind::Str, V26_05, 0),
    kw("StoragePort", Kind::U16, ALL, 0),
    kw("StorageType", Kind::Str, ALL, 0),
    kw("StorageUser", Kind::Str, ALL, 0),
    kw("TCPTimeout", Kind::U16, ALL, 0),
    kw("TLSParameters", Kind::Str, V24_11 | V26_05, 0),
    kw("TLSType", Kind::Str, V24_11 | V26_05, 0),
    kw("TrackSlurmctldDown", Kind::Bool, ALL, 0),
    kw("TrackWCKey", Kind::Bool, ALL, 0),
];

/// Top-level `topology.conf` keywords (tree and block plugins).
pub static TOPOLOGY: &[Keyword] = &[
    kw("BlockName", Kind::Line, V24_11 | V26_05, 0),
    kw("BlockSizes", Kind::Str, V24_11 | V26_05, 0),
    kw("SwitchName", Kind::Line, ALL, 0),
];

/// Keys after `SwitchName=`.
pub static SWITCH: &[Keyword] = &[
    kw("LinkSpeed", Kind::U32, ALL, 0),
    kw("Nodes", Kind::Str, ALL, 0),
    kw("Switches", Kind::Str, ALL, 0),
];

/// Keys after `BlockName=`.
pub static BLOCK: &[Keyword] = &[kw("Nodes", Kind::Str, V24_11 | V26_05, 0)];

/// Top-level `slurm.conf` keywords of 22.05, 24.11 and 26.05.
pub static SLURM_CONF: &[Keyword] = &[
    kw("AccountingStorageBackupHost", Kind::Str, 7, 0),
    kw("AccountingStorageEnforce", Kind::Str, 7, 0),
    kw("AccountingStorageExternalHost", Kind::Str, 7, 0),
    kw("AccountingStorageHost", Kind::Str, 7, 0),
    kw("AccountingStorageLoc", Kind::Str, 3, 0),
    kw("AccountingStorageParameters", Kind::Str, 7, 0),
    kw("AccountingStoragePass", Kind::Str, 7, 0),
    kw("AccountingStoragePort", Kind::U16, 7, 0),
    kw("AccountingStorageTRES", Kind::Str, 7, 0),
    kw("AccountingStorageType", Kind::Str, 7, 0),
    kw("AccountingStorageUser", Kind::Str, 7, 4),
    kw("AccountingStoreFlags", Kind::Str, 7, 0),
    kw("AccountingStoreJobComment", Kind::Bool, 7, 0),
    kw("AcctGatherEnergyType", Kind::Str, 7, 0),
    kw("AcctGatherFilesystemType", Kind::Str, 7, 0),
    kw("AcctGatherInfinibandType", Kind::Str, 7, 0),
    kw("AcctGatherInterconnectType", Kind::Str, 7, 0),
    kw("AcctGatherNodeFreq", Kind::U16, 7, 0),
    kw("AcctGatherProfileType", Kind::Str, 7, 0),
    kw("AllowSpecResourcesUsage", Kind::Bool, 7, 0),
    kw("AuthAltParameters", Kind::Str, 7, 0),
    kw("AuthAltTypes", Kind::Str, 7, 0),
    kw("AuthInfo", Kind::Str, 7, 0),
    kw("AuthType", Kind::Str, 7, 0),
    kw("BackupAddr", Kind::Str, 7, 0),
    kw("BackupController", Kind::Str, 7, 0),
    kw("BatchStartTimeout", Kind::U16, 7, 0),
    kw("BcastExclude", Kind::Str, 7, 0),
    kw("BcastParameters", Kind::Str, 7, 0),
    kw("BurstBufferParameters", Kind::Str, 7, 0),
    kw("BurstBufferType", Kind::Str, 7, 0),
    kw("CertgenParameters", Kind::Str, 4, 0),
    kw("CertgenType", Kind::Str, 4, 0),
    kw("CertmgrParameters", Kind::Str, 6, 0),
    kw("CertmgrType", Kind::Str, 6, 0),
    kw("CliFilterParameters", Kind::Str, 4, 0),
    kw("CliFilterPlugins", Kind::Str, 7, 0),
    kw("ClusterName", Kind::Str, 7, 0),
    kw("CommunicationParameters", Kind::Str, 7, 0),
    kw("CompleteWait", Kind::U16, 7, 0),
    kw("ControlAddr", Kind::Str, 7, 0),
    kw("ControlMachine", Kind::Str, 7, 0),
    kw("CoreSpecPlugin", Kind::Str, 7, 6),
    kw("CpuFreqDef", Kind::Str, 7, 0),
    kw("CpuFreqGovernors", Kind::Str, 7, 0),
    kw("CredType", Kind::Str, 7, 0),
    kw("CryptoType", Kind::Str, 7, 0),
    kw("DataParserParameters", Kind::Str, 6, 0),
    kw("DebugFlags", Kind::Str, 7, 0),
    kw("DefCPUPerGPU", Kind::U64, 7, 0),
    kw("DefMemPerCPU", Kind::U64, 7, 0),
    kw("DefMemPerGPU", Kind::U64, 7, 0),
    kw("DefMemPerNode", Kind::U64, 7, 0),
    kw("DependencyParameters", Kind::Str, 7, 0),
    kw("DisableRootJobs", Kind::Bool, 7, 0),
    kw("DownNodes", Kind::Line, 7, 0),
    kw("EioTimeout", Kind::U16, 7, 0),
    kw("EnforcePartLimits", Kind::Str, 7, 0),
    kw("Epilog", Kind::Array, 7, 0),
    kw("EpilogMsgTime", Kind::U32, 7, 0),
    kw("EpilogSlurmctld", Kind::Array, 7, 0),
    kw("EpilogTimeout", Kind::U16, 4, 0),
    kw("ExtSensorsFreq", Kind::U16, 7, 6),
    kw("ExtSensorsType", Kind::Str, 7, 6),
    kw("FairShareDampeningFactor", Kind::U16, 7, 0),
    kw("FastSchedule", Kind::U16, 7, 0),
    kw("FederationParameters", Kind::Str, 7, 0),
    kw("FirstJobId", Kind::U32, 7, 0),
    kw("FrontendName", Kind::Line, 3, 0),
    kw("GetEnvTimeout", Kind::U16, 7, 4),
    kw("GpuFreqDef", Kind::Str, 7, 0),
    kw("GresTypes", Kind::Str, 7, 0),
    kw("GroupUpdateForce", Kind::U16, 7, 0),
    kw("GroupUpdateTime", Kind::U16, 7, 0),
    kw("HashPlugin", Kind::Str, 6, 0),
    kw("HealthCheckInterval", Kind::U16, 7, 0),
    kw("HealthCheckNodeState", Kind::Str, 7, 0),
    kw("HealthCheckProgram", Kind::Str, 7, 0),
    kw("HealthCheckTimeout", Kind::U16, 4, 0),
    kw("HttpParserType", Kind::Str, 4, 0),
    kw("InactiveLimit", Kind::U16, 7, 0),
    kw("InteractiveStepOptions", Kind::Str, 7, 0),
    kw("JobAcctGatherFrequency", Kind::Str, 7, 0),
    kw("JobAcctGatherParams", Kind::Str, 7, 0),
    kw("JobAcctGatherType", Kind::Str, 7, 0),
    kw("JobCompHost", Kind::Str, 7, 0),
    kw("JobCompLoc", Kind::Str, 7, 0),
    kw("JobCompParams", Kind::Str, 7, 0),
    kw("JobCompPass", Kind::Str, 7, 0),
    kw("JobCompPassScript", Kind::Str, 4, 0),
    kw("JobCompPort", Kind::U32, 7, 0),
    kw("JobCompType", Kind::Str, 7, 0),
    kw("JobCompUser", Kind::Str, 7, 0),
    kw("JobContainerType", Kind::Str, 7, 0),
    kw("JobCredentialPrivateKey", Kind::Str, 7, 6),
    kw("JobCredentialPublicCertificate", Kind::Str, 7, 6),
    kw("JobFileAppend", Kind::U16, 7, 0),
    kw("JobRequeue", Kind::U16, 7, 0),
    kw("JobSubmitPlugins", Kind::Str, 7, 0),
    kw("KeepAliveTime", Kind::U32, 7, 0),
    kw("KillOnBadExit", Kind::U16, 7, 0),
    kw("KillWait", Kind::U16, 7, 0),
    kw("LaunchParameters", Kind::Str, 7, 0),
    kw("LaunchType", Kind::Str, 7, 0),
    kw("LicenseParameters", Kind::Str, 4, 0),
    kw("Licenses", Kind::Str, 7, 0),
    kw("LogTimeFormat", Kind::Str, 7, 0),
    kw("MailDomain", Kind::Str, 7, 0),
    kw("MailProg", Kind::Str, 7, 0),
    kw("MaxArraySize", Kind::U32, 7, 0),
    kw("MaxBatchRequeue", Kind::U32, 6, 0),
    kw("MaxDBDMsgs", Kind::U32, 7, 0),
    kw("MaxJobCount", Kind::U32, 7, 0),
    kw("MaxJobId", Kind::U32, 7, 0),
    kw("MaxMemPerCPU", Kind::U64, 7, 0),
    kw("MaxMemPerNode", Kind::U64, 7, 0),
    kw("MaxNodeCount", Kind::U32, 7, 0),
    kw("MaxStepCount", Kind::U32, 7, 0),
    kw("MaxTasksPerNode", Kind::U16, 7, 0),
    kw("MCSParameters", Kind::Str, 7, 0),
    kw("MCSPlugin", Kind::Str, 7, 0),
    kw("MessageTimeout", Kind::U16, 7, 0),
    kw("MetricsAuthUsers", Kind::Str, 4, 0),
    kw("MetricsParameters", Kind::Str, 4, 0),
    kw("MetricsType", Kind::Str, 4, 0),
    kw("MinJobAge", Kind::U32, 7, 0),
    kw("MpiDefault", Kind::Str, 7, 0),
    kw("MpiParams", Kind::Str, 7, 0),
    kw("NamespaceType", Kind::Str, 4, 0),
    kw("NodeFeaturesPlugins", Kind::Str, 7, 0),
    kw("NodeName", Kind::Line, 7, 0),
    kw("NodeSet", Kind::Line, 7, 0),
    kw("OverTimeLimit", Kind::U16, 7, 0),
    kw("PartitionName", Kind::Line, 7, 0),
    kw("PluginDir", Kind::Str, 7, 0),
    kw("PlugStackConfig", Kind::Str, 7, 0),
    kw("PowerAction", Kind::Line, 4, 0),
    kw("PowerParameters", Kind::Str, 7, 6),
    kw("PowerPlugin", Kind::Str, 7, 6),
    kw("PreemptExemptTime", Kind::Str, 7, 0),
    kw("PreemptMode", Kind::Str, 7, 0),
    kw("PreemptParameters", Kind::Str, 6, 0),
    kw("PreemptType", Kind::Str, 7, 0),
    kw("PrEpParameters", Kind::Str, 7, 0),
    kw("PrEpPlugins", Kind::Str, 7, 0),
    kw("PriorityCalcPeriod", Kind::Str, 7, 0),
    kw("PriorityDecayHalfLife", Kind::Str, 7, 0),
    kw("PriorityFavorSmall", Kind::Bool, 7, 0),
    kw("PriorityFlags", Kind::Str, 7, 0),
    kw("PriorityMaxAge", Kind::Str, 7, 0),
    kw("PriorityParameters", Kind::Str, 7, 0),
    kw("PrioritySiteFactorParameters", Kind::Str, 7, 0),
    kw("PrioritySiteFactorPlugin", Kind::Str, 7, 0),
    kw("PriorityType", Kind::Str, 7, 0),
    kw("PriorityUsageResetPeriod", Kind::Str, 7, 0),
    kw("PriorityWeightAge", Kind::U32, 7, 0),
    kw("PriorityWeightAssoc", Kind::U32, 7, 0),
    kw("PriorityWeightFairshare", Kind::U32, 7, 0),
    kw("PriorityWeightJobSize", Kind::U32, 7, 0),
    kw("PriorityWeightPartition", Kind::U32, 7, 0),
    kw("PriorityWeightQOS", Kind::U32, 7, 0),
    kw("PriorityWeightTRES", Kind::Str, 7, 0),
    kw("PrivateData", Kind::Str, 7, 0),
    kw("ProctrackType", Kind::Str, 7, 0),
    kw("Prolog", Kind::Array, 7, 0),
    kw("PrologEpilogTimeout", Kind::U16, 7, 0),
    kw("PrologFlags", Kind::Str, 7, 0),
    kw("PrologSlurmctld", Kind::Array, 7, 0),
    kw("PrologTimeout", Kind::U16, 4, 0),
    kw("PropagatePrioProcess", Kind::U16, 7, 0),
    kw("PropagateResourceLimits", Kind::Str, 7, 0),
    kw("PropagateResourceLimitsExcept", Kind::Str, 7, 0),
    kw("RebootProgram", Kind::Str, 7, 0),
    kw("ReconfigFlags", Kind::Str, 7, 0),
    kw("RequeueExit", Kind::Str, 7, 0),
    kw("RequeueExitHold", Kind::Str, 7, 0),
    kw("ResumeFailProgram", Kind::Str, 7, 0),
    kw("ResumeProgram", Kind::Str, 7, 0),
    kw("ResumeRate", Kind::U16, 7, 0),
    kw("ResumeTimeout", Kind::U16, 7, 0),
    kw("ResvEpilog", Kind::Str, 7, 0),
    kw("ResvOverRun", Kind::U16, 7, 0),
    kw("ResvProlog", Kind::Str, 7, 0),
    kw("ReturnToService", Kind::U16, 7, 0),
    kw("RoutePlugin", Kind::Str, 7, 0),
    kw("SallocDefaultCommand", Kind::Str, 7, 0),
    kw("SbcastParameters", Kind::Str, 7, 0),
    kw("SchedulerAuth", Kind::Str, 1, 1),
    kw("SchedulerParameters", Kind::Str, 7, 0),
    kw("SchedulerTimeSlice", Kind::U16, 7, 0),
    kw("SchedulerType", Kind::Str, 7, 0),
    kw("ScronParameters", Kind::Str, 7, 0),
    kw("SelectType", Kind::Str, 7, 0),
    kw("SelectTypeParameters", Kind::Str, 7, 0),
    kw("SlurmctldAddr", Kind::Str, 7, 0),
    kw("SlurmctldDebug", Kind::Str, 7, 0),
    kw("SlurmctldHost", Kind::Line, 7, 0),
    kw("SlurmctldHttpAuthParameters", Kind::Str, 4, 0),
    kw("SlurmctldLogFile", Kind::Str, 7, 0),
    kw("SlurmctldParameters", Kind::Str, 7, 0),
    kw("SlurmctldPidFile", Kind::Str, 7, 0),
    kw("SlurmctldPlugstack", Kind::Str, 1, 0),
    kw("SlurmctldPort", Kind::Str, 7, 0),
    kw("SlurmctldPrimaryOffProg", Kind::Str, 7, 0),
    kw("SlurmctldPrimaryOnProg", Kind::Str, 7, 0),
    kw("SlurmctldSyslogDebug", Kind::Str, 7, 0),
    kw("SlurmctldTimeout", Kind::U16, 7, 0),
    kw("SlurmdDebug", Kind::Str, 7, 0),
    kw("SlurmdHttpAuthParameters", Kind::Str, 4, 0),
    kw("SlurmdLogFile", Kind::Str, 7, 0),
    kw("SlurmdParameters", Kind::Str, 7, 0),
    kw("SlurmdPidFile", Kind::Str, 7, 0),
    kw("SlurmdPort", Kind::U32, 7, 0),
    kw("SlurmdSpoolDir", Kind::Str, 7, 0),
    kw("SlurmdSyslogDebug", Kind::Str, 7, 0),
    kw("SlurmdTimeout", Kind::U16, 7, 0),
    kw("SlurmdUser", Kind::Str, 7, 0),
    kw("SlurmSchedLogFile", Kind::Str, 7, 0),
    kw("SlurmSchedLogLevel", Kind::U16, 7, 0),
    kw("SlurmUser", Kind::Str, 7, 0),
    kw("SrunEpilog", Kind::Str, 7, 0),
    kw("SrunPortRange", Kind::Str, 7, 0),
    kw("SrunProlog", Kind::Str, 7, 0),
    kw("StateSaveLocation", Kind::Str, 7, 0),
    kw("SuspendExcNodes", Kind::Str, 7, 0),
    kw("SuspendExcParts", Kind::Str, 7, 0),
    kw("SuspendExcStates", Kind::Str, 6, 0),
    kw("SuspendProgram", Kind::Str, 7, 0),
    kw("SuspendRate", Kind::U16, 7, 0),
    kw("SuspendTime", Kind::Str, 7, 0),
    kw("SuspendTimeout", Kind::U16, 7, 0),
    kw("SwitchParameters", Kind::Str, 7, 0),
    kw("SwitchType", Kind::Str, 7, 0),
    kw("TaskEpilog", Kind::Str, 7, 0),
    kw("TaskPlugin", Kind::Str, 7, 0),
    kw("TaskPluginParam", Kind::Str, 7, 0),
    kw("TaskProlog", Kind::Str, 7, 0),
    kw("TCPTimeout", Kind::U16, 7, 0),
    kw("TLSParameters", Kind::Str, 6, 0),
    kw("TLSType", Kind::Str, 6, 0),
    kw("TmpFS", Kind::Str, 7, 0),
    kw("TopologyParam", Kind::Str, 7, 0),
    kw("TopologyPlugin", Kind::Str, 7, 0),
    kw("TrackWCKey", Kind::Bool, 7, 0),
    kw("TreeWidth", Kind::U16, 7, 0),
    kw("UnkillableStepProgram", Kind::Str, 7, 0),
    kw("UnkillableStepTimeout", Kind::U16, 7, 0),
    kw("UrlParserType", Kind::Str, 4, 0),
    kw("UsePAM", Kind::Bool, 7, 0),
    kw("VSizeFactor", Kind::U16, 7, 0),
    kw("WaitTime", Kind::U16, 7, 0),
    kw("X11Parameters", Kind::Str, 7, 0),
];

/// Keys allowed after `NodeName=`.
pub static NODE: &[Keyword] = &[
    kw("BcastAddr", Kind::Str, 7, 0),
    kw("Boards", Kind::U16, 7, 0),
    kw("CoreSpecCount", Kind::U16, 7, 0),
    kw("CoresPerSocket", Kind::U16, 7, 0),
    kw("CpuBind", Kind::Str, 7, 0),
    kw("CPUs", Kind::U16, 7, 0),
    kw("CPUSpecList", Kind::Str, 7, 0),
    kw("Feature", Kind::Str, 7, 0),
    kw("Features", Kind::Str, 7, 0),
    kw("Gres", Kind::Str, 7, 0),
    kw("GresConf", Kind::Str, 4, 0),
    kw("MemSpecLimit", Kind::U64, 7, 0),
    kw("NodeAddr", Kind::Str, 7, 0),
    kw("NodeHostname", Kind::Str, 7, 0),
    kw("Parameters", Kind::Str, 4, 0),
    kw("Port", Kind::Str, 7, 0),
    kw("Procs", Kind::U16, 7, 0),
    kw("RealMemory", Kind::U64, 7, 0),
    kw("Reason", Kind::Str, 7, 0),
    kw("RestrictedCoresPerGPU", Kind::U16, 6, 0),
    kw("Sockets", Kind::U16, 7, 0),
    kw("SocketsPerBoard", Kind::U16, 7, 0),
    kw("State", Kind::Str, 7, 0),
    kw("SuspendTime", Kind::Str, 4, 0),
    kw("ThreadsPerCore", Kind::U16, 7, 0),
    kw("TmpDisk", Kind::U32, 7, 0),
    kw("Topology", Kind::Str, 4, 0),
    kw("TRESWeights", Kind::Str, 7, 0),
    kw("Weight", Kind::U32, 7, 0),
];

/// Keys allowed after `PartitionName=`.
pub static PARTITION: &[Keyword] = &[
    kw("AllocNodes", Kind::Str, 7, 0),
    kw("AllowAccounts", Kind::Str, 7, 0),
    kw("AllowGroups", Kind::Str, 7, 0),
    kw("AllowQos", Kind::Str, 7, 0),
    kw("Alternate", Kind::Str, 7, 0),
    kw("CpuBind", Kind::Str, 7, 0),
    kw("Default", Kind::Bool, 7, 0),
    kw("DefaultTime", Kind::Str, 7, 0),
    kw("DefCPUPerGPU", Kind::U64, 7, 0),
    kw("DefMemPerCPU", Kind::U64, 7, 0),
    kw("DefMemPerGPU", Kind::U64, 7, 0),
    kw("DefMemPerNode", Kind::U64, 7, 0),
    kw("DenyAccounts", Kind::Str, 7, 0),
    kw("DenyQos", Kind::Str, 7, 0),
    kw("DisableRootJobs", Kind::Bool, 7, 0),
    kw("Exclusive", Kind::Str, 4, 0),
    kw("ExclusiveTopo", Kind::Bool, 6, 0),
    kw("ExclusiveUser", Kind::Bool, 7, 0),
    kw("GraceTime", Kind::U32, 7, 0),
    kw("Hidden", Kind::Bool, 7, 0),
    kw("LLN", Kind::Bool, 7, 0),
    kw("MaxCPUsPerNode", Kind::U32, 7, 0),
    kw("MaxCPUsPerSocket", Kind::U32, 6, 0),
    kw("MaxMemPerCPU", Kind::U64, 7, 0),
    kw("MaxMemPerNode", Kind::U64, 7, 0),
    kw("MaxNodes", Kind::U32, 7, 0),
    kw("MaxTime", Kind::Str, 7, 0),
    kw("MinNodes", Kind::U32, 7, 0),
    kw("Nodes", Kind::Str, 7, 0),
    kw("OverSubscribe", Kind::Str, 7, 0),
    kw("OverTimeLimit", Kind::Str, 7, 0),
    kw("PowerDownOnIdle", Kind::Bool, 6, 0),
    kw("PreemptMode", Kind::Str, 7, 0),
    kw("Priority", Kind::U16, 7, 0),
    kw("PriorityJobFactor", Kind::U16, 7, 0),
    kw("PriorityTier", Kind::U16, 7, 0),
    kw("QOS", Kind::Str, 7, 0),
    kw("ReqResv", Kind::Bool, 7, 0),
    kw("ResumeTimeout", Kind::U16, 7, 0),
    kw("RootOnly", Kind::Bool, 7, 0),
    kw("SelectTypeParameters", Kind::Str, 7, 0),
    kw("Shared", Kind::Str, 7, 0),
    kw("State", Kind::Str, 7, 0),
    kw("SuspendTime", Kind::Str, 7, 0),
    kw("SuspendTimeout", Kind::U16, 7, 0),
    kw("Topology", Kind::Str, 4, 0),
    kw("TRESBillingWeights", Kind::Str, 7, 0),
];

/// Keys allowed after `NodeSet=`.
pub static NODESET: &[Keyword] = &[kw("Feature", Kind::Str, 7, 0), kw("Nodes", Kind::Str, 7, 0)];

/// Keys allowed after `DownNodes=`.
pub static DOWN_NODES: &[Keyword] = &[kw("Reason", Kind::Str, 7, 0), kw("State", Kind::Str, 7, 0)];

/// Keys allowed after `FrontendName=` (22.05, 24.11).
pub static FRONTEND: &[Keyword] = &[
    kw("AllowGroups", Kind::Str, 3, 0),
    kw("AllowUsers", Kind::Str, 3, 0),
    kw("DenyGroups", Kind::Str, 3, 0),
    kw("DenyUsers", Kind::Str, 3, 0),
    kw("FrontendAddr", Kind::Str, 3, 0),
    kw("Port", Kind::U16, 3, 0),
    kw("Reason", Kind::Str, 3, 0),
    kw("State", Kind::Str, 3, 0),
];

/// Keys allowed after `PowerAction=` (26.05).
pub static POWER_ACTION: &[Keyword] = &[
    kw("Location", Kind::Str, 4, 0),
    kw("Program", Kind::Str, 4, 0),
];
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_unique() {
        for t in [SLURM_CONF, NODE, PARTITION, CGROUP, GRES, SLURMDBD] {
            let names: Vec<String> = t.iter().map(|k| k.name.to_lowercase()).collect();
            let mut sorted = names.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(names, sorted);
        }
    }

    #[test]
    fn lookup_ignores_case() {
        assert_eq!(
            lookup(SLURM_CONF, "clustername").unwrap().name,
            "ClusterName"
        );
        assert_eq!(lookup(SLURM_CONF, "NODENAME").unwrap().kind, Kind::Line);
        assert!(lookup(SLURM_CONF, "NoSuchThing").is_none());
        assert!(lookup(SLURM_CONF, "CoreSpecPlugin").unwrap().is_defunct());
        assert!(!lookup(SLURM_CONF, "GetEnvTimeout").unwrap().is_defunct());
    }
}
