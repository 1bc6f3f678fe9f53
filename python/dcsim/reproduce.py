"""Paper-figure reproductions, grouped by paper: ``experiments/<paper>/<figure>/`` is the
reproduction named ``<paper>-<figure>`` (``experiments/phost/fig3/`` is ``phost-fig3``). Each
paper folder holds a ``setting.toml`` that its figures' sweeps inherit (``base =
"../setting.toml"``); each figure folder a README, a sweep spec with ``quick`` and ``paper``
scales (or ``SWEEP`` in ``figure.py`` naming another figure's), and ``figure.py`` with three
functions:

- ``data(runs: DataFrame) -> DataFrame``: the figure's numbers from the summaries of one
  seed's runs (``dcsim.load``); a ``data(runs, store)`` with a second parameter also gets the
  run store's path, for figures that need the per-flow tables
  (``dcsim.load(store, flows=True)``);
- ``KEYS``: the numeric columns of ``data`` that, with its non-numeric ones (scheme,
  workload, ...), identify a row (``["load"]``); every other numeric column is a measurement.
  ``PER_SEED = True`` instead: the rows are not averaged (curves over time) and the plot draws
  every seed's; ``PER_RUN = True`` declares that each row comes from one run alone (``data``
  of several runs is the rows of each run's ``data`` put together), which lets a figure keep
  the rows of runs done in an earlier sitting (``data-runs.csv``, :func:`reproduce`'s
  ``reuse_runs``);
- ``plot(data: DataFrame, path: Path)``: the figure, written as ``figure.png``, from the
  numbers averaged over seeds: each measurement under its own name is the mean over the
  seeds, ``<column>_ci95`` the half-width of its 95 % interval (NaN with one seed), and
  ``n_seeds`` the seeds of the row (:func:`figure_data`);
- ``compare(data: DataFrame) -> dict``: our value of each metric the figure's
  ``published.csv`` lists (keyed by its ``metric`` text), from one seed's ``data``: it is
  called for each seed, and the table gives the mean over seeds ± the 95 % interval's
  half-width, with n (:func:`aggregate_compare`). The published numbers are data:
  ``published.csv`` has one row per compared metric (``metric``, ``published``, or ``low``
  and ``high`` for a range, ``source`` in the paper, ``note``), and the comparison rows are
  built from it in its order, ours next to each, written as ``comparison.md`` with the
  relative difference. A metric whose text has ``{fields}`` (the load where a reduction is
  largest) takes them from an :class:`Ours` value.

Figures that share a sweep and each draw a part of it (one workload each) say which part in
``RUNS``, an expression like ``sweep.filter``'s (``"flow_sizes == 'websearch'"``): the
reproduction runs, counts and waits for only those runs (:func:`figure_plan`).

A figure without a sweep (``SWEEP = None``) is a model-only figure (no simulation) unless it
runs its own simulations from ``data(runs, store)``, as a search on load does; it then names
their seeds in ``SEEDS`` (``[1]``), which the CSVs record like a sweep's. Such a ``data`` that
also takes ``scale`` is told the scale asked for, and one that returns a ``seed`` column
(one search per seed) has its rows aggregated over seeds like a sweep's.

Helpers shared by one paper's figures live in :mod:`dcsim.experiments_support`.

``dcsim reproduce NAME`` runs the sweep (resumably) and writes ``figure.png``, ``data.csv``
(per row ``<column>_mean``, ``<column>_ci95`` and ``n_seeds``), ``data-seeds.csv`` (each
seed's rows, with ``seed``) and ``comparison.md`` to ``<out>/<NAME>/<scale>/``; both CSVs
open with ``#`` lines saying what produced them (the scale, the seeds, the dcsim version and
git commit: :func:`provenance`). ``dcsim gallery`` collects them into ``docs/figures.md``.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import importlib.util
import inspect
import math
import os
import shutil
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from . import plot as dplot
from .optional import require
from .replicates import Estimate
from .spec import SpecError
from .sweep import Plan, StaleRunsWarning, keep_runs, load, plan, record_plan, run_sweep


def experiments_dir() -> Path:
    """The experiments folder: ``$DCSIM_EXPERIMENTS`` when set, else the one shipped with the
    package, ``dcsim/experiments/`` (in a repository checkout a link to ``experiments/``,
    resolved so that paths name the real folder; in an installed wheel or sdist, a copy).
    Either missing is a :class:`SpecError` naming what was looked for."""
    env = os.environ.get("DCSIM_EXPERIMENTS")
    if env:
        if not Path(env).is_dir():
            raise SpecError(
                f"DCSIM_EXPERIMENTS={env!r} is not a folder; unset it to use the experiments shipped with dcsim",
                "DCSIM_EXPERIMENTS",
            )
        return Path(env)
    shipped = Path(str(importlib.resources.files("dcsim") / "experiments"))
    if not shipped.is_dir():
        raise SpecError(
            f"dcsim's experiments are missing from this installation ({shipped}); reinstall dcsim, or set "
            "DCSIM_EXPERIMENTS to an experiments/ folder such as a dcsim checkout's",
            "DCSIM_EXPERIMENTS",
        )
    return shipped.resolve()


def folders() -> dict[str, Path]:
    """Every reproduction's folder by name: ``experiments/<paper>/<figure>/`` (one holding a
    ``figure.py``) is ``<paper>-<figure>``."""
    d = experiments_dir()
    found: dict[str, Path] = {}
    for fig in sorted(d.glob("*/*/figure.py")):
        fig_dir, paper_dir = fig.parent, fig.parent.parent
        if fig_dir.name.startswith(("_", ".")) or paper_dir.name.startswith(("_", ".")):
            continue
        found[f"{paper_dir.name}-{fig_dir.name}"] = fig_dir
    return found


def names() -> list[str]:
    return sorted(folders())


def folder(name: str) -> Path:
    """The folder of reproduction `name` (KeyError if there is none)."""
    return folders()[name]


def sweep_path(name: str) -> Path | None:
    """The experiment's sweep spec: its own ``sweep.toml``, or the one its ``figure.py`` names
    in ``SWEEP`` (figures drawn from the same runs share one sweep)."""
    rel = getattr(module(name), "SWEEP", "sweep.toml")
    if rel is None:
        return None  # a model-only figure: nothing to simulate
    return (folder(name) / rel).resolve()


def figure_plan(name: str, scale: str | None = None) -> Plan:
    """The runs reproduction `name` draws: its sweep's plan at `scale`, with only the runs its
    ``figure.py``'s ``RUNS`` keeps, if it sets one (an expression like ``sweep.filter``'s):
    figures that share a sweep take their part of it, so a figure of one workload neither runs
    nor waits for the other's runs. ValueError for a model-only figure (no sweep)."""
    path = sweep_path(name)
    if path is None:
        raise ValueError(f"{name} has no sweep: its figure runs nothing")
    p = plan(path, scale=scale, warn=False)
    expr = getattr(module(name), "RUNS", None)
    return p if expr is None else keep_runs(p, expr, f"RUNS of {name}'s figure.py")


def module(name: str) -> ModuleType:
    """The experiment's ``figure.py``, loaded as a module of its own. Its shared helpers come
    from :mod:`dcsim.experiments_support`, so nothing is added to ``sys.path``."""
    path = folder(name) / "figure.py"
    spec = importlib.util.spec_from_file_location(f"dcsim_experiment_{name.replace('-', '_')}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def title(name: str) -> str:
    return getattr(module(name), "TITLE", name)


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(x)


def _center(x: Any) -> Any:
    """Our value as a number (an estimate's mean), or a (low, high) pair of them."""
    if isinstance(x, Estimate):
        return x.mean
    if isinstance(x, tuple) and len(x) == 2 and _estimated(x):
        return (x[0].mean, x[1].mean)
    return x


def _show(x: Any) -> str:
    """Our value as the table shows it: ``1.23 ± 0.05 (n = 3)``, a range of two such, a text."""
    if isinstance(x, Estimate):
        return x.text()
    if isinstance(x, tuple) and len(x) == 2 and _estimated(x):
        lo, hi = x
        n = min(lo.n, hi.n)
        if n < 2:
            return f"{_fmt(lo.mean)}–{_fmt(hi.mean)} (n = {n}, no interval)"
        return f"{_fmt(lo.mean)} ± {lo.ci95:.2g} – {_fmt(hi.mean)} ± {hi.ci95:.2g} (n = {n})"
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return f"{x[0]:.3g}–{x[1]:.3g}"
    return _fmt(x)


def _missing(center: Any) -> bool:
    """True when our value is NaN (or a pair holding one): the runs behind it are missing."""
    values = center if isinstance(center, (list, tuple)) else [center]
    return any(_number(v) and math.isnan(float(v)) for v in values)


def _estimated(x: Any) -> bool:
    """Whether our value is over seeds (an estimate, or a range of two)."""
    return isinstance(x, Estimate) or (isinstance(x, tuple) and any(isinstance(v, Estimate) for v in x))


def _number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


#: How our value relates to a published one (:func:`agreement`), as the gallery's scorecard
#: counts them.
AGREES = "within 10 %"
DIFFERS = "more than 10 % away"
IN_WORDS = "claim in words"
NO_VALUE = "no value of ours"
AGREEMENT_CLASSES = (AGREES, DIFFERS, IN_WORDS, NO_VALUE)

#: The tolerance of :data:`AGREES`: the issue's "within 10 %" of the published number.
TOLERANCE = 0.10


def agreement(pub: Any, ours: Any) -> str | None:
    """How our value (a number, an :class:`~dcsim.replicates.Estimate`, or a (low, high) range of
    either) relates to the published one (a number, a (low, high) range, or a claim in words):

    * :data:`AGREES` — our mean is within 10 % of the published number, or inside the published
      range widened by 10 % of each bound; a range of ours agrees when it overlaps the (widened)
      published value or range;
    * :data:`DIFFERS` — farther than that;
    * :data:`IN_WORDS` — the published entry is a claim in words (``"> 30 %"``), judged in the
      figure's notes, not here;
    * :data:`NO_VALUE` — we have no number for it (NaN, or a text);
    * ``None`` — nothing was published for the row (a number of ours only).

    The 95 % interval plays no part: a wide interval does not make a value agree."""
    if pub is None:
        return None
    if isinstance(pub, str):
        return IN_WORDS
    center = _center(ours)
    if isinstance(center, (list, tuple)):
        if not all(_number(v) and not math.isnan(float(v)) for v in center):
            return NO_VALUE
        ours_lo, ours_hi = float(min(center)), float(max(center))
    elif _number(center) and not math.isnan(float(center)):
        ours_lo = ours_hi = float(center)
    else:
        return NO_VALUE
    pub_lo, pub_hi = (float(min(pub)), float(max(pub))) if isinstance(pub, (list, tuple)) else (float(pub),) * 2
    low = pub_lo - TOLERANCE * abs(pub_lo)
    high = pub_hi + TOLERANCE * abs(pub_hi)
    return AGREES if ours_lo <= high and ours_hi >= low else DIFFERS


def comparison_markdown(name: str, rows: list[dict[str, Any]], scale: str, produced_by: str = "") -> str:
    """The published-vs-dcsim table. Our value is the mean over seeds ± the half-width of its
    95 % interval, with n (an :class:`~dcsim.replicates.Estimate`), or a plain value; the
    difference is the mean's. `produced_by` (:func:`provenance_text`) heads the table. A
    model-only figure (no simulation, so the same at either scale) says so in place of a scale."""
    where = "model only, either scale" if produced_by.startswith(MODEL_ONLY) else f"{scale} scale"
    lines = [f"### {title(name)} — published vs dcsim ({where})", ""]
    if produced_by:
        lines += [produced_by, ""]
    averaged = any(_estimated(r.get("ours")) for r in rows)
    ours_head = "dcsim (mean ± 95 % CI over seeds)" if averaged else "dcsim"
    lines += [f"| metric | published | {ours_head} | difference | note |", "|---|---|---|---|---|"]
    for r in rows:
        pub, ours = r.get("published"), r.get("ours")
        center = _center(ours)
        note = r.get("note", "")
        if pub is not None and _missing(center):
            # A partial figure (some runs not done): no number of ours to set beside it.
            note = "no value of ours: its runs are not in this figure. " + note
        elif isinstance(pub, (list, tuple)):
            lo, hi = pub
            if isinstance(center, (list, tuple)):
                olo, ohi = center
                overlap = olo <= hi and ohi >= lo
                note = (
                    "overlaps the published range. " if overlap else "does not overlap the published range. "
                ) + note
            elif _number(center):
                note = (
                    "inside the published range. " if lo <= center <= hi else "outside the published range. "
                ) + note
        elif _number(pub) and isinstance(center, (list, tuple)):
            inside = center[0] <= pub <= center[1]
            note = (
                "the published value is inside our range. " if inside else "the published value is outside our range. "
            ) + note
        elif isinstance(pub, (int, float)) and isinstance(ours, Estimate) and ours.interval is not None:
            low, high = ours.interval
            note = ("within our 95 % CI. " if low <= pub <= high else "outside our 95 % CI. ") + note
        if _number(pub) and _number(center) and pub and not _missing(center):
            diff = f"{(center - pub) / abs(pub) * 100:+.1f} %"
        else:
            diff = "—"
        lines.append(f"| {r['metric']} | {_show(pub)} | {_show(ours)} | {diff} | {note.rstrip()} |")
    return "\n".join(lines) + "\n"


@dataclass
class FigureData:
    """A figure's numbers: each seed's rows (``per_seed``, with a ``seed`` column) and their
    aggregation over seeds per row (identified by ``keys``)."""

    per_seed: Any  # pandas.DataFrame
    seeds: list[int]
    keys: list[str]
    measured: list[str]
    per_seed_only: bool = False

    @property
    def replicated(self) -> bool:
        """False for a model-only figure (nothing simulated, no seeds)."""
        return bool(self.seeds)

    def by_seed(self) -> list[Any]:
        """Each seed's rows (the frame ``data()`` returned for it, plus ``seed``)."""
        if not self.replicated:
            return [self.per_seed]
        return [g.reset_index(drop=True) for _, g in self.per_seed.groupby("seed", sort=True)]

    @classmethod
    def of(cls, mod: ModuleType, frames: list[Any], seeds: list[int]) -> FigureData:
        """The figure's numbers from each seed's ``data()`` (`frames`, in the order of `seeds`),
        its rows told apart by the module's ``KEYS`` and its non-numeric columns."""
        import pandas as pd

        name = getattr(mod, "__name__", "figure")
        per_seed = pd.concat([f.assign(seed=s) for f, s in zip(frames, seeds)], ignore_index=True)
        per_seed_only = bool(getattr(mod, "PER_SEED", False))
        numeric = {
            c
            for c in per_seed.columns
            if pd.api.types.is_numeric_dtype(per_seed[c]) and not pd.api.types.is_bool_dtype(per_seed[c])
        }
        declared = list(getattr(mod, "KEYS", []))
        unknown = [k for k in declared if k not in per_seed.columns]
        if unknown:
            raise ValueError(f"{name}: KEYS names {unknown}, which data() does not return")
        keys = [c for c in per_seed.columns if c != "seed" and (c in declared or c not in numeric)]
        measured = [c for c in per_seed.columns if c != "seed" and c not in keys]
        if not per_seed_only:
            repeated = per_seed.duplicated([*keys, "seed"])
            if repeated.any():
                raise ValueError(
                    f"{name}: data() gives {int(repeated.sum())} row(s) of one seed with the same {keys}: add the "
                    "column that tells them apart to KEYS (or set PER_SEED = True)"
                )
        return cls(per_seed, list(seeds), keys, measured, per_seed_only)

    def _aggregated(self) -> Any:
        import pandas as pd

        from .replicates import aggregate

        agg = aggregate(self.per_seed, self.keys, self.measured)
        for c in self.keys:
            if isinstance(self.per_seed[c].dtype, pd.CategoricalDtype):
                agg[c] = pd.Categorical(agg[c], self.per_seed[c].cat.categories, ordered=self.per_seed[c].cat.ordered)
        return agg

    def plot_frame(self) -> Any:
        """What ``plot()`` draws: per row, each measurement's mean over seeds under its own
        name, ``<name>_ci95`` and ``n_seeds`` (each seed's rows for ``PER_SEED`` figures)."""
        if self.per_seed_only or not self.replicated:
            return self.per_seed
        agg = self._aggregated()
        keep = [*self.keys, "n_seeds"] + [c for m in self.measured for c in (f"{m}_mean", f"{m}_ci95")]
        return agg[keep].rename(columns={f"{m}_mean": m for m in self.measured})

    def csv_frame(self) -> Any:
        """``data.csv``: per row the keys, ``n_seeds``, and per measurement ``<name>_mean`` and
        ``<name>_ci95``, and ``<name>_n`` where some row has the measurement for some of its
        seeds but not all (a seed where it is undefined, e.g. a size bin without flows)."""
        if self.per_seed_only or not self.replicated:
            return self.per_seed
        agg = self._aggregated()
        cols = [*self.keys, "n_seeds"]
        for m in self.measured:
            cols += [f"{m}_mean", f"{m}_ci95"]
            n = agg[f"{m}_n"]
            if ((n > 0) & (n < agg["n_seeds"])).any():
                cols.append(f"{m}_n")
        return agg[cols]

    def caption(self) -> str:
        """The line under the figure saying what its points and bars are."""
        if not self.replicated:
            return ""
        n = len(self.seeds)
        if self.per_seed_only:
            return f"each of {n} seeds drawn" if n > 1 else "1 seed"
        if n == 1:
            return "1 seed: no confidence interval"
        fewest = int(self._aggregated()["n_seeds"].min())
        seeds = f"{n} seeds" if fewest == n else f"{fewest}-{n} seeds per point (a partial figure)"
        return f"mean of {seeds}; bars: 95 % confidence interval (Student t over seeds)"


def wants_store(mod: ModuleType) -> bool:
    """Whether the figure's ``data(runs, store)`` takes the run store (per-flow tables, or runs
    of its own) as well as the runs' summaries."""
    return len(inspect.signature(mod.data).parameters) >= 2


def _data(mod: ModuleType, runs: Any, store: Path, scale: str = "quick") -> Any:
    """The figure's ``data()`` of `runs`, with the store when it takes one, and the scale when
    it takes one (a figure that runs its own simulations)."""
    if "scale" in inspect.signature(mod.data).parameters:
        return mod.data(runs, store, scale=scale)
    return mod.data(runs, store) if wants_store(mod) else mod.data(runs)


def figure_data(mod: ModuleType, runs: Any, store: Path, reused: Any = None, scale: str = "quick") -> FigureData:
    """Calls the figure's ``data()`` on each seed's runs (the runs of the sweep with that
    ``seed``; all of them when the sweep has no seed axis) and checks that its ``KEYS`` tell
    each seed's rows apart. `reused` (a ``PER_RUN`` figure's rows of runs not in the store,
    with ``run``, ``seed`` and ``commit`` columns: :func:`reusable_rows`) joins each seed's
    rows. A figure without runs is called once; when it simulates per seed itself, its rows
    carry a ``seed`` column and are taken seed by seed."""

    def data(r: Any) -> Any:
        return _data(mod, r, store, scale)

    if runs is None:
        d = data(None)
        if "seed" in d.columns:
            seeds = sorted(int(x) for x in d["seed"].unique())
            frames = [d[d["seed"] == x].drop(columns="seed").reset_index(drop=True) for x in seeds]
            return FigureData.of(mod, frames, seeds)
        return FigureData(d, [], list(d.columns), [])
    groups = dict(_seed_groups(runs, store))
    if reused is None or reused.empty:
        seeds = sorted(groups)
        return FigureData.of(mod, [data(groups[s]).reset_index(drop=True) for s in seeds], seeds)
    seeds = sorted(set(groups) | {int(s) for s in reused["seed"]})
    frames = []
    for seed in seeds:
        mine = data(groups[seed]).reset_index(drop=True) if seed in groups else None
        theirs = drawn_rows(reused[reused["seed"] == seed]).drop(columns=list(RUN_COLUMNS))
        frames.append(_in_key_order(mod, _joined(mine, theirs)))
    return FigureData.of(mod, frames, seeds)


def _in_key_order(mod: ModuleType, frame: Any) -> Any:
    """`frame`'s rows sorted by the columns that identify a row (its non-numeric ones and
    ``KEYS``, in column order): rows joined from two sittings come in no order ``data()`` would
    give, and this one is the same whichever runs were reused."""
    import pandas as pd

    declared = set(getattr(mod, "KEYS", []))
    by = [c for c in frame.columns if c in declared or not pd.api.types.is_numeric_dtype(frame[c])]
    return frame.sort_values(by, kind="stable").reset_index(drop=True) if by else frame


def _seed_groups(runs: Any, store: Path) -> list[tuple[int, Any]]:
    """The runs of each seed, in order of seed: by the ``seed`` column, or (a sweep without a
    seed axis) all of them under the seed their metadata names."""
    if runs.empty:
        return []  # every run reused (--reuse-runs)
    if "seed" in runs.columns:
        return [(int(s), g.reset_index(drop=True)) for s, g in runs.groupby("seed", sort=True)]
    from .result import read_metadata
    from .sweep import run_dir

    return [(int(read_metadata(run_dir(Path(store), runs["run"].iloc[0]))["seed"]), runs)]


def _joined(mine: Any, theirs: Any) -> Any:
    """One seed's rows: those computed now (`mine`, or None) and those reused (`theirs`, read
    from a CSV), with `mine`'s column order and types (a categorical column keeps its order of
    categories, widened by values only the reused rows have)."""
    import pandas as pd

    if mine is None:
        return theirs.reset_index(drop=True)
    theirs = theirs[[c for c in mine.columns if c in theirs.columns]]
    joined = pd.concat([mine, theirs], ignore_index=True)
    for c in mine.columns:
        if isinstance(mine[c].dtype, pd.CategoricalDtype):
            known = list(mine[c].cat.categories)
            extra = [v for v in pd.unique(theirs[c]) if v not in known]
            joined[c] = pd.Categorical(joined[c], known + extra, ordered=mine[c].cat.ordered)
    return joined


#: The columns ``data-runs.csv`` adds to a ``PER_RUN`` figure's rows: which run gave them, its
#: seed, and the model commit that computed them.
RUN_COLUMNS = ("run", "seed", "commit")


def run_rows(mod: ModuleType, runs: Any, store: Path, commit: str) -> Any:
    """A ``PER_RUN`` figure's rows of each run alone (``data()`` called on one run at a time),
    with the run's hash, its seed and `commit`: what ``data-runs.csv`` keeps. A run the figure
    draws nothing from (figures share sweeps: pHost Fig. 3 plots the load 0.6 runs of Figs.
    3-6's sweep) keeps one row with only those three columns, so that a later sitting reusing
    the file knows the run is done (:func:`drawn_rows` leaves such rows out of the figure)."""
    import pandas as pd

    frames = []
    for seed, group in _seed_groups(runs, store):
        for i in range(len(group)):
            one = group.iloc[[i]].reset_index(drop=True)
            rows = _data(mod, one, store)
            marks = {"run": one["run"].iloc[0], "seed": seed, "commit": commit}
            frames.append(rows.assign(**marks) if len(rows) else pd.DataFrame([marks]))
    if not frames:
        return pd.DataFrame(columns=list(RUN_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    return out[[*RUN_COLUMNS, *[c for c in out.columns if c not in RUN_COLUMNS]]]


def drawn_rows(rows: Any) -> Any:
    """The rows of a ``data-runs.csv`` frame that the figure draws: without the rows that only
    mark a run the figure draws nothing from (:func:`run_rows`)."""
    data_columns = [c for c in rows.columns if c not in RUN_COLUMNS]
    if not data_columns:
        return rows.iloc[0:0]
    return rows[rows[data_columns].notna().any(axis=1)].reset_index(drop=True)


def check_per_run(mod: ModuleType, fd: FigureData, by_run: Any) -> None:
    """A ``PER_RUN`` figure's rows, computed from all of a seed's runs at once (`fd`), must be
    those of its runs one at a time (`by_run`, :func:`run_rows`): otherwise rows kept from one
    sitting could not stand in for runs of another. Raises ``ValueError`` naming the first seed
    whose rows differ."""
    import pandas as pd

    name = getattr(mod, "__name__", "figure")
    alone = drawn_rows(by_run)
    for seed, together in fd.per_seed.groupby("seed", sort=True):
        mine = _in_key_order(mod, together.drop(columns="seed").reset_index(drop=True))
        theirs = alone[alone["seed"] == seed].drop(columns=list(RUN_COLUMNS))
        theirs = _in_key_order(mod, _joined(mine.iloc[0:0], theirs))
        try:
            pd.testing.assert_frame_equal(mine, theirs, check_dtype=False, check_categorical=False)
        except AssertionError as e:
            raise ValueError(
                f"{name} sets PER_RUN, but data() of seed {seed}'s runs together is not the rows of each "
                f"run alone: {str(e).splitlines()[0]}"
            ) from None


def reusable_rows(path: Path, wanted: Mapping[str, str]) -> Any:
    """The rows of `path` (a ``data-runs.csv``) of the runs in `wanted` (run hash → its
    ``transport.protocol``), checked: each comes from a model whose results for its run's
    protocol are those of this checkout's (:func:`results_unchanged_since`)."""
    import pandas as pd

    if not path.is_file():
        raise SpecError(f"{path}: no such file", "--reuse-runs")
    rows, _ = read_data_csv(path)
    missing = [c for c in RUN_COLUMNS if c not in rows.columns]
    if missing:
        raise SpecError(f"{path} has no {', '.join(missing)} column: it is not a data-runs.csv", "--reuse-runs")
    rows = rows[rows["run"].isin(set(wanted))].reset_index(drop=True)
    for commit in pd.unique(rows["commit"]):
        protocols = {wanted[h] for h in rows.loc[rows["commit"] == commit, "run"]}
        why = results_unchanged_since(str(commit), protocols)
        if why:
            raise SpecError(
                f"{path}: its rows of commit {commit} cannot stand in for runs of this checkout: {why}", "--reuse-runs"
            )
    return rows


#: The record of every result (crates/dcsim/tests/it/digests.rs): a change that alters any run's
#: output must update it, so two commits where it is the same give the same results.
DIGESTS = "crates/dcsim/tests/digests.txt"


def _digest_lines(text: str) -> dict[str, list[str]]:
    """A digests file's ``name digest [protocol]`` lines by name (``#`` lines are comments; the
    protocol column was added on 2026-11-29, so older files have none)."""
    fields = (line.split() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return {f[0]: f[1:] for f in fields if len(f) >= 2}


def changed_digests(then: str, now: str) -> list[str]:
    """The cases of digests file `then` (``name digest [protocol]`` lines, ``#`` comments) whose
    digest `now` does not have: changed or gone. Cases only `now` has are new, and change
    nothing."""

    def digests(text: str) -> dict[str, str]:
        return {name: rest[0] for name, rest in _digest_lines(text).items()}

    current = digests(now)
    return sorted(case for case, digest in digests(then).items() if current.get(case) != digest)


def reproduction_protocols(name: str, scale: str | None = None) -> frozenset[str]:
    """The result classes (:func:`result_class`) of reproduction `name`'s runs (at `scale`, or either):
    its figure module's ``PROTOCOLS`` if it names them (a figure that runs without a sweep),
    else its sweep's; none for a model-only figure."""
    mod = module(name)
    if hasattr(mod, "PROTOCOLS"):
        return frozenset(mod.PROTOCOLS)
    path = sweep_path(name)
    if path is None:
        return frozenset()
    return frozenset(run_protocols(name, scale).values())


def result_class(spec: Any) -> str:
    """What a run's results can change with apart from other runs', as the result digests'
    third column (``crates/dcsim/tests/digests.txt``) names each case's: the run's
    ``transport.protocol``, or ``"pase-edf"`` for PASE arbitrating by deadline, whose key is
    code of its own (``Spec::result_class`` in the core, which the digests test checks each
    line against)."""
    protocol = str(spec.get("transport.protocol"))
    if protocol == "pase" and spec.get("pase.order") == "edf":
        return "pase-edf"
    return protocol


def run_protocols(name: str, scale: str | None = None) -> dict[str, str]:
    """Run hash → result class (:func:`result_class`: the ``transport.protocol``, finer where
    the digests are) of every run reproduction `name`'s sweep plans (at `scale`, or at each of
    its scales)."""
    return dict(_run_protocols(name, scale))


@functools.cache
def _run_protocols(name: str, scale: str | None) -> tuple[tuple[str, str], ...]:
    """:func:`run_protocols`, planned once per process (the gallery's check asks for each of
    a figure's CSVs)."""
    path = sweep_path(name)
    if path is None:
        return ()
    scales: list[str | None] = [scale] if scale else [*sorted(_sweep_scales(path))] or [None]
    out: dict[str, str] = {}
    for sc in scales:
        out.update({r.hash: result_class(r.spec) for r in figure_plan(name, sc).runs})
    return tuple(out.items())


def _sweep_scales(path: Path) -> set[str]:
    from .spec import tomllib

    return set(tomllib.loads(path.read_text()).get("scales", {}))


def figure_provenance(csv_path: Path) -> dict[str, frozenset[str] | None]:
    """The model commits a committed figure CSV's numbers come from, each with the protocols of
    the runs it made (``None``: not known, so any protocol), from its leading ``#`` lines: its
    ``# commit:`` line (every
    protocol of its reproduction), the commits of runs it reused (``# reused: N runs from F
    (commit X)``: those of F's rows of commit X) or transcribed (``# rows: ... commit X``), and
    a ``data-runs`` CSV's own rows (``run`` and ``commit`` columns)."""
    import re

    lines = csv_path.read_text().splitlines()
    header = lines[: next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))]
    meta = {k.strip(): v.strip() for k, _, v in (line[1:].partition(":") for line in header)}
    name = meta.get("reproduction", "")
    words = meta.get("scale", "").split()
    scale = words[0] if words else None
    known = name in names()
    base = reproduction_protocols(name, scale) if known else _generated_protocols(name)
    hashes = run_protocols(name, scale) if known else {}

    def by_commit(path: Path) -> dict[str, frozenset[str] | None]:
        if not path.is_file():
            return {}
        rows, _ = read_data_csv(path)
        if not {"run", "commit"} <= set(rows.columns):
            return {}
        out: dict[str, frozenset[str] | None] = {}
        for commit, group in rows.groupby("commit"):
            protos = [hashes.get(h) for h in group["run"]]
            out[str(commit)] = None if None in protos else frozenset(p for p in protos if p)
        return out

    found: dict[str, frozenset[str] | None] = {}
    rows_here = by_commit(csv_path)
    for line in header:
        if line.startswith("# commit:"):
            found[line.split(":", 1)[1].strip()] = base
            continue
        source = re.search(r"from (\S+\.csv)", line) if line.startswith("# reused:") else None
        reused = by_commit(csv_path.parent / source.group(1)) if source else {}
        for listed in re.findall(r"commit ([0-9a-f]{7,40}\b(?:, [0-9a-f]{7,40}\b)*)", line):
            for commit in listed.split(", "):  # a reused line lists every commit of its rows
                found[commit] = reused.get(commit, rows_here.get(commit, base))
    return found


def _generated_protocols(name: str) -> frozenset[str] | None:
    """The result classes of a committed table that a module of ``dcsim.experiments_support``
    generates rather than a reproduction (``pase-sensitivity``): its ``PROTOCOLS``; None (any)
    if it declares none."""
    import importlib

    try:
        mod = importlib.import_module(f"dcsim.experiments_support.{name.replace('-', '_')}")
    except ImportError:
        return None
    protocols = getattr(mod, "PROTOCOLS", None)
    return frozenset(protocols) if isinstance(protocols, (set, frozenset)) else None


def changed_protocols(then: str, now: str) -> set[str] | None:
    """The protocols (``transport.protocol`` values) whose results may differ between digests
    files `then` and `now`: those of the cases whose digest changed, each case's protocol read
    from `now`'s line; ``None`` (any protocol) when a changed case names none there (it is gone,
    or `now` has no protocol column)."""
    lines = _digest_lines(now)
    protocols = set()
    for case in changed_digests(then, now):
        rest = lines.get(case, [])
        if len(rest) < 2:
            return None
        protocols.add(rest[1])
    return protocols


def results_unchanged_since(commit: str, protocols: Collection[str] | None = None) -> str:
    """Why the results of `commit` (as a CSV's ``commit`` records it) may differ from this
    checkout's; empty when they cannot: the same commit and state as now, or a commit whose
    result digests (:data:`DIGESTS`) this checkout has unchanged — all of them, or with
    `protocols` those of the cases of these protocols (a change to one protocol's module
    changes only its cases; one to the fabric changes every protocol's). Cases added since, as
    each new protocol adds its own, change no earlier result."""
    import subprocess

    if commit == model_commit():
        return ""
    if "uncommitted" in commit or commit.startswith("unknown") or not commit.strip():
        return "it was computed from a checkout with uncommitted changes (or none), whose model cannot be checked"
    root = Path(__file__).resolve().parents[2]
    try:
        then = subprocess.run(
            ["git", "-C", str(root), "show", f"{commit}:{DIGESTS}"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "git is not available to compare its result digests with this checkout's"
    if then.returncode != 0:
        return f"git does not know the commit or its digests ({then.stderr.strip()})"
    now = (root / DIGESTS).read_text()
    changed = changed_digests(then.stdout, now)
    if changed and protocols is not None:
        touched = changed_protocols(then.stdout, now)
        if touched is not None and not touched & set(protocols):
            return ""  # only other protocols' results changed
        lines = _digest_lines(now)
        changed = [c for c in changed if touched is None or lines[c][1] in protocols]
    if changed:
        cases = ", ".join(changed[:3]) + (" and others" if len(changed) > 3 else "")
        return f"the result digests of {cases} ({DIGESTS}) changed since: results changed"
    return ""


def aggregate_compare(per_seed: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Our value of each compared metric over seeds, from ``compare()`` of each seed's data: a
    number becomes an :class:`~dcsim.replicates.Estimate` (mean ± 95 % interval), a (low, high)
    range a pair of them, an :class:`Ours` keeps its fields (joined with "/" where the seeds
    differ, e.g. the load where a reduction is largest), and a text is kept when every seed
    gives the same, else listed per seed."""
    return {metric: _combine([r[metric] for r in per_seed]) for metric in per_seed[0]}


def _combine(values: list[Any]) -> Any:
    first = values[0]
    if isinstance(first, Ours):
        fields = {k: "/".join(dict.fromkeys(str(v.fields[k]) for v in values)) for k in first.fields}
        return Ours(_combine([v.value for v in values]), fields)
    if isinstance(first, (list, tuple)) and len(first) == 2:
        return (Estimate.of(v[0] for v in values), Estimate.of(v[1] for v in values))
    if all(v is None or _number(v) for v in values):
        return Estimate.of(float("nan") if v is None else v for v in values)
    texts = [str(v) for v in values]
    if len(set(texts)) == 1:
        return first
    return " / ".join(texts) + " (one per seed)"


def reproduce(
    name: str,
    scale: str = "quick",
    out_root: str | os.PathLike[str] = "results",
    jobs: int | None = None,
    use_ray: bool = False,
    ray_address: str | None = None,
    progress: bool | None = None,
    finished_only: bool = False,
    reuse_runs: str | os.PathLike[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> dict[str, Path]:
    """Runs experiment `name` at `scale` and writes figure.png, data.csv, comparison.md (and,
    for a ``PER_RUN`` figure, data-runs.csv: each run's rows, with the run's hash and the model
    commit). Needs matplotlib (``dcsim[plot]``): checked before anything is simulated.

    ``finished_only=True`` runs nothing: the figure is drawn from the runs of the experiment's
    sweep already complete in the results store (a paper-scale sweep too long for one sitting,
    drawn as far as it got). A figure missing runs says so under it, in its CSVs' ``# runs:``
    line and in comparison.md, which lists the runs missing.

    ``reuse_runs`` (with ``finished_only``, for a ``PER_RUN`` figure): a ``data-runs.csv`` from
    an earlier sitting (the gallery keeps one beside each such figure,
    ``docs/figures/<name>[-paper]-runs.csv``) whose rows stand in for the planned runs missing
    from the store, if their model's results are this checkout's (the same result digests:
    :func:`results_unchanged_since`); the CSVs' ``# reused:`` line and the comparison's heading
    say how many and from which commit.

    ``seeds``: runs only the planned runs of these seeds (of the sweep's, at `scale`) not yet
    complete in the store nor in ``reuse_runs``, then draws the figure as ``finished_only``
    does: a paper-scale sweep of several seeds goes a seed per sitting."""
    require("matplotlib", f"dcsim reproduce {name} (its figure)")
    mod = module(name)
    per_run = bool(getattr(mod, "PER_RUN", False))
    if seeds is not None and finished_only:
        raise SpecError("--seeds runs the runs of those seeds: not with --finished-only, which runs nothing", "--seeds")
    if reuse_runs is not None and not (finished_only or seeds is not None):
        raise SpecError(
            "--reuse-runs goes with --finished-only or --seeds: runs that can run are run, not reused", "--reuse-runs"
        )
    if reuse_runs is not None and not per_run:
        raise SpecError(
            f"{name}'s figure computes its rows from several runs together (its figure.py sets no PER_RUN), "
            "so rows of single runs cannot stand in for missing ones",
            "--reuse-runs",
        )
    out = Path(out_root) / name / scale
    out.mkdir(parents=True, exist_ok=True)
    # One run store for every reproduction: a run is identified by its resolved spec, so
    # figures drawn from the same runs (or overlapping sweeps) never simulate twice.
    store = Path(out_root) / "_runs"
    spec_path = sweep_path(name)
    runs = None
    missing: list[Any] = []
    reused = None
    planned = 0
    if spec_path is None and (finished_only or seeds is not None):
        option = "--finished-only" if finished_only else "--seeds"
        raise SpecError(f"{name} has no sweep (its figure runs nothing): {option} does not apply", option)
    if spec_path is not None:
        # No unused-field warnings: figures share setting files (PASE's sets `[pfabric]` for
        # the figures that run pFabric), so a figure's sweep may leave part of one unused.
        p = figure_plan(name, scale)
        planned = len(p.runs)
        if seeds is not None:
            unknown = [x for x in seeds if x not in (p.seeds or [])]
            if unknown:
                listed = f"seeds {', '.join(map(str, p.seeds))}" if p.seeds else "no seed axis"
                raise SpecError(
                    f"--seeds {','.join(map(str, unknown))}: {name}'s sweep plans {listed} at {scale} scale", "--seeds"
                )
        if finished_only or seeds is not None:
            missing = record_plan(p, store)
            taken: set[str] = set()
            if reuse_runs is not None:
                reused = reusable_rows(Path(reuse_runs), {r.hash: result_class(r.spec) for r in missing})
                taken = set(reused["run"])
                missing = [r for r in missing if r.hash not in taken]
            chosen = [r for r in missing if seeds is not None and r.params.get("seed") in seeds]
            if chosen:
                part = Plan({**p.axes, "seed": list(seeds or [])}, chosen, p.base_dir)
                _run_or_raise(name, part, store, jobs, use_ray, ray_address, progress)
                # The whole plan the store's again (sweep.json), and what is left of it.
                missing = [r for r in record_plan(p, store) if r.hash not in taken]
            if len(missing) == planned:
                raise SpecError(
                    f"{name}: none of its {planned} {scale}-scale runs is complete in {store}"
                    + (" or has rows in the --reuse-runs file" if reuse_runs is not None else "")
                    + "; run it without --finished-only first",
                    "--finished-only",
                )
        else:
            _run_or_raise(name, p, store, jobs, use_ray, ray_address, progress)
    # The store is shared by every reproduction, so it always holds runs of other plans: load
    # (here and in a figure's data) takes the runs of this plan, the store's sweep.json, and
    # the warning about the others would tell nothing new.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleRunsWarning)
        if spec_path is not None:
            runs = load(store)
        fd = figure_data(mod, runs, store, reused, scale)
        by_run = run_rows(mod, runs, store, model_commit()) if per_run and runs is not None else None
        if by_run is not None and runs is not None and not runs.empty:
            # Checked on the store's runs alone (the reused rows cannot be computed again).
            alone = fd if reused is None or reused.empty else figure_data(mod, runs, store, None, scale)
            check_per_run(mod, alone, by_run)
    seeds = fd.seeds if spec_path is not None or fd.seeds else getattr(mod, "SEEDS", None)
    produced = provenance(name, scale, seeds)
    if missing:
        produced["runs"] = f"{planned - len(missing)} of {planned} (partial: drawn with --finished-only)"
    if reused is not None and not reused.empty:
        produced["reused"] = reused_text(reused, Path(reuse_runs or ""))
    write_data_csv(out / "data.csv", fd.csv_frame(), produced)
    seeds_csv = out / "data-seeds.csv"
    if fd.replicated:
        write_data_csv(seeds_csv, fd.per_seed, produced)
    elif seeds_csv.exists():
        seeds_csv.unlink()
    runs_csv = out / "data-runs.csv"
    if by_run is not None:
        import pandas as pd

        kept = by_run if reused is None else pd.concat([by_run, reused], ignore_index=True)
        write_data_csv(runs_csv, kept.sort_values(["seed", "run"], kind="stable"), produced, float_format=None)
    elif runs_csv.exists():
        runs_csv.unlink()
    partial = f"PARTIAL: {planned - len(missing)} of {planned} runs" if missing else ""
    note = "; ".join(t for t in (partial, scale_caption(spec_path, scale), fd.caption()) if t)
    with dplot.caption(note):
        mod.plot(fd.plot_frame(), out / "figure.png")
    text = comparison(name, fd.by_seed(), scale, mod, produced)
    if missing:
        text += missing_runs_markdown(missing)
    (out / "comparison.md").write_text(text)
    return {"figure": out / "figure.png", "data": out / "data.csv", "comparison": out / "comparison.md"}


def _run_or_raise(
    name: str, p: Plan, store: Path, jobs: int | None, use_ray: bool, ray_address: str | None, progress: bool | None
) -> None:
    """Runs plan `p` into `store`; a failed run stops the reproduction with each one's error."""
    report = run_sweep(p, store, jobs=jobs, use_ray=use_ray, ray_address=ray_address, progress=progress)
    if not report.ok:
        failed = "\n".join(f"  {h}: {e.strip().splitlines()[-1] if e.strip() else e}" for h, e in report.failed.items())
        raise RuntimeError(f"{name}: {len(report.failed)} run(s) failed (details in {store / 'failed'}):\n{failed}")


def reused_text(reused: Any, source: Path) -> str:
    """The ``# reused:`` line of a figure drawn partly from an earlier sitting's rows: how many
    runs, from which file, computed at which commits."""
    import pandas as pd

    n = int(reused["run"].nunique())
    commits = ", ".join(str(c) for c in pd.unique(reused["commit"]))
    return f"{n} run{'s' if n != 1 else ''} from {source.name} (commit {commits})"


def missing_runs_markdown(missing: list[Any]) -> str:
    """comparison.md's list of the planned runs a partial figure was drawn without."""
    lines = ["", f"### Runs not in this figure ({len(missing)}: not finished when it was drawn)", ""]
    for r in missing:
        params = ", ".join(f"{k} = {v}" for k, v in r.params.items())
        lines.append(f"- `{r.hash}`: {params}")
    return "\n".join(lines) + "\n"


def scale_caption(spec_path: Path | None, scale: str) -> str:
    """The scale of a figure's runs, for the line under it, so that a quick-scale figure never
    passes for a paper-scale one: ``quick scale: 2,000 flows per run (paper scale: 100,000)``.
    Empty for a figure without a sweep, or whose runs are the same at either scale."""
    if spec_path is None:
        return ""

    def flows(at: str) -> list[int]:
        runs = plan(spec_path, scale=at, warn=False).runs
        return sorted({int(r.spec.get("workload.flows") or 0) for r in runs})

    def span(counts: list[int]) -> str:
        return f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"

    mine, paper = flows(scale), flows("paper")
    if mine == paper and flows("quick") == paper:
        return ""
    if scale == "paper":
        return f"paper scale: {span(mine)} flows per run"
    return f"{scale} scale: {span(mine)} flows per run (paper scale: {span(paper)})"


def model_commit() -> str:
    """The git commit of the dcsim checkout this package runs from, with "+ uncommitted
    changes" when its model, package or experiments differ from it; "unknown" outside one."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / "crates" / "dcsim").is_dir():
        return "unknown (not run from a dcsim checkout)"
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "crates", "python", "experiments", "workloads"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (git unavailable)"
    return head + (" + uncommitted changes" if changed else "")


def provenance(name: str, scale: str, seeds: list[int] | None) -> dict[str, str]:
    """What produced a reproduction's numbers, as its CSVs record them in their ``#`` lines:
    the reproduction, the scale, the seeds (``none`` for a model-only figure), the dcsim
    version and the git commit of the model (:func:`model_commit`)."""
    from . import _dcsim

    return {
        "reproduction": name,
        "scale": scale,
        "seeds": "none (model only)" if seeds is None else " ".join(map(str, seeds)),
        "dcsim": _dcsim.__version__,
        "commit": model_commit(),
        "columns": "<name>_mean: the mean over seeds; <name>_ci95: the half-width of its 95 % Student-t "
        "interval (empty with one seed); n_seeds: the seeds of the row; <name>_n: the seeds that define "
        "<name>, where fewer (docs/experiments.md, Replicates)",
    }


MODEL_ONLY = "_Model only (no simulation)"
"""How the provenance line of a figure computed from a model, not simulated, begins."""


def provenance_text(produced: Mapping[str, str] | None, scale: str) -> str:
    """The line heading a comparison table: scale, seeds, version and commit; for data written
    before they were recorded, says so."""
    if not produced:
        return (
            f"_{scale.capitalize()} scale; seeds and model commit not recorded (this data predates the record: "
            "the next `dcsim reproduce` writes them)._"
        )
    seeds = produced.get("seeds", "")
    if seeds.startswith("none"):
        # No flows, so no scale: the model gives the same numbers whichever was asked for.
        version, commit = produced.get("dcsim"), produced.get("commit")
        return f"{MODEL_ONLY}, the same at either scale; dcsim {version}, commit {commit}._"
    n = len(seeds.split())
    what = f"{n} seed{'s' if n != 1 else ''} ({', '.join(seeds.split())})"
    scale = produced.get("scale", scale)
    partial = f"; **partial: {produced['runs'].split(' (')[0]} runs**" if produced.get("runs") else ""
    made_by = f"dcsim {produced.get('dcsim')}, commit {produced.get('commit')}"
    if produced.get("reused"):
        made_by += f"; the rows of {produced['reused']}"
    return f"_{scale.capitalize()} scale, {what}{partial}; {made_by}._"


def write_data_csv(path: Path, frame: Any, produced: Mapping[str, str], float_format: str | None = "%.6g") -> None:
    """Writes `frame` as CSV after ``# key: value`` lines saying what produced it (numbers to 6
    digits, or with `float_format` None at full precision, for rows read back as data)."""
    header = "".join(f"# {k}: {v}\n" for k, v in produced.items())
    path.write_text(header + frame.to_csv(index=False, float_format=float_format))


def read_data_csv(path: Path) -> tuple[Any, dict[str, str]]:
    """A figure's CSV and what produced it (``{}`` for one written before that was recorded)."""
    import pandas as pd

    produced: dict[str, str] = {}
    skip = 0
    with path.open() as f:
        for line in f:
            if not line.startswith("# "):
                break
            key, _, value = line[2:].rstrip("\n").partition(": ")
            produced[key] = value
            skip += 1
    return pd.read_csv(path, skiprows=skip), produced


#: Columns of a figure's ``published.csv``.
PUBLISHED_COLUMNS = ["metric", "published", "low", "high", "source", "note"]


@dataclass(frozen=True)
class Ours:
    """Our value for a metric whose text in ``published.csv`` has ``{fields}`` that come from
    the data: ``Ours(0.31, {"load": "0.7"})`` for ``"…, best load ({load})"``."""

    value: Any
    fields: Mapping[str, str]


def published(name: str) -> list[dict[str, Any]]:
    """The figure's published numbers, from ``published.csv`` in its folder: per row
    ``metric``, ``published`` (None, a number, a (low, high) range, or a text such as
    "> 30 %"), ``source`` (paper, section, figure) and ``note``."""
    path = folder(name) / "published.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != PUBLISHED_COLUMNS:
            raise ValueError(f"{path}: columns must be {', '.join(PUBLISHED_COLUMNS)}; found {reader.fieldnames}")
        rows = []
        seen = set()
        for i, r in enumerate(reader, start=2):
            metric = r["metric"].strip()
            if not metric or metric in seen:
                raise ValueError(f"{path}:{i}: {'duplicate' if metric else 'empty'} metric {metric!r}")
            seen.add(metric)
            low, high, text = r["low"].strip(), r["high"].strip(), r["published"].strip()
            value: Any = None
            if low or high:
                if not (low and high) or text:
                    raise ValueError(f"{path}:{i}: a range needs both low and high and no published value")
                value = (float(low), float(high))
            elif text:
                try:
                    value = float(text)
                except ValueError:
                    value = text
            rows.append(
                {"metric": metric, "published": value, "source": r["source"].strip(), "note": r["note"].strip()}
            )
    return rows


def comparison_rows(name: str, ours: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The comparison rows: each row of the figure's ``published.csv``, in order, with our
    value from `ours` (what ``compare()`` returned). A metric missing from either side is an
    error naming it."""
    pub = published(name)
    listed = {r["metric"] for r in pub}
    extra = [m for m in ours if m not in listed]
    missing = [r["metric"] for r in pub if r["metric"] not in ours]
    if extra or missing:
        raise ValueError(
            f"{name}: compare() and published.csv disagree: "
            + "; ".join(
                [f"not in published.csv: {extra}"] * bool(extra)
                + [f"not computed by compare(): {missing}"] * bool(missing)
            )
        )
    rows = []
    for r in pub:
        value = ours[r["metric"]]
        metric = r["metric"]
        if isinstance(value, Ours):
            metric = metric.format(**value.fields)
            value = value.value
        rows.append({"metric": metric, "published": r["published"], "ours": value, "note": r["note"]})
    return rows


#: The README section holding a figure's notes: where its numbers differ from the paper's, and why.
NOTES_HEADING = "Where the numbers differ, and why"
_NOTES_MARK = f"\n**{NOTES_HEADING}.**\n"


def notes(name: str) -> str:
    """The figure's notes: the ``## Where the numbers differ, and why`` section of its README
    (up to the next ``## `` heading), or "" if it has none."""
    readme = folder(name) / "README.md"
    if not readme.exists():
        return ""
    found: list[str] = []
    inside = False
    for line in readme.read_text().splitlines():
        if line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip() == NOTES_HEADING
            continue
        if inside:
            found.append(line)
    return "\n".join(found).strip()


def comparison(
    name: str,
    per_seed: list[Any],
    scale: str,
    mod: ModuleType | None = None,
    produced: Mapping[str, str] | None = None,
) -> str:
    """``comparison.md`` for the figure's numbers, one frame per seed (`per_seed`): the
    published-vs-dcsim table, ours the mean over seeds ± its 95 % interval, and the notes (from
    the README) on where they differ. Without `produced` (data from before seeds were
    recorded), or for a model-only figure, ours is ``compare()`` of the one frame as it is."""
    text = comparison_markdown(
        name, comparison_rows(name, _ours(name, per_seed, mod, produced)), scale, provenance_text(produced, scale)
    )
    figure_notes = notes(name)
    if figure_notes:
        text += _NOTES_MARK + "\n" + figure_notes + "\n"
    return text


def _ours(name: str, per_seed: list[Any], mod: ModuleType | None, produced: Mapping[str, str] | None) -> dict[str, Any]:
    """Our value of each compared metric: ``compare()`` of each seed's frame aggregated over the
    seeds, or of the one frame of data from before seeds were recorded or of a model-only
    figure."""
    mod = mod or module(name)
    seeds = (produced or {}).get("seeds", "none")
    if seeds.startswith("none") or not produced:
        return dict(mod.compare(per_seed[0]))
    return aggregate_compare([mod.compare(d) for d in per_seed])


def _frames_of(csv: Path) -> tuple[list[Any], dict[str, str]]:
    """A figure's data as ``comparison`` takes it, from its CSV in ``docs/figures/``: one frame
    per seed (from the per-seed CSV beside it when the data averages seeds: its ``n_seeds``
    column; from the data's own ``seed`` column when a ``PER_SEED`` figure keeps each seed's
    rows; a figure that simulates without a sweep writes one seed's rows as they are) and what
    produced it."""
    data, produced = read_data_csv(csv)
    with_seeds = None
    averaged = "n_seeds" in data.columns
    if averaged and produced and not produced.get("seeds", "none").startswith("none"):
        seeds = _beside(csv, "seeds")
        if not seeds.exists():
            raise FileNotFoundError(f"{seeds} is missing: {csv} averages seeds, and its comparison needs each")
        with_seeds, _ = read_data_csv(seeds)
    elif "seed" in data.columns and data.seed.nunique() > 1:
        # Curves over time (``PER_SEED``) are not averaged: the comparison too is each seed's.
        with_seeds = data
    if with_seeds is None:
        return [data], produced
    return [g.reset_index(drop=True) for _, g in with_seeds.groupby("seed", sort=True)], produced


@dataclass
class Score:
    """One reproduction's agreement with its paper at one scale: how many published numbers
    fall in each class of :func:`agreement`, and what produced ours."""

    name: str
    scale: str
    counts: dict[str, int]
    produced: dict[str, str]

    @classmethod
    def of(cls, name: str, csv: Path, scale: str) -> Score:
        """The score of the figure data in `csv` (a gallery CSV with its per-seed CSV beside it)."""
        per_seed, produced = _frames_of(csv)
        counts = dict.fromkeys(AGREEMENT_CLASSES, 0)
        for r in comparison_rows(name, _ours(name, per_seed, None, produced)):
            kind = agreement(r["published"], r["ours"])
            if kind is not None:
                counts[kind] += 1
        return cls(name, scale, counts, produced)

    def seeds_text(self) -> str:
        """The seeds of the numbers: ``3``, ``none (model only)``, ``not recorded``."""
        if not self.produced:
            return "not recorded"
        seeds = self.produced.get("seeds", "")
        return "none (model only)" if seeds.startswith("none") else str(len(seeds.split()))


def scorecard_markdown(scores: list[Score]) -> str:
    """The gallery's opening table: per reproduction and scale, the published numbers within
    10 % of ours, farther away, claims in words and those we have no value for; with totals."""
    heads = ["within 10 %", "> 10 % away", "claim in words", "no value of ours"]
    lines = [
        "## Agreement with the papers",
        "",
        "Every published number in the tables below, counted by how ours relates to it "
        "(`dcsim.reproduce.agreement`): **within 10 %** of the published value (or inside its range widened by "
        "10 % of each bound; a range of ours overlapping it), **more than 10 % away**, a **claim in words** "
        "(judged in the figure's notes, not counted either way) and **no value of ours**. Rows of ours without a "
        "published number are not counted. A count is no verdict on a figure: its notes say why the numbers "
        "differ where they do, and the seeds column says how many runs stand behind them.",
        "",
        "| reproduction | scale | seeds | " + " | ".join(heads) + " |",
        "|---|---|---|" + "---|" * len(heads),
    ]
    totals: dict[str, dict[str, int]] = {}
    for sc in scores:
        cells = [sc.scale, sc.seeds_text(), *(str(sc.counts[k]) for k in AGREEMENT_CLASSES)]
        lines.append(f"| [{sc.name}](#{_anchor(title(sc.name))}) | " + " | ".join(cells) + " |")
        total = totals.setdefault(sc.scale, dict.fromkeys(AGREEMENT_CLASSES, 0))
        for k in AGREEMENT_CLASSES:
            total[k] += sc.counts[k]
    for scale, total in totals.items():
        cells = [f"**{total[k]}**" for k in AGREEMENT_CLASSES]
        lines.append(f"| **all** | {scale} | | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _anchor(heading: str) -> str:
    """The anchor MkDocs gives a heading (its default slugify: lower case, word characters,
    spaces to hyphens)."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def gallery(
    results: str | os.PathLike[str] = "results",
    docs: str | os.PathLike[str] = "docs",
    scale: str = "quick",
    refresh: bool = False,
) -> Path:
    """Collects every reproduction at `scale` into ``docs/figures.md`` (+ PNGs and CSVs in
    ``docs/figures/``).

    With `refresh`, nothing is read from `results`: each section is rebuilt from the figure and
    data already in ``docs/figures/``, its comparison computed again from that data, which brings
    the gallery up to date after a README, ``published.csv`` or ``compare()`` changed without
    simulating anything."""
    results, docs = Path(results), Path(docs)
    fig_dir = docs / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    parts = [
        "# Reproduced figures",
        "",
        f"Generated by `dcsim reproduce --all --scale {scale}` and `dcsim gallery` (do not edit by hand).",
        "Each section shows the figure, the published numbers next to ours, and links the data. The line",
        "above each table says what produced its numbers: the scale, the seeds, the dcsim version and the",
        "git commit of the model. Ours is the mean over the seeds ± the half-width of its 95 % confidence",
        "interval (Student t over seeds, n the seeds; docs/experiments.md, Replicates), and a figure made",
        "from several seeds draws the same intervals as error bars. A range of ours (`a – b`) is each",
        "seed's lowest and highest value over the range's points, averaged over the seeds: it can be wider",
        "than the range of the figure's per-point means, which the notes quote when they say so.",
        "",
    ]
    head = len(parts)  # the scorecard goes here, once every figure is scored
    scores: list[Score] = []
    for name in names():
        main = _gallery_source(results / name / scale, fig_dir, name, scale, "", refresh)
        if main is None:
            parts += [
                f"## {title(name)}",
                "",
                f"_Not reproduced yet: run `dcsim reproduce {name} --scale {scale}`._",
                "",
            ]
            continue
        png, csv, text = main
        _copy(png, fig_dir / f"{name}.png")
        _copy(csv, fig_dir / f"{name}.csv")
        _copy_beside(csv, fig_dir / f"{name}-seeds.csv", "seeds")
        _copy_beside(csv, fig_dir / f"{name}-runs.csv", "runs")
        scores.append(Score.of(name, fig_dir / f"{name}.csv", scale))
        rel = folder(name).relative_to(experiments_dir()).as_posix()
        readme = folder(name) / "README.md"
        summary = ""
        if readme.exists():
            # The README's first paragraph after its title.
            para: list[str] = []
            for line in readme.read_text().splitlines()[1:]:
                if line.strip():
                    para.append(line.strip())
                elif para:
                    break
            summary = " ".join(para)
        parts += [
            f"## {title(name)}",
            "",
            summary,
            "",
            f"![{name}](figures/{name}.png)",
            "",
            text.strip(),
            "",
        ]
        # The notes, once (not again with the paper-scale table), from the README as it is now.
        figure_notes = notes(name)
        if figure_notes:
            parts += [_NOTES_MARK.strip(), "", figure_notes, ""]
        parts += [
            f"Data: [`figures/{name}.csv`](figures/{name}.csv) · "
            f"experiment: [`experiments/{rel}/`](../experiments/{rel}/)",
            "",
        ]
        # A reproduction also run at paper scale gets that comparison and figure too.
        paper = (
            _gallery_source(results / name / "paper", fig_dir, name, "paper", "-paper", refresh)
            if scale != "paper"
            else None
        )
        if paper is not None:
            png, csv, text = paper
            _copy(png, fig_dir / f"{name}-paper.png")
            _copy(csv, fig_dir / f"{name}-paper.csv")
            _copy_beside(csv, fig_dir / f"{name}-paper-seeds.csv", "seeds")
            _copy_beside(csv, fig_dir / f"{name}-paper-runs.csv", "runs")
            scores.append(Score.of(name, fig_dir / f"{name}-paper.csv", "paper"))
            parts += [
                f"![{name} at paper scale](figures/{name}-paper.png)",
                "",
                text.strip(),
                "",
                f"Data: [`figures/{name}-paper.csv`](figures/{name}-paper.csv)",
                "",
            ]
    parts[head:head] = [scorecard_markdown(scores)]
    path = docs / "figures.md"
    path.write_text("\n".join(parts))
    return path


def _gallery_source(
    src: Path, fig_dir: Path, name: str, scale: str, suffix: str, refresh: bool
) -> tuple[Path, Path, str] | None:
    """(figure, data, comparison table) of one reproduction at one scale for the gallery: from
    its results folder `src`, or with `refresh` from ``docs/figures/<name><suffix>.*``."""
    if refresh:
        png, csv = fig_dir / f"{name}{suffix}.png", fig_dir / f"{name}{suffix}.csv"
        if not (png.exists() and csv.exists()):
            return None
        per_seed, produced = _frames_of(csv)
        return png, csv, comparison(name, per_seed, scale, produced=produced).split(_NOTES_MARK)[0]
    if not (src / "figure.png").exists() or (suffix and not (src / "comparison.md").exists()):
        return None
    # The table only: the gallery takes the notes from the README.
    table = (src / "comparison.md").read_text().split(_NOTES_MARK)[0]
    return src / "figure.png", src / "data.csv", table


def _beside(csv: Path, what: str) -> Path:
    """A figure's other CSV beside its data: ``data.csv`` -> ``data-seeds.csv`` (each seed's
    rows) or ``data-runs.csv`` (each run's, for a ``PER_RUN`` figure)."""
    return csv.with_name(f"{csv.stem}-{what}.csv")


def _copy_beside(csv: Path, dst: Path, what: str) -> None:
    """Copies the CSV `what` beside `csv` to `dst`, or removes a stale `dst` if there is none."""
    src = _beside(csv, what)
    if src.exists():
        _copy(src, dst)
    elif dst.exists() and src.resolve() != dst.resolve():
        dst.unlink()


def _copy(src: Path, dst: Path) -> None:
    if src.resolve() != dst.resolve():
        shutil.copyfile(src, dst)
