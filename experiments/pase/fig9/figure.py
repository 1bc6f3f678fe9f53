"""PASE SIGCOMM'14 Fig. 9: PASE against self-adjusting endpoints, left-right inter-rack: (a) AFCT
of PASE, L2DCT and DCTCP, (b) their FCT CDF at 70 % load, (c) application throughput with
deadlines of PASE (EDF arbitration), D2TCP and DCTCP."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes

TITLE = "PASE Fig. 9: PASE vs self-adjusting endpoints (left-right inter-rack)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.CDF_KEYS
AFCT_SERIES = schemes.names("pase", "l2dct", "dctcp")
PASE_EDF = schemes.name("pase", {"pase.order": "edf"})
DEADLINE_SERIES = [PASE_EDF, *schemes.names("d2tcp", "dctcp")]
CDF_LOAD = 0.7


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = pa.rows(runs, store, ("pase.order",))
    d["panel"] = np.where(d.deadline_mean_ms > 0, "c", "a")
    c = pa.fct_cdfs(store, d[d.panel == "a"], CDF_LOAD).assign(panel="b")
    return pd.concat([d.drop(columns=["run"]), c], ignore_index=True).sort_values(
        ["panel", "scheme", "load", "cdf"], kind="stable"
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, pa.title(TITLE, d, path), width_per_panel=3.8, height=3.1)
    pa.lines(axes[0], d[d.panel == "a"], AFCT_SERIES, "mean_fct_ms", "AFCT (ms)", "(a) AFCT")
    pa.cdf(axes[1], d[d.panel == "b"], AFCT_SERIES, f"(b) FCT CDF at {CDF_LOAD:.0%} load")
    pa.lines(axes[2], d[d.panel == "c"], DEADLINE_SERIES, "app_throughput", "application throughput", "(c) deadlines")
    axes[2].set_ylim(0, 1)
    for ax in axes:
        ax.legend(loc="best", frameon=False)
    dplot.save(fig, path)


def _ratios(d: pd.DataFrame, num: str, den: str, col: str, panel: str) -> list[float]:
    return [pa.value(d, num, ld, col, panel=panel) / pa.value(d, den, ld, col, panel=panel) for ld in pa.LOADS]


def compare(d: pd.DataFrame) -> dict[str, Any]:
    pase, l2dct, dctcp = AFCT_SERIES
    vs_dctcp = _ratios(d, pase, dctcp, "mean_fct_ms", "a")
    cdf = d[(d.panel == "b") & (d.scheme == pase)]
    within = float(cdf[cdf.fct_ms <= 10].cdf.max()) if len(cdf) else float("nan")
    apps = {s: [pa.value(d, s, ld, "app_throughput", panel="c") for ld in pa.LOADS] for s in DEADLINE_SERIES}
    return {
        "AFCT, PASE / DCTCP, range over loads 10-90 %": pa.span(vs_dctcp),
        "AFCT, PASE / L2DCT, range over loads 10-90 %": pa.span(_ratios(d, pase, l2dct, "mean_fct_ms", "a")),
        "loads where PASE's AFCT is below DCTCP's": f"{sum(r < 1 for r in vs_dctcp)} of {len(vs_dctcp)}",
        "fraction of PASE's flows finished within 10 ms at 70 % load": within,
        "application throughput, PASE (EDF) − D2TCP, range over loads": pa.span(
            [a - b for a, b in zip(apps[PASE_EDF], apps[DEADLINE_SERIES[1]])]
        ),
        "application throughput, D2TCP − DCTCP, range over loads": pa.span(
            [a - b for a, b in zip(apps[DEADLINE_SERIES[1]], apps[DEADLINE_SERIES[2]])]
        ),
    }
