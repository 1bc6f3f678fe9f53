"""PIAS NSDI'15 Fig. 6: the testbed experiment in simulation, web search: PIAS vs DCTCP vs TCP."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi

TITLE = "PIAS Fig. 6: testbed setting, web search (16 hosts, 1 Gbps)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS


def data(runs: pd.DataFrame) -> pd.DataFrame:
    return pi.testbed_data(runs, "websearch")


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.testbed_plot(d, "websearch", TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return pi.testbed_compare(d, "websearch")
