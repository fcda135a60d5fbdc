"""`--values FILE`, `--set` and `--set-string`, the arguments: read as Helm reads them
(bot/charts/helm_set.py)."""

from __future__ import annotations

import argparse

from bot.charts.helm_set import values_override
from bot.charts.profiles import ValuesOverride


def add_values_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--values",
        "-f",
        action="append",
        default=[],
        metavar="FILE",
        help="a values file on this machine, merged into every profile after the profile's own "
        "values, as a later helm -f (repeatable; a later file wins)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VAL",
        help="set a value in every profile, after --values, as helm --set does (repeatable; "
        "a.b=c, a[0]=x, k1=v1,k2=v2, \\, for a literal comma, a={x,y} for a list)",
    )
    p.add_argument(
        "--set-string",
        action="append",
        default=[],
        metavar="KEY=VAL",
        help="as --set, every value a string (applied after every --set, as helm does)",
    )


def override_from(args: argparse.Namespace) -> ValuesOverride:
    return values_override(args.values, args.set, args.set_string)
