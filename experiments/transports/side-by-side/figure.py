"""Every transport side by side: pFabric, pHost, Fastpass, PIAS, PASE, Homa and dcPIM on the pHost
paper's default fabric, mean and 99th-percentile slowdown by flow size for three workloads at two
loads (issue 18)."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "Every transport on one fabric: slowdown by flow size (144-host leaf-spine, all-to-all)"
#: With the non-numeric columns (workload, protocol, size bin), what identifies a row of data();
#: the others are averaged over seeds.
KEYS = ["load"]
#: Each row comes from one run (a run's rows are its size bins), so rows of runs done in an
#: earlier sitting can stand in for runs missing from the store (`dcsim reproduce
#: --finished-only --reuse-runs`).
PER_RUN = True
PROTOCOLS = ["pfabric", "phost", "fastpass", "pias", "pase", "homa", "dcpim"]
WORKLOADS = {"imc10": "IMC10", "websearch": "Web search", "datamining": "Data mining"}
BINS = {"all": "all", "0-100KB": "(0, 100KB]", "100KB-10MB": "(100KB, 10MB]", "10MB+": "> 10MB"}
LOADS = (0.5, 0.8)


def data(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in runs.iterrows():
        for key in BINS:
            prefix = "" if key == "all" else f"bins.{key}."
            count = float(r["flows_completed"] if key == "all" else r.get(f"{prefix}count", 0) or 0)
            if count == 0:
                continue  # IMC10 has no flow over 10 MB
            rows.append(
                {
                    "workload": WORKLOADS[r["workload.flow_sizes"]],
                    "protocol": schemes.name(r["transport.protocol"]),
                    "load": float(r["workload.load"]),
                    "bin": key,
                    "flows": count,
                    "mean_slowdown": float(r[f"{prefix}mean_slowdown"]),
                    "p99_slowdown": float(r[f"{prefix}p99_slowdown"]),
                    # A run that stopped with flows no event could finish (docs/metrics.md, "No
                    # flow stalls"): its slowdowns cover the finished flows only, a lower bound.
                    "flows_stalled": float(r.get("flows_stalled", 0) or 0),
                }
            )
    return pd.DataFrame(rows)


def plot(d: pd.DataFrame, path: Path) -> None:
    plt = dplot.pyplot()
    panels = [(load, col) for load in LOADS for col in ("mean_slowdown", "p99_slowdown")]
    fig, axes = plt.subplots(len(WORKLOADS), len(panels), figsize=(4.2 * len(panels), 3.0 * len(WORKLOADS)))
    fig.suptitle(TITLE)
    names = [schemes.name(p) for p in PROTOCOLS]
    width = 0.8 / len(names)
    for row, workload in enumerate(WORKLOADS.values()):
        for column, (load, col) in enumerate(panels):
            ax = axes[row][column]
            part = d[(d.workload == workload) & ((d.load - load).abs() < 1e-9)]
            bins = [b for b in BINS if (part.bin == b).any()]
            x = np.arange(len(bins))
            remarks = []
            for i, name in enumerate(names):
                s = part[part.protocol == name].set_index("bin").reindex(bins)
                xs = x + (i - (len(names) - 1) / 2) * width
                color = dplot.style(name).get("color")
                bars = ax.bar(xs, s[col], width, label=name, color=color)
                stalled = s["flows_stalled"].fillna(0) if "flows_stalled" in s else pd.Series(0.0, index=s.index)
                for bar, n in zip(bars, stalled):
                    if n > 0:
                        bar.set_hatch("////")
                        bar.set_edgecolor("black")
                if (stalled > 0).any():
                    # Drawn from several seeds, the count is a mean over the seeds' runs, and a
                    # seed whose run finished every flow pulls it down: say so.
                    seeds = int(s["n_seeds"].max()) if "n_seeds" in s else 1
                    n = f"{stalled.max():,.0f}" + (f" (mean of {seeds} seeds' runs)" if seeds > 1 else "")
                    remarks.append(
                        f"hatched: {name} stopped with {n} flows stalled;\nfinished flows only (a lower bound)"
                    )
                err = dplot.ci95(s, col)
                dplot.errorbars(ax, xs, s[col], err, "#333333")
            # A figure drawn from part of its runs (`--finished-only`) must not pass a missing
            # protocol off as a bar too small to see.
            absent = [name for name in names if not (part.protocol == name).any()]
            if absent:
                remarks.append("no run: " + ", ".join(absent))
            if remarks:
                ax.text(0.01, 0.98, "\n".join(remarks), transform=ax.transAxes, fontsize=6, va="top")
            ax.set_xticks(x)
            ax.set_xticklabels([BINS[b] for b in bins], fontsize=7)
            ax.set_yscale("log")
            what = "mean" if col == "mean_slowdown" else "99th-pct"
            ax.set_title(f"{workload}, load {load}: {what} slowdown", fontsize=9)
            ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=2, frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    """Each protocol's mean slowdown over all flows at load 0.8: no paper has these numbers.
    Data written before runs could stop with stalled flows (2026-11-24) has no
    ``flows_stalled`` column: none of its runs had any (such a run never ended)."""
    ours: dict[str, Any] = {}
    for workload in WORKLOADS.values():
        for p in PROTOCOLS:
            name = schemes.name(p)
            s = d[(d.workload == workload) & (d.protocol == name) & (d.bin == "all") & ((d.load - 0.8).abs() < 1e-9)]
            key = f"{workload}, load 0.8: {name} mean slowdown"
            if not len(s):
                ours[key] = float("nan")
            elif stalled := int(s.flows_stalled.iloc[0]) if "flows_stalled" in s else 0:
                # No mean over all the flows exists: the finished ones' is a lower bound.
                ours[key] = f"≥ {float(s.mean_slowdown.iloc[0]):.2f} ({stalled:,} flows stalled)"
            else:
                ours[key] = float(s.mean_slowdown.iloc[0])
    return ours
