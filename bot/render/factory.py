"""The renderer a command line or worker asked for, by name."""

from __future__ import annotations

from bot.render.base import Renderer, RenderFailure
from bot.render.helm_cli import HelmCLI
from bot.render.sandbox import SandboxedHelm, SandboxLimits


def make_renderer(name: str, limits: SandboxLimits | None = None) -> Renderer:
    """`embedded` renders in a pool of sandboxed render processes (`bot/render/sandbox.py`):
    charts come from untrusted PRs. `helm` runs a pinned binary per render."""
    if name == "embedded":
        return SandboxedHelm(limits or SandboxLimits())
    if name == "helm":
        return HelmCLI()
    raise RenderFailure(f"unknown renderer '{name}' (expected embedded or helm)")
