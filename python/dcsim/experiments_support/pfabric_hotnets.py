"""Shared by the pFabric HotNets'12 reproductions (Figs. 2-4): scheme names, the figures'
numbers from the sweep, and the size-bin breakdown plot."""

from pathlib import Path

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

#: The schemes, in the figures' order.
SCHEMES = [
    schemes.name("tcp"),
    schemes.name("dctcp"),
    schemes.name("pfabric", {"pfabric.rate_control": "mintcp"}),
    schemes.name("pfabric", {"pfabric.rate_control": "linerate"}),
    schemes.name("ideal"),
]
WORKLOADS = {"datamining": "Data mining", "websearch": "Web search"}
BINS = ["all", "0-100KB", "100KB-10MB", "10MB+"]
#: The numeric column that, with the workload, scheme and size bin, identifies a row of :func:`data`.
KEYS = ["load"]


def scheme(protocol: str, rate_control: str) -> str:
    """A run's scheme: pFabric's variants by rate control."""
    return schemes.name(protocol, {"pfabric.rate_control": rate_control})


def data(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (workload, scheme, load, size bin): normalized FCT mean and p99."""
    rows = []
    for _, r in runs.iterrows():
        for b in BINS:
            prefix = "" if b == "all" else f"bins.{b}."
            rows.append(
                {
                    "workload": r["workload.flow_sizes"],
                    "scheme": scheme(r["transport.protocol"], r["pfabric.rate_control"]),
                    "load": r["workload.load"],
                    "bin": b,
                    "flows": r["flows_completed"] if b == "all" else r[f"{prefix}count"],
                    "mean_nfct": r[f"{prefix}mean_slowdown"],
                    "p99_nfct": r[f"{prefix}p99_slowdown"],
                }
            )
    d = pd.DataFrame(rows)
    d["scheme"] = pd.Categorical(d["scheme"], SCHEMES, ordered=True)
    return d.sort_values(["workload", "bin", "scheme", "load"]).reset_index(drop=True)


def series(d: pd.DataFrame, workload: str, b: str, scheme_name: str, col: str = "mean_nfct") -> pd.DataFrame:
    """The rows of one scheme: load, `col` and its interval (``<col>_ci95``) where averaged."""
    cols = ["load", col] + [c for c in (f"{col}_ci95",) if c in d.columns]
    return d[(d.workload == workload) & (d.bin == b) & (d.scheme == scheme_name)][cols]


def value(d: pd.DataFrame, workload: str, b: str, scheme_name: str, load: float, col: str = "mean_nfct") -> float:
    rows = series(d, workload, b, scheme_name, col)
    s = rows[(rows.load - load).abs() < 1e-9][col]
    return float(s.iloc[0]) if len(s) else float("nan")


def span(d: pd.DataFrame, workload: str, b: str, scheme_name: str, col: str = "mean_nfct"):
    s = series(d, workload, b, scheme_name, col)[col]
    return (float(s.min()), float(s.max())) if len(s) else (float("nan"), float("nan"))


def plot_breakdown(d: pd.DataFrame, workload: str, title: str, path: Path) -> None:
    panels = [
        ("0-100KB", "mean_nfct", "(0, 100KB]: average"),
        ("0-100KB", "p99_nfct", "(0, 100KB]: 99th percentile"),
        ("100KB-10MB", "mean_nfct", "(100KB, 10MB]: average"),
        ("10MB+", "mean_nfct", "(10MB, ∞): average"),
    ]
    fig, axes = dplot.grid(4, title, width_per_panel=3.4, height=2.7)
    for ax, (b, col, label) in zip(axes, panels):
        for s in SCHEMES:
            if s == "Ideal" and col == "p99_nfct":
                continue
            ser = series(d, workload, b, s, col)
            if len(ser):
                dplot.line(ax, ser.load, ser, col, s)
        ax.set_title(label)
        ax.set_xlabel("load")
        ax.set_ylabel("normalized FCT")
        ax.set_yscale("log")
    dplot.legend_once(axes)
    dplot.save(fig, path)
