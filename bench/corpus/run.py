"""`make corpus`: replay the public chart repositories of repos.yaml and hold every failure and
warning the bot posts against the triaged verdicts of verdicts.yaml.

It fails on a failure or warning that has no verdict (triage it: is it true, in the chart's source?),
on a verdict `false` that still fires (a false finding the bot must not post), and on any tool
error. A measurement, not a test: the clones are not on a fresh machine. Usage:

    CORPUS_DIR=~/corpus python bench/corpus/run.py [--set train|heldout|all] [--only OWNER/NAME]
        [--missing FILE] [--json FILE]

`--set`: the repositories fixed on (`train`), the held-out ones (`heldout`, repos.yaml's
`heldout: true`), or all (the default). Per repository it prints the changes, false failures, false
warnings (as a share of the changes), silent passes (a change said to pass while a chart it touched
was compared on no profile) and tool errors, and the time. `--missing FILE` writes a verdict
skeleton for each untriaged finding, to fill in and append; `--json FILE` the figures."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
JOBS = 2  # repositories replayed at once; each review already renders in its own processes


@dataclass(frozen=True)
class Fired:
    """One failure or warning the replay posted."""

    repo: str
    commit: str
    check: str
    rule: str
    chart: str | None
    severity: str
    title: str
    message: str


@dataclass(frozen=True)
class Verdict:
    repo: str
    commits: tuple[str, ...]  # prefixes of replayed changes' commits
    check: str
    rule: str
    chart: str | None
    true: bool
    why: str

    def matches(self, f: Fired) -> bool:
        return (
            (self.repo, self.check, self.rule) == (f.repo, f.check, f.rule)
            and (self.chart is None or self.chart == f.chart)
            and any(f.commit.startswith(c) for c in self.commits)
        )


def load_verdicts(path: Path) -> list[Verdict]:
    entries = (yaml.safe_load(path.read_text()) or {}).get("verdicts") or []
    out = []
    for i, e in enumerate(entries, 1):
        missing = [k for k in ("repo", "commit", "check", "rule", "verdict", "why") if k not in e]
        if missing or not isinstance(e["verdict"], bool):
            sys.exit(f"{path}: verdict {i}: needs {', '.join(missing) or 'verdict: true|false'}")
        commits = e["commit"] if isinstance(e["commit"], list) else [e["commit"]]
        out.append(
            Verdict(
                e["repo"],
                tuple(str(c) for c in commits),
                e["check"],
                e["rule"],
                e.get("chart"),
                e["verdict"],
                e["why"],
            )
        )
    return out


def clone_of(corpus: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (f"{owner}+{name}/repo", f"{owner}+{name}", f"{owner}/{name}", name):
        if (corpus / candidate).is_dir():
            return corpus / candidate
    sys.exit(f"{repo}: no clone in {corpus} (git clone --bare https://github.com/{repo})")


def replay(entry: dict[str, Any], clone: Path, out: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "bot.cli", "replay", "--repo", str(clone)]
    command += ["--branch", entry["tip"], "--last", str(entry["last"]), "--format", "json"]
    command += ["--output", str(out)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return {"failed": tail[0]}
    result: dict[str, Any] = json.loads(out.read_text())
    return result


# Notices triaged all the same: a stale comment is only ever a notice, and its truth is the
# check's whole point.
TRIAGED_NOTICES = frozenset({"comments"})


def fired(repo: str, result: dict[str, Any]) -> Iterator[Fired]:
    for change in result["changes"]:
        for f in (change["report"] or {}).get("findings", []):
            if f["severity"] in ("failure", "warning") or f["check"] in TRIAGED_NOTICES:
                yield Fired(
                    repo,
                    change["commit"],
                    f["check"],
                    f["rule"],
                    f["chart"],
                    f["severity"],
                    f["title"],
                    f["message"],
                )


def skeleton(findings: Iterable[Fired]) -> str:
    entries = [
        {
            "repo": f.repo,
            "commit": f.commit[:12],
            "check": f.check,
            "rule": f.rule,
            "chart": f.chart,
            "verdict": None,
            "why": f"TODO ({f.severity}) {f.title} :: {f.message[:300]}",
        }
        for f in findings
    ]
    return yaml.safe_dump({"verdicts": entries}, sort_keys=False, width=100, allow_unicode=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", metavar="OWNER/NAME", help="replay this repository only")
    parser.add_argument(
        "--set", choices=("train", "heldout", "all"), default="all", help="which repositories"
    )
    parser.add_argument("--json", metavar="FILE", help="write the figures here")
    parser.add_argument(
        "--keep", metavar="DIR", help="keep each repository's replay JSON here (OWNER+NAME.json)"
    )
    parser.add_argument(
        "--judge",
        metavar="DIR",
        help="judge the replays --keep kept there against verdicts.yaml, replaying nothing",
    )
    parser.add_argument(
        "--missing", metavar="FILE", help="write untriaged findings' skeletons here"
    )
    args = parser.parse_args()
    listed = yaml.safe_load((HERE / "repos.yaml").read_text())["repositories"]
    entries = [e for e in listed if args.only in (None, e["repo"]) and _in_set(e, args.set)]
    verdicts = load_verdicts(HERE / "verdicts.yaml")
    if args.judge:
        results = {e["repo"]: _kept(Path(args.judge), e["repo"]) for e in entries}
    else:
        results = replay_all(entries, args.keep)
    code = report(results, verdicts, args.missing)
    if args.json:
        figures = {repo: per_repository(repo, r, verdicts) for repo, r in results.items()}
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return code


def replay_all(entries: list[dict[str, Any]], keep: str | None) -> dict[str, dict[str, Any]]:
    corpus = os.environ.get("CORPUS_DIR")
    if not corpus:
        sys.exit("set CORPUS_DIR to the directory holding the clones (see bench/corpus/repos.yaml)")
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(JOBS) as pool:
        where = Path(keep or tmp)
        where.mkdir(parents=True, exist_ok=True)
        jobs = {
            e["repo"]: pool.submit(
                replay, e, clone_of(Path(corpus), e["repo"]), where / _kept_name(e["repo"])
            )
            for e in entries
        }
        return {repo: job.result() for repo, job in jobs.items()}


def _kept_name(repo: str) -> str:
    return repo.replace("/", "+") + ".json"


def _kept(directory: Path, repo: str) -> dict[str, Any]:
    path = directory / _kept_name(repo)
    if not path.is_file():
        return {"failed": f"no replay kept at {path}"}
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def _in_set(entry: dict[str, Any], wanted: str) -> bool:
    held = bool(entry.get("heldout"))
    return wanted == "all" or held == (wanted == "heldout")


def silent_passes(result: dict[str, Any]) -> list[str]:
    """The changes said to pass (nothing above a notice) while a chart they touched was compared on
    no profile: nothing looked, and nothing said so."""
    found = []
    for change in result.get("changes", []):
        charts = (change.get("report") or {}).get("charts", [])
        if change["verdict"] != "pass":
            continue
        for chart in charts:
            failed = {e["profile"] for e in chart.get("render_errors", []) if e["side"] == "head"}
            if chart.get("not_reviewed") or not set(chart.get("profiles", [])) - failed:
                found.append(f"{change['commit'][:12]} {chart['path']}")
    return found


def per_repository(repo: str, result: dict[str, Any], verdicts: list[Verdict]) -> dict[str, Any]:
    """One repository's figures: what the issue's table counts."""
    if "failed" in result:
        return {"repo": repo, "tool_errors": 1, "error": result["failed"]}
    changes = result["changes"]
    judged = [(f, next((v for v in verdicts if v.matches(f)), None)) for f in fired(repo, result)]

    def count(severity: str, true: bool | None) -> int:
        return sum(
            1
            for f, v in judged
            if f.severity == severity and (v.true if v is not None else None) is true
        )

    reviewed = result["summary"]["reviewed"]
    return {
        "repo": repo,
        "changes": reviewed,
        "failures_true": count("failure", True),
        "failures_false": count("failure", False),
        "failures_untriaged": count("failure", None),
        "warnings_true": count("warning", True),
        "warnings_false": count("warning", False),
        "warnings_false_pct": round(100 * count("warning", False) / max(reviewed, 1), 2),
        "warnings_untriaged": count("warning", None),
        "silent_passes": len(silent_passes(result)),
        "tool_errors": sum(1 for c in changes if c["verdict"] == "error"),
        "seconds": round(result["summary"]["seconds"]["total"], 1),
    }


def report(results: dict[str, dict[str, Any]], verdicts: list[Verdict], missing: str | None) -> int:
    errors = [f"{repo}: {r['failed']}" for repo, r in results.items() if "failed" in r]
    done = {repo: r for repo, r in results.items() if "failed" not in r}
    changes = [c for r in done.values() for c in r["changes"]]
    errors += [
        f"{repo}: {c['commit'][:12]}: {c['error']}"
        for repo, r in done.items()
        for c in r["changes"]
        if c["verdict"] == "error"
    ]
    findings = [f for repo, r in done.items() for f in fired(repo, r)]
    judged = {f: next((v for v in verdicts if v.matches(f)), None) for f in findings}
    untriaged = [f for f, v in judged.items() if v is None]
    false = [f for f, v in judged.items() if v is not None and not v.true]
    used = {id(v) for v in judged.values() if v is not None}
    # Stale: its change was replayed and it did not fire (an open PR's verdict is open_prs.py's).
    replayed = {(repo, c["commit"]) for repo, r in done.items() for c in r["changes"]}
    stale = [
        v
        for v in verdicts
        if id(v) not in used
        and any(repo == v.repo and sha.startswith(v.commits) for repo, sha in replayed)
    ]
    print_figures(done, changes, judged, errors)
    for f in untriaged:
        print(f"UNTRIAGED {f.repo} {f.commit[:12]} {f.check}/{f.rule} {f.chart}: {f.title}")
    for f in false:
        print(f"FALSE, STILL FIRES {f.repo} {f.commit[:12]} {f.check}/{f.rule}: {f.title}")
    for v in stale:
        state = (
            "fixed (no longer fires)" if not v.true else "no longer fires (a true finding lost?)"
        )
        print(f"STALE VERDICT {v.repo} {','.join(v.commits)} {v.check}/{v.rule}: {state}")
    for e in errors:
        print(f"TOOL ERROR {e}")
    if missing and untriaged:
        Path(missing).write_text(skeleton(untriaged))
    return 1 if untriaged or false or errors else 0


def print_figures(
    done: dict[str, dict[str, Any]],
    changes: list[dict[str, Any]],
    judged: dict[Fired, Verdict | None],
    errors: list[str],
) -> None:
    def count(severity: str, true: bool | None) -> int:
        return sum(
            1
            for f, v in judged.items()
            if f.severity == severity and (v.true if v is not None else None) is true
        )

    every = [f for c in changes for f in (c["report"] or {}).get("findings", [])]
    offered = sum(1 for f in every if "verified_on" in (f.get("data") or {}).get("suggestion", {}))
    refused = sum(1 for f in every if "suggestion_refused" in (f.get("data") or {}))

    def count_check(check: str, true: bool | None) -> int:
        return sum(
            1
            for f, v in judged.items()
            if f.check == check and (v.true if v is not None else None) is true
        )

    reviewed = sum(r["summary"]["reviewed"] for r in done.values())
    not_reviewed = sum(1 for c in changes if c["verdict"] == "not-reviewed")
    seconds = [c["seconds"] for c in changes]
    false_warnings = count("warning", False)
    print(f"repositories: {len(done)}; changes reviewed: {reviewed}")
    print(
        "  repository                                  changes  F true/false  W true/false (%)"
        "  silent  errors   time"
    )
    for repo, r in done.items():
        f = per_repository(repo, r, [v for f, v in judged.items() if v is not None])
        print(
            f"  {repo:<42} {f['changes']:>7}  {f['failures_true']:>4}/{f['failures_false']:<5}"
            f"  {f['warnings_true']:>4}/{f['warnings_false']:<3}({f['warnings_false_pct']:.1f}%)"
            f"  {f['silent_passes']:>6}  {f['tool_errors']:>6}  {f['seconds']:>5.1f}s"
        )
    print(
        f"failures: {count('failure', True)} true, {count('failure', False)} false, "
        f"{count('failure', None)} untriaged"
    )
    print(
        f"warnings: {count('warning', True)} true, {false_warnings} false "
        f"({100 * false_warnings / max(reviewed, 1):.1f}% of reviewed changes), "
        f"{count('warning', None)} untriaged"
    )
    print(f"changes with a chart not reviewed: {not_reviewed}")
    for check in ("duplicates", "comments"):
        print(
            f"{check}: {count_check(check, True)} true, {count_check(check, False)} false, "
            f"{count_check(check, None)} untriaged"
        )
    print(f"suggestions: {offered} offered (each verified by a render), {refused} refused")
    silent = [f"{repo}: {s}" for repo, r in done.items() for s in silent_passes(r)]
    print(f"silent passes: {len(silent)}")
    for line in silent:
        print(f"  SILENT PASS {line}")
    print(f"tool errors: {len(errors)}")
    if seconds:
        print(f"time: {sum(seconds):.1f} s reviewing, median {statistics.median(seconds):.2f} s")


if __name__ == "__main__":
    sys.exit(main())
