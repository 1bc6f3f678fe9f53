"""A one-line progress bar on stderr (off when stderr is not a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Shows simulated time, flows done, events/s and an ETA for a run."""

    def __init__(self, label: str = "", stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label = label
        self.t0 = time.monotonic()
        self._drawn = False

    def __call__(self, p: dict[str, float]) -> bool:
        if not self.enabled:
            return True
        done, total = p["flows_done"], max(p["flows_total"], 1)
        frac = min(done / total, 1.0)
        width = 24
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        wall = p["wall_seconds"]
        eta = (wall / frac - wall) if frac > 0 else float("nan")
        eta_s = f"{eta:5.0f}s" if eta == eta else "    ?"
        rate = p["events"] / wall / 1e6 if wall > 0 else 0.0
        line = (
            f"\r{self.label}[{bar}] {frac * 100:5.1f}%  flows {int(done)}/{int(total)}  "
            f"sim {p['sim_time_us'] / 1e3:9.3f} ms  {rate:5.1f} M ev/s  ETA {eta_s}"
        )
        self.stream.write(line)
        self.stream.flush()
        self._drawn = True
        return True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()
