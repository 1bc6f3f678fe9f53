"""Issue 15 item 2 on the Python side: Parquet trace files, pandas DataFrames and pyarrow
Tables as traces, with the core's column and value checks and errors that name the table's
row (the CSV side is in crates/dcsim/tests/it/traces.rs)."""

import json
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dcsim
from conftest import dcsim_cli
from dcsim import trace

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

STAR = {"topology": {"kind": "star", "hosts": 4}}

#: Three flows, out of start order, one with a deadline relative to its start.
FLOWS = pd.DataFrame(
    {
        "id": [10, 11, 12],
        "src": [0, 1, 2],
        "dst": [1, 2, 3],
        "size_bytes": [3000, 1000, 2000],
        "start_us": [2.5, 0.0, 1.0],
        "deadline_us": [None, 500.0, None],
    }
)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Converted traces go to a directory of the test's own."""
    monkeypatch.setenv("DCSIM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _flows(result: dcsim.Result) -> list[tuple]:
    t = result.flows
    return list(zip(t["id"], t["start_us"], t["deadline_us"].fillna(-1)))


def test_a_dataframe_or_arrow_table_is_a_trace():
    """Issue 15 item 2: the Python API takes a DataFrame or an Arrow table, as `trace=` or as
    the spec's `workload.matrix`, and runs every row by name and unit."""
    by_keyword = dcsim.run(STAR, trace=FLOWS)
    assert _flows(by_keyword) == [(11, 0.0, 500.0), (12, 1.0, -1), (10, 2.5, -1)]
    in_spec = dcsim.run({**STAR, "workload": {"matrix": pa.Table.from_pandas(FLOWS)}})
    assert _flows(in_spec) == _flows(by_keyword)
    # The same flows in seconds, columns in another order.
    seconds = FLOWS[["start_us", "dst", "id", "src", "size_bytes"]].assign(start_us=FLOWS["start_us"] / 1e6)
    seconds = seconds.rename(columns={"start_us": "start_s"})
    assert [f[:2] for f in _flows(dcsim.run(STAR, trace=seconds))] == [f[:2] for f in _flows(by_keyword)]


def test_a_parquet_trace_file_runs_like_its_csv(tmp_path):
    """Issue 15 item 2: a Parquet trace failed with "stream did not contain valid UTF-8"; now
    `dcsim run` reads it (relative to the spec file, like a CSV) and runs the same flows."""
    pq.write_table(pa.Table.from_pandas(FLOWS, preserve_index=False), tmp_path / "t.parquet")
    FLOWS.to_csv(tmp_path / "t.csv", index=False)
    for name in ("t.parquet", "t.csv"):
        spec = tmp_path / f"{name}.toml"
        spec.write_text(f'[topology]\nkind = "star"\nhosts = 4\n[workload]\nmatrix = "{name}"\n')
        p = dcsim_cli("run", spec, "--out", tmp_path / f"run-{name}", cwd="/")
        assert p.returncode == 0, p.stderr
    parquet, csv = (dcsim.Result.read(tmp_path / f"run-{n}") for n in ("t.parquet", "t.csv"))
    assert parquet.summary["flows_total"] == 3
    assert _flows(parquet) == _flows(csv)
    # The resolved spec names the CSV form, in the cache, which runs again as it is.
    matrix = tomllib.loads(parquet.spec_toml)["workload"]["matrix"]
    assert matrix.startswith(str(trace.cache_dir())) and matrix.endswith(".csv")
    assert _flows(dcsim.run(parquet.spec_toml)) == _flows(csv)


def test_table_errors_name_the_table_and_its_row(tmp_path):
    """Issue 15 item 2: the core's checks apply to tables too (unique ids, names, ranges), and
    the errors name the DataFrame's row (from 0) or the Parquet file, not the cache's CSV."""
    with pytest.raises(dcsim.SpecError) as e:
        dcsim.run(STAR, trace=FLOWS.assign(id=[10, 11, 10]))
    assert "the trace DataFrame, row 2: id 10 is already used on row 0" in str(e.value)
    assert e.value.field == "workload.matrix"
    with pytest.raises(dcsim.SpecError, match=r"the trace DataFrame, row 1: dst 9 is out of range"):
        dcsim.run(STAR, trace=FLOWS.assign(dst=[1, 9, 3]))
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pandas(FLOWS.rename(columns={"start_us": "start_time_us"})), path)
    with pytest.raises(dcsim.SpecError) as e:
        dcsim.resolve(STAR, {"workload.matrix": str(path)})
    message = str(e.value)
    assert f"{path}: unknown column `start_time_us` (did you mean `start_us`?)" in message
    assert "start_s/start_ms/start_us/start_ns" in message and str(trace.cache_dir()) not in message
    with pytest.raises(dcsim.SpecError, match=r"column `start_us` holds duration\[ns\] values"):
        dcsim.run(STAR, trace=FLOWS.assign(start_us=pd.to_timedelta(FLOWS["start_us"], unit="us")))
    with pytest.raises(dcsim.SpecError, match=r"cannot read trace file .*missing.parquet: no such file"):
        dcsim.resolve(STAR, {"workload.matrix": str(tmp_path / "missing.parquet")})


def test_a_converted_trace_is_named_by_its_content(cache):
    """The CSV form of a table is written once, named by its content: the same trace gives the
    same run identity, another trace another."""
    a = dcsim.resolve(STAR, {"workload.matrix": FLOWS})
    b = dcsim.resolve(STAR, {"workload.matrix": pa.Table.from_pandas(FLOWS, preserve_index=False)})
    assert a.hash() == b.hash()
    assert len(list((cache / "traces").iterdir())) == 1
    c = dcsim.resolve(STAR, {"workload.matrix": FLOWS.assign(size_bytes=[3000, 1000, 2001])})
    assert c.hash() != a.hash()
    assert json.loads(a.json)["workload"]["flows"] == 0, "a trace runs every row"
