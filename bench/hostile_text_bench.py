"""The worst text a PR can write, reviewed through the command line, against a normal review of the
same size: a 64 KB line of backticks in a changed Markdown file (cubic for the pattern that read
code spans: 8,000 backticks took 12 s, 16 KB 105 s), a 64 KB line of `<a ` in the file a link
leads to (quadratic for the HTML anchors: 60 KB, 39 s), a 64 KB line of `[](` and of `“`, and a
PR description of 65,536 backticks, as the PR's own (`--pr-body`) and as another open PR's
(`--pr-body-of`, the duplicates check's closing keywords). 64 KB is the longest line a check
reads (bot/textlines.py's MAX_LINE_CHARS), 65,536 characters GitHub's longest description.

Each review runs in a process of its own (`chart-review review`, a chart rendered beside the docs),
which reports its time and its peak RSS. Target: each under 5 s, and its peak within a few MB of
the normal review's (flat memory).

    .venv/bin/python bench/hostile_text_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.textlines import MAX_LINE_CHARS  # noqa: E402

BODY_CHARS = 65_536
TARGET_SECONDS = 5.0
CHART = {
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
    "app/values.yaml": "replicas: 1\n",
    "app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
    "data:\n  replicas: {{ .Values.replicas | quote }}\n",
}
# What each case writes: (the changed Markdown line's unit, the linked file's unit, the body's).
CASES = {
    "normal": ("word ", "word ", "word "),
    "backticks line": ("`", "word ", "word "),
    "<a line (linked file)": ("word ", "<a ", "word "),
    "[]( line": ("[](", "word ", "word "),
    "“ line": ("“", "word ", "word "),
    "backticks description": ("word ", "word ", "`"),
}
# The child: one review through the CLI's main, then its own time and peak RSS.
CHILD = """
import json, resource, sys, time
from bot.cli.main import main
start = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"code": code, "seconds": seconds, "peak_kb": peak}), file=sys.stderr)
"""


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env |= {"GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def build(root: Path, case: tuple[str, str, str]) -> tuple[Path, Path]:
    """A repository whose PR (`pr`) adds a line to docs/guide.md and a link to docs/target.md, and
    an open PR (`other`) beside it; the PR's description and the other's body, as files."""
    changed, linked, body = case
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "develop")
    write(root, CHART)
    write(root, {"docs/target.md": f"# Target\n\n{fill(linked, MAX_LINE_CHARS)}\n"})
    write(root, {"docs/guide.md": "# Guide\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "app and docs")
    git(root, "checkout", "-q", "-b", "other")
    write(root, {"docs/other.md": "# Other\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "other docs")
    git(root, "checkout", "-q", "-b", "pr", "develop")
    line = fill(changed, MAX_LINE_CHARS)
    guide = f"# Guide\n\n## {line}\n\n{line}\n\nSee [the target](target.md#target) #{line}\n"
    write(root, {"docs/guide.md": guide, "app/values.yaml": "replicas: 2\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "guide")
    description = root.parent / f"{root.name}-body.md"
    description.write_text("#" + fill(body, BODY_CHARS - 1))
    return root, description


def review(repo: Path, description: Path) -> dict[str, float]:
    args = ["review", "--repo", str(repo), "--base", "develop", "--head", "pr"]
    args += ["--pr-body", str(description), "--open-pr", "2=other"]
    args += ["--pr-body-of", f"2={description}", "--format", "json", "--output", "/dev/null"]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=False
    )
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if not last.startswith("{"):
        raise SystemExit(f"the review did not finish: {done.stderr.strip()[-2000:]}")
    result: dict[str, float] = json.loads(last)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="reviews of each case (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repos = {
            name: build(Path(tmp) / f"case{i}", case)
            for i, (name, case) in enumerate(CASES.items())
        }
        results = {}
        for name, (repo, description) in repos.items():
            runs = [review(repo, description) for _ in range(args.rounds)]
            seconds = statistics.median(r["seconds"] for r in runs)
            peak = max(r["peak_kb"] for r in runs) / 1024
            results[name] = (seconds, peak)
    normal_seconds, normal_peak = results["normal"]
    print(f"{'case':<24} {'seconds':>8} {'x normal':>9} {'peak MB':>8} {'+MB':>6}")
    worst = 0.0
    for name, (seconds, peak) in results.items():
        worst = max(worst, seconds)
        print(
            f"{name:<24} {seconds:8.2f} {seconds / normal_seconds:9.2f} "
            f"{peak:8.1f} {peak - normal_peak:6.1f}"
        )
    verdict = "within" if worst < TARGET_SECONDS else "OVER"
    print(f"slowest {worst:.2f} s: {verdict} the {TARGET_SECONDS:.0f} s target")


if __name__ == "__main__":
    main()
