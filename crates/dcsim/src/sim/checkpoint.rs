//! Checkpoints: a run's whole state on disk, so a run longer than its machine's sitting (a
//! paper-scale run of a protocol near the load it carries can take hours) goes on where it
//! stopped and ends exactly as an uninterrupted run would.
//!
//! A checkpoint holds every value the event loop reads: the event queue (its times, insertion
//! sequence numbers and events), every packet alive, every port and queue, the transport's
//! hosts and switches, the workload generator and its random streams, the flow records and
//! the loop's own clocks. Nothing in a run depends on wall time, so the resumed run's events
//! are those the uninterrupted run would have had next, and its results are byte-identical
//! (`tests/it/checkpoint.rs` checks every protocol).
//!
//! The file starts with a header that ties it to the spec it was written for (its resolved
//! JSON) and to the model that wrote it (a hash of the simulator's source, `build.rs`):
//! resuming under another spec or another build is refused, since a different model would
//! read the state in its own way and silently mix two models' results.

use super::{LoopState, Simulation};
use crate::error::RunError;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"DCSIMCKP";
/// Raised when the header's layout changes.
const FORMAT: u32 = 1;
/// The simulator's source, hashed when it was built (`build.rs`).
pub const MODEL_SOURCE_HASH: &str = env!("DCSIM_SOURCE_HASH");

/// Where and how often a run saves its state ([`Simulation::with_checkpoints`]).
#[derive(Debug, Clone)]
pub struct Checkpoints {
    path: PathBuf,
    every: Duration,
    /// Wall seconds (of this sitting) at the last save.
    last: f64,
}

impl Checkpoints {
    pub(super) fn new(path: PathBuf, every: Duration) -> Self {
        Checkpoints { path, every, last: 0.0 }
    }

    /// A save is due `every` after the last (or after the start of this sitting).
    pub(super) fn due(&self, secs: f64) -> bool {
        secs - self.last >= self.every.as_secs_f64()
    }
}

/// The header: what the state belongs to.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    format: u32,
    model: String,
    spec_json: String,
    /// Events processed when it was written (for the message on resuming).
    events: u64,
    /// Wall seconds the run had taken until then, over all its sittings.
    wall_seconds: f64,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding()
}

fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> RunError {
    RunError::Checkpoint(format!("{}: {what}: {e}", path.display()))
}

impl Simulation {
    /// Writes the run's state (at an event boundary) to the checkpoint file: to a temporary
    /// file first, renamed over the old one, so a run killed while writing keeps its last
    /// whole checkpoint. Out of line: the event loop only tests whether one is due.
    #[cold]
    #[inline(never)]
    pub(super) fn save_checkpoint(&mut self, state: &LoopState, secs: f64) -> Result<(), RunError> {
        let Some(c) = &self.checkpoints else { return Ok(()) };
        let path = c.path.clone();
        let tmp = path.with_extension("partial");
        let header = Header {
            format: FORMAT,
            model: MODEL_SOURCE_HASH.to_owned(),
            spec_json: self.spec.to_json_string(),
            events: self.fab.sched.processed(),
            wall_seconds: state.wall_before + secs,
        };
        let write = || -> Result<(), RunError> {
            let file = File::create(&tmp).map_err(|e| io_error(&tmp, "cannot create", e))?;
            let failed = |e: &dyn std::fmt::Display| io_error(&tmp, "cannot write", e);
            let mut out = BufWriter::with_capacity(1 << 20, file);
            out.write_all(MAGIC).map_err(|e| failed(&e))?;
            let cfg = config();
            bincode::serde::encode_into_std_write(&header, &mut out, cfg)
                .map_err(|e| failed(&e))?;
            bincode::serde::encode_into_std_write(self.state_ref(), &mut out, cfg)
                .map_err(|e| failed(&e))?;
            bincode::serde::encode_into_std_write(state, &mut out, cfg).map_err(|e| failed(&e))?;
            let file = out.into_inner().map_err(|e| failed(&e))?;
            file.sync_all().map_err(|e| failed(&e))?;
            std::fs::rename(&tmp, &path).map_err(|e| io_error(&path, "cannot replace", e))
        };
        write()?;
        self.checkpoints.as_mut().expect("checked above").last = secs;
        Ok(())
    }

    /// Ends the sitting where it is: an interrupted run keeps what it has done in its
    /// checkpoint, when it has one. The error to return (the save's own, if it failed).
    #[cold]
    #[inline(never)]
    pub(super) fn interrupt(&mut self, state: &LoopState, secs: f64) -> RunError {
        match self.save_checkpoint(state, secs) {
            Ok(()) => RunError::Interrupted(self.fab.now()),
            Err(e) => e,
        }
    }

    /// Reads the checkpoint file, if there is one, into this (freshly built) simulation;
    /// returns the event loop's state to go on from. `Ok(None)` when there is no file.
    pub(super) fn load_checkpoint(&mut self) -> Result<Option<LoopState>, RunError> {
        let Some(c) = &self.checkpoints else { return Ok(None) };
        let path = c.path.clone();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, "cannot open", e)),
        };
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; 8];
        input.read_exact(&mut magic).map_err(|e| io_error(&path, "cannot read", e))?;
        if &magic != MAGIC {
            return Err(io_error(&path, "not a dcsim checkpoint", "wrong first bytes"));
        }
        let cfg = config();
        let header: Header = bincode::serde::decode_from_std_read(&mut input, cfg)
            .map_err(|e| io_error(&path, "cannot read the header", e))?;
        if header.format != FORMAT || header.model != MODEL_SOURCE_HASH {
            return Err(RunError::Checkpoint(format!(
                "{}: written by another dcsim build (model source {}, this build is {}); \
                 resuming it here could mix two models' results: delete it to start the run \
                 again, or resume with the build that wrote it",
                path.display(),
                header.model,
                MODEL_SOURCE_HASH
            )));
        }
        if header.spec_json != self.spec.to_json_string() {
            return Err(RunError::Checkpoint(format!(
                "{}: written for another spec (a checkpoint resumes only the run it was \
                 written by): delete it, or give it the spec it was written for",
                path.display()
            )));
        }
        let state = bincode::serde::decode_from_std_read(&mut input, cfg)
            .map_err(|e| io_error(&path, "cannot read the run's state", e))?;
        let mut loop_state: LoopState = bincode::serde::decode_from_std_read(&mut input, cfg)
            .map_err(|e| io_error(&path, "cannot read the run's state", e))?;
        self.restore(state);
        loop_state.wall_before = header.wall_seconds;
        Ok(Some(loop_state))
    }
}
