"""The corpus's open pull requests: each repository's most recent PR heads that were still open at
its pinned tip (not an ancestor of it, no `(#N)` squash of it on the branch), reviewed against the
tip as the App would review them, with the other open PRs discovered from `refs/pull/*/head`.

A replay (run.py) cannot see what was open at the time, so the checks about other PRs (duplicates,
the version race) and the suggested changes meet real PRs here. Every failure and warning, and
every `comments` notice, is held against verdicts.yaml as run.py holds the replay's (`commit` is
the PR head). Also counted: suggestions offered (verified by a render) and refused, and how many
failures and warnings can be inline review comments (on a line the PR added at head, as the App
posts them), and how many could before value provenance (issue 40) moved them from their template
line (kept as the finding's rendered origin) to the values line that set them. Usage:

    CORPUS_DIR=~/corpus python bench/corpus/open_prs.py [--per-repo N] [--missing FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from run import HERE, ROOT, TRIAGED_NOTICES, Fired, clone_of, load_verdicts, skeleton  # noqa: E402

from bot.git.repo import GitRepo  # noqa: E402

# The mirrors' tips are months old: discovery's default age would count no PR as open.
MAX_AGE_DAYS = "400"


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True).stdout


def open_at_tip(clone: Path, tip: str, per_repo: int) -> list[tuple[int, str]]:
    """The `per_repo` most recently committed PR heads that the tip had not merged."""
    refs = git(
        clone,
        "for-each-ref",
        "--sort=-committerdate",
        "--format=%(refname) %(objectname)",
        "refs/pull/*/head",
    ).split("\n")
    squashed = set(git(clone, "log", "--first-parent", "--format=%s", tip).splitlines())
    found = []
    for line in filter(None, refs):
        ref, sha = line.split()
        number = int(ref.split("/")[2])
        merged = subprocess.run(["git", "-C", str(clone), "merge-base", "--is-ancestor", sha, tip])
        if merged.returncode == 0 or any(s.endswith(f"(#{number})") for s in squashed):
            continue
        found.append((number, sha))
        if len(found) == per_repo:
            break
    return found


def review(clone: Path, tip: str, sha: str, out: Path) -> dict[str, Any] | str:
    command = [sys.executable, "-m", "bot.cli", "review", "--repo", str(clone), "--base", tip]
    command += ["--head", sha, "--offline", "--open-pr-max-age", MAX_AGE_DAYS]
    command += ["--format", "json", "--output", str(out)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        return (proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"])[0]
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def changed_lines(clone: Path, tip: str, sha: str) -> dict[str, frozenset[int]]:
    """The lines the PR added at head, by path, from its merge base with the tip."""
    repo = GitRepo(clone)
    try:
        changes = repo.changes_from_merge_base(tip, sha) or ()
    finally:
        repo.close()
    return {c.path: c.added_lines for c in changes if c.added_lines}


def inline(report: dict[str, Any], changed: dict[str, frozenset[int]]) -> tuple[int, int, int]:
    """(failures and warnings, those on a line the PR changed, those there before provenance)."""
    loud = [f for f in report["findings"] if f["severity"] in ("failure", "warning")]
    now = sum(1 for f in loud if _on_changed(f["path"], f["line"], f["data"], changed))
    before = 0
    for f in loud:
        origin = f.get("origin") or {}
        moved = origin.get("values") is not None
        path, line = (origin["path"], origin["line"]) if moved else (f["path"], f["line"])
        before += _on_changed(path, line, {} if moved else f["data"], changed)
    return len(loud), now, before


def _on_changed(
    path: str | None, line: int | None, data: dict[str, Any], changed: dict[str, frozenset[int]]
) -> bool:
    lines = changed.get(path or "", frozenset())
    s = data.get("suggestion") or {}
    if "verified_on" in s and s.get("path") == path:
        return set(range(s["start_line"], s["line"] + 1)) <= lines
    return line is not None and line in lines


def fired(repo: str, sha: str, report: dict[str, Any]) -> list[Fired]:
    return [
        Fired(repo, sha, f["check"], f["rule"], f["chart"], f["severity"], f["title"], f["message"])
        for f in report["findings"]
        if f["severity"] in ("failure", "warning") or f["check"] in TRIAGED_NOTICES
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-repo", type=int, default=6)
    parser.add_argument("--missing", metavar="FILE")
    args = parser.parse_args()
    corpus = os.environ.get("CORPUS_DIR") or sys.exit("set CORPUS_DIR (see bench/corpus/)")
    verdicts = load_verdicts(HERE / "verdicts.yaml")
    findings: list[Fired] = []
    errors, offered, refused, reviewed = [], 0, 0, 0
    loud = placed = placed_before = 0
    with tempfile.TemporaryDirectory() as tmp:
        for entry in yaml.safe_load((HERE / "repos.yaml").read_text())["repositories"]:
            clone = clone_of(Path(corpus), entry["repo"])
            for number, sha in open_at_tip(clone, entry["tip"], args.per_repo):
                result = review(clone, entry["tip"], sha, Path(tmp) / f"{number}.json")
                if isinstance(result, str):
                    errors.append(f"{entry['repo']}#{number}: {result}")
                    continue
                reviewed += 1
                findings += fired(entry["repo"], sha, result)
                data = [f.get("data") or {} for f in result["findings"]]
                offered += sum(1 for d in data if "verified_on" in d.get("suggestion", {}))
                refused += sum(1 for d in data if "suggestion_refused" in d)
                counted = inline(result, changed_lines(clone, entry["tip"], sha))
                loud, placed, placed_before = (
                    a + b for a, b in zip((loud, placed, placed_before), counted, strict=True)
                )
    judged = {f: next((v for v in verdicts if v.matches(f)), None) for f in findings}
    untriaged = [f for f, v in judged.items() if v is None]
    false = [f for f, v in judged.items() if v is not None and not v.true]
    print(f"open PRs reviewed: {reviewed}; tool errors: {len(errors)}")
    for check in sorted({f.check for f in findings}):
        mine = [(f, v) for f, v in judged.items() if f.check == check]
        true = sum(1 for _, v in mine if v is not None and v.true)
        print(
            f"  {check}: {true} true, {sum(1 for _, v in mine if v is not None and not v.true)} "
            f"false, {sum(1 for _, v in mine if v is None)} untriaged"
        )
    print(f"suggestions: {offered} offered (each verified by a render), {refused} refused")
    print(
        f"inline: {placed} of {loud} failures and warnings on a line the PR changed "
        f"({_share(placed, loud)}); before provenance {placed_before} ({_share(placed_before, loud)})"
    )
    for f in untriaged:
        print(f"UNTRIAGED {f.repo} {f.commit[:12]} {f.check}/{f.rule} {f.chart}: {f.title}")
    for f in false:
        print(f"FALSE, STILL FIRES {f.repo} {f.commit[:12]} {f.check}/{f.rule}: {f.title}")
    for e in errors:
        print(f"TOOL ERROR {e}")
    if args.missing and untriaged:
        Path(args.missing).write_text(skeleton(untriaged))
    return 1 if untriaged or false or errors else 0


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


if __name__ == "__main__":
    sys.exit(main())
