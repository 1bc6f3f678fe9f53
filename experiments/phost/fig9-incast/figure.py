"""pHost CoNEXT'15 Fig. 9(c-d): incast, 100 MB per request from N senders."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 9(c-d): incast, 100 MB per request from N senders"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["senders"]
#: Each row comes from one run (data() computes a run's rows from that run alone; the reproduction
#: checks it), so rows of runs done in an earlier sitting can stand in for runs missing from the
#: store (`dcsim reproduce --finished-only --reuse-runs`): paper-scale seeds accumulate over sittings.
PER_RUN = True

#: Bytes a packet adds to its payload on the wire (docs/metrics.md, "Ideal FCT").
HEADER_BYTES = 40
PAYLOAD_BYTES = 1460


def receiver_bound_ms(arrival_us: np.ndarray, receiver: np.ndarray, service_us: np.ndarray) -> float:
    """The mean request completion time if each receiver's link were the only limit: every
    receiver carries its requests' bytes one request at a time, in arrival order, at its line
    rate. With requests of equal size that order minimises the mean completion time on one
    link (shortest remaining first never preempts), so no transport can do better: a lower
    bound that ignores the senders' links, the fabric and the path's latency."""
    total = 0.0
    order = np.lexsort((arrival_us, receiver))
    free_at, last = 0.0, None
    for i in order:
        if receiver[i] != last:
            free_at, last = 0.0, receiver[i]
        free_at = max(free_at, arrival_us[i]) + service_us[i]
        total += free_at - arrival_us[i]
    return total / len(order) / 1e3 if len(order) else float("nan")


def requests(store, runs: pd.DataFrame) -> pd.DataFrame:
    """Per run (indexed by run hash): the receiver bound of its requests (receiver_bound_ms)
    and the mean time from the first of a request's flows to finish to its last."""
    import pyarrow.dataset as pds

    from dcsim import load
    from dcsim.result import read_metadata
    from dcsim.sweep import run_dir

    dataset = load(store, flows=True)
    columns = ["request", "dst", "size_bytes", "start_us", "finish_us"]
    out = {}
    for run in runs["run"]:
        # One run at a time: a paper-scale run has up to 500,000 flows.
        f = dataset.to_table(
            columns=columns, filter=(pds.field("run") == run) & (pds.field("request") >= 0)
        ).to_pandas()
        f["wire_bytes"] = f.size_bytes + HEADER_BYTES * np.ceil(f.size_bytes / PAYLOAD_BYTES)
        gbps = float(read_metadata(run_dir(Path(store), str(run)))["spec"]["topology"]["host_link_gbps"])
        r = f.groupby("request").agg(
            arrival=("start_us", "min"),
            receiver=("dst", "first"),
            wire=("wire_bytes", "sum"),
            first=("finish_us", "min"),
            last=("finish_us", "max"),
        )
        service_us = r.wire.to_numpy() * 8 / (gbps * 1e3)
        out[run] = {
            "rct_bound_ms": receiver_bound_ms(r.arrival.to_numpy(), r.receiver.to_numpy(), service_us),
            "flow_spread_ms": float((r["last"] - r["first"]).mean() / 1e3),
        }
    return pd.DataFrame.from_dict(out, orient="index")


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6, workload__flow_sizes="incast-100MB")
    d["mean_fct_ms"] = d.mean_fct_us / 1e3
    d["mean_rct_ms"] = d.mean_rct_us / 1e3
    d = d.join(requests(store, runs), on="run")
    return (
        d[["protocol", "senders", "flows", "mean_fct_ms", "mean_rct_ms", "rct_bound_ms", "flow_spread_ms"]]
        .sort_values(["protocol", "senders"])
        .reset_index(drop=True)
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=4.4, height=3.0)
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p]
        dplot.line(axes[0], s.senders, s, "mean_fct_ms", p)
        dplot.line(axes[1], s.senders, s, "mean_rct_ms", p)
        dplot.line(axes[2], s.senders, s, "flow_spread_ms", p)
    # The bound depends only on the requests' arrivals, the same for every protocol at one N.
    bound = d.groupby("senders", observed=True).rct_bound_ms.mean()
    (drawn,) = axes[1].plot(bound.index, bound.to_numpy(), color="black", ls="--", lw=1, label="receivers' bound")
    axes[1].legend(handles=[drawn], loc="best", frameon=False, fontsize="small")
    axes[0].set_ylabel("(c) mean FCT, ms")
    axes[1].set_ylabel("(d) mean request completion, ms")
    axes[2].set_ylabel("(ours) first → last flow done, ms")
    for ax in axes:
        ax.set_xlabel("senders per request (N)")
    dplot.legend_once(axes)
    dplot.save(fig, path)


def _spread(d: pd.DataFrame, col: str):
    worst = 0.0
    for _, g in d.groupby("senders"):
        worst = max(worst, float(g[col].max() / g[col].min()))
    return worst


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours = {
        "mean FCT: largest max/min over the protocols at any N": _spread(d, "mean_fct_ms"),
        "mean RCT: largest max/min over the protocols at any N": _spread(d, "mean_rct_ms"),
    }
    for p in ph.PROTOCOLS.values():
        s = d[d.protocol == p].mean_rct_ms
        ours[f"{p}: mean RCT, max/min over N = 5-50"] = float(s.max() / s.min()) if len(s) else float("nan")
    return ours
