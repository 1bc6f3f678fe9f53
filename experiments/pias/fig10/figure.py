"""PIAS NSDI'15 Fig. 10: end-host queueing delay, the RTT of pings from a sender that also
sends 1 to 8 long TCP flows, with and without PIAS at the end host."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "PIAS Fig. 10: RTT of pings behind 1-8 long flows at the sender (10 Gbps, 3 servers)"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["background_flows"]
#: The pings' size in the traces (traces.py); every other flow is a background flow.
PING_BYTES = 64
SERIES = schemes.names("pias", "tcp")


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    import pyarrow.dataset as pds

    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "size_bytes", "finish_us", "fct_us", "ideal_fct_us"],
            filter=pds.field("run").isin(list(runs["run"])),
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[flows.run == r["run"]]
        pings, bulk = f[f.size_bytes == PING_BYTES], f[f.size_bytes != PING_BYTES]
        # A ping is a one-packet flow: its FCT, first byte sent to its ACK back, is its RTT.
        rtt = np.sort(pings.fct_us.to_numpy())
        wait = np.sort((pings.fct_us - pings.ideal_fct_us).to_numpy())
        rows.append(
            {
                "scheme": schemes.name(r["transport.protocol"]),
                "background_flows": len(bulk),
                "pings": len(rtt),
                "mean_rtt_us": float(rtt.mean()),
                "p99_rtt_us": float(rtt[min(int(np.floor(0.99 * len(rtt))), len(rtt) - 1)]),
                "idle_rtt_us": float(pings.ideal_fct_us.mean()),
                "mean_queueing_us": float(wait.mean()),
                "max_queueing_us": float(wait[-1]),
                # The background flows all start at 0: their bytes over the time the last ends.
                "background_goodput_gbps": float(bulk.size_bytes.sum() * 8 / (bulk.finish_us.max() * 1e3)),
            }
        )
    return pd.DataFrame(rows).sort_values(["scheme", "background_flows"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    panels = [("mean_rtt_us", "average ping RTT, µs"), ("p99_rtt_us", "99th-percentile ping RTT, µs")]
    fig, axes = dplot.grid(len(panels), TITLE, width_per_panel=4.2, height=3.0)
    for ax, (col, label) in zip(axes, panels):
        for s in SERIES:
            ser = d[d.scheme == s]
            dplot.line(ax, ser.background_flows, ser, col, s, marker="o")
        idle = d.sort_values("background_flows")
        ax.plot(idle.background_flows, idle.idle_rtt_us, color="black", linestyle="--", linewidth=1)
        ax.set_xlabel("long flows at the sender")
        ax.set_ylabel(label)
        ax.set_yscale("log")
    axes[0].plot([], [], color="black", linestyle="--", linewidth=1, label="idle network")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    def at(scheme: str, n: int, col: str) -> float:
        s = d[(d.scheme == schemes.name(scheme)) & (d.background_flows == n)][col]
        return float(s.iloc[0]) if len(s) else float("nan")  # NaN: its run is missing

    pias = d[d.scheme == schemes.name("pias")]
    return {
        "without PIAS, 8 long flows: largest queueing delay of a ping, µs": at("tcp", 8, "max_queueing_us"),
        "with PIAS: average ping RTT, µs (1-8 long flows)": (
            float(pias.mean_rtt_us.min()),
            float(pias.mean_rtt_us.max()),
        ),
        "with PIAS: 99th-percentile ping RTT, µs (1-8 long flows)": (
            float(pias.p99_rtt_us.min()),
            float(pias.p99_rtt_us.max()),
        ),
        "with PIAS: the long flows' goodput, Gbps (1-8 long flows)": (
            float(pias.background_goodput_gbps.min()),
            float(pias.background_goodput_gbps.max()),
        ),
    }
