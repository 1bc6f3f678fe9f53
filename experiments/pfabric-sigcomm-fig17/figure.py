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
- **Paper-scale check at 80 % load (measured; 100,000 flows per run, the paper's count).** Mean
  normalized FCT: Ideal 1.51, pFabric 1.75, Q=8 2.24, Q=4 optimized 2.49, Q=4 equal split
  32.6; (0,100KB] 99th percentile: pFabric 1.43, Q=8 3.56, Q=4 3.55, Q=4 equal split 3.77.
  So at the paper's scale: optimized thresholds beat equal split by 92 % (paper: more than
  30 %), more queues do better (Q=8 < Q=4), and 8 queues' short-flow tail is 2.5× pFabric's
  (paper: a significant increase). Q=8 is 28 % above pFabric on average (paper: "close").
  The full paper-scale sweep (48 runs) did not finish here; `dcsim reproduce
  pfabric-sigcomm-fig17 --scale paper` resumes it.
- **Few-queue runs collapse at high load at paper scale.** With 2 queues the mean is 2.03 at
  50 % load, 4.55 at 60 % and 21.8 at 70 %; with 4 queues and equal split 32.6 at 80 %. The
  paper's Fig. 17 axes end at 5, so its runs did not do this. Measured mechanism: the
  low-priority FIFO queue holds most of the bytes (flows above 1.1-1.2 MB with two queues, above
  1.46 MB with equal split), and MinTCP flows sharing it lose packets to each other rather
  than to a priority rule; with a fixed 45 µs RTO and no backoff each flow times out hundreds
  to thousands of times (2-queue run at 70 %: 1,300 → 6,000 → 9,800 timeouts per
  low-priority flow from the first to the last third of the run, slowdown 15 → 69 → 139), the
  retransmissions waste capacity, the backlog grows and the collapse feeds itself. Short runs
  never build that backlog (quick scale: Q=2 1.65, equal split 1.54 at 80 %). Why the paper's
  ns-2 runs stayed stable is not found. Tested and not the cause on its own: mapping packets to
  queues by remaining size, as the authors' `calPrio` does (reference §2.6), instead of by
  flow size — at 20,000 flows and 70 % load it moves the 2-queue mean from 2.73 to 2.35.
- **Quick scale: optimized vs equal split only 10 %.** Equal split puts flows of 16, 48 and
  1,000 packets at the queue boundaries (23 KB, 71 KB, 1.46 MB): the lowest queue holds the
  25 % of flows above 1.46 MB, almost all the bytes, FIFO. The M/G/1 model predicts 53 % better
  with optimized thresholds at 80 % load (FCTn 1.27 vs 2.71), but it treats each queue as
  FIFO by flow; MinTCP flows in one queue share it (processor sharing), which costs a mix of
  sizes much less, so short runs see only part of the gap; at paper scale the collapse above
  makes it larger than the paper's.
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
