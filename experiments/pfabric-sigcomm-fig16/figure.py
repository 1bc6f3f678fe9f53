"""pFabric SIGCOMM'13 Fig. 16: the M/G/1 model's FCTn(t) vs the high-priority threshold t
(two queues, web search), loads 10-80 %, optimum marked. A model figure: nothing is simulated
(the model itself is checked against a direct simulation in the test suite)."""

from pathlib import Path

import numpy as np
import pandas as pd

from dcsim import _dcsim
from dcsim import plot as dplot

TITLE = "pFabric SIGCOMM'13 Fig. 16: FCTn(t) vs high-priority threshold t (web search, 2 queues)"
SWEEP = None
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]


def data(_runs) -> pd.DataFrame:
    rows = []
    grid = np.logspace(np.log10(8_760), np.log10(29.2e6), 160)
    for load in LOADS:
        best = _dcsim.thresholds("websearch", load, 2, "mg1")[0]
        for t in list(grid) + [best]:
            rows.append({"load": load, "threshold_bytes": float(t), "fctn": _dcsim.threshold_fctn("websearch", load, [float(t)]), "optimal": t == best})
    return pd.DataFrame(rows).sort_values(["load", "threshold_bytes"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, (ax,) = dplot.grid(1, TITLE, width_per_panel=8.0, height=3.8)
    cmap = dplot.pyplot().get_cmap("viridis")
    for i, load in enumerate(LOADS):
        s = d[(d.load == load) & ~d.optimal]
        ax.plot(s.threshold_bytes, s.fctn, color=cmap(i / (len(LOADS) - 1)), label=f"load {load:.0%}")
        o = d[(d.load == load) & d.optimal]
        ax.plot(o.threshold_bytes, o.fctn, "o", color="red", markerfacecolor="none", markersize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("high-priority threshold t (bytes)")
    ax.set_ylabel("FCTn(t)")
    ax.legend(loc="upper right", ncol=2, frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame):
    opt = d[d.optimal].set_index("load").threshold_bytes
    return [
        {"metric": "optimal threshold at load 10 %", "published": 880e3, "ours": float(opt[0.1]), "note": "§6.1: '~880-1740KB as the load increases from 10% to 80%'"},
        {"metric": "optimal threshold at load 80 %", "published": 1740e3, "ours": float(opt[0.8]), "note": "see docs/thresholds.md for the difference at high load"},
    ]


NOTES = """\
- **Optimum at 80 % load: 1.36 MB here, ~1.74 MB in the paper (−22 %); at 10 %: 853 KB vs
  ~880 KB (−3 %).** Not resolved. Measured in this model: FCTn stays within 1 % of its minimum
  for thresholds 0.69-1.34× the optimum at 10 % load but only 0.90-1.10× at 80 %, and the
  paper's 1.74 MB would be 7.4 % worse than our optimum at 80 % — so the difference is not a
  flat minimum; the paper's model inputs must differ. A stepped reading of the CDF (tested)
  makes every threshold from 974 KB to 1946 KB equivalent at every load: it contains the
  paper's 1.74 MB at 80 % but not its 880 KB at 10 %, so it does not explain both either.
  Located, not explained: our model's optimum moves with load as 853 KB (0.1), 1.36 MB (0.8),
  1.49 MB (0.85), 1.69 MB (0.9), 1.89 MB (0.93), so the paper's 1.74 MB is what it gives at an
  effective load of ≈ 0.91 — as if the paper's 80 % meant ~12 % more load on the modelled link
  (headers alone add 2.7 %). Untested: the ns-2 scripts' 1138-packet mean and the paper's exact
  load definition for the model. dcsim uses the
  stated model with the interpolated CDF in payload bytes (docs/thresholds.md) and does not tune
  it to match. The model itself agrees with a direct simulation of a two-queue link within 3 %
  (test suite), and Fig. 17 uses its thresholds.
"""
