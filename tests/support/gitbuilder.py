"""Real git repositories for tests, built in a few chained calls:
`GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init").branch("pr").write(...).commit("change")`.
The first branch is `develop`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitBuilder:
    def __init__(self, path: Path, branch: str = "develop", bare: bool = False) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.run_git("init", "-q", "-b", branch, *(["--bare"] if bare else []))

    def run_git(self, *args: str, check: bool = True) -> str:
        env = {**os.environ, **_ENV, "HOME": str(self.path)}
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def write(self, path: str, text: str) -> GitBuilder:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return self

    def remove(self, path: str) -> GitBuilder:
        (self.path / path).unlink()
        return self

    def symlink(self, path: str, to: str) -> GitBuilder:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(to)
        return self

    def commit(self, message: str) -> GitBuilder:
        self.run_git("add", "-A")
        self.run_git("commit", "-q", "--allow-empty", "-m", message)
        return self

    def branch(self, name: str, from_: str | None = None) -> GitBuilder:
        """Create `name` (from `from_`, else the current commit) and check it out."""
        self.run_git("checkout", "-q", "-b", name, *([from_] if from_ else []))
        return self

    def checkout(self, name: str) -> GitBuilder:
        self.run_git("checkout", "-q", name)
        return self

    def merge(self, name: str, message: str | None = None) -> GitBuilder:
        self.run_git("merge", "-q", "--no-ff", "-m", message or f"Merge {name}", name)
        return self

    def tag(self, name: str, ref: str = "HEAD") -> GitBuilder:
        self.run_git("tag", name, ref)
        return self

    def pull_ref(self, number: int, ref: str) -> GitBuilder:
        """What GitHub keeps for every PR: `refs/pull/N/head`."""
        self.run_git("update-ref", f"refs/pull/{number}/head", self.sha(ref))
        return self

    def sha(self, ref: str = "HEAD") -> str:
        return self.run_git("rev-parse", f"{ref}^{{commit}}")
