"""pHost CoNEXT'15 Fig. 6: mean slowdown vs load 0.5-0.9 for each workload."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 6: mean slowdown vs load"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load"]
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True
SWEEP = "../fig3/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs)
    d = d[~d.deadlines]
    return d[["workload", "protocol", "load", "flows", "mean_slowdown", "p99_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=3.6, height=2.9)
    for ax, (w, label) in zip(axes, ph.WORKLOADS.items()):
        for p in ph.PROTOCOLS.values():
            s = d[(d.workload == w) & (d.protocol == p)]
            dplot.line(ax, s.load, s, "mean_slowdown", p)
        ax.set_title(label)
        ax.set_xlabel("load")
        ax.set_ylabel("mean slowdown")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def _span(d: pd.DataFrame, w: str, num: str, den: str):
    a = d[(d.workload == w) & (d.protocol == num)].set_index("load").mean_slowdown
    b = d[(d.workload == w) & (d.protocol == den)].set_index("load").mean_slowdown
    r = (a / b).dropna()
    return (float(r.min()), float(r.max())) if len(r) else (float("nan"), float("nan"))


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for w, label in ph.WORKLOADS.items():
        ours[f"{label}: pHost / pFabric mean slowdown, range over loads 0.5-0.9"] = _span(d, w, "pHost", "pFabric")
        ours[f"{label}: Fastpass / pHost mean slowdown, range over loads 0.5-0.9"] = _span(d, w, "Fastpass", "pHost")
    return ours
