"""pFabric SIGCOMM'13 Fig. 16: the M/G/1 model's FCTn(t) vs the high-priority threshold t
(two queues, web search), loads 10-80 %, optimum marked: (a) the paper's formula, (b) the same
model with the base RTT in every flow's FCT and ideal FCT, as the paper's simulations normalize.
A model figure: nothing is simulated (the model itself is checked against a direct simulation
in the test suite)."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dcsim import _dcsim
from dcsim import plot as dplot

TITLE = "pFabric SIGCOMM'13 Fig. 16: FCTn(t) vs high-priority threshold t (web search, 2 queues)"
SWEEP = None
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
# The 144-host fabric's inter-rack base RTT (2.7 us host links and 0.2 us core links in the pFabric
# authors' ns-2 scripts) at 10 Gbps, in bytes: 18,250 B.
BASE_RTT_US = 14.6
BASE_BYTES = BASE_RTT_US * 1e-6 * 10e9 / 8
# (label, fixed latency in bytes) of the two panels.
MODELS = [("paper's formula", 0.0), (f"with the {BASE_RTT_US} us base RTT", BASE_BYTES)]
PAPER = {0.1: 880e3, 0.8: 1740e3}


def data(_runs) -> pd.DataFrame:
    rows = []
    grid = np.logspace(np.log10(8_760), np.log10(29.2e6), 96)
    for model, base in MODELS:
        for load in LOADS:
            best = _dcsim.thresholds("websearch", load, 2, "mg1", base_bytes=base)[0]
            for t in list(grid) + [best]:
                fctn = _dcsim.threshold_fctn("websearch", load, [float(t)], base_bytes=base)
                rows.append(
                    {
                        "model": model,
                        "base_bytes": base,
                        "load": load,
                        "threshold_bytes": round(float(t)),
                        "fctn": float(f"{fctn:.6g}"),
                        "optimal": t == best,
                    }
                )
    return pd.DataFrame(rows).sort_values(["base_bytes", "load", "threshold_bytes"]).reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(len(MODELS), TITLE, width_per_panel=6.0, height=3.8)
    cmap = dplot.pyplot().get_cmap("viridis")
    for ax, (letter, (model, _)) in zip(axes, zip("ab", MODELS)):
        m = d[d.model == model]
        for i, load in enumerate(LOADS):
            s = m[(m.load == load) & ~m.optimal]
            ax.plot(s.threshold_bytes, s.fctn, color=cmap(i / (len(LOADS) - 1)), label=f"load {load:.0%}")
            o = m[(m.load == load) & m.optimal]
            ax.plot(o.threshold_bytes, o.fctn, "o", color="red", markerfacecolor="none", markersize=7)
        for t in PAPER.values():
            ax.axvline(t, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"({letter}) {model}", fontsize=9)
        ax.set_xlabel("high-priority threshold t (bytes); dotted: the paper's optima")
        ax.set_ylabel("FCTn(t)")
    axes[0].legend(loc="upper right", ncol=2, frameon=False, fontsize=7)
    dplot.save(fig, path)


def _cost_of_papers_threshold(d: pd.DataFrame, base: float, load: float) -> float:
    """How much worse than the model's minimum the paper's optimum is, in this model."""
    paper = _dcsim.threshold_fctn("websearch", load, [PAPER[load]], base_bytes=base)
    best = d[(d.base_bytes == base) & (d.load == load) & d.optimal].fctn.iloc[0]
    return float(paper / best - 1.0)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    opt = d[d.optimal].set_index(["base_bytes", "load"]).threshold_bytes
    ours: dict[str, Any] = {
        "optimal threshold at load 10 %": float(opt[(0.0, 0.1)]),
        "optimal threshold at load 80 %": float(opt[(0.0, 0.8)]),
        f"optimal threshold at load 10 %, base RTT {BASE_RTT_US} us in the normalization": float(
            opt[(BASE_BYTES, 0.1)]
        ),
        f"optimal threshold at load 80 %, base RTT {BASE_RTT_US} us in the normalization": float(
            opt[(BASE_BYTES, 0.8)]
        ),
    }
    for model, base in MODELS:
        for load in PAPER:
            cost = _cost_of_papers_threshold(d, base, load)
            ours[
                f"{model}: FCTn at the paper's {PAPER[load] / 1e3:.0f} KB above the model's minimum, load {load:.0%}"
            ] = f"+{100 * cost:.2f} %"
    return ours
