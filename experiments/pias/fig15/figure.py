"""PIAS NSDI'15 Fig. 15: normalized FCT of small flows, (0,100KB] mean and 99th percentile."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import pias as pi

TITLE = "PIAS Fig. 15: (0,100KB] normalized FCT"
SWEEP = "../fig14/sweep.toml"
SCHEMES = ["PIAS", "DCTCP", "L2DCT", "LAS"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    return d[["workload", "scheme", "load", "small_count", "small_mean_nfct", "small_p99_nfct"]]


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, pi.small_flow_panels(pi.WORKLOADS), SCHEMES, TITLE, path)


def compare(d: pd.DataFrame):
    rows = []
    for w, label in pi.WORKLOADS.items():
        for base, pub in (("DCTCP", 0.50), ("L2DCT", 0.40)):
            red, load = pi.reduction(d, w, "PIAS", base, "small_mean_nfct")
            rows.append({"metric": f"{label}: (0,100KB] average, largest reduction vs {base} (load {load:g})", "published": pub, "ours": red, "note": f"§5.3.1: 'improving the average FCT by up to {int(pub * 100)}%' (both workloads together)"})
        r = pi.value(d, w, "PIAS", 0.8, "small_mean_nfct") / pi.value(d, w, "LAS", 0.8, "small_mean_nfct")
        rows.append({"metric": f"{label}: (0,100KB] average, PIAS / LAS at 0.8", "published": 1.0, "ours": r, "note": "§5.3.1: 'PIAS achieves similar performance as LAS for short flows'"})
    return rows
