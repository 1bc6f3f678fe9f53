"""The Python API: ``dcsim.run``."""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable

from . import _dcsim
from .result import (
    SPEC_HASH_LINE,
    Result,
    check_out,
    columns_to_arrow,
    format_summary,
    holds_same_run,
    recordings_to_arrow,
    run_metadata,
)
from .spec import ResolvedSpec, SpecLike, _raise_invalid, resolve

ProgressCallback = Callable[[dict[str, float]], Any]
"""What [`run`][dcsim.run] calls with the progress of a run, about five times a second of wall
time, from the thread that called `run`.

Its one argument is a dict of floats:

| key            | meaning                                              |
|----------------|------------------------------------------------------|
| `sim_time_us`  | simulated time reached, in microseconds              |
| `flows_done`   | flows completed so far                               |
| `flows_started` | flows arrived so far                                |
| `flows_total`  | flows the run will start                             |
| `packets_arrived` | data packets of the flows started so far          |
| `packets_injected` | data packets sent once (retransmissions left out) |
| `events`       | events processed so far                              |
| `wall_seconds` | wall-clock time since the run started, in seconds    |

Returning `False` stops the run, which then raises `KeyboardInterrupt`; any other return
value (`None` included) lets it go on. An exception raised by the callback stops the run and
propagates out of `run`. Ctrl-C is honoured at the same points.

```python
def report(p):
    print(f"{p['flows_done']:.0f}/{p['flows_total']:.0f} flows, {p['sim_time_us'] / 1e3:.1f} ms simulated")

dcsim.run("examples/quickstart.toml", progress=report)
```
"""


def run(
    spec: SpecLike | ResolvedSpec,
    *,
    out: str | os.PathLike | None = None,
    progress: ProgressCallback | None = None,
    overrides: dict[str, Any] | None = None,
    force: bool = False,
    trace: Any = None,
    strict: bool = False,
    threads: int = 1,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every_s: float = 600.0,
    **kw_overrides: Any,
) -> Result:
    """Runs one simulation and returns its [`Result`][dcsim.Result].

    The spec is resolved (every default filled in, every field checked) before anything runs,
    so a mistake in it costs nothing. Fields are documented in `docs/spec.md`. A field the spec
    sets that has no effect on the run gives a [`UnusedFieldWarning`][dcsim.UnusedFieldWarning]
    (an error with `strict=True`).

    Args:
        spec: A TOML file path, TOML text, a dict of the same shape, or a
            [`ResolvedSpec`][dcsim.ResolvedSpec] from [`resolve`][dcsim.resolve]. Relative
            file paths in a spec file (traces, CDFs, `base`) are relative to that file.
        out: The run directory to write (`flows.parquet`, `summary.json`, `spec.toml`,
            `log.txt`), or `None` to keep the result in memory only.
        progress: A [`ProgressCallback`][dcsim.ProgressCallback], called while the run goes on.
        overrides: Values to set, by dotted spec path: `{"workload.load": 0.7}`.
        force: Replace a complete run of another spec (or of another dcsim version) already in
            `out`; a run of this very spec is replaced without it, since running it again
            gives the same results.
        trace: A trace to run (sets `workload.matrix`): a pandas DataFrame, a pyarrow Table, or
            the path of a CSV or Parquet file, with the columns of `docs/spec.md` ("Trace
            files"). Every row runs unless `workload.flows` is set.
        strict: Make fields without effect an error instead of a warning.
        threads: Threads to run the partitions of a partitioned run on (`engine.partitioned
            = true`; default 1). Not part of the spec: the results are byte-identical for every
            thread count (`docs/parallel.md`). A run of the default, sequential model uses
            one thread whatever this says.
        checkpoint: A file to save the run's whole state in, every `checkpoint_every_s`
            seconds of wall time and when the run is interrupted. If it already holds a
            checkpoint of this spec written by this build, the run goes on from there instead
            of starting again; the results are byte-identical to an uninterrupted run's. It is
            deleted once the run completes. A partitioned run cannot checkpoint.
        checkpoint_every_s: Seconds of wall time between two checkpoints (default 600).
        **kw_overrides: More overrides as keywords, `__` standing for the dot:
            `workload__load=0.7`, `seed=3`. They win over `overrides`.

    Returns:
        The run's summary and per-flow table, with what produced them (`Result.metadata`).

    Raises:
        SpecError: The spec (or an override) is invalid; the message names the field, the
            value and what is allowed. Also when `out` cannot be written or already holds a
            complete run of another spec without `force` (checked before anything runs).
        KeyboardInterrupt: Ctrl-C, or the progress callback returned `False`.
        CheckpointError: `checkpoint` holds another spec's or another build's checkpoint, or
            cannot be written.

    Example:
        ```python
        r = dcsim.run("examples/quickstart.toml", workload__flows=2000, seed=2)
        r.summary["mean_slowdown"]
        r.flows.groupby(r.flows.size_bytes > 100_000).slowdown.mean()
        dcsim.run("examples/quickstart.toml", trace=pd.DataFrame({"id": [0], "src": [0],
                  "dst": [1], "size_bytes": [1000], "start_us": [0.0]}))
        ```
    """
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads = {threads!r}: give a whole number of threads >= 1")
    merged: dict[str, Any] = dict(overrides or {})
    merged.update(kw_overrides)
    if trace is not None:
        merged["workload.matrix"] = os.fspath(trace) if isinstance(trace, os.PathLike) else trace
    if isinstance(spec, ResolvedSpec) and not merged and not strict:
        resolved = spec
    else:
        resolved = resolve(spec.tree if isinstance(spec, ResolvedSpec) else spec, merged, strict=strict)
    if out is not None:
        force = force or holds_same_run(out, resolved)
        check_out(out, force, resolved)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    try:
        summary_json, raw, recorded = _dcsim.run_spec(
            resolved.json,
            progress,
            threads,
            None if checkpoint is None else os.fspath(checkpoint),
            checkpoint_every_s,
        )
    except _dcsim.InvalidSpec as e:
        _raise_invalid(e)
        raise  # unreachable
    wall = time.monotonic() - t0
    summary = json.loads(summary_json)
    result = Result(
        summary,
        columns_to_arrow(raw),
        resolved.toml,
        metadata=run_metadata(resolved.tree),
        recordings=recordings_to_arrow(recorded),
    )
    if out is not None:
        log = "\n".join(
            [
                f"dcsim {_dcsim.__version__} ({_dcsim.build_profile}) "
                f"on Python {platform.python_version()}, {platform.machine()}",
                f"started   {started.isoformat(timespec='seconds')}",
                f"{SPEC_HASH_LINE}{resolved.hash()}",
                f"wall      {wall:.3f} s",
                "",
                format_summary(summary),
                "",
            ]
        )
        result.write(Path(out), log, force=force)
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    return result
