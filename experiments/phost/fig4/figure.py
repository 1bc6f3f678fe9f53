"""pHost CoNEXT'15 Fig. 4: mean slowdown of short and long flows (load 0.6)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 4: mean slowdown of short and long flows at load 0.6"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load"]
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True
SWEEP = "../fig3/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs)
    d = d[(~d.deadlines) & ((d.load - 0.6).abs() < 1e-9)]
    return d[["workload", "protocol", "load", "short_mean_slowdown", "long_mean_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    ph.save_bars(
        d,
        [
            ("short_mean_slowdown", "(a) short flows: mean slowdown", False),
            ("long_mean_slowdown", "(b) long flows: mean slowdown", False),
        ],
        TITLE,
        path,
        width_per_panel=4.6,
    )


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return {
        **ph.ratios(d, "short_mean_slowdown", "Fastpass", "pHost", "short flows, Fastpass / pHost"),
        **ph.ratios(d, "short_mean_slowdown", "pHost", "pFabric", "short flows, pHost / pFabric"),
        **ph.ratios(d, "long_mean_slowdown", "pHost", "pFabric", "long flows, pHost / pFabric"),
        **ph.ratios(d, "long_mean_slowdown", "Fastpass", "pFabric", "long flows, Fastpass / pFabric"),
    }
