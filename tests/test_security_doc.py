"""docs/security.md names the test that holds each rule: every one it names exists, so the security
model cannot cite a test that was renamed or removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "security.md"
# `tests/x/test_y.py::test_z`, then `::test_w` for more of the same file.
CITED_RE = re.compile(r"`(tests/[\w/]+\.py)?::(test_\w+)")
CITED_FILE_RE = re.compile(r"`(tests/[\w/]+\.py)`")


def cited() -> list[tuple[str, str]]:
    found, current = [], ""
    for match in CITED_RE.finditer(DOC.read_text()):
        current = match.group(1) or current
        found.append((current, match.group(2)))
    return found


def test_every_test_the_security_model_cites_exists() -> None:
    pairs = cited()
    assert len(pairs) >= 30  # the doc does cite its tests
    missing = []
    for path, name in pairs:
        tree = ast.parse((ROOT / path).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if name not in names:
            missing.append(f"{path}::{name}")
    assert missing == []


def test_every_test_file_it_cites_exists() -> None:
    files = CITED_FILE_RE.findall(DOC.read_text())
    assert [f for f in files if not (ROOT / f).is_file()] == []
