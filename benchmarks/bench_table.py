"""Issue 16's side-by-side table: dcsim against the pHost authors' simulator on the pHost
paper's default experiment (benchmarks/phost-default.toml: 144 hosts, 10/40 Gbps, 200 ns,
cut-through, spraying, 36 KB ports, all-to-all, load 0.6).

Each row is one `dcsim run` of this checkout, through the command line users run (a fresh
process: interpreter start-up, spec resolution, the run, writing flows.parquet), one row at a
time. "dcsim wall" is that process's wall time, the ratio the authors' seconds over it;
"events/s" is the run's events over its event loop's wall time (summary.json); "dcsim CPU" is
the process's user + system CPU time, the measure to compare on a shared machine. The
authors' column is quoted, not measured here: issue 16, measured 2026-11 by the project on
this machine kind, the authors' simulator (NetSys/simulator) built from its public
repository; CPU seconds where the machine was shared, wall seconds for the quiet pFabric
repeat.

    .venv/bin/python benchmarks/bench_table.py                    # every row (a few minutes)
    .venv/bin/python benchmarks/bench_table.py --rows phost-websearch,pfabric-imc10
    .venv/bin/python benchmarks/bench_table.py --threads 2        # also the partitioned model on 2 threads

With `--threads N` (N > 1) each row whose protocol runs in the partitioned model (pFabric,
pHost, Fastpass: docs/parallel.md) runs a second time with `engine.partitioned = true` on N threads, and
the table gains its wall time and ratio; the partitioned model's results differ slightly from
the sequential one's (docs/parallel.md), so the two runs are not the same simulation.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "phost-default.toml")
SOURCE = (
    "authors' column: issue 16, measured 2026-11 by the project on this machine kind, "
    "authors' simulator NetSys/simulator built from its public repository "
    "(CPU seconds, except the pFabric web-search row: wall seconds of a quiet repeat)"
)


#: The protocols of the table that run in the partitioned model (the registry's
#: `partitioned` flag): all three.
PARTITIONABLE = ("pfabric", "phost", "fastpass")


@dataclass(frozen=True)
class Row:
    """One experiment of the table: its name (for --rows), label, overrides of the spec, and
    the authors' simulator's time as issue 16 quotes it."""

    name: str
    label: str
    sets: tuple[str, ...]
    authors_s: float

    @property
    def partitionable(self) -> bool:
        """Whether its protocol runs in the partitioned model."""
        return any(s == f"transport.protocol={p}" for s in self.sets for p in PARTITIONABLE)


ROWS = (
    Row("pfabric-websearch", "pFabric, web search, 10k", ("transport.protocol=pfabric", "workload.flows=10000"), 57.4),
    Row("phost-websearch", "pHost, web search, 10k", ("transport.protocol=phost", "workload.flows=10000"), 50.7),
    Row(
        "fastpass-websearch",
        "Fastpass, web search, 10k",
        ("transport.protocol=fastpass", "workload.flows=10000"),
        52.0,
    ),
    Row(
        "pfabric-imc10",
        "pFabric, IMC10, 100k",
        ("transport.protocol=pfabric", "workload.flow_sizes=imc10", "workload.flows=100000"),
        68.7,
    ),
    Row(
        "phost-imc10",
        "pHost, IMC10, 100k",
        ("transport.protocol=phost", "workload.flow_sizes=imc10", "workload.flows=100000"),
        59.1,
    ),
    Row(
        "fastpass-imc10",
        "Fastpass, IMC10, 100k",
        ("transport.protocol=fastpass", "workload.flow_sizes=imc10", "workload.flows=100000"),
        58.9,
    ),
    Row(
        "pfabric-datamining",
        "pFabric, data mining, 10k",
        ("transport.protocol=pfabric", "workload.flow_sizes=datamining", "workload.flows=10000"),
        287.0,
    ),
)


def dcsim_command() -> str:
    """The `dcsim` command of the Python environment running this script."""
    here = os.path.join(os.path.dirname(sys.executable), "dcsim")
    return here if os.path.exists(here) else "dcsim"


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_row(row: Row, workdir: str, threads: int = 1) -> tuple[float, float, int, float]:
    """Runs `row` through `dcsim run` (with `threads` > 1: in the partitioned model on that many
    threads); returns (process wall seconds, process CPU seconds, events, event loop seconds)."""
    out = os.path.join(workdir, f"{row.name}-t{threads}")
    cmd = [dcsim_command(), "run", SPEC, "--out", out, "--force", "--quiet"]
    for s in row.sets:
        cmd += ["--set", s]
    if threads > 1:
        cmd += ["--set", "engine.partitioned=true", "--threads", str(threads)]
    cpu0 = children_cpu_seconds()
    t0 = time.monotonic()
    # The spec's [pfabric] settings draw an "unused fields" warning on the other protocols'
    # rows: the output is shown only if the run fails.
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    cpu = children_cpu_seconds() - cpu0
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return wall, cpu, int(summary["events"]), float(summary["wall_seconds"])


def main() -> None:
    names = [r.name for r in ROWS]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="", help=f"comma-separated rows to run (default: all): {', '.join(names)}")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="also run every row in the partitioned model on this many threads (default 1: not)",
    )
    args = ap.parse_args()
    if args.threads < 1:
        ap.error(f"--threads {args.threads}: give 1 or more")
    wanted = [n for n in args.rows.split(",") if n] or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        ap.error(f"unknown row(s) {', '.join(unknown)}; the rows are {', '.join(names)}")
    rows = [r for r in ROWS if r.name in wanted]
    t = args.threads
    head = "| experiment | authors' (s) | dcsim wall (s) | ratio | events/s | dcsim CPU (s) |"
    rule = "|---|---|---|---|---|---|"
    if t > 1:
        head += f" wall, partitioned, {t} threads (s) | ratio, {t} threads |"
        rule += "---|---|"
    print(head)
    print(rule)
    with tempfile.TemporaryDirectory(prefix="dcsim-bench-") as workdir:
        for row in rows:
            wall, cpu, events, loop_s = run_row(row, workdir)
            ratio = row.authors_s / wall
            rate = events / loop_s if loop_s > 0 else float("nan")
            cells = f"{row.authors_s:.1f} | {wall:.1f} | {ratio:.1f}x | {rate / 1e6:.1f} M | {cpu:.1f}"
            if t > 1 and row.partitionable:
                wall_t = run_row(row, workdir, t)[0]
                cells += f" | {wall_t:.1f} | {row.authors_s / wall_t:.1f}x"
            elif t > 1:
                cells += " | — | —"
            print(f"| {row.label} | {cells} |", flush=True)
    print(f"\n{SOURCE}.")


if __name__ == "__main__":
    main()
