"""PIAS NSDI'15 Fig. 18: web search on a 3:1 oversubscribed fabric with ECMP, PIAS vs DCTCP."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi
from dcsim.experiments_support import schemes
from dcsim.reproduce import Ours

TITLE = "PIAS Fig. 18: 3:1 oversubscribed leaf-spine, ECMP, web search"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["host_load", "load"]
SCHEMES = schemes.names("pias", "dctcp")


def data(runs: pd.DataFrame) -> pd.DataFrame:
    runs = runs.copy()
    runs["workload.flow_sizes"] = "websearch"
    d = pi.rows(runs)
    d["host_load"] = d.load
    d["load"] = d.host_load * 2  # the figure's x axis: load at the fabric's core (§5.3.3)
    return d[
        ["scheme", "host_load", "load", "flows", "mean_fct_ms", "small_mean_fct_ms", "small_mean_nfct", "mean_nfct"]
    ].assign(workload="websearch")


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.lines(
        d,
        [
            ("websearch", "mean_fct_ms", "overall average FCT, ms"),
            ("websearch", "small_mean_fct_ms", "(0,100KB] average FCT, ms"),
        ],
        SCHEMES,
        TITLE,
        path,
    )


def compare(d: pd.DataFrame) -> dict[str, Any]:
    small, ls = pi.reduction(d, "websearch", "PIAS", "DCTCP", "small_mean_fct_ms")
    overall, lo = pi.reduction(d, "websearch", "PIAS", "DCTCP", "mean_fct_ms")
    return {
        "(0,100KB] average FCT, largest reduction vs DCTCP (core load {load})": Ours(small, {"load": f"{ls:g}"}),
        "overall average FCT, largest reduction vs DCTCP (core load {load})": Ours(overall, {"load": f"{lo:g}"}),
    }
