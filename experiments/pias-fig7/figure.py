"""PIAS NSDI'15 Fig. 7: the testbed experiment in simulation, data mining: PIAS vs DCTCP vs TCP."""

from pathlib import Path

import pandas as pd

import _pias as pi

TITLE = "PIAS Fig. 7: testbed setting, data mining (16 hosts, 1 Gbps)"
SWEEP = "../pias-fig6/sweep.toml"
SCHEMES = ["PIAS", "DCTCP", "TCP"]


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = pi.rows(runs)
    d = d[d.workload == "datamining"]
    return d.drop(columns=["run"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(d, pi.testbed_panels("datamining"), SCHEMES, TITLE, path)


def compare(d: pd.DataFrame):
    rows = []
    for col, pub, what in (("small_mean_fct_ms", (0.30, 0.45), "average"), ("small_p99_fct_ms", (0.33, 0.48), "99th percentile")):
        reds = [1 - pi.value(d, "datamining", "PIAS", l, col) / pi.value(d, "datamining", "DCTCP", l, col) for l in sorted(d.load.unique())]
        rows.append({"metric": f"(0,100KB] {what} FCT, reduction vs DCTCP, range over loads 0.5-0.8", "published": pub, "ours": (min(reds), max(reds)), "note": "§5.1"})
    return rows


NOTES = pi.TESTBED_NOTE + """\
- **Data mining gains above the published range** (average 44-61 % vs 30-45 %): the simulated
  client link is the only bottleneck and carries every flow, so large flows' queues hit small
  flows harder under DCTCP than on a testbed with host-side overheads; 1,500 flows per run also
  give the 99th percentile of ~1,200 small flows a wide spread (16-68 %).
"""
