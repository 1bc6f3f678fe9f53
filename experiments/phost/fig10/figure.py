"""pHost CoNEXT'15 Fig. 10: mean slowdown vs per-port buffer size (data mining)."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import phost as ph
from dcsim import plot as dplot

TITLE = "pHost Fig. 10: mean slowdown vs per-port buffer (data mining, load 0.6)"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6, workload__flow_sizes="datamining")
    d["buffer_kb"] = d.buffer_bytes / 1024
    return d[["protocol", "buffer_bytes", "buffer_kb", "flows", "mean_slowdown", "drop_rate"]].sort_values(["protocol", "buffer_bytes"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(1, TITLE, width_per_panel=6.0, height=3.2)
    ax = axes[0]
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p]
        ax.plot(s.buffer_kb, s.mean_slowdown, **dplot.style(p))
    ax.set_xlabel("per-port buffer, KiB")
    ax.set_ylabel("mean slowdown")
    ax.set_xscale("log")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame):
    rows = []
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p].mean_slowdown
        rows.append({"metric": f"{p}: mean slowdown, max / min over buffers 6.2-72 KB", "published": (1.0, 1.01), "ours": float(s.max() / s.min()) if len(s) else float("nan"), "note": "§4.3: 'varying less than 1% over the range'"})
    return rows


NOTES = ph.SETUP_NOTE.split("- **Quick scale")[0] + """\
- **pFabric per buffer size.** The paper tried several initial windows and RTOs per buffer size
  and kept the best; we use the rule in the pHost authors' experiment scripts (reference §2.4):
  window 2 + ⌊2q/7621⌋, cap window + 3, RTO 2.28 µs + 1.16455 ns per buffer byte (3/6/9.5 µs at
  6.2 KB … 21/24/88 µs at 72 KB).
- **Quick scale:** 1,000 data-mining flows per point; differences of a few percent between
  buffer sizes are within the run-to-run noise at this scale.
"""
