"""PASE (SIGCOMM'14): which of the paper's claims hold across a reasonable range of each value
the available text does not give (base rate, re-arbitration interval, delegation period, ECN
threshold K, RTO, number of queues, control packet size, pruning depth, request timeout).

Run: ``python -m dcsim.experiments_support.pase_sensitivity [--flows N] [--jobs J]``. It writes
``docs/figures/pase-sensitivity.csv`` (one row per parameter value and claim: the two AFCTs or
overheads compared and their ratio) and ``docs/pase-sensitivity.md`` (the table
``docs/model.md`` summarises). Each claim is a ratio that is below 1 when the claim holds.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import dcsim
from dcsim.reproduce import experiments_dir, model_commit, write_data_csv

HERE = experiments_dir() / "pase"
ROOT = HERE.parent.parent

#: The scenarios the claims are measured in: a setting file and the overrides on it.
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "left-right 0.8": ("setting.toml", {"workload.load": 0.8}),
    "intra-rack 0.8": ("setting-intra-rack.toml", {"workload.load": 0.8}),
    "intra-rack 0.9": ("setting-intra-rack.toml", {"workload.load": 0.9}),
    "intra-rack [100,500] KB 0.8": (
        "setting-intra-rack.toml",
        {"workload.load": 0.8, "workload.flow_sizes": {"uniform": [100000, 500000]}},
    ),
}

PASE = {"transport.protocol": "pase"}
#: The claims: (name, the paper's figure, scenario, the run that should be better, the run it
#: is compared with, the summary value compared).
CLAIMS: list[tuple[str, str, str, dict[str, Any], dict[str, Any], str]] = [
    (
        "PASE beats DCTCP, left-right",
        "Fig. 9",
        "left-right 0.8",
        PASE,
        {"transport.protocol": "dctcp"},
        "mean_fct_us",
    ),
    (
        "end-to-end beats local arbitration",
        "Fig. 12a",
        "left-right 0.8",
        PASE,
        {**PASE, "pase.arbitration": "local"},
        "mean_fct_us",
    ),
    (
        "optimisations cut arbitration messages",
        "Fig. 11b",
        "left-right 0.8",
        PASE,
        {**PASE, "pase.pruning_queue": 0, "pase.delegation": False},
        "transport_counters.arbitration_switch_messages",
    ),
    (
        "optimisations cut AFCT",
        "Fig. 11a",
        "left-right 0.8",
        PASE,
        {**PASE, "pase.pruning_queue": 0, "pase.delegation": False},
        "mean_fct_us",
    ),
    (
        "reference rate beats PASE-DCTCP",
        "Fig. 13a",
        "intra-rack [100,500] KB 0.8",
        PASE,
        {**PASE, "pase.rate_control": "dctcp"},
        "mean_fct_us",
    ),
    (
        "probing helps",
        "§4.3.2",
        "intra-rack 0.9",
        PASE,
        {**PASE, "pase.probing": False},
        "mean_fct_us",
    ),
    (
        "PASE beats pFabric intra-rack",
        "Fig. 10c",
        "intra-rack 0.8",
        PASE,
        {"transport.protocol": "pfabric"},
        "mean_fct_us",
    ),
]

#: The result classes of its runs (`dcsim.reproduce.result_class`: no claim or parameter sets
#: `pase.order`, so PASE's are SRPT's), which tell when a change of results makes the table
#: older than the model (`dcsim.reproduce.figure_provenance`).
PROTOCOLS = frozenset(side["transport.protocol"] for claim in CLAIMS for side in (claim[3], claim[4]))
assert not any("pase.order" in side for claim in CLAIMS for side in (claim[3], claim[4]))

#: The values the paper does not give, each tried at a low and a high value around dcsim's
#: default (the default itself is the first row).
PARAMETERS: list[tuple[str, list[Any]]] = [
    ("pase.base_rate_pkts_per_rtt", [0.25, 4.0]),
    ("pase.rearbitrate_rtts", [0.5, 2.0]),
    ("pase.request_timeout_rtts", [2.0, 32.0]),
    ("pase.delegation_period_rtts", [2.0, 50.0]),
    ("dctcp.marking_threshold_bytes", [15000, 60000]),
    ("transport.min_rto_us", [1000, 50000]),
    ("pase.queues", [4, 6]),
    ("pase.control_bytes", [80, 200]),
    ("pase.pruning_queue", [2, 6]),
]


def _value(summary: dict[str, Any], dotted: str) -> float:
    v: Any = summary
    for part in dotted.split("."):
        v = v[part]
    return float(v)


def _run(job: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    setting, overrides = job
    return dcsim.run(setting, overrides=overrides).summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, default=1000, help="flows per run (1000)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (2)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per run (3)")
    ap.add_argument("--settings", type=Path, default=HERE, help="folder of the setting files (experiments/pase)")
    args = ap.parse_args()
    rows_of: list[tuple[str, Any]] = [("default", None)] + [(p, v) for p, vs in PARAMETERS for v in vs]
    jobs: dict[str, tuple[str, dict[str, Any]]] = {}
    plan = []
    for param, value in rows_of:
        for claim in CLAIMS:
            name, _fig, scenario, better, worse, _metric = claim
            setting, base = SCENARIOS[scenario]
            keys = []
            for side in (better, worse):
                o = {**base, **side, "workload.flows": args.flows}
                # PASE's fields change PASE runs only; the others change every run.
                if param != "default" and (not param.startswith("pase.") or o["transport.protocol"] == "pase"):
                    o[param] = value
                    if param == "pase.queues" and o.get("pase.pruning_queue", 1) != 0:
                        o["pase.pruning_queue"] = int(value) // 2
                key = repr((setting, sorted(o.items(), key=lambda kv: kv[0])))
                jobs.setdefault(key, (str(args.settings / setting), o))
                keys.append(key)
            plan.append((param, value, claim, keys))
    seeds = list(range(1, args.seeds + 1))
    runs = [(k, seed) for k in jobs for seed in seeds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = pool.map(_run, [(jobs[k][0], {**jobs[k][1], "seed": seed}) for k, seed in runs])
        summaries = dict(zip(runs, done))
    out_rows: list[dict[str, Any]] = []
    for param, value, (name, fig, scenario, _b, _w, metric), (kb, kw) in plan:
        b = [_value(summaries[(kb, seed)], metric) for seed in seeds]
        w = [_value(summaries[(kw, seed)], metric) for seed in seeds]
        per_seed = [x / y for x, y in zip(b, w)]
        out_rows.append(
            {
                "parameter": param,
                "value": "" if value is None else value,
                "claim": name,
                "figure": fig,
                "scenario": scenario,
                "metric": metric,
                "better": sum(b) / len(b),
                "compared_with": sum(w) / len(w),
                "ratio": sum(b) / sum(w),
                "ratio_min": min(per_seed),
                "ratio_max": max(per_seed),
            }
        )
    import pandas as pd

    # The same provenance lines as a reproduction's CSV: which model made the numbers, so a
    # later change of results shows this table as older than the model (tests/test_docs.py).
    commit = model_commit()
    produced = {
        "reproduction": "pase-sensitivity",
        "scale": f"quick ({args.flows} flows per run)",
        "seeds": " ".join(map(str, seeds)),
        "dcsim": dcsim.__version__,
        "commit": commit,
    }
    write_data_csv(ROOT / "docs" / "figures" / "pase-sensitivity.csv", pd.DataFrame(out_rows), produced, None)
    claims = [c[0] for c in CLAIMS]
    lines = [
        "# PASE: sensitivity of the paper's claims to the values it does not give",
        "",
        f"Generated by `python -m dcsim.experiments_support.pase_sensitivity --flows {args.flows} "
        f"--seeds {args.seeds}` (dcsim {dcsim.__version__}, commit {commit}); "
        "data: `docs/figures/pase-sensitivity.csv`. "
        f"Quick scale: {args.flows} flows per run, seeds 1-{args.seeds}. Each cell compares the "
        "claim's two runs (their values summed over the seeds): how much lower the run the paper "
        "says is better came out (negative: lower, as claimed); ✓ the claim holds on every seed, "
        "✗ on none, ~ on some. Settings: `experiments/pase/setting*.toml`.",
        "",
        "| parameter | value | "
        + " | ".join(f"{c} ({next(x[1] for x in CLAIMS if x[0] == c)})" for c in claims)
        + " |",
        "|---|---|" + "---|" * len(claims),
    ]
    for param, value in rows_of:
        cells = []
        for c in claims:
            r = next(
                x
                for x in out_rows
                if x["parameter"] == param and x["value"] == ("" if value is None else value) and x["claim"] == c
            )
            mark = "✓" if r["ratio_max"] < 1 else "✗" if r["ratio_min"] >= 1 else "~"
            cells.append(f"{(r['ratio'] - 1) * 100:+.0f} % {mark}")
        lines.append(f"| `{param}` | {'' if value is None else value} | " + " | ".join(cells) + " |")
    held = {c: sum(1 for x in out_rows if x["claim"] == c and x["ratio_max"] < 1) for c in claims}
    lines += [
        "",
        "Rows where each claim holds on every seed: "
        + ", ".join(f"{c}: {n}/{len(rows_of)}" for c, n in held.items())
        + ".",
        "",
    ]
    (ROOT / "docs" / "pase-sensitivity.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
