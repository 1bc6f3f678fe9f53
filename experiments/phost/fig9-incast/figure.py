"""pHost CoNEXT'15 Fig. 9(c-d): incast, 100 MB per request from N senders."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 9(c-d): incast, 100 MB per request from N senders"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["senders"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6, workload__flow_sizes="incast-100MB")
    d["mean_fct_ms"] = d.mean_fct_us / 1e3
    d["mean_rct_ms"] = d.mean_rct_us / 1e3
    return (
        d[["protocol", "senders", "flows", "mean_fct_ms", "mean_rct_ms"]]
        .sort_values(["protocol", "senders"])
        .reset_index(drop=True)
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, TITLE, width_per_panel=4.4, height=3.0)
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p]
        dplot.line(axes[0], s.senders, s, "mean_fct_ms", p)
        dplot.line(axes[1], s.senders, s, "mean_rct_ms", p)
    axes[0].set_ylabel("(c) mean FCT, ms")
    axes[1].set_ylabel("(d) mean request completion time, ms")
    for ax in axes:
        ax.set_xlabel("senders per request (N)")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def _spread(d: pd.DataFrame, col: str):
    worst = 0.0
    for _, g in d.groupby("senders"):
        worst = max(worst, float(g[col].max() / g[col].min()))
    return worst


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours = {
        "mean FCT: largest max/min over the protocols at any N": _spread(d, "mean_fct_ms"),
        "mean RCT: largest max/min over the protocols at any N": _spread(d, "mean_rct_ms"),
    }
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p].mean_rct_ms
        ours[f"{p}: mean RCT, max/min over N = 5-50"] = float(s.max() / s.min()) if len(s) else float("nan")
    return ours
