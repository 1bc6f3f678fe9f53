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
from .result import SPEC_HASH_LINE, Result, check_out, columns_to_arrow, format_summary, holds_same_run, run_metadata
from .spec import ResolvedSpec, SpecLike, _raise_invalid, resolve


def run(
    spec: SpecLike | ResolvedSpec,
    *,
    out: str | os.PathLike | None = None,
    progress: Callable[[dict[str, float]], Any] | None = None,
    overrides: dict[str, Any] | None = None,
    force: bool = False,
    trace: Any = None,
    strict: bool = False,
    **kw_overrides: Any,
) -> Result:
    """Runs one simulation and returns its :class:`Result`.

    ``spec`` is a TOML file path, TOML text, a dict or a :class:`ResolvedSpec` (from
    :func:`dcsim.resolve`). Overrides name dotted spec paths, either in
    ``overrides={"workload.load": 0.7}`` or as keywords with ``__`` for the dot
    (``workload__load=0.7``, ``seed=3``). With ``out``, the run directory is written there.
    A directory that already holds a complete run of another spec (or of another dcsim
    version) is replaced only with ``force=True``; one that holds a run of this very spec is
    replaced, since running it again gives the same results. A directory that cannot be
    written raises :class:`dcsim.SpecError` before anything runs.

    ``progress``, if given, is called about five times a second with a dict of floats:
    ``sim_time_us``, ``flows_done``, ``flows_started``, ``flows_total``, ``packets_arrived``
    (data packets of the flows started), ``packets_injected`` (sent once; retransmissions left
    out), ``events`` and ``wall_seconds``; returning ``False`` stops the run with
    ``KeyboardInterrupt``. :class:`dcsim.progress.ProgressBar` is such a callback (a bar in a
    terminal, a line every 30 s in a log), and :class:`dcsim.progress.Estimator` turns the
    reports into a remaining time.

    ``trace`` sets ``workload.matrix`` to a trace: a pandas DataFrame, a pyarrow Table, or the
    path of a CSV or Parquet file, with the columns docs/spec.md ("Trace files") lists, e.g.
    ``dcsim.run(spec, trace=pd.DataFrame({"id": [0], "src": [0], "dst": [1],
    "size_bytes": [1000], "start_us": [0.0]}))``. Every row runs unless ``workload.flows`` is
    set.

    A field the spec sets that has no effect on the run gives a
    :class:`dcsim.UnusedFieldWarning`, or with ``strict=True`` a :class:`dcsim.SpecError`.
    """
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
        summary_json, raw = _dcsim.run_spec(resolved.json, progress)
    except _dcsim.InvalidSpec as e:
        _raise_invalid(e)
        raise  # unreachable
    wall = time.monotonic() - t0
    summary = json.loads(summary_json)
    result = Result(summary, columns_to_arrow(raw), resolved.toml, metadata=run_metadata(resolved.tree))
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
    return result
