"""`helm` on PATH for the tests of `--renderer helm`: tests/support/helm_cli.py (Helm's own SDK
behind helm's command line) run as the executable. It renders unconfined, as a helm binary does:
what the review keeps from Helm must hold there too."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

HELM = ROOT / "tests" / "support" / "helm_cli.py"


@pytest.fixture
def helm_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "helm"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HELM}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return wrapper
