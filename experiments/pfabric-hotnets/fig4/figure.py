"""pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import pfabric_hotnets as hn

TITLE = "pFabric HotNets'12 Fig. 4: web search, normalized FCT by flow size"
SWEEP = "../fig2/sweep.toml"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = hn.data(runs)
    return d[(d.workload == "websearch") & (d.bin != "all")].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    hn.plot_breakdown(d, "websearch", TITLE, path)


def compare(d: pd.DataFrame):
    w = "websearch"
    rows = [
        {"metric": f"{s} (0,100KB] 99th percentile at load 0.8", "published": pub, "ours": hn.value(d, w, "0-100KB", s, 0.8, "p99_nfct"), "note": "§3"}
        for s, pub in (("LineRate+pFabric", 1.75), ("DCTCP", 16.97), ("TCP", 66.03))
    ]
    for base in ("TCP", "DCTCP"):
        slow = hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8) / hn.value(d, w, "10MB+", base, 0.8) - 1
        rows.append({"metric": f"MinTCP+pFabric (10MB,∞) average vs {base}, load 0.8", "published": (0.20, 0.28), "ours": slow, "note": "§3: '~20-28% slowdown compared to TCP and DCTCP' (as a fraction)"})
    lr = hn.value(d, w, "10MB+", "LineRate+pFabric", 0.8) / hn.value(d, w, "10MB+", "MinTCP+pFabric", 0.8)
    rows.append({"metric": "LineRate+pFabric / MinTCP+pFabric, (10MB,∞) average at load 0.8", "published": "> 1", "ours": lr, "note": "§3: 'MinTCP+pFabric is much better than LineRate+pFabric for the large flows at high load'"})
    return rows


NOTES = hn.QUICK_SCALE_NOTE + """- **Paper-scale check, web search at 80 % load (measured; 100,000 flows per run, the paper's
  count; the other loads and data mining at paper scale were not run here).** (0,100KB] 99th
  percentile: TCP 72.7 (paper 66.03, +10 %), DCTCP 22.2 (paper 16.97, +31 %), LineRate+pFabric
  2.04 (paper 1.75, +17 %), MinTCP+pFabric 1.84. Overall average: TCP 20.2, DCTCP 8.03,
  MinTCP+pFabric 2.21, LineRate+pFabric 2.88, Ideal 1.54, so TCP / MinTCP+pFabric 9.1× and
  DCTCP / MinTCP+pFabric 3.6× (paper 2.5-11×). (10MB,∞) average: Ideal 9.14, DCTCP 9.96, TCP
  16.7, MinTCP+pFabric 18.6, LineRate+pFabric 40.9.
- **Large flows under MinTCP+pFabric: 11 % slower than TCP's, 86 % slower than DCTCP's at
  paper scale (paper: 20-28 % slower than both).** The paper's TCP and DCTCP large flows are
  alike; ours are not (TCP 16.7, DCTCP 9.96): DCTCP keeps its 225 KB queues short and never
  times out, while TCP, with fast retransmit off as the paper says, recovers every loss by a
  200 µs timeout. With fast retransmit adapted to spraying instead (`dupack_threshold =
  "dynamic"`, max(3, 0.75·cwnd), the SIGCOMM scripts' setting; measured at paper scale) TCP
  gets overall 17.4, (0,100KB] 99th percentile 58.3 (paper 66.03) and (10MB,∞) 13.7, so
  MinTCP+pFabric's large flows are 35 % slower than TCP's — still not DCTCP's 9.96. pFabric's large flows are 2× Ideal's: each 19 MB flow times out about 6,500
  times (fixed 40 µs RTO; its packets, lowest priority, wait or are dropped behind every other
  flow) and resends about a quarter of its packets, steadily through the run (slowdown 14.7,
  22.0, 18.5 in the three thirds). Which of the two baselines the paper's ns-2 runs differ
  from is not settled here; at quick scale (a network that empties after 63 ms) the large
  flows of all three are within 13 % of each other. Not the cause: how a run ends. The
  SIGCOMM'13 scripts stop at the 100,000th completion and leave the open flows out
  (`workload.stop_when = "n-finished"`); counting only the flows finished by the last arrival
  of these runs moves the (10MB,∞) averages little (MinTCP+pFabric 18.6 → 17.7, DCTCP 9.96 →
  9.88, TCP 16.7 → 16.5), except LineRate+pFabric's (40.9 → 25.1: its slowest elephants are
  the ones still open).
- **Quick-scale tails.** Our TCP and DCTCP (0,100KB] 99th percentiles at quick scale (≈ 40 and
  13) are below the paper's (66.03 and 16.97) and the paper-scale values above: a short run
  never reaches the steady-state load (above).
- **SACK.** The paper's ns-2 TCP is the SACK agent; with fast retransmit off it recovers only by
  timeout, and without SACK a timeout resends everything after the hole, which costs large
  flows most. Measured at 20,000 flows: TCP's (10MB,∞) average 11.57 without SACK → 8.92 with
  it; DCTCP unchanged (it never timed out). The sweep therefore runs TCP and DCTCP with
  `transport.sack = true`.
- **A simulator bug these runs exposed, fixed.** With the idealised SACK a flow whose ACKs were
  all lost could stall for good (docs/model.md); TCP runs here lost 1-12 of 2,000 flows that
  way before the fix. Every run now checks `flows_stalled = 0`.
"""
