"""PASE SIGCOMM'14 Fig. 13, flow sizes uniform in [100 KB, 500 KB]: (a) PASE against PASE-DCTCP
(no reference rate), all-to-all intra-rack with 20 nodes; (b) the testbed (§4.4), PASE against
DCTCP; the mean over seeds in both."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes

TITLE = "PASE Fig. 13: reference rate (intra-rack) and the testbed, sizes U[100 KB, 500 KB]"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.KEYS
PASE, PASE_DCTCP = (schemes.name("pase", {"pase.rate_control": r}) for r in ("pase", "dctcp"))
DCTCP = schemes.name("dctcp")


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = pa.rows(runs, store, ("pase.rate_control",))
    d["panel"] = np.where(d.scenario == pa.SCENARIOS["fan-in"], "b", "a")
    return d.drop(columns=["run"]).sort_values(["panel", "scheme", "load"], kind="stable")


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, pa.title(TITLE, d, path), width_per_panel=4.4, height=3.1)
    a, b = d[d.panel == "a"], d[d.panel == "b"]
    seeds = {p: int(x.n_seeds.max()) if "n_seeds" in x.columns and len(x) else 1 for p, x in (("a", a), ("b", b))}
    pa.lines(axes[0], a, [PASE, PASE_DCTCP], "mean_fct_ms", "AFCT (ms)", f"(a) PASE vs PASE-DCTCP, {seeds['a']} seeds")
    pa.lines(axes[1], b, [PASE, DCTCP], "mean_fct_ms", "AFCT (ms)", f"(b) testbed, mean of {seeds['b']} seeds")
    for ax in axes:
        ax.legend(loc="best", frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return {
        "(a) AFCT reduction of PASE vs PASE-DCTCP, range over loads 10-90 % (%)": pa.span(
            pa.improvement(d, PASE, PASE_DCTCP, "mean_fct_ms", pa.LOADS, panel="a")
        ),
        "(b) AFCT reduction of PASE vs DCTCP, testbed, range over loads 10-90 % (%)": pa.span(
            pa.improvement(d, PASE, DCTCP, "mean_fct_ms", pa.LOADS, panel="b")
        ),
    }
