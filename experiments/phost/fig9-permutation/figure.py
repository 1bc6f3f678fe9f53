"""pHost CoNEXT'15 Fig. 9(a-b): the permutation traffic matrix."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 9(a-b): permutation traffic matrix, load 0.6"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["short_percent"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6)
    d["short_percent"] = d.p_small * 100
    return d[["workload", "short_percent", "protocol", "flows", "mean_slowdown", "p99_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, TITLE, width_per_panel=4.6, height=3.0)
    ph.bars(axes[0], d[d.workload != "bimodal"], "mean_slowdown", ph.WORKLOADS, ylabel="(a) mean slowdown")
    syn = d[d.workload == "bimodal"].sort_values("short_percent")
    for p in ph.PROTOCOLS.values():
        s = syn[syn.protocol == p]
        dplot.line(axes[1], s.short_percent, s, "mean_slowdown", p)
    axes[1].set_xlabel("short flows, % (bimodal workload)")
    axes[1].set_ylabel("(b) mean slowdown")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    traces = d[d.workload != "bimodal"]
    ours = {
        **ph.ratios(traces, "mean_slowdown", "pHost", "pFabric", "pHost / pFabric"),
        **ph.ratios(traces, "mean_slowdown", "pHost", "Fastpass", "pHost / Fastpass"),
    }
    syn = d[d.workload == "bimodal"]
    for pct in (0.0, 50.0, 99.5):
        s = syn[(syn.short_percent - pct).abs() < 1e-6].set_index("protocol").mean_slowdown
        ours[f"bimodal {pct:g} % short: pHost / pFabric"] = (
            float(s["pHost"] / s["pFabric"]) if len(s) == 3 else float("nan")
        )
    return ours
