"""pFabric HotNets'12 Fig. 2: overall average normalized FCT vs load."""

import math
from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pfabric_hotnets as hn

TITLE = "pFabric HotNets'12 Fig. 2: overall average normalized FCT (54-host fat-tree)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = hn.KEYS
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = hn.data(runs)
    return d[d.bin == "all"].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, TITLE, width_per_panel=4.2, height=3.0)
    for ax, (w, label) in zip(axes, hn.WORKLOADS.items()):
        for s in hn.SCHEMES:
            ser = hn.series(d, w, "all", s)
            dplot.line(ax, ser.load, ser, "mean_nfct", s)
        ax.set_title(f"({'ab'[list(hn.WORKLOADS).index(w)]}) {label} workload")
        ax.set_xlabel("load")
        ax.set_ylabel("normalized FCT (average)")
        ax.set_yscale("log")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for w, label in hn.WORKLOADS.items():
        for base in ("TCP", "DCTCP"):
            for pf in ("MinTCP+pFabric", "LineRate+pFabric"):
                ours[f"{label}: average FCT, {base} / {pf}, load 0.8"] = hn.value(d, w, "all", base, 0.8) / hn.value(
                    d, w, "all", pf, 0.8
                )
        for pf in ("MinTCP+pFabric", "LineRate+pFabric"):
            gap = hn.value(d, w, "all", pf, 0.8) / hn.value(d, w, "all", "Ideal", 0.8) - 1
            # NaN (a partial figure without this workload's runs) stays a number: no value.
            ours[f"{label}: {pf} above Ideal at load 0.8 (overall average)"] = (
                f"{gap * 100:+.0f} %" if not math.isnan(gap) else float("nan")
            )
    return ours
