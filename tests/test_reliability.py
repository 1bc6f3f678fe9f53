"""Regression tests for the reliability defects of issue 13 on the Python side: run
directories that a failing write used to destroy, sweeps that trampled each other, worker
deaths charged to runs that never started, and output problems found only after a run."""

import os
from pathlib import Path

import pytest

import dcsim
from dcsim import result as result_mod
from dcsim import sweep
from dcsim.spec import SpecError

SMALL = 'seed = 1\n[topology]\nkind = "star"\nhosts = 4\n[workload]\nflows = 20\nload = 0.3\n'


def test_a_failed_write_keeps_the_previous_complete_run(tmp_path, monkeypatch):
    """Item 4: a run that failed while writing (here: a full disk) used to delete the previous
    run's summary.json first; now the new files go beside it and are swapped in whole."""
    out = tmp_path / "run"
    first = dcsim.run(SMALL, out=out)
    before = (out / "summary.json").read_bytes()

    def disk_full(path, table):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(result_mod, "atomic_write_parquet", disk_full)
    with pytest.raises(OSError):
        dcsim.run(SMALL, out=out, seed=2, force=True)
    assert (out / "summary.json").read_bytes() == before
    assert dcsim.Result.read(out).summary["mean_slowdown"] == first.summary["mean_slowdown"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run.")], "no leftovers"


def test_a_complete_run_is_replaced_only_with_force(tmp_path):
    out = tmp_path / "run"
    dcsim.run(SMALL, out=out)
    with pytest.raises(SpecError, match="already holds another run"):
        dcsim.run(SMALL, out=out, seed=2)
    replaced = dcsim.run(SMALL, out=out, seed=2, force=True)
    assert dcsim.Result.read(out).summary["mean_slowdown"] == replaced.summary["mean_slowdown"]


@pytest.mark.parametrize("kind", ["file", "long-name", "foreign"])
def test_an_unwritable_out_is_an_error_before_the_run(tmp_path, kind):
    """Item 9: a file or an impossible name as --out used to fail after the whole simulation."""
    if kind == "file":
        out = tmp_path / "f"
        out.write_text("x")
    elif kind == "long-name":
        out = tmp_path / ("x" * 300)
    else:
        out = tmp_path / "mine"
        out.mkdir()
        (out / "notes.txt").write_text("not a run")
    big = SMALL.replace("flows = 20", "flows = 10000000")  # would take hours if it ran
    with pytest.raises(SpecError) as e:
        dcsim.run(big, out=out)
    assert e.value.field == "out"


def test_stale_staging_of_a_killed_writer_is_removed(tmp_path):
    """Item 9: a writer killed mid-write leaves its staging directory beside the run."""
    stale = tmp_path / ".run.staging-999999999-deadbeef"
    stale.mkdir()
    (stale / "flows.parquet.tmp").write_bytes(b"partial")
    dcsim.run(SMALL, out=tmp_path / "run")
    assert not stale.exists()
    assert (tmp_path / "run" / "summary.json").exists()


def test_a_second_sweep_on_the_same_directory_is_refused(tmp_path):
    """Item 5: a second sweep used to delete the first one's in-flight runs and manifest."""
    spec = tmp_path / "s.toml"
    spec.write_text(SMALL + '[sweep]\n"workload.load" = [0.3, 0.4]\n')
    out = tmp_path / "out"
    out.mkdir()
    p = sweep.plan(spec)
    with sweep._DirectoryLock(out):
        with pytest.raises(SpecError, match="another sweep"):
            sweep.run_sweep(p, out, jobs=1, progress=False)
    report = sweep.run_sweep(p, out, jobs=1, progress=False)
    assert report.ok and len(report.completed) == 2


_real_task = sweep._local_task


def _dies_on_the_victim(out, h, params, spec_json, threads=1, checkpoint_every_s=0.0):
    """A pool task that kills its worker on one run (forked workers see this patched in)."""
    if h == os.environ.get("DCSIM_TEST_VICTIM"):
        Path(out, "runs", ".staging").mkdir(parents=True, exist_ok=True)
        Path(out, "runs", ".staging", f"{h}.started").touch()
        os._exit(1)
    return _real_task(out, h, params, spec_json, threads, checkpoint_every_s)


def test_worker_deaths_are_charged_only_to_the_run_that_died(tmp_path, monkeypatch):
    """Item 5: three worker deaths used to mark every pending run failed, including runs that
    never started ("died 3 times running this run")."""
    spec = tmp_path / "s.toml"
    spec.write_text(SMALL + '[sweep]\n"workload.load" = [0.3, 0.4, 0.5, 0.6]\n')
    p = sweep.plan(spec)
    victim = p.runs[0].hash
    monkeypatch.setenv("DCSIM_TEST_VICTIM", victim)
    monkeypatch.setattr(sweep, "_local_task", _dies_on_the_victim)
    report = sweep.run_sweep(p, tmp_path / "out", jobs=1, progress=False, max_attempts=3)
    assert list(report.failed) == [victim], report.failed
    assert "died 3 times" in report.failed[victim]
    assert sorted(report.completed) == sorted(r.hash for r in p.runs[1:])


@pytest.mark.parametrize(
    "text, field, needle",
    [
        ("[workload]\nstart = 1979-05-27\n", "workload.start", "date or time"),
        ("[workload]\nload = nan\n", "workload.load", "not a finite number"),
        ("[workload]\nload = -inf\n", "workload.load", "not a finite number"),
        ("a = " + "[" * 3000 + "]" * 3000 + "\n", "", "nested"),
    ],
)
def test_values_no_spec_takes_are_errors_naming_the_field(tmp_path, text, field, needle):
    """Item 9: a TOML date was a TypeError, deep nesting a RecursionError, NaN an error
    naming `<json>`."""
    f = tmp_path / "s.toml"
    f.write_text(text)
    with pytest.raises(SpecError) as e:
        dcsim.spec.resolve(f)
    assert needle in str(e.value)
    if field:
        assert e.value.field == field
    with pytest.raises(SpecError, match="not a finite number"):
        dcsim.spec.resolve({}, {"workload.load": float("nan")})


def test_spec_files_a_person_might_pass(tmp_path):
    """Item 9: a directory, a non-UTF-8 file and a BOM."""
    d = tmp_path / "d"
    d.mkdir()
    with pytest.raises(SpecError, match="is a directory"):
        dcsim.spec.resolve(str(d))
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe[workload]\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        dcsim.spec.resolve(bad)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf[workload]\nload = 0.5\n")
    assert dcsim.spec.resolve(bom).get("workload.load") == 0.5


@pytest.mark.parametrize(
    "axes, needle",
    [
        ('"workload.load" = { range = [0.1, 1e400], step = 0.1 }', "not a finite number"),
        ('"workload.flows" = { range = [1, 1000000000000] }', "more than the 100000"),
        ('"workload.load" = { range = [0.1, 0.9] }', "needs a step"),
    ],
)
def test_sweep_axes_are_bounded(tmp_path, axes, needle):
    f = tmp_path / "s.toml"
    f.write_text(f"[workload]\nflows = 10\n[sweep]\n{axes}\n")
    with pytest.raises(SpecError, match=needle):
        sweep.plan(f)


def test_scales_must_be_tables_and_jobs_positive(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text("[workload]\nflows = 10\n[scales]\nquick = 3\n")
    with pytest.raises(SpecError, match="one table per scale"):
        sweep.plan(f)
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "dcsim", "sweep", str(f), "--jobs", "-1"], capture_output=True, text=True)
    assert p.returncode == 2 and "must be at least 1" in p.stderr and "Traceback" not in p.stderr


def test_a_name_too_long_for_a_file_is_a_spec_error():
    """Item 9: a 300-character value in a path-like field was an OSError traceback."""
    for field in ("workload.flow_sizes", "workload.matrix"):
        with pytest.raises(SpecError) as e:
            dcsim.spec.resolve({}, {field: "x" * 300 + (".csv" if field.endswith("matrix") else "")})
        assert e.value.field == field


def test_a_pase_flow_released_after_losing_its_last_packets_while_held_still_finishes():
    """PASE testbed setting, seed 4: a flow whose packets in flight were lost while it was held
    (lowest queue) must time out and resend once released; before the fix its timer, lapsed
    while held, was never re-armed and the run re-arbitrated forever."""
    spec = Path(__file__).resolve().parent.parent / "experiments" / "pase" / "setting-testbed.toml"
    r = dcsim.run(spec, overrides={"transport.protocol": "pase", "workload.load": 0.6, "seed": 4})
    assert r.summary["flows_completed"] == r.summary["flows_total"] == 1000
