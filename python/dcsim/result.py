"""Run results: the summary, the per-flow table, and the on-disk run directory.

A run directory holds ``flows.parquet``, ``summary.json``, ``spec.toml`` (the fully resolved
spec) and ``log.txt``, and the recordings the spec's ``[output]`` asked for:
``timeseries.parquet``, ``ports.parquet`` and ``packets.parquet`` (docs/metrics.md). Every
file is written to a temporary name and renamed into place, and ``summary.json`` is written
last: a directory with a ``summary.json`` is complete, one without it is not (a killed run
never looks finished).

``summary.json`` (under ``"metadata"``), ``flows.parquet`` and the recordings (as Parquet
key-value metadata) each say what produced them: the dcsim version, the seed and the resolved
spec, so a file copied away still does; :func:`read_metadata` reads either.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import _dcsim
from .spec import ResolvedSpec, SpecError, flatten

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


#: The key of ``summary.json`` that holds :func:`run_metadata`.
SUMMARY_METADATA_KEY = "metadata"
#: Parquet key-value metadata: ``flows.parquet``'s key for each entry of :func:`run_metadata`.
PARQUET_METADATA_KEYS = {"dcsim_version": b"dcsim.version", "seed": b"dcsim.seed", "spec": b"dcsim.spec"}


def run_metadata(spec_tree: Mapping[str, Any]) -> dict[str, Any]:
    """What produced a run of the resolved spec ``spec_tree``: ``dcsim_version``, ``seed`` and
    ``spec`` (the resolved spec as a dict, every default filled in)."""
    return {"dcsim_version": _dcsim.__version__, "seed": spec_tree["seed"], "spec": dict(spec_tree)}


def with_metadata(table: pa.Table, metadata: Mapping[str, Any]) -> pa.Table:
    """``table`` carrying :func:`run_metadata` as its schema's key-value metadata (written to
    Parquet with it): ``dcsim.version``, ``dcsim.seed`` and ``dcsim.spec`` (JSON)."""
    keys = PARQUET_METADATA_KEYS
    entries = {
        keys["dcsim_version"]: str(metadata["dcsim_version"]).encode(),
        keys["seed"]: str(metadata["seed"]).encode(),
        keys["spec"]: json.dumps(metadata["spec"], sort_keys=True).encode(),
    }
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **entries})


def _metadata_of_schema(schema: pa.Schema) -> dict[str, Any] | None:
    """:func:`run_metadata` as :func:`with_metadata` stored it in ``schema``, if it did."""
    stored = schema.metadata or {}
    keys = PARQUET_METADATA_KEYS
    if not all(k in stored for k in keys.values()):
        return None
    return {
        "dcsim_version": stored[keys["dcsim_version"]].decode(),
        "seed": int(stored[keys["seed"]]),
        "spec": json.loads(stored[keys["spec"]]),
    }


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """What produced a run's results: a dict with ``dcsim_version``, ``seed`` and ``spec`` (the
    resolved spec as a dict). ``path`` is a run directory, its ``summary.json`` or its
    ``flows.parquet`` (also copied elsewhere under another name).

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that does not
    carry them (written by a dcsim that did not record them, or not by dcsim)."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json" if (path / "summary.json").exists() else path / "flows.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.suffix == ".json":
        try:
            found = json.loads(path.read_text()).get(SUMMARY_METADATA_KEY)
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as e:
            raise ValueError(f"{path} is not a dcsim summary.json: {e}") from None
    else:
        try:
            found = _metadata_of_schema(pq.read_schema(path))
        except pa.ArrowException as e:
            raise ValueError(f"{path} is neither a summary.json nor a Parquet file: {e}") from None
    if found is None:
        raise ValueError(f"{path} does not say what produced it (no dcsim version, seed and spec in it)")
    return dict(found)


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


#: The line of ``log.txt`` that records the run's spec hash (:meth:`ResolvedSpec.hash`).
SPEC_HASH_LINE = "spec hash "


def stored_spec_hash(out: str | os.PathLike) -> str | None:
    """The spec hash a complete run directory records in its ``log.txt``, or None."""
    try:
        log = (Path(out) / "log.txt").read_text(errors="replace")
    except OSError:
        return None
    for line in log.splitlines():
        if line.startswith(SPEC_HASH_LINE):
            return line[len(SPEC_HASH_LINE) :].strip()
    return None


def holds_same_run(out: str | os.PathLike, spec: ResolvedSpec) -> bool:
    """True if `out` holds a complete run of this very spec with this dcsim version (the
    hash covers both): running it again gives the same results, so it may be replaced."""
    try:
        complete = (Path(out) / "summary.json").exists()
    except OSError:
        return False  # an impossible path: check_out says why
    return complete and stored_spec_hash(out) == spec.hash()


def _spec_differences(out: Path, spec: ResolvedSpec, limit: int = 3) -> str:
    """What sets the run in `out` apart from `spec`: ``workload.flows = 600 there, 1200
    here; …``."""
    from .spec import tomllib

    try:
        there = flatten(tomllib.loads((out / "spec.toml").read_text()))
    except (OSError, ValueError):
        return ""
    here = flatten(spec.tree)
    keys = sorted(k for k in there.keys() | here.keys() if there.get(k) != here.get(k))
    if not keys:
        return " (the same spec, run by another dcsim version)"
    shown = [f"{k} = {_toml_value(there.get(k))} there, {_toml_value(here.get(k))} here" for k in keys[:limit]]
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return f" ({'; '.join(shown)}{more})"


def _toml_value(v: Any) -> str:
    """A spec value as TOML writes it (``"dctcp"``, ``true``, ``0.6``)."""
    if v is None:
        return "(unset)"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def check_out(out: str | os.PathLike, force: bool = False, spec: ResolvedSpec | None = None) -> None:
    """Checks, before a run, that its directory can be written: not a file, not a folder of
    other files, not a complete run unless ``force``, and its parent writable. Clears what a
    killed writer left beside it. With the run's ``spec``, the refusal says how the run
    already there differs and suggests a directory of its own."""
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"{out} is a file, not a run directory")
        if out.is_dir():
            names = {n for n in os.listdir(out) if not n.startswith(".")}
            if "summary.json" in names and not force:
                if spec is None:
                    raise OutputError(f"{out} already holds a complete run; pass --force (force=True) to replace it")
                mine = out.with_name(f"{out.name}-{spec.hash()[:8]}")
                raise OutputError(
                    f"{out} already holds another run{_spec_differences(out, spec)}; keep both with "
                    f"--out {mine} (out=...), or replace it with --force (force=True)"
                )
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
    """The outcome of one run, as [`run`][dcsim.run] returns it or
    [`Result.read`][dcsim.Result.read] loads it from a run directory.

    Attributes:
        summary: The content of `summary.json`: flow counts, slowdown and FCT statistics
            overall and per size bin (`summary["bins"]["0-100KB"]["p99_slowdown"]`), throughput,
            drops, event counts. Every field is described in `docs/metrics.md`.
        table: The per-flow records as a `pyarrow.Table`, one row per flow (columns in
            `docs/metrics.md`: `id`, `src`, `dst`, `size_bytes`, `start_us`, `fct_us`,
            `slowdown`, ...).
        spec_toml: The fully resolved spec that produced this result, as TOML text.
        out_dir: The run directory the result was written to or read from, else `None`.
        metadata: What produced the run (dcsim version, seed, resolved spec; see
            [`read_metadata`][dcsim.read_metadata]); `table` carries it too, as
            `flows.parquet` does. `summary` leaves it out.
        recordings: The recordings the spec's `[output]` asked for, as `pyarrow.Table`s by
            name (`timeseries`, `ports`, `packets`; see `docs/metrics.md`); the properties of
            the same names give them as DataFrames.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        table: pa.Table,
        spec_toml: str,
        out_dir: Path | None = None,
        metadata: Mapping[str, Any] | None = None,
        recordings: dict[str, pa.Table] | None = None,
    ) -> None:
        self.summary = summary
        self.table = with_metadata(table, metadata) if metadata is not None else table
        self.spec_toml = spec_toml
        self.out_dir = out_dir
        self.recordings = {
            name: with_metadata(t, metadata) if metadata is not None else t for name, t in (recordings or {}).items()
        }
        self._flows = None

    @property
    def metadata(self) -> dict[str, Any] | None:
        """``dcsim_version``, ``seed`` and ``spec`` (the resolved spec as a dict) of the run, or
        None for results saved by a dcsim that did not record them."""
        return _metadata_of_schema(self.table.schema)

    @property
    def flows(self):  # -> pandas.DataFrame
        """The per-flow records as a pandas DataFrame (converted from `table` once, then kept)."""
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
        """The per-flow records as a `pyarrow.Table` (the same object as `table`)."""
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
            summary = (json.dumps(self._summary_with_metadata(), indent=2, sort_keys=True) + "\n").encode()
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

    def _summary_with_metadata(self) -> dict[str, Any]:
        """The content of ``summary.json``: the summary and, under ``metadata``, what produced it."""
        metadata = self.metadata
        return self.summary if metadata is None else {**self.summary, SUMMARY_METADATA_KEY: metadata}

    @classmethod
    def read(cls, out_dir: str | os.PathLike) -> Result:
        """Loads a complete run directory (one with a `summary.json`), as `dcsim run` or
        [`run`][dcsim.run] with `out` wrote it. Raises `FileNotFoundError` for any other."""
        out = Path(out_dir)
        summary_path = out / "summary.json"
        if not summary_path.exists():
            raise FileNotFoundError(f"{out} is not a complete run directory (no summary.json)")
        summary = json.loads(summary_path.read_text())
        summary.pop(SUMMARY_METADATA_KEY, None)  # the table carries it too
        recorded = {n: pq.read_table(out / f"{n}.parquet") for n in RECORDINGS if (out / f"{n}.parquet").exists()}
        flows = pq.read_table(out / "flows.parquet")
        return cls(summary, flows, (out / "spec.toml").read_text(), out, recordings=recorded)


def format_summary(summary: dict[str, Any]) -> str:
    """A run's summary (`Result.summary`) as the plain-text table `dcsim run` prints."""
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
        *(
            [f"offered load      {s['offered_load']:.3f} (the drawn flows' bytes; docs/metrics.md)"]
            if s.get("offered_load") is not None
            else []
        ),
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
