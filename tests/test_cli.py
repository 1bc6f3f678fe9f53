"""The dcsim command line, including every bad-input case: exit code 2, a clear message
naming the field, no traceback, nothing run."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, dcsim_cli


def test_run_writes_results_and_prints_the_summary(small_spec, tmp_path):
    out = tmp_path / "r"
    p = dcsim_cli("run", small_spec, "--out", out, "--set", "workload.flows=100", "--seed", "4")
    assert p.returncode == 0, p.stderr
    assert "0-100KB" in p.stdout and "flows completed   100 / 100" in p.stdout
    s = json.loads((out / "summary.json").read_text())
    assert s["flows_total"] == 100
    assert "seed = 4" in (out / "spec.toml").read_text()
    assert p.stderr == ""  # not a terminal: a progress line only every 30 s, and this run is shorter


def test_quiet_prints_nothing(small_spec, tmp_path):
    p = dcsim_cli("run", small_spec, "--out", tmp_path / "q", "--quiet")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""


def test_validate_and_show(small_spec):
    p = dcsim_cli("validate", small_spec)
    assert p.returncode == 0 and "ok" in p.stdout
    p = dcsim_cli("show", small_spec, "--set", "transport.protocol=tcp")
    assert p.returncode == 0
    assert 'protocol = "tcp"' in p.stdout and "buffer_bytes = 36864" in p.stdout


def test_quickstart_example_validates():
    p = dcsim_cli("validate", ROOT / "examples" / "quickstart.toml")
    assert p.returncode == 0, p.stderr


def _bad(tmp_path, toml, *extra):
    spec = tmp_path / "bad.toml"
    spec.write_text(toml)
    out = tmp_path / "never"
    p = dcsim_cli("run", spec, "--out", out, *extra)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("error: ")
    assert not out.exists(), "nothing may run for a bad spec"
    return p.stderr


def test_misspelt_key_suggests(tmp_path):
    err = _bad(tmp_path, "[workload]\nlaod = 0.5\n")
    assert "`workload.laod`" in err and "did you mean `workload.load`" in err


def test_unknown_section_suggests(tmp_path):
    err = _bad(tmp_path, '[transprot]\nprotocol = "tcp"\n')
    assert "did you mean `transport`" in err


def test_wrong_type(tmp_path):
    err = _bad(tmp_path, '[topology]\nracks = "nine"\n')
    assert "`topology.racks`" in err and "integer" in err and '"nine"' in err


@pytest.mark.parametrize("load", ["0", "-0.2", "1", "1.5"])
def test_load_out_of_range(tmp_path, load):
    err = _bad(tmp_path, f"[workload]\nload = {load}\n")
    assert "`workload.load`" in err and "> 0 and < 1" in err


def test_cdf_that_decreases(tmp_path):
    cdf = tmp_path / "cdf.txt"
    cdf.write_text("# unit: packets\n1 1 0\n10 1 0.7\n20 1 0.5\n30 1 1\n")
    err = _bad(tmp_path, f'[workload]\nflow_sizes = "{cdf}"\n')
    assert "line 4" in err and "decreases" in err and "workload.flow_sizes" in err


def test_cdf_that_does_not_end_at_one(tmp_path):
    cdf = tmp_path / "cdf.txt"
    cdf.write_text("# unit: packets\n1 1 0\n10 1 0.7\n")
    err = _bad(tmp_path, f'[workload]\nflow_sizes = "{cdf}"\n')
    assert "ends at 0.7, not at 1" in err


def test_trace_host_out_of_range_names_file_and_line(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("id,src,dst,size_bytes,start_s\n0,1,2,1000,0\n1,3,500,1000,0.001\n")
    err = _bad(tmp_path, f'[workload]\nmatrix = "{trace}"\n')
    assert f"{trace}, line 3" in err and "dst 500 is out of range" in err and "144 hosts" in err


def test_trace_negative_size(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("id,src,dst,size_bytes,start_s\n0,1,2,-10,0\n")
    err = _bad(tmp_path, f'[workload]\nmatrix = "{trace}"\n')
    assert "line 2" in err and "size_bytes -10" in err


def test_trace_relative_to_the_spec_file(tmp_path):
    (tmp_path / "t.csv").write_text("id,src,dst,size_bytes,start_s\n0,0,1,5000,0\n1,1,0,3000,0.00001\n")
    spec = tmp_path / "s.toml"
    spec.write_text('[topology]\nkind = "star"\nhosts = 2\n[workload]\nmatrix = "t.csv"\nflows = 0\n')
    p = dcsim_cli("run", spec, "--out", tmp_path / "o", cwd="/")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["flows_total"] == 2


def test_topology_that_does_not_fit(tmp_path):
    err = _bad(tmp_path, '[topology]\nkind = "fat-tree"\nk = 5\n')
    assert "`topology.k`" in err and "even" in err
    err = _bad(tmp_path, '[topology]\nkind = "star"\nhosts = 4\n[workload]\nmatrix = "incast"\nincast_senders = 4\n')
    assert "`workload.incast_senders`" in err and "at most 3" in err


def test_bad_choice_suggests(tmp_path):
    err = _bad(tmp_path, '[topology]\nswitching = "cut-thru"\n')
    assert '"cut-through"' in err


def test_invalid_toml(tmp_path):
    err = _bad(tmp_path, "[workload\nload = 0.5\n")
    assert "not valid TOML" in err


def test_bad_override(tmp_path, small_spec):
    p = dcsim_cli("run", small_spec, "--set", "workload.load")
    assert p.returncode == 2 and "expected section.key=value" in p.stderr
    p = dcsim_cli("run", small_spec, "--set", "seed.x=3")
    assert p.returncode == 2 and "is a value, not a table" in p.stderr
    p = dcsim_cli("run", small_spec, "--set", "workload.flws=3")
    assert p.returncode == 2 and "did you mean `workload.flows`" in p.stderr


def test_missing_spec_file(tmp_path):
    p = dcsim_cli("run", tmp_path / "nope.toml")
    assert p.returncode == 2 and "does not exist" in p.stderr and "Traceback" not in p.stderr


def test_killed_run_never_looks_complete(tmp_path, small_spec):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcsim", "run", small_spec, "--out", out, "--set", "workload.flows=200000", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.5)
    assert proc.poll() is None, "the run should still be going"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "summary.json").exists()


def test_run_dir_is_named_after_the_spec_name(small_spec, tmp_path):
    """Issue 15 item 4: `--help` said runs/<spec name>, but the run went to runs/<file name>.
    The spec's `name` names it (made safe for a path); without one, the file's name does."""
    named = tmp_path / "small-named.toml"
    named.write_text('name = "fat tree/k=8"\n' + small_spec.read_text())
    p = dcsim_cli("run", named, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "runs" / "fat-tree-k-8" / "summary.json").exists()
    p = dcsim_cli("run", small_spec, "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "runs" / "small" / "summary.json").exists()


def test_a_different_run_is_never_overwritten(small_spec, tmp_path):
    """Issue 15 item 4: two `dcsim run` with different --set wrote to the same runs/<name>/,
    the second replacing the first. The second is refused, saying how the runs differ and
    naming a directory of its own; --force replaces."""
    first = dcsim_cli("run", small_spec, "-q", "--set", "workload.flows=100", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    p = dcsim_cli("run", small_spec, "-q", "--set", "workload.flows=200", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert "runs/small already holds another run (workload.flows = 100 there, 200 here)" in p.stderr
    assert re.search(r"keep both with --out runs/small-[0-9a-f]{8} .*replace it with --force", p.stderr), p.stderr
    assert json.loads((tmp_path / "runs" / "small" / "summary.json").read_text())["flows_total"] == 100
    p = dcsim_cli("run", small_spec, "-q", "--set", "workload.flows=200", "--force", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "runs" / "small" / "summary.json").read_text())["flows_total"] == 200


def test_the_same_run_again_replaces_itself(small_spec, tmp_path):
    """Issue 15 item 4: `make run` twice (the same spec into the same directory) failed. The
    same spec and dcsim version give the same results, so the run is replaced without --force."""
    for _ in range(2):
        p = dcsim_cli("run", small_spec, "--out", tmp_path / "r", "--set", "workload.flows=100")
        assert p.returncode == 0, p.stderr
        assert "flows completed   100 / 100" in p.stdout


def _thresholds(*args):
    p = dcsim_cli("thresholds", "--workload", "websearch", "--queues", "2", *args)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("spec:"))
    return [float(x) for x in line.rsplit("[", 1)[1].rstrip("]").split(",")]


def test_thresholds_paper_formula_and_base_rtt_variant():
    # SIGCOMM'13 §6.1 (web search, two queues): the printed formula's 80 % optimum is 1.36 MB;
    # with the 14.6 us base RTT in the normalization it moves to the paper's ~1.74 MB.
    (plain,) = _thresholds("--load", "0.8")
    (with_rtt,) = _thresholds("--load", "0.8", "--base-rtt-us", "14.6")
    assert 1.30e6 < plain < 1.42e6
    assert abs(with_rtt - 1.74e6) / 1.74e6 < 0.03
    # Equal split is the median flow size (two queues), independent of load.
    (eq,) = _thresholds("--load", "0.3", "--method", "equal-split")
    assert abs(eq - 48.385 * 1460) / (48.385 * 1460) < 0.001


@pytest.mark.parametrize(
    "args", [["--base-rtt-us", "-1"], ["--load", "1.2"], ["--queues", "0"], ["--method", "pias-table", "--queues", "4"]]
)
def test_thresholds_rejects_bad_input(args):
    p = dcsim_cli("thresholds", *args)
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "Traceback" not in p.stderr, (p.stdout, p.stderr)


def test_schema_is_generated_from_the_resolver():
    """`dcsim schema` prints a JSON Schema whose defaults are what an empty spec resolves to."""
    import contextlib
    import io
    import json

    from dcsim.cli import main
    from dcsim.spec import resolve

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["schema"]) == 0
    schema = json.loads(buf.getvalue())
    resolved = json.loads(resolve({}).json)
    for section, props in schema["properties"].items():
        if props.get("type") != "object":
            assert props["default"] == resolved[section], section
            continue
        for key, field in props["properties"].items():
            if field.get("type") == "object":
                continue
            if key in ("thresholds", "dupack_threshold", "max_window_pkts"):
                continue  # resolved to a derived value, not the default
            assert field["default"] == resolved[section][key], f"{section}.{key}"
    assert "d2tcp" in schema["properties"]["transport"]["properties"]["protocol"]["enum"]
