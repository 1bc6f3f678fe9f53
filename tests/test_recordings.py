"""The views inside the network (issue 15 item 11): port samples, the per-packet trace and the
time series, each in its own Parquet file, with accessors on dcsim.Result and plot helpers."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import dcsim
from conftest import SMALL, dcsim_cli
from dcsim import plot, sweep

RECORD = {"output.ports_sample_us": 5, "output.packet_trace": True, "output.timeseries_us": 20}


def test_recordings_go_to_their_own_parquet_files(tmp_path):
    """Issue 15 item 11: port samples, the packet trace and the time series are Parquet files
    of the run directory and DataFrames on the result; summary.json holds no list of them."""
    r = dcsim.run(SMALL, out=tmp_path / "run", overrides={**RECORD, "workload.flows": 10})
    files = {f.name for f in (tmp_path / "run").iterdir()}
    assert {"ports.parquet", "packets.parquet", "timeseries.parquet", "flows.parquet"} <= files
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "timeseries" not in summary
    assert not any(isinstance(v, list) for v in summary.values())
    assert summary["ports_rows"] == len(r.ports) and summary["packets_rows"] == len(r.packets)
    assert summary["timeseries_rows"] == len(r.timeseries) > 0

    ports = r.ports
    assert list(ports.columns) == [
        "time_us", "port", "node", "peer", "hop", "rate_gbps", "queue_bytes", "queue_packets",
        "tx_bytes", "utilization", "dropped_packets", "marked_packets",
    ]  # fmt: skip
    n_ports = ports.port.nunique()
    assert n_ports == 2 * (12 + 3 * 2)  # 12 host links, 3 ToRs × 2 spines, two ports each
    assert len(ports) % n_ports == 0
    assert set(ports.hop) == {"source_nic", "tor_uplink", "core", "tor_downlink"}
    assert ports.utilization.between(0, 1 + 1e-3).all() and ports.utilization.max() > 0.5
    assert (ports.queue_bytes > 0).any()
    assert ports.dropped_packets.sum() == sum(summary["drops_by_hop"].values())

    packets = r.packets
    assert packets.time_us.is_monotonic_increasing
    assert set(packets.event) <= {"enqueue", "dequeue", "drop", "deliver"}
    assert (packets.event == "deliver").sum() == summary["packets_delivered"]
    assert packets.port[packets.event == "deliver"].isna().all()
    assert {"data", "ack"} <= set(packets.kind)
    assert not summary["packets_truncated"]
    assert str(packets.port.dtype) == "UInt32"

    again = dcsim.Result.read(tmp_path / "run")
    assert again.ports.equals(ports) and again.packets.equals(packets)
    assert again.timeseries.equals(r.timeseries)


def test_a_recording_not_asked_for_says_how_to_turn_it_on():
    """Issue 15 item 11: the accessors name the spec field that turns a recording on."""
    r = dcsim.run(SMALL, workload__flows=20)
    with pytest.raises(ValueError, match="no ports: set output.ports_sample_us > 0"):
        _ = r.ports
    with pytest.raises(ValueError, match="no packets: set output.packet_trace = true"):
        _ = r.packets
    with pytest.raises(ValueError, match="no timeseries: set output.timeseries_us > 0"):
        _ = r.timeseries


def test_a_run_directory_from_before_keeps_its_time_series(tmp_path):
    """Issue 15 item 11 (compatibility): a run directory written when the time series lived in
    summary.json still gives it as a DataFrame."""
    r = dcsim.run(SMALL, out=tmp_path / "run", workload__flows=20, output__timeseries_us=50)
    summary_path = tmp_path / "run" / "summary.json"
    old = json.loads(summary_path.read_text())
    series = r.timeseries
    old["timeseries"] = {c: series[c].tolist() for c in series.columns} | {"truncated": False}
    summary_path.write_text(json.dumps(old))
    (tmp_path / "run" / "timeseries.parquet").unlink()
    pd.testing.assert_frame_equal(dcsim.Result.read(tmp_path / "run").timeseries, series, check_dtype=False)


def test_too_many_rows_are_refused_before_the_run(tmp_path, small_spec):
    """Issue 15 item 11: a recording expected to pass its row limit is refused, naming it."""
    p = dcsim_cli("run", small_spec, "--out", tmp_path / "r", "--set", "output.ports_sample_us=0.1")
    assert p.returncode == 2
    assert "error: `output.ports_max_rows`: 5000000 rows are too few for ports.parquet" in p.stderr
    p = dcsim_cli("run", small_spec, "--out", tmp_path / "r", "--set", "output.packet_trace=true")
    assert p.returncode == 2
    assert "error: `output.packet_trace_max_rows`: 1000000 rows are too few for packets.parquet" in p.stderr
    assert not (tmp_path / "r").exists()


def test_a_sweep_writes_the_recordings_of_each_run(tmp_path):
    """Issue 15 item 11: sweep run directories carry the recordings too."""
    spec = tmp_path / "s.toml"
    spec.write_text(
        "[topology]\nracks = 2\nhosts_per_rack = 3\nspines = 2\n[workload]\nflows = 20\n"
        '[output]\nports_sample_us = 10\n[sweep]\n"workload.load" = [0.3, 0.6]\n'
    )
    p = sweep.plan(spec)
    assert sweep.run_sweep(p, tmp_path / "out", jobs=1, progress=False).ok
    for run in p.runs:
        d = tmp_path / "out" / "runs" / run.hash
        table = pq.read_table(d / "ports.parquet")
        assert table.num_rows == json.loads((d / "summary.json").read_text())["ports_rows"] > 0


def test_plot_helpers_draw_queues_utilization_and_a_flow(tmp_path):
    """Issue 15 item 11: the plot helpers draw from the recordings."""
    r = dcsim.run(SMALL, overrides={**RECORD, "workload.flows": 10})
    fig, ax = plot.queue_occupancy(r.ports, top=3)
    assert len(ax.get_lines()) == 3
    busiest = r.ports.groupby("port").queue_bytes.max().idxmax()
    assert f"port {busiest} " in ax.get_legend().get_texts()[0].get_text()
    plot.save(fig, tmp_path / "queues.png")
    fig, ax = plot.utilization_heatmap(r.ports, hop="tor_uplink")
    image = ax.get_images()[0].get_array()
    assert image.shape[0] == 6 and np.nanmax(image) <= 1.0
    plot.save(fig, tmp_path / "heat.png")
    flow = int(r.flows.sort_values("size_bytes").id.iloc[-1])
    fig, ax = plot.packet_sequence(r.packets, flow)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "sent" in labels and "delivered" in labels
    plot.save(fig, tmp_path / "flow.png")
    for name in ("queues", "heat", "flow"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="port 9999 is not in the samples"):
        plot.queue_occupancy(r.ports, which=[9999])
