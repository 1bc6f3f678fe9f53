"""Shared by the PASE (SIGCOMM'14, "Friends, not Foes") reproductions: each run's numbers and
the spec fields that name its scheme, per-flow FCT distributions, and line plots.

A run's parameters are read from its resolved spec (``spec.toml`` in the run store), not from
the sweep's axes: the PASE figures share runs (the default PASE at a left-right load is the same
run in Figs. 9-12), and a shared run's ``params.json`` holds only the axes of the sweep that ran
it first."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The numeric columns that, with the scenario, scheme and panel, identify a row of :func:`rows`.
KEYS = ["load", "deadline_mean_ms"]
#: The same for a figure that adds FCT distributions (rows of :func:`fct_cdfs`).
CDF_KEYS = [*KEYS, "cdf"]

#: The loads of every load sweep (the paper's x axes: 10-90 %).
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]

#: The scenario a run belongs to, by its traffic matrix.
SCENARIOS = {"left-right": "left-right inter-rack", "intra-rack": "all-to-all intra-rack", "fan-in": "testbed"}


def spec_of(store: Path, run: str) -> dict[str, Any]:
    """The resolved spec of run `run` in the run store `store`."""
    return tomllib.loads((Path(store) / "runs" / run / "spec.toml").read_text())


def field(spec: Mapping[str, Any], dotted: str) -> Any:
    cur: Any = spec
    for part in dotted.split("."):
        cur = cur[part]
    return cur


def fields(store: Path, run_ids: Iterable[str], dotted: Sequence[str]) -> pd.DataFrame:
    """The spec fields `dotted` of each run (one row per run, in the order of `run_ids`)."""
    ids = list(run_ids)
    specs = [spec_of(store, r) for r in ids]
    return pd.DataFrame({f: [_plain(field(s, f)) for s in specs] for f in dotted}, index=ids)


def _plain(v: Any) -> Any:
    """A spec value as a plain Python scalar (a TOML integer stays an int, a bool a bool)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return v


def scheme(spec: Mapping[str, Any], variant: Sequence[str] = ()) -> str:
    """The display name of a run: its protocol, and for PASE the variant the fields `variant`
    tell apart (e.g. ``("pase.queues",)``)."""
    protocol = field(spec, "transport.protocol")
    if protocol != "pase" or not variant:
        return schemes.name(protocol)
    return schemes.name(protocol, {f: _plain(field(spec, f)) for f in variant})


def rows(runs: pd.DataFrame, store: Path, variant: Sequence[str] = ()) -> pd.DataFrame:
    """One row per run: scenario, scheme, load, seed, FCTs (ms), application throughput and the
    measurements the READMEs explain differences with (delivered throughput while flows
    arrive, drops, PASE's arbitration counters)."""
    flows = flow_table(store, runs["run"], ("run", "fct_us", "retransmits", "timeouts"))
    per_run = flows.groupby("run")
    p99 = per_run.fct_us.quantile(0.99)
    median = per_run.fct_us.median()
    retransmits = per_run.retransmits.sum()
    timeouts = per_run.timeouts.sum()
    out = []
    for _, r in runs.iterrows():
        spec = spec_of(store, r["run"])
        sizes = field(spec, "workload.flow_sizes")
        out.append(
            {
                "run": r["run"],
                "scenario": SCENARIOS.get(field(spec, "workload.matrix"), field(spec, "workload.matrix")),
                "sizes_kb": f"{sizes['uniform'][0] // 1000}-{sizes['uniform'][1] // 1000}"
                if isinstance(sizes, dict)
                else str(sizes),
                "scheme": scheme(spec, variant),
                "load": float(field(spec, "workload.load")),
                "seed": int(field(spec, "seed")),
                "deadline_mean_ms": float(field(spec, "workload.deadline_mean_us")) / 1e3,
                "flows": int(r["flows_completed"]),
                "mean_fct_ms": float(r["mean_fct_us"]) / 1e3,
                "median_fct_ms": float(median[r["run"]]) / 1e3,
                "p99_fct_ms": float(p99[r["run"]]) / 1e3,
                "mean_slowdown": float(r["mean_slowdown"]),
                "app_throughput": float(r["deadline_met_fraction"]) if float(r["deadline_flows"]) > 0 else np.nan,
                "throughput_during_arrivals_gbps": float(r["throughput_during_arrivals_gbps"]),
                "drops": int(sum(float(r.get(f"drops_by_hop.{h}", 0) or 0) for h in _HOPS)),
                "drops_tor_downlink": int(float(r.get("drops_by_hop.tor_downlink", 0) or 0)),
                "arbitration_requests": _count(r, "transport_counters.arbitration_requests"),
                "arbitration_switch_messages": _count(r, "transport_counters.arbitration_switch_messages"),
                "arbitration_pruned": _count(r, "transport_counters.arbitration_pruned"),
                "control_packets": _count(r, "control_packets_injected"),
                "data_packets": _count(r, "data_packets_injected"),
                "retransmits": int(retransmits[r["run"]]),
                "timeouts": int(timeouts[r["run"]]),
            }
        )
    return pd.DataFrame(out)


_HOPS = ("source_nic", "tor_uplink", "core", "tor_downlink")


def _count(r: pd.Series, col: str) -> float:
    v = r.get(col, np.nan)
    return float(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else np.nan


def flow_table(store: Path, run_ids: Iterable[str], columns: Sequence[str] = ("run", "fct_us")) -> pd.DataFrame:
    """The per-flow table of the runs `run_ids` (the columns asked for)."""
    import pyarrow.dataset as ds

    return (
        load(store, flows=True).to_table(columns=list(columns), filter=ds.field("run").isin(list(run_ids))).to_pandas()
    )


#: Quantiles at which a CDF of FCTs is kept in a figure's data (0, 0.5, ..., 100 %).
CDF_POINTS = np.linspace(0.0, 1.0, 201)


def fct_cdfs(store: Path, d: pd.DataFrame, load_: float) -> pd.DataFrame:
    """The FCT distribution of each run of `d` (rows of :func:`rows`) at load `load_`: per
    scheme, the FCT (ms) at each quantile of :data:`CDF_POINTS`."""
    sel = d[(d.load - load_).abs() < 1e-9]
    flows = flow_table(store, sel.run)
    out = []
    for _, r in sel.iterrows():
        fct = np.sort(flows[flows.run == r["run"]].fct_us.to_numpy()) / 1e3
        q = np.quantile(fct, CDF_POINTS)
        for p, x in zip(CDF_POINTS, q):
            out.append({"scenario": r["scenario"], "scheme": r["scheme"], "load": load_, "cdf": p, "fct_ms": x})
    return pd.DataFrame(out)


def value(d: pd.DataFrame, scheme_: str, load_: float, col: str, **where: Any) -> float:
    """`col` of scheme `scheme_` at load `load_` (the mean over seeds), among rows matching `where`."""
    m = (d.scheme == scheme_) & ((d.load - load_).abs() < 1e-9)
    for k, v in where.items():
        m &= d[k] == v
    s = d[m][col].dropna()
    return float(s.mean()) if len(s) else float("nan")


def improvement(d: pd.DataFrame, better: str, worse: str, col: str, loads: Iterable[float], **where: Any) -> list:
    """Per load, 100 × (1 − better / worse): how much lower `better`'s `col` is, in %."""
    return [100 * (1 - value(d, better, ld, col, **where) / value(d, worse, ld, col, **where)) for ld in loads]


def span(xs: Sequence[float]) -> tuple[float, float]:
    """(smallest, largest) of `xs` ignoring NaN; (NaN, NaN) when no value is known (a seed
    without the runs a metric needs), without numpy's all-NaN warning."""
    known = np.asarray(xs, dtype=float)
    known = known[~np.isnan(known)]
    return (float(known.min()), float(known.max())) if known.size else (float("nan"), float("nan"))


def title(base: str, d: pd.DataFrame, path: Path) -> str:
    """The figure's title with its scale (the results folder's name, ``quick`` or ``paper``)
    and the flows per run, so a quick-scale plot says so."""
    scale = Path(path).parent.name
    n = d["flows"].dropna() if "flows" in d else pd.Series(dtype=float)
    flows = f", {int(n.min()):,}-{int(n.max()):,} flows per run" if len(n) and n.min() != n.max() else ""
    if len(n) and n.min() == n.max():
        flows = f", {int(n.min()):,} flows per run"
    return f"{base}\n({scale} scale{flows})" if scale in ("quick", "paper") else base


def lines(
    ax: Any,
    d: pd.DataFrame,
    series: Sequence[str],
    col: str,
    ylabel: str,
    title_: str = "",
    log: bool = False,
    percent_load: bool = True,
) -> None:
    """One line per scheme of `series` against load (in %, the paper's axes)."""
    for s in series:
        cols = [c for c in (col, f"{col}_ci95") if c in d.columns]
        ser = d[d.scheme == s].groupby("load", as_index=False)[cols].mean()
        if len(ser):
            x = ser.load * 100 if percent_load else ser.load
            dplot.line(ax, x, ser, col, s)
    ax.set_xlabel("offered load (%)")
    ax.set_ylabel(ylabel)
    if title_:
        ax.set_title(title_)
    if log:
        from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def cdf(ax: Any, c: pd.DataFrame, series: Sequence[str], title_: str = "", xmax: float | None = None) -> None:
    """FCT CDFs (rows of :func:`fct_cdfs`), one line per scheme, in % of flows; averaged over
    seeds (the mean FCT at each quantile), with a band for its 95 % interval."""
    for s in series:
        ser = c[c.scheme == s]
        if len(ser):
            kw = dplot.style(s)
            kw.pop("marker", None)
            (drawn,) = ax.plot(ser.fct_ms, ser.cdf * 100, **kw)
            err = dplot.ci95(ser, "fct_ms")
            if err is not None:
                ax.fill_betweenx(
                    ser.cdf * 100, ser.fct_ms - err, ser.fct_ms + err, color=drawn.get_color(), alpha=0.2, linewidth=0
                )
    ax.set_xlabel("FCT (ms, log scale)")
    ax.set_ylabel("fraction of flows (%)")
    # A log axis up to the slowest 99th percentile: the body of every distribution shows, however
    # far apart their tails are.
    ax.set_xscale("log")
    if xmax is None and len(c):
        xmax = float(c[c.cdf <= 0.99].groupby("scheme").fct_ms.max().max())
    if xmax:
        ax.set_xlim(right=xmax)
    if title_:
        ax.set_title(title_)


def bars(
    ax: Any,
    loads: Sequence[float],
    values: Sequence[float],
    ylabel: str,
    title_: str = "",
    color: str = "",
    errors: Sequence[float] | None = None,
) -> None:
    """One bar per load (in %), with its 95 % interval (`errors`, half-widths) when given."""
    x = [ld * 100 for ld in loads]
    ax.bar(x, values, width=6, color=color or dplot.SERIES["PASE"][0])
    dplot.errorbars(ax, x, values, errors, "black")
    ax.set_xticks(x if len(x) < 5 else x[1::2])
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("offered load (%)")
    ax.set_ylabel(ylabel)
    if title_:
        ax.set_title(title_)
