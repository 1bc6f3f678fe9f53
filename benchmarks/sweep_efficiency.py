"""Parallel efficiency of a local sweep: 8 quick runs, first one after another in this
process, then as a sweep on N workers. Prints the ratio of the sweep's wall time to the
ideal (sum of run times / N); the target is <= 1.15 on 2 cores.

    .venv/bin/python benchmarks/sweep_efficiency.py [--jobs 2] [--flows 2500]
"""

import argparse
import os
import shutil
import tempfile
import time

import dcsim
from dcsim import sweep

SPEC = """
seed = 1
[workload]
flow_sizes = "websearch"
load = 0.6
flows = {flows}
[sweep]
seed = {{ range = [1, 8] }}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--flows", type=int, default=2500)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dcsim-eff-")
    try:
        path = os.path.join(tmp, "sweep.toml")
        with open(path, "w") as f:
            f.write(SPEC.format(flows=args.flows))
        plan = sweep.plan(path)
        times = []
        for r in plan.runs:
            t0 = time.monotonic()
            dcsim.run(r.spec.tree)
            times.append(time.monotonic() - t0)
        total = sum(times)
        t0 = time.monotonic()
        rep = sweep.run_sweep(plan, os.path.join(tmp, "out"), jobs=args.jobs, progress=False)
        wall = time.monotonic() - t0
        assert rep.ok and len(rep.completed) == len(plan.runs)
        ideal = total / args.jobs
        print(f"runs               {len(plan.runs)} x {args.flows} flows (144 hosts, web search, load 0.6)")
        print(f"sequential sum     {total:.2f} s  (per run {min(times):.2f}-{max(times):.2f} s)")
        print(f"sweep, {args.jobs} workers   {wall:.2f} s")
        print(f"ideal (sum / {args.jobs})    {ideal:.2f} s")
        print(f"ratio              {wall / ideal:.3f}  (target <= 1.15)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
