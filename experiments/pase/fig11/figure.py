"""PASE SIGCOMM'14 Fig. 11: PASE with its arbitration optimisations (early pruning, delegation)
against PASE without them, left-right inter-rack: (a) AFCT improvement, (b) arbitration overhead
reduction."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PASE Fig. 11: arbitration optimisations (left-right inter-rack)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.KEYS
VARIANT = ("pase.pruning_queue", "pase.delegation")
WITH = schemes.name("pase", {"pase.pruning_queue": 4, "pase.delegation": True})
WITHOUT = schemes.name("pase", {"pase.pruning_queue": 0, "pase.delegation": False})


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = pa.rows(runs, store, VARIANT).drop(columns=["run"])
    # Per load: the AFCT improvement and the reduction of the switch arbitrators' messages.
    loads = sorted(d.load.unique())
    imp = pa.improvement(d, WITH, WITHOUT, "mean_fct_ms", loads)
    red = pa.improvement(d, WITH, WITHOUT, "arbitration_switch_messages", loads)
    gains = pd.DataFrame(
        {"scheme": "improvement", "load": loads, "afct_improvement_pct": imp, "overhead_reduction_pct": red}
    )
    return pd.concat([d, gains], ignore_index=True).sort_values(["scheme", "load"], kind="stable")


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, pa.title(TITLE, d, path), width_per_panel=3.8, height=3.1)
    g = d[d.scheme == "improvement"]
    for ax, col, label, what in (
        (axes[0], "afct_improvement_pct", "AFCT improvement (%)", "(a) AFCT"),
        (axes[1], "overhead_reduction_pct", "overhead reduction (%)", "(b) overhead"),
    ):
        pa.bars(ax, list(g.load), list(g[col]), label, what, errors=dplot.ci95(g, col))
    pa.lines(
        axes[2], d, [WITH, WITHOUT], "arbitration_switch_messages", "switch arbitrator messages", "messages per run"
    )
    axes[2].legend(loc="best", frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    g = d[d.scheme == "improvement"].reset_index(drop=True)
    best = int(np.nanargmax(g.overhead_reduction_pct))
    return {
        "smallest AFCT improvement over loads 10-90 % (%)": float(g.afct_improvement_pct.min()),
        "largest AFCT improvement over loads 10-90 % (%)": float(g.afct_improvement_pct.max()),
        "largest arbitration overhead reduction (%), ours at {load} load": Ours(
            float(g.overhead_reduction_pct[best]), {"load": f"{g.load[best]:.0%}"}
        ),
        "smallest arbitration overhead reduction over loads 10-90 % (%)": float(g.overhead_reduction_pct.min()),
    }
