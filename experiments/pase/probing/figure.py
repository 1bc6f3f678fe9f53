"""PASE SIGCOMM'14 §4.3.2, "Impact of RTO and Probing": AFCT with lowest-queue flows probing (a
header-only probe every RTT) and without probing, all-to-all intra-rack, 80 % and 90 % load."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import pase as pa
from dcsim.experiments_support import schemes

TITLE = "PASE §4.3.2: probing (all-to-all intra-rack)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pa.KEYS
ON, OFF = (schemes.name("pase", {"pase.probing": p}) for p in (True, False))
LOADS = [0.8, 0.9]


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = pa.rows(runs, store, ("pase.probing",)).drop(columns=["run"])
    # Per load, this seed's AFCT improvement with probing (its mean and interval over seeds in the bars).
    gains = pd.DataFrame(
        {
            "scheme": "improvement",
            "load": LOADS,
            "afct_improvement_pct": pa.improvement(d, ON, OFF, "mean_fct_ms", LOADS),
        }
    )
    return pd.concat([d, gains], ignore_index=True).sort_values(["scheme", "load"], kind="stable")


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, pa.title(TITLE, d, path), width_per_panel=3.8, height=3.1)
    pa.lines(axes[0], d, [ON, OFF], "mean_fct_ms", "AFCT (ms)", "AFCT")
    axes[0].legend(loc="best", frameon=False)
    g = d[d.scheme == "improvement"]
    errors = dplot.ci95(g, "afct_improvement_pct")
    pa.bars(axes[1], list(g.load), list(g.afct_improvement_pct), "AFCT improvement (%)", "with probing", errors=errors)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    imp = pa.improvement(d, ON, OFF, "mean_fct_ms", LOADS)
    return {f"AFCT improvement with probing at {ld * 100:.0f} % load (%)": i for ld, i in zip(LOADS, imp)}
