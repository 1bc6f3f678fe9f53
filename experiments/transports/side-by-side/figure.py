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
            for i, name in enumerate(names):
                s = part[part.protocol == name].set_index("bin").reindex(bins)
                xs = x + (i - (len(names) - 1) / 2) * width
                color = dplot.style(name).get("color")
                ax.bar(xs, s[col], width, label=name, color=color)
                err = dplot.ci95(s, col)
                dplot.errorbars(ax, xs, s[col], err, "#333333")
            ax.set_xticks(x)
            ax.set_xticklabels([BINS[b] for b in bins], fontsize=7)
            ax.set_yscale("log")
            what = "mean" if col == "mean_slowdown" else "99th-pct"
            ax.set_title(f"{workload}, load {load}: {what} slowdown", fontsize=9)
            ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=2, frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    """Each protocol's mean slowdown over all flows at load 0.8: no paper has these numbers."""
    ours: dict[str, Any] = {}
    for workload in WORKLOADS.values():
        for p in PROTOCOLS:
            name = schemes.name(p)
            s = d[(d.workload == workload) & (d.protocol == name) & (d.bin == "all") & ((d.load - 0.8).abs() < 1e-9)]
            ours[f"{workload}, load 0.8: {name} mean slowdown"] = (
                float(s.mean_slowdown.iloc[0]) if len(s) else float("nan")
            )
    return ours
