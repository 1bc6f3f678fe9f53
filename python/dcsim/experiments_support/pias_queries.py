"""Shared by PIAS Figs. 8-9: query completion times from the per-flow tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dcsim import load

from . import pias as pi
from . import schemes


def data(runs: pd.DataFrame, store, qps: float) -> pd.DataFrame:
    import pyarrow.dataset as pds

    runs = runs[(runs["workload.query_rate_per_s"] - qps).abs() < 1e-9]
    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "request", "start_us", "finish_us"],
            filter=pds.field("run").isin(list(runs["run"])) & (pds.field("request") >= 0),
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[flows.run == r["run"]]
        q = f.groupby("request").agg(start=("start_us", "min"), end=("finish_us", "max"))
        qct = np.sort((q.end - q.start).dropna().to_numpy())
        rows.append(
            {
                "scheme": schemes.name(r["transport.protocol"]),
                "load": float(r["workload.load"]),
                "qps": qps,
                "queries": len(qct),
                "mean_qct_us": float(qct.mean()),
                "p99_qct_us": float(qct[min(int(np.floor(0.99 * len(qct))), len(qct) - 1)]),
            }
        )
    return pd.DataFrame(rows).sort_values(["scheme", "load"]).reset_index(drop=True).assign(workload="websearch")


def plot(d: pd.DataFrame, title: str, path: Path) -> None:
    pi.lines(
        d,
        [
            ("websearch", "mean_qct_us", "average query completion, µs"),
            ("websearch", "p99_qct_us", "99th-pct query completion, µs"),
        ],
        schemes.names("pias", "dctcp"),
        title,
        path,
    )


def compare(d: pd.DataFrame) -> dict[str, float]:
    def red(col):
        return 1 - pi.value(d, "websearch", "PIAS", 0.8, col) / pi.value(d, "websearch", "DCTCP", 0.8, col)

    return {
        "load 0.8: average query completion, reduction vs DCTCP": red("mean_qct_us"),
        "load 0.8: 99th-percentile query completion, reduction vs DCTCP": red("p99_qct_us"),
    }
