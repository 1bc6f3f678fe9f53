"""PIAS NSDI'15 Fig. 11: PIAS with 2, 4 and 8 queues (web search, testbed setting)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 11: number of queues (web search, testbed setting)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
LABELS = {k: schemes.name("pias", {"pias.queues": k}) for k in (2, 4, 8)}


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs.assign(**{"workload.flow_sizes": "websearch"}))
    q = runs.set_index("run")["pias.queues"]
    d["scheme"] = d.run.map(lambda h: LABELS[int(q[h])])
    return d.drop(columns=["run"])


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(
        d,
        pi.WEBSEARCH_FCT_PANELS,
        list(LABELS.values()),
        TITLE,
        path,
    )


def _span(d, num, den, col):
    r = [
        pi.value(d, "websearch", num, ld, col) / pi.value(d, "websearch", den, ld, col)
        for ld in sorted(d.load.unique())
    ]
    return (min(r), max(r))


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours = {
        "(0,100KB] average FCT, 2 queues / 8 queues, range over loads": _span(
            d, LABELS[2], LABELS[8], "small_mean_fct_ms"
        )
    }
    for k in (4, 8):
        ours[f"(100KB,10MB] average FCT, {k} queues / 2 queues, range over loads"] = _span(
            d, LABELS[k], LABELS[2], "medium_mean_fct_ms"
        )
    return ours
