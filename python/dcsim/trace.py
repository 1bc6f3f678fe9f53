"""Traces the core does not read itself: Parquet files, pandas DataFrames and pyarrow Tables.

The core reads CSV traces whose header names the columns (docs/spec.md, "Trace files"). A
trace in another form is written once as such a CSV in dcsim's cache directory, named by a
digest of its content, and the spec's ``workload.matrix`` then names that file: the same
content gives the same run identity, and a sweep's workers read it like any CSV trace. The
core checks the columns and values; the errors it reports about a converted file are
rewritten here to name the original (a Parquet path, or the table and its row).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from .result import atomic_write_bytes
from .spec import SpecError

FIELD = "workload.matrix"

#: Converted CSV path → what the user gave (a Parquet path, or "the trace table"), for errors.
_ORIGINS: dict[str, str] = {}


def cache_dir() -> Path:
    """Where dcsim keeps files it derives: ``$DCSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/dcsim``,
    else ``~/.cache/dcsim``."""
    if os.environ.get("DCSIM_CACHE_DIR"):
        return Path(os.environ["DCSIM_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dcsim"


def is_table(value: Any) -> bool:
    """True for a pandas DataFrame or a pyarrow Table."""
    if isinstance(value, pa.Table):
        return True
    import pandas as pd

    return isinstance(value, pd.DataFrame)


def is_parquet_path(value: Any) -> bool:
    """True for a path that names a Parquet file: by its ``.parquet`` name, or by the magic
    bytes a Parquet file starts with."""
    if not isinstance(value, (str, os.PathLike)):
        return False
    path = Path(value)
    if path.suffix.lower() == ".parquet":
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except (OSError, ValueError):  # not a readable file (ValueError: a NUL in the name)
        return False


def _read_table(value: Any) -> tuple[pa.Table, str]:
    """The trace as an Arrow table, and how errors name it."""
    if isinstance(value, pa.Table):
        return value, "the trace table"
    if is_table(value):
        return pa.Table.from_pandas(value, preserve_index=False), "the trace DataFrame"
    path = os.fspath(value)
    try:
        return pq.read_table(path), path
    except FileNotFoundError:
        raise SpecError(f"`{FIELD}`: cannot read trace file {path}: no such file", FIELD) from None
    except (OSError, ValueError, pa.ArrowException) as e:
        raise SpecError(f"`{FIELD}`: cannot read trace file {path} as Parquet: {e}", FIELD) from None


def to_csv_path(value: Any) -> str:
    """Writes the trace ``value`` (a Parquet path, a DataFrame or an Arrow table) as a CSV
    trace in the cache, unless it is there already, and returns the CSV's path.

    Raises :class:`SpecError` for a column that does not hold numbers; the core checks the
    names and values when it reads the CSV."""
    table, origin = _read_table(value)
    for name, column_type in zip(table.column_names, table.schema.types):
        if not (pa.types.is_integer(column_type) or pa.types.is_floating(column_type) or pa.types.is_null(column_type)):
            raise SpecError(
                f"`{FIELD}`: {origin}: column `{name}` holds {column_type} values; trace columns hold numbers "
                "(integers or floats, times in the unit the column's name gives)",
                FIELD,
            )
    buffer = io.BytesIO()
    pa_csv.write_csv(table, buffer)  # floats written in their shortest exact form
    data = buffer.getvalue()
    path = cache_dir() / "traces" / f"{hashlib.sha256(data).hexdigest()[:24]}.csv"
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
        except OSError as e:
            raise SpecError(
                f"`{FIELD}`: cannot write the CSV form of {origin} to {path}: {e.strerror or e} "
                "(set DCSIM_CACHE_DIR to a writable directory)",
                FIELD,
            ) from None
    _ORIGINS[str(path)] = origin
    return str(path)


def convert_in_tree(tree: dict[str, Any]) -> None:
    """Replaces a Parquet path, DataFrame or Arrow table in the tree's ``workload.matrix``
    with the path of its CSV form (see :func:`to_csv_path`)."""
    workload = tree.get("workload")
    if not isinstance(workload, dict) or "matrix" not in workload:
        return
    matrix = workload["matrix"]
    if is_table(matrix) or is_parquet_path(matrix):
        workload["matrix"] = to_csv_path(matrix)


def name_originals(message: str) -> str:
    """A core error message about a converted trace, rewritten to name what the user gave: the
    Parquet file or table instead of the CSV, and for a data line its row (counted from 0:
    line 2 of the CSV is row 0)."""
    for path, origin in _ORIGINS.items():
        if path not in message:
            continue

        def row(m: re.Match[str], origin: str = origin) -> str:
            line = int(m.group(1))
            return origin if line == 1 else f"{origin}, row {line - 2}"  # line 1: the header

        message = re.sub(re.escape(path) + r", line (\d+)", row, message)
        message = re.sub(r"\bon line (\d+)", lambda m: f"on row {int(m.group(1)) - 2}", message)
        message = message.replace(path, origin)
    return message
