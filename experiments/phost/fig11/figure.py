"""pHost CoNEXT'15 Fig. 11: throughput of two tenants (IMC10, web search) under pFabric and
pHost with the tenant-fair policy."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "pHost Fig. 11: two tenants, all flows injected at the start"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS: list[str] = []
TENANTS = {0: "IMC10 tenant", 1: "Web search tenant"}


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "tenant", "size_bytes", "start_us", "finish_us"],
            filter=__import__("pyarrow.dataset", fromlist=["field"]).field("run").isin(list(runs["run"])),
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[flows.run == r["run"]]
        scheme = schemes.name(r["transport.protocol"], {"phost.policy": r["phost.policy"]})
        ends = f.groupby("tenant").finish_us.max()
        both = float(ends.min())  # until the first tenant is done, both compete
        for t, name in TENANTS.items():
            g = f[f.tenant == t]
            done_early = g[g.finish_us <= both]
            rows.append(
                {
                    "scheme": scheme,
                    "tenant": name,
                    "flows": len(g),
                    "bytes": float(g.size_bytes.sum()),
                    "last_finish_us": float(g.finish_us.max()),
                    "throughput_gbps": float(g.size_bytes.sum())
                    * 8
                    / (float(g.finish_us.max()) - float(g.start_us.min()))
                    / 1e3,
                    "both_active_us": both,
                    "throughput_both_active_gbps": float(done_early.size_bytes.sum()) * 8 / both / 1e3
                    if both > 0
                    else np.nan,
                }
            )
    d = pd.DataFrame(rows)
    tot = d.groupby("scheme").throughput_both_active_gbps.transform("sum")
    d["share_both_active"] = d.throughput_both_active_gbps / tot
    return d


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(2, TITLE, width_per_panel=4.4, height=3.0)
    series = [schemes.name("pfabric"), schemes.name("phost", {"phost.policy": "tenant-fair"})]
    x = np.arange(len(series))
    colors = {"IMC10 tenant": "#1f77b4", "Web search tenant": "#ff7f0e"}
    for col, ax, label in (
        ("share_both_active", axes[0], "(a) share of throughput while both run"),
        ("throughput_gbps", axes[1], "(b) tenant throughput, Gbps (own span)"),
    ):
        for i, t in enumerate(TENANTS.values()):
            ys = [
                float(d[(d.scheme == s) & (d.tenant == t)][col].iloc[0])
                if len(d[(d.scheme == s) & (d.tenant == t)])
                else np.nan
                for s in series
            ]
            ax.bar(x + (i - 0.5) * 0.38, ys, 0.38, label=t, color=colors[t])
            if f"{col}_ci95" in d.columns:
                errs = [
                    float(d[(d.scheme == s) & (d.tenant == t)][f"{col}_ci95"].iloc[0])
                    if len(d[(d.scheme == s) & (d.tenant == t)])
                    else np.nan
                    for s in series
                ]
                dplot.errorbars(ax, x + (i - 0.5) * 0.38, ys, errs, "black")
        ax.set_xticks(x)
        ax.set_xticklabels(series)
        ax.set_ylabel(label)
    dplot.legend_once(axes)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    for s in (schemes.name("pfabric"), schemes.name("phost", {"phost.policy": "tenant-fair"})):
        g = d[(d.scheme == s) & (d.tenant == "IMC10 tenant")]
        ours[f"{s}: IMC10 tenant's share of throughput while both run"] = (
            float(g.share_both_active.iloc[0]) if len(g) else float("nan")
        )
    return ours
