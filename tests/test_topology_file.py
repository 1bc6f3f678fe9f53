"""Topologies read from files (``topology.kind = "file"``, issue 15 item 10)."""

import shutil

import pytest

import dcsim
from conftest import ROOT, dcsim_cli


def test_the_example_runs_with_its_file_relative_to_the_spec(tmp_path):
    """Issue 15 item 10: a spec names its topology file relative to itself; run from another
    directory, the file is found, the run uses its 8 hosts and the resolved spec holds the
    absolute path (so the stored spec.toml re-runs from anywhere)."""
    for name in ("own-topology.toml", "two-tier.json"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    spec = tmp_path / "own-topology.toml"
    p = dcsim_cli("run", spec, "--out", tmp_path / "run", "--set", "workload.flows=200", cwd=ROOT / "docs")
    assert p.returncode == 0, p.stderr
    assert "flows completed   200 / 200" in p.stdout
    r = dcsim.Result.read(tmp_path / "run")
    assert set(r.flows.src) | set(r.flows.dst) <= set(range(8))
    assert f'file = "{tmp_path / "two-tier.json"}"' in r.spec_toml
    again = dcsim.run(r.spec_toml, workload__flows=200)
    assert again.flows.fct_us.tolist() == r.flows.fct_us.tolist()


def test_a_bad_topology_file_is_a_spec_error_naming_the_element(tmp_path):
    """Issue 15 item 10: validation names the file and the offending link."""
    (tmp_path / "t.json").write_text(
        '{"hosts": ["h0", "h1"], "switches": ["tor0"], "links": ['
        '{"a": "h0", "b": "tor0", "gbps": 10, "delay_ns": 200},'
        '{"a": "h1", "b": "tor0", "gbps": 0, "delay_ns": 200}]}'
    )
    (tmp_path / "s.toml").write_text('[topology]\nkind = "file"\nfile = "t.json"\n')
    p = dcsim_cli("validate", tmp_path / "s.toml")
    assert p.returncode == 2
    assert "`topology.file`" in p.stderr and str(tmp_path / "t.json") in p.stderr
    assert "links[1] (`h1`-`tor0`): gbps = 0 must be a rate between 0.001 and 100000 Gbps" in p.stderr
    (tmp_path / "s.toml").write_text('[topology]\nkind = "file"\nfile = "missing.json"\n')
    with pytest.raises(dcsim.SpecError, match="cannot read topology file .*missing.json") as e:
        dcsim.resolve(tmp_path / "s.toml")
    assert e.value.field == "topology.file"
