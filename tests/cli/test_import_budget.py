"""What the review path costs before any work: a fresh interpreter imports the command line and
lists every module it pulled in. Asserted on modules, never on time: the libraries beyond the
standard library a review needs, and none of the App's stack (web framework, queue, GitHub client),
the terminal's rendering or a check's heavy library. A check that needs a
library of its own (yamllint, kubernetes-validate) imports it where it runs, or it lands here."""

from __future__ import annotations

import json
import subprocess
import sys

from bot.review_process import YOUNG

# Third-party packages a review's imports may load: YAML, the config's models, SemVer, diffs.
ALLOWED_THIRD_PARTY = frozenset(
    {
        "annotated_types",
        "cydifflib",
        "pydantic",
        "pydantic_core",
        "semver",
        "typing_extensions",
        "typing_inspection",
        "yaml",
    }
)
# Loaded only by what needs them: a terminal loads rich; the App and the Action their stacks.
NEVER = ("rich", "fastapi", "starlette", "uvicorn", "github", "huey", "redis")
LISTED = """
import json, sys
before = set(sys.modules)
import bot.cli.main
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def imported() -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", LISTED], capture_output=True, text=True, check=True, timeout=120
    )
    modules: list[str] = json.loads(proc.stdout)
    return modules


def test_the_review_path_imports_only_what_a_review_needs() -> None:
    modules = imported()
    tops = {m.split(".")[0] for m in modules}
    third_party = {
        t
        for t in tops - set(sys.stdlib_module_names) - {"bot", "checks"}
        # Cython's and the interpreter's own runtime modules, loaded with compiled extensions.
        if not t.startswith("_") and t != "cython_runtime"
    }
    assert third_party <= ALLOWED_THIRD_PARTY, sorted(third_party - ALLOWED_THIRD_PARTY)
    assert [m for m in modules if m.split(".")[0] in NEVER or m in NEVER] == []
    assert not [
        m for m in modules if m.startswith(("webhooks", "bot.cli.terminal", "bot.app.github"))
    ]


def test_the_process_is_tuned_before_the_command_line_is_imported() -> None:
    """The collector's thresholds are set as the package is entered, so the import of the command
    line's modules runs under them (bot/review_process.py), not only the review."""
    probe = "import gc, sys, bot.cli\nprint(gc.get_threshold()[0], 'bot.cli.main' in sys.modules)\n"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert proc.stdout.split() == [str(YOUNG), "False"]
