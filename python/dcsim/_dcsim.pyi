"""Typed stub of the native extension ``dcsim._dcsim`` (the Rust core)."""

from typing import Callable

__all__ = [
    "resolve_spec",
    "resolve_spec_with_unused",
    "run_spec",
    "version",
    "spec_schema",
    "named_workloads",
    "thresholds",
    "threshold_fctn",
    "pias_shares",
    "InvalidSpec",
    "CheckpointError",
    "__version__",
    "build_profile",
]

__version__: str
"""dcsim's version (SemVer), set once in Cargo.toml's `[workspace.package]`; the Python
package's metadata carries the same (see CHANGELOG.md)."""
build_profile: str
"""How the core was built: `release` for a normal install, `debug` for a build with debug
assertions (slower; the invariants checked as it runs)."""

class InvalidSpec(ValueError):
    """A spec the simulator cannot run. ``args`` is ``(message, field_path, detail)``."""

class CheckpointError(RuntimeError):
    """A checkpoint that cannot be written or read, or that belongs to another spec or build
    (resuming it could mix two models' results)."""

def resolve_spec(spec_json: str) -> tuple[str, str]:
    """Resolve a spec (JSON text); returns ``(resolved_toml, resolved_json)``."""

def resolve_spec_with_unused(
    spec_json: str,
) -> tuple[str, str, list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """Resolve a spec (JSON text); returns ``(resolved_toml, resolved_json, unused_fields,
    unused_sections)``: the fields the spec sets that the run does not read and the tables
    that do not apply to it, each ``(field, value as written, reason)``."""

def run_spec(
    spec_json: str,
    progress: Callable[[dict[str, float]], object] | None = None,
    threads: int = 1,
    checkpoint: str | None = None,
    checkpoint_every_s: float = 600.0,
) -> tuple[str, dict[str, tuple[str, bytes]], dict[str, dict[str, tuple[str, bytes]]]]:
    """Run a spec, a partitioned run's partitions on ``threads`` threads (the results do not
    depend on it). With ``checkpoint`` (a file path) the run saves its whole state there every
    ``checkpoint_every_s`` seconds of wall time and when interrupted, and resumes from it if it
    holds a checkpoint of this spec written by this build (raising ``CheckpointError`` if it
    belongs to another); the results are those of an uninterrupted run. Returns
    ``(summary_json, {column: (dtype, raw bytes)}, {recording: {column: (dtype, raw
    bytes)}})``: the flow table's columns, then the recordings' (``timeseries``, ``ports``,
    ``packets``, and ``port_info`` describing the ports)."""

def version() -> str:
    """The core's version."""

def spec_schema() -> str:
    """The JSON Schema (draft 2020-12) of a run spec, generated from the resolver's fields."""

def named_workloads() -> list[str]:
    """Names of the shipped flow-size distributions."""

def thresholds(workload: str, load: float, queues: int, method: str, base_bytes: float = 0.0) -> list[float]:
    """Few-queue thresholds in bytes ("mg1", "equal-split", "pias" closed form, "pias-table");
    `base_bytes`: a fixed latency (bytes at link rate) in the mg1 model's normalization."""

def pias_shares(load: float, queues: int) -> list[float]:
    """PIAS §3.3: the share of flows each MLFQ level serves (sums to 1)."""

def threshold_fctn(workload: str, load: float, thresholds: list[float], base_bytes: float = 0.0) -> float:
    """The M/G/1 priority model's mean normalized FCT for the given thresholds (with a fixed
    latency of `base_bytes` in each flow's FCT and ideal FCT)."""
