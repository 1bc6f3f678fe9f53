"""Replicated runs: seeds as a sweep axis, and the mean and 95 % confidence interval over them.

A sweep replicates every point (one combination of its other axes) over seeds with
``[sweep] seed = [1, 2, 3]`` or ``replicates = 3`` (seeds ``seed``, ``seed + 1``, …, the spec's
own ``seed`` first). Each replicate is a run of its own (the seed is part of the run's identity).

The interval is Student's t over seeds: each run gives one number per metric (its mean
slowdown, its p99, …: a statistic of the whole run), the runs of a point are independent
replicates of it, and with the few seeds a sweep affords (3 to 10) their standard deviation is
itself uncertain, which the t quantile accounts for and a normal quantile would not. The
half-width is ``t(0.975, n - 1) * s / sqrt(n)``, ``s`` the sample standard deviation (n - 1 in
its denominator). One seed gives no interval: the half-width is NaN (never 0), and tables say
"n = 1, no interval".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The confidence level of every interval.
LEVEL = 0.95


def t_quantile(n: int) -> float:
    """``t(0.975, n - 1)``: Student's t quantile for a two-sided 95 % interval from `n` values
    (NaN for fewer than 2)."""
    if n < 2:
        return float("nan")
    from scipy import stats

    return float(stats.t.ppf(0.5 + LEVEL / 2, n - 1))


@dataclass(frozen=True)
class Estimate:
    """A metric over the seeds of one point: the mean, the sample standard deviation, the
    number of seeds it is defined for, and the 95 % interval's half-width (NaN for n = 1)."""

    mean: float
    std: float
    n: int
    ci95: float

    @classmethod
    def of(cls, values: Iterable[Any]) -> Estimate:
        """The estimate from one value per seed; NaN values (a metric undefined in that run,
        e.g. a size bin without flows) are left out, and n counts the others."""
        xs = np.array([float(v) for v in values], dtype=float)
        xs = xs[~np.isnan(xs)]
        n = len(xs)
        if n == 0:
            return cls(float("nan"), float("nan"), 0, float("nan"))
        mean = float(xs.mean())
        if n == 1:
            return cls(mean, float("nan"), 1, float("nan"))
        std = float(xs.std(ddof=1))
        return cls(mean, std, n, t_quantile(n) * std / math.sqrt(n))

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high) of the 95 % interval, or None without one (n < 2)."""
        if self.n < 2:
            return None
        return (self.mean - self.ci95, self.mean + self.ci95)

    def text(self, digits: int = 3) -> str:
        """``1.23 ± 0.05 (n = 3)``; ``1.23 (n = 1, no interval)``."""
        if self.n == 0:
            return "—"
        if self.n == 1:
            return f"{_g(self.mean, digits)} (n = 1, no interval)"
        return f"{_g(self.mean, digits)} ± {_g(self.ci95, 2)} (n = {self.n})"


def _g(x: float, digits: int) -> str:
    if math.isnan(x):
        return "—"
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"


def seeds(base: int, replicates: int) -> list[int]:
    """The seeds of ``replicates = N``: ``base``, ``base + 1``, …, ``base + N - 1``. The first
    replicate is the spec's own run, so adding replicates to a sweep reuses its runs."""
    return [base + i for i in range(replicates)]


def _hashable(v: Any) -> Any:
    """`v` with every list made a tuple, to group by."""
    return tuple(_hashable(x) for x in v) if isinstance(v, list) else v


#: The suffixes of an aggregated table's columns, per metric.
SUFFIXES = ("_mean", "_std", "_n", "_ci95")


def aggregate(
    frame: Any,
    by: Sequence[str],
    metrics: Sequence[str] | None = None,
    seed: str = "seed",
) -> Any:
    """One row per point (the distinct values of the columns `by`, in order of first
    appearance) with ``n_seeds`` (the runs of the point) and, for each metric,
    ``<metric>_mean``, ``<metric>_std``, ``<metric>_n`` (the seeds where it is defined) and
    ``<metric>_ci95`` (the half-width of its 95 % Student-t interval; NaN with one seed).

    `metrics` defaults to every numeric column that is neither in `by` nor the `seed`
    column. A column of `by` may hold NaN (a point without that axis)."""
    import pandas as pd

    by = list(by)
    if metrics is None:
        metrics = [
            c
            for c in frame.columns
            if c not in by and c != seed and pd.api.types.is_numeric_dtype(frame[c]) and frame[c].dtype != bool
        ]
    # A list-valued axis (`pias.thresholds = [[...], [...]]`) is grouped by a tuple of its
    # values (pandas cannot hash a list); each row keeps the point's own values.
    listed = [c for c in by if frame[c].map(lambda v: isinstance(v, list)).any()]
    keyed = frame.assign(**{c: frame[c].map(_hashable) for c in listed}) if listed else frame
    rows = []
    for _, group in keyed.groupby(by, sort=False, dropna=False, observed=True) if by else [((), frame)]:
        first = frame.loc[group.index[0]]
        row: dict[str, Any] = {c: first[c] for c in by}
        row["n_seeds"] = len(group)
        for m in metrics:
            e = Estimate.of(group[m])
            row[f"{m}_mean"], row[f"{m}_std"], row[f"{m}_n"], row[f"{m}_ci95"] = e.mean, e.std, e.n, e.ci95
        rows.append(row)
    columns = [*by, "n_seeds", *(f"{m}{s}" for m in metrics for s in SUFFIXES)]
    return pd.DataFrame(rows, columns=columns)


def format_table(frame: Any, points: Sequence[str], metrics: Sequence[str] = ("mean_slowdown", "p99_slowdown")) -> str:
    """An aggregated table (:func:`aggregate`) as text: one line per point, its parameters,
    ``n`` and each metric as ``mean ± half-width`` (``mean (n = 1, no interval)``)."""
    header = [*points, "n", *metrics]
    body = []
    for _, r in frame.iterrows():
        cells = [str(r[p]) for p in points] + [str(int(r["n_seeds"]))]
        for m in metrics:
            e = Estimate(r[f"{m}_mean"], r[f"{m}_std"], int(r[f"{m}_n"]), r[f"{m}_ci95"])
            cells.append(e.text(4))
        body.append(cells)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *body])
