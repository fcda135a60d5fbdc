"""Every process the command line starts (render processes, git's long-lived and streamed ones) is
reaped by it before it exits: none is left to whoever adopts orphans, running or as a zombie.

The harness is a child subreaper (Linux's PR_SET_CHILD_SUBREAPER): a process the CLI started and
did not reap becomes the harness's child when the CLI exits, where it is seen, named and ended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

HARNESS = """
import ctypes, json, os, signal, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
cli = subprocess.run([sys.executable, "-m", "bot.cli", *sys.argv[1:]], capture_output=True)
adopted = []
for task in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{task}/children") as f:
        adopted += [int(pid) for pid in f.read().split()]
left = []
for pid in adopted:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\\0", b" ").decode().strip()
        with open(f"/proc/{pid}/stat") as f:
            name, _, rest = f.read().partition(" (")[2].rpartition(") ")
        state = rest[:1]
    except OSError:
        command, name, state = "?", "?", "?"
    left.append({"name": name, "command": command, "state": state})
    if state != "Z":
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(json.dumps({"exit": cli.returncode, "left": left, "stderr": cli.stderr.decode()[-2000:]}))
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("other").write("app/values.yaml", "replicas: 2\n").commit("other PR")
    g.checkout("develop").branch("pr")
    g.write("app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.1\n").commit("bump")
    return g.pull_ref(1, "other").pull_ref(2, "pr")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux subreaper")
def test_a_review_leaves_no_process_behind(repo: GitBuilder) -> None:
    """A review with its default options: open PRs discovered from the refs (their renders for
    the duplicates check), lint and every check on."""
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", "refs/pull/2/head"]
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, *args], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["exit"] in (0, 1), outcome["stderr"]
    assert outcome["left"] == []
