"""PIAS NSDI'15 Fig. 6: the testbed experiment in simulation, web search: PIAS vs DCTCP vs TCP."""

from pathlib import Path

import pandas as pd

import _pias as pi

TITLE = "PIAS Fig. 6: testbed setting, web search (16 hosts, 1 Gbps)"

SCHEMES = ["PIAS", "DCTCP", "TCP"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    d = d[d.workload == "websearch"]
    return d.drop(columns=["run"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, pi.testbed_panels("websearch"), SCHEMES, TITLE, path)


def compare(d: pd.DataFrame):
    rows = []
    for col, pub, what in (("small_mean_fct_ms", (0.37, 0.47), "average"), ("small_p99_fct_ms", (0.40, 0.51), "99th percentile")):
        reds = [1 - pi.value(d, "websearch", "PIAS", l, col) / pi.value(d, "websearch", "DCTCP", l, col) for l in sorted(d.load.unique())]
        rows.append({"metric": f"(0,100KB] {what} FCT, reduction vs DCTCP, range over loads 0.5-0.8", "published": pub, "ours": (min(reds), max(reds)), "note": "§5.1"})
    return rows


NOTES = pi.TESTBED_NOTE
