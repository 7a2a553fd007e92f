"""The ``probeval`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__

DESCRIPTION = """\
Posterior distributions of classifier performance: how good is the model, how sure are we,
and is it better than the other one?"""


def _demo(args: argparse.Namespace) -> int:
    from .datasets import load_demo
    from .evaluation import evaluate

    data = load_demo()
    print("probeval demo: model A on the bundled dataset (8,000 labelled rows)\n")
    ev = evaluate(
        data["y_true"],
        y_score=data["score_a"],
        metrics=["accuracy", "precision", "recall", "f1", "mcc", "balanced_accuracy"],
        n_samples=args.samples,
        rng=args.seed,
    )
    print(ev.confusion)
    print()
    print(ev.summary(ci=args.ci))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="probeval", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"probeval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo", help="run the whole story on bundled data")
    demo.add_argument("--samples", type=int, default=10_000, help="posterior draws (default 10000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--ci", type=float, default=0.95, help="interval probability (default 0.95)")
    demo.set_defaults(handler=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except (ValueError, TypeError) as exc:
        print(f"probeval {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
