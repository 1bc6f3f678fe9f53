"""PASE SIGCOMM'14 Fig. 10: PASE against pFabric: (a) 99th-percentile FCT, left-right inter-rack,
(b) its FCT CDF at 70 % load, (c) AFCT, all-to-all intra-rack."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes

TITLE = "PASE Fig. 10: PASE vs pFabric"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.CDF_KEYS
SERIES = schemes.names("pase", "pfabric")
LEFT_RIGHT, INTRA_RACK = pa.SCENARIOS["left-right"], pa.SCENARIOS["intra-rack"]
CDF_LOAD = 0.7
LOW, HIGH = [0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7, 0.8, 0.9]


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = pa.rows(runs, store)
    d["panel"] = np.where(d.scenario == LEFT_RIGHT, "a", "c")
    c = pa.fct_cdfs(store, d[d.panel == "a"], CDF_LOAD).assign(panel="b")
    return pd.concat([d.drop(columns=["run"]), c], ignore_index=True).sort_values(
        ["panel", "scheme", "load", "cdf"], kind="stable"
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, pa.title(TITLE, d, path), width_per_panel=3.8, height=3.1)
    pa.lines(axes[0], d[d.panel == "a"], SERIES, "p99_fct_ms", "99th-pct FCT (ms)", "(a) left-right", log=True)
    pa.cdf(axes[1], d[d.panel == "b"], SERIES, f"(b) left-right, FCT CDF at {CDF_LOAD:.0%} load")
    c = d[d.panel == "c"]
    pa.lines(axes[2], c, SERIES, "mean_fct_ms", "AFCT (ms)", "(c) all-to-all intra-rack", log=True)
    # The paper's bar labels: PASE's AFCT improvement over pFabric at each load, in %.
    for ld, imp in zip(pa.LOADS, pa.improvement(c, SERIES[0], SERIES[1], "mean_fct_ms", pa.LOADS)):
        y = pa.value(c, SERIES[1], ld, "mean_fct_ms")
        if not np.isnan(imp):
            axes[2].annotate(f"{imp:.0f}", (ld * 100, y), textcoords="offset points", xytext=(0, 6), ha="center")
    for ax in axes:
        ax.legend(loc="best", frameon=False)
    dplot.save(fig, path)


def _ratio(d: pd.DataFrame, col: str, loads: list[float], panel: str) -> list[float]:
    return [pa.value(d, SERIES[0], ld, col, panel=panel) / pa.value(d, SERIES[1], ld, col, panel=panel) for ld in loads]


def compare(d: pd.DataFrame) -> dict[str, Any]:
    b = d[d.panel == "b"]
    medians = {s: float(np.interp(0.5, b[b.scheme == s].cdf, b[b.scheme == s].fct_ms)) for s in SERIES}
    intra = pa.improvement(d, SERIES[0], SERIES[1], "mean_fct_ms", pa.LOADS, panel="c")
    below80 = _ratio(d, "mean_fct_ms", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], "a")
    ours: dict[str, Any] = {
        "left-right 99th-pct FCT, PASE / pFabric, range over loads 10-50 %": pa.span(_ratio(d, "p99_fct_ms", LOW, "a")),
        "left-right 99th-pct FCT, PASE / pFabric, range over loads 60-90 %": pa.span(
            _ratio(d, "p99_fct_ms", HIGH, "a")
        ),
        "left-right 99th-pct FCT reduction of PASE vs pFabric at 90 % load (%)": 100
        * (1 - _ratio(d, "p99_fct_ms", [0.9], "a")[0]),
        "left-right median FCT at 70 % load, PASE / pFabric": medians[SERIES[0]] / medians[SERIES[1]],
        "left-right AFCT, largest difference between PASE and pFabric below 80 % load (%)": 100
        * max(abs(r - 1) for r in below80),
    }
    for ld, imp in zip(pa.LOADS, intra):
        ours[f"intra-rack AFCT improvement of PASE over pFabric at {ld * 100:.0f} % load (%)"] = imp
    ours["loads where PASE's intra-rack AFCT is below pFabric's"] = f"{sum(i > 0 for i in intra)} of {len(intra)}"
    return ours
