"""PIAS NSDI'15 Fig. 13: optimised (§3.3) vs equal-split thresholds, 2 and 4 queues."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 13: optimised vs equal-split thresholds (web search, testbed setting)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
LABELS = [
    schemes.name("pias", {"pias.queues": k, "pias.threshold_method": m})
    for k in (2, 4)
    for m in ("closed-form", "equal-split")
]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs.assign(**{"workload.flow_sizes": "websearch"}))
    r = runs.set_index("run")
    d["scheme"] = [
        schemes.name(
            r.loc[h, "transport.protocol"],
            {"pias.queues": int(r.loc[h, "pias.queues"]), "pias.threshold_method": r.loc[h, "pias.threshold_method"]},
        )
        for h in d.run
    ]
    return d.drop(columns=["run"])


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(
        d,
        pi.WEBSEARCH_FCT_PANELS,
        LABELS,
        TITLE,
        path,
    )


def compare(d: pd.DataFrame) -> dict[str, Any]:
    """§5.2 gives the gain at load 0.8 only ("We run the web search workload at 0.8 load")."""

    def medium(scheme: str) -> float:
        return pi.value(d, "websearch", scheme, 0.8, "medium_mean_fct_ms")

    return {
        f"{k} queues: (100KB,10MB] average FCT, optimised / equal split, load 0.8": medium(f"{k} queues, optimised")
        / medium(f"{k} queues, equal split")
        for k in (2, 4)
    }
