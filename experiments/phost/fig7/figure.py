"""pHost CoNEXT'15 Fig. 7: stability: packets waiting at the sources as the run progresses."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import Result
from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph
from dcsim.sweep import run_dir

TITLE = "pHost Fig. 7: stability (web search): pending packets at the sources"
LOADS = (0.6, 0.7, 0.8)
#: Curves over a run's time are not averaged over seeds: the figure draws each seed's.
PER_SEED = True


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    rows = []
    for _, r in runs.iterrows():
        load = float(r["workload.load"])
        if not any(abs(load - x) < 1e-9 for x in LOADS):
            continue
        series = Result.read(run_dir(Path(store), r["run"])).timeseries
        arrived = series.arrived_packets.to_numpy(dtype=float)
        injected = series.injected_packets.to_numpy(dtype=float)
        t = series.t_us.to_numpy(dtype=float)
        total = arrived[-1] if len(arrived) else 0.0
        if total == 0:
            continue
        # Up to the last arrival: afterwards the sources only drain.
        end = int(np.argmax(arrived >= total)) + 1
        for i in range(end):
            rows.append(
                {
                    "protocol": ph.PROTOCOLS[r["transport.protocol"]],
                    "load": load,
                    "t_us": t[i],
                    "arrived_fraction": arrived[i] / total,
                    "pending_fraction": (arrived[i] - injected[i]) / total,
                }
            )
    return pd.DataFrame(rows)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=3.6, height=2.9)
    colors = {0.6: "#2ca02c", 0.7: "#ff7f0e", 0.8: "#d62728"}
    for ax, p in zip(axes, ph.PROTOCOLS.values()):
        for load in LOADS:
            s = d[(d.protocol == p) & ((d.load - load).abs() < 1e-9)]
            for i, (_, one) in enumerate(s.groupby("seed") if "seed" in s.columns else [(None, s)]):
                label = f"load {load}" if i == 0 else None
                ax.plot(one.arrived_fraction, one.pending_fraction, color=colors[load], label=label, linewidth=1)
        ax.set_title(p)
        ax.set_xlabel("fraction of packets arrived at sources")
        ax.set_ylabel("fraction pending (not yet injected)")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def growth(d: pd.DataFrame, protocol: str, load: float) -> float:
    """Mean pending fraction over the last third of arrivals over that over the middle third."""
    s = d[(d.protocol == protocol) & ((d.load - load).abs() < 1e-9)]
    if not len(s):
        return float("nan")
    middle = s[(s.arrived_fraction > 1 / 3) & (s.arrived_fraction <= 2 / 3)].pending_fraction.mean()
    late = s[s.arrived_fraction > 2 / 3].pending_fraction.mean()
    return float(late / middle) if middle else float("nan")


def compare(d: pd.DataFrame) -> dict[str, Any]:
    return {
        f"{p}, load {load}: pending packets, last third / middle third of arrivals": growth(d, p, load)
        for p in ph.PROTOCOLS.values()
        for load in LOADS
    }
