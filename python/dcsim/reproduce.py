"""Paper-figure reproductions: ``experiments/<name>/`` holds a README, a sweep spec with
``quick`` and ``paper`` scales, and ``figure.py`` with three functions:

- ``data(runs: DataFrame) -> DataFrame``: the figure's numbers from the sweep's summaries
  (``dcsim.load``), written as ``data.csv``; a ``data(runs, store)`` with a second parameter
  also gets the run store's path, for figures that need the per-flow tables
  (``dcsim.load(store, flows=True)``);
- ``plot(data: DataFrame, path: Path)``: the figure, written as ``figure.png``;
- ``compare(data: DataFrame) -> list[dict]``: rows ``metric``, ``published`` (number or
  None), ``ours``, ``note``, written as ``comparison.md`` with the relative difference.

``dcsim reproduce NAME`` runs the sweep (resumably) and writes the three files to
``<out>/<NAME>/<scale>/``; ``dcsim gallery`` collects them into ``docs/figures.md``.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Optional

from .sweep import load, plan, run_sweep


def experiments_dir() -> Path:
    """The experiments folder: ``$DCSIM_EXPERIMENTS``, or ``experiments/`` next to the package
    source (the repository checkout)."""
    env = os.environ.get("DCSIM_EXPERIMENTS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "experiments").is_dir():
            return parent / "experiments"
    raise FileNotFoundError("cannot find the experiments/ folder; set DCSIM_EXPERIMENTS")


def names() -> List[str]:
    d = experiments_dir()
    return sorted(p.name for p in d.iterdir() if (p / "figure.py").exists() and not p.name.startswith("_"))


def sweep_path(name: str) -> Optional[Path]:
    """The experiment's sweep spec: its own ``sweep.toml``, or the one its ``figure.py`` names
    in ``SWEEP`` (figures drawn from the same runs share one sweep)."""
    rel = getattr(module(name), "SWEEP", "sweep.toml")
    if rel is None:
        return None  # a model-only figure: nothing to simulate
    return (experiments_dir() / name / rel).resolve()


def module(name: str) -> ModuleType:
    path = experiments_dir() / name / "figure.py"
    if not path.exists():
        raise KeyError(name)
    # Experiments may share helpers kept in experiments/ itself (modules starting with "_").
    if str(experiments_dir()) not in sys.path:
        sys.path.insert(0, str(experiments_dir()))
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


def comparison_markdown(name: str, rows: List[Dict[str, Any]], scale: str) -> str:
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
                r = dict(r, note=("overlaps the published range. " if overlap else "does not overlap the published range. ") + r.get("note", ""))
            elif isinstance(ours, (int, float)):
                inside = lo <= ours <= hi
                r = dict(r, note=("inside the published range. " if inside else "outside the published range. ") + r.get("note", ""))
        if isinstance(ours, (list, tuple)):
            olo, ohi = ours
            ours = f"{olo:.3g}–{ohi:.3g}"
            if isinstance(pub, (int, float)):
                inside = olo <= pub <= ohi
                r = dict(r, note=("the published value is inside our range. " if inside else "the published value is outside our range. ") + r.get("note", ""))
        if isinstance(pub, (int, float)) and isinstance(ours, (int, float)) and pub:
            diff = f"{(ours - pub) / abs(pub) * 100:+.1f} %"
        else:
            diff = "—"
        lines.append(f"| {r['metric']} | {_fmt(pub)} | {_fmt(ours)} | {diff} | {r.get('note', '')} |")
    return "\n".join(lines) + "\n"


def reproduce(
    name: str,
    scale: str = "quick",
    out_root: os.PathLike = "results",
    jobs: Optional[int] = None,
    use_ray: bool = False,
    ray_address: Optional[str] = None,
    progress: Optional[bool] = None,
) -> Dict[str, Path]:
    """Runs experiment `name` at `scale` and writes figure.png, data.csv, comparison.md."""
    mod = module(name)
    out = Path(out_root) / name / scale
    out.mkdir(parents=True, exist_ok=True)
    # One run store for every reproduction: a run is identified by its resolved spec, so
    # figures drawn from the same runs (or overlapping sweeps) never simulate twice.
    store = Path(out_root) / "_runs"
    spec_path = sweep_path(name)
    runs = None
    if spec_path is not None:
        p = plan(spec_path, scale=scale)
        report = run_sweep(p, store, jobs=jobs, use_ray=use_ray, ray_address=ray_address, progress=progress)
        if not report.ok:
            failed = "\n".join(f"  {h}: {e.strip().splitlines()[-1] if e.strip() else e}" for h, e in report.failed.items())
            raise RuntimeError(f"{name}: {len(report.failed)} run(s) failed (details in {store / 'failed'}):\n{failed}")
        runs = load(store)
        runs = runs[runs["run"].isin({r.hash for r in p.runs})]
    wants_store = len(inspect.signature(mod.data).parameters) >= 2
    data = mod.data(runs, store) if wants_store else mod.data(runs)
    data.to_csv(out / "data.csv", index=False, float_format="%.6g")
    mod.plot(data, out / "figure.png")
    text = comparison_markdown(name, mod.compare(data), scale)
    notes = getattr(mod, "NOTES", "").strip()
    if notes:
        text += "\n**Where the numbers differ, and why.**\n\n" + notes + "\n"
    (out / "comparison.md").write_text(text)
    return {"figure": out / "figure.png", "data": out / "data.csv", "comparison": out / "comparison.md"}


def gallery(results: os.PathLike = "results", docs: os.PathLike = "docs", scale: str = "quick") -> Path:
    """Collects every reproduction at `scale` into ``docs/figures.md`` (+ PNGs and CSVs in
    ``docs/figures/``)."""
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
        src = results / name / scale
        if not (src / "figure.png").exists():
            parts += [f"## {title(name)}", "", f"_Not reproduced yet: run `dcsim reproduce {name} --scale {scale}`._", ""]
            continue
        shutil.copyfile(src / "figure.png", fig_dir / f"{name}.png")
        shutil.copyfile(src / "data.csv", fig_dir / f"{name}.csv")
        readme = experiments_dir() / name / "README.md"
        summary = ""
        if readme.exists():
            # The README's first paragraph after its title.
            para: List[str] = []
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
            (src / "comparison.md").read_text().strip(),
            "",
            f"Data: [`figures/{name}.csv`](figures/{name}.csv) · experiment: [`experiments/{name}/`](../experiments/{name}/)",
            "",
        ]
        # A reproduction also run at paper scale gets that comparison and figure too.
        paper = results / name / "paper"
        if scale != "paper" and (paper / "comparison.md").exists() and (paper / "figure.png").exists():
            shutil.copyfile(paper / "figure.png", fig_dir / f"{name}-paper.png")
            shutil.copyfile(paper / "data.csv", fig_dir / f"{name}-paper.csv")
            parts += [
                f"![{name} at paper scale](figures/{name}-paper.png)",
                "",
                (paper / "comparison.md").read_text().strip(),
                "",
                f"Data: [`figures/{name}-paper.csv`](figures/{name}-paper.csv)",
                "",
            ]
    path = docs / "figures.md"
    path.write_text("\n".join(parts))
    return path
