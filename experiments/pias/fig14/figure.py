"""PIAS NSDI'15 Fig. 14: overall average FCT vs load, information-agnostic schemes."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PIAS Fig. 14: overall average FCT (144-host leaf-spine)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
SCHEMES = schemes.names("pias", "dctcp", "l2dct", "las")


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    return d[["workload", "scheme", "load", "flows", "mean_fct_ms", "mean_nfct"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, [(w, "mean_fct_ms", "average FCT, ms") for w in pi.WORKLOADS], SCHEMES, TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {
        "Web search, load 0.8: PIAS average FCT below LAS's": 1
        - pi.value(d, "websearch", "PIAS", 0.8, "mean_fct_ms") / pi.value(d, "websearch", "LAS", 0.8, "mean_fct_ms"),
        "Data mining, load 0.8: PIAS / LAS average FCT": pi.value(d, "datamining", "PIAS", 0.8, "mean_fct_ms")
        / pi.value(d, "datamining", "LAS", 0.8, "mean_fct_ms"),
    }
    for w, label in pi.WORKLOADS.items():
        for base in ("DCTCP", "L2DCT"):
            red, load = pi.reduction(d, w, "PIAS", base, "mean_fct_ms")
            ours[f"{label}: PIAS average FCT below {base}'s, best load ({{load}})"] = Ours(red, {"load": f"{load:g}"})
    return ours
