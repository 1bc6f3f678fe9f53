"""PIAS NSDI'15 Fig. 16: normalized FCT of large flows, (10MB,∞) mean."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PIAS Fig. 16: (10MB,∞) average normalized FCT"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
SWEEP = "../fig14/sweep.toml"
SCHEMES = schemes.names("pias", "dctcp", "l2dct", "las")


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    return d[["workload", "scheme", "load", "large_count", "large_mean_nfct", "large_mean_fct_ms"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, [(w, "large_mean_nfct", "(10MB,∞) average NFCT") for w in pi.WORKLOADS], SCHEMES, TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    red, load = pi.reduction(d, "datamining", "PIAS", "DCTCP", "large_mean_nfct")
    return {
        "Web search, load 0.8: PIAS large-flow FCT below LAS's": 1
        - pi.value(d, "websearch", "PIAS", 0.8, "large_mean_nfct")
        / pi.value(d, "websearch", "LAS", 0.8, "large_mean_nfct"),
        "Data mining: PIAS large-flow FCT below DCTCP's, best load ({load})": Ours(red, {"load": f"{load:g}"}),
        "Web search, load 0.8: PIAS / DCTCP large-flow FCT": pi.value(d, "websearch", "PIAS", 0.8, "large_mean_nfct")
        / pi.value(d, "websearch", "DCTCP", 0.8, "large_mean_nfct"),
    }
