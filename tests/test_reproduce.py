"""dcsim reproduce and the figure gallery, on a shrunken copy of the foundation experiment
(the real figure module, fewer flows and loads)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import dcsim
from conftest import ROOT, dcsim_cli

NAME = "foundation-dctcp-vs-tcp"


@pytest.fixture
def experiments(tmp_path, monkeypatch):
    """A copy of the foundation paper folder (its setting.toml and the figure), shrunken."""
    d = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments" / "foundation", d / "foundation")
    sweep = d / "foundation" / "dctcp-vs-tcp" / "sweep.toml"
    text = sweep.read_text()
    text = text.replace('"workload.load" = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]', '"workload.load" = [0.3, 0.8]')
    text = text.replace('[scales.quick]\n"workload.flows" = 2000', '[scales.quick]\n"workload.flows" = 150')
    text += "\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n"
    sweep.write_text(text)
    monkeypatch.setenv("DCSIM_EXPERIMENTS", str(d))
    return d


def test_list_shows_every_shipped_reproduction():
    p = dcsim_cli("reproduce", "--list")
    assert p.returncode == 0
    figures = sorted((ROOT / "experiments").glob("*/*/figure.py"))
    assert len(figures) == 40
    for fig in figures:
        name = f"{fig.parent.parent.name}-{fig.parent.name}"
        assert name in p.stdout
        assert (fig.parent / "README.md").exists()
    for paper in (ROOT / "experiments").iterdir():
        assert (paper / "setting.toml").exists(), f"{paper.name} has no setting.toml"


def test_experiments_are_grouped_by_paper_and_need_no_sys_path():
    """experiments/<paper>/<figure>/ is the reproduction <paper>-<figure>; every sweep file
    inherits its paper's setting; figure modules load without touching sys.path."""
    import sys

    from dcsim import reproduce as rep

    assert rep.folder("phost-fig3") == ROOT / "experiments" / "phost" / "fig3"
    assert rep.folder("pfabric-hotnets-fig2") == ROOT / "experiments" / "pfabric-hotnets" / "fig2"
    assert rep.folder("foundation-dctcp-vs-tcp") == ROOT / "experiments" / "foundation" / "dctcp-vs-tcp"
    for sweep in (ROOT / "experiments").glob("*/*/sweep.toml"):
        first = [line for line in sweep.read_text().splitlines() if line and not line.startswith("#")][0]
        assert first.startswith('base = "../setting'), f"{sweep} does not start from its paper's setting"
    before = list(sys.path)
    for name in rep.names():
        rep.module(name)
    assert sys.path == before
    assert not list((ROOT / "experiments").glob("*.py")) and not list((ROOT / "experiments").glob("*/*.py"))


def test_reproduce_writes_figure_data_and_comparison(experiments, tmp_path):
    from dcsim import reproduce as rep

    out = tmp_path / "results"
    p = dcsim_cli("reproduce", NAME, "--scale", "quick", "--out", out, "--jobs", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = out / NAME / "quick"
    png = (d / "figure.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # Issue 17 item 1: 3 seeds per point; data.csv holds the mean and 95 % interval over them,
    # data-seeds.csv each seed's rows, and both say what produced them.
    data, produced = rep.read_data_csv(d / "data.csv")
    assert set(data.protocol) == {"DCTCP", "TCP"} and sorted(data.load.unique()) == [0.3, 0.8]
    assert set(data.bin) == {"all", "0-100KB", "100KB-10MB", "10MB+"}
    assert (data.n_seeds == 3).all() and {"mean_slowdown_mean", "mean_slowdown_ci95"} <= set(data.columns)
    assert produced["scale"] == "quick" and produced["seeds"] == "1 2 3" and produced["commit"]
    seeds, _ = rep.read_data_csv(d / "data-seeds.csv")
    one = seeds[(seeds.protocol == "TCP") & (seeds.load == 0.8) & (seeds.bin == "all")].mean_slowdown
    row = data[(data.protocol == "TCP") & (data.load == 0.8) & (data.bin == "all")].iloc[0]
    assert sorted(seeds.seed.unique()) == [1, 2, 3] and len(one) == 3 and len(set(one)) == 3
    assert row.mean_slowdown_mean == pytest.approx(one.mean(), rel=1e-5)
    assert row.mean_slowdown_ci95 == pytest.approx(4.302653 * one.std(ddof=1) / 3**0.5, rel=1e-4)
    comp = (d / "comparison.md").read_text()
    assert "| metric | published | dcsim (mean ± 95 % CI over seeds) | difference | note |" in comp
    assert "_Quick scale, 3 seeds (1, 2, 3); dcsim " in comp and "(n = 3) |" in comp
    # A second reproduce reuses every run.
    again = dcsim_cli("reproduce", NAME, "--out", out, cwd=tmp_path)
    assert again.returncode == 0
    # --finished-only runs nothing and draws what is there, saying what is missing.
    runs = out / "_runs" / "runs"
    hashes = sorted(d.name for d in runs.iterdir() if not d.name.startswith("."))
    aside = tmp_path / "aside"
    shutil.move(runs / hashes[0], aside)
    part = dcsim_cli("reproduce", NAME, "--out", out, "--finished-only", cwd=tmp_path)
    assert part.returncode == 0, part.stderr
    assert not (runs / hashes[0]).exists(), "--finished-only ran a run"
    n = len(hashes)
    data, produced = rep.read_data_csv(d / "data.csv")
    assert produced["runs"].startswith(f"{n - 1} of {n} ")
    comp = (d / "comparison.md").read_text()
    assert f"**partial: {n - 1} of {n} runs**" in comp and f"- `{hashes[0]}`: " in comp
    shutil.move(aside, runs / hashes[0])
    again = dcsim_cli("reproduce", NAME, "--out", out, "--finished-only", cwd=tmp_path)
    assert again.returncode == 0 and "runs" not in rep.read_data_csv(d / "data.csv")[1]
    assert "partial" not in (d / "comparison.md").read_text()
    jobs = dcsim_cli("reproduce", NAME, "--out", out, "--finished-only", "--jobs", "2", cwd=tmp_path)
    assert jobs.returncode == 2 and "--jobs has no effect with --finished-only" in jobs.stderr
    nothing = dcsim_cli("reproduce", NAME, "--out", tmp_path / "empty", "--finished-only", cwd=tmp_path)
    assert nothing.returncode == 2 and "none of its" in nothing.stderr
    # The gallery collects it.
    docs = tmp_path / "docs"
    g = dcsim_cli("gallery", "--results", out, "--docs", docs)
    assert g.returncode == 0, g.stderr
    md = (docs / "figures.md").read_text()
    assert f"![{NAME}](figures/{NAME}.png)" in md and "published vs dcsim" in md
    assert (docs / "figures" / f"{NAME}.png").exists() and (docs / "figures" / f"{NAME}.csv").exists()
    assert (docs / "figures" / f"{NAME}-seeds.csv").exists() and "_Quick scale, 3 seeds (1, 2, 3); dcsim " in md
    # Refreshing from the gallery's own CSVs (each seed's rows) gives the same gallery.
    assert rep.gallery(tmp_path / "no-results", docs, refresh=True).read_text() == md
    assert "paper scale" not in md
    # A paper-scale result, when present, is shown as well.
    shutil.copytree(out / NAME / "quick", out / NAME / "paper")
    (out / NAME / "paper" / "comparison.md").write_text("### paper-scale table\n")
    g = dcsim_cli("gallery", "--results", out, "--docs", docs)
    md = (docs / "figures.md").read_text()
    assert "paper-scale table" in md and (docs / "figures" / f"{NAME}-paper.png").exists()


def test_rows_of_an_earlier_sitting_stand_in_for_missing_runs(experiments, tmp_path):
    """Issue 17 item 2 (paper scale over several sittings): a PER_RUN figure keeps each run's
    rows (data-runs.csv: the run's hash, its seed, the model commit; the gallery copies it);
    drawn with --finished-only --reuse-runs, the kept rows stand in for runs no longer in the
    store, and the figure is exactly the one all its runs give."""
    import pandas as pd

    from dcsim import reproduce as rep

    out = tmp_path / "results"
    p = dcsim_cli("reproduce", NAME, "--out", out, "--jobs", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = out / NAME / "quick"

    def in_order(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(["protocol", "load", "bin"]).reset_index(drop=True)

    whole = in_order(rep.read_data_csv(d / "data.csv")[0])
    rows, _ = rep.read_data_csv(d / "data-runs.csv")
    runs = out / "_runs" / "runs"
    hashes = sorted(x.name for x in runs.iterdir() if not x.name.startswith("."))
    assert sorted(rows.run.unique()) == hashes and set(rows.commit) == {rep.model_commit()}
    assert (rows.groupby("run").size() == 4).all() and sorted(rows.seed.unique()) == [1, 2, 3]
    kept = tmp_path / "kept-runs.csv"
    shutil.copy(d / "data-runs.csv", kept)
    # Two runs lost (say, with a machine): drawn from the others and the kept rows.
    for h in hashes[:2]:
        shutil.rmtree(runs / h)
    again = dcsim_cli("reproduce", NAME, "--out", out, "--finished-only", "--reuse-runs", kept, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    data, produced = rep.read_data_csv(d / "data.csv")
    assert "runs" not in produced and produced["reused"].startswith("2 runs from kept-runs.csv (commit ")
    pd.testing.assert_frame_equal(in_order(data), whole)
    assert "; the rows of 2 runs from kept-runs.csv (commit " in (d / "comparison.md").read_text()
    # The reused rows stay in data-runs.csv for the next sitting, and the gallery keeps them.
    assert sorted(rep.read_data_csv(d / "data-runs.csv")[0].run.unique()) == hashes
    g = dcsim_cli("gallery", "--results", out, "--docs", tmp_path / "docs")
    assert g.returncode == 0 and (tmp_path / "docs" / "figures" / f"{NAME}-runs.csv").exists()
    # Without the kept rows the same figure is partial.
    part = dcsim_cli("reproduce", NAME, "--out", out, "--finished-only", cwd=tmp_path)
    assert part.returncode == 0 and rep.read_data_csv(d / "data.csv")[1]["runs"].startswith(f"{len(hashes) - 2} of ")
    # With every run's rows kept, it is redrawn with no run in the store at all.
    empty = tmp_path / "empty"
    alone = dcsim_cli("reproduce", NAME, "--out", empty, "--finished-only", "--reuse-runs", kept, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    data, produced = rep.read_data_csv(empty / NAME / "quick" / "data.csv")
    assert produced["reused"].startswith(f"{len(hashes)} runs from ")
    pd.testing.assert_frame_equal(in_order(data), whole)

    def refused(*args: object) -> str:
        r = dcsim_cli("reproduce", NAME, "--out", out, *args, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        return r.stderr

    assert "goes with --finished-only" in refused("--reuse-runs", kept)
    assert "no such file" in refused("--finished-only", "--reuse-runs", tmp_path / "none.csv")
    # Rows of a model that cannot be checked against this checkout's results are refused.
    stale = tmp_path / "stale-runs.csv"
    stale.write_text(kept.read_text().replace(rep.model_commit(), "0123456789ab"))
    assert "cannot stand in for runs of this checkout" in refused("--finished-only", "--reuse-runs", stale)
    # A figure whose rows mix runs cannot take single runs' rows.
    fig = experiments / "foundation" / "dctcp-vs-tcp" / "figure.py"
    fig.write_text(fig.read_text().replace("PER_RUN = True", "PER_RUN = False"))
    assert "sets no PER_RUN" in refused("--finished-only", "--reuse-runs", kept)


def test_a_sweep_of_several_seeds_goes_a_seed_per_sitting(experiments, tmp_path):
    """Issue 17 item 2: `dcsim reproduce NAME --seeds N` runs only seed N's runs and draws the
    figure from every planned run complete (PARTIAL until all are); with --reuse-runs the rows
    kept from the sittings before stand in for their runs, so after the last seed's sitting the
    figure is exactly the one all its runs give at once, though no store held them together."""
    import pandas as pd

    from dcsim import reproduce as rep

    def in_order(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(["protocol", "load", "bin"]).reset_index(drop=True)

    whole_out = tmp_path / "whole"
    p = dcsim_cli("reproduce", NAME, "--out", whole_out, "--jobs", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    whole = in_order(rep.read_data_csv(whole_out / NAME / "quick" / "data.csv")[0])
    planned = sum(1 for x in (whole_out / "_runs" / "runs").iterdir() if not x.name.startswith("."))
    kept = None
    for seed in (1, 2, 3):
        # Each sitting on a fresh machine: an empty store, the rows kept from before.
        out = tmp_path / f"sitting{seed}"
        args = ["--reuse-runs", kept] if kept is not None else []
        r = dcsim_cli("reproduce", NAME, "--out", out, "--seeds", str(seed), "--jobs", "2", *args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        store = [x for x in (out / "_runs" / "runs").iterdir() if not x.name.startswith(".")]
        ran = [json.loads((x / "params.json").read_text())["seed"] for x in store]
        assert ran == [seed] * (planned // 3), "only the seed asked for runs"
        d = out / NAME / "quick"
        data, produced = rep.read_data_csv(d / "data.csv")
        if seed < 3:
            assert produced["runs"] == f"{planned // 3 * seed} of {planned} (partial: drawn with --finished-only)"
        else:
            assert "runs" not in produced
            pd.testing.assert_frame_equal(in_order(data), whole)
        kept = tmp_path / f"kept{seed}-runs.csv"
        shutil.copy(d / "data-runs.csv", kept)
    # The last seed again, its rows kept: nothing left to run.
    again = tmp_path / "again"
    r = dcsim_cli("reproduce", NAME, "--out", again, "--seeds", "3", "--reuse-runs", kept, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = again / "_runs" / "runs"
    assert not runs.exists() or not [x for x in runs.iterdir() if not x.name.startswith(".")]

    def refused(*args: object) -> str:
        r = dcsim_cli("reproduce", NAME, "--out", tmp_path / "refused", *args, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        return r.stderr

    assert "--seeds 4: foundation-dctcp-vs-tcp's sweep plans seeds 1, 2, 3 at quick scale" in refused("--seeds", "4")
    assert "not with --finished-only" in refused("--seeds", "2", "--finished-only")
    assert "not with --all" in refused("--all", "--seeds", "2")
    assert "each given once" in refused("--seeds", "2,2")
    assert "comma-separated" in refused("--seeds", "two")


def test_a_sweep_runs_the_seeds_asked_for_as_the_same_runs(tmp_path):
    """`dcsim sweep --seeds 2,3` replaces the sweep's replicates (or seed list, or its scale's)
    with exactly those seeds; each run is the one the whole sweep plans (the same hash)."""
    from dcsim.sweep import plan

    spec = ROOT / "experiments" / "foundation" / "dctcp-vs-tcp" / "sweep.toml"
    for scale in ("quick", "paper"):
        whole = plan(spec, scale=scale, warn=False)
        part = plan(spec, scale=scale, warn=False, seeds=[3, 2])
        assert part.seeds == [3, 2]
        want = {r.hash for r in whole.runs if r.params["seed"] in (2, 3)}
        assert {r.hash for r in part.runs} == want and len(part.runs) == len(want)
        beyond = plan(spec, scale=scale, warn=False, seeds=[7])
        assert {r.params["seed"] for r in beyond.runs} == {7}
    dry = dcsim_cli("sweep", spec, "--seeds", "2", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = [line.split()[0] for line in dry.stdout.splitlines()[:-1]]
    assert sorted(listed) == sorted(r.hash for r in plan(spec, warn=False).runs if r.params["seed"] == 2)
    both = dcsim_cli("sweep", spec, "--seeds", "2", "--seed", "5", "--dry-run")
    assert both.returncode == 2 and "not both" in both.stderr


def _per_run_module(data):
    """A stand-in figure module with `data` and PER_RUN, for the per-run checks."""
    import types

    return types.SimpleNamespace(__name__="fake", data=data, KEYS=["load"], PER_RUN=True)


def _fake_runs():
    import pandas as pd

    return pd.DataFrame(
        {
            "run": ["a", "b", "c", "d"],
            "seed": [1, 1, 2, 2],
            "protocol": ["x", "y", "x", "y"],
            "load": [0.5, 0.6, 0.5, 0.6],
            "mean_slowdown": [1.5, 2.0, 1.25, 4.0],
        }
    )


def test_a_per_run_figure_whose_rows_mix_runs_is_refused(tmp_path):
    """PER_RUN promises that data() of a seed's runs together is the rows of each run alone
    (rows kept from one sitting stand in for runs of another): the reproduction checks it, and
    a figure that normalises one run by another is refused, naming the seed."""
    from dcsim import reproduce as rep

    def per_run(runs):
        return runs[["protocol", "load", "mean_slowdown"]].reset_index(drop=True)

    def relative(runs):  # each run against the seed's first: rows depend on the other runs
        d = per_run(runs)
        d["mean_slowdown"] = d["mean_slowdown"] / d["mean_slowdown"].iloc[0]
        return d

    runs = _fake_runs()
    for data, ok in ((per_run, True), (relative, False)):
        mod = _per_run_module(data)
        fd = rep.figure_data(mod, runs, tmp_path)
        by_run = rep.run_rows(mod, runs, tmp_path, "abc")
        if ok:
            rep.check_per_run(mod, fd, by_run)
        else:
            with pytest.raises(ValueError, match="sets PER_RUN, but data\\(\\) of seed 1's runs together"):
                rep.check_per_run(mod, fd, by_run)


def test_a_run_a_figure_draws_nothing_from_is_kept_as_done(tmp_path):
    """Figures share sweeps (pHost Fig. 3 plots the load 0.6 runs of Figs. 3-6's): a run whose
    rows are empty for this figure keeps a row of its hash, seed and commit in data-runs.csv,
    so that a later sitting counts it done, and the figure draws nothing from that row."""
    from dcsim import reproduce as rep

    def at_half_load(runs):
        d = runs[["protocol", "load", "mean_slowdown"]]
        return d[(d.load - 0.5).abs() < 1e-9].reset_index(drop=True)

    mod = _per_run_module(at_half_load)
    runs = _fake_runs()
    by_run = rep.run_rows(mod, runs, tmp_path, "abc")
    assert sorted(by_run.run) == ["a", "b", "c", "d"]
    marks = by_run[by_run.protocol.isna()]
    assert sorted(marks.run) == ["b", "d"] and marks["mean_slowdown"].isna().all()
    drawn = rep.drawn_rows(by_run)
    assert sorted(drawn.run) == ["a", "c"]
    rep.check_per_run(mod, rep.figure_data(mod, runs, tmp_path), by_run)
    # Written and read back, as a later sitting reads it: the same two rows are drawn, and all
    # four runs stand in for missing ones.
    path = tmp_path / "data-runs.csv"
    rep.write_data_csv(path, by_run, {"reproduction": "fake"}, float_format=None)
    back, _ = rep.read_data_csv(path)
    assert sorted(back.run) == ["a", "b", "c", "d"] and sorted(rep.drawn_rows(back).run) == ["a", "c"]
    fd = rep.figure_data(mod, runs.iloc[0:0], tmp_path, reused=back)
    assert sorted(fd.per_seed.mean_slowdown) == [1.25, 1.5]


def test_kept_rows_are_taken_only_from_a_model_with_the_same_results():
    """--reuse-runs takes rows of a commit only when every result digest recorded then is
    unchanged now: a changed or removed case refuses them, a case added since does not."""
    from dcsim import reproduce as rep

    then = "# comment\ndctcp aaa\nphost bbb\n"
    assert rep.changed_digests(then, then) == []
    assert rep.changed_digests(then, then + "homa ccc\n") == []
    assert rep.changed_digests(then, "dctcp aaa\nphost bbx\n") == ["phost"]
    assert rep.changed_digests(then, "phost bbb\n") == ["dctcp"]
    # The protocol column says whose results changed; without it (or for a case gone), any.
    assert rep.changed_protocols(then, "dctcp aaa dctcp\nphost bbx phost\n") == {"phost"}
    assert rep.changed_protocols(then, "dctcp aaa dctcp\nphost bbb phost\n") == set()
    assert rep.changed_protocols(then, "dctcp aaa\nphost bbx\n") is None
    assert rep.changed_protocols(then, "phost bbb phost\n") is None
    assert rep.results_unchanged_since(rep.model_commit()) == ""
    assert "uncommitted changes" in rep.results_unchanged_since("0123456789ab + uncommitted changes")
    assert "does not know" in rep.results_unchanged_since("0123456789ab")


def test_unknown_experiment_suggests(experiments):
    p = dcsim_cli("reproduce", "foundation-dctcp-vs-tc")
    assert p.returncode == 2 and f"did you mean `{NAME}`" in p.stderr


def test_every_shipped_sweep_is_valid_at_both_scales():
    """Each reproduction's sweep expands and every run's spec resolves (nothing is simulated)."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    for name in rep.names():
        mod = rep.module(name)
        assert callable(mod.data) and callable(mod.plot) and callable(mod.compare), name
        path = rep.sweep_path(name)
        if path is None:
            continue
        for scale in ("quick", "paper"):
            p = plan(path, scale=scale)
            assert p.runs, f"{name} at {scale} scale has no runs"
        # A worker resolves the resolved spec again: it must agree with itself.
        for r in p.runs:
            assert dcsim.resolve(r.spec.tree).tree == r.spec.tree, f"{name}: {r.params}"


def _run_digest(tree) -> str:
    """A run's identity without the dcsim version, with each file it reads (a trace) named by
    its content instead of its absolute path, so moving an experiment's folder keeps it."""

    def norm(v):
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, str) and v.startswith("/") and Path(v).is_file():
            return "sha256:" + hashlib.sha256(Path(v).read_bytes()).hexdigest()
        return v

    return hashlib.sha256(json.dumps(norm(tree), sort_keys=True).encode()).hexdigest()[:16]


def test_every_reproduction_plans_the_recorded_runs():
    """Each reproduction's sweep, at both scales, plans the runs recorded in
    tests/data/sweep_plans.json: its seeds, how many runs in all, and exactly which runs of the
    first seed (recorded before the experiments were regrouped by paper; when Issue 17 made
    every reproduction run 3 seeds, the first seed's runs stayed what they were, except in the
    PASE sweeps that already listed seeds; HotNets'12 Figs. 3 and 4, when they took their
    workload's half of Fig. 2's sweep with `RUNS`, were recorded again with that half). How the
    sweeps are written may change, the runs may not."""
    from dcsim import reproduce as rep

    recorded = json.loads((ROOT / "tests" / "data" / "sweep_plans.json").read_text())
    assert sorted(rep.names()) == sorted(recorded)
    for name, scales in recorded.items():
        path = rep.sweep_path(name)
        assert (path is None) == (not scales), name
        for scale, want in scales.items():
            p = rep.figure_plan(name, scale)
            got = {**_first_seed_runs(p, p.runs), "seeds": p.seeds or [], "total": len(p.runs)}
            assert got == want, f"{name} at {scale} scale plans other runs than recorded"


def test_hotnets_figs_3_and_4_split_fig2s_runs_by_workload():
    """HotNets'12 Figs. 3 (data mining) and 4 (web search) draw from Fig. 2's sweep; each one's
    `RUNS` takes its workload's runs, and together they are exactly Fig. 2's, none in both, at
    both scales: each figure runs, counts and waits for its own runs only."""
    from dcsim import reproduce as rep

    for scale in ("quick", "paper"):
        whole = {r.hash for r in rep.figure_plan("pfabric-hotnets-fig2", scale).runs}
        parts = {}
        for fig, workload in (("fig3", "datamining"), ("fig4", "websearch")):
            runs = rep.figure_plan(f"pfabric-hotnets-{fig}", scale).runs
            assert {r.params["workload.flow_sizes"] for r in runs} == {workload}, (fig, scale)
            parts[fig] = {r.hash for r in runs}
        assert not parts["fig3"] & parts["fig4"], scale
        assert parts["fig3"] | parts["fig4"] == whole, scale


def test_a_figures_runs_filter_that_keeps_nothing_is_refused(monkeypatch):
    """A figure's `RUNS` that keeps none of its sweep's runs, or fails on them, is an error that
    names it, not an empty figure."""
    from dcsim import reproduce as rep

    real = rep.module
    for expr, says in (("flow_sizes == 'nothing'", "keeps none"), ("no_such_axis == 1", "failed on")):

        def fake(name, expr=expr):
            mod = real(name)
            mod.RUNS = expr
            return mod

        monkeypatch.setattr(rep, "module", fake)
        with pytest.raises(dcsim.SpecError, match=says) as e:
            rep.figure_plan("pfabric-hotnets-fig4", "quick")
        assert "RUNS of pfabric-hotnets-fig4" in str(e.value)


def _first_seed_runs(p, runs, undo=None) -> dict:
    """How many of `runs` (runs of plan `p`) have the plan's first seed, and the digest of
    their identities (every run when the plan lists no seeds), each identity first passed to
    `undo` (which sets back, in place, a change made to the runs since they were recorded)."""
    first = p.seeds[0] if p.seeds else None
    digests = []
    for r in runs:
        if first is None or r.params["seed"] == first:
            identity = r.spec.identity()
            if undo is not None:
                undo(identity)
            digests.append(_run_digest(identity))
    digests.sort()
    return {"runs": len(digests), "digest": hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]}


def test_fig9_permutation_keeps_its_derangement_runs():
    """Issue 17 item 3.4: adding the pHost authors' first matrix ("self") to pHost Fig. 9's
    permutation sweep kept the derangement's runs exactly those the sweep planned before (its
    recorded first-seed digests), so no earlier result changes; "self" adds as many again."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    before = {"quick": "2e99a5c8515fb93c", "paper": "d2898b00f39692e9"}
    for scale, digest in before.items():
        p = plan(rep.sweep_path("phost-fig9-permutation"), scale=scale, warn=False)
        by_matrix = {
            m: [r for r in p.runs if r.spec.identity()["workload"]["matrix"] == m] for m in ("permutation", "self")
        }
        assert _first_seed_runs(p, by_matrix["permutation"]) == {"runs": 33, "digest": digest}, scale
        assert len(by_matrix["self"]) == len(by_matrix["permutation"]) == len(p.runs) // 2, scale


def test_pias_large_scale_changed_only_its_l2dct_runs():
    """Issue 17 gap 3.3: PIAS Figs. 14-17's sweep runs L2DCT with `l2dct.increase =
    "authors-code"` (its recorded digests changed with it); every other run is exactly one the
    sweep planned before (their recorded first-seed digests), so no other result changes."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    before = {"quick": "0258f7c10fc87fe4", "paper": "569cfbd1a7f6b5ee"}
    for scale, digest in before.items():
        p = plan(rep.sweep_path("pias-fig14"), scale=scale, warn=False)
        protocol = {r.hash: r.spec.identity()["transport"]["protocol"] for r in p.runs}
        others = [r for r in p.runs if protocol[r.hash] != "l2dct"]
        assert _first_seed_runs(p, others) == {"runs": 32, "digest": digest}, scale
        l2dct = [r for r in p.runs if protocol[r.hash] == "l2dct"]
        assert l2dct and all(r.spec.get("l2dct.increase") == "authors-code" for r in l2dct), scale


def test_pias_testbed_changed_only_its_rto():
    """Issue 17 gap 3.3: the PIAS testbed setting (Figs. 3, 6-9, 11-13) moved from the authors'
    ns-2 fixed 2 ms RTO to the testbed's Linux adaptive RTO with a 10 ms minimum (PIAS §3.2.3);
    with the RTO set back (and the switch memory the setting shares since, below), every run is
    exactly one the sweeps planned before (their recorded first-seed digests), so nothing else
    about those runs changed."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    before = {
        ("pias-fig3", "quick"): "3855663d47d88d63",
        ("pias-fig6", "quick"): "4f77144f4f4a7b77",
        ("pias-fig6", "paper"): "fc5be52f8e7e2e6d",
        ("pias-fig8", "quick"): "c5f295c3e6dd41ce",
        ("pias-fig8", "paper"): "b235c59840df54e5",
        ("pias-fig11", "quick"): "9007f7feb212980a",
        ("pias-fig11", "paper"): "7b6cd6c7785bf519",
        ("pias-fig12", "quick"): "7864f201aa3156a9",
        ("pias-fig12", "paper"): "022f0ef1879b4369",
        ("pias-fig13", "quick"): "17977022c702e271",
        ("pias-fig13", "paper"): "818f9959dd0f48c4",
    }
    for (name, scale), digest in before.items():
        p = plan(rep.sweep_path(name), scale=scale, warn=False)

        def undo(identity, name=name):
            assert (identity["transport"]["rto"], identity["transport"]["min_rto_us"]) == ("adaptive", 10000), name
            identity["transport"].update(rto="fixed", min_rto_us=2000.0)
            identity["topology"].pop("shared_buffer_bytes")

        assert _first_seed_runs(p, p.runs, undo)["digest"] == digest, (name, scale)


def test_pias_testbed_changed_only_its_switch_memory():
    """Issue 17 gap 3.3: the PIAS testbed setting (Figs. 3 and 6-13) shares the switch's 4 MB
    among its ports under dynamic thresholds (PIAS §4.2, "4MB shared memory") where each port
    had 500 KB of its own; every run has that memory, and with it taken out every run is
    exactly one the sweeps planned before (their recorded first-seed digests), so nothing
    else about those runs changed."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    before = {
        "pias-fig3": {"quick": "b968f39e0f210b56", "paper": "b968f39e0f210b56"},
        "pias-fig6": {"quick": "1753b936591f72d3", "paper": "1ace4ec872938335"},
        "pias-fig8": {"quick": "f673bfcb797d25fd", "paper": "b0c46cdaeb7151f4"},
        "pias-fig10": {"quick": "e490a3d1229712e0", "paper": "e490a3d1229712e0"},
        "pias-fig11": {"quick": "593a65c606d38b81", "paper": "40939aa50ea9ccaa"},
        "pias-fig12": {"quick": "a379171d93b7d4d7", "paper": "d5afee651b76d755"},
        "pias-fig13": {"quick": "4d574cf2daff24f2", "paper": "a179bb83d7b3527c"},
    }
    for name, scales in before.items():
        for scale, digest in scales.items():
            p = plan(rep.sweep_path(name), scale=scale, warn=False)
            for r in p.runs:
                topology = r.spec.identity()["topology"]
                assert topology.get("shared_buffer_bytes") == 4_000_000, (name, r.params)
                assert "buffer_alpha" not in topology, name  # the default, 1
            assert _first_seed_runs(p, p.runs, _without_shared_memory)["digest"] == digest, (name, scale)


def _without_shared_memory(identity) -> None:
    identity["topology"].pop("shared_buffer_bytes")


def test_sigcomm_fig17_paper_scale_changed_only_its_ending():
    """The pFabric and PIAS authors' ns-2 scripts let every flow finish (`tcp-common-opt.tcl`
    starts no flow once `sim_end` flows have started and stops at the `sim_end`-th completion);
    SIGCOMM'13 Fig. 17's paper-scale runs, which ended at the 100,000th completion as the
    scripts' supposed rule, now let every flow finish too, and with `n-finished` put back each
    is exactly a run the sweep planned before (its recorded first-seed digest)."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    p = plan(rep.sweep_path("pfabric-sigcomm-fig17"), scale="paper", warn=False)
    for r in p.runs:
        assert "stop_when" not in r.spec.identity()["workload"], r.params  # the default, all-finished
    assert _first_seed_runs(p, p.runs, _ending_at_the_nth_completion)["digest"] == "9461cf1482499f67"


def _ending_at_the_nth_completion(identity) -> None:
    identity["workload"]["stop_when"] = "n-finished"


def test_phost_fig10_changed_only_its_smallest_buffer_cap():
    """Issue 17: pHost Fig. 10 caps pFabric's window at 4 packets at 6.2 KB (the best of the
    settings tried there, its README) in place of the authors' scripts' rule (6); with the cap
    set back, every run is exactly one the sweep planned before (its recorded first-seed
    digests), and only pFabric's 6.2 KB runs had the cap changed."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    before = {"quick": "e575e289545449a3", "paper": "30e8a6cefac745b8"}
    for scale, digest in before.items():
        p = plan(rep.sweep_path("phost-fig10"), scale=scale, warn=False)
        changed = []

        def undo(identity, scale=scale, changed=changed):
            if identity["topology"]["buffer_bytes"] == 6200:
                assert identity["pfabric"]["max_window_pkts"] == 4, scale
                identity["pfabric"]["max_window_pkts"] = 6
                changed.append(identity["transport"]["protocol"])

        assert _first_seed_runs(p, p.runs, undo)["digest"] == digest, scale
        assert changed.count("pfabric") == 1, scale


def test_every_reproduction_runs_three_seeds_at_quick_scale():
    """Issue 17 item 1: every reproduction that simulates runs each point with at least 3 seeds
    at quick scale, except PIAS Figs. 3 and 10, whose fixed traces on one switch involve no
    random choice (their READMEs: other seeds give the same FCTs)."""
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    for name in rep.names():
        path = rep.sweep_path(name)
        if path is None or name in ("pias-fig3", "pias-fig10"):
            continue
        p = plan(path, scale="quick", warn=False)
        assert p.seeds is not None and len(p.seeds) >= 3, name
        per_point: dict[str, set] = {}
        for r in p.runs:
            point = json.dumps({k: v for k, v in r.params.items() if k != "seed"}, sort_keys=True, default=str)
            per_point.setdefault(point, set()).add(r.params["seed"])
        assert min(len(s) for s in per_point.values()) >= 3, name


def test_a_figure_says_its_scale_under_it():
    """A quick-scale figure never passes for a paper-scale one (the brief: "a plot never looks like
    a paper-scale result when it is not"): the line under it names the scale and the flows per
    run, from the sweep's own scale settings; a figure whose runs are the same at both scales
    (PIAS Fig. 3's fixed trace) or that has no sweep says nothing about scale."""
    from dcsim import reproduce as rep

    path = rep.sweep_path(NAME)
    assert rep.scale_caption(path, "quick") == "quick scale: 2,000 flows per run (paper scale: 100,000)"
    assert rep.scale_caption(path, "paper") == "paper scale: 100,000 flows per run"
    fig3 = rep.sweep_path("phost-fig3")
    assert rep.scale_caption(fig3, "quick") == "quick scale: 1,000-20,000 flows per run (paper scale: 100,000)"
    assert rep.scale_caption(rep.sweep_path("pias-fig3"), "quick") == ""
    assert rep.scale_caption(None, "quick") == ""


def test_gallery_is_what_the_committed_figure_data_gives(tmp_path):
    """docs/figures.md is `dcsim gallery --refresh` of the committed docs/figures/: for every
    reproduction (and its paper-scale run, where committed) the comparison that its figure
    module, published numbers and README make of the committed data. A change to any of them
    that the gallery does not show fails here; `dcsim gallery --refresh` brings it up to date."""
    from dcsim import reproduce as rep

    shutil.copytree(ROOT / "docs" / "figures", tmp_path / "docs" / "figures")
    md = rep.gallery(tmp_path / "no-results", tmp_path / "docs", refresh=True)
    assert md.read_text() == (ROOT / "docs" / "figures.md").read_text()
    assert sorted(p.name for p in (tmp_path / "docs" / "figures").iterdir()) == sorted(
        p.name for p in (ROOT / "docs" / "figures").iterdir()
    )


def test_every_figures_comparison_takes_a_partial_figure():
    """`dcsim reproduce NAME --finished-only` draws a figure from the runs that have finished
    (a paper-scale sweep takes hours): every simulated figure's `compare()` must then give NaN
    (shown as "no value of ours") for the points whose runs are missing, not fail. Each
    figure's committed data with every other row left out stands in for such a figure."""
    from dcsim import reproduce as rep

    checked = 0
    for name in rep.names():
        csv = ROOT / "docs" / "figures" / f"{name}.csv"
        mod = rep.module(name)
        if not csv.exists() or not hasattr(mod, "compare"):
            continue
        per_seed, produced = rep._frames_of(csv)
        if "model only" in produced.get("seeds", ""):
            continue  # nothing simulated: a model-only figure is never partial
        part = per_seed[0].iloc[::2].reset_index(drop=True)
        ours = mod.compare(part)  # must not raise
        assert ours, name
        checked += 1
    assert checked >= 35


def test_notes_come_from_the_readme(experiments, tmp_path):
    """A figure's notes are its README's `## Where the numbers differ, and why` section, up to
    the next section: comparison.md ends with them, the gallery shows them once."""
    from dcsim import reproduce as rep

    readme = experiments / "foundation" / "dctcp-vs-tcp" / "README.md"
    # Start from the README without its own notes (the section ends the file).
    readme.write_text(readme.read_text().split("\n## Where the numbers differ, and why")[0])
    assert rep.notes(NAME) == ""
    readme.write_text(
        readme.read_text()
        + "\n## Where the numbers differ, and why\n\n- **A note.** With two lines\n  of text.\n"
        + "\n## Later\n\nnot a note\n"
    )
    assert rep.notes(NAME) == "- **A note.** With two lines\n  of text."
    out = tmp_path / "results"
    p = dcsim_cli("reproduce", NAME, "--out", out, "--jobs", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    comp = (out / NAME / "quick" / "comparison.md").read_text()
    assert comp.endswith("**Where the numbers differ, and why.**\n\n- **A note.** With two lines\n  of text.\n")
    shutil.copytree(out / NAME / "quick", out / NAME / "paper")
    assert dcsim_cli("gallery", "--results", out, "--docs", tmp_path / "docs").returncode == 0
    md = (tmp_path / "docs" / "figures.md").read_text()
    assert md.count("- **A note.** With two lines") == 1 and "not a note" not in md


def test_published_numbers_are_data(experiments):
    """Each comparison row is a row of the figure's published.csv (in its order) with our value
    from compare(); a metric on one side only is an error naming it."""
    from dcsim import reproduce as rep

    csv_path = experiments / "foundation" / "dctcp-vs-tcp" / "published.csv"
    pub = rep.published(NAME)
    assert [r["published"] for r in pub if r["published"] is not None] == [16.97, 66.03]
    assert pub[4]["source"] == "pFabric (HotNets'12) §3, Fig. 4"
    # The committed data average seeds 1-3; compare() takes one seed's frame, seed 1's here.
    per_seed, _ = rep._frames_of(ROOT / "docs" / "figures" / f"{NAME}.csv")
    data = per_seed[0]
    assert set(data.seed) == {1}
    rows = rep.comparison_rows(NAME, rep.module(NAME).compare(data))
    assert [r["metric"] for r in rows] == [r["metric"] for r in pub]
    # A published value, range and text are read as such; the rows follow the file's order.
    text = csv_path.read_text().splitlines()
    header, body = text[0], text[1:]
    body[4] = body[4].replace(",16.97,,,", ",,15,20,")
    body[5] = body[5].replace(",66.03,,,", ",about 66,,,")
    csv_path.write_text("\n".join([header] + body[::-1]) + "\n")
    rows = rep.comparison_rows(NAME, rep.module(NAME).compare(data))
    assert rows[0]["metric"] == "loads where DCTCP beats TCP for (0,100KB] flows"
    by_metric = {r["metric"]: r["published"] for r in rows}
    assert by_metric["DCTCP (0,100KB] p99 slowdown, load 0.8"] == (15.0, 20.0)
    assert by_metric["TCP (0,100KB] p99 slowdown, load 0.8"] == "about 66"
    assert "| DCTCP (0,100KB] p99 slowdown, load 0.8 | 15–20 | 28 | — | outside the published range." in rep.comparison(
        NAME, [data], "quick"
    )
    # A metric compare() does not compute, or one published.csv does not list, is an error.
    csv_path.write_text("\n".join([header] + body + ['"a metric nobody computes",1,,,,']) + "\n")
    with pytest.raises(ValueError, match="a metric nobody computes"):
        rep.comparison(NAME, [data], "quick")
    csv_path.write_text("\n".join([header] + body[1:]) + "\n")
    with pytest.raises(ValueError, match=r"not in published.csv: \['DCTCP \(0,100KB\] mean slowdown, load 0.5'\]"):
        rep.comparison(NAME, [data], "quick")


def test_every_published_number_names_its_source():
    from dcsim import reproduce as rep

    for name in rep.names():
        rows = rep.published(name)
        assert rows, f"{name} has no published.csv"
        for r in rows:
            if r["published"] is not None:
                assert r["source"], f"{name}: {r['metric']} has a published value but no source"


def test_one_display_name_per_scheme():
    """Every figure names its series through dcsim.experiments_support.schemes."""
    from dcsim import plot as dplot
    from dcsim.experiments_support import schemes

    assert schemes.name("pfabric") == "pFabric" and schemes.name("dctcp") == "DCTCP"
    assert schemes.name("pfabric", {"pfabric.rate_control": "linerate"}) == "LineRate+pFabric"
    assert (
        schemes.name("pfabric", {"pfabric.queues": 4, "pfabric.threshold_method": "equal-split"}) == "Q=4 (Equal split)"
    )
    assert schemes.name("pfabric", {"pfabric.queues": 0, "pfabric.threshold_method": "mg1"}) == "pFabric"
    assert schemes.name("phost", {"phost.preset": "authors-code"}) == "pHost (authors' code)"
    assert schemes.name("pias", {"pias.ecn": "off"}) == "PIAS without ECN"
    # Fields that tell no variant of the protocol apart are ignored, so one call fits every run.
    assert schemes.name("tcp", {"pfabric.rate_control": "mintcp"}) == "TCP"
    assert schemes.name("ideal", {"pfabric.queues": 0, "pfabric.threshold_method": "mg1"}) == "Ideal"
    with pytest.raises(KeyError, match="no display name"):
        schemes.name("pfabric", {"pfabric.queues": 3, "pfabric.threshold_method": "mg1"})
    with pytest.raises(KeyError, match="no display name"):
        schemes.name("ndp")
    # Every protocol and every pFabric / pHost variant a figure draws as a line has its style.
    for display in list(schemes.PROTOCOLS.values()) + [
        n for (p, _), v in schemes.VARIANTS.items() if p == "pfabric" for n in v.values()
    ]:
        assert display in dplot.SERIES, display
    # No figure module keeps a protocol-to-name map of its own.
    for fig in (ROOT / "experiments").glob("*/*/figure.py"):
        text = fig.read_text()
        assert '"dctcp": "DCTCP"' not in text and '"pfabric": "pFabric"' not in text, fig


def test_agreement_classes_each_kind_of_published_number():
    """Issue 17 (done means: counts within 10 % / qualitative / not reproduced): how our value
    relates to a published number, range or claim, at the 10 % edge exactly."""
    from dcsim import reproduce as rep
    from dcsim.replicates import Estimate

    assert rep.agreement(2.0, 2.2) == rep.AGREES  # +10 %: inside
    assert rep.agreement(2.0, 2.21) == rep.DIFFERS
    assert rep.agreement(2.0, 1.8) == rep.AGREES
    assert rep.agreement(2.0, 1.79) == rep.DIFFERS
    assert rep.agreement(-1.0, -1.1) == rep.AGREES  # a negative published change
    assert rep.agreement(-1.0, -0.85) == rep.DIFFERS
    # A range: widened by 10 % of each bound.
    assert rep.agreement((1.0, 2.0), 2.2) == rep.AGREES
    assert rep.agreement((1.0, 2.0), 2.3) == rep.DIFFERS
    assert rep.agreement((1.0, 2.0), 0.9) == rep.AGREES
    assert rep.agreement((1.0, 2.0), 0.89) == rep.DIFFERS
    # Ours a range: agrees when it overlaps.
    assert rep.agreement(3.0, (1.0, 2.8)) == rep.AGREES
    assert rep.agreement(3.0, (1.0, 2.6)) == rep.DIFFERS
    assert rep.agreement((4.0, 5.0), (1.0, 3.5)) == rep.DIFFERS
    assert rep.agreement((4.0, 5.0), (1.0, 3.7)) == rep.AGREES
    # Estimates count by their mean; a wide interval does not make them agree.
    assert rep.agreement(2.0, Estimate(2.5, 1.0, 3, 2.5)) == rep.DIFFERS
    assert rep.agreement(2.0, Estimate(2.1, 0.0, 3, 0.0)) == rep.AGREES
    assert rep.agreement(2.0, (Estimate(1.0, 0, 3, 0), Estimate(1.9, 0, 3, 0))) == rep.AGREES
    # Claims in words, values we lack, rows without a published number.
    assert rep.agreement("> 30 %", 0.4) == rep.IN_WORDS
    assert rep.agreement(2.0, float("nan")) == rep.NO_VALUE
    assert rep.agreement(2.0, "n/a") == rep.NO_VALUE
    assert rep.agreement(2.0, Estimate(float("nan"), float("nan"), 0, float("nan"))) == rep.NO_VALUE
    assert rep.agreement(None, 1.0) is None


def test_gallery_opens_with_the_scorecard_of_its_tables(experiments, tmp_path):
    """Issue 17: the gallery's first table counts, per reproduction and scale, the published
    numbers its comparison table holds by agreement class; the counts are those of the rows."""
    from dcsim import reproduce as rep

    out = tmp_path / "results"
    assert dcsim_cli("reproduce", NAME, "--out", out, "--jobs", "2", cwd=tmp_path).returncode == 0
    md = rep.gallery(out, tmp_path / "docs").read_text()
    section = md.split("## Agreement with the papers", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith(f"| [{NAME}]"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["quick", "3"]
    # The same rows, classified one by one from the comparison the gallery shows.
    per_seed, produced = rep._frames_of(tmp_path / "docs" / "figures" / f"{NAME}.csv")
    rows = rep.comparison_rows(NAME, rep._ours(NAME, per_seed, None, produced))
    kinds = [rep.agreement(r["published"], r["ours"]) for r in rows]
    assert [int(c) for c in cells[3:]] == [kinds.count(k) for k in rep.AGREEMENT_CLASSES]
    assert sum(int(c) for c in cells[3:]) == sum(r["published"] is not None for r in rows) > 0
    assert md.index("## Agreement with the papers") < md.index(f"## {rep.title(NAME)}")
    assert f"(#{rep._anchor(rep.title(NAME))})" in row


def test_a_figure_without_a_sweep_names_the_seeds_of_its_own_runs():
    """A figure with ``SWEEP = None`` is model-only unless its ``data`` takes the run store and
    simulates there (a search on load); then ``SEEDS`` names the seeds its CSVs record, so the
    gallery never calls simulated numbers "no simulation (model only)"."""
    from dcsim import reproduce as rep

    sweepless = [n for n in rep.names() if rep.sweep_path(n) is None]
    assert sweepless, "expected model-only or self-simulating figures"
    for name in sweepless:
        mod = rep.module(name)
        simulates = rep.wants_store(mod)
        seeds = getattr(mod, "SEEDS", None)
        if simulates:
            assert seeds and all(isinstance(s, int) for s in seeds), f"{name}: SEEDS missing"
        else:
            assert seeds is None, f"{name}: SEEDS on a model-only figure"
    assert rep.provenance("x", "quick", rep.module("dcpim-max-load").SEEDS)["seeds"] == "1 2 3"
    assert rep.provenance("x", "quick", None)["seeds"].startswith("none")
    # A model-only figure names no scale: its numbers are the same at either.
    model = rep.provenance_text(rep.provenance("x", "quick", None), "quick")
    assert model.startswith("_Model only (no simulation)") and "Quick scale" not in model
    assert "(model only, either scale)" in rep.comparison_markdown("pfabric-sigcomm-fig16", [], "quick", model)
    simulated = rep.provenance_text(rep.provenance("x", "paper", [1, 2]), "paper")
    assert simulated.startswith("_Paper scale, 2 seeds (1, 2)")
    assert "(paper scale)" in rep.comparison_markdown("pfabric-sigcomm-fig16", [], "paper", simulated)


def test_side_by_side_marks_a_run_that_stopped_with_stalled_flows(tmp_path, monkeypatch):
    """A run that stopped with flows stalled (docs/metrics.md) has no mean over all its flows:
    the comparison gives the finished flows' mean as a lower bound, the plot hatches its bars."""
    import pandas as pd

    from dcsim import reproduce as rep

    mod = rep.module("transports-side-by-side")
    base = {"workload.flow_sizes": "websearch", "workload.load": 0.8, "flows_completed": 100}
    base |= {"mean_slowdown": 2.0, "p99_slowdown": 9.0}
    runs = pd.DataFrame(
        [
            base | {"transport.protocol": "phost", "flows_stalled": 0},
            base | {"transport.protocol": "dcpim", "flows_stalled": 276, "mean_slowdown": 22.55},
        ]
    )
    d = mod.data(runs)
    assert list(d.flows_stalled) == [0, 276]
    ours = mod.compare(d)
    assert ours["Web search, load 0.8: pHost mean slowdown"] == 2.0
    assert ours["Web search, load 0.8: dcPIM mean slowdown"] == "≥ 22.55 (276 flows stalled)"
    saved = []
    monkeypatch.setattr(mod.dplot, "save", lambda fig, path: saved.append(fig))
    mod.plot(d, tmp_path / "figure.png")
    hatched = [b for ax in saved[0].axes for b in ax.patches if b.get_hatch()]
    assert len(hatched) == 2, "the dcPIM bar of the mean and of the p99 panel"
    remarks = [t.get_text() for ax in saved[0].axes if "Web search, load 0.8" in ax.get_title() for t in ax.texts]
    assert len(remarks) == 2 and all("no run: pFabric, Fastpass, PIAS, PASE, Homa" in r for r in remarks)
    assert all("dcPIM stopped with 276 flows stalled" in r for r in remarks)


def test_incast_receivers_bound_serves_each_receiver_in_arrival_order():
    """pHost Fig. 9(d)'s lower bound, by hand: receiver 7 gets requests at 0 and 10 µs (100 µs
    of bytes each), so they finish at 100 and 200 (RCTs 100 and 190); receiver 3's lone request
    at 50 takes 40. Mean (100 + 190 + 40) / 3 µs."""
    import numpy as np

    from dcsim import reproduce as rep

    bound = rep.module("phost-fig9-incast").receiver_bound_ms
    arrival, receiver, service = np.array([10.0, 50.0, 0.0]), np.array([7, 3, 7]), np.array([100.0, 40.0, 100.0])
    assert bound(arrival, receiver, service) == pytest.approx((100 + 190 + 40) / 3 / 1e3)
    # A gap between requests leaves the link idle: the later one waits for nothing.
    assert bound(np.array([0.0, 500.0]), np.array([1, 1]), np.array([100.0, 100.0])) == pytest.approx(0.1)


def test_incast_figure_bound_holds_on_simulated_runs(tmp_path):
    """No protocol's mean request completion time beats the receivers' bound, and a request's
    flows finish after its first one (the figure's columns, from a small incast sweep)."""
    from conftest import write
    from dcsim import reproduce as rep

    spec = write(
        tmp_path,
        """
name = "incast-bound"
seed = 3
[topology]
kind = "leaf-spine"
racks = 2
hosts_per_rack = 4
spines = 2
[workload]
matrix = "incast"
flow_sizes = 400000
incast_senders = 4
flows = 24
load = 0.6
[sweep]
"transport.protocol" = ["pfabric", "phost", "fastpass"]
""",
    )
    out = tmp_path / "store"
    p = dcsim_cli("sweep", spec, "--out", out, "--jobs", "1", "-q")
    assert p.returncode == 0, p.stderr
    runs = dcsim.load(out)
    mod = rep.module("phost-fig9-incast")
    per_run = mod.requests(out, runs).join(runs.set_index("run")[["mean_request_completion_us"]])
    assert len(per_run) == 3
    # Each request: 4 flows of 100,000 B, 69 packets each with 40 B of headers, 411,040 B on the
    # receiver's 10 Gbps link: 328.8 µs, the least any request can take.
    assert (per_run.rct_bound_ms >= 0.3288).all()
    assert (per_run.mean_request_completion_us / 1e3 >= per_run.rct_bound_ms).all()
    # A request's flows share its receiver's link, so they cannot all finish at once, and its
    # first-to-last time is part of its completion time (arrival to last flow).
    assert (per_run.flow_spread_ms > 0).all()
    assert (per_run.flow_spread_ms < per_run.mean_request_completion_us / 1e3).all()


def test_a_self_simulating_figure_replicates_over_seeds_and_knows_its_scale(tmp_path, monkeypatch):
    """dcPIM Fig. 6(a) searches each (r, k) itself: at quick scale one search per seed, whose
    answers data.csv aggregates (mean, 95 % interval, n_seeds) as a sweep's, and at paper scale
    longer runs with their own seeds. The runs are faked: a load is sustained below a
    threshold that depends on the cell and the seed, so every answer is known."""
    from dcsim import reproduce as rep

    mod = rep.module("dcpim-max-load")
    asked = []

    def fake(rounds, channels, load_pct, flows, seed):
        asked.append((flows, seed))
        limit = 50 + rounds + channels + seed  # the highest sustained load
        return {"fraction": 0.99 if load_pct <= limit else 0.9, "wall_s": 0.0, "sim_time_us": 1.0, "events": 1}

    monkeypatch.setattr(mod, "run_point", fake)
    load_module = rep.module
    monkeypatch.setattr(rep, "module", lambda name: mod if name == "dcpim-max-load" else load_module(name))
    out = rep.reproduce("dcpim-max-load", scale="quick", out_root=tmp_path)
    frame, produced = rep.read_data_csv(out["data"])
    assert produced["seeds"] == "1 2 3" and produced["scale"] == "quick"
    assert set(frame.n_seeds) == {3} and len(frame) == 20
    cell = frame[(frame.rounds == 2) & (frame.channels == 4)].iloc[0]
    assert cell.ours_pct_mean == 50 + 2 + 4 + 2  # seeds 1-3 give 57, 58, 59
    assert abs(cell.ours_pct_ci95 - 4.303 * 1.0 / 3**0.5) < 0.01  # t(0.975, 2) · s / √n, s = 1
    assert cell.published_pct == 78 and cell.flows_per_run == 20_000
    assert {f for f, _ in asked} == {20_000} and {s for _, s in asked} == {1, 2, 3}
    per_seed, _ = rep.read_data_csv(out["data"].parent / "data-seeds.csv")
    assert sorted(per_seed.seed.unique()) == [1, 2, 3]
    asked.clear()
    out = rep.reproduce("dcpim-max-load", scale="paper", out_root=tmp_path)
    frame, produced = rep.read_data_csv(out["data"])
    assert produced["seeds"] == "1 2 3" and produced["scale"] == "paper"
    assert set(frame.flows_per_run) == {200_000} and set(frame.n_seeds) == {3}
    assert {f for f, _ in asked} == {200_000} and {s for _, s in asked} == {1, 2, 3}
    # Started at the published load and galloping by 2: r = 2, k = 4 (published 78; seed 1's
    # answer 57) comes down 78, 76, ..., 56, then bisects to 57.
    cell = frame[(frame.rounds == 2) & (frame.channels == 4)].iloc[0]
    assert cell.ours_pct_mean == 58  # seeds 1-3 give 57, 58, 59


def test_a_per_seed_figures_comparison_is_each_seeds():
    """A figure whose rows are each seed's (``PER_SEED``, pHost Fig. 7's curves over time) is
    compared seed by seed and aggregated over the seeds, as a figure of averaged rows is: its
    gallery numbers carry an interval, not one number of the seeds' rows pooled."""
    from dcsim import reproduce as rep

    name = "phost-fig7"
    csv = ROOT / "docs" / "figures" / f"{name}.csv"
    per_seed, produced = rep._frames_of(csv)
    seeds = produced["seeds"].split()
    assert len(seeds) == 3 and [set(d.seed) for d in per_seed] == [{int(s)} for s in seeds]
    text = rep.comparison(name, per_seed, "quick", produced=produced)
    assert "(n = 3)" in text and "(n = 1, no interval)" not in text


def test_a_figure_whose_points_have_fewer_seeds_says_so_under_it():
    """A partial figure (seeds added over sittings) averages some points over fewer seeds than
    others: the line under it says how many, not "mean of 3 seeds"."""
    import pandas as pd

    from dcsim import reproduce as rep

    mod = _per_run_module(lambda runs: runs)
    full = pd.DataFrame({"protocol": ["x", "y"], "load": [0.5, 0.5], "v": [1.0, 2.0]})
    fd = rep.FigureData.of(mod, [full, full.assign(v=[1.5, 2.5])], [1, 2])
    assert fd.caption().startswith("mean of 2 seeds; bars")
    fd = rep.FigureData.of(mod, [full, full.iloc[:1]], [1, 2])
    assert fd.caption().startswith("mean of 1-2 seeds per point (a partial figure); bars")


def test_a_change_to_pase_edf_makes_only_its_figures_stale():
    """A run's result class is its protocol, or "pase-edf" for PASE arbitrating by deadline
    (the digests' third column names each case's the same way, checked by the digests test),
    so a change to PASE's EDF key (`pase.late_flows`) dates only the figures that run it;
    a table a support module generates declares its runs' classes (`PROTOCOLS`)."""
    from dcsim.reproduce import changed_protocols, figure_provenance, result_class, run_protocols

    def cls(**fields: object) -> str:
        return result_class(dcsim.resolve({}, fields, warn=False))

    assert cls(**{"transport.protocol": "pase", "pase.order": "edf"}) == "pase-edf"
    assert cls(**{"transport.protocol": "pase"}) == "pase"
    assert cls(**{"transport.protocol": "phost", "phost.policy": "edf"}) == "phost"
    assert set(run_protocols("pase-fig9", "quick").values()) == {"pase", "pase-edf", "l2dct", "dctcp", "d2tcp"}
    assert "pase-edf" not in set(run_protocols("pase-fig11", "quick").values())
    then = "a 1 pase\nb 2 pase-edf\n"
    assert changed_protocols(then, "a 1 pase\nb 3 pase-edf\n") == {"pase-edf"}
    sensitivity = figure_provenance(ROOT / "docs" / "figures" / "pase-sensitivity.csv")
    assert set(sensitivity.values()) == {frozenset({"pase", "dctcp", "pfabric"})}
