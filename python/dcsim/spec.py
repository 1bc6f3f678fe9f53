"""Run specs: load TOML (or take a dict), apply ``--set`` style overrides, and resolve them
in the Rust core, which fills every default and validates every field."""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import math
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from . import _dcsim

SpecLike = Union[str, os.PathLike, Mapping[str, Any]]

#: Spec values that name something rather than a file.
_KEYWORDS = {"websearch", "datamining", "imc10", "bimodal", "all-to-all", "permutation", "self", "incast", "fan-in"}


class SpecError(ValueError):
    """A spec cannot be run, or a run cannot be written where it was asked to go: raised by
    [`resolve`][dcsim.resolve], [`run`][dcsim.run], sweeps and the CLI before anything is
    simulated. The message names the field, the value and what is allowed
    (``workload.load = 1.5: must be in (0, 1)``); the CLI prints it as `error: ...` and exits
    with status 2.

    Attributes:
        field: The dotted path of the offending key (`workload.load`), or the file or option
            at fault (`out` for a run directory that cannot be written).
    """

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class UnusedField:
    """A field a spec sets that has no effect on its run (or a table that does not apply to
    it: then ``value`` is empty). ``reason`` says why, as the resolver knows it."""

    field: str
    value: str
    reason: str

    def message(self) -> str:
        return f"`{self.field}` = {self.value} is set but has no effect on this run: {self.reason}"


class UnusedFieldWarning(UserWarning):
    """A spec sets a field that has no effect on the run: ``unused`` says which and why.
    ``strict=True`` (``--strict`` on the command line) makes it a :class:`SpecError`."""

    def __init__(self, unused: UnusedField, message: str | None = None) -> None:
        super().__init__(message or unused.message())
        self.unused = unused


def _table_of(field: str) -> str:
    """`pase.queues` → `pase`, `workload.bimodal.p_small` → `workload.bimodal`."""
    return field.rsplit(".", 1)[0] if "." in field else ""


def _grouped(unused: Sequence[UnusedField], messages: Sequence[str]) -> list[tuple[UnusedField, str]]:
    """One (field, message) per warning: fields of one table left unused for one reason (every
    field of another protocol's section, say) are said in one line that names them all."""
    groups: dict[tuple[str, str], list[tuple[UnusedField, str]]] = {}
    for u, m in zip(unused, messages):
        groups.setdefault((_table_of(u.field), u.reason), []).append((u, m))
    out: list[tuple[UnusedField, str]] = []
    for (table, reason), members in groups.items():
        standard = all(m == u.message() for u, m in members)
        # Only a table that does not apply as a whole (its reason names the table) is grouped.
        if len(members) < 2 or not reason.startswith(f"`[{table}]`") or not standard:
            out.extend(members)
            continue
        names = ", ".join(f"`{u.field}` = {u.value}" for u, _ in members)
        out.append(
            (
                members[0][0],
                f"{len(members)} fields of `[{table}]` ({names}) are set but have no effect on this run: {reason}",
            )
        )
    return out


def report_unused(
    unused: Sequence[UnusedField], messages: Sequence[str], *, strict: bool, warn: bool, complete: bool = False
) -> None:
    """Refuses (``strict``) or warns about fields set without effect; `messages` says each.
    Fields of one table unused for one reason are warned about in one line; a `complete` spec
    (one that sets every field, as a run directory's resolved ``spec.toml`` does) gets a single
    line, since it sets the fields of every section by construction."""
    if not unused:
        return
    if strict:
        listed = "".join(f"\n  {m}" for m in messages)
        what = f"strict: the spec sets {len(unused)} field(s) without effect (remove them, or drop strict to warn)"
        raise SpecError(f"{what}:{listed}", unused[0].field)
    if not warn:
        return
    if complete:
        tables = sorted({_table_of(u.field) or u.field for u in unused})
        message = (
            f"the spec sets every field (a resolved spec, as a run directory's spec.toml), so "
            f"{len(unused)} of them have no effect on this run, in {', '.join(f'`{t}`' for t in tables)}; "
            "`dcsim show` marks the sections that do not apply and `--strict` lists every field"
        )
        warnings.warn(UnusedFieldWarning(unused[0], message), stacklevel=3)
        return
    for u, m in _grouped(unused, messages):
        warnings.warn(UnusedFieldWarning(u, m), stacklevel=3)


def parse_value(text: str) -> Any:
    """Parses an override value as TOML (``0.7``, ``true``, ``"x"``, ``[1, 2]``), else a
    bare string (``dctcp``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """Sets ``tree[a][b][c] = value`` for ``dotted = "a.b.c"``, creating tables."""
    parts = [p for p in dotted.replace("__", ".").split(".") if p]
    if not parts:
        raise SpecError(f"empty override key {dotted!r}", dotted)
    cur = tree
    for i, part in enumerate(parts[:-1]):
        nxt = cur.setdefault(part, {})
        if not isinstance(nxt, dict):
            raise SpecError(
                f"`{'.'.join(parts[: i + 1])}` is a value, not a table, so `{dotted}` cannot be set",
                dotted,
            )
        cur = nxt
    cur[parts[-1]] = value


#: Spec fields whose values may be file paths (relative ones resolve against the spec file).
_PATH_FIELDS = ("workload.flow_sizes", "workload.matrix", "workload.tenants", "topology.file")


def load_tree(spec: SpecLike) -> tuple[dict[str, Any], Path | None]:
    """Returns the spec as a tree plus the directory relative paths resolve against.

    A spec file may name another in ``base = "path.toml"``: that file is loaded first (its own
    ``base`` too) and this file's tables are merged over it (see :func:`merge_trees`). Relative
    file paths resolve against the file that wrote them. A missing base file or a cycle of
    bases is a :class:`SpecError` naming the file."""
    if isinstance(spec, Mapping):
        tree = copy.deepcopy(dict(spec))
        return _with_base_file(tree, Path.cwd(), "<spec>", ()), None
    text_or_path = os.fspath(spec)
    path = Path(text_or_path)
    looks_like_path = "\n" not in text_or_path and (text_or_path.endswith(".toml") or path.exists())
    if looks_like_path:
        if path.is_dir():
            raise SpecError(f"{text_or_path} is a directory, not a spec file", text_or_path)
        if not path.is_file():
            raise SpecError(f"spec file {text_or_path} does not exist", text_or_path)
        return _load_file(path, ()), path.resolve().parent
    tree = _parse_toml(text_or_path, "spec text", "<toml>")
    return _with_base_file(tree, Path.cwd(), "<toml>", ()), None


#: Deepest nesting a spec may have (its own tables go three deep).
_MAX_DEPTH = 32


def _parse_toml(text: str, what: str, field: str) -> dict[str, Any]:
    """TOML text as a tree; every problem a :class:`SpecError` naming `what`."""
    try:
        tree = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{what}: not valid TOML: {e}", field) from None
    except RecursionError:
        raise SpecError(f"{what}: nested deeper than TOML parsing allows", field) from None
    check_values(tree)
    return tree


def check_values(tree: Mapping[str, Any]) -> None:
    """Rejects values no spec field takes, naming where they are: dates and times (TOML has
    them, specs do not), NaN and infinities, and nesting deeper than any spec table."""
    stack: list[tuple[str, Any, int]] = [(k, v, 1) for k, v in tree.items()]
    while stack:
        path, v, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise SpecError(f"`{path}` is nested {depth} levels deep; a spec has at most a few", path)
        if isinstance(v, (datetime.date, datetime.time)):
            raise SpecError(f"`{path}`: {v} is a date or time, which no spec field takes", path)
        if isinstance(v, float) and not math.isfinite(v):
            raise SpecError(f"`{path}`: {v} is not a finite number", path)
        if isinstance(v, Mapping):
            stack.extend((f"{path}.{k}", x, depth + 1) for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{path}[{i}]", x, depth + 1) for i, x in enumerate(v))


def _read_spec_text(path: Path) -> str:
    """A spec file's text: UTF-8, a leading byte-order mark dropped."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError(f"{path} is not UTF-8 text (byte {e.start} cannot be decoded)", str(path)) from None
    except OSError as e:
        raise SpecError(f"cannot read spec file {path}: {e.strerror or e}", str(path)) from None


def _load_file(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    """One spec file with its chain of ``base`` files merged under it. `chain`: the files
    that named this one as their base, outermost first."""
    resolved = path.resolve()
    if resolved in chain:
        cycle = " -> ".join(str(p) for p in chain[chain.index(resolved) :] + (resolved,))
        raise SpecError(f"{chain[-1]}: `base` files form a cycle: {cycle}", "base")
    tree = _parse_toml(_read_spec_text(path), str(path), str(path))
    _absolutize_file_paths(tree, resolved.parent)
    return _with_base_file(tree, resolved.parent, str(path), chain + (resolved,))


def _with_base_file(tree: dict[str, Any], directory: Path, where: str, chain: tuple[Path, ...]) -> dict[str, Any]:
    """`tree` merged over the file its ``base`` key names (relative to `directory`), if any."""
    if "base" not in tree:
        return tree
    base = tree.pop("base")
    if not isinstance(base, str) or not base:
        raise SpecError(f"{where}: `base` must be the path of a spec file, got {base!r}", "base")
    base_path = directory / base
    if not base_path.is_file():
        raise SpecError(f"{where}: base file {base_path} does not exist", "base")
    return merge_trees(_load_file(base_path, chain), tree)


def merge_trees(base: Mapping[str, Any], over: Mapping[str, Any], _section: str = "") -> dict[str, Any]:
    """`over` merged over `base`: tables merge key by key, recursively; any other value (a
    number, a string, an array), and each axis of a ``[sweep]`` table, is replaced whole."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and _section != "sweep":
            out[key] = merge_trees(old, value, key if not _section else f"{_section}.{key}")
        else:
            out[key] = copy.deepcopy(value)
    return out


def _absolutize_file_paths(tree: dict[str, Any], directory: Path) -> None:
    """Makes the relative file paths a spec file writes absolute, relative to its directory:
    in the workload, in sweep axes and in ``[scales.*]`` overrides."""
    _absolutize(tree, directory)
    scales = tree.get("scales")
    tables = [tree.get("sweep")] + (list(scales.values()) if isinstance(scales, dict) else [])
    for table in tables:
        if isinstance(table, dict):
            for key in _PATH_FIELDS:
                if key == "topology.file" and key in table:
                    table[key] = _absolute_topology_file(table[key], directory)
                elif key in table:
                    table[key] = _absolute(table[key], directory, key == "workload.matrix")


def _absolute(v: Any, base: Path | None, trace: bool) -> Any:
    """`v` (or each string in a list, at any depth) as an absolute path if it names a file
    relative to `base` (or is a trace's .csv or .parquet path), else unchanged (keywords,
    numbers, absolute paths, tables)."""
    if isinstance(v, list):
        return [_absolute(x, base, trace) for x in v]
    if isinstance(v, str) and v.lower() not in _KEYWORDS:
        p = Path(v)
        if not p.is_absolute():
            candidate = (base / p) if base is not None else p
            try:
                exists = candidate.exists()
            except OSError:  # a name too long to be a file (the core then says what it is not)
                exists = False
            if exists or trace and v.endswith((".csv", ".parquet")):
                try:
                    return str(candidate.resolve())
                except (OSError, ValueError):  # not a usable path (a NUL in it): the core says so
                    return v
    return v


def _absolute_topology_file(v: Any, base: Path | None) -> Any:
    """`topology.file` (always a path, unlike the workload's fields) relative to `base`, even if
    it does not exist, so an error names the file where it was looked for (a sweep axis: each
    of its values)."""
    if isinstance(v, list):
        return [_absolute_topology_file(x, base) for x in v]
    if isinstance(v, str) and v and base is not None and not Path(v).is_absolute():
        return str((base / v).resolve())
    return v


def _absolutize(tree: dict[str, Any], base: Path | None) -> None:
    """Makes file paths in the workload and the topology absolute, relative to the spec file."""
    topology = tree.get("topology")
    if isinstance(topology, dict) and "file" in topology:
        topology["file"] = _absolute_topology_file(topology["file"], base)
    wl = tree.get("workload")
    if not isinstance(wl, dict):
        return
    for key in ("flow_sizes", "matrix"):
        if key in wl:
            wl[key] = _absolute(wl[key], base, key == "matrix")
    if isinstance(wl.get("tenants"), list):
        wl["tenants"] = _absolute(wl["tenants"], base, False)


#: Tables only ``dcsim sweep`` (:func:`dcsim.sweep.plan`) reads: a spec holding one is a sweep.
SWEEP_TABLES = ("sweep", "scales")


def build_tree(spec: SpecLike, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The spec tree with overrides applied and paths made absolute (not yet resolved). A
    sweep spec is refused: it is many runs (:func:`dcsim.sweep.plan` expands it)."""
    tree, base = load_tree(spec)
    for table in SWEEP_TABLES:
        if table in tree:
            what = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) and base is not None else "this"
            raise SpecError(
                f"{what} is a sweep spec (it has a [{table}] table, its own or its base's), which describes "
                "many runs: run it with `dcsim sweep` (`--dry-run` lists the runs) or `dcsim.sweep.plan`",
                table,
            )
    for key, value in (overrides or {}).items():
        set_path(tree, key, value)
    _absolutize(tree, base)
    from .trace import convert_in_tree  # imports pyarrow: only when building a run's tree

    convert_in_tree(tree)
    return tree


def _raise_invalid(e: Exception) -> NoReturn:
    """Raises the core's InvalidSpec(message, field) as a SpecError."""
    from .trace import name_originals

    args: tuple[Any, ...] = tuple(getattr(e, "args", ()))
    message = args[0] if args else str(e)
    field = args[1] if len(args) > 1 else ""
    raise SpecError(name_originals(str(message)), str(field)) from None


# Fields added after run stores existed, with their defaults. A run's identity leaves each
# out while it holds its default, so runs stored before the field existed (which behaved
# exactly as the default does) keep their hash and are not simulated again.
ADDED_FIELDS: dict[str, Any] = {
    "workload.stop_when": "all-finished",
    "workload.long_lived_flows": 0,
    "pfabric.classify": "flow-size",
    "pfabric.sack_window": False,
    "pfabric.ties": "random",
    "pfabric.rto": "fixed",
    "pfabric.dequeue": "flow-earliest",
    "pfabric.sending": "queue",
    "pfabric.max_rto_us": 2_000_000.0,
    "pase.queues": 8,
    "pase.arbitration": "end-to-end",
    "pase.order": "srpt",
    "pase.late_flows": "last",
    "pase.rate_control": "pase",
    "pase.pruning_queue": 4,
    "pase.rearbitrate_rtts": 1.0,
    "pase.request_timeout_rtts": 8.0,
    "pase.base_rate_pkts_per_rtt": 1.0,
    "pase.probing": True,
    "pase.delegation": True,
    "pase.delegation_period_rtts": 10.0,
    "pase.control_bytes": 40,
    "phost.source_timeout_mtu": 0.0,
    "fastpass.preset": "paper",
    "fastpass.slot_start": "epoch",
    "fastpass.watchdog_epochs": 16,
    "topology.file": "",
    "topology.shared_buffer_bytes": 0,
    "topology.buffer_alpha": 1.0,
    "engine.partitioned": False,
    "dcpim.rounds": 4,
    "dcpim.channels": 4,
    "dcpim.beta": 1.3,
    "dcpim.alpha": 1.0,
    "dcpim.bdp_packets": 0,
    "dcpim.control_rtt_us": 0.0,
    "dcpim.unscheduled_bdp": 1.0,
    "dcpim.token_window_bdp": 1.0,
    "dcpim.token_window_timeout_bdp": 1.1,
    "dcpim.resend_timeout_bdp": 1.0,
    "dcpim.shortest_first_rounds": 1,
    "dcpim.hold": True,
    "dcpim.source_timeout_bdp": 0.0,
    "output.ports_sample_us": 0.0,
    "output.ports_max_rows": 5_000_000,
    "transport.connections": "per-flow",
    "transport.ideal_order": "remaining",
    "output.packet_trace": False,
    "output.packet_trace_max_rows": 1_000_000,
    "l2dct.increase": "weighted",
    "homa.rtt_bytes": 10_000,
    "homa.priority_levels": 8,
    "homa.scheduled_levels": 7,
    "homa.overcommit": 7,
    "homa.cutoff_method": "cbf-graduated",
    "homa.priority_rule": "message-size",
    "homa.unscheduled_cutoffs": [],
    "homa.resend_timeout_us": 1000.0,
}


class ResolvedSpec:
    """A validated spec with every default filled in, as [`resolve`][dcsim.resolve] returns it.

    Attributes:
        toml: The resolved spec as TOML text (what `dcsim show` prints and a run directory's
            `spec.toml` holds).
        tree: The resolved spec as nested dicts.
        unused: The fields the spec sets (in its file, its `base` files or the overrides, even
            at their default value) that have no effect on the run, with why
            ([`UnusedField`][dcsim.UnusedField]).
        unused_sections: The tables that do not apply to the run (other protocols' sections,
            `workload.bimodal` without bimodal sizes), which `annotated_toml` marks.
    """

    def __init__(
        self,
        toml_text: str,
        tree: dict[str, Any],
        unused: Sequence[UnusedField] = (),
        unused_sections: Sequence[UnusedField] = (),
    ) -> None:
        self.toml = toml_text
        self.tree = tree
        self.unused = list(unused)
        self.unused_sections = list(unused_sections)

    def annotated_toml(self) -> str:
        """:attr:`toml` with each table that does not apply to the run marked on its header
        line (what ``dcsim show`` prints)."""
        why = {u.field: u.reason for u in self.unused_sections}
        lines = []
        for line in self.toml.splitlines():
            header = line.strip()
            if header.startswith("[") and header.strip("[]") in why:
                line = f"{line}  # not used by this run: {why[header.strip('[]')]}"
            lines.append(line)
        return "\n".join(lines) + "\n"

    @property
    def json(self) -> str:
        """The resolved spec as canonical JSON text (sorted keys)."""
        return json.dumps(self.tree, sort_keys=True)

    def identity(self) -> dict[str, Any]:
        """The resolved spec as a run's identity sees it: fields added after a run store
        was written (`ADDED_FIELDS`) left out while at their defaults, so older runs keep their
        hashes."""
        tree = copy.deepcopy(self.tree)
        for dotted, default in ADDED_FIELDS.items():
            *parents, leaf = dotted.split(".")
            section = tree
            for part in parents:
                section = section.get(part, {})
            if section.get(leaf) == default:
                del section[leaf]
            if len(parents) == 1 and tree.get(parents[0]) == {}:
                del tree[parents[0]]  # a section added later, all at its defaults
        return tree

    def hash(self) -> str:
        """A stable identity: SHA-256 of [`identity`][dcsim.ResolvedSpec.identity] and the
        dcsim version."""
        h = hashlib.sha256()
        h.update(_dcsim.__version__.encode())
        h.update(b"\0")
        h.update(json.dumps(self.identity(), sort_keys=True).encode())
        return h.hexdigest()[:16]

    def get(self, dotted: str) -> Any:
        """The value at a dotted path: `spec.get("workload.load")`."""
        cur: Any = self.tree
        for part in dotted.split("."):
            cur = cur[part]
        return cur


def resolve(
    spec: SpecLike, overrides: Mapping[str, Any] | None = None, *, strict: bool = False, warn: bool = True
) -> ResolvedSpec:
    """Validates `spec` (a TOML path, TOML text or a dict) with `overrides` applied
    (`{"workload.load": 0.7}`), and returns it with every default filled in, without running it.

    Raises [`SpecError`][dcsim.SpecError] naming the field, the value and what is allowed. A
    field the spec sets that has no effect on the run (listed in `ResolvedSpec.unused`) gives an
    [`UnusedFieldWarning`][dcsim.UnusedFieldWarning] (none with `warn=False`), or with
    `strict=True` a `SpecError`.
    """
    tree = build_tree(spec, overrides)
    check_values(tree)  # overrides and dicts too: NaN would reach the core as invalid JSON
    try:
        toml_text, json_text, unused, sections = _dcsim.resolve_spec_with_unused(json.dumps(tree))
    except _dcsim.InvalidSpec as e:
        _raise_invalid(e)
    resolved = ResolvedSpec(
        toml_text,
        json.loads(json_text),
        [UnusedField(*u) for u in unused],
        [UnusedField(*u) for u in sections],
    )
    # A resolved spec (every field set, as a run directory's spec.toml) sets every section's
    # fields by construction: one line says so instead of one per field.
    complete = set(flatten(resolved.tree)) <= set(flatten(tree))
    report_unused(resolved.unused, [u.message() for u in resolved.unused], strict=strict, warn=warn, complete=complete)
    return resolved


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` as ``{"a.b": 1}``: nested tables as dotted keys."""
    flat: dict[str, Any] = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            flat.update(flatten(v, f"{prefix}{k}."))
        else:
            flat[f"{prefix}{k}"] = v
    return flat
