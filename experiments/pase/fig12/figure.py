"""PASE SIGCOMM'14 Fig. 12, left-right inter-rack: (a) AFCT with end-to-end arbitration and with
local arbitration only (the end hosts'), (b) AFCT with 3, 4, 6 and 8 priority queues."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PASE Fig. 12: arbitration and priority queues (left-right inter-rack)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.KEYS
END_TO_END, LOCAL = (schemes.name("pase", {"pase.arbitration": a}) for a in ("end-to-end", "local"))
QUEUES = {k: schemes.name("pase", {"pase.queues": k}) for k in (3, 4, 6, 8)}
HIGH = [0.7, 0.8, 0.9]


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    """Panel a: the 8-queue runs named by their arbitration; panel b: the end-to-end runs named
    by their number of queues (the 8-queue end-to-end run is in both)."""
    d = pa.rows(runs, store)
    f = pa.fields(store, d.run, ["pase.arbitration", "pase.queues"]).reset_index(drop=True)
    eight, e2e = f["pase.queues"] == 8, f["pase.arbitration"] == "end-to-end"
    a = d[eight].assign(
        panel="a", scheme=[schemes.name("pase", {"pase.arbitration": x}) for x in f[eight]["pase.arbitration"]]
    )
    b = d[e2e].assign(panel="b", scheme=[QUEUES[k] for k in f[e2e]["pase.queues"]])
    return (
        pd.concat([a, b], ignore_index=True)
        .drop(columns=["run"])
        .sort_values(["panel", "scheme", "load"], kind="stable")
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, pa.title(TITLE, d, path), width_per_panel=4.4, height=3.1)
    pa.lines(axes[0], d[d.panel == "a"], [END_TO_END, LOCAL], "mean_fct_ms", "AFCT (ms)", "(a) end-to-end vs local")
    pa.lines(axes[1], d[d.panel == "b"], list(QUEUES.values()), "mean_fct_ms", "AFCT (ms)", "(b) priority queues")
    for ax in axes:
        ax.legend(loc="best", frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    e2e = pa.improvement(d, END_TO_END, LOCAL, "mean_fct_ms", pa.LOADS, panel="a")
    # No load with both arbitrations' runs (a partial figure): no largest reduction.
    best = int(np.nanargmax(e2e)) if not np.all(np.isnan(e2e)) else None
    return {
        "largest AFCT reduction of end-to-end over local arbitration (%), ours at {load} load": Ours(
            e2e[best] if best is not None else float("nan"),
            {"load": f"{pa.LOADS[best]:.0%}" if best is not None else "—"},
        ),
        "loads where end-to-end arbitration's AFCT is below local's": f"{sum(x > 0 for x in e2e)} of {len(e2e)}",
        "AFCT reduction of 4 queues vs 3, range over loads 70-90 % (%)": pa.span(
            pa.improvement(d, QUEUES[4], QUEUES[3], "mean_fct_ms", HIGH, panel="b")
        ),
        "AFCT reduction of 8 queues vs 4, range over loads 70-90 % (%)": pa.span(
            pa.improvement(d, QUEUES[8], QUEUES[4], "mean_fct_ms", HIGH, panel="b")
        ),
    }
