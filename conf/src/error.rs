//! Error types shared by every parser in the crate.

use std::fmt;

use thiserror::Error;

use crate::hostlist::HostlistError;

/// Where something was found: a file and a 1-based line (0: the whole file).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Location {
    pub file: String,
    pub line: usize,
}

impl Location {
    pub fn new(file: impl Into<String>, line: usize) -> Self {
        Location {
            file: file.into(),
            line,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// Any failure while reading a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfError {
    #[error("{path}: cannot read: {message}")]
    Io { path: String, message: String },
    #[error("{at}: Include {path}: {message}")]
    Include {
        at: Location,
        path: String,
        message: String,
    },
    #[error("{at}: Include {path}: nested too deeply or includes itself")]
    IncludeLoop { at: Location, path: String },
    #[error("{at}: unknown keyword \"{key}\"")]
    UnknownKey { at: Location, key: String },
    #[error("{at}: cannot parse \"{text}\"")]
    Syntax { at: Location, text: String },
    #[error("{at}: {key}: invalid {kind} value \"{value}\"")]
    InvalidValue {
        at: Location,
        key: String,
        kind: &'static str,
        value: String,
    },
    #[error("{at}: {key}: invalid hostlist \"{value}\": {source}")]
    Hostlist {
        at: Location,
        key: String,
        value: String,
        source: HostlistError,
    },
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    /// A file whose permission bits the daemon refuses (slurmdbd.conf).
    #[error("{path}: mode {mode:o}, must be {expected}")]
    Mode {
        path: String,
        mode: u32,
        expected: &'static str,
    },
}

impl ConfError {
    /// The location the error refers to, when it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ConfError::Io { .. } | ConfError::Mode { .. } => None,
            ConfError::Include { at, .. }
            | ConfError::IncludeLoop { at, .. }
            | ConfError::UnknownKey { at, .. }
            | ConfError::Syntax { at, .. }
            | ConfError::InvalidValue { at, .. }
            | ConfError::Hostlist { at, .. }
            | ConfError::Invalid { at, .. } => Some(at),
        }
    }

    pub(crate) fn invalid(at: &Location, message: impl Into<String>) -> Self {
        ConfError::Invalid {
            at: at.clone(),
            message: message.into(),
        }
    }

    pub(crate) fn value(at: &Location, key: &str, kind: &'static str, value: &str) -> Self {
        ConfError::InvalidValue {
            at: at.clone(),
            key: key.to_string(),
            kind,
            value: value.to_string(),
        }
    }
}
