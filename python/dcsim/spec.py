"""Run specs: load TOML (or take a dict), apply ``--set`` style overrides, and resolve them
in the Rust core, which fills every default and validates every field."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from . import _dcsim

SpecLike = Union[str, os.PathLike, Mapping[str, Any]]

#: Spec values that name something rather than a file.
_KEYWORDS = {"websearch", "datamining", "imc10", "bimodal", "all-to-all", "permutation", "incast", "fan-in"}


class SpecError(ValueError):
    """A spec cannot be run. ``field`` is the dotted path of the offending key (or the file)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def parse_value(text: str) -> Any:
    """Parses an override value as TOML (``0.7``, ``true``, ``"x"``, ``[1, 2]``), else a
    bare string (``dctcp``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_path(tree: Dict[str, Any], dotted: str, value: Any) -> None:
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


def load_tree(spec: SpecLike) -> tuple[Dict[str, Any], Optional[Path]]:
    """Returns the spec as a tree plus the directory relative paths resolve against."""
    if isinstance(spec, Mapping):
        return copy.deepcopy(dict(spec)), None
    text_or_path = os.fspath(spec)
    path = Path(text_or_path)
    looks_like_path = "\n" not in text_or_path and (
        text_or_path.endswith(".toml") or path.exists()
    )
    if looks_like_path:
        if not path.is_file():
            raise SpecError(f"spec file {text_or_path} does not exist", text_or_path)
        try:
            return tomllib.loads(path.read_text()), path.resolve().parent
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{text_or_path}: not valid TOML: {e}", text_or_path) from None
    try:
        return tomllib.loads(text_or_path), None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"spec text is not valid TOML: {e}", "<toml>") from None


def _absolutize(tree: Dict[str, Any], base: Optional[Path]) -> None:
    """Makes file paths in the workload absolute, relative to the spec file."""
    wl = tree.get("workload")
    if not isinstance(wl, dict):
        return

    def absolute(v: Any, trace: bool) -> Any:
        if isinstance(v, str) and v.lower() not in _KEYWORDS:
            p = Path(v)
            if not p.is_absolute():
                candidate = (base / p) if base is not None else p
                if candidate.exists() or trace and v.endswith(".csv"):
                    return str(candidate.resolve())
        return v

    for key in ("flow_sizes", "matrix"):
        if key in wl:
            wl[key] = absolute(wl[key], key == "matrix")
    if isinstance(wl.get("tenants"), list):
        wl["tenants"] = [absolute(v, False) for v in wl["tenants"]]


def build_tree(spec: SpecLike, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The spec tree with overrides applied and paths made absolute (not yet resolved)."""
    tree, base = load_tree(spec)
    tree.pop("sweep", None)  # sweep axes and scales are expanded by dcsim.sweep, not by the core
    tree.pop("scales", None)
    for key, value in (overrides or {}).items():
        set_path(tree, key, value)
    _absolutize(tree, base)
    return tree


def _raise_invalid(e: Exception) -> None:
    args = getattr(e, "args", ())
    message = args[0] if args else str(e)
    field = args[1] if len(args) > 1 else ""
    raise SpecError(str(message), str(field)) from None


# Fields added after run stores existed, with their defaults. A run's identity leaves each
# out while it holds its default, so runs stored before the field existed (which behaved
# exactly as the default does) keep their hash and are not simulated again.
ADDED_FIELDS: Dict[str, Any] = {
    "workload.stop_when": "all-finished",
    "pfabric.classify": "flow-size",
}


class ResolvedSpec:
    """A validated spec with every default filled in."""

    def __init__(self, toml_text: str, tree: Dict[str, Any]) -> None:
        self.toml = toml_text
        self.tree = tree

    @property
    def json(self) -> str:
        return json.dumps(self.tree, sort_keys=True)

    def identity(self) -> Dict[str, Any]:
        """The resolved spec as a run's identity sees it: fields in :data:`ADDED_FIELDS` left
        out while at their defaults."""
        tree = copy.deepcopy(self.tree)
        for dotted, default in ADDED_FIELDS.items():
            *parents, leaf = dotted.split(".")
            section = tree
            for part in parents:
                section = section.get(part, {})
            if section.get(leaf) == default:
                del section[leaf]
        return tree

    def hash(self) -> str:
        """A stable identity: SHA-256 of :meth:`identity` and the dcsim version."""
        h = hashlib.sha256()
        h.update(_dcsim.__version__.encode())
        h.update(b"\0")
        h.update(json.dumps(self.identity(), sort_keys=True).encode())
        return h.hexdigest()[:16]

    def get(self, dotted: str) -> Any:
        cur: Any = self.tree
        for part in dotted.split("."):
            cur = cur[part]
        return cur


def resolve(spec: SpecLike, overrides: Optional[Mapping[str, Any]] = None) -> ResolvedSpec:
    """Validates ``spec`` (a TOML path, TOML text or a dict) with ``overrides`` applied.

    Raises :class:`SpecError` naming the field, the value and what is allowed.
    """
    tree = build_tree(spec, overrides)
    try:
        toml_text, json_text = _dcsim.resolve_spec(json.dumps(tree))
    except _dcsim.InvalidSpec as e:
        _raise_invalid(e)
        raise  # unreachable
    return ResolvedSpec(toml_text, json.loads(json_text))
