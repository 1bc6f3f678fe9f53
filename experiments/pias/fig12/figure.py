"""PIAS NSDI'15 Fig. 12: web search run with data-mining thresholds: PIAS, PIAS without ECN,
DCTCP (testbed setting)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 12: mismatched thresholds (web search with data-mining thresholds)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
LABELS = [
    schemes.name("pias", {"pias.ecn": "per-port"}),
    schemes.name("pias", {"pias.ecn": "off"}),
    schemes.name("dctcp"),
]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs.assign(**{"workload.flow_sizes": "websearch"}))
    r = runs.set_index("run")
    d["scheme"] = [schemes.name(r.loc[h, "transport.protocol"], {"pias.ecn": r.loc[h, "pias.ecn"]}) for h in d.run]
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
    ours: dict[str, Any] = {}
    for col, what in (("small_mean_fct_ms", "(0,100KB]"), ("medium_mean_fct_ms", "(100KB,10MB]")):
        r = [
            pi.value(d, "websearch", "PIAS without ECN", ld, col) / pi.value(d, "websearch", "PIAS", ld, col)
            for ld in sorted(d.load.unique())
        ]
        ours[f"{what} average FCT, PIAS without ECN / PIAS, range over loads"] = (min(r), max(r))
        r = [
            pi.value(d, "websearch", "PIAS", ld, col) / pi.value(d, "websearch", "DCTCP", ld, col)
            for ld in sorted(d.load.unique())
        ]
        ours[f"{what} average FCT, PIAS / DCTCP, range over loads"] = (min(r), max(r))
        r = [
            pi.value(d, "websearch", "PIAS without ECN", ld, col) / pi.value(d, "websearch", "DCTCP", ld, col)
            for ld in sorted(d.load.unique())
        ]
        ours[f"{what} average FCT, PIAS without ECN / DCTCP, range over loads"] = (min(r), max(r))
    return ours
