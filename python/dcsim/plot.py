"""The one plot style shared by every reproduced figure: fonts, sizes, and a fixed colour and
marker per protocol, so the same protocol looks the same in every figure. Figure helpers
only — no simulation logic."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .optional import require

#: Colour and marker per series name (protocols and the ideal reference), by the display names
#: of :mod:`dcsim.experiments_support.schemes`.
SERIES: dict[str, tuple[str, str | None]] = {
    "TCP": ("#7f7f7f", "v"),
    "DCTCP": ("#1f77b4", "s"),
    "pFabric": ("#d62728", "o"),
    "MinTCP+pFabric": ("#d62728", "o"),
    "LineRate+pFabric": ("#ff7f0e", "^"),
    "pHost": ("#2ca02c", "D"),
    "Fastpass": ("#9467bd", "P"),
    "PIAS": ("#17becf", "X"),
    "LAS": ("#8c564b", "<"),
    "L2DCT": ("#e377c2", ">"),
    "D2TCP": ("#6b6ecf", "h"),
    "PASE": ("#bcbd22", "*"),
    "Ideal": ("#000000", None),
    # pFabric over a few priority queues (pFabric SIGCOMM'13 Fig. 17).
    "Q=2 (Optimized)": ("#9edae5", "v"),
    "Q=4 (Optimized)": ("#17becf", "s"),
    "Q=8 (Optimized)": ("#1f77b4", "D"),
    "Q=4 (Equal split)": ("#7f7f7f", "x"),
    # PASE's variants (PASE SIGCOMM'14 Figs. 9c, 11-13): PASE's olive and its darker and lighter shades.
    "PASE (EDF)": ("#637939", "*"),
    "PASE without optimisations": ("#bd9e39", "x"),
    "PASE, local arbitration": ("#e7ba52", "v"),
    "PASE, 3 queues": ("#cedb9c", "v"),
    "PASE, 4 queues": ("#b5cf6b", "s"),
    "PASE, 6 queues": ("#8ca252", "D"),
    "PASE, 8 queues": ("#bcbd22", "*"),
    "PASE-DCTCP": ("#8c6d31", "s"),
    "PASE without probing": ("#843c39", "P"),
}


def pyplot():
    """matplotlib.pyplot with the headless backend and the shared style applied (a
    :class:`dcsim.optional.MissingExtraError` naming ``dcsim[plot]`` without matplotlib)."""
    matplotlib = require("matplotlib", "plotting")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot", "plotting")

    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.labelsize": 9,
            "legend.fontsize": 8,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "lines.linewidth": 1.5,
            "lines.markersize": 5,
        }
    )
    return plt


def style(name: str) -> dict[str, object]:
    """Keyword arguments for `ax.plot` for series `name`."""
    color, marker = SERIES.get(name, (None, "o"))
    kw: dict[str, object] = {"label": name}
    if color:
        kw["color"] = color
    if marker:
        kw["marker"] = marker
    else:
        kw["linestyle"] = "--"
    return kw


def grid(n_panels: int, title: str, width_per_panel: float = 3.4, height: float = 2.8):
    """A row (or 2-row grid for more than 3) of panels with a figure title."""
    plt = pyplot()
    cols = n_panels if n_panels <= 3 else (n_panels + 1) // 2
    rows = 1 if n_panels <= 3 else 2
    fig, axes = plt.subplots(rows, cols, figsize=(width_per_panel * cols, height * rows), squeeze=False)
    fig.suptitle(title)
    flat = list(axes.flat)
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def save(fig, path: Path) -> None:
    """Saves a small PNG (and closes the figure)."""
    fig.tight_layout()
    fig.savefig(path, format="png")
    require("matplotlib.pyplot", "plotting").close(fig)


def legend_once(axes: Iterable) -> None:
    axes = list(axes)
    if axes:
        axes[0].legend(loc="best", frameon=False)
