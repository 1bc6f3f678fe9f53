import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A spec small enough to run in well under a second.
SMALL = {
    "topology": {"racks": 3, "hosts_per_rack": 4, "spines": 2},
    "workload": {"flows": 300, "load": 0.5},
}


@pytest.fixture
def small_spec(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(
        "seed = 1\n[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 300\nload = 0.5\n"
    )
    return path


def dcsim_cli(*args, cwd=None, timeout=300):
    """Runs `python -m dcsim ARGS`; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "dcsim", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


def write(tmp_path, text, name="s.toml"):
    """Writes `text` to `tmp_path / name` (a spec file, a trace, a CDF) and returns the path."""
    p = tmp_path / name
    p.write_text(text)
    return p
