"""PIAS NSDI'15 Fig. 17: PIAS vs pFabric (information-aware) for small flows."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 17: PIAS vs pFabric, (0,100KB] normalized FCT"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
SWEEP = "../fig14/sweep.toml"
SCHEMES = schemes.names("pias", "pfabric")


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    d = d[d.scheme.isin(SCHEMES)]
    return d[["workload", "scheme", "load", "small_count", "small_mean_nfct", "small_p99_nfct"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, pi.small_flow_panels(pi.WORKLOADS), SCHEMES, TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for w, label in pi.WORKLOADS.items():
        gaps = [
            pi.value(d, w, "PIAS", ld, "small_mean_nfct") / pi.value(d, w, "pFabric", ld, "small_mean_nfct") - 1
            for ld in sorted(d.load.unique())
        ]
        ours[f"{label}: (0,100KB] average, PIAS above pFabric, largest over loads"] = max(gaps)
    return ours
