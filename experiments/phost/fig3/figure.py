"""pHost CoNEXT'15 Fig. 3: mean slowdown of pFabric, pHost and Fastpass per workload (load 0.6)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 3: mean slowdown at load 0.6 (144-host leaf-spine)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load"]
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs)
    d = d[(~d.deadlines) & ((d.load - 0.6).abs() < 1e-9)]
    return d[["workload", "protocol", "load", "flows", "mean_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    ph.save_bars(d, [("mean_slowdown", "mean slowdown", False)], TITLE, path, width_per_panel=6.0)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return {
        **ph.ratios(d, "mean_slowdown", "pHost", "pFabric", "mean slowdown, pHost / pFabric"),
        **ph.ratios(d, "mean_slowdown", "Fastpass", "pHost", "mean slowdown, Fastpass / pHost"),
        **ph.ratios(
            d, "mean_slowdown", ph.PHOST_CODE, "pFabric", "mean slowdown, pHost (authors'-code preset) / pFabric"
        ),
    }
