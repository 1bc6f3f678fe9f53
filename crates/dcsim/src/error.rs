//! Errors a user can cause. Engine bugs are assertions, not errors.

use thiserror::Error;

/// A spec that cannot be run. Always fatal for the run, and always raised before anything
/// is simulated. The message names the field (as a dotted path), the value and what is
/// allowed.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("`{path}`: {message}")]
#[non_exhaustive]
pub struct SpecError {
    /// Dotted path of the offending field, e.g. `workload.load`.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl SpecError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError { path: path.into(), message: message.into() }
    }
}

/// A problem while running a (valid) spec.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The spec was rejected.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The caller asked the run to stop (Ctrl-C, a progress callback returning false).
    #[error("interrupted at simulated time {0}")]
    Interrupted(dcsim_engine::SimTime),
    /// The run reached the simulated horizon (10⁶ s) with flows still open: something
    /// (an arrival, a timer) lies beyond it.
    #[error(
        "the run reached the simulated horizon of 10^6 s with {open} flows unfinished and events \
         beyond it; check `workload.load`, `workload.flows`, trace times and deadlines"
    )]
    Horizon {
        /// Flows not finished.
        open: u64,
    },
    /// A checkpoint could not be written or read, or belongs to another run or build.
    #[error("checkpoint {0}")]
    Checkpoint(String),
}
