"""PIAS NSDI'15 Fig. 9: query completion times at 40 queries per second (Memcached benchmark in
simulation), PIAS vs DCTCP."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias_queries as pq

TITLE = "PIAS Fig. 9: query completion time, 40 queries/s over web-search background"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["load", "qps"]
SWEEP = "../fig8/sweep.toml"


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    return pq.data(runs, store, 40)


def plot(d: pd.DataFrame, path: Path) -> None:
    pq.plot(d, TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return pq.compare(d)
