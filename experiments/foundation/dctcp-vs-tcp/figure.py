"""DCTCP vs TCP mean slowdown by size bin over load (the foundation's check)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "Foundation: DCTCP vs TCP mean slowdown by flow size (web search, 144 hosts)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load"]
#: Each row comes from one run (a run's rows are its size bins), so rows of runs done in an earlier sitting can stand
#: in for runs missing from the store (`dcsim reproduce --finished-only --reuse-runs`).
PER_RUN = True
BINS = [("all", "all flows"), ("0-100KB", "(0, 100KB]"), ("100KB-10MB", "(100KB, 10MB]"), ("10MB+", "(10MB, ∞)")]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in runs.iterrows():
        for key, _label in BINS:
            prefix = "" if key == "all" else f"bins.{key}."
            rows.append(
                {
                    "protocol": schemes.name(r["transport.protocol"]),
                    "load": r["workload.load"],
                    "bin": key,
                    "flows": r["flows_completed"] if key == "all" else r[f"{prefix}count"],
                    "mean_slowdown": r[f"{prefix}mean_slowdown"],
                    "p99_slowdown": r[f"{prefix}p99_slowdown"],
                    "mean_fct_us": r[f"{prefix}mean_fct_us"],
                }
            )
    return pd.DataFrame(rows).sort_values(["bin", "protocol", "load"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(4, TITLE, width_per_panel=3.3, height=2.6)
    for ax, (key, label) in zip(axes, BINS):
        for proto in schemes.names("tcp", "dctcp"):
            s = d[(d.bin == key) & (d.protocol == proto)]
            dplot.line(ax, s.load, s, "mean_slowdown", proto)
        ax.set_title(label)
        ax.set_xlabel("load")
        ax.set_ylabel("mean slowdown")
        ax.set_ylim(bottom=1)
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    def val(proto, load, key, col="mean_slowdown"):
        s = d[(d.protocol == proto) & (d.bin == key) & ((d.load - load).abs() < 1e-9)][col]
        return float(s.iloc[0]) if len(s) else float("nan")

    ours: dict[str, Any] = {}
    for load in (0.5, 0.8):
        for proto in ("DCTCP", "TCP"):
            ours[f"{proto} (0,100KB] mean slowdown, load {load}"] = val(proto, load, "0-100KB")
    for proto in ("DCTCP", "TCP"):
        ours[f"{proto} (0,100KB] p99 slowdown, load 0.8"] = val(proto, 0.8, "0-100KB", "p99_slowdown")
    loads = sorted(d.load.unique())
    better = sum(val("DCTCP", ld, "0-100KB") < val("TCP", ld, "0-100KB") for ld in loads)
    ours["loads where DCTCP beats TCP for (0,100KB] flows"] = f"{better} of {len(loads)}"
    return ours
