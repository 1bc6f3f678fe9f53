"""Partitioned runs on several threads (issue 16 lever 1): `dcsim run --threads N` writes the
same flows.parquet, byte for byte, for every N."""

import pytest

import dcsim
from conftest import dcsim_cli, write

#: 3 racks x 4 hosts, 2 spines (5 partitions), 60 IMC10 flows.
SPEC = 'seed = 5\n[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 60\nflow_sizes = "imc10"\n'


@pytest.mark.parametrize(
    "sets",
    [
        ["transport.protocol=dctcp"],
        ["transport.protocol=pfabric", "topology.load_balancing=ecmp"],
        ["transport.protocol=pfabric", "topology.kind=fat-tree", "topology.k=4"],
        ["transport.protocol=phost"],  # one partition: threads change nothing either
        ["transport.protocol=tcp", "workload.long_lived_flows=1", "output.timeseries_us=10"],
    ],
)
def test_every_thread_count_writes_the_same_flows_parquet(tmp_path, sets):
    """Issue 16 item 8: the flow table's bytes (metadata included) and the recordings do not
    depend on the thread count."""
    spec = write(tmp_path, SPEC)
    outputs = {}
    for threads in (1, 2, 3):
        out = tmp_path / f"t{threads}"
        args = ["run", spec, "--out", out, "--quiet", "--threads", threads]
        for s in sets:
            args += ["--set", s]
        p = dcsim_cli(*args)
        assert p.returncode == 0, p.stderr
        outputs[threads] = sorted((f.name, f.read_bytes()) for f in out.glob("*.parquet"))
    assert [name for name, _ in outputs[1]][0] == "flows.parquet"
    assert outputs[2] == outputs[1]
    assert outputs[3] == outputs[1]


def test_threads_must_be_a_positive_count(tmp_path):
    """Issue 16 item 6: a thread count below 1 is refused, naming the value."""
    with pytest.raises(ValueError, match="threads = 0"):
        dcsim.run(SPEC, threads=0)
    p = dcsim_cli("run", write(tmp_path, SPEC), "--threads", "0", "--out", tmp_path / "r")
    assert p.returncode == 2 and "--threads" in p.stderr
