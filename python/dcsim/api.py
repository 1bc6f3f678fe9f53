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
from .result import Result, check_out, columns_to_arrow, format_summary, recordings_to_arrow
from .spec import SpecLike, _raise_invalid, resolve


def run(
    spec: SpecLike,
    *,
    out: str | os.PathLike | None = None,
    progress: Callable[[dict[str, float]], Any] | None = None,
    overrides: dict[str, Any] | None = None,
    force: bool = False,
    **kw_overrides: Any,
) -> Result:
    """Runs one simulation and returns its :class:`Result`.

    ``spec`` is a TOML file path, TOML text or a dict. Overrides name dotted spec paths,
    either in ``overrides={"workload.load": 0.7}`` or as keywords with ``__`` for the dot
    (``workload__load=0.7``, ``seed=3``). With ``out``, the run directory is written there;
    a directory that already holds a complete run is replaced only with ``force=True``, and a
    directory that cannot be written raises :class:`dcsim.SpecError` before anything runs.
    """
    merged: dict[str, Any] = dict(overrides or {})
    merged.update(kw_overrides)
    resolved = resolve(spec, merged)
    if out is not None:
        check_out(out, force)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    try:
        summary_json, raw, recorded = _dcsim.run_spec(resolved.json, progress)
    except _dcsim.InvalidSpec as e:
        _raise_invalid(e)
        raise  # unreachable
    wall = time.monotonic() - t0
    summary = json.loads(summary_json)
    result = Result(summary, columns_to_arrow(raw), resolved.toml, recordings=recordings_to_arrow(recorded))
    if out is not None:
        log = "\n".join(
            [
                f"dcsim {_dcsim.__version__} ({_dcsim.build_profile}) "
                f"on Python {platform.python_version()}, {platform.machine()}",
                f"started   {started.isoformat(timespec='seconds')}",
                f"spec hash {resolved.hash()}",
                f"wall      {wall:.3f} s",
                "",
                format_summary(summary),
                "",
            ]
        )
        result.write(Path(out), log, force=force)
    return result
