"""The App's server packages are the `app` extra: `pip install chart-review-bot` gives the command
line and the Action without them, and `serve` / `worker` without them exit 2 naming the extra.
Their absence is made real in a fresh interpreter whose import system cannot find them."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from bot.cli.main import APP_EXTRA, APP_EXTRA_INSTALL
from bot.report.exit_status import EXIT_ERROR

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# A finder ahead of every other that finds none of the extra's modules, as an install without it.
WITHOUT_EXTRA = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class WithoutTheExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, WithoutTheExtra())
"""


def run_without_extra(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRA + code, ",".join(sorted(APP_EXTRA))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_app_s_processes_without_the_extra_exit_2_naming_it(command: str) -> None:
    proc = run_without_extra(f"from bot.cli.main import main\nsys.exit(main([{command!r}]))")
    assert proc.returncode == EXIT_ERROR, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "`app` extra" in line and APP_EXTRA_INSTALL in line
    assert "Traceback" not in proc.stderr


def test_the_command_line_and_the_action_run_without_the_extra() -> None:
    code = (
        "import json\n"
        "import bot.cli.main, bot.action.run\n"
        "from bot.cli.main import main\n"
        "try:\n"
        "    main(['review', '--help'])\n"
        "except SystemExit as e:\n"
        "    print(json.dumps([e.code, sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED)]))\n"
    )
    proc = run_without_extra(code)
    assert proc.returncode == 0, proc.stderr
    code_, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (code_, loaded) == (0, [])


def test_the_extra_is_what_the_app_needs_and_the_tests_install_it() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    extra = {Requirement(r).name for r in project["optional-dependencies"]["app"]}
    assert {name.replace("-", "_") for name in extra} == APP_EXTRA
    core = {Requirement(r).name for r in project["dependencies"]}
    assert not extra & core
    test = [Requirement(r) for r in project["optional-dependencies"]["test"]]
    assert any(r.name == project["name"] and r.extras == {"app"} for r in test)
