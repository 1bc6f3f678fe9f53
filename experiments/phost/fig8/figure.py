"""pHost CoNEXT'15 Fig. 8: mean slowdown on the bimodal workload vs the fraction of short flows."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 8: bimodal workload (3 / 700 packets), load 0.6"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["short_percent"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6, workload__flow_sizes="bimodal")
    d["short_percent"] = d.p_small * 100
    return (
        d[["protocol", "short_percent", "flows", "mean_slowdown", "p99_slowdown"]]
        .sort_values(["protocol", "short_percent"])
        .reset_index(drop=True)
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(1, TITLE, width_per_panel=6.0, height=3.2)
    ax = axes[0]
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p]
        dplot.line(ax, s.short_percent, s, "mean_slowdown", p)
    ax.set_xlabel("short flows, %")
    ax.set_ylabel("mean slowdown")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def _v(d, p, pct):
    s = d[(d.protocol == p) & ((d.short_percent - pct).abs() < 1e-6)].mean_slowdown
    return float(s.iloc[0]) if len(s) else float("nan")


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours = {
        f"{pct:g} % short: pHost / pFabric": _v(d, "pHost", pct) / _v(d, "pFabric", pct)
        for pct in sorted(d.short_percent.unique())
    }
    for pct in (10, 50, 90, 99.5):
        ours[f"{pct:g} % short: Fastpass / pHost"] = _v(d, "Fastpass", pct) / _v(d, "pHost", pct)
    return ours
