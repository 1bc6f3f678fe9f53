"""Sweeps: a run spec plus a ``[sweep]`` table of axes, expanded into runs and executed in
parallel — by local worker processes (default) or by Ray (``--ray``) — resumably.

Axes are dotted spec paths whose values are lists or ranges::

    [sweep]
    "workload.load" = [0.5, 0.6, 0.7, 0.8]
    "transport.protocol" = ["tcp", "dctcp"]
    seed = { range = [1, 5] }               # 1, 2, 3, 4, 5 (inclusive): replicates of every point
    # or: replicates = 5                    # seeds seed, seed + 1, ..., seed + 4 (the spec's own seed first)
    zip = [["workload.load", "workload.flows"]]   # optional: advance these axes together
    filter = "not (protocol == 'tcp' and load > 0.7)"   # optional: keep runs where true

The cross product of the axes (zipped groups count as one axis) gives the runs. A point is
one combination of the axes other than ``seed``; its runs, one per seed, are its replicates,
which ``load(out, aggregate=True)`` averages (:mod:`dcsim.replicates`). A run's
identity is a hash of its fully resolved spec and the dcsim version; its results land in
``<out>/runs/<hash>/`` exactly as ``dcsim run`` writes them, plus ``params.json``. A run
directory appears only complete (written under ``runs/.staging/`` and renamed into place), so
a sweep killed at any moment resumes by skipping the runs that exist.

Optional ``[scales.<name>]`` tables hold dotted overrides applied with ``--scale <name>``
(the reproductions use ``quick`` and ``paper``).
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import itertools
import json
import math
import multiprocessing
import os
import shutil
import sys
import time
import traceback
import uuid
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import _dcsim
from .optional import require
from .progress import RunEnd, SweepProgress
from .spec import (
    SWEEP_TABLES,
    ResolvedSpec,
    SpecError,
    SpecLike,
    UnusedField,
    flatten,
    load_tree,
    report_unused,
    resolve,
    set_path,
)

_RESERVED = {"zip", "filter", "replicates"}
#: The sweep key giving the number of seeds of every point (the seed axis in short).
REPLICATES = "replicates"
#: The largest seed (``seed`` is a 64-bit unsigned integer).
MAX_SEED = 2**64 - 1


@dataclass
class PlannedRun:
    """One run of a sweep."""

    hash: str
    params: dict[str, Any]
    spec: ResolvedSpec


@dataclass
class Plan:
    """The expanded sweep: its axes and its runs (deduplicated by hash)."""

    axes: dict[str, list[Any]]
    runs: list[PlannedRun]
    base_dir: Path | None = None

    @property
    def seeds(self) -> list[int] | None:
        """The seeds every point is replicated over (the ``seed`` axis), or None without one."""
        return self.axes.get("seed")


@dataclass
class Report:
    """What a sweep did."""

    total: int
    skipped: int = 0
    completed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    retried: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    interrupted: bool = False
    #: Complete runs in the directory that are not in this plan (an earlier sweep's, with
    #: other settings): :func:`load` leaves them out.
    other_runs: int = 0
    #: Runs of this plan that found a checkpoint in the directory when the sweep started: each
    #: goes on from it, or starts again if another build wrote it (its log.txt says which).
    resumed: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted


#: Most values one sweep axis may expand to.
MAX_AXIS_POINTS = 100_000


def _axis_values(name: str, raw: Any) -> list[Any]:
    if isinstance(raw, list):
        values = raw
    elif isinstance(raw, dict) and "range" in raw:
        extra = set(raw) - {"range", "step"}
        if extra:
            raise SpecError(
                f"sweep axis `{name}`: unknown range option(s) {sorted(extra)}; use range and step", f"sweep.{name}"
            )
        r = raw["range"]
        if not (isinstance(r, list) and len(r) == 2 and all(isinstance(x, (int, float)) for x in r)):
            raise SpecError(f"sweep axis `{name}`: range must be [start, stop], got {r!r}", f"sweep.{name}")
        start, stop = r
        if not all(math.isfinite(x) for x in r):
            raise SpecError(f"sweep axis `{name}`: range must be finite, got {r!r}", f"sweep.{name}")
        if "step" not in raw and not all(isinstance(x, int) for x in r):
            raise SpecError(
                f"sweep axis `{name}`: a range of non-integers needs a step, e.g. {{ range = {r!r}, step = 0.1 }}",
                f"sweep.{name}",
            )
        step = raw.get("step", 1)
        if not isinstance(step, (int, float)) or not math.isfinite(step) or step <= 0:
            raise SpecError(f"sweep axis `{name}`: step must be a positive number, got {step!r}", f"sweep.{name}")
        n = int((stop - start) / step + 1e-9) + 1 if stop >= start else 0
        last = start + (n - 1) * step
        if n > 0 and abs(last - stop) > 1e-9 * max(1.0, abs(stop)):
            # A range includes both ends: one whose stop is not on a step silently drops it.
            raise SpecError(
                f"sweep axis `{name}`: range {r!r} with step {step!r} does not end on {stop!r} (its last value "
                f"would be {round(last, 12)!r}): make stop - start a multiple of step, or list the values",
                f"sweep.{name}",
            )
        if n > MAX_AXIS_POINTS:
            raise SpecError(
                f"sweep axis `{name}`: {n} values, more than the {MAX_AXIS_POINTS} a sweep axis may have",
                f"sweep.{name}",
            )
        values = [start + i * step for i in range(n)]
        if all(isinstance(x, int) for x in (start, stop, step)):
            values = [int(v) for v in values]
        else:
            values = [round(v, 12) for v in values]
    else:
        raise SpecError(
            f"sweep axis `{name}` must be a list of values or {{ range = [start, stop] }}, got {raw!r}",
            f"sweep.{name}",
        )
    if not values:
        raise SpecError(f"sweep axis `{name}` is empty", f"sweep.{name}")
    return values


def _base_seed(tree: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> Any:
    """The spec's own seed (an override's, else the file's, else the default)."""
    if overrides and "seed" in overrides:
        return overrides["seed"]
    return tree.get("seed", resolve({}).tree["seed"])


def _replicate_seeds(n: Any, base: Any) -> list[int]:
    """The seeds of ``replicates = n`` from the spec's seed `base` (:func:`dcsim.replicates.seeds`)."""
    from .replicates import seeds

    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_AXIS_POINTS:
        raise SpecError(
            f"sweep.replicates = {n!r}: must be an integer from 1 to {MAX_AXIS_POINTS} (the number of seeds each "
            "point runs with)",
            "sweep.replicates",
        )
    if isinstance(base, bool) or not isinstance(base, int) or not 0 <= base <= MAX_SEED:
        raise SpecError(f"`seed` = {base!r}: must be an integer from 0 to {MAX_SEED}", "seed")
    if base + n - 1 > MAX_SEED:
        raise SpecError(
            f"sweep.replicates = {n} from seed {base}: the last seed, {base + n - 1}, is above the largest, "
            f"{MAX_SEED}; use a smaller `seed` or list the seeds (seed = [...])",
            "sweep.replicates",
        )
    return seeds(base, n)


def _check_seeds(values: list[Any]) -> None:
    """The ``seed`` axis: integers from 0 to 2^64 - 1, each once (two replicates of a point with
    the same seed would be the same run, counted twice)."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED:
            raise SpecError(
                f"sweep axis `seed`: {v!r} is not a seed; seeds are integers from 0 to {MAX_SEED}", "sweep.seed"
            )
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise SpecError(
            f"sweep axis `seed` = {values!r} lists {', '.join(map(str, repeated))} more than once; each replicate "
            "needs a seed of its own",
            "sweep.seed",
        )


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def is_sweep_spec(spec: SpecLike) -> bool:
    """Whether `spec` is a sweep spec (has a ``[sweep]`` or ``[scales]`` table)."""
    tree, _ = load_tree(spec)
    return any(table in tree for table in SWEEP_TABLES)


def plan(
    spec: SpecLike,
    overrides: Mapping[str, Any] | None = None,
    scale: str | None = None,
    *,
    strict: bool = False,
    warn: bool = True,
    seeds: Sequence[int] | None = None,
) -> Plan:
    """Expands a sweep spec into runs and validates every one before anything runs.

    ``seeds`` (``dcsim sweep --seeds``) replaces the sweep's seeds, given as ``replicates`` or
    a ``seed`` list, in the sweep or its scale: the plan runs each point with exactly these
    seeds, and a run it shares with the whole sweep has the same hash (it is the same run), so
    a sweep too long for one sitting can be run a seed at a time into one directory.

    A field the spec sets (or an axis) that has no effect on any of the runs gives one
    :class:`~dcsim.spec.UnusedFieldWarning` for the whole sweep (none with ``warn=False``), or
    with ``strict=True`` a :class:`SpecError`. A field some runs do not read but others do (a
    ``[pfabric]`` section in a sweep over protocols) is not reported: the sweep uses it.
    """
    tree, base = load_tree(spec)
    sweep = tree.pop("sweep", {}) or {}
    scales = tree.pop("scales", {}) or {}
    if not isinstance(sweep, dict):
        raise SpecError("`sweep` must be a table of axes", "sweep")
    if not isinstance(scales, dict) or not all(isinstance(v, dict) for v in scales.values()):
        raise SpecError("`scales` must hold one table per scale, e.g. [scales.quick] with dotted overrides", "scales")
    if REPLICATES in sweep and "seed" in sweep:
        raise SpecError(
            f"sweep: both `seed` = {sweep['seed']!r} and `replicates` = {sweep[REPLICATES]!r} are given; give the "
            "seeds (seed = [1, 2, 3]) or their number (replicates = 3), not both",
            "sweep.replicates",
        )
    if scale is not None:
        if scale not in scales:
            raise SpecError(f"unknown scale `{scale}`; this spec has {sorted(scales) or 'none'}", "scales")
        for key, value in scales[scale].items():
            if key == REPLICATES or (key == "seed" and isinstance(value, (list, dict))):
                # A scale's replicates (or seed list) replaces the sweep's seeds, given either way.
                sweep.pop("seed", None)
                sweep.pop(REPLICATES, None)
                sweep[key] = value
            elif key in sweep:
                sweep[key] = value
            else:
                set_path(tree, key, value)
    if seeds is not None:
        if overrides and "seed" in overrides:
            raise SpecError("give the seeds to run (--seeds) or one seed (--seed, --set seed=...), not both", "--seeds")
        if not seeds:
            raise SpecError("--seeds: give at least one seed", "--seeds")
        sweep.pop(REPLICATES, None)
        sweep["seed"] = list(seeds)
    zips = sweep.get("zip", [])
    flt = sweep.get("filter")
    axes = {k: _axis_values(k, v) for k, v in sweep.items() if k not in _RESERVED}
    for key in overrides or {}:
        axes.pop(key, None)  # an explicit override pins that axis
    if REPLICATES in sweep:
        # After the pinning: an overridden seed (--seed, --set seed=...) is the first replicate's.
        axes["seed"] = _replicate_seeds(sweep[REPLICATES], _base_seed(tree, overrides))
    elif "seed" in axes:
        _check_seeds(axes["seed"])
    # Check every axis names a real spec field before expanding (nicer than N errors).
    default_paths = set(_leaves(resolve({}).tree))
    for name in axes:
        if name not in default_paths:
            suggestion = _suggest(name, default_paths)
            hint = f"; did you mean `{suggestion}`?" if suggestion else ""
            raise SpecError(f"sweep axis `{name}` is not a spec field{hint}", f"sweep.{name}")
    groups: list[list[str]] = []
    zipped = set()
    if not isinstance(zips, list) or not all(isinstance(g, list) for g in zips):
        raise SpecError("`sweep.zip` must be a list of lists of axis names", "sweep.zip")
    for g in zips:
        for name in g:
            if name not in axes:
                raise SpecError(f"`sweep.zip` names `{name}`, which is not an axis", "sweep.zip")
        lengths = {name: len(axes[name]) for name in g}
        if len(set(lengths.values())) > 1:
            raise SpecError(f"`sweep.zip` axes have different lengths: {lengths}", "sweep.zip")
        groups.append(list(g))
        zipped.update(g)
    for name in axes:
        if name not in zipped:
            groups.append([name])
    runs: list[PlannedRun] = []
    seen = set()
    choices = [list(zip(*[axes[n] for n in g])) for g in groups]
    for combo in itertools.product(*choices):
        params: dict[str, Any] = {}
        for g, values in zip(groups, combo):
            params.update(dict(zip(g, values)))
        if flt is not None and not _keep(flt, params):
            continue
        run_tree = copy.deepcopy(tree)
        merged = dict(overrides or {})
        merged.update(params)
        try:
            resolved = resolve(run_tree, merged, warn=False)
        except SpecError as e:
            raise SpecError(f"run {params}: {e}", e.field) from None
        h = resolved.hash()
        if h in seen:
            continue
        seen.add(h)
        runs.append(PlannedRun(h, params, resolved))
    if not runs:
        raise SpecError("the sweep expands to no runs (check `sweep.filter`)", "sweep.filter")
    unused, messages = _unused_in_every_run(runs, axes)
    report_unused(unused, messages, strict=strict, warn=warn)
    return Plan(axes, runs, base)


def _unused_in_every_run(runs: list[PlannedRun], axes: Mapping[str, Any]) -> tuple[list[UnusedField], list[str]]:
    """The fields no run of the sweep reads, in the first run's order, each with a message
    for the whole sweep."""
    by_run = [{u.field: u for u in r.spec.unused} for r in runs]
    unused, messages = [], []
    for u in runs[0].spec.unused:
        if not all(u.field in fields for fields in by_run):
            continue
        reasons = {fields[u.field].reason for fields in by_run}
        what = f"sweep axis `{u.field}`" if u.field in axes else f"`{u.field}` = {u.value}"
        why = u.reason if len(reasons) == 1 else f"in its first run, {u.reason}"
        unused.append(u)
        messages.append(f"{what} is set but has no effect on any of the sweep's {len(runs)} runs: {why}")
    return unused, messages


def _leaves(tree: Mapping[str, Any], prefix: str = ""):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}"


def _suggest(word: str, candidates: Collection[str]) -> str | None:
    import difflib

    m = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return m[0] if m else None


def _keep(expr: str, params: Mapping[str, Any], field: str = "sweep.filter") -> bool:
    """Whether run `params` passes filter `expr` (``sweep.filter``, or the `field` that gave it):
    an expression in the axes' last name parts (``load``, ``protocol``) or ``p["a.b"]``."""
    names = {_short(k): v for k, v in params.items()}
    names["p"] = dict(params)
    try:
        return bool(eval(expr, {"__builtins__": {}}, names))  # noqa: S307 (user's own spec)
    except Exception as e:
        raise SpecError(f"`{field}` {expr!r} failed on {dict(params)}: {e}", field) from None


def keep_runs(p: Plan, expr: str, field: str) -> Plan:
    """Plan `p` with only the runs filter `expr` keeps (the same expressions as
    ``sweep.filter``; `field` names where it was given, for errors)."""
    runs = [r for r in p.runs if _keep(expr, r.params, field)]
    if not runs:
        raise SpecError(f"`{field}` {expr!r} keeps none of the sweep's {len(p.runs)} runs", field)
    return Plan(p.axes, runs, p.base_dir)


# ---------------------------------------------------------------------------------------
# Executing runs
# ---------------------------------------------------------------------------------------


def run_dir(out: Path, h: str) -> Path:
    return out / "runs" / h


def is_complete(out: Path, h: str) -> bool:
    return (run_dir(out, h) / "summary.json").exists()


def _publish(staging: Path, final: Path) -> bool:
    """Moves a finished staging directory into place. False if another process got there
    first (the run is then complete already and the staging copy is discarded)."""
    try:
        os.rename(staging, final)
        return True
    except OSError:
        if (final / "summary.json").exists():
            shutil.rmtree(staging, ignore_errors=True)
            return False
        raise


def execute_to_bytes(
    spec_json: str,
    progress: Callable[[dict[str, float]], Any] | None = None,
    threads: int = 1,
    checkpoint: Path | None = None,
    checkpoint_every_s: float = 0.0,
) -> tuple[str, dict[str, bytes], str, str]:
    """Runs a resolved spec on ``threads`` threads and returns (summary_json, {parquet file
    name: bytes}, spec_toml, log): everything a run directory holds (``flows.parquet`` and the
    recordings), for executors whose workers cannot write the driver's disk (Ray). With
    ``checkpoint`` the run saves its state there every ``checkpoint_every_s`` and resumes from
    it (``_dcsim.run_spec``)."""
    import io

    import pyarrow.parquet as pq

    from .result import (
        SUMMARY_METADATA_KEY,
        columns_to_arrow,
        format_summary,
        recordings_to_arrow,
        run_metadata,
        with_metadata,
    )

    t0 = time.monotonic()
    resumed = checkpoint is not None and checkpoint.exists()
    summary_json, raw, recorded = _dcsim.run_spec(
        spec_json, progress, threads, None if checkpoint is None else os.fspath(checkpoint), checkpoint_every_s
    )
    toml_text, resolved_json = _dcsim.resolve_spec(spec_json)
    metadata = run_metadata(json.loads(resolved_json))
    tables = {"flows": columns_to_arrow(raw), **recordings_to_arrow(recorded)}
    parquet: dict[str, bytes] = {}
    for name, table in tables.items():
        buf = io.BytesIO()
        pq.write_table(with_metadata(table, metadata), buf, compression="zstd")
        parquet[f"{name}.parquet"] = buf.getvalue()
    summary = json.loads(summary_json)
    # The summary's wall_seconds counts every sitting of a resumed run; this line, this one.
    sitting = " (this sitting; resumed from a checkpoint)" if resumed else ""
    log = (
        f"dcsim {_dcsim.__version__} worker pid {os.getpid()}\nwall {time.monotonic() - t0:.3f} s{sitting}\n\n"
        + format_summary(summary)
    )
    summary_json = json.dumps({**summary, SUMMARY_METADATA_KEY: metadata})
    return summary_json, parquet, toml_text, log + "\n"


def write_run(
    out: Path,
    h: str,
    params: Mapping[str, Any],
    summary_json: str,
    parquet: Mapping[str, bytes],
    spec_toml: str,
    log: str,
) -> bool:
    """Writes one run directory atomically (staging + rename); `parquet` maps each Parquet
    file's name (``flows.parquet`` and the recordings') to its bytes."""
    from .result import atomic_write_bytes

    staging = out / "runs" / ".staging" / f"{h}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    for name, data in parquet.items():
        atomic_write_bytes(staging / name, data)
    atomic_write_bytes(staging / "spec.toml", spec_toml.encode())
    atomic_write_bytes(staging / "log.txt", log.encode())
    atomic_write_bytes(staging / "params.json", (json.dumps(params, sort_keys=True) + "\n").encode())
    summary = json.loads(summary_json)
    atomic_write_bytes(staging / "summary.json", (json.dumps(summary, indent=2, sort_keys=True) + "\n").encode())
    return _publish(staging, run_dir(out, h))


def _worker_init(driver_pid: int) -> None:
    """Pool-worker set-up. Only the driver handles Ctrl-C (it terminates the workers), so a
    worker must not turn it into a per-run failure. And a worker must not outlive its driver:
    if the driver is killed (SIGKILL, machine trouble), an orphaned worker would block forever
    waiting for work; on Linux the kernel kills it instead (PR_SET_PDEATHSIG)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != driver_pid:  # the driver died before prctl took effect
        os._exit(1)


_MARKER_SUFFIX = ".started"

#: Default seconds of wall time between two checkpoints of a sweep's run: a run shorter than
#: this never writes one; a longer one killed (a machine's sitting ending) loses at most this.
CHECKPOINT_EVERY_S = 600.0

#: What a checkpoint written by another build says (the run then starts again).
_OTHER_BUILD = "written by another dcsim build"


def checkpoint_path(out: Path, h: str) -> Path:
    """Where run `h` of the sweep in `out` keeps its checkpoint while it runs (kept across
    sweeps, unlike the staging directory, and deleted once the run is complete)."""
    return out / "runs" / ".checkpoints" / f"{h}.ckpt"


def _can_checkpoint(spec_json: str) -> bool:
    """A partitioned run (``engine.partitioned``) cannot checkpoint (one event queue per
    partition)."""
    return not json.loads(spec_json).get("engine", {}).get("partitioned", False)


def _started_marker(out: Path, h: str) -> Path:
    """Exists while run `h` is being worked on by a pool worker, and holds the run's latest
    progress report (JSON; empty before the first)."""
    return out / "runs" / ".staging" / f"{h}{_MARKER_SUFFIX}"


#: Seconds between two progress reports a worker writes for the driver's display.
REPORT_EVERY_S = 1.0


class _ProgressFile:
    """A worker's progress callback: writes the latest report into the run's started marker
    (a temporary file renamed over it, so the driver never reads half a report), at most once
    every :data:`REPORT_EVERY_S`. A file, not a queue: a worker killed mid-write corrupts
    nothing another process reads."""

    def __init__(self, marker: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.marker = marker
        self.clock = clock
        self.last = -math.inf

    def __call__(self, report: dict[str, float]) -> bool:
        now = self.clock()
        if now - self.last < REPORT_EVERY_S:
            return True
        self.last = now
        tmp = self.marker.with_name(self.marker.name + ".tmp")
        try:
            tmp.write_text(json.dumps(report))
            os.replace(tmp, self.marker)
        except OSError:
            pass  # the display misses a report; the run itself must not fail for it
        return True


def _local_task(
    out: str, h: str, params: dict[str, Any], spec_json: str, threads: int = 1, checkpoint_every_s: float = 0.0
) -> tuple[str, str | None, float]:
    """Worker-process body: run (on ``threads`` threads; saving a checkpoint every
    ``checkpoint_every_s``, 0 for none, and resuming from one), write, publish. Returns (hash,
    error text or None, wall seconds)."""
    t0 = time.monotonic()
    try:
        marker = _started_marker(Path(out), h)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        if os.environ.get("DCSIM_SWEEP_PIDFILE_DIR"):  # test hook: lets a test find and kill this worker
            Path(os.environ["DCSIM_SWEEP_PIDFILE_DIR"], f"{h}.pid").write_text(str(os.getpid()))
        ckpt = checkpoint_path(Path(out), h) if checkpoint_every_s > 0 and _can_checkpoint(spec_json) else None
        if ckpt is not None:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
        note = ""
        try:
            summary_json, parquet, spec_toml, log = execute_to_bytes(
                spec_json, _ProgressFile(marker), threads, ckpt, checkpoint_every_s
            )
        except _dcsim.CheckpointError as e:
            # Another build's state is never resumed (two models' results mixed): start again.
            if ckpt is None or _OTHER_BUILD not in str(e):
                raise
            ckpt.unlink(missing_ok=True)
            note = f"started again: {e}\n"
            summary_json, parquet, spec_toml, log = execute_to_bytes(
                spec_json, _ProgressFile(marker), threads, ckpt, checkpoint_every_s
            )
        write_run(Path(out), h, params, summary_json, parquet, spec_toml, note + log)
        if ckpt is not None:
            ckpt.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)
        return h, None, time.monotonic() - t0
    except BaseException:  # noqa: BLE001 — isolate every failure to its run
        return h, traceback.format_exc(), time.monotonic() - t0


def _run_label(r: PlannedRun) -> str:
    return " ".join([r.hash[:8]] + [f"{_short(k)}={v}" for k, v in r.params.items()])


def _read_progress(out: Path, bar: SweepProgress, runs: Mapping[str, PlannedRun]) -> None:
    """Feeds the display what the local workers report: a run is running while its started
    marker exists, and the marker holds its latest progress report."""
    try:
        entries = list(os.scandir(out / "runs" / ".staging"))
    except FileNotFoundError:
        return
    for entry in entries:
        h = entry.name[: -len(_MARKER_SUFFIX)]
        if not entry.name.endswith(_MARKER_SUFFIX) or h not in runs:
            continue
        bar.run_started(h, _run_label(runs[h]), RunEnd.of(runs[h].spec))
        try:
            text = Path(entry.path).read_text()
            if text:
                bar.run_report(h, json.loads(text))
        except (OSError, ValueError):
            pass  # gone (the run just ended) or not yet written


def _write_manifest(out: Path, p: Plan) -> None:
    from .result import atomic_write_bytes

    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "dcsim_version": _dcsim.__version__,
        "axes": p.axes,
        "seeds": p.seeds,
        "runs": [{"hash": r.hash, "params": r.params} for r in p.runs],
    }
    atomic_write_bytes(out / "sweep.json", (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())


def _record_failure(out: Path, r: PlannedRun, error: str) -> None:
    from .result import atomic_write_bytes

    d = out / "failed"
    d.mkdir(parents=True, exist_ok=True)
    text = f"run {r.hash}\nparams {json.dumps(r.params, sort_keys=True)}\n\n{error}\n"
    atomic_write_bytes(d / f"{r.hash}.txt", text.encode())


def run_sweep(
    p: Plan,
    out: os.PathLike,
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    use_ray: bool = False,
    fail_fast: bool = False,
    progress: bool | None = None,
    max_attempts: int = 3,
    on_event: Callable[[str, str], None] | None = None,
    checkpoint_every_s: float = CHECKPOINT_EVERY_S,
) -> Report:
    """Runs every run of `p` not already complete in `out`.

    One sweep at a time owns `out`: a second sweep on the same directory is refused while the
    first runs (its in-flight runs and manifest are never touched).

    A local run saves its whole state every `checkpoint_every_s` seconds of wall time (0: never)
    in ``out/runs/.checkpoints/``, and a later sweep of the same directory resumes it from
    there with results identical to an uninterrupted run's; a checkpoint written by another
    build is discarded and its run started again (`docs/experiments.md`). Runs on Ray, and
    partitioned runs, do not checkpoint."""
    every_ok = isinstance(checkpoint_every_s, (int, float)) and math.isfinite(checkpoint_every_s)
    if not every_ok or checkpoint_every_s < 0:
        raise ValueError(f"checkpoint_every_s = {checkpoint_every_s!r}: give seconds >= 0 (0: no checkpoints)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with _DirectoryLock(out):
        return _run_locked(
            p, out, jobs, ray_address, use_ray, fail_fast, progress, max_attempts, on_event, float(checkpoint_every_s)
        )


def record_plan(p: Plan, out: os.PathLike) -> list[PlannedRun]:
    """Makes `p` the current plan of `out` (its ``sweep.json``) without running anything, so
    that :func:`load` takes the runs of `p` already complete there; returns the runs of `p`
    not complete (failed or never run). Refused, like a second sweep, while a sweep runs in
    `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with _DirectoryLock(out):
        _write_manifest(out, p)
    done = {d.name for d in complete_runs(out)}
    return [r for r in p.runs if r.hash not in done]


class _DirectoryLock:
    """An exclusive lock on a sweep directory (``.lock``, released when the process ends)."""

    def __init__(self, out: Path) -> None:
        self.path = out / ".lock"
        self.fd: int | None = None

    def __enter__(self) -> _DirectoryLock:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise SpecError(
                f"another sweep (pid {holder}) is running in {self.path.parent}; wait for it or use another --out",
                "--out",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock


def _run_locked(
    p, out, jobs, ray_address, use_ray, fail_fast, progress, max_attempts, on_event, checkpoint_every_s
) -> Report:
    _write_manifest(out, p)
    staging = out / "runs" / ".staging"
    if staging.exists():
        shutil.rmtree(staging, ignore_errors=True)  # leftovers of a killed sweep (we hold the lock)
    shutil.rmtree(out / "failed", ignore_errors=True)
    todo = [r for r in p.runs if not is_complete(out, r.hash)]
    _drop_finished_checkpoints(out)
    planned = {r.hash for r in p.runs}
    report = Report(
        total=len(p.runs),
        skipped=len(p.runs) - len(todo),
        other_runs=sum(d.name not in planned for d in complete_runs(out)),
        resumed=0 if use_ray or checkpoint_every_s == 0 else sum(checkpoint_path(out, r.hash).exists() for r in todo),
    )
    jobs = jobs or os.cpu_count() or 1
    bar = SweepProgress(
        len(p.runs), min(jobs, max(len(todo), 1)), already_done=report.skipped, enabled=progress is not False
    )
    t0 = time.monotonic()
    try:
        if use_ray:
            _run_ray(todo, out, ray_address, report, bar, fail_fast, on_event)
        else:
            _run_local(todo, out, jobs, report, bar, fail_fast, max_attempts, on_event, checkpoint_every_s)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        bar.close()
        _drop_finished_checkpoints(out)
        report.wall_seconds = time.monotonic() - t0
    return report


def _drop_finished_checkpoints(out: Path) -> None:
    """Deletes the checkpoints of runs complete in `out` (left by a worker killed between
    publishing its run and deleting its checkpoint), and their directory once empty. Those of
    runs of other plans stay: a plan that returns to them resumes them."""
    d = out / "runs" / ".checkpoints"
    if not d.is_dir():
        return
    for f in d.iterdir():
        if f.suffix == ".partial" or (f.suffix == ".ckpt" and is_complete(out, f.stem)):
            f.unlink(missing_ok=True)
    try:
        d.rmdir()  # only if empty: a sweep whose runs are all complete leaves nothing
    except OSError:
        pass


def _run_local(todo, out, jobs, report, bar, fail_fast, max_attempts, on_event, checkpoint_every_s) -> None:
    pending = list(todo)
    # The cores are divided between runs and their threads: `jobs` runs at once, each on an
    # equal share of the cores (a single run gets them all). Threads never change results;
    # only partitioned runs (`engine.partitioned = true`) use more than one.
    threads = max(1, (os.cpu_count() or 1) // max(1, min(jobs, len(pending))))
    attempts: dict[str, int] = {}
    by_hash = {r.hash: r for r in todo}
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    while pending:
        pool = cf.ProcessPoolExecutor(
            max_workers=min(jobs, len(pending)), mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),)
        )
        futures: dict[cf.Future, PlannedRun] = {}
        broken = False
        try:
            for r in pending:
                futures[
                    pool.submit(_local_task, str(out), r.hash, r.params, r.spec.json, threads, checkpoint_every_s)
                ] = r
            pending = []
            bar.tick()
            not_done = set(futures)
            while not_done:
                done, not_done = cf.wait(not_done, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    r = futures[f]
                    try:
                        h, err, wall = f.result()
                    except cf.process.BrokenProcessPool:
                        broken = True
                        continue
                    bar.run_finished(h, err is None, wall)
                    if err is None:
                        report.completed.append(h)
                        if on_event:
                            on_event("done", h)
                    else:
                        report.failed[h] = err
                        _record_failure(out, r, err)
                        if on_event:
                            on_event("failed", h)
                        if fail_fast:
                            raise _FailFast()
                _read_progress(out, bar, by_hash)
                bar.tick()
                if broken:
                    break
        except _FailFast:
            _kill_pool(pool)
            return
        except KeyboardInterrupt:
            _kill_pool(pool)
            raise
        finally:
            if not broken:
                pool.shutdown(wait=True)
        if broken:
            # A worker died (killed, out of memory, crashed): every run of this pool that did
            # not publish is retried in a fresh pool, up to max_attempts times.
            _kill_pool(pool)
            # Only a run that had started counts an attempt (a death elsewhere in the pool does
            # not use up the runs still waiting); if none had, every run counts one, so a pool
            # that cannot start at all still ends.
            started = {r.hash for r in futures.values() if _started_marker(out, r.hash).exists()}
            for r in futures.values():
                if r.hash in started or not started:
                    attempts[r.hash] = attempts.get(r.hash, 0) + 1
                _started_marker(out, r.hash).unlink(missing_ok=True)
            for r in futures.values():
                if r.hash in report.completed or r.hash in report.failed or is_complete(out, r.hash):
                    if is_complete(out, r.hash) and r.hash not in report.completed:
                        report.completed.append(r.hash)
                        bar.run_finished(r.hash, True)
                    continue
                if attempts.get(r.hash, 0) >= max_attempts:
                    err = f"the worker process died {attempts[r.hash]} times running this run"
                    report.failed[r.hash] = err
                    _record_failure(out, r, err)
                    bar.run_finished(r.hash, False)
                else:
                    report.retried[r.hash] = attempts.get(r.hash, 0)
                    bar.run_requeued(r.hash)
                    pending.append(by_hash[r.hash])
            if on_event:
                on_event("pool-restarted", ",".join(x.hash for x in pending))


class _FailFast(Exception):
    pass


def _kill_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Stops a pool now: terminates its workers (a run they had not published is lost and
    will be rerun) and cancels what was queued."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.join(timeout=5)


def _run_ray(todo, out, address, report, bar, fail_fast, on_event) -> None:
    ray = require("ray", "--ray")
    if not ray.is_initialized():
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(max_retries=3, retry_exceptions=False)(_ray_task)
    refs = {remote.remote(r.spec.json, r.hash): r for r in todo}
    # Ray tasks report no progress of their own: the display counts them as running.
    cpus = int(ray.available_resources().get("CPU", 1)) or 1
    bar.jobs = cpus
    bar.unreported_running = min(len(refs), cpus)
    bar.tick()
    waiting = list(refs)
    while waiting:
        ready, waiting = ray.wait(waiting, num_returns=1, timeout=0.5)
        for ref in ready:
            r = refs[ref]
            try:
                summary_json, parquet, spec_toml, log = ray.get(ref)
                write_run(out, r.hash, r.params, summary_json, parquet, spec_toml, log)
                report.completed.append(r.hash)
                bar.run_finished(r.hash, True)
                if on_event:
                    on_event("done", r.hash)
            except Exception as e:  # noqa: BLE001 — isolate the failure to its run
                err = "".join(traceback.format_exception(type(e), e, e.__traceback__))
                report.failed[r.hash] = err
                _record_failure(out, r, err)
                bar.run_finished(r.hash, False)
                if fail_fast:
                    for other in waiting:
                        ray.cancel(other, force=True)
                    return
        bar.unreported_running = min(len(waiting), cpus)
        bar.tick()


def _ray_task(spec_json: str, h: str):
    if os.environ.get("DCSIM_SWEEP_PIDFILE_DIR"):  # test hook, as in _local_task
        Path(os.environ["DCSIM_SWEEP_PIDFILE_DIR"], f"{h}.pid").write_text(str(os.getpid()))
    return execute_to_bytes(spec_json)


# ---------------------------------------------------------------------------------------
# Loading results
# ---------------------------------------------------------------------------------------


def complete_runs(out: os.PathLike) -> list[Path]:
    runs = Path(out) / "runs"
    if not runs.is_dir():
        return []
    return sorted(d for d in runs.iterdir() if not d.name.startswith(".") and (d / "summary.json").exists())


class StaleRunsWarning(UserWarning):
    """:func:`load` left out complete runs that are not in the sweep's current plan."""


@dataclass
class _Selection:
    """The run directories :func:`load` reads, with the parameters to show for each."""

    dirs: list[Path]
    params: dict[str, dict[str, Any]]
    stale: int = 0
    missing: int = 0


def _select(out: Path, all_runs: bool) -> _Selection:
    """The runs of the sweep's current plan (``sweep.json``), or every complete run with
    ``all_runs`` or without a plan (a directory of runs not made by ``dcsim sweep``)."""
    dirs = complete_runs(out)
    manifest = out / "sweep.json"
    if all_runs or not manifest.exists():
        return _Selection(dirs, {})
    try:
        planned = {r["hash"]: r["params"] for r in json.loads(manifest.read_text())["runs"]}
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(
            f"{manifest} is not a sweep plan ({e}); dcsim.load({str(out)!r}, all_runs=True) loads every run"
        ) from None
    current = [d for d in dirs if d.name in planned]
    stale = len(dirs) - len(current)
    if stale:
        warnings.warn(
            f"{out}: {stale} complete run(s) not in the sweep's current plan (sweep.json, {len(planned)} runs) "
            f"left out; dcsim.load({str(out)!r}, all_runs=True) loads them too",
            StaleRunsWarning,
            stacklevel=3,
        )
    return _Selection(current, {d.name: planned[d.name] for d in current}, stale, len(planned) - len(current))


def load(out: os.PathLike, flows: bool = False, *, all_runs: bool = False, aggregate: bool = False):
    """Results of a sweep (or of any directory of runs).

    Only the runs of the sweep's current plan: the runs of the last ``dcsim sweep`` into
    `out` (its ``sweep.json``). Runs left in ``runs/`` by an earlier sweep with other
    settings are left out with a :class:`StaleRunsWarning` saying how many, and the
    DataFrame's ``attrs["stale_runs_skipped"]`` counts them (``attrs["planned_runs_missing"]``
    counts the planned runs not complete: failed or not run yet). ``all_runs=True`` loads
    every complete run instead, as does a directory without ``sweep.json``.

    ``flows=False``: a pandas DataFrame with one row per complete run: ``run`` (the hash), the
    swept parameters (their dotted names, as the plan gives them), and every summary field
    (nested ones flattened, e.g. ``bins.0-100KB.p99_slowdown``).

    ``flows=True``: a ``pyarrow.dataset.Dataset`` over those runs' ``flows.parquet`` with an
    extra ``run`` column; nothing is read until you ask, e.g.
    ``load(out, flows=True).to_table(columns=["run", "slowdown"], filter=...)``. Join with
    ``load(out)`` on ``run`` for the parameters.

    ``aggregate=True``: one row per point (the swept parameters other than ``seed``) with
    ``n_seeds`` and, for every numeric summary field ``m``, ``m_mean``, ``m_std``, ``m_n`` and
    ``m_ci95``: the mean over the point's seeds, their standard deviation, how many define it,
    and the half-width of the 95 % Student-t interval, ``t(0.975, n - 1) * std / sqrt(n)`` —
    NaN, not 0, for a point run with one seed (docs/experiments.md, "Replicates: seeds and
    confidence intervals"). ``attrs["single_seed_points"]`` counts the points without an
    interval.
    """
    import pandas as pd

    from .result import SUMMARY_METADATA_KEY

    if flows and aggregate:
        raise ValueError("dcsim.load: aggregate=True averages the runs' summaries; it does not apply to flows=True")
    chosen = _select(Path(out), all_runs)
    dirs = chosen.dirs
    if flows:
        import pyarrow as pa
        import pyarrow.dataset as ds

        if not dirs:
            stale = f" ({chosen.stale} of earlier plans: all_runs=True loads them)" if chosen.stale else ""
            raise FileNotFoundError(f"no complete runs under {out}{stale}")
        return ds.dataset(
            [str(d / "flows.parquet") for d in dirs],
            format="parquet",
            partitioning=ds.DirectoryPartitioning(pa.schema([("run", pa.string())])),
            partition_base_dir=str(Path(out) / "runs"),
        )
    rows = []
    swept: dict[str, None] = {}  # the parameters' names, in order
    for d in dirs:
        row: dict[str, Any] = {"run": d.name}
        params_path = d / "params.json"
        params: dict[str, Any] = {}
        if d.name in chosen.params:
            # The plan's own axes: a run shared with another sweep keeps, in params.json, the
            # axes of the sweep that ran it first.
            params = chosen.params[d.name]
        elif params_path.exists():
            params = json.loads(params_path.read_text())
        row.update(params)
        swept.update(dict.fromkeys(params))
        summary = json.loads((d / "summary.json").read_text())
        summary.pop(SUMMARY_METADATA_KEY, None)  # what produced the run: dcsim.read_metadata(run dir)
        row.update(flatten(summary))
        rows.append(row)
    frame = pd.DataFrame(rows)
    if aggregate:
        from .replicates import aggregate as by_point

        points = [k for k in swept if k != "seed"]
        if frame.empty:
            frame = pd.DataFrame(columns=["run", *points])
        summary_fields = [
            c
            for c in frame.columns
            if c not in swept
            and c != "run"
            and pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])
        ]
        frame = by_point(frame, points, summary_fields)
        try:
            frame = frame.sort_values(points, kind="stable", ignore_index=True) if points else frame
        except TypeError:
            pass  # an axis of values that do not compare (lists, mixed types): in the runs' order
        frame.attrs["single_seed_points"] = int((frame["n_seeds"] < 2).sum()) if len(frame) else 0
    frame.attrs["stale_runs_skipped"] = chosen.stale
    frame.attrs["planned_runs_missing"] = chosen.missing
    return frame
