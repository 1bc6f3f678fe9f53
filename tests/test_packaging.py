"""Issue 15 item 8: dcsim installs from its sdist and from its wheel into a fresh virtualenv and
runs there from a folder outside the checkout, with the reproductions shipped inside the package.

One Rust build serves both checks: pip builds the wheel from the sdist (exactly what
``pip install dcsim-X.tar.gz`` does, so a file missing from the sdist fails here), and maturin
then packs the checkout's wheel from the same, already compiled, crates. Both build in the
``dev`` profile into the checkout's ``target/`` (the registry crates ``cargo test`` compiled are
reused): what is tested is the packaging, not the speed, and a release build with LTO would
take minutes.

The fresh virtualenv gets numpy, pandas and pyarrow from the package index (pip's cache makes
that about 15 s). Borrowing the development virtualenv's packages instead would hide the very
faults this test is for: a dependency missing from pyproject.toml, and the hint for a missing
extra (the development virtualenv has matplotlib).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.packaging

#: A run small enough for an unoptimised build, with a built-in flow-size CDF (compiled in from
#: workloads/, which the sdist must therefore carry).
SMALL_SPEC = """\
seed = 1
[topology]
racks = 2
hosts_per_rack = 4
spines = 2
[workload]
flows = 200
load = 0.5
flow_sizes = "datamining"
"""


def _run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    command = " ".join(map(str, cmd))
    assert p.returncode == 0, f"{command} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}"
    return p


def _build_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CARGO_TARGET_DIR"] = str(ROOT / "target")
    env["MATURIN_PEP517_ARGS"] = "--profile dev"
    return env


def _outside_env(venv: Path) -> dict[str, str]:
    """The environment of a user who activated `venv`: nothing points into the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "DCSIM_EXPERIMENTS"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory) -> dict[str, Path]:
    """The sdist, the wheel pip builds from it, and the wheel maturin builds from the checkout."""
    dist = tmp_path_factory.mktemp("dist")
    env = _build_env()
    maturin = shutil.which("maturin", path=env["PATH"])
    assert maturin, "maturin is not installed (make install puts it in .venv)"
    _run([maturin, "sdist", "--out", dist], cwd=ROOT, env=env)
    (sdist,) = dist.glob("dcsim-*.tar.gz")

    # pip builds from the unpacked sdist. The sdist's files all carry one fixed old time stamp,
    # and cargo judges freshness by time stamps: fresh ones make it compile these sources rather
    # than take an earlier build's crates in the shared target/ as up to date.
    unpacked = tmp_path_factory.mktemp("sdist")
    with tarfile.open(sdist) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(unpacked, **safe)
    (source,) = unpacked.iterdir()
    for path in [source, *source.rglob("*")]:
        os.utime(path)
    from_sdist = tmp_path_factory.mktemp("wheel-from-sdist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", from_sdist, source], cwd=unpacked, env=env)
    (sdist_wheel,) = from_sdist.glob("dcsim-*.whl")

    from_checkout = tmp_path_factory.mktemp("wheel-from-checkout")
    _run([maturin, "build", "--profile", "dev", "--out", from_checkout], cwd=ROOT, env=env)
    (checkout_wheel,) = from_checkout.glob("dcsim-*.whl")
    return {"sdist": sdist, "sdist_wheel": sdist_wheel, "checkout_wheel": checkout_wheel}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtualenv of the interpreter the tests run on, outside the checkout."""
    path = tmp_path_factory.mktemp("fresh") / "venv"
    _run([sys.executable, "-m", "venv", path], cwd=path.parent)
    return path


def _check_installed(venv: Path, workdir: Path) -> None:
    """A small run, the list of reproductions, the hint for the missing plot extra and the
    completion script, all from `workdir` (outside the checkout) with only `venv` on PATH."""
    env = _outside_env(venv)
    where = _run([venv / "bin" / "python", "-c", "import dcsim; print(dcsim.__file__)"], cwd=workdir, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    assert not Path(where.stdout.strip()).resolve().is_relative_to(ROOT)

    (workdir / "small.toml").write_text(SMALL_SPEC)
    shutil.rmtree(workdir / "runs", ignore_errors=True)
    run = _run([venv / "bin" / "dcsim", "run", "small.toml", "--out", "runs/small", "--quiet"], cwd=workdir, env=env)
    assert (workdir / "runs" / "small" / "summary.json").exists(), run.stdout

    listed = _run([venv / "bin" / "dcsim", "reproduce", "--list"], cwd=workdir, env=env)
    names = {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    expected = {f"{f.parent.parent.name}-{f.parent.name}" for f in (ROOT / "experiments").glob("*/*/figure.py")}
    assert names == expected
    assert "Traceback" not in listed.stderr

    # The runtime dependencies leave out matplotlib: reproducing says which extra to install,
    # before it simulates anything.
    missing = subprocess.run(
        [venv / "bin" / "dcsim", "reproduce", "foundation-dctcp-vs-tcp", "--out", "results"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2, missing.stderr
    assert "pip install 'dcsim[plot]'" in missing.stderr and "Traceback" not in missing.stderr
    assert not (workdir / "results" / "_runs").exists()

    script = _run([venv / "bin" / "dcsim", "completion", "bash"], cwd=workdir, env=env)
    assert "complete -o bashdefault" in script.stdout and "_shtab_dcsim" in script.stdout


def test_sdist_carries_the_built_in_cdfs_and_the_experiments(artefacts):
    with tarfile.open(artefacts["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for cdf in (ROOT / "workloads").glob("**/*.txt"):
        assert f"workloads/{cdf.relative_to(ROOT / 'workloads').as_posix()}" in names
    for fig in (ROOT / "experiments").glob("*/*/figure.py"):
        assert f"python/dcsim/experiments/{fig.relative_to(ROOT / 'experiments').as_posix()}" in names
    assert not any("__pycache__" in n for n in names)


def test_wheel_from_the_sdist_installs_and_runs_outside_the_checkout(artefacts, venv, tmp_path):
    env = _outside_env(venv)
    _run([venv / "bin" / "python", "-m", "pip", "install", "-q", artefacts["sdist_wheel"]], cwd=tmp_path, env=env)
    _check_installed(venv, tmp_path)


def test_wheel_from_the_checkout_installs_and_runs_outside_the_checkout(artefacts, venv, tmp_path):
    """In the same virtualenv, its dcsim replaced (the dependencies stay)."""
    env = _outside_env(venv)
    pip = [venv / "bin" / "python", "-m", "pip"]
    _run([*pip, "uninstall", "-q", "-y", "dcsim"], cwd=tmp_path, env=env)
    _run([*pip, "install", "-q", artefacts["checkout_wheel"]], cwd=tmp_path, env=env)
    _check_installed(venv, tmp_path)
