"""pFabric SIGCOMM'13 Fig. 16: the M/G/1 model's FCTn(t) vs the high-priority threshold t
(two queues, web search), loads 10-80 %, optimum marked: (a) the paper's formula, (b) the same
model with the base RTT in every flow's FCT and ideal FCT, as the paper's simulations normalize.
A model figure: nothing is simulated (the model itself is checked against a direct simulation
in the test suite)."""

from pathlib import Path

import numpy as np
import pandas as pd

from dcsim import _dcsim
from dcsim import plot as dplot

TITLE = "pFabric SIGCOMM'13 Fig. 16: FCTn(t) vs high-priority threshold t (web search, 2 queues)"
SWEEP = None
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
# The 144-host fabric's inter-rack base RTT (reference §1.1) at 10 Gbps, in bytes: 18,250 B.
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
                rows.append({"model": model, "base_bytes": base, "load": load, "threshold_bytes": round(float(t)), "fctn": float(f"{fctn:.6g}"), "optimal": t == best})
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


def compare(d: pd.DataFrame):
    opt = d[d.optimal].set_index(["base_bytes", "load"]).threshold_bytes
    rows = [
        {"metric": "optimal threshold at load 10 %", "published": 880e3, "ours": float(opt[(0.0, 0.1)]), "note": "§6.1: '~880-1740KB as the load increases from 10% to 80%'"},
        {"metric": "optimal threshold at load 80 %", "published": 1740e3, "ours": float(opt[(0.0, 0.8)]), "note": "the paper's formula; see below and docs/thresholds.md"},
        {"metric": f"optimal threshold at load 10 %, base RTT {BASE_RTT_US} us in the normalization", "published": 880e3, "ours": float(opt[(BASE_BYTES, 0.1)]), "note": "flat: see the next rows"},
        {"metric": f"optimal threshold at load 80 %, base RTT {BASE_RTT_US} us in the normalization", "published": 1740e3, "ours": float(opt[(BASE_BYTES, 0.8)]), "note": "the simulations' normalization (FCT / (size/C + RTT))"},
    ]
    for model, base in MODELS:
        for load in PAPER:
            cost = _cost_of_papers_threshold(d, base, load)
            rows.append({"metric": f"{model}: FCTn at the paper's {PAPER[load] / 1e3:.0f} KB above the model's minimum, load {load:.0%}", "published": "0 (its optimum)", "ours": f"+{100 * cost:.2f} %", "note": "how far the paper's optimum is from this model's"})
    return rows


NOTES = """\
- **Optimum at 80 % load with the paper's formula: 1.36 MB here, ~1.74 MB in the paper
  (−22 %); at 10 %: 853 KB vs ~880 KB (−3 %).** Explained by the normalization. The printed
  formula divides each flow's FCT by its transmission time alone, and with it the paper's
  1.74 MB is 7.4 % worse than the optimum at 80 % load — not a flat minimum. The paper's
  simulations normalize by the best possible FCT, which also holds the base round trip. With
  that one change — the fabric's 14.6 µs base RTT (18,250 B at 10 Gbps) added to every flow's
  FCT and ideal FCT, panel (b), `dcsim thresholds --base-rtt-us 14.6` — the model's optimum
  at 80 % is 1.76 MB (paper 1.74 MB, +1 %), and at 10 % load, where FCTn is flat, the paper's
  880 KB is within 0.4 % of the model's minimum (its optimum there is 1.11 MB). Both published
  optima are within 0.4 % of optimal in this model; with the printed formula one of them is
  7.4 % off. That the authors' numerical model used this normalization is our inference: the
  paper prints the formula without it.
- **Ruled out** (each computed): a stepped reading of the CDF (every threshold from 974 KB to
  1946 KB is equivalent at every load, so 880 KB is never optimal), log-linear interpolation
  (809 KB / 1.29 MB), a non-preemptive priority model (245 KB / 507 KB), a missing factor 2 in
  the waiting terms (855 KB / 1.36 MB), sizes in 1500 B wire packets (876 KB / 1.40 MB), and
  plugging the scripts' 1138-packet mean or the step CDF's mean into λ (1.37 MB / 1.07 MB at
  80 %).
- **What dcsim uses.** `pfabric.threshold_method = "mg1"` optimises the paper's printed formula
  (panel a), and Fig. 17 uses those thresholds. The base-RTT variant is available for a spec
  by pasting `dcsim thresholds --base-rtt-us 14.6 …` output into `pfabric.thresholds`. The
  model agrees with a direct simulation of a two-queue link within 3 % with and without the
  base RTT (test suite).
"""
