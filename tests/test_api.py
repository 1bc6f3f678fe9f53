"""The Python API: dcsim.run, results, run directories, determinism."""

import json

import pandas as pd
import pytest

import dcsim
from conftest import ROOT, SMALL

SUMMARY_KEYS = {
    "flows_total",
    "flows_completed",
    "mean_slowdown",
    "p99_slowdown",
    "mean_fct_us",
    "nfct",
    "events",
    "events_per_sec",
    "wall_seconds",
    "bins",
}


def test_run_returns_summary_and_flows():
    r = dcsim.run(SMALL)
    s = r.summary
    assert SUMMARY_KEYS <= set(s)
    assert set(s["bins"]) == {"0-100KB", "100KB-10MB", "10MB+"}
    for b in s["bins"].values():
        assert {"count", "mean_slowdown", "p99_slowdown", "mean_fct_us"} <= set(b)
    assert s["flows_completed"] == s["flows_total"] == 300
    assert sum(b["count"] for b in s["bins"].values()) == 300
    assert s["conservation_error"] == 0 and s["fct_below_ideal"] == 0
    df = r.flows
    assert isinstance(df, pd.DataFrame) and len(df) == 300
    for col in [
        "id",
        "src",
        "dst",
        "size_bytes",
        "start_us",
        "finish_us",
        "fct_us",
        "ideal_fct_us",
        "slowdown",
        "retransmits",
        "timeouts",
    ]:
        assert col in df.columns
    assert (df.slowdown >= 1.0).all()
    assert (df.fct_us >= df.ideal_fct_us).all()
    assert df.slowdown.mean() == pytest.approx(s["mean_slowdown"])
    # The per-flow table and the summary agree on the bins.
    small = df[df.size_bytes <= 100_000]
    assert len(small) == s["bins"]["0-100KB"]["count"]
    assert small.slowdown.mean() == pytest.approx(s["bins"]["0-100KB"]["mean_slowdown"])


def test_the_summary_gives_the_load_the_drawn_flows_offered():
    """`offered_load` is the drawn flows' payload bytes × 1500 / 1460 per second up to the last
    arrival over the host links' capacity (all-to-all: every host link), computed here from the
    flow table."""
    hosts, gbps, load = 3 * 4, 10, 0.5
    spec = {
        "topology": {"racks": 3, "hosts_per_rack": 4, "spines": 2, "host_link_gbps": gbps},
        "workload": {"flows": 2000, "load": load, "flow_sizes": "datamining"},
        "transport": {"protocol": "ideal"},
    }
    r = dcsim.run(spec)
    f = r.flows
    by_hand = f.size_bytes.sum() * 1500 / 1460 * 8 / (f.start_us.max() * 1e-6) / (hosts * gbps * 1e9)
    assert r.summary["offered_load"] == pytest.approx(by_hand, rel=1e-6)
    assert "offered load" in dcsim.format_summary(r.summary)


def test_overrides_as_keywords_and_dotted_dict():
    a = dcsim.run(SMALL, workload__flows=50, seed=3)
    b = dcsim.run(SMALL, overrides={"workload.flows": 50, "seed": 3})
    assert a.summary["flows_total"] == 50
    assert a.flows.equals(b.flows)


def test_spec_from_file_and_from_toml_text(small_spec):
    a = dcsim.run(small_spec)
    b = dcsim.run(small_spec.read_text())
    assert a.flows.equals(b.flows)


def test_run_directory_is_complete_and_reloads(tmp_path):
    out = tmp_path / "run"
    r = dcsim.run(SMALL, out=out)
    assert {p.name for p in out.iterdir()} == {"flows.parquet", "summary.json", "spec.toml", "log.txt"}
    again = dcsim.Result.read(out)
    assert again.summary == json.loads(json.dumps(r.summary))
    assert again.flows.equals(r.flows)
    # The stored spec is fully resolved and runs to the same result.
    rerun = dcsim.run(out / "spec.toml")
    assert rerun.flows.equals(r.flows)
    assert 'protocol = "dctcp"' in (out / "spec.toml").read_text()


def test_same_spec_and_seed_give_identical_parquet_bytes(tmp_path):
    dcsim.run(SMALL, out=tmp_path / "a")
    dcsim.run(SMALL, out=tmp_path / "b")
    assert (tmp_path / "a" / "flows.parquet").read_bytes() == (tmp_path / "b" / "flows.parquet").read_bytes()
    dcsim.run(SMALL, out=tmp_path / "c", seed=2)
    assert (tmp_path / "a" / "flows.parquet").read_bytes() != (tmp_path / "c" / "flows.parquet").read_bytes()


def test_resolve_fills_every_default():
    r = dcsim.resolve({})
    assert r.get("topology.racks") == 9 and r.get("workload.load") == 0.6
    assert r.get("transport.protocol") == "dctcp"
    assert r.hash() == dcsim.resolve({"seed": 1}).hash()  # explicit default = same run
    assert r.hash() != dcsim.resolve({"seed": 2}).hash()


def test_fields_added_later_leave_stored_runs_their_identity():
    # A run stored before `workload.stop_when`, `workload.long_lived_flows` and
    # `pfabric.classify` existed hashed the tree without them; at their defaults they stay out
    # of the identity, and a non-default value changes it.
    import hashlib
    import json

    r = dcsim.resolve({"workload": {"flows": 100}})
    assert r.get("workload.stop_when") == "all-finished"
    old_tree = json.loads(r.json)
    del old_tree["workload"]["stop_when"]
    del old_tree["workload"]["long_lived_flows"]
    del old_tree["pfabric"]["classify"]
    del old_tree["pase"]  # the whole section came later (PASE), at its defaults
    del old_tree["homa"]  # issue 18, also a whole section at its defaults
    del old_tree["dcpim"]  # issue 18 (dcPIM), likewise
    del old_tree["l2dct"]  # issue 17 gap 3.3 (L2DCT's increase), likewise
    del old_tree["topology"]["file"]  # issue 15 items 10-11
    for key in ("shared_buffer_bytes", "buffer_alpha"):  # issue 17 gap 3.3 (a shared switch memory)
        del old_tree["topology"][key]
    for key in ("preset", "slot_start", "watchdog_epochs"):  # issue 17 item 3.1
        del old_tree["fastpass"][key]
    for key in ("sack_window", "ties"):  # issue 17 item 3.4
        del old_tree["pfabric"][key]
    for key in ("rto", "max_rto_us", "dequeue", "sending"):  # issue 17 item 3.2 (LineRate's "minRTO" read as estimated)
        del old_tree["pfabric"][key]
    for key in ("ports_sample_us", "ports_max_rows", "packet_trace", "packet_trace_max_rows"):
        del old_tree["output"][key]
    del old_tree["engine"]["partitioned"]  # issue 16 (the opt-in partitioned model)
    del old_tree["phost"]["source_timeout_mtu"]  # issue 2's fuzz harness (a lost RTS or ACK)
    del old_tree["transport"]["connections"]  # issue 17 gap 3.3 (persistent connections)
    del old_tree["transport"]["ideal_order"]  # issue 17 gap 3.2 (HotNets Ideal read as ordered by size)
    old = hashlib.sha256(dcsim._dcsim.__version__.encode() + b"\0" + json.dumps(old_tree, sort_keys=True).encode())
    assert r.hash() == old.hexdigest()[:16]
    n = dcsim.resolve({"workload": {"flows": 100, "stop_when": "n-finished"}})
    assert n.hash() != r.hash()
    code = dcsim.resolve({"workload": {"flows": 100}, "fastpass": {"preset": "authors-code"}})
    assert code.hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100, "long_lived_flows": 2}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"classify": "remaining"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pase": {"queues": 4}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"sack_window": True}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"ties": "queue-order"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"rto": "adaptive"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"dequeue": "most-urgent"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "pfabric": {"sending": "nic-clocked"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "transport": {"ideal_order": "size"}}).hash() != r.hash()
    assert dcsim.resolve({"workload": {"flows": 100}, "engine": {"partitioned": True}}).hash() != r.hash()


def test_n_finished_counts_the_first_flows_to_finish():
    s = {
        "topology": {"racks": 2, "hosts_per_rack": 4, "spines": 1},
        "workload": {"flows": 200, "load": 0.5, "stop_when": "n-finished"},
    }
    res = dcsim.run(s)
    assert res.summary["flows_completed"] == 200 < res.summary["flows_total"]
    assert int(res.flows["completed"].sum()) == 200


def test_progress_callback_is_called_and_can_stop():
    seen = []

    def cb(p):
        seen.append(p)
        return False

    with pytest.raises(KeyboardInterrupt):
        dcsim.run({"workload": {"flows": 20000}}, progress=cb)
    assert len(seen) == 1 and {"sim_time_us", "flows_done", "flows_total", "events"} <= set(seen[0])


def test_bad_spec_raises_spec_error_naming_the_field():
    with pytest.raises(dcsim.SpecError) as e:
        dcsim.run(SMALL, workload__load=1.5)
    assert e.value.field == "workload.load"
    assert "must be > 0 and < 1" in str(e.value)


def test_shipped_workloads_are_the_reference_files():
    for name in ("CDF_dctcp.txt", "CDF_datamining.txt", "CDF_aditya.txt"):
        ours = (ROOT / "workloads" / name).read_text()
        ref = ROOT.parent / "shared" / "reference" / "workloads" / name
        if ref.exists():
            assert ours == ref.read_text()


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_threshold_model_rejects_a_bad_base_latency(bad):
    from dcsim import _dcsim

    with pytest.raises(_dcsim.InvalidSpec, match="base_bytes"):
        _dcsim.threshold_fctn("websearch", 0.5, [1e6], base_bytes=bad)
    with pytest.raises(_dcsim.InvalidSpec, match="base_bytes"):
        _dcsim.thresholds("websearch", 0.5, 2, "mg1", base_bytes=bad)
