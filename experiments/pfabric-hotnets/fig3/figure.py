"""pFabric HotNets'12 Fig. 3: data mining, normalized FCT by flow size."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pfabric_hotnets as hn

TITLE = "pFabric HotNets'12 Fig. 3: data mining, normalized FCT by flow size"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = hn.KEYS
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True
SWEEP = "../fig2/sweep.toml"
#: Fig. 2's sweep covers both workloads; this figure draws the datamining runs alone, so it neither
#: runs nor waits for the websearch ones.
RUNS = "flow_sizes == 'datamining'"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = hn.data(runs)
    return d[(d.workload == "datamining") & (d.bin != "all")].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    hn.plot_breakdown(d, "datamining", TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    w = "datamining"
    ours = {
        "LineRate+pFabric (0,100KB] average, range over loads": hn.span(d, w, "0-100KB", "LineRate+pFabric"),
        "LineRate+pFabric (0,100KB] 99th percentile, range over loads": hn.span(
            d, w, "0-100KB", "LineRate+pFabric", "p99_nfct"
        ),
        "MinTCP+pFabric (0,100KB] average, range over loads": hn.span(d, w, "0-100KB", "MinTCP+pFabric"),
        "MinTCP+pFabric (0,100KB] 99th percentile, range over loads": hn.span(
            d, w, "0-100KB", "MinTCP+pFabric", "p99_nfct"
        ),
    }
    for b, label in (("100KB-10MB", "(100KB,10MB]"), ("10MB+", "(10MB,∞)")):
        worst = max(
            hn.value(d, w, b, "LineRate+pFabric", ld) / hn.value(d, w, b, "Ideal", ld) - 1
            for ld in sorted(d.load.unique())
        )
        ours[f"LineRate+pFabric {label} average, worst gap to Ideal over loads"] = f"{worst * 100:+.0f} %"
    for base in ("TCP", "DCTCP"):
        ours[f"{base} / MinTCP+pFabric, (0,100KB] average at load 0.8"] = hn.value(
            d, w, "0-100KB", base, 0.8
        ) / hn.value(d, w, "0-100KB", "MinTCP+pFabric", 0.8)
    return ours
