"""Progress of runs and sweeps on stderr.

In a terminal, a live display (rich) redrawn in place and fitted to the terminal's width: one
line for a run; for a sweep, one line for the sweep and one per run in progress. Anywhere else
(a batch job's log, a pipe) a plain line with a time stamp every 30 s, or every
``DCSIM_PROGRESS_EVERY`` seconds, and no control characters.

The remaining time comes from :class:`Estimator`, which says what it predicts from.
"""

from __future__ import annotations

import bisect
import datetime
import math
import os
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.text import Text

    from .spec import ResolvedSpec

#: Environment variable: seconds between two plain progress lines (not in a terminal).
EVERY_ENV = "DCSIM_PROGRESS_EVERY"
#: Seconds between two plain progress lines unless ``DCSIM_PROGRESS_EVERY`` says otherwise.
DEFAULT_EVERY_S = 30.0
#: A bar narrower than this is not worth drawing: the statistics make room for it first.
_MIN_BAR = 20


@dataclass(frozen=True)
class RunEnd:
    """What ends a run, as far as its remaining time is concerned (from its spec)."""

    #: ``workload.duration_ms`` in µs when set: the run stops at that simulated time.
    duration_us: float | None = None
    #: ``workload.flows`` with ``stop_when = "n-finished"``: the run stops at that completion.
    finish_flows: int | None = None
    #: With long-lived flows, ``packets_injected`` counts their endless packets too, so only
    #: the flows finished measure the run's progress.
    flows_only: bool = False

    @classmethod
    def of(cls, spec: ResolvedSpec) -> RunEnd:
        w = spec.tree.get("workload", {})
        duration_ms = float(w.get("duration_ms", 0) or 0)
        n_finished = w.get("stop_when") == "n-finished"
        return cls(
            duration_us=duration_ms * 1e3 if duration_ms > 0 else None,
            finish_flows=int(w.get("flows", 0)) if n_finished else None,
            flows_only=int(w.get("long_lived_flows", 0) or 0) > 0,
        )


class Estimator:
    """The remaining wall time of one run, from the core's progress reports.

    Wall time follows the work simulated — events, a roughly fixed number per data packet —
    not the flows finished: with heavy-tailed flow sizes the last few large flows can take
    most of a run (a recorded data-mining run spent two thirds of its wall time after the
    last arrival with 99 % of its flows finished). So:

    - every flow finishing (``stop_when = "all-finished"``, the default): the run's work is
      its flows' data packets. The total is the packets of the flows arrived so far, scaled
      by ``flows_total / flows_started`` while flows still arrive (exact once all have);
      the work done is ``packets_injected``; remaining wall time = work left / packets
      injected per wall second lately;
    - ``duration_ms``: remaining simulated time × wall seconds per simulated µs lately (the
      smaller of the two when every flow could also finish before);
    - ``stop_when = "n-finished"``, or long-lived flows: completions left / completions per
      wall second lately.

    "Lately" is the last third of the elapsed wall time, at least :attr:`MIN_WINDOW_S`: long
    enough to smooth the reports, short enough to follow a run that slows as the network
    fills, and a machine whose load changes. Tested on recorded progress sequences
    (``tests/data/progress/``).
    """

    WINDOW_FRACTION = 1 / 3
    MIN_WINDOW_S = 2.0
    #: Reports kept: beyond, every other older one is dropped (hours-long runs report 5 a second).
    MAX_REPORTS = 2000

    def __init__(self, end: RunEnd | None = None) -> None:
        self.end = end or RunEnd()
        # The reports and their wall times, swapped as one: a live display reads them from its
        # own thread while reports arrive.
        self._history: tuple[list[Mapping[str, float]], list[float]] = ([], [])

    @property
    def reports(self) -> list[Mapping[str, float]]:
        """The reports kept, oldest first."""
        return self._history[0]

    def update(self, report: Mapping[str, float]) -> None:
        """Takes one progress report (the dict the core passes to the progress callback)."""
        reports, walls = self._history
        if reports and report["wall_seconds"] <= reports[-1]["wall_seconds"]:
            return  # the same report seen twice (a sweep's driver polls it)
        reports.append(dict(report))
        walls.append(report["wall_seconds"])
        if len(reports) > self.MAX_REPORTS:
            kept = reports[:-1:2] + reports[-1:]
            self._history = (kept, [r["wall_seconds"] for r in kept])

    @property
    def elapsed_s(self) -> float:
        return self.reports[-1]["wall_seconds"] if self.reports else 0.0

    def remaining_s(self) -> float | None:
        """Seconds of wall time left, or None while nothing predicts it yet."""
        reports, walls = self._history
        if not reports:
            return None
        now = reports[-1]
        wall = now["wall_seconds"]
        window = max(self.MIN_WINDOW_S, wall * self.WINDOW_FRACTION)
        then = reports[min(bisect.bisect_left(walls, wall - window), len(reports) - 1)]
        if then is now:  # a single report: measure from the start of the run
            then = dict.fromkeys(now, 0.0)
        dwall = wall - then["wall_seconds"]

        def per_second(key: str) -> float:
            return (now[key] - then[key]) / dwall if dwall > 0 else 0.0

        estimates: list[float] = []
        end, total, started = self.end, now["flows_total"], now.get("flows_started", 0)
        if end.finish_flows is not None or end.flows_only:
            target = end.finish_flows if end.finish_flows is not None else total
            rate = per_second("flows_done")
            if rate > 0:
                estimates.append(max(0.0, target - now["flows_done"]) / rate)
        elif started > 0 and "packets_arrived" in now:
            scale = total / started if started < total else 1.0
            rate = per_second("packets_injected")
            if rate > 0:
                estimates.append(max(0.0, now["packets_arrived"] * scale - now["packets_injected"]) / rate)
        if end.duration_us is not None:
            sim_rate = per_second("sim_time_us")
            if sim_rate > 0:
                estimates.append(max(0.0, end.duration_us - now["sim_time_us"]) / sim_rate)
        return min(estimates) if estimates else None

    def fraction(self) -> float | None:
        """The fraction of the run's wall time behind it (what a progress bar shows)."""
        remaining = self.remaining_s()
        if remaining is None:
            return None
        total = self.elapsed_s + remaining
        return self.elapsed_s / total if total > 0 else 0.0


def format_duration(seconds: float | None) -> str:
    """``0:07``, ``12:30``, ``3:02:00``; ``?`` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    s = int(round(max(seconds, 0.0)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def every_seconds(every_s: float | None = None) -> float:
    """Seconds between plain lines: ``every_s``, else ``DCSIM_PROGRESS_EVERY``, else 30."""
    from .spec import SpecError

    if every_s is None:
        text = os.environ.get(EVERY_ENV)
        if not text:
            return DEFAULT_EVERY_S
        try:
            every_s = float(text)
        except ValueError:
            raise SpecError(f"{EVERY_ENV}={text!r} is not a number of seconds", EVERY_ENV) from None
    if not (every_s > 0 and math.isfinite(every_s)):
        raise SpecError(f"{EVERY_ENV}={every_s!r}: seconds between progress lines must be > 0", EVERY_ENV)
    return every_s


@dataclass
class Row:
    """One line of progress: a label, a bar, the remaining time and some statistics."""

    label: str
    fraction: float | None
    eta_s: float | None
    stats: str = ""
    #: Wall seconds so far, for the plain line (a live display has no need of it).
    elapsed_s: float | None = None

    def fitted(self, width: int) -> Text:
        """The row as a terminal line of at most `width` cells. The label takes at most a
        third; the statistics shrink before the bar gets narrower than twenty cells; the
        percentage and the time left stay."""
        from rich.text import Text

        pct = "  ?%" if self.fraction is None else f"{min(self.fraction, 1.0) * 100:3.0f}%"
        essential = f" {pct}  ETA {format_duration(self.eta_s)}"
        label = self.label
        if len(label) > max(width // 3, 8):
            label = label[: max(width // 3, 8) - 1] + "…"
        stats = f"  {self.stats}" if self.stats else ""
        room = width - len(label) - 1 - len(essential)
        if room - len(stats) < _MIN_BAR:
            keep = room - _MIN_BAR
            stats = "" if keep < 4 else stats[: keep - 1] + "…"
        bar_width = max(room - len(stats), 0)
        line = Text(label + " " if label else "")
        if self.fraction is None:
            line.append("─" * bar_width, style="bar.back")
        else:
            filled = int(min(max(self.fraction, 0.0), 1.0) * bar_width)
            line.append("━" * filled, style="bar.complete")
            line.append("━" * (bar_width - filled), style="bar.back")
        line.append(essential)
        line.append(stats, style="dim")
        line.truncate(width, overflow="ellipsis")
        return line

    def plain(self) -> str:
        """The row as a line of a log."""
        pct = "?" if self.fraction is None else f"{min(self.fraction, 1.0) * 100:.0f}%"
        stats = f" ({self.stats})" if self.stats else ""
        elapsed = f", elapsed {format_duration(self.elapsed_s)}" if self.elapsed_s is not None else ""
        return f"{self.label}: {pct}{stats}{elapsed}, ETA {format_duration(self.eta_s)}"


class _Rows:
    """A rich renderable that lays out the rows at the console's current width (so a resized
    terminal is followed at the next refresh)."""

    def __init__(self, rows: Callable[[], list[Row]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        for row in self.rows():
            yield row.fitted(options.max_width)


class _Display:
    """Shows a list of rows: live in a terminal, as a plain line every `every_s` seconds
    elsewhere, or not at all."""

    def __init__(
        self,
        rows: Callable[[], list[Row]],
        plain_line: Callable[[], str],
        stream: TextIO | None,
        enabled: bool | None,
        live: bool | None,
        every_s: float | None,
        clock: Callable[[], float],
    ) -> None:
        self.stream = stream or sys.stderr
        self.rows = rows
        self.plain_line = plain_line
        self.enabled = True if enabled is None else enabled
        is_tty = _isatty(self.stream)
        self.live_mode = self.enabled and (is_tty and os.environ.get("TERM") != "dumb" if live is None else live)
        self.every_s = every_seconds(every_s) if self.enabled and not self.live_mode else DEFAULT_EVERY_S
        self.clock = clock
        self.last_line = clock()
        self._live: Any = None

    def start(self) -> None:
        if not self.live_mode or self._live is not None:
            return
        from rich.console import Console
        from rich.live import Live

        console = Console(file=self.stream, force_terminal=True)
        self._live = Live(
            _Rows(self.rows),
            console=console,
            refresh_per_second=4,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def tick(self) -> None:
        """Called on every report: in plain mode, writes the lines when they are due."""
        if not self.enabled:
            return
        if self.live_mode:
            self.start()
            return
        now = self.clock()
        if now - self.last_line < self.every_s:
            return
        self.last_line = now
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        self.stream.write(f"[{stamp}] {self.plain_line()}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _run_row(label: str, est: Estimator) -> Row:
    if not est.reports:
        return Row(label, None, None, "starting")
    return Row(label, est.fraction(), est.remaining_s(), _run_stats(est.reports[-1]), est.elapsed_s)


def _run_stats(report: Mapping[str, float]) -> str:
    wall = report["wall_seconds"]
    rate = report["events"] / wall / 1e6 if wall > 0 else 0.0
    return (
        f"sim {report['sim_time_us'] / 1e3:.3f} ms, {int(report['flows_done'])}/{int(report['flows_total'])} flows, "
        f"{rate:.1f} M ev/s"
    )


class ProgressBar:
    """The progress of one run: pass it as ``progress=`` to :func:`dcsim.run`.

    ``end`` (or ``spec``) says what ends the run, for the remaining time. ``enabled=False``
    shows nothing; ``live`` forces the terminal display (True) or the plain lines (False)
    instead of choosing by whether ``stream`` (stderr) is a terminal; ``every_s`` overrides
    ``DCSIM_PROGRESS_EVERY``."""

    def __init__(
        self,
        label: str = "",
        stream: TextIO | None = None,
        enabled: bool | None = None,
        *,
        spec: ResolvedSpec | None = None,
        end: RunEnd | None = None,
        live: bool | None = None,
        every_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label or "run"
        self.estimator = Estimator(end or (RunEnd.of(spec) if spec is not None else None))
        self.display = _Display(self.rows, lambda: self.rows()[0].plain(), stream, enabled, live, every_s, clock)

    def rows(self) -> list[Row]:
        return [_run_row(self.label, self.estimator)]

    def __call__(self, report: Mapping[str, float]) -> bool:
        self.estimator.update(report)
        self.display.tick()
        return True

    def close(self) -> None:
        self.display.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _RunningRun:
    label: str
    estimator: Estimator


class SweepProgress:
    """The progress of a sweep: runs done, running and failed, each running run's own
    progress (local workers report it), and the time left.

    The time left: each running run's own estimate, plus the runs still queued at the mean
    wall time of a run (the runs finished and the running runs' predictions), spread over
    ``jobs`` workers — available as soon as a running run has an estimate, before any
    finishes."""

    def __init__(
        self,
        total: int,
        jobs: int,
        *,
        already_done: int = 0,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        live: bool | None = None,
        every_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.jobs = total, max(jobs, 1)
        self.done, self.failed = already_done, 0
        self.running: dict[str, _RunningRun] = {}
        self.finished: set[str] = set()
        #: Runs executing where they cannot report their progress (Ray tasks).
        self.unreported_running = 0
        self.finished_walls: list[float] = []
        self.clock = clock
        self.t0 = clock()
        self.display = _Display(self.rows, self.plain_line, stream, enabled, live, every_s, clock)

    def run_started(self, h: str, label: str, end: RunEnd | None = None) -> None:
        if h not in self.running and h not in self.finished:
            self.running[h] = _RunningRun(label, Estimator(end))

    def run_report(self, h: str, report: Mapping[str, float]) -> None:
        if h in self.running:
            self.running[h].estimator.update(report)

    def run_requeued(self, h: str) -> None:
        """A run whose worker died goes back to the queue."""
        self.running.pop(h, None)

    def run_finished(self, h: str, ok: bool, wall_s: float | None = None) -> None:
        self.running.pop(h, None)
        self.finished.add(h)
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if ok and wall_s is not None:
            self.finished_walls.append(wall_s)

    def remaining_s(self) -> float | None:
        own = [(r.estimator.elapsed_s, r.estimator.remaining_s()) for r in list(self.running.values())]
        predicted = [elapsed + left for elapsed, left in own if left is not None]
        samples = self.finished_walls + predicted
        queued = max(self.total - self.done - self.failed - len(self.running) - self.unreported_running, 0)
        if not samples:
            return 0.0 if queued == 0 and not own and not self.unreported_running else None
        per_run = sum(samples) / len(samples)
        running_left = [left if left is not None else per_run for _, left in own]
        running_left += [per_run] * self.unreported_running
        work = sum(running_left) + queued * per_run
        return max(work / self.jobs, max(running_left, default=0.0))

    def _sweep_row(self) -> Row:
        finished = self.done + self.failed
        elapsed = self.clock() - self.t0
        running = len(self.running) + self.unreported_running
        stats = f"{finished}/{self.total} runs, {running} running, {self.failed} failed"
        # The bar counts runs (the runs found done count too): finished ones, plus how far
        # each running one is.
        in_progress = sum(r.estimator.fraction() or 0.0 for r in list(self.running.values()))
        fraction = (finished + in_progress) / self.total if self.total else 1.0
        return Row("sweep", fraction, self.remaining_s(), stats, elapsed)

    def rows(self) -> list[Row]:
        # A snapshot: the live display's thread reads while the driver updates.
        running = list(self.running.values())
        return [self._sweep_row()] + [_run_row(f"  {r.label}", r.estimator) for r in running]

    def plain_line(self) -> str:
        """One line for a log: the sweep, and how far each running run is."""
        running = list(self.running.items())
        line = self._sweep_row().plain()
        if running:
            each = []
            for h, r in running:
                f = r.estimator.fraction()
                each.append(f"{h[:8]} {'?' if f is None else f'{f * 100:.0f}%'}")
            line += "; running: " + ", ".join(each)
        return line

    def tick(self) -> None:
        self.display.tick()

    def close(self) -> None:
        self.display.close()
