"""`base = "file.toml"` in a spec or sweep file: the base is loaded first and the file's
tables are merged over it; relative paths resolve against the file that wrote them; a missing
base or a cycle is an error naming the file."""

import pytest

import dcsim
from conftest import ROOT, dcsim_cli
from dcsim import sweep
from dcsim.spec import SpecError, load_tree, merge_trees

SETTING = """\
seed = 3
name = "shared"

[topology]
racks = 2
hosts_per_rack = 4
spines = 2
buffer_bytes = 50000

[workload]
flows = 150
load = 0.5
flow_sizes = "cdf.txt"        # next to this file, not to the sweeps that use it

[pfabric]
rto_us = 50
initial_window_pkts = 10

[sweep]
"workload.load" = [0.3, 0.6]
seed = { range = [1, 5], step = 2 }

[scales.quick]
"workload.flows" = 100
seed = [1]

[scales.paper]
"workload.flows" = 400
"""


@pytest.fixture
def tree(tmp_path):
    """common/setting.toml (with a CDF beside it) and fig/sweep.toml inheriting it."""
    common = tmp_path / "common"
    common.mkdir()
    (common / "cdf.txt").write_text("# unit: packets\n" + (ROOT / "workloads" / "CDF_dctcp.txt").read_text())
    (common / "setting.toml").write_text(SETTING)
    fig = tmp_path / "fig"
    fig.mkdir()
    (fig / "sweep.toml").write_text(
        'base = "../common/setting.toml"\nname = "fig"\n\n'
        "[topology]\nbuffer_bytes = 36864          # the child wins\n\n"
        '[pfabric]\nrto_us = 45\n\n[sweep]\n"transport.protocol" = ["pfabric", "dctcp"]\nseed = { range = [1, 2] }\n\n'
        '[scales.paper]\n"workload.flows" = 300\n'
    )
    return tmp_path


def test_merge_is_deep_and_the_child_wins():
    base = {"a": 1, "t": {"x": 1, "y": {"p": 1, "q": 2}}, "l": [1, 2], "sweep": {"seed": {"range": [1, 5], "step": 2}}}
    over = {"t": {"y": {"q": 3}, "z": 4}, "l": [3], "sweep": {"seed": {"range": [1, 2]}}, "b": 2}
    got = merge_trees(base, over)
    assert got == {
        "a": 1,
        "b": 2,
        "t": {"x": 1, "y": {"p": 1, "q": 3}, "z": 4},
        "l": [3],  # arrays are replaced, not appended to
        "sweep": {"seed": {"range": [1, 2]}},  # a sweep axis is replaced whole
    }
    assert base["t"]["y"] == {"p": 1, "q": 2}, "the base tree is not modified"


def test_sweep_inherits_its_setting(tree):
    path = tree / "fig" / "sweep.toml"
    loaded, directory = load_tree(path)
    assert directory == (tree / "fig").resolve()
    assert "base" not in loaded
    assert loaded["topology"] == {"racks": 2, "hosts_per_rack": 4, "spines": 2, "buffer_bytes": 36864}
    assert loaded["pfabric"] == {"rto_us": 45, "initial_window_pkts": 10}
    assert loaded["workload"]["flow_sizes"] == str((tree / "common" / "cdf.txt").resolve())
    assert loaded["sweep"] == {
        "workload.load": [0.3, 0.6],
        "transport.protocol": ["pfabric", "dctcp"],
        "seed": {"range": [1, 2]},
    }
    assert loaded["scales"] == {"quick": {"workload.flows": 100, "seed": [1]}, "paper": {"workload.flows": 300}}

    p = sweep.plan(path, scale="paper")
    assert len(p.runs) == 2 * 2 * 2
    r = p.runs[0].spec
    assert r.get("name") == "fig" and r.get("topology.buffer_bytes") == 36864 and r.get("topology.racks") == 2
    assert r.get("pfabric.rto_us") == 45 and r.get("pfabric.initial_window_pkts") == 10
    assert r.get("workload.flows") == 300
    assert r.get("workload.flow_sizes") == str((tree / "common" / "cdf.txt").resolve())
    assert sweep.plan(path, scale="quick").axes["seed"] == [1]


def test_inheriting_plans_the_same_runs_as_writing_it_all_out(tree):
    flat = tree / "flat.toml"
    flat.write_text(
        'seed = 3\nname = "fig"\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\nbuffer_bytes = 36864\n'
        f'[workload]\nflows = 150\nload = 0.5\nflow_sizes = "{tree / "common" / "cdf.txt"}"\n'
        "[pfabric]\nrto_us = 45\ninitial_window_pkts = 10\n"
        '[sweep]\n"workload.load" = [0.3, 0.6]\n"transport.protocol" = ["pfabric", "dctcp"]\n'
        "seed = { range = [1, 2] }\n"
    )
    inherited = sweep.plan(tree / "fig" / "sweep.toml")
    assert sorted(r.hash for r in inherited.runs) == sorted(r.hash for r in sweep.plan(flat).runs)


def test_a_run_spec_can_inherit_too(tree, tmp_path):
    run = tmp_path / "fig" / "run.toml"
    run.write_text('base = "../common/setting.toml"\n[workload]\nload = 0.7\n')
    # Issue 15 item 6: a base's [sweep] makes the run spec a sweep, which one run cannot be.
    with pytest.raises(SpecError, match=r"run.toml is a sweep spec \(it has a \[sweep\] table, its own or its base"):
        dcsim.resolve(run)
    (tmp_path / "common" / "setting.toml").write_text(SETTING.split("[sweep]")[0])
    r = dcsim.resolve(run)
    assert r.get("workload.load") == 0.7 and r.get("workload.flows") == 150 and r.get("pfabric.rto_us") == 50
    p = dcsim_cli("show", run)
    assert p.returncode == 0 and "buffer_bytes = 50000" in p.stdout
    # A dict or TOML text names its base relative to the current directory.
    assert dcsim.resolve({"base": str(tmp_path / "common" / "setting.toml")}).get("topology.buffer_bytes") == 50000


def test_chains_resolve_each_path_against_its_own_file(tree):
    (tree / "common" / "trace.csv").write_text("id,src,dst,size_bytes,start_s\n0,1,0,3000,0\n")
    (tree / "common" / "trace-setting.toml").write_text(
        'base = "setting.toml"\n[workload]\nmatrix = "trace.csv"\nflows = 0\n'
    )
    deep = tree / "fig" / "deeper"
    deep.mkdir()
    (deep / "cdf.txt").write_text((tree / "common" / "cdf.txt").read_text())
    (deep / "sweep.toml").write_text(
        'base = "../../common/trace-setting.toml"\n[sweep]\n"workload.flow_sizes" = ["cdf.txt"]\n'
    )
    p = sweep.plan(deep / "sweep.toml")
    r = p.runs[0].spec
    assert r.get("workload.matrix") == str((tree / "common" / "trace.csv").resolve())
    # A sweep axis's path resolves against the sweep file that wrote it.
    assert r.get("workload.flow_sizes") == str((deep / "cdf.txt").resolve())
    assert r.get("topology.buffer_bytes") == 50000


def test_missing_base_names_the_file(tree):
    bad = tree / "fig" / "bad.toml"
    bad.write_text('base = "../common/nope.toml"\n')
    with pytest.raises(SpecError) as e:
        sweep.plan(bad)
    assert "nope.toml" in str(e.value) and "bad.toml" in str(e.value) and "does not exist" in str(e.value)
    p = dcsim_cli("sweep", bad, "--dry-run")
    assert p.returncode == 2 and "nope.toml" in p.stderr and "Traceback" not in p.stderr


def test_base_cycles_are_errors_naming_the_files(tree):
    a, b = tree / "a.toml", tree / "b.toml"
    a.write_text('base = "b.toml"\nseed = 1\n')
    b.write_text('base = "a.toml"\nseed = 2\n')
    with pytest.raises(SpecError, match="cycle") as e:
        load_tree(a)
    assert str(a.resolve()) in str(e.value) and str(b.resolve()) in str(e.value)
    a.write_text('base = "a.toml"\n')
    with pytest.raises(SpecError, match="cycle"):
        dcsim.resolve(a)
    p = dcsim_cli("validate", a)
    assert p.returncode == 2 and "cycle" in p.stderr


def test_base_must_be_a_path(tree):
    (tree / "c.toml").write_text("base = 3\n")
    with pytest.raises(SpecError, match="`base` must be the path of a spec file"):
        load_tree(tree / "c.toml")
