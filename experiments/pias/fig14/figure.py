"""PIAS NSDI'15 Fig. 14: overall average FCT vs load, information-agnostic schemes."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import pias as pi

TITLE = "PIAS Fig. 14: overall average FCT (144-host leaf-spine)"
SCHEMES = ["PIAS", "DCTCP", "L2DCT", "LAS"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    return d[["workload", "scheme", "load", "flows", "mean_fct_ms", "mean_nfct"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, [(w, "mean_fct_ms", "average FCT, ms") for w in pi.WORKLOADS], SCHEMES, TITLE, path)


def compare(d: pd.DataFrame):
    rows = []
    r = 1 - pi.value(d, "websearch", "PIAS", 0.8, "mean_fct_ms") / pi.value(d, "websearch", "LAS", 0.8, "mean_fct_ms")
    rows.append({"metric": "Web search, load 0.8: PIAS average FCT below LAS's", "published": 0.28, "ours": r, "note": "§5.3.1: 'outperforms LAS by 28% (at 0.8 load)'"})
    r = pi.value(d, "datamining", "PIAS", 0.8, "mean_fct_ms") / pi.value(d, "datamining", "LAS", 0.8, "mean_fct_ms")
    rows.append({"metric": "Data mining, load 0.8: PIAS / LAS average FCT", "published": 1.0, "ours": r, "note": "§5.3.1: 'PIAS is close to LAS in the data mining workload'"})
    for w, label in pi.WORKLOADS.items():
        for base in ("DCTCP", "L2DCT"):
            red, load = pi.reduction(d, w, "PIAS", base, "mean_fct_ms")
            rows.append({"metric": f"{label}: PIAS average FCT below {base}'s, best load ({load:g})", "published": None, "ours": red, "note": "§5.3.1: 'an obvious advantage over DCTCP and L2DCT in all cases' (no number)"})
    return rows
