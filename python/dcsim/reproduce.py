"""Paper-figure reproductions, grouped by paper: ``experiments/<paper>/<figure>/`` is the
reproduction named ``<paper>-<figure>`` (``experiments/phost/fig3/`` is ``phost-fig3``). Each
paper folder holds a ``setting.toml`` that its figures' sweeps inherit (``base =
"../setting.toml"``); each figure folder a README, a sweep spec with ``quick`` and ``paper``
scales (or ``SWEEP`` in ``figure.py`` naming another figure's), and ``figure.py`` with three
functions:

- ``data(runs: DataFrame) -> DataFrame``: the figure's numbers from the sweep's summaries
  (``dcsim.load``), written as ``data.csv``; a ``data(runs, store)`` with a second parameter
  also gets the run store's path, for figures that need the per-flow tables
  (``dcsim.load(store, flows=True)``);
- ``plot(data: DataFrame, path: Path)``: the figure, written as ``figure.png``;
- ``compare(data: DataFrame) -> dict``: our value of each metric the figure's
  ``published.csv`` lists (keyed by its ``metric`` text). The published numbers are data:
  ``published.csv`` has one row per compared metric (``metric``, ``published``, or ``low``
  and ``high`` for a range, ``source`` in the paper, ``note``), and the comparison rows are
  built from it in its order, ours next to each, written as ``comparison.md`` with the
  relative difference. A metric whose text has ``{fields}`` (the load where a reduction is
  largest) takes them from an :class:`Ours` value.

Helpers shared by one paper's figures live in :mod:`dcsim.experiments_support`.

``dcsim reproduce NAME`` runs the sweep (resumably) and writes the three files to
``<out>/<NAME>/<scale>/``; ``dcsim gallery`` collects them into ``docs/figures.md``.
"""

from __future__ import annotations

import csv
import importlib.resources
import importlib.util
import inspect
import math
import os
import shutil
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .optional import require
from .spec import SpecError
from .sweep import StaleRunsWarning, load, plan, run_sweep


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


def comparison_markdown(name: str, rows: list[dict[str, Any]], scale: str) -> str:
    lines = [
        f"### {title(name)} — published vs dcsim ({scale} scale)",
        "",
        "| metric | published | dcsim | difference | note |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        pub, ours = r.get("published"), r.get("ours")
        if isinstance(pub, (list, tuple)):
            lo, hi = pub
            pub = f"{lo:.3g}–{hi:.3g}"
            if isinstance(ours, (list, tuple)):
                olo, ohi = ours
                ours = f"{olo:.3g}–{ohi:.3g}"
                overlap = olo <= hi and ohi >= lo
                r = dict(
                    r,
                    note=("overlaps the published range. " if overlap else "does not overlap the published range. ")
                    + r.get("note", ""),
                )
            elif isinstance(ours, (int, float)):
                inside = lo <= ours <= hi
                r = dict(
                    r,
                    note=("inside the published range. " if inside else "outside the published range. ")
                    + r.get("note", ""),
                )
        if isinstance(ours, (list, tuple)):
            olo, ohi = ours
            ours = f"{olo:.3g}–{ohi:.3g}"
            if isinstance(pub, (int, float)):
                inside = olo <= pub <= ohi
                r = dict(
                    r,
                    note=(
                        "the published value is inside our range. "
                        if inside
                        else "the published value is outside our range. "
                    )
                    + r.get("note", ""),
                )
        if isinstance(pub, (int, float)) and isinstance(ours, (int, float)) and pub:
            diff = f"{(ours - pub) / abs(pub) * 100:+.1f} %"
        else:
            diff = "—"
        lines.append(f"| {r['metric']} | {_fmt(pub)} | {_fmt(ours)} | {diff} | {r.get('note', '')} |")
    return "\n".join(lines) + "\n"


def reproduce(
    name: str,
    scale: str = "quick",
    out_root: str | os.PathLike[str] = "results",
    jobs: int | None = None,
    use_ray: bool = False,
    ray_address: str | None = None,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Runs experiment `name` at `scale` and writes figure.png, data.csv, comparison.md.
    Needs matplotlib (``dcsim[plot]``): checked before anything is simulated."""
    require("matplotlib", f"dcsim reproduce {name} (its figure)")
    mod = module(name)
    out = Path(out_root) / name / scale
    out.mkdir(parents=True, exist_ok=True)
    # One run store for every reproduction: a run is identified by its resolved spec, so
    # figures drawn from the same runs (or overlapping sweeps) never simulate twice.
    store = Path(out_root) / "_runs"
    spec_path = sweep_path(name)
    runs = None
    if spec_path is not None:
        # No unused-field warnings: figures share setting files (PASE's sets `[pfabric]` for
        # the figures that run pFabric), so a figure's sweep may leave part of one unused.
        p = plan(spec_path, scale=scale, warn=False)
        report = run_sweep(p, store, jobs=jobs, use_ray=use_ray, ray_address=ray_address, progress=progress)
        if not report.ok:
            failed = "\n".join(
                f"  {h}: {e.strip().splitlines()[-1] if e.strip() else e}" for h, e in report.failed.items()
            )
            raise RuntimeError(f"{name}: {len(report.failed)} run(s) failed (details in {store / 'failed'}):\n{failed}")
    # The store is shared by every reproduction, so it always holds runs of other plans: load
    # (here and in a figure's data) takes the runs of this plan, the store's sweep.json, and
    # the warning about the others would tell nothing new.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleRunsWarning)
        if spec_path is not None:
            runs = load(store)
        wants_store = len(inspect.signature(mod.data).parameters) >= 2
        data = mod.data(runs, store) if wants_store else mod.data(runs)
    data.to_csv(out / "data.csv", index=False, float_format="%.6g")
    mod.plot(data, out / "figure.png")
    (out / "comparison.md").write_text(comparison(name, data, scale, mod))
    return {"figure": out / "figure.png", "data": out / "data.csv", "comparison": out / "comparison.md"}


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


def comparison(name: str, data: Any, scale: str, mod: ModuleType | None = None) -> str:
    """``comparison.md`` for the figure's numbers `data`: the published-vs-dcsim table and
    the notes (from the README) on where they differ."""
    mod = mod or module(name)
    text = comparison_markdown(name, comparison_rows(name, mod.compare(data)), scale)
    figure_notes = notes(name)
    if figure_notes:
        text += _NOTES_MARK + "\n" + figure_notes + "\n"
    return text


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
        "Each section shows the figure, the published numbers next to ours, and links the data.",
        "",
    ]
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
            parts += [
                f"![{name} at paper scale](figures/{name}-paper.png)",
                "",
                text.strip(),
                "",
                f"Data: [`figures/{name}-paper.csv`](figures/{name}-paper.csv)",
                "",
            ]
    path = docs / "figures.md"
    path.write_text("\n".join(parts))
    return path


def _gallery_source(
    src: Path, fig_dir: Path, name: str, scale: str, suffix: str, refresh: bool
) -> tuple[Path, Path, str] | None:
    """(figure, data, comparison table) of one reproduction at one scale for the gallery: from
    its results folder `src`, or with `refresh` from ``docs/figures/<name><suffix>.*``."""
    if refresh:
        import pandas as pd

        png, csv = fig_dir / f"{name}{suffix}.png", fig_dir / f"{name}{suffix}.csv"
        if not (png.exists() and csv.exists()):
            return None
        return png, csv, comparison_markdown(name, comparison_rows(name, module(name).compare(pd.read_csv(csv))), scale)
    if not (src / "figure.png").exists() or (suffix and not (src / "comparison.md").exists()):
        return None
    # The table only: the gallery takes the notes from the README.
    table = (src / "comparison.md").read_text().split(_NOTES_MARK)[0]
    return src / "figure.png", src / "data.csv", table


def _copy(src: Path, dst: Path) -> None:
    if src.resolve() != dst.resolve():
        shutil.copyfile(src, dst)
