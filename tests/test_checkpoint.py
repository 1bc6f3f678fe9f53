"""Checkpoints through the Python layer: `dcsim.run(checkpoint=...)`, `dcsim run --checkpoint`
and a sweep's runs resume from a saved state to results identical to an uninterrupted run's;
another spec's checkpoint is refused and another build's is started again by a sweep.

(The core's own test, `crates/dcsim/tests/it/checkpoint.rs`, stops and resumes every digest
case at every mark of 2^16 events.)"""

import json
from pathlib import Path

import pytest

import dcsim
from conftest import write
from dcsim import _dcsim, sweep
from dcsim.cli import main

# About 400,000 events: several marks of 2^16, so a checkpoint is written before the end.
SPEC = "seed = 3\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 1500\nload = 0.6\n"


def _flows_equal(a: dcsim.Result, b: dcsim.Result) -> None:
    assert a.flows.equals(b.flows)
    for key in ("mean_slowdown", "p99_slowdown", "events", "packets_delivered", "data_packets_injected"):
        assert a.summary[key] == b.summary[key], key


def _checkpoint_at_last_mark(spec_json: str, path: Path) -> None:
    """Runs the spec to its end, saving a checkpoint at every mark of 2^16 events: the file
    then holds the state at the run's last mark, which a resumed run goes on from."""
    _dcsim.run_spec(spec_json, None, 1, str(path), 0.0)
    assert path.exists()


def test_a_run_resumed_from_its_checkpoint_ends_as_an_uninterrupted_run(tmp_path):
    spec_path = write(tmp_path, SPEC)
    spec = dcsim.resolve(spec_path)
    whole = dcsim.run(spec)
    ckpt = tmp_path / "run.ckpt"
    _checkpoint_at_last_mark(spec.json, ckpt)
    saved = ckpt.read_bytes()
    assert saved.startswith(b"DCSIMCKP")
    resumed = dcsim.run(spec, checkpoint=ckpt)
    _flows_equal(resumed, whole)
    assert not ckpt.exists(), "a completed run deletes its checkpoint"
    # The same state through the command line, to a run directory.
    ckpt.write_bytes(saved)
    out = tmp_path / "cli-run"
    assert main(["run", str(spec_path), "--out", str(out), "--quiet", "--checkpoint", str(ckpt)]) == 0
    _flows_equal(dcsim.Result.read(out), whole)
    assert not ckpt.exists()


def test_a_checkpoint_of_another_spec_is_refused(tmp_path, capsys):
    spec_path = write(tmp_path, SPEC)
    spec = dcsim.resolve(spec_path)
    ckpt = tmp_path / "run.ckpt"
    _checkpoint_at_last_mark(spec.json, ckpt)
    with pytest.raises(dcsim.CheckpointError, match="written for another spec"):
        dcsim.run(spec_path, checkpoint=ckpt, workload__load=0.5)
    assert ckpt.exists(), "a refused checkpoint is left as it was"
    code = main(["run", str(spec_path), "--quiet", "--set", "workload.load=0.5", "--checkpoint", str(ckpt)])
    assert code == 1
    assert "written for another spec" in capsys.readouterr().err
    with pytest.raises(ValueError, match="checkpoint_every_s"):
        _dcsim.run_spec(spec.json, None, 1, str(ckpt), -1.0)
    # The state is read, not just the header: a truncated file is refused.
    ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    with pytest.raises(dcsim.CheckpointError, match="cannot read the run's state"):
        dcsim.run(spec, checkpoint=ckpt)


def _with_other_build(path: Path) -> None:
    """Rewrites the model hash in a checkpoint's header, as a build of other sources would
    have written it."""
    data = path.read_bytes()
    model = _dcsim_model_hash(data)
    other = "".join("0" if c != "0" else "1" for c in model)
    path.write_bytes(data.replace(model.encode(), other.encode(), 1))


def _dcsim_model_hash(data: bytes) -> str:
    # Header: magic (8 bytes), format (u32), then the model hash as a length-prefixed string.
    n = int.from_bytes(data[12:20], "little")
    return data[20 : 20 + n].decode()


def test_a_sweep_resumes_its_runs_and_starts_another_builds_again(tmp_path):
    spec_path = write(tmp_path, SPEC + "[sweep]\nseed = [3, 4]\n")
    p = sweep.plan(spec_path)
    r3, r4 = sorted(p.runs, key=lambda r: r.params["seed"])
    out = tmp_path / "sweep"
    # Run 3 finds its own checkpoint, run 4 one written by another build.
    for r in (r3, r4):
        path = sweep.checkpoint_path(out, r.hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        _checkpoint_at_last_mark(r.spec.json, path)
    _with_other_build(sweep.checkpoint_path(out, r4.hash))
    report = sweep.run_sweep(p, out, jobs=1, progress=False)
    assert report.ok, report.failed
    assert report.resumed == 2, "both runs found a checkpoint (one of them another build's)"
    log3 = (out / "runs" / r3.hash / "log.txt").read_text()
    log4 = (out / "runs" / r4.hash / "log.txt").read_text()
    assert "resumed from a checkpoint" in log3
    assert "started again: " in log4 and "another dcsim build" in log4
    assert not (out / "runs" / ".checkpoints").exists(), "complete runs leave no checkpoint"
    # Both equal fresh runs of their specs.
    for r in (r3, r4):
        fresh = dcsim.run(r.spec)
        _flows_equal(dcsim.Result.read(out / "runs" / r.hash), fresh)


def test_a_sweep_drops_the_checkpoints_of_complete_runs(tmp_path):
    spec_path = write(tmp_path, SPEC.replace("flows = 1500", "flows = 100") + "[sweep]\nseed = [5]\n")
    p = sweep.plan(spec_path)
    out = tmp_path / "sweep"
    assert sweep.run_sweep(p, out, jobs=1, progress=False, checkpoint_every_s=0).ok
    (run,) = p.runs
    # A worker killed between publishing its run and deleting its checkpoint leaves one.
    stale = sweep.checkpoint_path(out, run.hash)
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"DCSIMCKP")
    other = sweep.checkpoint_path(out, "0123456789abcdef")
    other.write_bytes(b"DCSIMCKP")
    report = sweep.run_sweep(p, out, jobs=1, progress=False)
    assert report.skipped == 1
    assert not stale.exists()
    assert other.exists(), "a run of another plan keeps its checkpoint"
    with pytest.raises(ValueError, match="checkpoint_every_s"):
        sweep.run_sweep(p, out, jobs=1, progress=False, checkpoint_every_s=-5)


def test_a_partitioned_sweep_run_does_not_checkpoint(tmp_path):
    spec_path = write(tmp_path, SPEC + "[engine]\npartitioned = true\n[sweep]\nseed = [6]\n")
    p = sweep.plan(spec_path)
    out = tmp_path / "sweep"
    assert sweep.run_sweep(p, out, jobs=1, progress=False, checkpoint_every_s=0).ok
    summary = json.loads((out / "runs" / p.runs[0].hash / "summary.json").read_text())
    assert summary["partitions"] > 1
