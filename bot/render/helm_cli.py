"""`helm template` through a helm binary on PATH, for users who pin one."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.render.base import RENDER_WORKERS, RenderFailure, failure_from_message
from bot.render.probe import probe_kube_version

_SOURCE_RE = re.compile(r"^# Source: (\S+)\s*$", re.MULTILINE)


HELM_CLI_TIMEOUT = 300.0
# helm processes at once, as many as the sandbox keeps render processes: the engine's render
# threads outnumber them, to do their Python while Helm works.
_RUNNING = threading.BoundedSemaphore(RENDER_WORKERS)


class HelmCLI:
    """`helm template`, for users who pin a helm binary."""

    def __init__(self, binary: str = "helm") -> None:
        path = shutil.which(binary)
        if path is None:
            raise RenderFailure(f"--renderer helm: no '{binary}' binary on PATH")
        self._binary = path
        out = subprocess.run([path, "version", "--short"], capture_output=True, text=True)
        self.version = f"helm-cli/{out.stdout.strip() or 'unknown'}"

    def render(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        with tempfile.TemporaryDirectory(prefix="chart-review-") as tmp:
            chart, vf = Path(tmp) / "chart.tgz", Path(tmp) / "values.json"
            chart.write_bytes(archive)
            vf.write_text(json.dumps(values))
            command = [self._binary, "template", release, str(chart), "-n", namespace]
            try:
                with _RUNNING:
                    proc = subprocess.run(
                        [*command, "-f", str(vf), *capability_flags(capabilities)],
                        capture_output=True,
                        text=True,
                        timeout=HELM_CLI_TIMEOUT,
                    )
            except subprocess.TimeoutExpired:
                raise RenderFailure(
                    f"render exceeded its time limit ({HELM_CLI_TIMEOUT:.0f} s of wall-clock time)"
                ) from None
        if proc.returncode != 0:
            raise failure_from_message(proc.stderr.replace("Error: ", "", 1))
        return split_sources(proc.stdout)

    def default_kube_version(self) -> str | None:
        return probe_kube_version(self.render)


def capability_flags(capabilities: Capabilities) -> list[str]:
    """`helm template`'s own flags; none when nothing differs from its defaults (it then checks
    the chart's `kubeVersion` against its compiled-in version itself)."""
    flags = []
    if capabilities.kube_version is not None:
        flags += ["--kube-version", capabilities.kube_version]
    for api_version in capabilities.api_versions:
        flags += ["--api-versions", api_version]
    return flags


def split_sources(stream: str) -> dict[str, str]:
    """Split `helm template` output into template name → text, by its `# Source:` markers."""
    out: dict[str, str] = {}
    marks = list(_SOURCE_RE.finditer(stream))
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt is not None else len(stream)
        out[mark[1]] = out.get(mark[1], "") + stream[mark.end() : end]
    return out
