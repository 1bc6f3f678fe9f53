"""Issue 17 item 1: replication as a first-class axis. Seeds as a sweep axis (`seed = [...]`,
`replicates = N`), the mean and 95 % Student-t interval over seeds (`dcsim.load(out,
aggregate=True)`, `dcsim.replicates`), comparison tables and figures with the intervals."""

import json
import math
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dcsim
from conftest import dcsim_cli, write
from dcsim import reproduce as rep
from dcsim.replicates import Estimate, aggregate, seeds
from dcsim.spec import SpecError
from dcsim.sweep import MAX_SEED, plan

#: t(0.975, n - 1) from a printed table of Student's t (two-sided 95 %), to check scipy's use.
T975 = {2: 12.7062, 3: 4.3027, 4: 3.1824, 5: 2.7764}

SMALL = "[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 60\n"


def test_estimate_of_one_two_three_is_the_hand_computed_interval():
    """Issue 17 item 1: values 1, 2, 3: mean 2, s = 1, half-width t(0.975, 2) * 1 / sqrt(3) =
    4.3027 / 1.7321 = 2.484."""
    e = Estimate.of([1, 2, 3])
    assert e.mean == 2 and e.std == 1 and e.n == 3
    assert e.ci95 == pytest.approx(2.48414, abs=1e-5)
    assert e.interval == pytest.approx((2 - 2.48414, 2 + 2.48414), abs=1e-5)
    assert e.text() == "2 ± 2.5 (n = 3)"
    # Two values 1 and 3: s = sqrt(2), half-width t(0.975, 1) * sqrt(2) / sqrt(2) = 12.706.
    assert Estimate.of([1, 3]).ci95 == pytest.approx(12.7062, abs=1e-4)
    for n, t in T975.items():
        xs = [0.0] * (n - 1) + [float(n)]  # mean 1, s = sqrt(n)
        assert Estimate.of(xs).ci95 == pytest.approx(t * math.sqrt(n) / math.sqrt(n), abs=1e-3)


def test_one_seed_gives_no_interval_never_a_zero_width_one():
    """Issue 17 item 1: n = 1 has no interval: NaN half-width and standard deviation (not 0), a
    table says so, and a figure draws no bar for it."""
    e = Estimate.of([2.5])
    assert e.mean == 2.5 and e.n == 1 and math.isnan(e.ci95) and math.isnan(e.std)
    assert e.interval is None and e.text() == "2.5 (n = 1, no interval)"
    # A seed where the metric is undefined (NaN) does not count.
    assert Estimate.of([2.5, float("nan")]).n == 1
    assert Estimate.of([float("nan")]).text() == "—"
    rows = [{"metric": "m", "published": 2.0, "ours": e, "note": ""}]
    table = rep.comparison_markdown("foundation-dctcp-vs-tcp", rows, "quick")
    assert "| m | 2 | 2.5 (n = 1, no interval) | +25.0 % |  |" in table


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=12),
    st.floats(0.01, 100),
    st.floats(-1e3, 1e3),
)
def test_interval_moves_with_the_values(xs, scale, shift):
    """Issue 17 item 1: the interval of a*x + b is a times as wide, centred on a*mean + b; it
    always holds the mean; its half-width is t(0.975, n - 1) s / sqrt(n)."""
    from scipy import stats

    e = Estimate.of(xs)
    moved = Estimate.of([scale * x + shift for x in xs])
    assert moved.mean == pytest.approx(scale * e.mean + shift, rel=1e-9, abs=1e-6)
    assert moved.ci95 == pytest.approx(scale * e.ci95, rel=1e-9, abs=1e-6)
    assert e.ci95 >= 0 and e.interval[0] <= e.mean <= e.interval[1]
    n = len(xs)
    assert e.ci95 == pytest.approx(stats.t.ppf(0.975, n - 1) * np.std(xs, ddof=1) / math.sqrt(n), rel=1e-9, abs=1e-9)


def test_aggregate_by_point_on_a_hand_made_table():
    """Issue 17 item 1: one row per point with n_seeds and each metric's mean, std, n, ci95; a
    point of one seed has NaN std and ci95; a metric undefined in a seed counts one seed less."""
    frame = pd.DataFrame(
        {
            "load": [0.5, 0.5, 0.5, 0.8],
            "seed": [1, 2, 3, 1],
            "x": [1.0, 2.0, 3.0, 5.0],
            "y": [10.0, np.nan, 30.0, 7.0],
        }
    )
    a = aggregate(frame, ["load"])
    assert list(a.columns) == [
        "load",
        "n_seeds",
        *(f"{m}_{s}" for m in ("x", "y") for s in ("mean", "std", "n", "ci95")),
    ]
    r = a.set_index("load")
    assert r.loc[0.5, "n_seeds"] == 3 and r.loc[0.5, "x_mean"] == 2 and r.loc[0.5, "x_std"] == 1
    assert r.loc[0.5, "x_ci95"] == pytest.approx(2.48414, abs=1e-5)
    # y over seeds 1 and 3 only: mean 20, s = sqrt(200), half-width 12.706 * sqrt(200) / sqrt(2) = 127.06.
    assert r.loc[0.5, "y_n"] == 2 and r.loc[0.5, "y_mean"] == 20
    assert r.loc[0.5, "y_ci95"] == pytest.approx(127.062, abs=1e-3)
    assert r.loc[0.8, "n_seeds"] == 1 and r.loc[0.8, "x_mean"] == 5
    assert math.isnan(r.loc[0.8, "x_ci95"]) and math.isnan(r.loc[0.8, "x_std"])


def test_aggregate_groups_a_list_valued_axis():
    """A sweep over a list-valued field (PIAS Fig. 12's `pias.thresholds`, one list per load)
    aggregates by point, and each row keeps its own list; grouping by the lists themselves made
    `dcsim sweep` end with a traceback (unhashable list) after every run had finished."""
    frame = pd.DataFrame(
        {
            "pias.thresholds": [[1, 2], [1, 2], [3, 4], [3, 4]],
            "load": [0.5, 0.5, 0.8, 0.8],
            "seed": [1, 2, 1, 2],
            "x": [1.0, 3.0, 5.0, 9.0],
        }
    )
    a = aggregate(frame, ["pias.thresholds", "load"])
    assert a["pias.thresholds"].tolist() == [[1, 2], [3, 4]]
    assert a["x_mean"].tolist() == [2.0, 7.0] and a["n_seeds"].tolist() == [2, 2]


def _plan(tmp_path, sweep: str, seed: int = 1, **kw):
    return plan(write(tmp_path, f"seed = {seed}\n{SMALL}[sweep]\n{sweep}"), warn=False, **kw)


def test_replicates_expand_to_seeds_from_the_specs_own(tmp_path):
    """Issue 17 item 1: `replicates = 3` runs every point with seeds seed, seed + 1, seed + 2;
    each replicate is a run of its own; the first is the spec's own run (same identity as
    without replicates); an overridden seed is the first replicate's."""
    p = _plan(tmp_path, '"workload.load" = [0.3, 0.6]\nreplicates = 3', seed=5)
    assert p.seeds == [5, 6, 7] and len(p.runs) == 6
    assert sorted((r.params["workload.load"], r.params["seed"], r.spec.tree["seed"]) for r in p.runs) == [
        (load, s, s) for load in (0.3, 0.6) for s in (5, 6, 7)
    ]
    assert len({r.hash for r in p.runs}) == 6
    single = _plan(tmp_path, '"workload.load" = [0.3, 0.6]', seed=5)
    assert {r.hash for r in single.runs} == {r.hash for r in p.runs if r.params["seed"] == 5}
    # An explicit list is the same axis.
    listed = _plan(tmp_path, '"workload.load" = [0.3, 0.6]\nseed = [5, 6, 7]', seed=1)
    assert {r.hash for r in listed.runs} == {r.hash for r in p.runs}
    # --seed 9 (an override) starts the replicates there.
    assert _plan(tmp_path, "replicates = 2", seed=5, overrides={"seed": 9}).seeds == [9, 10]
    assert seeds(9, 2) == [9, 10]


def test_a_scale_sets_the_replicates(tmp_path):
    """Issue 17 item 1: a scale's `replicates` (or seed list) replaces the sweep's seeds."""
    path = write(
        tmp_path,
        f'seed = 1\n{SMALL}[sweep]\n"workload.load" = [0.3]\nreplicates = 3\n'
        "[scales.quick]\nreplicates = 2\n[scales.paper]\nseed = [4, 8]\n",
    )
    assert plan(path, warn=False).seeds == [1, 2, 3]
    assert plan(path, scale="quick", warn=False).seeds == [1, 2]
    assert plan(path, scale="paper", warn=False).seeds == [4, 8]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, MAX_SEED - 50), st.integers(1, 50))
def test_replicate_seeds_are_consecutive_and_distinct(base, n):
    """Issue 17 item 1: any spec seed and replicate count give n distinct consecutive seeds."""
    s = seeds(base, n)
    assert s == list(range(base, base + n)) and len(set(s)) == n


@pytest.mark.parametrize(
    ("sweep", "seed", "field", "words"),
    [
        ("replicates = 0", 1, "sweep.replicates", ["sweep.replicates = 0", "an integer from 1 to 100000"]),
        ("replicates = -2", 1, "sweep.replicates", ["sweep.replicates = -2", "an integer from 1"]),
        ("replicates = 2.5", 1, "sweep.replicates", ["sweep.replicates = 2.5", "an integer"]),
        ("replicates = true", 1, "sweep.replicates", ["sweep.replicates = True", "an integer"]),
        ('replicates = "3"', 1, "sweep.replicates", ["sweep.replicates = '3'", "an integer"]),
        ("replicates = 2\nseed = [1, 2]", 1, "sweep.replicates", ["both `seed` = [1, 2] and `replicates` = 2"]),
        ("seed = [1, 2, 2, 3, 3]", 1, "sweep.seed", ["[1, 2, 2, 3, 3]", "lists 2, 3 more than once"]),
        ("seed = [1, -1]", 1, "sweep.seed", ["-1 is not a seed", f"integers from 0 to {MAX_SEED}"]),
        ('seed = [1, "a"]', 1, "sweep.seed", ["'a' is not a seed"]),
        ("replicates = 3", MAX_SEED - 1, "sweep.replicates", [f"the last seed, {MAX_SEED + 1}", "is above"]),
    ],
)
def test_replicate_errors_name_the_field_the_value_and_what_is_allowed(tmp_path, sweep, seed, field, words):
    """Issue 17 item 1: each mistake is a SpecError naming the field, the value and what is allowed."""
    with pytest.raises(SpecError) as e:
        _plan(tmp_path, f'"workload.load" = [0.3]\n{sweep}', seed=seed)
    assert e.value.field == field
    for w in words:
        assert w in str(e.value)


def test_a_replicated_sweep_through_the_cli(tmp_path):
    """Issue 17 item 1: `dcsim sweep` of replicates = 2 runs each point twice with different
    seeds (different results), prints the mean ± half-width per point, and
    dcsim.load(out, aggregate=True) gives the hand-computed interval: with two values
    t(0.975, 1) * s / sqrt(2) = 12.706 * |a - b| / 2."""
    spec = write(tmp_path, f'seed = 3\n{SMALL}[sweep]\n"workload.load" = [0.5]\nreplicates = 2\n')
    out = tmp_path / "out"
    p = dcsim_cli("sweep", spec, "--out", out, "--jobs", "2", "-q")
    assert p.returncode == 0, p.stderr
    runs = dcsim.load(out)
    assert sorted(runs.seed) == [3, 4]
    assert sorted(dcsim.read_metadata(out / "runs" / h)["seed"] for h in runs.run) == [3, 4]
    a, b = runs.sort_values("seed").mean_slowdown
    assert a != b
    table = dcsim.load(out, aggregate=True)
    assert len(table) == 1 and table.n_seeds[0] == 2 and table.attrs["single_seed_points"] == 0
    assert table.mean_slowdown_mean[0] == pytest.approx((a + b) / 2)
    assert table.mean_slowdown_ci95[0] == pytest.approx(12.7062 * abs(a - b) / 2, rel=1e-5)
    assert "mean over its 2 seeds" in p.stdout
    assert f"{(a + b) / 2:.4g} ± {table.mean_slowdown_ci95[0]:.2g} (n = 2)" in p.stdout
    assert json.loads((out / "sweep.json").read_text())["seeds"] == [3, 4]
    v = dcsim_cli("validate", spec)
    assert v.returncode == 0 and v.stdout.strip() == f"{spec}: ok (a sweep of 2 runs over 2 seeds)"
    with pytest.raises(ValueError, match="aggregate=True"):
        dcsim.load(out, flows=True, aggregate=True)


def test_comparison_gives_ours_as_mean_and_interval_over_seeds():
    """Issue 17 item 1: compare() of each seed's data, combined: numbers as mean ± CI (n),
    ranges per end, texts kept when the seeds agree and listed when not, the fields of an
    Ours value joined where the seeds differ."""
    per_seed = [
        {"x": 1.0, "r": (1.0, 4.0), "t": "3 of 9", "u": "yes", "o": rep.Ours(0.2, {"load": "0.7"})},
        {"x": 2.0, "r": (2.0, 5.0), "t": "3 of 9", "u": "no", "o": rep.Ours(0.4, {"load": "0.8"})},
        {"x": 3.0, "r": (3.0, 6.0), "t": "3 of 9", "u": "yes", "o": rep.Ours(0.3, {"load": "0.7"})},
    ]
    ours = rep.aggregate_compare(per_seed)
    assert ours["x"].mean == 2 and ours["x"].ci95 == pytest.approx(2.48414, abs=1e-5)
    assert ours["r"][0].mean == 2 and ours["r"][1].mean == 5
    assert ours["t"] == "3 of 9" and ours["u"] == "yes / no / yes (one per seed)"
    assert ours["o"].fields == {"load": "0.7/0.8"} and ours["o"].value.mean == pytest.approx(0.3)
    rows = [
        {"metric": "x", "published": 2.5, "ours": ours["x"], "note": ""},
        {"metric": "r", "published": (4.5, 9.0), "ours": ours["r"], "note": ""},
    ]
    table = rep.comparison_markdown("foundation-dctcp-vs-tcp", rows, "quick", "_made by hand_")
    assert "_made by hand_" in table and "dcsim (mean ± 95 % CI over seeds)" in table
    assert "| x | 2.5 | 2 ± 2.5 (n = 3) | -20.0 % | within our 95 % CI. |" in table
    assert "| x | 9 | 2 ± 2.5 (n = 3) | -77.8 % | outside our 95 % CI. |" in rep.comparison_markdown(
        "foundation-dctcp-vs-tcp", [dict(rows[0], published=9.0)], "quick"
    )
    assert "| r | 4.5–9 | 2 ± 2.5 – 5 ± 2.5 (n = 3) | — | overlaps the published range. |" in table


def test_figure_rows_are_told_apart_by_their_keys():
    """Issue 17 item 1: a figure's rows are averaged over seeds per KEYS and non-numeric
    columns; rows of one seed that they do not tell apart are an error naming KEYS."""

    fig = types.ModuleType("fig")
    fig.KEYS = ["load"]

    frames = [pd.DataFrame({"scheme": ["A", "A"], "load": [0.5, 0.8], "y": [1.0 + s, 2.0 * s]}) for s in (1, 2, 3)]
    fd = rep.FigureData.of(fig, frames, [1, 2, 3])
    assert fd.keys == ["scheme", "load"] and fd.measured == ["y"]
    plotted = fd.plot_frame()
    assert list(plotted.y) == [3.0, 4.0] and plotted.y_ci95[0] == pytest.approx(2.48414, abs=1e-5)
    assert list(fd.csv_frame().columns) == ["scheme", "load", "n_seeds", "y_mean", "y_ci95"]
    assert fd.caption() == "mean of 3 seeds; bars: 95 % confidence interval (Student t over seeds)"
    fig.KEYS = []
    with pytest.raises(ValueError, match=r"fig: data\(\) gives 3 row\(s\) of one seed with the same \['scheme'\]"):
        rep.FigureData.of(fig, frames, [1, 2, 3])


def test_plot_draws_the_interval_bars(tmp_path):
    """Issue 17 item 1: dcsim.plot.line draws each point's 95 % interval as a bar from
    mean - half-width to mean + half-width, none for a point of one seed, and the figure renders."""
    from dcsim import plot as dplot

    d = pd.DataFrame({"load": [0.5, 0.6, 0.7], "y": [2.0, 3.0, 4.0], "y_ci95": [0.5, float("nan"), 1.0]})
    plt = dplot.pyplot()
    fig, ax = plt.subplots()
    dplot.line(ax, d.load, d, "y", "pHost")
    (bars,) = [c for c in ax.collections if len(c.get_segments())]
    segments = [s.tolist() for s in bars.get_segments()]
    assert segments == [[[0.5, 1.5], [0.5, 2.5]], [[0.7, 3.0], [0.7, 5.0]]]
    from matplotlib.colors import to_rgb

    assert tuple(bars.get_color()[0][:3]) == pytest.approx(to_rgb(ax.get_lines()[0].get_color()))
    path = tmp_path / "f.png"
    with dplot.caption("mean of 3 seeds"):
        dplot.save(fig, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_partial_figures_missing_value_is_not_called_outside_the_published_range():
    """A paper-scale figure drawn from some of its runs (`--finished-only`) has NaN where the
    runs are missing: its table says there is no value, not that the value misses the range."""
    from dcsim import reproduce as rep

    rows = [
        {"metric": "m", "published": (2.5, 11.0), "ours": float("nan"), "note": "§3"},
        {"metric": "n", "published": (2.5, 11.0), "ours": 3.6, "note": "§3"},
        {"metric": "p", "published": 1.42, "ours": float("nan"), "note": "§4"},
    ]
    table = rep.comparison_markdown("pfabric-hotnets-fig2", rows, "paper")
    assert "| m | 2.5–11 | — | — | no value of ours: its runs are not in this figure. §3 |" in table
    assert "| n | 2.5–11 | 3.6 | — | inside the published range. §3 |" in table
    # A single published number: no difference computed from the missing value either.
    assert "| p | 1.42 | — | — | no value of ours: its runs are not in this figure. §4 |" in table
    assert "outside" not in table and "nan" not in table
