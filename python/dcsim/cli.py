"""The ``dcsim`` command line.

    dcsim run SPEC.toml [--set key=value ...] [--out DIR] [--seed N] [--quiet] [--strict]
    dcsim validate SPEC.toml [--set key=value ...] [--strict]
    dcsim show SPEC.toml [--set key=value ...] [--strict]
    dcsim sweep SPEC.toml [--out DIR] [--jobs N | --ray [ADDRESS]] [--scale NAME] [--fail-fast] [--dry-run] [--strict]
    dcsim reproduce NAME|--all|--list [--scale quick|paper] [--jobs N | --ray [ADDRESS]] [--out DIR]
                    [--finished-only [--reuse-runs CSV]]
    dcsim gallery [--results DIR] [--docs DIR] [--scale quick|paper] [--refresh]
    dcsim completion bash|zsh|tcsh

A user mistake (bad spec, missing file, bad override) prints ``error: ...`` and exits with
status 2 before anything runs; never a traceback. So does a missing optional dependency,
with the ``pip install 'dcsim[EXTRA]'`` that installs it. A field the spec sets that has no
effect on the run prints ``warning: ...`` (``--strict``: an error).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import shtab

from . import __version__
from .optional import MissingExtraError
from .progress import ProgressBar
from .result import format_summary
from .spec import ResolvedSpec, SpecError, UnusedFieldWarning, parse_value

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep one style
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _overrides(pairs: Sequence[str], seed: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in pairs:
        if "=" not in kv:
            raise SpecError(f"--set {kv!r}: expected section.key=value, e.g. workload.load=0.7", kv)
        key, value = kv.split("=", 1)
        out[key.strip()] = parse_value(value.strip())
    if seed is not None:
        out["seed"] = seed
    return out


#: Shell completion (shtab) by argument name: spec files, folders, and reproduction names, which
#: the completion asks ``dcsim reproduce --list`` for when one is being typed. For zsh the spec
#: pattern is given without shtab's parentheses, which make zsh drop the subcommand's options.
_COMPLETE_BY_DEST = {
    "spec": {**shtab.glob("*.toml"), "zsh": "_files -g '*.toml'"},
    "out": shtab.DIRECTORY,
    "results": shtab.DIRECTORY,
    "docs": shtab.DIRECTORY,
    "name": shtab.cmd("dcsim reproduce --list 2>/dev/null | cut -d ' ' -f 1"),
}
COMPLETION_SHELLS = ("bash", "zsh")


def _tag_completions(parser: argparse.ArgumentParser) -> None:
    """Marks each argument of `parser` and its subcommands named in ``_COMPLETE_BY_DEST`` with
    its completion (the attribute shtab reads)."""
    for action in parser._actions:
        if action.dest in _COMPLETE_BY_DEST:
            action.complete = _COMPLETE_BY_DEST[action.dest]  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _tag_completions(sub)


def completion_script(shell: str) -> str:
    """The completion script of the ``dcsim`` command for `shell` (one of COMPLETION_SHELLS)."""
    parser = build_parser()
    _tag_completions(parser)
    return shtab.complete(parser, shell=shell)


def _add_spec_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="run spec (TOML)")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a spec field, e.g. --set workload.load=0.7 (repeatable)",
    )
    p.add_argument("--seed", type=int, default=None, help="override the seed")
    p.add_argument(
        "--strict",
        action="store_true",
        help="refuse (exit 2) a spec that sets fields with no effect on the run, instead of warning",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dcsim", description="Packet-level simulator of datacenter transports.")
    parser.add_argument("--version", action="version", version=f"dcsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("run", help="run one simulation and print its summary")
    _add_spec_args(p)
    p.add_argument(
        "--out",
        default=None,
        help="run directory (default: runs/<name>, the spec's `name`, else the spec file's name)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace another run already in the run directory (the same spec is replaced without it)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary table")
    p.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="threads for a partitioned run's partitions (engine.partitioned = true; default 1; "
        "results are the same for any count)",
    )
    p.add_argument(
        "--checkpoint",
        default=None,
        metavar="FILE",
        help="save the run's state in FILE every --checkpoint-every minutes and on Ctrl-C; "
        "the same command resumes from it (results identical to an uninterrupted run)",
    )
    _add_checkpoint_every(p, default=10.0, what="with --checkpoint")
    p = sub.add_parser("validate", help="check a spec without running it")
    _add_spec_args(p)
    p = sub.add_parser("show", help="print the fully resolved spec (every default filled in)")
    _add_spec_args(p)

    p = sub.add_parser("sweep", help="run every combination of a sweep spec's axes (resumable)")
    _add_spec_args(p)
    _add_exec_args(p)
    p.add_argument("--out", default=None, help="sweep directory (default: sweeps/<spec file name>)")
    p.add_argument("--scale", default=None, help="apply the spec's [scales.NAME] overrides")
    p.add_argument(
        "--seeds",
        type=_seed_list,
        default=None,
        metavar="N[,N...]",
        help="run each point with exactly these seeds, e.g. --seeds 2,3 (replaces the sweep's `replicates` or "
        "`seed` list; a run the whole sweep also plans is the same run: a long sweep can go a seed at a time)",
    )
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    p.add_argument("--dry-run", action="store_true", help="list the runs and exit")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _add_checkpoint_every(p, default=10.0, what="each local run (0: none)")

    p = sub.add_parser("reproduce", help="reproduce a paper figure (figure.png, data.csv, comparison.md)")
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the reproductions")
    p.add_argument("--all", action="store_true", help="reproduce every figure, then rebuild the gallery")
    p.add_argument(
        "--scale",
        default="quick",
        choices=["quick", "paper"],
        help="quick (minutes, default) or paper (the paper's flow counts)",
    )
    p.add_argument("--out", default="results", help="results directory (default: results/)")
    p.add_argument("--docs", default="docs", help="with --all: where the gallery goes (default: docs/)")
    p.add_argument(
        "--finished-only",
        action="store_true",
        help="run nothing: draw the figure from its runs already complete in --out, saying which are missing",
    )
    p.add_argument(
        "--reuse-runs",
        default=None,
        metavar="CSV",
        help="with --finished-only: a data-runs.csv from an earlier sitting (docs/figures/<name>[-paper]-runs.csv) "
        "whose rows stand in for runs missing from --out, if their model's results are this checkout's",
    )
    p.add_argument(
        "--seeds",
        type=_seed_list,
        default=None,
        metavar="N[,N...]",
        help="run only these of the figure's seeds, e.g. --seeds 2 (at paper scale, a seed per sitting), then draw "
        "the figure from every planned run complete in --out (and --reuse-runs), as --finished-only does",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _add_exec_args(p)

    p = sub.add_parser("thresholds", help="thresholds for pFabric over a few priority queues and for PIAS")
    p.add_argument("--workload", default="websearch", help="websearch, datamining, imc10 or a CDF file")
    p.add_argument("--load", type=float, default=0.6)
    p.add_argument("--queues", type=int, default=4)
    p.add_argument(
        "--method",
        default="mg1",
        choices=["mg1", "equal-split", "pias", "pias-table"],
        help=(
            "mg1: pFabric (SIGCOMM'13) §6.1 model optimum; equal-split; pias: PIAS (NSDI'15) §3.3 closed form; "
            "pias-table: the PIAS authors' script values"
        ),
    )
    p.add_argument(
        "--base-rtt-us",
        type=float,
        default=0.0,
        help=(
            "mg1: include this base round trip in every flow's FCT and ideal FCT, as simulations normalize "
            "(default 0: the paper's formula)"
        ),
    )
    p.add_argument(
        "--rate-gbps", type=float, default=10.0, help="link rate that converts --base-rtt-us to bytes (default 10)"
    )

    sub.add_parser("schema", help="print the JSON Schema of a run spec (for editor completion and validation)")

    p = sub.add_parser(
        "completion",
        help="print the shell completion script",
        description=(
            'Print the completion script for SHELL. bash: add `eval "$(dcsim completion bash)"` to ~/.bashrc; '
            "zsh: `dcsim completion zsh > ~/.zfunc/_dcsim` with ~/.zfunc in $fpath before compinit."
        ),
    )
    p.add_argument("shell", choices=COMPLETION_SHELLS)

    p = sub.add_parser("gallery", help="collect reproduced figures into docs/figures.md")
    p.add_argument("--results", default="results")
    p.add_argument("--docs", default="docs")
    p.add_argument("--scale", default="quick", choices=["quick", "paper"])
    p.add_argument(
        "--refresh",
        action="store_true",
        help="rebuild from the figures and data in DOCS/figures/ (comparisons computed again; no results needed)",
    )
    return parser


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def _seed_list(text: str) -> list[int]:
    """``--seeds 2,3``: seeds, each once."""
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of seeds, e.g. 2,3") from None
    if any(n < 0 for n in seeds) or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r}: seeds are whole numbers from 0, each given once")
    return seeds


def _minutes(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not math.isfinite(x) or x < 0:
        raise argparse.ArgumentTypeError(f"{text} must be a number of minutes, 0 or more")
    return x


def _add_checkpoint_every(p: argparse.ArgumentParser, default: float, what: str) -> None:
    p.add_argument(
        "--checkpoint-every",
        type=_minutes,
        default=default,
        metavar="MIN",
        help=f"minutes of wall time between two checkpoints of {what} (default {default:g}); "
        "an interrupted run resumes from its last",
    )


def _add_exec_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--jobs", "-j", type=_positive_int, default=None, help="local worker processes (default: one per core)"
    )
    g.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run on a Ray cluster (ADDRESS, or a local Ray instance if omitted); needs dcsim[ray]",
    )


def default_run_dir(spec_path: str, spec: ResolvedSpec) -> Path:
    """``runs/<name>`` for a spec with a ``name`` (characters other than letters, digits,
    ``.``, ``_`` and ``-`` made ``-``), else ``runs/<spec file name without .toml>``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", str(spec.tree.get("name", ""))).strip(".-")
    return Path("runs") / (name or Path(spec_path).stem)


def _sweep_cmd(args) -> int:
    from . import sweep as sweep_mod

    overrides = _overrides(args.sets, args.seed)
    p = sweep_mod.plan(args.spec, overrides, scale=args.scale, strict=args.strict, seeds=args.seeds)
    if args.dry_run:
        for r in p.runs:
            print(r.hash, " ".join(f"{k}={v}" for k, v in r.params.items()))
        print(f"{len(p.runs)} runs")
        return 0
    out = Path(args.out or Path("sweeps") / Path(args.spec).stem)
    report = sweep_mod.run_sweep(
        p,
        out,
        jobs=args.jobs,
        use_ray=args.ray is not None,
        ray_address=args.ray or None,
        fail_fast=args.fail_fast,
        progress=False if args.quiet else None,
        checkpoint_every_s=args.checkpoint_every * 60.0,
    )
    retried = f", {len(report.retried)} retried after a worker died" if report.retried else ""
    resumed = f" ({report.resumed} from checkpoints of an earlier sitting)" if report.resumed else ""
    print(
        f"{report.total} runs: {report.skipped} already done, {len(report.completed)} run now{resumed}, "
        f"{len(report.failed)} failed{retried}, {report.wall_seconds:.1f} s  ->  {out}/"
    )
    if report.other_runs:
        print(
            f"{out}/runs/ also holds {report.other_runs} run(s) of earlier plans of this sweep directory: "
            "dcsim.load leaves them out (all_runs=True loads them)"
        )
    if p.seeds and len(p.seeds) > 1 and report.ok:
        _print_replicates(out, p)
    by_hash = {r.hash: r for r in p.runs}
    for h, err in report.failed.items():
        last = err.strip().splitlines()[-1] if err.strip() else "(no message)"
        print(f"FAILED {h} {by_hash[h].params}: {last}\n       log: {out / 'failed' / (h + '.txt')}", file=sys.stderr)
    if report.interrupted:
        print("interrupted: rerun the same command to resume", file=sys.stderr)
        return 130
    return 1 if report.failed else 0


def _print_replicates(out: Path, p) -> None:
    """The sweep's points, each the mean over its seeds ± the 95 % interval's half-width."""
    import warnings

    from . import sweep as sweep_mod
    from .replicates import format_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sweep_mod.StaleRunsWarning)
        table = sweep_mod.load(out, aggregate=True)
    points = [a for a in p.axes if a != "seed"]
    print(
        f"\nper point, the mean over its {len(p.seeds)} seeds ± the half-width of the 95 % confidence interval "
        "(Student t); all fields: dcsim.load(out, aggregate=True)"
    )
    print(format_table(table.head(_MAX_POINTS_SHOWN), points))
    if len(table) > _MAX_POINTS_SHOWN:
        print(f"... and {len(table) - _MAX_POINTS_SHOWN} more points")


#: The most points of a replicated sweep that `dcsim sweep` prints.
_MAX_POINTS_SHOWN = 40


def _reproduce_cmd(args) -> int:
    from . import reproduce as rep

    if args.list:
        for n in rep.names():
            print(f"{n:32s} {rep.title(n)}")
        return 0
    todo = rep.names() if args.all else [args.name] if args.name else []
    if not todo:
        raise SpecError("name an experiment, or use --list or --all", "name")
    for n in todo:
        if n not in rep.names():
            from difflib import get_close_matches

            near = get_close_matches(n, rep.names(), n=1)
            hint = f"; did you mean `{near[0]}`?" if near else "; see `dcsim reproduce --list`"
            raise SpecError(f"unknown experiment `{n}`{hint}", "name")
    if args.finished_only and (args.jobs is not None or args.ray is not None):
        # Nothing runs, so a way to run would be silently ignored.
        option = "--jobs" if args.jobs is not None else "--ray"
        raise SpecError(f"{option} has no effect with --finished-only, which runs nothing", option)
    if args.seeds is not None and (args.all or args.finished_only):
        # --seeds runs a part of one figure's plan; --finished-only runs none of it.
        why = "names seeds of one figure's plan: not with --all" if args.all else "runs them: not with --finished-only"
        raise SpecError(f"--seeds {why}", "--seeds")
    if args.reuse_runs is not None and (args.all or not (args.finished_only or args.seeds is not None)):
        # One figure's runs, and only in place of runs that cannot be run now.
        why = "names one figure's runs: not with --all" if args.all else "goes with --finished-only or --seeds"
        raise SpecError(f"--reuse-runs {why}", "--reuse-runs")
    if args.all and args.finished_only:
        # A figure without a sweep runs its own simulations (or none): nothing to draw it from.
        todo = [n for n in todo if rep.sweep_path(n) is not None]
    for n in todo:
        print(f"== {n} ({args.scale})", file=sys.stderr)
        paths = rep.reproduce(
            n,
            scale=args.scale,
            out_root=args.out,
            jobs=args.jobs,
            use_ray=args.ray is not None,
            ray_address=args.ray or None,
            progress=False if args.quiet else None,
            finished_only=args.finished_only,
            reuse_runs=args.reuse_runs,
            seeds=args.seeds,
        )
        print((paths["comparison"]).read_text())
        print(f"wrote {paths['figure']}, {paths['data']}, {paths['comparison']}")
    if args.all:
        print(f"gallery: {rep.gallery(args.out, args.docs, args.scale)}")
    return 0


def _print_unused_field_warnings() -> None:
    """Shows each :class:`UnusedFieldWarning` as one ``warning: ...`` line on stderr (inside
    a ``warnings.catch_warnings()`` block, which restores the defaults)."""
    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UnusedFieldWarning):
            print(f"warning: {message}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.simplefilter("always", UnusedFieldWarning)
    warnings.showwarning = show


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        _print_unused_field_warnings()
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    from . import _dcsim, api
    from . import spec as spec_mod

    try:
        if args.command == "sweep":
            return _sweep_cmd(args)
        if args.command == "reproduce":
            return _reproduce_cmd(args)
        if args.command == "thresholds":
            if not (args.base_rtt_us >= 0 and args.rate_gbps > 0):
                raise SpecError(
                    f"--base-rtt-us {args.base_rtt_us} must be >= 0 and --rate-gbps {args.rate_gbps} > 0", "base_rtt_us"
                )
            base = args.base_rtt_us * 1e-6 * args.rate_gbps * 1e9 / 8
            try:
                t = _dcsim.thresholds(args.workload, args.load, args.queues, args.method, base_bytes=base)
                model = _dcsim.threshold_fctn(args.workload, args.load, t, base_bytes=base)
            except _dcsim.InvalidSpec as e:
                raise SpecError(str(e.args[0]), str(e.args[1])) from None
            pias = args.method.startswith("pias")
            print(f"{args.queues} queues, {args.workload}, load {args.load}, method {args.method}")
            what = "packets at byte offsets" if pias else "flows"
            for k, x in enumerate(t):
                print(f"  queue {k}: {what} up to {x:,.0f} bytes ({x / 1460:,.1f} packets)")
            print(f"  queue {len(t)}: beyond")
            if args.method == "pias":
                shares = _dcsim.pias_shares(args.load, args.queues)
                print(
                    "PIAS §3.3 shares of flows per queue: "
                    + ", ".join(f"{s:.3f}" for s in shares)
                    + f" (sum {sum(shares):.6f})"
                )
            with_base = f", base RTT {args.base_rtt_us:g} us = {base:,.0f} bytes" if base else ""
            print(f"M/G/1 model mean normalized FCT (as flow-size classes{with_base}): {model:.4f}")
            section = "pias" if pias else "pfabric"
            print(f"spec: [{section}] queues = {args.queues}, thresholds = [{', '.join(str(round(x)) for x in t)}]")
            return 0
        if args.command == "completion":
            print(completion_script(args.shell), end="")
            return 0
        if args.command == "schema":
            from . import _dcsim

            print(_dcsim.spec_schema())
            return 0
        if args.command == "gallery":
            from . import reproduce as rep

            print(rep.gallery(args.results, args.docs, args.scale, refresh=args.refresh))
            return 0
        overrides = _overrides(args.sets, args.seed)
        if args.command == "validate":
            from . import sweep as sweep_mod

            if sweep_mod.is_sweep_spec(args.spec):  # every run of it, its axes, zip and filter
                p = sweep_mod.plan(args.spec, overrides, strict=args.strict)
                seeds = f" over {len(p.seeds)} seeds" if p.seeds and len(p.seeds) > 1 else ""
                print(f"{args.spec}: ok (a sweep of {len(p.runs)} runs{seeds})")
            else:
                spec_mod.resolve(args.spec, overrides, strict=args.strict)
                print(f"{args.spec}: ok")
            return 0
        if args.command == "show":
            print(spec_mod.resolve(args.spec, overrides, strict=args.strict).annotated_toml(), end="")
            return 0
        resolved = spec_mod.resolve(args.spec, overrides, strict=args.strict)
        threads = args.threads or 1
        if threads > 1 and not resolved.tree["engine"]["partitioned"]:
            print(
                f"note: --threads {threads}: the sequential model (the default) runs on one thread; "
                "set engine.partitioned = true for the partitioned model, which runs on several "
                "(its results differ from the sequential model's; docs/parallel.md)",
                file=sys.stderr,
            )
        out = args.out or str(default_run_dir(args.spec, resolved))
        bar = ProgressBar(Path(out).name, spec=resolved, enabled=False if args.quiet else None)
        try:
            result = api.run(
                resolved,
                out=out,
                progress=bar,
                force=args.force,
                threads=threads,
                checkpoint=args.checkpoint,
                checkpoint_every_s=args.checkpoint_every * 60.0,
            )
        finally:
            bar.close()
    except (SpecError, MissingExtraError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except _dcsim.CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        saved = getattr(args, "checkpoint", None)
        if saved and Path(saved).exists():
            print(f"interrupted: the run's state is in {saved}; the same command resumes it", file=sys.stderr)
        else:
            print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `dcsim sweep --dry-run … | head`: the reader left; stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if not args.quiet:
        print(format_summary(result.summary))
        print(f"\nresults in {out}/ (flows.parquet, summary.json, spec.toml, log.txt)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
