"""Shared by the pHost (CoNEXT'15) reproductions: protocol and workload names, the figures'
numbers from a sweep's summaries, and a grouped-bar plot."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import schemes

#: The protocols the pHost paper compares, by ``transport.protocol``, in the figures' order.
PROTOCOLS = {p: schemes.name(p) for p in ("pfabric", "phost", "fastpass")}
#: pHost under the authors'-code preset (Fig. 3 only).
PHOST_CODE = schemes.name("phost", {"phost.preset": "authors-code"})
WORKLOADS = {"imc10": "IMC10", "websearch": "Web search", "datamining": "Data mining"}
HOSTS = 144
HOST_GBPS = 10.0


def long_bins(workload: str) -> list[str]:
    """pHost Fig. 4: long flows are > 10 MB (web search, data mining) or > 100 KB (IMC10)."""
    return ["100KB-10MB", "10MB+"] if workload == "imc10" else ["10MB+"]


def _get(r: pd.Series, key: str, default):
    """A run's value for a spec field, `default` where the sweep did not set it."""
    v = r.get(key, default)
    return default if v is None or (isinstance(v, float) and np.isnan(v)) else v


def _pooled_mean(r: pd.Series, bins: Sequence[str]) -> float:
    n = sum(float(r.get(f"bins.{b}.count", 0) or 0) for b in bins)
    if n == 0:
        return float("nan")
    return (
        sum(float(r.get(f"bins.{b}.count", 0) or 0) * float(r.get(f"bins.{b}.mean_slowdown", 0) or 0) for b in bins) / n
    )


def rows(runs: pd.DataFrame, **fixed) -> pd.DataFrame:
    """One row per run: the metrics every pHost figure draws from. `fixed` gives the values of
    spec fields the sweep does not vary (dotted names with `__` for `.`), e.g.
    ``workload__load=0.6``."""
    out = []
    all_bins = ["0-100KB", "100KB-10MB", "10MB+"]
    runs = runs.copy()
    for k, v in fixed.items():
        runs[k.replace("__", ".")] = v
    for _, r in runs.iterrows():
        w = r["workload.flow_sizes"]
        long = long_bins(w) if w in WORKLOADS else ["10MB+"]
        short = [b for b in all_bins if b not in long]
        drops = {
            h: float(r.get(f"drops_by_hop.{h}", 0) or 0) for h in ("source_nic", "tor_uplink", "core", "tor_downlink")
        }
        injected = float(r["data_packets_injected"]) + float(r["control_packets_injected"])
        out.append(
            {
                "run": r["run"],
                "workload": w,
                "protocol": schemes.name(r["transport.protocol"], {"phost.preset": _get(r, "phost.preset", "paper")}),
                "load": float(r["workload.load"]),
                "deadlines": float(_get(r, "workload.deadline_mean_us", 0)) > 0,
                # Scheduled earliest deadline first (the sweeps vary the three protocols' policies
                # together), rather than as without deadlines.
                "edf": _get(r, "phost.policy", "srpt") == "edf",
                "p_small": float(_get(r, "workload.bimodal.p_small", 0.5)),
                "senders": int(_get(r, "workload.incast_senders", 0)),
                "buffer_bytes": int(_get(r, "topology.buffer_bytes", 36864)),
                "flows": int(r["flows_completed"]),
                "mean_slowdown": float(r["mean_slowdown"]),
                "p99_slowdown": float(r["p99_slowdown"]),
                "short_mean_slowdown": _pooled_mean(r, short),
                "long_mean_slowdown": _pooled_mean(r, long),
                "nfct": float(r["nfct"]),
                "throughput_norm": float(_get(r, "throughput_during_arrivals_gbps", 0)) / (HOSTS * HOST_GBPS),
                "deadline_met": float(r["deadline_met_fraction"]),
                "drop_rate": sum(drops.values()) / injected if injected else float("nan"),
                **{f"drops_{h}": v for h, v in drops.items()},
                "injected_packets": injected,
                "mean_fct_us": float(r["mean_fct_us"]),
                "mean_rct_us": float(_get(r, "mean_request_completion_us", 0)),
            }
        )
    d = pd.DataFrame(out)
    d["protocol"] = pd.Categorical(d["protocol"], list(PROTOCOLS.values()) + [PHOST_CODE], ordered=True)
    return d.sort_values(["workload", "protocol", "load"]).reset_index(drop=True)


def short_p99(runs: pd.DataFrame, store) -> pd.Series:
    """Per run (indexed by run hash): the 99th-percentile slowdown of its short flows (Fig. 4's
    definition), from the per-flow tables."""
    import pyarrow.dataset as pds

    from dcsim import load

    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "size_bytes", "slowdown", "completed"], filter=pds.field("run").isin(list(runs["run"]))
        )
        .to_pandas()
    )
    out = {}
    for _, r in runs.iterrows():
        f = flows[(flows.run == r["run"]) & flows.completed]
        cut = 100e3 if r["workload.flow_sizes"] == "imc10" else 10e6
        s = np.sort(f[f.size_bytes <= cut].slowdown.to_numpy())
        # Same convention as the summary's percentiles: the value at index floor(0.99 n).
        out[r["run"]] = float(s[min(int(np.floor(0.99 * len(s))), len(s) - 1)]) if len(s) else float("nan")
    return pd.Series(out)


def pick(d: pd.DataFrame, **where) -> pd.DataFrame:
    m = np.ones(len(d), dtype=bool)
    for k, v in where.items():
        col = d[k]
        m &= (np.abs(col - v) < 1e-9) if isinstance(v, float) else (col == v)
    return d[m]


def value(d: pd.DataFrame, col: str, **where) -> float:
    s = pick(d, **where)[col]
    return float(s.iloc[0]) if len(s) else float("nan")


def bars(
    ax,
    d: pd.DataFrame,
    col: str,
    groups: dict[str, str],
    group_col: str = "workload",
    ylabel: str = "",
    log: bool = False,
) -> None:
    """Grouped bars: one group per `groups` key, one bar per protocol."""
    protos = [p for p in list(PROTOCOLS.values()) + [PHOST_CODE] if (d.protocol == p).any()]
    width = 0.8 / len(protos)
    x = np.arange(len(groups))
    for i, p in enumerate(protos):
        ys = [value(d, col, **{group_col: g, "protocol": p}) for g in groups]
        color = dplot.SERIES.get(p, ("#98df8a", None))[0]
        at = x + (i - (len(protos) - 1) / 2) * width
        ax.bar(at, ys, width, label=p, color=color)
        if f"{col}_ci95" in d.columns:
            errs = [value(d, f"{col}_ci95", **{group_col: g, "protocol": p}) for g in groups]
            dplot.errorbars(ax, at, ys, errs, "black")
    ax.set_xticks(x)
    ax.set_xticklabels(list(groups.values()))
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")


def ratios(
    d: pd.DataFrame, col: str, num: str, den: str, label: str, groups: Iterable[str] = WORKLOADS, **where
) -> dict[str, float]:
    """num/den of `col` per workload, keyed by comparison metric (``"<Workload>: <label>"``)."""
    out = {}
    for w in groups:
        a = value(d, col, workload=w, protocol=num, **where)
        b = value(d, col, workload=w, protocol=den, **where)
        out[f"{WORKLOADS.get(w, w)}: {label}"] = a / b if b else float("nan")
    return out


def save_bars(d: pd.DataFrame, panels, title: str, path: Path, width_per_panel: float = 3.6) -> None:
    """`panels`: (column, y label, log scale) per panel; workloads as groups."""
    fig, axes = dplot.grid(len(panels), title, width_per_panel=width_per_panel, height=2.9)
    for ax, (col, label, log) in zip(axes, panels):
        bars(ax, d, col, WORKLOADS, ylabel=label, log=log)
    dplot.legend_once(axes)
    dplot.save(fig, path)
