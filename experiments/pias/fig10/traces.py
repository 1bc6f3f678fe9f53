"""Writes this figure's traces, bulk-1.csv ... bulk-8.csv (run from this folder:
`python traces.py`): N long TCP flows from server 0 to server 1, all starting at time 0, and
200 pings (64-byte flows) from server 0 to server 2, one every 100 us from 2 ms on (PIAS
§5.1, "End host queueing delay": one sender, two receivers, 1 to 8 background flows)."""

from pathlib import Path

BULK_BYTES = 40_000_000  # each background flow outlasts the pings: 40 MB take 32 ms at 10 Gbps
PINGS, PING_BYTES, FIRST_PING_US, PING_GAP_US = 200, 64, 2000, 100
FIRST_PING_ID = 100

if __name__ == "__main__":
    here = Path(__file__).parent
    for n in range(1, 9):
        rows = [
            f"# {n} background flow(s) from server 0 to 1 and {PINGS} pings from server 0 to 2; written by traces.py",
            "id,src,dst,size_bytes,start_us",
        ]
        rows += [f"{k},0,1,{BULK_BYTES},0" for k in range(n)]
        rows += [f"{FIRST_PING_ID + i},0,2,{PING_BYTES},{FIRST_PING_US + PING_GAP_US * i}" for i in range(PINGS)]
        (here / f"bulk-{n}.csv").write_text("\n".join(rows) + "\n")
