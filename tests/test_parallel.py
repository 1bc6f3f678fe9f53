"""Partitioned runs on several threads (issue 16 lever 1, opt-in with `engine.partitioned = true`):
`dcsim run --threads N` writes the same flows.parquet, byte for byte, for every N; the default
(sequential) model ignores `--threads` and says so; a protocol that cannot run partitioned is
refused."""

import pytest

import dcsim
from conftest import dcsim_cli, write

#: 3 racks x 4 hosts, 2 spines (5 partitions), 60 IMC10 flows: the sequential model.
SPEC = 'seed = 5\n[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 60\nflow_sizes = "imc10"\n'

#: The same in the partitioned model.
PARTITIONED = SPEC + "[engine]\npartitioned = true\n"


def _run_cli(tmp_path, text, name, threads, sets=()):
    """`dcsim run` of `text` on `threads` threads; returns (process, sorted (parquet name, bytes))."""
    out = tmp_path / name
    args = ["run", write(tmp_path, text), "--out", out, "--quiet", "--threads", threads]
    for s in sets:
        args += ["--set", s]
    p = dcsim_cli(*args)
    assert p.returncode == 0, p.stderr
    return p, sorted((f.name, f.read_bytes()) for f in out.glob("*.parquet"))


@pytest.mark.parametrize(
    "sets",
    [
        ["transport.protocol=dctcp"],
        ["transport.protocol=pfabric", "topology.load_balancing=ecmp"],
        ["transport.protocol=pfabric", "topology.kind=fat-tree", "topology.k=4"],
        ["transport.protocol=tcp", "workload.long_lived_flows=1", "output.timeseries_us=10"],
    ],
)
def test_every_thread_count_writes_the_same_flows_parquet(tmp_path, sets):
    """Issue 16 item 8: in the partitioned model the flow table's bytes (metadata included)
    and the recordings do not depend on the thread count."""
    outputs = {t: _run_cli(tmp_path, PARTITIONED, f"t{t}", t, sets)[1] for t in (1, 2, 3)}
    assert [name for name, _ in outputs[1]][0] == "flows.parquet"
    assert outputs[2] == outputs[1]
    assert outputs[3] == outputs[1]


def test_the_sequential_model_ignores_threads_and_says_so(tmp_path):
    """Issue 16 (opt-in): a default run asked for several threads runs the sequential model on
    one, writes the same bytes as with one thread, and says once on stderr how to opt in; the
    partitioned model changes the results (it is a different model)."""
    p1, one = _run_cli(tmp_path, SPEC, "one", 1)
    p3, three = _run_cli(tmp_path, SPEC, "three", 3)
    assert three == one
    assert "engine.partitioned" not in p1.stderr
    assert p3.stderr.count("--threads 3: the sequential model (the default) runs on one thread") == 1
    assert "set engine.partitioned = true" in p3.stderr
    _, partitioned = _run_cli(tmp_path, PARTITIONED, "partitioned", 1)
    assert dict(partitioned)["flows.parquet"] != dict(one)["flows.parquet"]


def test_partitioned_is_refused_for_a_protocol_that_shares_state(tmp_path):
    """Issue 16 (opt-in): `engine.partitioned = true` with Ideal (flow-level, no packets) is an
    error naming the field, the value, the protocol and the protocols that support it."""
    p = dcsim_cli("run", write(tmp_path, PARTITIONED), "--out", tmp_path / "r", "--set", "transport.protocol=ideal")
    assert p.returncode != 0
    assert "engine.partitioned" in p.stderr
    assert 'true, but transport.protocol = "ideal" cannot run partitioned' in p.stderr
    can = "dctcp, tcp, pfabric, phost, fastpass, pias, las, l2dct, d2tcp, pase, homa, dcpim"
    assert f"the protocols that can: {can}" in p.stderr


def test_partitioned_is_in_the_run_identity_only_when_set():
    """Issue 16 (opt-in): `engine.partitioned` changes results, so `true` changes a run's
    hash; at its default it stays out, so runs stored before the field keep theirs."""
    default = dcsim.resolve(SPEC)
    explicit_false = dcsim.resolve(SPEC + "[engine]\npartitioned = false\n")
    partitioned = dcsim.resolve(PARTITIONED)
    assert "partitioned" not in default.identity().get("engine", {})
    assert explicit_false.identity() == default.identity()
    assert partitioned.identity()["engine"]["partitioned"] is True


def test_threads_must_be_a_positive_count(tmp_path):
    """Issue 16 item 6: a thread count below 1 is refused, naming the value."""
    with pytest.raises(ValueError, match="threads = 0"):
        dcsim.run(SPEC, threads=0)
    p = dcsim_cli("run", write(tmp_path, SPEC), "--threads", "0", "--out", tmp_path / "r")
    assert p.returncode == 2 and "--threads" in p.stderr
