"""pHost CoNEXT'15 Fig. 9(a-b): the permutation traffic matrix, both as a true permutation (a
random derangement) and as the pHost authors' `PermutationTM` first ran it (every host sends to
itself)."""

from pathlib import Path
from typing import Any

import pandas as pd

from dcsim import plot as dplot
from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 9(a-b): permutation traffic matrix, load 0.6"
#: With the non-numeric columns, what identifies a row of data(); the others are averaged over seeds.
KEYS = ["short_percent"]
#: The two values of ``workload.matrix`` the sweep crosses with every point, and what each is.
MATRICES = {
    "permutation": "true permutation (random derangement)",
    "self": "the authors' first PermutationTM: every host sends to itself",
}
#: The comparison rows of the "self" runs: the derangement's metric text with this appended.
SELF_ROWS = ", every host to itself (authors' code)"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs, workload__load=0.6)
    d["matrix"] = d.run.map(runs.set_index("run")["workload.matrix"])
    d["short_percent"] = d.p_small * 100
    return d[["matrix", "workload", "short_percent", "protocol", "flows", "mean_slowdown", "p99_slowdown"]].reset_index(
        drop=True
    )


def plot(d: pd.DataFrame, path: Path) -> None:
    """One row of panels per matrix: (a) the traces, (b) the bimodal workload."""
    fig, axes = dplot.grid(2 * len(MATRICES), TITLE, width_per_panel=4.6, height=3.0)
    for row, (matrix, what) in enumerate(MATRICES.items()):
        traces_ax, bimodal_ax = axes[2 * row], axes[2 * row + 1]
        m = d[d.matrix == matrix]
        ph.bars(traces_ax, m[m.workload != "bimodal"], "mean_slowdown", ph.WORKLOADS, ylabel="(a) mean slowdown")
        syn = m[m.workload == "bimodal"].sort_values("short_percent")
        for p in ph.PROTOCOLS.values():
            s = syn[syn.protocol == p]
            dplot.line(bimodal_ax, s.short_percent, s, "mean_slowdown", p)
        bimodal_ax.set_xlabel("short flows, % (bimodal workload)")
        bimodal_ax.set_ylabel("(b) mean slowdown")
        for ax in (traces_ax, bimodal_ax):
            ax.set_title(f'matrix "{matrix}": {what}', fontsize="small")
    # The same y range down each column, so the two matrices' bars and curves compare by eye.
    for column in (axes[0::2], axes[1::2]):
        low = min(ax.get_ylim()[0] for ax in column)
        high = max(ax.get_ylim()[1] for ax in column)
        for ax in column:
            ax.set_ylim(low, high)
    dplot.legend_once(axes)
    dplot.save(fig, path)


def _ratios(d: pd.DataFrame, suffix: str) -> dict[str, float]:
    """pHost against pFabric and Fastpass on the traces, and against pFabric on the bimodal
    workload with 0, 50 and 99.5 % short flows, keyed by metric text plus `suffix`."""
    traces = d[d.workload != "bimodal"]
    ours = {
        **ph.ratios(traces, "mean_slowdown", "pHost", "pFabric", "pHost / pFabric" + suffix),
        **ph.ratios(traces, "mean_slowdown", "pHost", "Fastpass", "pHost / Fastpass" + suffix),
    }
    syn = d[d.workload == "bimodal"]
    for pct in (0.0, 50.0, 99.5):
        s = syn[(syn.short_percent - pct).abs() < 1e-6].set_index("protocol").mean_slowdown
        ours[f"bimodal {pct:g} % short: pHost / pFabric{suffix}"] = (
            float(s["pHost"] / s["pFabric"]) if len(s) == 3 else float("nan")
        )
    return ours


def compare(d: pd.DataFrame) -> dict[str, Any]:
    """The derangement's rows under the metric texts they always had, the "self" runs' after them."""
    return {**_ratios(d[d.matrix == "permutation"], ""), **_ratios(d[d.matrix == "self"], SELF_ROWS)}
