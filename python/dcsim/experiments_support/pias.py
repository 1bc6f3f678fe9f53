"""Shared by the PIAS (NSDI'15) reproductions: scheme names, per-run numbers, line plots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

#: The numeric columns that, with the scheme and workload, identify a row of :func:`rows`.
KEYS = ["load"]

#: The schemes, in the figures' order.
SCHEMES = schemes.names("pias", "dctcp", "l2dct", "las", "pfabric", "tcp")
WORKLOADS = {"websearch": "Web search", "datamining": "Data mining"}


def rows(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: FCT (ms) and normalized FCT (slowdown) overall and per size bin."""
    out = []
    for _, r in runs.iterrows():
        row = {
            "run": r["run"],
            "workload": r.get("workload.flow_sizes", "websearch"),
            "scheme": schemes.name(r["transport.protocol"]),
            "load": float(r["workload.load"]),
            "flows": int(r["flows_completed"]),
            "mean_fct_ms": float(r["mean_fct_us"]) / 1e3,
            "mean_nfct": float(r["mean_slowdown"]),
        }
        for b, tag in (("0-100KB", "small"), ("100KB-10MB", "medium"), ("10MB+", "large")):
            row[f"{tag}_mean_nfct"] = float(r.get(f"bins.{b}.mean_slowdown", np.nan))
            row[f"{tag}_p99_nfct"] = float(r.get(f"bins.{b}.p99_slowdown", np.nan))
            row[f"{tag}_mean_fct_ms"] = float(r.get(f"bins.{b}.mean_fct_us", np.nan)) / 1e3
            row[f"{tag}_p99_fct_ms"] = float(r.get(f"bins.{b}.p99_fct_us", np.nan)) / 1e3
            row[f"{tag}_count"] = int(r.get(f"bins.{b}.count", 0) or 0)
        out.append(row)
    d = pd.DataFrame(out)
    d["scheme"] = pd.Categorical(d["scheme"], SCHEMES, ordered=True)
    return d.sort_values(["workload", "scheme", "load"]).reset_index(drop=True)


def value(d: pd.DataFrame, workload: str, scheme: str, load: float, col: str) -> float:
    s = d[(d.workload == workload) & (d.scheme == scheme) & ((d.load - load).abs() < 1e-9)][col]
    return float(s.iloc[0]) if len(s) else float("nan")


def reduction(d: pd.DataFrame, workload: str, better: str, worse: str, col: str) -> tuple:
    """(largest reduction over loads, the load where it happens): 1 − better/worse."""
    best = (float("nan"), float("nan"))
    for load in sorted(d.load.unique()):
        r = 1 - value(d, workload, better, load, col) / value(d, workload, worse, load, col)
        if np.isnan(best[0]) or r > best[0]:
            best = (r, load)
    return best


def lines(
    d: pd.DataFrame, panels: Sequence[tuple], series: list[str], title: str, path: Path, log: bool = False
) -> None:
    """`panels`: (workload, column, y label); one line per scheme of `series` against load."""
    fig, axes = dplot.grid(len(panels), title, width_per_panel=3.6, height=2.9)
    for ax, (w, col, label) in zip(axes, panels):
        for s in series:
            ser = d[(d.workload == w) & (d.scheme == s)]
            if len(ser):
                dplot.line(ax, ser.load, ser, col, s)
        ax.set_title(WORKLOADS.get(w, w))
        ax.set_xlabel("load")
        ax.set_ylabel(label)
        if log:
            ax.set_yscale("log")
    dplot.legend_once(axes)
    dplot.save(fig, path)


TESTBED_SCHEMES = schemes.names("pias", "dctcp", "tcp")


def testbed_data(runs: pd.DataFrame, workload: str) -> pd.DataFrame:
    """Figs. 6-7: one workload's rows of the shared testbed sweep."""
    d = rows(runs)
    return d[d.workload == workload].drop(columns=["run"]).reset_index(drop=True)


def testbed_plot(d: pd.DataFrame, workload: str, title: str, path: Path) -> None:
    """Figs. 6-7: average and 99th-percentile FCT of small flows, average of medium and large.
    Logarithmic FCT axes: TCP's small flows take about ten times PIAS's (it fills the 500 KB
    port that DCTCP and PIAS keep near the 30 KB marking threshold; Fig. 6 notes), which on a
    linear axis would flatten PIAS and DCTCP into one line."""
    panels = [
        (workload, "small_mean_fct_ms", "(0,100KB] average FCT, ms"),
        (workload, "small_p99_fct_ms", "(0,100KB] 99th-pct FCT, ms"),
        (workload, "medium_mean_fct_ms", "(100KB,10MB] average FCT, ms"),
        (workload, "large_mean_fct_ms", "(10MB,∞) average FCT, ms"),
    ]
    lines(d, panels, TESTBED_SCHEMES, title, path, log=True)


def testbed_compare(d: pd.DataFrame, workload: str) -> dict[str, Any]:
    """Figs. 6-7: PIAS's small-flow reduction against DCTCP, its range over the loads; on web
    search also the medium-flow reduction at its best load and the overall reductions against
    DCTCP and TCP at load 0.8, the numbers §5.1's text gives."""

    def reduction_at(load: float, col: str, baseline: str) -> float:
        return 1 - value(d, workload, "PIAS", load, col) / value(d, workload, baseline, load, col)

    def reductions(col: str, baseline: str) -> list[float]:
        return [reduction_at(ld, col, baseline) for ld in sorted(d.load.unique())]

    out: dict[str, Any] = {}
    for col, what in (("small_mean_fct_ms", "average"), ("small_p99_fct_ms", "99th percentile")):
        reds = reductions(col, "DCTCP")
        out[f"(0,100KB] {what} FCT, reduction vs DCTCP, range over loads 0.5-0.8"] = (min(reds), max(reds))
    if workload == "websearch":
        # "up to 22% lower average FCT of medium flows than DCTCP in the web search workload";
        # "~9% and ~17% lower overall average FCT than DCTCP and TCP at 0.8 load" (§5.1).
        out["(100KB,10MB] average FCT, largest reduction vs DCTCP over loads 0.5-0.8"] = max(
            reductions("medium_mean_fct_ms", "DCTCP")
        )
        for baseline in ("DCTCP", "TCP"):
            out[f"overall average FCT, reduction vs {baseline} at load 0.8"] = reduction_at(
                0.8, "mean_fct_ms", baseline
            )
    return out


#: Web search's (0,100KB] and (100KB,10MB] average FCT panels (Figs. 11-13).
WEBSEARCH_FCT_PANELS = [
    ("websearch", "small_mean_fct_ms", "(0,100KB] average FCT, ms"),
    ("websearch", "medium_mean_fct_ms", "(100KB,10MB] average FCT, ms"),
]


def small_flow_panels(workloads) -> list:
    """(0,100KB] average and 99th-percentile normalized FCT panels for each workload."""
    panels = []
    for w in workloads:
        panels += [(w, "small_mean_nfct", "(0,100KB] average NFCT"), (w, "small_p99_nfct", "(0,100KB] 99th-pct NFCT")]
    return panels
