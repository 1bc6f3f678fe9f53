"""pHost CoNEXT'15 Fig. 10: mean slowdown vs per-port buffer size (data mining)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 10: mean slowdown vs per-port buffer (data mining, load 0.6)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["buffer_bytes", "buffer_kb"]
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6, workload__flow_sizes="datamining")
    d["buffer_kb"] = d.buffer_bytes / 1024
    return (
        d[["protocol", "buffer_bytes", "buffer_kb", "flows", "mean_slowdown", "drop_rate"]]
        .sort_values(["protocol", "buffer_bytes"])
        .reset_index(drop=True)
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(1, TITLE, width_per_panel=6.0, height=3.2)
    ax = axes[0]
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p]
        dplot.line(ax, s.buffer_kb, s, "mean_slowdown", p)
    ax.set_xlabel("per-port buffer, KiB")
    ax.set_ylabel("mean slowdown")
    ax.set_xscale("log")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p].mean_slowdown
        ours[f"{p}: mean slowdown, max / min over buffers 6.2-72 KB"] = (
            float(s.max() / s.min()) if len(s) else float("nan")
        )
    return ours
