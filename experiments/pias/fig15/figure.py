"""PIAS NSDI'15 Fig. 15: normalized FCT of small flows, (0,100KB] mean and 99th percentile."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PIAS Fig. 15: (0,100KB] normalized FCT"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
SWEEP = "../fig14/sweep.toml"
SCHEMES = schemes.names("pias", "dctcp", "l2dct", "las")


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    return d[["workload", "scheme", "load", "small_count", "small_mean_nfct", "small_p99_nfct"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, pi.small_flow_panels(pi.WORKLOADS), SCHEMES, TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for w, label in pi.WORKLOADS.items():
        for base in ("DCTCP", "L2DCT"):
            red, load = pi.reduction(d, w, "PIAS", base, "small_mean_nfct")
            ours[f"{label}: (0,100KB] average, largest reduction vs {base} (load {{load}})"] = Ours(
                red, {"load": f"{load:g}"}
            )
        ours[f"{label}: (0,100KB] average, PIAS / LAS at 0.8"] = pi.value(
            d, w, "PIAS", 0.8, "small_mean_nfct"
        ) / pi.value(d, w, "LAS", 0.8, "small_mean_nfct")
    return ours
