"""pFabric SIGCOMM'13 Fig. 17: pFabric over 2, 4, 8 priority queues vs pFabric vs Ideal."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "pFabric SIGCOMM'13 Fig. 17: a few priority queues vs pFabric (web search, 144 hosts)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load"]
#: The schemes, in the figure's order: pFabric over a few queues (queues, threshold method), pFabric, Ideal.
SCHEMES = [
    schemes.name("pfabric", {"pfabric.queues": q, "pfabric.threshold_method": m})
    for q, m in ((2, "mg1"), (4, "mg1"), (8, "mg1"), (4, "equal-split"), (0, "mg1"))
]
SCHEMES.append(schemes.name("ideal"))
Q2, Q4, Q8, Q4_EQUAL, PFABRIC, IDEAL = SCHEMES


def scheme(r) -> str:
    return schemes.name(
        r["transport.protocol"],
        {"pfabric.queues": int(r["pfabric.queues"]), "pfabric.threshold_method": r["pfabric.threshold_method"]},
    )


def data(runs: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {
            "scheme": scheme(r),
            "load": r["workload.load"],
            "mean_nfct": r["mean_slowdown"],
            "small_p99_nfct": r["bins.0-100KB.p99_slowdown"],
            "small_mean_nfct": r["bins.0-100KB.mean_slowdown"],
            "large_mean_nfct": r["bins.10MB+.mean_slowdown"],
        }
        for _, r in runs.iterrows()
    ]
    d = pd.DataFrame(rows)
    d["scheme"] = pd.Categorical(d["scheme"], SCHEMES, ordered=True)
    return d.sort_values(["scheme", "load"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=3.6, height=3.0)
    panels = [
        ("mean_nfct", "(a) Overall: average", [Q2, Q4, Q8, PFABRIC, IDEAL]),
        ("small_p99_nfct", "(b) (0, 100KB]: 99th percentile", [Q2, Q4, Q8, PFABRIC]),
        ("mean_nfct", "(c) Q=4: optimized vs equal split", [Q4, Q4_EQUAL]),
    ]
    for ax, (col, title, series) in zip(axes, panels):
        for s in series:
            ser = d[d.scheme == s]
            dplot.line(ax, ser.load, ser, col, s)
        ax.set_title(title)
        ax.set_xlabel("load")
        ax.set_ylabel("normalized FCT")
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    def v(s, load, col="mean_nfct"):
        x = d[(d.scheme == s) & ((d.load - load).abs() < 1e-9)][col]
        return float(x.iloc[0]) if len(x) else float("nan")

    gain = 1 - v(Q4, 0.8) / v(Q4_EQUAL, 0.8)
    ordered = v(Q2, 0.8) > v(Q4, 0.8) > v(Q8, 0.8)
    return {
        "Q=4 optimized vs equal split: average FCT reduction at 80 % load": f"{gain * 100:.0f} %",
        "Q=8 / pFabric, overall average at 80 % load": v(Q8, 0.8) / v(PFABRIC, 0.8),
        "Q=8 / pFabric, (0,100KB] 99th percentile at 80 % load": v(Q8, 0.8, "small_p99_nfct")
        / v(PFABRIC, 0.8, "small_p99_nfct"),
        "overall average at 80 % load: Q=2 > Q=4 > Q=8": "yes" if ordered else "no",
    }
