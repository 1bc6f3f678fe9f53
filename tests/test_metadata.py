"""Issue 15 item 7: results say what produced them. `summary.json` and `flows.parquet` of a
run directory, written by `dcsim.run` or by a sweep, carry the dcsim version, the seed and the
resolved spec, also when copied away; `dcsim.read_metadata` and `Result.metadata` read them."""

import json
import shutil

import pyarrow.parquet as pq
import pytest

import dcsim
from conftest import SMALL
from dcsim import sweep


def test_a_run_directory_says_what_produced_it(tmp_path):
    """Issue 15 item 7: `dcsim.run(..., out=...)`'s summary.json and flows.parquet, copied
    away under other names, each give the version, the seed and the resolved spec."""
    r = dcsim.run(SMALL, out=tmp_path / "run", seed=7)
    resolved = dcsim.resolve(SMALL, {"seed": 7})
    want = {"dcsim_version": dcsim.__version__, "seed": 7, "spec": resolved.tree}
    assert r.metadata == want
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(tmp_path / "run" / "flows.parquet", elsewhere / "fcts.parquet")
    shutil.copy(tmp_path / "run" / "summary.json", elsewhere / "numbers.json")
    for path in (tmp_path / "run", elsewhere / "fcts.parquet", elsewhere / "numbers.json"):
        assert dcsim.read_metadata(path) == want, path
    # Plain Parquet key-value metadata, for readers other than dcsim.
    stored = pq.read_schema(elsewhere / "fcts.parquet").metadata
    assert stored[b"dcsim.version"] == dcsim.__version__.encode() and stored[b"dcsim.seed"] == b"7"
    assert json.loads(stored[b"dcsim.spec"]) == resolved.tree
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["metadata"] == want
    # Read back, the summary is the run's and the metadata is kept.
    back = dcsim.Result.read(tmp_path / "run")
    assert back.summary == r.summary and back.metadata == want


def test_sweep_runs_say_what_produced_them_and_keep_their_ids(tmp_path):
    """Issue 15 item 7: each run directory a sweep writes carries its own seed and spec; the
    run ids (the spec's hash) are what they were, and `dcsim.load` rows hold no metadata."""
    spec = tmp_path / "s.toml"
    spec.write_text(
        "[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 100\n[sweep]\nseed = [3, 4]\n"
    )
    p = sweep.plan(spec)
    report = sweep.run_sweep(p, tmp_path / "out", jobs=1, progress=False)
    assert report.ok
    for run in p.runs:
        run_dir = tmp_path / "out" / "runs" / run.hash
        assert run.hash == run.spec.hash()
        for path in (run_dir, run_dir / "flows.parquet", run_dir / "summary.json"):
            meta = dcsim.read_metadata(path)
            assert meta["seed"] == run.params["seed"] and meta["spec"] == run.spec.tree, path
            assert meta["dcsim_version"] == dcsim.__version__
    table = dcsim.load(tmp_path / "out")
    assert len(table) == 2 and not [c for c in table.columns if c.startswith("metadata")]


def test_files_without_metadata_are_reported(tmp_path):
    """A file dcsim did not describe is an error saying so, not an empty answer."""
    r = dcsim.run(SMALL)
    pq.write_table(r.table.replace_schema_metadata({}), tmp_path / "bare.parquet")
    with pytest.raises(ValueError, match="does not say what produced it"):
        dcsim.read_metadata(tmp_path / "bare.parquet")
    (tmp_path / "old.json").write_text(json.dumps(r.summary))
    with pytest.raises(ValueError, match="does not say what produced it"):
        dcsim.read_metadata(tmp_path / "old.json")
    with pytest.raises(FileNotFoundError):
        dcsim.read_metadata(tmp_path / "none.parquet")
