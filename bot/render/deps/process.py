"""Running one fetch process (bot/render/deps/child.py): its environment, its limits, and what
its end says when it gave no reply."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[3])
# What a fetch process may see of this one's environment: the network's settings, nothing else.
_PASSED = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
)


@dataclass(frozen=True)
class FetchLimits:
    """Per fetch. A chart archive is kilobytes and an index rarely 20 MB: the defaults stop only a
    server that streams for ever or never answers."""

    wall_seconds: float = 60.0
    cpu_seconds: int = 30
    max_bytes: int = 64 << 20  # any one file the download writes: the index, the archive


def run_child(
    payload: Mapping[str, Any], limits: FetchLimits, environ: Mapping[str, str], tmp: str
) -> dict[str, Any]:
    """The child's reply to `payload` (with the limits added), or {"error"} saying why none came.
    `tmp` is the child's HOME, TMPDIR and working directory, removed by the caller."""
    request = {
        **payload,
        "max_bytes": limits.max_bytes,
        "cpu_seconds": limits.cpu_seconds,
        "wall_seconds": limits.wall_seconds,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot.render.deps.child"],
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=limits.wall_seconds,
            env=_child_env(environ, tmp),
            cwd=tmp,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {limits.wall_seconds:g} s"}
    try:
        reply = json.loads(done.stdout or b"{}")
    except ValueError:
        reply = {}
    if not isinstance(reply, dict) or not reply:
        return {"error": _crashed(done)}
    return reply


def _child_env(environ: Mapping[str, str], tmp: str) -> dict[str, str]:
    env = {key: environ[key] for key in _PASSED if key in environ}
    helm = os.path.join(tmp, "helm")
    return {
        **env,
        "HOME": tmp,
        "TMPDIR": tmp,  # Helm's own temp files go where the fetch's are removed, even when killed
        "PYTHONPATH": _ROOT,
        "HELM_CACHE_HOME": os.path.join(helm, "cache"),
        "HELM_CONFIG_HOME": os.path.join(helm, "config"),
        "HELM_DATA_HOME": os.path.join(helm, "data"),
        "HELM_REGISTRY_CONFIG": os.path.join(helm, "registry.json"),
        "HELM_REPOSITORY_CONFIG": os.path.join(helm, "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": os.path.join(helm, "cache", "repository"),
    }


def _crashed(done: subprocess.CompletedProcess[bytes]) -> str:
    if done.returncode < 0 and -done.returncode == 25:  # SIGXFSZ: wrote past the size limit
        return "the download exceeded its size limit"
    if done.returncode < 0 and -done.returncode in (9, 24):  # SIGKILL, SIGXCPU
        return "the download exceeded its CPU time limit"
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
    return f"the fetch process ended with status {done.returncode}: {tail[0][:300]}"
