"""Sweeps: expansion, validation, hashing, resume after killed processes, failure isolation,
dcsim.load, and the Ray executor."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dcsim
from conftest import write
from dcsim import sweep
from dcsim.spec import SpecError

SMALL = "seed = 1\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 150\nload = 0.5\n"


# ---- expansion and validation -------------------------------------------------------------


def test_cross_product_ranges_and_dedup(tmp_path):
    spec = write(
        tmp_path,
        SMALL
        + '[sweep]\n"workload.load" = [0.3, 0.6]\n"transport.protocol" = ["tcp", "dctcp"]\nseed = { range = [1, 3] }\n',
    )
    p = sweep.plan(spec)
    assert len(p.runs) == 2 * 2 * 3
    assert p.axes["seed"] == [1, 2, 3]
    combos = {(r.params["workload.load"], r.params["transport.protocol"], r.params["seed"]) for r in p.runs}
    assert len(combos) == 12
    assert len({r.hash for r in p.runs}) == 12
    # Each run's spec carries its parameters.
    r = p.runs[0]
    assert r.spec.get("workload.load") == r.params["workload.load"]
    # A float range with a step, inclusive of the end.
    spec = write(tmp_path, SMALL + '[sweep]\n"workload.load" = { range = [0.1, 0.4], step = 0.1 }\n')
    assert sweep.plan(spec).axes["workload.load"] == [0.1, 0.2, 0.3, 0.4]
    # Two axis values that resolve to the same spec are one run.
    spec = write(tmp_path, SMALL + '[sweep]\n"topology.buffer_bytes" = [36864, "36864"]\n')
    assert len(sweep.plan(spec).runs) == 1


def test_zip_and_filter(tmp_path):
    spec = write(
        tmp_path,
        SMALL + '[sweep]\n"workload.load" = [0.3, 0.5, 0.7]\n"workload.flows" = [100, 200, 300]\n'
        '"transport.protocol" = ["tcp", "dctcp"]\n'
        'zip = [["workload.load", "workload.flows"]]\nfilter = "not (protocol == \'tcp\' and load > 0.6)"\n',
    )
    p = sweep.plan(spec)
    pairs = {(r.params["workload.load"], r.params["workload.flows"], r.params["transport.protocol"]) for r in p.runs}
    assert pairs == {
        (0.3, 100, "tcp"),
        (0.5, 200, "tcp"),
        (0.3, 100, "dctcp"),
        (0.5, 200, "dctcp"),
        (0.7, 300, "dctcp"),
    }


def test_scales_override_axes_and_fields(tmp_path):
    spec = write(
        tmp_path,
        SMALL
        + '[sweep]\n"workload.load" = [0.3, 0.6]\n[scales.quick]\n"workload.flows" = 50\n'
        + '[scales.tiny]\n"workload.load" = [0.2]\n',
    )
    assert {r.spec.get("workload.flows") for r in sweep.plan(spec, scale="quick").runs} == {50}
    assert [r.params["workload.load"] for r in sweep.plan(spec, scale="tiny").runs] == [0.2]
    with pytest.raises(SpecError, match="unknown scale `huge`"):
        sweep.plan(spec, scale="huge")


@pytest.mark.parametrize(
    "axes, message",
    [
        ('"workload.lod" = [0.5]', "sweep axis `workload.lod` is not a spec field; did you mean `workload.load`?"),
        ('"workload.load" = []', "sweep axis `workload.load` is empty"),
        ('"workload.load" = [0.5, 1.5]', "`workload.load`: 1.5 is out of range"),
        ('"workload.load" = [0.5, 0.6]\n"seed" = [1, 2, 3]\nzip = [["workload.load", "seed"]]', "different lengths"),
        ('"workload.load" = [0.5]\nzip = [["workload.load", "seed"]]', "`seed`, which is not an axis"),
        ('"workload.load" = { range = [1] }', "range must be [start, stop]"),
        ('"workload.load" = 0.5', "must be a list of values"),
        ('"workload.load" = [0.5]\nfilter = "load > 1"', "expands to no runs"),
    ],
)
def test_bad_sweep_specs_are_rejected_before_running(tmp_path, axes, message):
    spec = write(tmp_path, SMALL + "[sweep]\n" + axes + "\n")
    with pytest.raises(SpecError) as e:
        sweep.plan(spec)
    assert message in str(e.value)
    out = tmp_path / "out"
    cli = subprocess.run([sys.executable, "-m", "dcsim", "sweep", spec, "--out", out], capture_output=True, text=True)
    assert cli.returncode == 2 and message in cli.stderr and "Traceback" not in cli.stderr
    assert not out.exists()


# ---- hashing ------------------------------------------------------------------------------


def test_hash_is_stable_and_canonical(tmp_path):
    a = dcsim.resolve({"workload": {"load": 0.5}, "transport": {"protocol": "tcp"}}).hash()
    b = dcsim.resolve({"transport": {"protocol": "tcp"}, "workload": {"load": 0.5, "flows": 20000}}).hash()
    assert a == b, "key order and explicit defaults do not change a run's identity"
    assert a != dcsim.resolve({"workload": {"load": 0.51}, "transport": {"protocol": "tcp"}}).hash()
    code = "import dcsim; print(dcsim.resolve({'workload': {'load': 0.5}, 'transport': {'protocol': 'tcp'}}).hash())"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == a, "the hash must not depend on the process (no randomised hashing)"
    assert len(a) == 16 and int(a, 16) >= 0


# ---- running, resuming, failures ----------------------------------------------------------


def test_sweep_runs_and_reruns_nothing(tmp_path):
    spec = write(tmp_path, SMALL + '[sweep]\n"workload.load" = [0.3, 0.6]\nseed = [1, 2]\n')
    out = tmp_path / "out"
    p = sweep.plan(spec)
    rep = sweep.run_sweep(p, out, jobs=2, progress=False)
    assert rep.ok and len(rep.completed) == 4 and rep.skipped == 0
    for r in p.runs:
        d = out / "runs" / r.hash
        assert {f.name for f in d.iterdir()} == {"flows.parquet", "summary.json", "spec.toml", "log.txt", "params.json"}
        assert json.loads((d / "params.json").read_text()) == r.params
    again = sweep.run_sweep(p, out, jobs=2, progress=False)
    assert again.skipped == 4 and again.completed == []
    # A sweep run and a single run of the same spec agree.
    one = dcsim.run(p.runs[0].spec.tree)
    assert (
        one.summary["mean_slowdown"]
        == json.loads((out / "runs" / p.runs[0].hash / "summary.json").read_text())["mean_slowdown"]
    )


def test_load_summaries_and_flows(tmp_path):
    spec = write(tmp_path, SMALL + '[sweep]\n"transport.protocol" = ["tcp", "dctcp"]\n"workload.load" = [0.3, 0.6]\n')
    out = tmp_path / "out"
    assert sweep.run_sweep(sweep.plan(spec), out, jobs=2, progress=False).ok
    df = dcsim.load(out)
    assert len(df) == 4
    assert {"run", "transport.protocol", "workload.load", "mean_slowdown", "bins.0-100KB.p99_slowdown"} <= set(
        df.columns
    )
    assert sorted(df["workload.load"].unique()) == [0.3, 0.6]
    ds = dcsim.load(out, flows=True)
    t = ds.to_table(columns=["run", "slowdown"])
    assert t.num_rows == 4 * 150
    assert set(t.column("run").to_pylist()) == set(df.run)
    import pyarrow.dataset as pds

    one = ds.to_table(filter=pds.field("run") == df.run.iloc[0])
    assert one.num_rows == 150


def test_load_takes_only_the_current_plan(tmp_path):
    """Issue 15 item 3: a sweep rerun with other settings into the same directory, then
    dcsim.load, returned both generations, and the docs' pivot_table averaged 150-flow and
    300-flow runs together. Only the current plan's runs are loaded now, with a warning and a
    count of the others; all_runs=True loads everything."""
    spec = write(tmp_path, SMALL + '[sweep]\n"workload.load" = [0.3, 0.6]\n')
    out = tmp_path / "out"
    assert sweep.run_sweep(sweep.plan(spec), out, jobs=2, progress=False).ok
    again = sweep.run_sweep(sweep.plan(spec, {"workload.flows": 300}), out, jobs=2, progress=False)
    assert again.ok and again.other_runs == 2
    with pytest.warns(dcsim.StaleRunsWarning, match="2 complete run.* not in the sweep's current plan"):
        df = dcsim.load(out)
    assert sorted(df["flows_total"]) == [300, 300]
    assert df.attrs == {"stale_runs_skipped": 2, "planned_runs_missing": 0}
    table = df.pivot_table(index="workload.load", values="flows_total")
    assert list(table["flows_total"]) == [300, 300]
    with pytest.warns(dcsim.StaleRunsWarning):
        flows = dcsim.load(out, flows=True).to_table(columns=["run"])
    assert flows.num_rows == 2 * 300 and set(flows.column("run").to_pylist()) == set(df["run"])
    everything = dcsim.load(out, all_runs=True)
    assert sorted(everything["flows_total"]) == [150, 150, 300, 300]
    assert everything.attrs["stale_runs_skipped"] == 0


def test_load_shows_the_plans_own_axes(tmp_path):
    """Issue 15 item 3: a run shared by two sweeps shows the axes of the sweep loaded, not
    those of the sweep that ran it first (its params.json)."""
    out = tmp_path / "out"
    by_load = write(tmp_path, SMALL + '[sweep]\n"workload.load" = [0.3, 0.5]\n', "a.toml")
    assert sweep.run_sweep(sweep.plan(by_load), out, jobs=1, progress=False).ok
    by_seed = write(tmp_path, SMALL + "[sweep]\nseed = [1, 2]\n", "b.toml")
    rep = sweep.run_sweep(sweep.plan(by_seed), out, jobs=1, progress=False)
    assert rep.skipped == 1  # seed 1 at load 0.5 is the first sweep's run
    with pytest.warns(dcsim.StaleRunsWarning):
        df = dcsim.load(out)
    assert sorted(df["seed"]) == [1, 2] and "workload.load" not in df.columns


def test_sweep_says_when_its_directory_holds_other_runs(tmp_path):
    """Issue 15 item 3: `dcsim sweep` says that runs of an earlier plan stay beside the new ones
    and that dcsim.load leaves them out."""
    spec = write(tmp_path, SMALL + '[sweep]\n"workload.load" = [0.3, 0.6]\n')
    out = tmp_path / "out"
    for flows in (150, 300):
        cmd = ["sweep", str(spec), "--out", str(out), "-q", "--set", f"workload.flows={flows}"]
        p = subprocess.run([sys.executable, "-m", "dcsim", *cmd], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert "also holds 2 run(s) of earlier plans" in p.stdout and "all_runs=True" in p.stdout


def test_failure_is_isolated_and_reported(tmp_path):
    cdf = tmp_path / "cdf.txt"
    cdf.write_text("# unit: packets\n1 1 0\n10 1 0.5\n20 1 1\n")
    spec = write(tmp_path, SMALL + f'[sweep]\n"workload.flow_sizes" = ["websearch", "{cdf}"]\nseed = [1, 2]\n')
    p = sweep.plan(spec)
    cdf.write_text("# unit: packets\n1 1 0\n10 1 0.9\n20 1 0.5\n")  # the file goes bad between planning and running
    out = tmp_path / "out"
    rep = sweep.run_sweep(p, out, jobs=2, progress=False)
    assert len(rep.completed) == 2 and len(rep.failed) == 2
    for h, err in rep.failed.items():
        assert "decreases" in err
        text = (out / "failed" / f"{h}.txt").read_text()
        assert "params" in text and str(cdf) in text
    assert len(sweep.complete_runs(out)) == 2
    # --fail-fast stops scheduling new runs after the first failure.
    out2 = tmp_path / "out2"
    rep = sweep.run_sweep(p, out2, jobs=1, fail_fast=True, progress=False)
    assert len(rep.failed) == 1 and len(rep.completed) + len(rep.failed) < 4


def _sweep_cmd(spec, out, *extra, env=None):
    return subprocess.Popen(
        [sys.executable, "-m", "dcsim", "sweep", str(spec), "--out", str(out), "--quiet", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _check_complete(out, p):
    runs = sweep.complete_runs(out)
    assert sorted(d.name for d in runs) == sorted(r.hash for r in p.runs)
    for d in runs:
        json.loads((d / "summary.json").read_text())
        import pyarrow.parquet as pq

        assert pq.read_table(d / "flows.parquet").num_rows == 400
    leftovers = [d for d in (out / "runs").iterdir() if d.name not in {r.hash for r in p.runs} and d.name != ".staging"]
    assert leftovers == []


BIGGER = SMALL.replace("flows = 150", "flows = 400") + '[sweep]\nseed = { range = [1, 8] }\n"workload.load" = [0.7]\n'


def test_resume_after_the_driver_is_killed(tmp_path):
    spec = write(tmp_path, BIGGER)
    p = sweep.plan(spec)
    out = tmp_path / "out"
    proc = _sweep_cmd(spec, out, "--jobs", "2")
    deadline = time.time() + 120
    while len(sweep.complete_runs(out)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    done_before = len(sweep.complete_runs(out))
    assert 2 <= done_before < len(p.runs), "kill the driver mid-sweep"
    workers = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert workers, "the driver should have worker processes"
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    # The workers must not outlive their driver (they would block forever on its queue).
    def alive(pid):
        try:
            return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
        except OSError:
            return False

    deadline = time.time() + 10
    while any(alive(w) for w in workers):
        assert time.time() < deadline, f"orphaned workers still alive: {workers}"
        time.sleep(0.05)
    again = _sweep_cmd(spec, out, "--jobs", "2")
    stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert "already done" in stdout
    skipped = int(stdout.split(" runs: ")[1].split(" already done")[0])
    assert skipped >= done_before
    _check_complete(out, p)


def test_resume_after_a_worker_is_killed(tmp_path):
    spec = write(tmp_path, BIGGER)
    p = sweep.plan(spec)
    out = tmp_path / "out"
    pids = tmp_path / "pids"
    pids.mkdir()
    env = dict(os.environ, DCSIM_SWEEP_PIDFILE_DIR=str(pids))
    proc = _sweep_cmd(spec, out, "--jobs", "2", env=env)
    deadline = time.time() + 120
    victim = None
    while victim is None and time.time() < deadline:
        for f in pids.glob("*.pid"):
            h = f.stem
            pid = f.read_text()
            if pid and not (out / "runs" / h / "summary.json").exists():  # empty: being written
                victim = (h, int(pid))
                break
        time.sleep(0.01)
    assert victim, "no worker started"
    os.kill(victim[1], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "retried" in stdout
    _check_complete(out, p)


# ---- Ray ----------------------------------------------------------------------------------


def test_ray_executor_with_a_killed_worker(tmp_path):
    ray = pytest.importorskip("ray")
    spec = write(tmp_path, BIGGER.replace("range = [1, 8]", "range = [1, 4]"))
    p = sweep.plan(spec)
    out = tmp_path / "out"
    pids = tmp_path / "pids"
    pids.mkdir()
    os.environ["DCSIM_SWEEP_PIDFILE_DIR"] = str(pids)
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"DCSIM_SWEEP_PIDFILE_DIR": str(pids)}},
        )
        import threading

        killed = []

        def killer():
            deadline = time.time() + 120
            while not killed and time.time() < deadline:
                for f in pids.glob("*.pid"):
                    if not (out / "runs" / f.stem / "summary.json").exists():
                        try:
                            os.kill(int(f.read_text()), signal.SIGKILL)
                            killed.append(f.stem)
                        except (ProcessLookupError, ValueError):
                            pass
                        break
                time.sleep(0.01)

        t = threading.Thread(target=killer)
        t.start()
        rep = sweep.run_sweep(p, out, use_ray=True, progress=False)
        t.join()
        assert killed, "the test should have killed a Ray worker mid-run"
        assert rep.ok, rep.failed
        _check_complete(out, p)
    finally:
        os.environ.pop("DCSIM_SWEEP_PIDFILE_DIR", None)
        ray.shutdown()
