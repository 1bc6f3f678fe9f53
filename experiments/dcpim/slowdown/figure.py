"""dcPIM SIGCOMM'22 Fig. 3: mean and 99th-percentile slowdown on the artifact's 144-host fabric,
IMC10 at loads 0.5-0.8 and web search and data mining at 0.6, dcPIM against Homa and pHost,
beside the numbers the authors' artifact publishes for dcPIM and Homa Aeolus.

Slowdown is computed as the artifact's parse scripts compute it
(`py/analysis/parse_load.py`, `parse_slowdown.py`, `get_oracle_fct`): FCT over an oracle of
payload bytes at 100 Gbps, plus 1.5 MTU and 2.5 headers of transmission and 8 × 0.65 µs of
propagation between racks (1 MTU, 2 headers and 4 × 0.65 µs within a rack); the 99th
percentile interpolates (`np.percentile`). dcsim's own slowdown (its exact ideal FCT,
`docs/metrics.md`) is kept beside it (`*_dcsim` columns)."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.dataset as ds

from dcsim import load
from dcsim import plot as dplot
from dcsim.experiments_support import schemes

TITLE = "dcPIM Fig. 3: slowdown on the artifact's 144-host fabric (100/400 Gbps)"
WORKLOADS = {"imc10": "IMC10", "websearch": "Web search", "datamining": "Data mining"}
PROTOCOLS = ["dcpim", "homa", "phost"]
#: With the non-numeric columns (workload, protocol), what identifies a row of data().
KEYS = ["load"]
#: Each row comes from one run (one row per run), so rows of runs done in an earlier sitting can stand
#: in for runs missing from the store (`dcsim reproduce --finished-only --reuse-runs`).
PER_RUN = True

#: The artifact's oracle FCT (`get_oracle_fct`): host rate, link delay, MTU and header bytes.
RATE_BPS = 100e9
LINK_DELAY_S = 0.65e-6
MTU, HEADER = 1500, 40
HOSTS_PER_RACK = 16

#: The artifact's published numbers (`published.csv` has their sources): dcPIM and Homa Aeolus.
PUBLISHED_IMC10 = {
    "dcPIM": {
        "mean": {0.5: 1.417, 0.6: 1.512, 0.7: 1.668, 0.8: 1.970},
        "p99": {0.5: 5.787, 0.6: 7.011, 0.7: 10.04, 0.8: 17.66},
    },
    "Homa Aeolus": {
        "mean": {0.5: 2.480, 0.6: 2.697, 0.7: 2.991, 0.8: 3.423},
        "p99": {0.5: 5.796, 0.6: 7.120, 0.7: 9.465, 0.8: 14.39},
    },
}
PUBLISHED_P99_AT_06 = {
    "dcPIM": {"IMC10": 7.113, "Web search": 8.176, "Data mining": 5.023},
    "Homa Aeolus": {"IMC10": 7.120, "Web search": 6.157, "Data mining": 3.065},
}


def oracle_fct_us(size_bytes: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The artifact's oracle FCT, µs: payload bytes at the host rate plus a fixed pipeline."""
    same_rack = (src // HOSTS_PER_RACK) == (dst // HOSTS_PER_RACK)
    hops = np.where(same_rack, 4, 8)
    fixed_bytes = np.where(same_rack, MTU + 2 * HEADER, 1.5 * MTU + 2.5 * HEADER)
    return (size_bytes * 8 / RATE_BPS + fixed_bytes * 8 / RATE_BPS + hops * LINK_DELAY_S) * 1e6


def data(runs: pd.DataFrame, store) -> pd.DataFrame:
    flows = (
        load(store, flows=True)
        .to_table(
            columns=["run", "src", "dst", "size_bytes", "fct_us", "slowdown"],
            filter=ds.field("run").isin(list(runs["run"])),
        )
        .to_pandas()
    )
    rows = []
    for _, r in runs.iterrows():
        f = flows[flows.run == r["run"]]
        artifact = f.fct_us.to_numpy() / oracle_fct_us(
            f.size_bytes.to_numpy(dtype=float), f.src.to_numpy(dtype=np.int64), f.dst.to_numpy(dtype=np.int64)
        )
        rows.append(
            {
                "workload": WORKLOADS[r["workload.flow_sizes"]],
                "protocol": schemes.name(r["transport.protocol"]),
                "load": r["workload.load"],
                "flows": len(f),
                "mean_slowdown": float(artifact.mean()),
                "p99_slowdown": float(np.percentile(artifact, 99)),
                "mean_slowdown_dcsim": float(f.slowdown.mean()),
                "p99_slowdown_dcsim": float(np.percentile(f.slowdown, 99)),
            }
        )
    return pd.DataFrame(rows)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=4.2, height=3.4)
    imc = d[d.workload == "IMC10"].sort_values("load")
    artifact_color = {"dcPIM": dplot.style("dcPIM").get("color"), "Homa Aeolus": dplot.style("Homa").get("color")}
    for ax, column, stat in ((axes[0], "mean_slowdown", "mean"), (axes[1], "p99_slowdown", "p99")):
        for proto in schemes.names(*PROTOCOLS):
            s = imc[imc.protocol == proto]
            dplot.line(ax, s.load, s, column, proto, label=f"{proto} (dcsim)")
        for proto, pub in PUBLISHED_IMC10.items():
            ax.plot(
                list(pub[stat]),
                list(pub[stat].values()),
                "--",
                marker="^",
                markerfacecolor="none",
                color=artifact_color[proto],
                label=f"{proto} (artifact)",
            )
        ax.set_xlabel("load")
        ax.set_ylabel(("mean" if stat == "mean" else "99th-percentile") + " slowdown")
        ax.set_title(f"IMC10, {stat} slowdown", fontsize=9)
        ax.set_xticks([0.5, 0.6, 0.7, 0.8])
        ax.legend(fontsize=6, frameon=False)
    ax = axes[2]
    at06 = d[d.load == 0.6]
    names = list(WORKLOADS.values())
    x = np.arange(len(names))
    bars = len(PROTOCOLS) + len(PUBLISHED_P99_AT_06)
    width = 0.8 / bars
    for i, proto in enumerate(schemes.names(*PROTOCOLS)):
        s = at06[at06.protocol == proto].set_index("workload").reindex(names)
        err = dplot.ci95(s, "p99_slowdown")
        ax.bar(
            x + i * width,
            s.p99_slowdown,
            width,
            yerr=None if err is None else np.nan_to_num(err),
            capsize=2,
            color=dplot.style(proto).get("color"),
            label=f"{proto} (dcsim)",
        )
    for j, (proto, by_workload) in enumerate(PUBLISHED_P99_AT_06.items()):
        ax.bar(
            x + (len(PROTOCOLS) + j) * width,
            [by_workload[w] for w in names],
            width,
            fill=False,
            hatch="//",
            edgecolor=artifact_color[proto],
            label=f"{proto} (artifact)",
        )
    ax.set_xticks(x + width * (bars - 1) / 2)
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("99th-percentile slowdown")
    ax.set_title("load 0.6, 99th-percentile slowdown", fontsize=9)
    ax.legend(fontsize=6, frameon=False)
    dplot.save(fig, path)


def compare(d: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rows: dict[tuple[Any, ...], dict[Any, Any]] = {
        (r["workload"], r["protocol"], r["load"]): r for r in d.to_dict("records")
    }
    nan = float("nan")

    def value(key: tuple[Any, ...], column: str) -> float:
        # NaN when the point's run is missing (a partial figure drawn from finished runs).
        return float(rows.get(key, {}).get(column, nan))

    for proto in ("dcPIM", "Homa"):
        for load_ in (0.5, 0.6, 0.7, 0.8):
            key = ("IMC10", proto, load_)
            out[f"IMC10, load {load_}: {proto} mean slowdown"] = value(key, "mean_slowdown")
            out[f"IMC10, load {load_}: {proto} p99 slowdown"] = value(key, "p99_slowdown")
        for w in ("Web search", "Data mining"):
            out[f"{w}, load 0.6: {proto} p99 slowdown"] = value((w, proto, 0.6), "p99_slowdown")
    return out
