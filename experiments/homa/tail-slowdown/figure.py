"""Homa SIGCOMM'18, simulations: 99th-percentile slowdown by message size at 80 % load, W1-W5, Homa
against pFabric, pHost and PIAS on the authors' simulator's fabric."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.dataset as ds

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "Homa simulations: 99th-percentile slowdown by message size, 80 % load (144 hosts)"
WORKLOADS = {f"homa-w{i}": f"W{i}" for i in range(1, 6)}
#: Messages are split into this many groups of equal count by size (the paper's x axis is
#: spaced by message count, not by size).
GROUPS = 10
OTHERS = ["pFabric", "pHost", "PIAS"]
#: With the non-numeric columns (workload, protocol, size group), what identifies a row of
#: data(); the others are averaged over seeds.
KEYS = ["load"]


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "id", "size_bytes", "slowdown"],
            filter=ds.field("run").isin(list(runs["run"])),
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[flows.run == r["run"]].sort_values(["size_bytes", "id"], kind="stable")
        group = np.arange(len(f)) * GROUPS // len(f)
        common = {
            "workload": WORKLOADS[r["workload.flow_sizes"]],
            "protocol": schemes.name(r["transport.protocol"], {}),
            "load": r["workload.load"],
            "messages": len(f),
        }
        rows.append(
            {
                **common,
                "group": "all",
                "max_size_bytes": float(f.size_bytes.max()),
                "p99_slowdown": float(f.slowdown.quantile(0.99)),
                "mean_slowdown": float(f.slowdown.mean()),
            }
        )
        for g, part in f.groupby(group):
            rows.append(
                {
                    **common,
                    "group": str(g),
                    "max_size_bytes": float(part.size_bytes.max()),
                    "p99_slowdown": float(part.slowdown.quantile(0.99)),
                    "mean_slowdown": float(part.slowdown.mean()),
                }
            )
    return pd.DataFrame(rows)


def plot(d: pd.DataFrame, path: Path) -> None:
    from matplotlib import ticker

    fig, axes = dplot.grid(len(WORKLOADS), TITLE, width_per_panel=4.0, height=3.0)
    for ax, w in zip(axes, WORKLOADS.values()):
        part = d[(d.workload == w) & (d.group != "all")]
        for proto in ["Homa", *OTHERS]:
            s = part[part.protocol == proto]
            if s.empty:
                continue
            x = s.group.astype(int) * (100 // GROUPS) + 100 // GROUPS
            dplot.line(ax, x, s, "p99_slowdown", proto)
        sizes = part[part.protocol == "Homa"].max_size_bytes.tolist()
        ax.set_xticks([(i + 1) * (100 // GROUPS) for i in range(0, GROUPS, 2)])
        ax.set_xticklabels([_size(sizes[i]) for i in range(0, min(GROUPS, len(sizes)), 2)], fontsize=7)
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        ax.set_yticks([t for t in (1, 1.5, 2, 3, 4, 6, 10, 20, 40, 80) if lo <= t <= hi])
        ax.yaxis.set_major_formatter(ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_title(f"{w} (x: largest size in each tenth of the messages)", fontsize=8)
        ax.set_ylabel("99th-percentile slowdown")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[len(WORKLOADS) :]:
        ax.axis("off")
    dplot.legend_once(axes[: len(WORKLOADS)])
    dplot.save(fig, path)


def _size(b: float) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g}{unit}"
    return f"{b:.0f}B"


def compare(d: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    overall = d[d.group == "all"].set_index(["workload", "protocol"]).p99_slowdown

    def of(workload: str, protocol: str) -> float:
        # NaN when the run is missing (a partial figure drawn from finished runs).
        return float(overall.get((workload, protocol), float("nan")))

    groups = d[d.group != "all"]
    for w in WORKLOADS.values():
        homa = groups[(groups.workload == w) & (groups.protocol == "Homa")]
        out[f"{w}: Homa's largest p99 slowdown over the size groups"] = float(homa.p99_slowdown.max())
        out[f"{w}: p99 slowdown, Homa / pFabric"] = of(w, "Homa") / of(w, "pFabric")
        for other in ("pHost", "PIAS"):
            out[f"{w}: p99 slowdown, {other} / Homa"] = of(w, other) / of(w, "Homa")
    return out
