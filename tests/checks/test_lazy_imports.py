"""The validators the `yaml` and `kube` checks use are imported when a chart is checked, never when
the review's modules load: a fresh interpreter importing the command line, the registry and the
engine holds none of them."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = ("yamllint", "yamale", "kubernetes_validate", "jsonschema", "referencing", "pathspec")
IMPORT_REVIEW_PATH = (
    "import json, sys\n"
    "import bot.cli.main, bot.engine.review, checks\n"
    "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))\n"
)


def test_the_review_path_imports_none_of_the_checks_validators() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_REVIEW_PATH], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    assert "checks" in loaded  # the registry, with every check, was imported
    assert loaded.isdisjoint(LAZY), sorted(loaded & set(LAZY))
