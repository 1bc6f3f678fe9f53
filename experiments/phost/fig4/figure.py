"""pHost CoNEXT'15 Fig. 4: mean slowdown of short and long flows (load 0.6)."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 4: mean slowdown of short and long flows at load 0.6"
SWEEP = "../fig3/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs)
    d = d[(~d.deadlines) & ((d.load - 0.6).abs() < 1e-9)]
    return d[["workload", "protocol", "load", "short_mean_slowdown", "long_mean_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    ph.save_bars(
        d,
        [("short_mean_slowdown", "(a) short flows: mean slowdown", False), ("long_mean_slowdown", "(b) long flows: mean slowdown", False)],
        TITLE,
        path,
        width_per_panel=4.6,
    )


def compare(d: pd.DataFrame):
    rows = ph.ratio_rows(d, "short_mean_slowdown", "Fastpass", "pHost", (1.3, 4.0), "short flows, Fastpass / pHost", "Fig. 4: pHost '1.3-4x better than Fastpass' for short flows")
    rows += ph.ratio_rows(d, "short_mean_slowdown", "pHost", "pFabric", (0.96, 1.04), "short flows, pHost / pFabric", "Fig. 4: 'pHost performs similar to pFabric'")
    rows += ph.ratio_rows(d, "long_mean_slowdown", "pHost", "pFabric", (0.9, 1.1), "long flows, pHost / pFabric", "Fig. 4: 'all the three schemes have similar performance for long flows' (no number; ±10 % shown)")
    rows += ph.ratio_rows(d, "long_mean_slowdown", "Fastpass", "pFabric", (0.9, 1.1), "long flows, Fastpass / pFabric", "as above")
    return rows
