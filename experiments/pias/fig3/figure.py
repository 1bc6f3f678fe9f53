"""PIAS NSDI'15 Fig. 3: a 20 KB flow against two 10 MB flows, with demotion thresholds of 10 KB,
20 KB and 1 MB, with and without ECN."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 3: 20 KB flow behind two 10 MB flows, 2 queues"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["threshold_kb"]


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    import pyarrow.dataset as pds

    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "size_bytes", "fct_us", "ideal_fct_us"], filter=pds.field("run").isin(list(runs["run"]))
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[(flows.run == r["run"]) & (flows.size_bytes == 20000)].iloc[0]
        rows.append(
            {
                "threshold_kb": float(r["pias.thresholds"][0]) / 1000,
                "ecn": r["pias.ecn"] != "off",
                "fct_ms": f.fct_us / 1e3,
                "ideal_ms": f.ideal_fct_us / 1e3,
                "normalized": f.fct_us / f.ideal_fct_us,
            }
        )
    return pd.DataFrame(rows).sort_values(["threshold_kb", "ecn"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(1, TITLE, width_per_panel=6.0, height=3.2)
    ax = axes[0]
    ths = sorted(d.threshold_kb.unique())
    x = np.arange(len(ths))
    for i, (ecn, label, color) in enumerate(
        (
            (True, schemes.name("pias", {"pias.ecn": "per-port"}), "#17becf"),
            (False, schemes.name("pias", {"pias.ecn": "off"}), "#7f7f7f"),
        )
    ):
        rows = [d[(d.threshold_kb == t) & (d.ecn == ecn)] for t in ths]
        ys = [float(r.fct_ms.iloc[0]) for r in rows]
        ax.bar(x + (i - 0.5) * 0.38, ys, 0.38, label=label, color=color)
        if "fct_ms_ci95" in d.columns:
            dplot.errorbars(ax, x + (i - 0.5) * 0.38, ys, [float(r.fct_ms_ci95.iloc[0]) for r in rows], "black")
    ax.axhline(float(d.ideal_ms.iloc[0]), color="black", linestyle="--", linewidth=1, label="ideal (idle network)")
    ax.set_xticks(x)
    ax.set_xticklabels([f"threshold {t:g} KB" for t in ths])
    ax.set_ylabel("FCT of the 20 KB flow, ms")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    def n(t, ecn):
        s = d[(d.threshold_kb == t) & (d.ecn == ecn)].normalized
        return float(s.iloc[0]) if len(s) else float("nan")  # NaN: its run is missing

    ours = {
        "threshold 20 KB, PIAS: FCT / ideal": n(20, True),
        "threshold 20 KB, PIAS without ECN: FCT / ideal": n(20, False),
    }
    for t in (10, 1000):
        ours[f"threshold {t:g} KB: FCT without ECN / with ECN"] = n(t, False) / n(t, True)
    return ours
