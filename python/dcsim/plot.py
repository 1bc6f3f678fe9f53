"""The one plot style shared by every reproduced figure: fonts, sizes, and a fixed colour and
marker per protocol, so the same protocol looks the same in every figure. Figure helpers
only — no simulation logic."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

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
    "dcPIM": ("#ff9896", "d"),
    "Ideal": ("#000000", None),
    "Homa": ("#e6550d", "s"),
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


#: The line :func:`save` writes under every figure (set by :func:`caption`).
_caption: list[str] = []


@contextlib.contextmanager
def caption(text: str) -> Iterator[None]:
    """Every figure saved inside the block gets `text` as a line under it (what its points and
    error bars are: ``mean of 3 seeds; bars: 95 % confidence interval``)."""
    _caption.append(text)
    try:
        yield
    finally:
        _caption.pop()


def save(fig, path: Path) -> None:
    """Saves a small PNG (and closes the figure), with the current :func:`caption` under it."""
    text = _caption[-1] if _caption else ""
    if text:
        import textwrap

        # Wrapped to the figure's width (about 19 characters of 7-point text per inch): a long
        # line under a narrow figure would run off its left edge.
        lines = textwrap.wrap(text, max(40, int(fig.get_figwidth() * 19)))
        fig.text(0.99, 0.005, "\n".join(lines), ha="right", va="bottom", fontsize=7, color="#555555")
        bottom = 0.03 + (len(lines) - 1) * 0.11 / fig.get_figheight()
        fig.tight_layout(rect=(0, min(bottom, 0.3), 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, format="png")
    require("matplotlib.pyplot", "plotting").close(fig)


def ci95(d: Any, col: str) -> Any:
    """The half-widths of the 95 % intervals of column `col` of an averaged figure frame
    (``<col>_ci95``), or None when it has none (a single seed, or per-seed data)."""
    import numpy as np

    name = f"{col}_ci95"
    if name not in getattr(d, "columns", ()):
        return None
    err = np.asarray(d[name], dtype=float)
    return err if np.isfinite(err).any() else None


def errorbars(ax, x: Any, y: Any, err: Any, color: Any = None) -> None:
    """Draws 95 % interval bars (half-widths `err`, NaN for none) at the points (x, y)."""
    if err is None:
        return
    import numpy as np

    x, y, err = (np.asarray(v, dtype=float) for v in (x, y, err))
    has = np.isfinite(err) & np.isfinite(y)  # a point of one seed has no interval: no bar, not a flat one
    if not has.any():
        return
    ax.errorbar(
        x[has],
        y[has],
        yerr=err[has],
        fmt="none",
        ecolor=color,
        elinewidth=1,
        capsize=2.5,
        alpha=0.9,
    )


def line(ax, x: Any, d: Any, col: str, name: str, scale: float = 1.0, **kw: Any) -> None:
    """Series `name`: the means of column `col` of `d` against `x` (times `scale`), with its
    95 % interval bars when `d` has ``<col>_ci95``."""
    import numpy as np

    style_kw = {**style(name), **kw}
    y = np.asarray(d[col], dtype=float) * scale
    (drawn,) = ax.plot(x, y, **style_kw)
    err = ci95(d, col)
    errorbars(ax, x, y, None if err is None else err * scale, drawn.get_color())


def legend_once(axes: Iterable) -> None:
    axes = list(axes)
    if axes:
        axes[0].legend(loc="best", frameon=False)


# ---------------------------------------------------------------------------------------
# Views inside the network: port samples (``Result.ports``) and the packet trace
# (``Result.packets``).
# ---------------------------------------------------------------------------------------


def _port_label(row) -> str:
    return f"port {row.port} ({row.node}→{row.peer}, {row.hop})"


def _axes(ax, width: float = 6.4, height: float = 3.2):
    """`ax`, or a new figure's single axes."""
    if ax is not None:
        return ax.figure, ax
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(width, height))
    return fig, ax


def queue_occupancy(ports, which: Iterable[int] | None = None, top: int = 5, ax=None):
    """Queue occupancy (bytes) over time, one line per port, from ``Result.ports``.

    ``which`` picks port ids; by default the ``top`` ports whose queues grew the largest.
    Returns ``(figure, axes)``."""
    if which is None:
        peak = ports.groupby("port")["queue_bytes"].max().sort_values(ascending=False, kind="stable")
        which = list(peak.index[:top])
    fig, ax = _axes(ax)
    for port in which:
        s = ports[ports.port == port]
        if s.empty:
            raise ValueError(f"port {port} is not in the samples (ports 0-{int(ports.port.max())})")
        ax.step(s.time_us, s.queue_bytes / 1e3, where="post", label=_port_label(s.iloc[0]))
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("queue (KB)")
    ax.set_title("Queue occupancy")
    ax.legend(loc="best", frameon=False)
    return fig, ax


def utilization_heatmap(ports, hop: str | None = None, ax=None):
    """Link utilization (0-1) of every port over time as a heat map (ports down, time across),
    from ``Result.ports``; ``hop`` keeps one kind of port (``"source_nic"``, ``"tor_uplink"``,
    ``"core"``, ``"tor_downlink"``). Returns ``(figure, axes)``."""
    import numpy as np

    if hop is not None:
        ports = ports[ports.hop == hop]
        if ports.empty:
            raise ValueError(f'no port of hop kind "{hop}" in the samples')
    grid = ports.pivot_table(index="port", columns="time_us", values="utilization", aggfunc="first")
    fig, ax = _axes(ax, height=max(2.4, min(8.0, 0.12 * len(grid))))
    times = grid.columns.to_numpy()
    step = float(times[1] - times[0]) if len(times) > 1 else 1.0
    extent = (float(times[0]) - step, float(times[-1]), len(grid) - 0.5, -0.5)
    image = ax.imshow(
        np.clip(grid.to_numpy(dtype=float), 0.0, 1.0),
        aspect="auto",
        interpolation="nearest",
        extent=extent,
        vmin=0,
        vmax=1,
    )
    ticks = np.linspace(0, len(grid) - 1, min(len(grid), 10)).round().astype(int)
    ax.set_yticks(ticks)
    ax.set_yticklabels([str(grid.index[i]) for i in ticks])
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("port")
    ax.set_title("Link utilization" + (f" ({hop})" if hop else ""))
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="utilization")
    return fig, ax


def packet_sequence(packets, flow: int, ax=None):
    """A flow's time-sequence diagram from ``Result.packets``: its data packets' sequence
    numbers as they leave the source (dequeued at its NIC), are dropped, and are delivered,
    and its ACKs as they arrive back. Returns ``(figure, axes)``."""
    p = packets[packets.flow == flow]
    if p.empty:
        raise ValueError(f"flow {flow} is not in the packet trace")
    fig, ax = _axes(ax)
    data = p[p.kind == "data"]
    # The flow's first row is its first packet entering the source's NIC.
    source = data.node.iloc[0] if not data.empty else None
    sent = data[(data.event == "dequeue") & (data.node == source)]
    for rows, label, marker in (
        (sent, "sent", "."),
        (data[data.event == "deliver"], "delivered", "+"),
        (data[data.event == "drop"], "dropped", "x"),
        (p[(p.kind == "ack") & (p.event == "deliver")], "ACK received", "1"),
    ):
        if not rows.empty:
            ax.plot(rows.time_us, rows.seq, linestyle="none", marker=marker, label=label)
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("sequence number (packets)")
    ax.set_title(f"Flow {flow}")
    ax.legend(loc="best", frameon=False)
    return fig, ax
