"""Run results: the summary, the per-flow table, and the on-disk run directory.

A run directory holds ``flows.parquet``, ``summary.json``, ``spec.toml`` (the fully resolved
spec) and ``log.txt``, and the recordings the spec's ``[output]`` asked for:
``timeseries.parquet``, ``ports.parquet`` and ``packets.parquet`` (docs/metrics.md). Every
file is written to a temporary name and renamed into place, and ``summary.json`` is written
last: a directory with a ``summary.json`` is complete, one without it is not (a killed run
never looks finished).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .spec import SpecError

_NONE_U64 = np.uint64(2**64 - 1)
_NONE_U32 = np.uint32(2**32 - 1)


def columns_to_arrow(raw: dict[str, tuple]) -> pa.Table:
    """Builds the per-flow Arrow table from the core's raw little-endian columns."""
    c = {name: np.frombuffer(buf, dtype=np.dtype(dt)) for name, (dt, buf) in raw.items()}
    done = c["finish_ps"] != _NONE_U64
    start_us = c["start_ps"] / 1e6
    finish_us = np.where(done, c["finish_ps"].astype(np.float64) / 1e6, np.nan)
    ideal_us = c["ideal_ps"] / 1e6
    fct_us = np.where(done, (c["finish_ps"] - np.where(done, c["start_ps"], 0)).astype(np.float64) / 1e6, np.nan)
    deadline_us = np.where(c["deadline_ps"] != _NONE_U64, c["deadline_ps"].astype(np.float64) / 1e6, np.nan)
    request = np.where(c["request"] != _NONE_U32, c["request"].astype(np.int64), -1)
    return pa.table(
        {
            "id": c["id"],
            "src": c["src"],
            "dst": c["dst"],
            "size_bytes": c["size_bytes"],
            "start_us": start_us,
            "finish_us": finish_us,
            "fct_us": fct_us,
            "ideal_fct_us": ideal_us,
            "slowdown": fct_us / ideal_us,
            "retransmits": c["retransmits"],
            "timeouts": c["timeouts"],
            "packets_sent": c["packets_sent"],
            "completed": done,
            "deadline_us": deadline_us,
            "tenant": c["tenant"],
            "request": request,
        }
    )


#: Names of the hop kinds, by the core's code (``HopKind::ALL``).
_HOPS = ["source_nic", "tor_uplink", "core", "tor_downlink"]
#: Names of the packet trace's events, by the core's code (``HopEvent``).
_EVENTS = ["enqueue", "dequeue", "drop", "deliver"]
#: The recordings a run may make beyond its flow table, each written to ``<name>.parquet``.
RECORDINGS = ("timeseries", "ports", "packets")


def _dictionary(codes: np.ndarray, names: list[str]) -> pa.DictionaryArray:
    """Small integer codes as a dictionary-encoded string column."""
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(names))


def recordings_to_arrow(raw: dict[str, dict[str, tuple]]) -> dict[str, pa.Table]:
    """Builds the recordings' Arrow tables (``timeseries``, ``ports``, ``packets``) from the
    core's raw little-endian columns; ``port_info`` describes the ports both others name."""
    cols = {
        name: {c: np.frombuffer(buf, dtype=np.dtype(dt)) for c, (dt, buf) in table.items()}
        for name, table in raw.items()
    }
    out: dict[str, pa.Table] = {}
    if "timeseries" in cols:
        out["timeseries"] = pa.table(cols["timeseries"])
    info = cols.get("port_info")
    if "ports" in cols and info is not None:
        c = cols["ports"]
        port = c["port"]
        times = np.unique(c["time_ps"])
        interval_ps = float(times[1] - times[0]) if len(times) > 1 else 0.0
        rate_bps = info["rate_bps"][port].astype(np.float64)
        busy = c["tx_bytes"] * 8.0 / (rate_bps * interval_ps / 1e12) if interval_ps else np.zeros(len(port))
        out["ports"] = pa.table(
            {
                "time_us": c["time_ps"] / 1e6,
                "port": port,
                "node": info["node"][port],
                "peer": info["peer"][port],
                "hop": _dictionary(info["hop"][port], _HOPS),
                "rate_gbps": rate_bps / 1e9,
                "queue_bytes": c["queue_bytes"],
                "queue_packets": c["queue_packets"],
                "tx_bytes": c["tx_bytes"],
                "utilization": busy,
                "dropped_packets": c["dropped_packets"],
                "marked_packets": c["marked_packets"],
            }
        )
    if "packets" in cols:
        c = cols["packets"]
        # A FIFO port commits a transmission when it admits the packet, so the core writes
        # that dequeue early; the file is in time order (ties in the order events happened).
        order = np.argsort(c["time_ps"], kind="stable")
        kind = c["kind"][order]
        kind_names = ["data", "ack"] + [f"control-{k}" for k in range(254)]
        port = c["port"][order]
        out["packets"] = pa.table(
            {
                "time_us": c["time_ps"][order] / 1e6,
                "packet": c["packet"][order],
                "flow": c["flow"][order],
                "seq": c["seq"][order],
                "kind": _dictionary(kind, kind_names),
                "size_bytes": c["size_bytes"][order],
                "event": _dictionary(c["event"][order], _EVENTS),
                "node": c["node"][order],
                "port": pa.array(port, mask=port == _NONE_U32),
            }
        )
    return out


def _atomic(path: Path, write: Callable[[str], None]) -> None:
    """Calls `write(tmp)` for a temporary file next to `path`, then renames it to `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` via a temporary file, fsync and a rename."""

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    _atomic(path, write)


def atomic_write_parquet(path: Path, table: pa.Table) -> None:
    """Writes ``table`` as Parquet to ``path`` via a temporary file and a rename."""
    _atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


_RUN_FILES = {"flows.parquet", "summary.json", "spec.toml", "log.txt"} | {f"{n}.parquet" for n in RECORDINGS}


class OutputError(SpecError):
    """A run directory that cannot be written: raised before anything is simulated."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "out")


def _stale(path: Path) -> bool:
    """True for a staging directory left by a process that no longer runs (its name ends in
    ``-<pid>-<random>``)."""
    try:
        pid = int(path.name.split("-")[-2])
    except (ValueError, IndexError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def check_out(out: str | os.PathLike, force: bool = False) -> None:
    """Checks, before a run, that its directory can be written: not a file, not a folder of
    other files, not a complete run unless ``force``, and its parent writable. Clears what a
    killed writer left beside it."""
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"{out} is a file, not a run directory")
        if out.is_dir():
            names = {n for n in os.listdir(out) if not n.startswith(".")}
            if "summary.json" in names and not force:
                raise OutputError(f"{out} already holds a complete run; pass --force (force=True) to replace it")
            foreign = sorted(names - _RUN_FILES)
            if foreign:
                raise OutputError(
                    f"{out} is not a run directory (it holds {', '.join(foreign[:3])}); choose another --out"
                )
        out.parent.mkdir(parents=True, exist_ok=True)
        for left in out.parent.glob(f".{out.name}.staging-*"):
            if _stale(left):
                shutil.rmtree(left, ignore_errors=True)
        probe = out.parent / f".{out.name}.probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        probe.mkdir()
        probe.rmdir()
    except OutputError:
        raise
    except OSError as e:
        raise OutputError(f"cannot write the run directory {out}: {e.strerror or e}") from None


class Result:
    """The outcome of one run.

    ``summary`` is a dict (the content of ``summary.json``); ``flows`` is a pandas DataFrame
    with one row per flow; ``table`` is the same as an Arrow table. The recordings the spec's
    ``[output]`` asked for are DataFrames too: ``timeseries``, ``ports`` (port samples) and
    ``packets`` (the per-packet trace); ``recordings`` holds them as Arrow tables.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        table: pa.Table,
        spec_toml: str,
        out_dir: Path | None = None,
        recordings: dict[str, pa.Table] | None = None,
    ) -> None:
        self.summary = summary
        self.table = table
        self.spec_toml = spec_toml
        self.out_dir = out_dir
        self.recordings = dict(recordings or {})
        self._flows = None

    @property
    def flows(self):  # -> pandas.DataFrame
        if self._flows is None:
            self._flows = self.table.to_pandas()
        return self._flows

    def _recording(self, name: str, how: str):  # -> pandas.DataFrame
        if name not in self.recordings:
            raise ValueError(f"this run recorded no {name}: {how} (docs/metrics.md)")
        import pandas as pd

        # Integer columns with nulls (the packet trace's `port` of a delivery) stay integers.
        nullable = {pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}
        table = self.recordings[name]
        has_nulls = any(col.null_count for col in table.columns)
        return table.to_pandas(types_mapper=nullable.get if has_nulls else None)

    @property
    def timeseries(self):  # -> pandas.DataFrame
        """The fabric-wide counters sampled every ``output.timeseries_us`` (one row per
        sample). Runs stored before ``timeseries.parquet`` existed kept them in
        ``summary.json``; they are read from there."""
        old = self.summary.get("timeseries")
        if "timeseries" not in self.recordings and isinstance(old, dict) and old.get("t_us"):
            import pandas as pd

            return pd.DataFrame({k: v for k, v in old.items() if isinstance(v, list)})
        return self._recording("timeseries", "set output.timeseries_us > 0")

    @property
    def ports(self):  # -> pandas.DataFrame
        """Port samples: every port's queue and link utilization, one row per port per
        ``output.ports_sample_us``."""
        return self._recording("ports", "set output.ports_sample_us > 0")

    @property
    def packets(self):  # -> pandas.DataFrame
        """The per-packet trace: one row per hop event (``output.packet_trace = true``)."""
        return self._recording("packets", "set output.packet_trace = true")

    def to_arrow(self) -> pa.Table:
        return self.table

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<dcsim.Result flows={s['flows_completed']}/{s['flows_total']} "
            f"mean_slowdown={s['mean_slowdown']:.3f} p99_slowdown={s['p99_slowdown']:.3f}>"
        )

    def write(self, out_dir: str | os.PathLike, log: str = "", force: bool = False) -> Path:
        """Writes the run directory (see the module docs); returns its path.

        The files are written to a staging directory beside it and swapped in whole, so a
        failure while writing (a full disk, a kill) never leaves a half-written run nor destroys
        the run that was there. A directory that already holds a complete run is replaced only
        with ``force``."""
        out = Path(out_dir)
        check_out(out, force)
        staging = out.parent / f".{out.name}.staging-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        old = out.parent / f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            staging.mkdir()
            atomic_write_parquet(staging / "flows.parquet", self.table)
            for name, recorded in self.recordings.items():
                atomic_write_parquet(staging / f"{name}.parquet", recorded)
            atomic_write_bytes(staging / "spec.toml", self.spec_toml.encode())
            atomic_write_bytes(staging / "log.txt", log.encode())
            summary = (json.dumps(self.summary, indent=2, sort_keys=True) + "\n").encode()
            atomic_write_bytes(staging / "summary.json", summary)
            if out.exists():
                os.rename(out, old)
            os.rename(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            if old.exists() and not out.exists():
                os.rename(old, out)  # put the previous run back
            raise
        shutil.rmtree(old, ignore_errors=True)
        self.out_dir = out
        return out

    @classmethod
    def read(cls, out_dir: str | os.PathLike) -> Result:
        """Loads a complete run directory."""
        out = Path(out_dir)
        summary_path = out / "summary.json"
        if not summary_path.exists():
            raise FileNotFoundError(f"{out} is not a complete run directory (no summary.json)")
        summary = json.loads(summary_path.read_text())
        recorded = {n: pq.read_table(out / f"{n}.parquet") for n in RECORDINGS if (out / f"{n}.parquet").exists()}
        return cls(summary, pq.read_table(out / "flows.parquet"), (out / "spec.toml").read_text(), out, recorded)


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a plain-text table."""
    s = summary
    lines = [
        f"flows completed   {s['flows_completed']} / {s['flows_total']}"
        + (f"  (warm-up excluded: {s['flows_warmup']})" if s.get("flows_warmup") else ""),
        "",
        f"{'size bin':<12} {'flows':>7} {'mean sd':>9} {'median':>8} {'p99 sd':>9} {'mean FCT us':>12} {'NFCT':>7}",
        f"{'all':<12} {s['flows_completed'] - s.get('flows_warmup', 0):>7} {s['mean_slowdown']:>9.3f} "
        f"{s['median_slowdown']:>8.3f} {s['p99_slowdown']:>9.3f} {s['mean_fct_us']:>12.1f} {s['nfct']:>7.3f}",
    ]
    for name in ("0-100KB", "100KB-10MB", "10MB+"):
        b = s["bins"][name]
        lines.append(
            f"{name:<12} {b['count']:>7} {b['mean_slowdown']:>9.3f} {b['median_slowdown']:>8.3f} "
            f"{b['p99_slowdown']:>9.3f} {b['mean_fct_us']:>12.1f} {b['nfct']:>7.3f}"
        )
    drops = s.get("drops_by_hop", {})
    lines += [
        "",
        f"throughput        {s['throughput_gbps']:.1f} Gbps (fabric-wide goodput)",
        f"packets injected  {s['data_packets_injected']} data, {s['control_packets_injected']} control",
        "drops by hop      " + ", ".join(f"{k} {v}" for k, v in drops.items()),
        f"events            {s['events']} in {s['wall_seconds']:.2f} s wall "
        f"({s['events_per_sec'] / 1e6:.2f} M events/s)",
        f"simulated time    {s['sim_time_us'] / 1e3:.3f} ms",
    ]
    if s.get("long_lived_bytes_delivered"):
        lines.append(
            f"long-lived flows  {s['long_lived_goodput_gbps']:.2f} Gbps goodput "
            f"({s['long_lived_bytes_delivered']} bytes delivered)"
        )
    if s.get("mean_request_completion_us"):
        lines.append(f"mean request completion {s['mean_request_completion_us']:.1f} us")
    recorded = [(n, s.get(f"{n}_rows", 0)) for n in RECORDINGS if s.get(f"{n}_rows")]
    if recorded:
        lines.append("recorded          " + ", ".join(f"{n}.parquet {rows} rows" for n, rows in recorded))
    for name, limit in (
        ("timeseries", "at most 100,000 samples: raise output.timeseries_us"),
        ("ports", "output.ports_max_rows"),
        ("packets", "output.packet_trace_max_rows"),
    ):
        if s.get(f"{name}_truncated"):
            lines.append(f"WARNING: {name}.parquet stopped early, at its row limit ({limit})")
    if s.get("fct_below_ideal") or s.get("conservation_error") or s.get("flows_stalled"):
        lines.append(
            f"INVARIANT VIOLATION: fct_below_ideal={s['fct_below_ideal']} conservation_error={s['conservation_error']} "
            f"flows_stalled={s.get('flows_stalled', 0)}"
        )
    return "\n".join(lines)
