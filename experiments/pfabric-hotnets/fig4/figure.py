"""pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import pfabric_hotnets as hn

TITLE = "pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size"
SWEEP = "../fig2/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = hn.data(runs)
    return d[(d.workload == "websearch") & (d.bin != "all")].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    hn.plot_breakdown(d, "websearch", TITLE, path)


def compare(d: pd.DataFrame):
    w = "websearch"
    rows = [
        {"metric": f"{s} (0,100KB] 99th percentile at load 0.8", "published": pub, "ours": hn.value(d, w, "0-100KB", s, 0.8, "p99_nfct"), "note": "§3"}
        for s, pub in (("LineRate+pFabric", 1.75), ("DCTCP", 16.97), ("TCP", 66.03))
    ]
    for base in ("TCP", "DCTCP"):
        slow = hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8) / hn.value(d, w, "10MB+", base, 0.8) - 1
        rows.append({"metric": f"MinTCP+pFabric (10MB,∞) average vs {base}, load 0.8", "published": (0.20, 0.28), "ours": slow, "note": "§3: '~20-28% slowdown compared to TCP and DCTCP' (as a fraction)"})
    lr = hn.value(d, w, "10MB+", "LineRate+pFabric", 0.8) / hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8)
    rows.append({"metric": "LineRate+pFabric / MinTCP+pFabric, (10MB,∞) average at load 0.8", "published": "> 1", "ours": lr, "note": "§3: 'MinTCP+pFabric is much better than LineRate+pFabric for the large flows at high load'"})
    return rows
