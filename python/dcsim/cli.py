"""The ``dcsim`` command line.

    dcsim run SPEC.toml [--set key=value ...] [--out DIR] [--seed N] [--quiet]
    dcsim validate SPEC.toml [--set key=value ...]
    dcsim show SPEC.toml [--set key=value ...]

A user mistake (bad spec, missing file, bad override) prints ``error: ...`` and exits with
status 2 before anything runs; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from . import __version__
from .progress import ProgressBar
from .result import format_summary
from .spec import SpecError, parse_value

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; keep one style
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _overrides(pairs: Sequence[str], seed: Optional[int]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for kv in pairs:
        if "=" not in kv:
            raise SpecError(f"--set {kv!r}: expected section.key=value, e.g. workload.load=0.7", kv)
        key, value = kv.split("=", 1)
        out[key.strip()] = parse_value(value.strip())
    if seed is not None:
        out["seed"] = seed
    return out


def _add_spec_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="run spec (TOML)")
    p.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
        help="override a spec field, e.g. --set workload.load=0.7 (repeatable)",
    )
    p.add_argument("--seed", type=int, default=None, help="override the seed")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dcsim", description="Packet-level simulator of datacenter transports.")
    parser.add_argument("--version", action="version", version=f"dcsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("run", help="run one simulation and print its summary")
    _add_spec_args(p)
    p.add_argument("--out", default=None, help="run directory (default: runs/<spec name>)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary table")
    p = sub.add_parser("validate", help="check a spec without running it")
    _add_spec_args(p)
    p = sub.add_parser("show", help="print the fully resolved spec (every default filled in)")
    _add_spec_args(p)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from . import api, spec as spec_mod

    try:
        overrides = _overrides(args.sets, args.seed)
        if args.command == "validate":
            spec_mod.resolve(args.spec, overrides)
            print(f"{args.spec}: ok")
            return 0
        if args.command == "show":
            print(spec_mod.resolve(args.spec, overrides).toml, end="")
            return 0
        out = args.out or str(Path("runs") / Path(args.spec).stem)
        bar = ProgressBar(enabled=False if args.quiet else None)
        try:
            result = api.run(args.spec, out=out, progress=bar, overrides=overrides)
        finally:
            bar.close()
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if not args.quiet:
        print(format_summary(result.summary))
        print(f"\nresults in {out}/ (flows.parquet, summary.json, spec.toml, log.txt)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
