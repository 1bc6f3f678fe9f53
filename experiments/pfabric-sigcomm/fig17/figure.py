"""pFabric SIGCOMM'13 Fig. 17: pFabric over 2, 4, 8 priority queues vs pFabric vs Ideal."""

from pathlib import Path

import pandas as pd

from dcsim import plot as dplot

TITLE = "pFabric SIGCOMM'13 Fig. 17: a few priority queues vs pFabric (web search, 144 hosts)"
SCHEMES = ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "Q=4 (Equal split)", "pFabric", "Ideal"]
STYLE = {"Q=2 (Optimized)": ("#9edae5", "v"), "Q=4 (Optimized)": ("#17becf", "s"), "Q=8 (Optimized)": ("#1f77b4", "D"), "Q=4 (Equal split)": ("#7f7f7f", "x")}


def scheme(r) -> str:
    if r["transport.protocol"] == "ideal":
        return "Ideal"
    q = int(r["pfabric.queues"])
    if q == 0:
        return "pFabric"
    return f"Q={q} ({'Optimized' if r['pfabric.threshold_method'] == 'mg1' else 'Equal split'})"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {
            "scheme": scheme(r),
            "load": r["workload.load"],
            "mean_nfct": r["mean_slowdown"],
            "small_p99_nfct": r["bins.0-100KB.p99_slowdown"],
            "small_mean_nfct": r["bins.0-100KB.mean_slowdown"],
            "large_mean_nfct": r["bins.10MB+.mean_slowdown"],
        }
        for _, r in runs.iterrows()
    ]
    d = pd.DataFrame(rows)
    d["scheme"] = pd.Categorical(d["scheme"], SCHEMES, ordered=True)
    return d.sort_values(["scheme", "load"]).reset_index(drop=True)


def _style(s):
    if s in STYLE:
        color, marker = STYLE[s]
        return {"label": s, "color": color, "marker": marker}
    return dplot.style(s)


def plot(d: pd.DataFrame, path: Path) -> None:
    fig, axes = dplot.grid(3, TITLE, width_per_panel=3.6, height=3.0)
    panels = [
        ("mean_nfct", "(a) Overall: average", ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "pFabric", "Ideal"]),
        ("small_p99_nfct", "(b) (0, 100KB]: 99th percentile", ["Q=2 (Optimized)", "Q=4 (Optimized)", "Q=8 (Optimized)", "pFabric"]),
        ("mean_nfct", "(c) Q=4: optimized vs equal split", ["Q=4 (Optimized)", "Q=4 (Equal split)"]),
    ]
    for ax, (col, title, schemes) in zip(axes, panels):
        for s in schemes:
            ser = d[d.scheme == s]
            ax.plot(ser.load, ser[col], **_style(s))
        ax.set_title(title)
        ax.set_xlabel("load")
        ax.set_ylabel("normalized FCT")
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    dplot.save(fig, path)


def compare(d: pd.DataFrame):
    def v(s, load, col="mean_nfct"):
        x = d[(d.scheme == s) & ((d.load - load).abs() < 1e-9)][col]
        return float(x.iloc[0]) if len(x) else float("nan")

    gain = 1 - v("Q=4 (Optimized)", 0.8) / v("Q=4 (Equal split)", 0.8)
    return [
        {"metric": "Q=4 optimized vs equal split: average FCT reduction at 80 % load", "published": "> 30 %", "ours": f"{gain * 100:.0f} %", "note": "§6.2"},
        {"metric": "Q=8 / pFabric, overall average at 80 % load", "published": "close to 1", "ours": v("Q=8 (Optimized)", 0.8) / v("pFabric", 0.8), "note": "§6.2: 'close to pFabric's performance with 8 priority queues'"},
        {"metric": "Q=8 / pFabric, (0,100KB] 99th percentile at 80 % load", "published": "> 1 (significant increase)", "ours": v("Q=8 (Optimized)", 0.8, "small_p99_nfct") / v("pFabric", 0.8, "small_p99_nfct"), "note": "§6.2: high-priority queue runs out of buffer in bursts"},
        {"metric": "overall average at 80 % load: Q=2 > Q=4 > Q=8", "published": "yes", "ours": "yes" if v("Q=2 (Optimized)", 0.8) > v("Q=4 (Optimized)", 0.8) > v("Q=8 (Optimized)", 0.8) else "no", "note": "§6.2: 'improves as we increase the number of priority queues'"},
    ]


NOTES = """\
- **Paper scale** (`--scale paper`: 100,000 flows per run; as in the authors' ns-2 scripts a
  run ends at the 100,000th completion and only finished flows count, reference §1.3). At 80 %
  load the mean normalized FCT is Ideal 1.47, pFabric 1.68, Q=8 2.04, Q=4 2.15, Q=2 11.1
  and Q=4 equal split 10.1; the (0,100KB] 99th percentile is pFabric 1.43 and Q=8 3.57.
  What the paper claims holds: more queues do better, optimized thresholds beat equal split
  (79 %, paper: more than 30 %), Q=8 comes closest to pFabric and its short-flow tail is
  well above pFabric's. What does not: with 2 queues (and with 4 queues split equally) the
  mean runs off the paper's axes (they end at 5) from 70 % load on.
- **Why few-queue runs fall behind at high load, and the authors' code.** Measured mechanism:
  the low-priority FIFO holds most of the bytes (flows above 1.1-1.2 MB with two queues), and
  the MinTCP flows sharing it lose packets to each other, not to a priority rule; with a fixed
  45 µs RTO and no backoff each times out hundreds to thousands of times (2 queues, 70 %, all
  flows counted: 1,300 → 6,000 → 9,800 timeouts per low-priority flow from the first to the
  last third of the run), the resent packets waste capacity and a backlog of long flows grows.
  Two conventions of the authors' ns-2 code, each measured here at paper scale, make most of
  the difference (2 queues, 70 % load, mean normalized FCT):

  | how the run ends | queue of a packet | Q=2 at 70 % |
  |---|---|---|
  | every flow finishes | by flow size | 21.8 |
  | at the 100,000th completion (`stop_when = "n-finished"`) | by flow size | 8.48 |
  | every flow finishes | by remaining bytes (`classify = "remaining"`) | 5.75 |
  | at the 100,000th completion | by remaining bytes | 3.76 |

  Ending at the 100,000th completion leaves out the backlog the run has built (10,759 flows
  still open in the 8.48 run). Mapping each packet by its flow's remaining bytes, as the code's
  `calPrio` does (reference §2.6), moves a long flow's last 1.1-1.2 MB into the high queue, so
  it finishes instead of lingering in the low FIFO. With both, at 80 %: Q=2 5.60, Q=4 2.22,
  Q=8 2.09, Q=4 equal split 4.76 — inside the paper's axes except Q=2 just above, optimized
  thresholds 53 % better than equal split (paper: more than 30 %), Q=8 1.24× pFabric on
  average and 2.5× on the short-flow tail (3.62 vs 1.43). The sweep keeps mapping by flow size,
  since that is what the paper describes ("flow size thresholds" from the §6.1 model);
  `pfabric.classify = "remaining"` gives the code's behaviour.
- **Quick scale: optimized vs equal split only 10 %.** Equal split puts flows of 16, 48 and
  1,000 packets at the queue boundaries (23 KB, 71 KB, 1.46 MB): the lowest queue holds the
  25 % of flows above 1.46 MB, almost all the bytes, FIFO. The M/G/1 model predicts 53 % better
  with optimized thresholds at 80 % load (FCTn 1.27 vs 2.71), but it treats each queue as
  FIFO by flow; MinTCP flows in one queue share it (processor sharing), which costs a mix of
  sizes much less, so short runs see only part of the gap; at paper scale (79 %) the backlog
  the equal split builds in its lowest queue (above) makes it larger than the paper's.
- **Thresholds.** The optimized thresholds are the paper's printed M/G/1 formula; with the
  base RTT in its normalization (Fig. 16 notes) they would be larger at high load (two queues
  at 80 %: 1.76 MB instead of 1.36 MB).
- **End hosts.** Every scheme runs pFabric's MinTCP (window cap 23, RTO 45 µs; see README):
  the paper changes only the switches. With a window cap derived from the 225 KB buffer instead,
  the few-queue schemes' short flows time out at every load (their NIC's shared pool fills with
  one host's elephants) and no number of queues comes close to pFabric.
- **8 queues' short-flow tail** is 1.4× pFabric's at 80 % load at quick scale and 2.5× at paper
  scale: with 8 × 15 KB reserved, only 105 KB of the 225 KB are shared, and the high-priority
  queue of a busy port runs out in bursts — the paper's explanation of the same effect.
"""
