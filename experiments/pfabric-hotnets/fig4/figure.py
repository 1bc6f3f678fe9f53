"""pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pfabric_hotnets as hn

TITLE = "pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = hn.KEYS
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True
SWEEP = "../fig2/sweep.toml"
#: Fig. 2's sweep covers both workloads; this figure draws the websearch runs alone, so it neither
#: runs nor waits for the datamining ones.
RUNS = "flow_sizes == 'websearch'"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = hn.data(runs)
    return d[(d.workload == "websearch") & (d.bin != "all")].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    hn.plot_breakdown(d, "websearch", TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    w = "websearch"
    ours = {
        f"{s} (0,100KB] 99th percentile at load 0.8": hn.value(d, w, "0-100KB", s, 0.8, "p99_nfct")
        for s in ("LineRate+pFabric", "DCTCP", "TCP")
    }
    for base in ("TCP", "DCTCP"):
        ours[f"MinTCP+pFabric (10MB,∞) average vs {base}, load 0.8"] = (
            hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8) / hn.value(d, w, "10MB+", base, 0.8) - 1
        )
    ours["LineRate+pFabric / MinTCP+pFabric, (10MB,∞) average at load 0.8"] = hn.value(
        d, w, "10MB+", "LineRate+pFabric", 0.8
    ) / hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8)
    return ours
