"""`--renderer`, one option for every command that renders: the embedded Helm SDK in its sandboxed
render processes, or a `helm` binary (bot/render/factory.py)."""

from __future__ import annotations

import argparse

RENDERERS = ("embedded", "helm")


def add_renderer_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--renderer",
        choices=RENDERERS,
        default=RENDERERS[0],
        help="embedded: the embedded Helm SDK, in a pool of sandboxed render processes under the "
        "RENDER_* limits (default); helm: a helm binary on PATH, which renders but does not lint",
    )
