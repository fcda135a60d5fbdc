"""The renderer a command line or worker asked for, by name."""

from __future__ import annotations

from bot.render.base import RENDER_WORKERS, Renderer, RenderFailure
from bot.render.helm_cli import HelmCLI
from bot.render.sandbox import SandboxedHelm, SandboxLimits


def make_renderer(
    name: str, limits: SandboxLimits | None = None, workers: int = RENDER_WORKERS
) -> Renderer:
    """`embedded` renders in a pool of `workers` sandboxed render processes
    (`bot/render/sandbox.py`): charts come from untrusted PRs. `helm` runs a pinned binary per
    render."""
    if name == "embedded":
        return SandboxedHelm(limits or SandboxLimits(), workers)
    if name == "helm":
        return HelmCLI()
    raise RenderFailure(f"unknown renderer '{name}' (expected embedded or helm)")
