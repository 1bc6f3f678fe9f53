"""PIAS NSDI'15 Fig. 7: the testbed experiment in simulation, data mining: PIAS vs DCTCP vs TCP."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim.experiments_support import pias as pi

TITLE = "PIAS Fig. 7: testbed setting, data mining (16 hosts, 1 Gbps)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = pi.KEYS
SWEEP = "../fig6/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    return pi.testbed_data(runs, "datamining")


def plot(d: pd.DataFrame, path: Path) -> None:
    pi.testbed_plot(d, "datamining", TITLE, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return pi.testbed_compare(d, "datamining")
