"""pHost CoNEXT'15 Fig. 3: mean slowdown of pFabric, pHost and Fastpass per workload (load 0.6)."""

from pathlib import Path

import pandas as pd

from dcsim.experiments_support import phost as ph

TITLE = "pHost Fig. 3: mean slowdown at load 0.6 (144-host leaf-spine)"


def data(runs: pd.DataFrame) -> pd.DataFrame:
    d = ph.rows(runs)
    d = d[(~d.deadlines) & ((d.load - 0.6).abs() < 1e-9)]
    return d[["workload", "protocol", "load", "flows", "mean_slowdown"]].reset_index(drop=True)


def plot(d: pd.DataFrame, path: Path) -> None:
    ph.save_bars(d, [("mean_slowdown", "mean slowdown", False)], TITLE, path, width_per_panel=6.0)


def compare(d: pd.DataFrame):
    rows = ph.ratio_rows(d, "mean_slowdown", "pHost", "pFabric", (0.96, 1.04), "mean slowdown, pHost / pFabric", "§4.2: pHost 'comparable to pFabric'; abstract: within 4 %")
    rows += ph.ratio_rows(d, "mean_slowdown", "Fastpass", "pHost", (1.3, 4.0), "mean slowdown, Fastpass / pHost", "Fig. 3 caption: pHost '1.3-4x better than Fastpass'; abstract: 3.8x")
    rows += ph.ratio_rows(d, "mean_slowdown", ph.PHOST_CODE, "pFabric", (0.96, 1.04), "mean slowdown, pHost (authors'-code preset) / pFabric", "the other reading of pHost's parameters (reference §3.3)")
    return rows


NOTES = ph.SETUP_NOTE + """\
- **pHost's token clock.** The paper's text sends one token "every (MTU-sized) packet
  transmission time" (1500 B, 1.2 µs); the authors' simulator, which produced the published
  numbers, re-arms its clock every 1540 bytes' time (1.232 µs). With 1500 B the destination's
  downlink runs 100 % full of data and the tokens, ACKs and RTSs crossing it queue behind data,
  so sources fall behind and tokens expire. Measured (3,000 web-search flows, load 0.6, paper
  preset): 1.420 with 1500 B against 1.335 with 1540 B (pFabric 1.223); IMC10 1.532 against
  1.510; data mining 1.085 against 1.072. The reproductions use 1540 B
  (`phost.token_interval_bytes`), the paper's other parameters unchanged.
- **Web search: pHost 9 % above pFabric (paper: within 4 %).** Investigated against the
  authors' code (`docs/model.md`): the rest of the gap comes from tokens that expire when
  several destinations grant the same source at once — the source can use only one per packet
  time, and the others' slots go unused for up to 1.5 T. The authors' pHost has the same
  mechanism. The paper's 4 % is measured against its own pFabric (the YAPS version); ours is
  MinTCP with idealised SACK, which may be slightly better on web search's many
  medium-sized flows. IMC10 (1.01) and data mining (1.00) are within 4 %.
- **The authors'-code preset is worse than the paper preset** (1.23 / 1.14 / 1.03 × pFabric):
  without the `hold` its free-token packets collide with the first paced tokens, and flows over
  8 packets get no free tokens at all.
- **Fastpass / pHost.** 3.5× (IMC10), 1.34× (web search), 4.5× (data mining) against the
  paper's 1.3-4× (3.8× in the abstract). Every Fastpass flow waits for its RTS, the rest of the
  arbiter's epoch and one more epoch (10-20 µs) before its first packet, which multiplies the
  slowdown of flows that would otherwise finish in a few µs; data mining and IMC10 have the most
  such flows (data mining: 50 % of flows ≤ 1 packet), hence the largest ratios. Data mining's
  4.5 is 12 % above the paper's upper end: our quick-scale run has 1,000 flows, whose ~800 short
  flows set the mean.
- **Paper-scale check (100,000 flows per run, load 0.6; 9 runs, 20 min on 2 cores).** Mean
  slowdown pFabric / pHost / Fastpass: IMC10 1.578 / 1.609 / 5.423, web search 1.368 / 1.570 /
  1.947, data mining 1.333 / 1.342 / 5.144. pHost / pFabric = 1.02 / 1.15 / 1.01; Fastpass /
  pHost = 3.37 / 1.24 / 3.83 (data mining now inside 1.3-4, at the abstract's 3.8). The web
  search gap grows from 9 % to 15 % with the longer run, whose larger population of concurrent
  long flows means more sources granted by several destinations at once (the token-expiry
  mechanism above).
"""
