"""pFabric SIGCOMM'13 Fig. 17: pFabric over 2, 4, 8 priority queues vs pFabric vs Ideal."""

from pathlib import Path

import pandas as pd

from dcsim import plot as dplot

TITLE = "pFabric SIGCOMM'13 Fig. 17: a few priority queues vs pFabric (web search, 144 hosts)"
SCHEMES = ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "Q=4 (Equal split)", "pFabric", "Ideal"]
STYLE = {"Q=2 (Optimized)": ("#9edae5", "v"), "Q=4 (Optimized)": ("#17becf", "s"), "Q=8 (Optimized)": ("#1f77b4", "D"), "Q=4 (Equal split)": ("#7f7f7f", "x")}


def scheme(r) -> str:
    if r["transport.protocol"] == "ideal":
        return "Ideal"
    q = int(r["pfabric.queues"])
    if q == 0:
        return "pFabric"
    return f"Q={q} ({'Optimized' if r['pfabric.threshold_method'] == 'mg1' else 'Equal split'})"


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


def _style(s):
    if s in STYLE:
        color, marker = STYLE[s]
        return {"label": s, "color": color, "marker": marker}
    return dplot.style(s)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=3.6, height=3.0)
    panels = [
        ("mean_nfct", "(a) Overall: average", ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "pFabric", "Ideal"]),
        ("small_p99_nfct", "(b) (0, 100KB]: 99th percentile", ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "pFabric"]),
        ("mean_nfct", "(c) Q=4: optimized vs equal split", ["Q=4 (Optimized)", "Q=4 (Equal split)"]),
    ]
    for ax, (col, title, schemes) in zip(axes, panels):
        for s in schemes:
            ser = d[d.scheme == s]
            ax.plot(ser.load, ser[col], **_style(s))
        ax.set_title(title)
        ax.set_xlabel("load")
        ax.set_ylabel("normalized FCT")
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    dplot.save(fig, path)


def compare(d: pd.DataFrame):
    def v(s, load, col="mean_nfct"):
        x = d[(d.scheme == s) & ((d.load - load).abs() < 1e-9)][col]
        return float(x.iloc[0]) if len(x) else float("nan")

    gain = 1 - v("Q=4 (Optimized)", 0.8) / v("Q=4 (Equal split)", 0.8)
    ordered = v("Q=2 (Optimized)", 0.8) > v("Q=4 (Optimized)", 0.8) > v("Q=8 (Optimized)", 0.8)
    return {
        "Q=4 optimized vs equal split: average FCT reduction at 80 % load": f"{gain * 100:.0f} %",
        "Q=8 / pFabric, overall average at 80 % load": v("Q=8 (Optimized)", 0.8) / v("pFabric", 0.8),
        "Q=8 / pFabric, (0,100KB] 99th percentile at 80 % load": v("Q=8 (Optimized)", 0.8, "small_p99_nfct") / v("pFabric", 0.8, "small_p99_nfct"),
        "overall average at 80 % load: Q=2 > Q=4 > Q=8": "yes" if ordered else "no",
    }
