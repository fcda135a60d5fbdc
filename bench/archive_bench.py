"""Hostile chart archives against the bounded reader (bot/tarball/), through the command line.

`--case hostile` (the default) builds the worst archive the red team found, a gzip of 2,000,000
members of no size (4.4 MB; identical headers compress ~230:1), here in a temporary directory,
never committed. A PR vendors it as `app/charts/redis-1.0.0.tgz`; another PR vendors an ordinary
redis archive in its place. Each is reviewed by `chart-review review` in a process of its own, and
so is a third PR that only edits values.yaml: alone, with the ordinary PR open beside it, and with
the hostile one open beside it instead (the duplicates check looks at other open PRs' trees). Reported per review: wall time and the
review process's peak RSS (its render processes are apart), and what the review said of the
chart. Target: the hostile archive is "not reviewed", naming the cap, in under 5 s, with the peak
RSS of the ordinary review; the hostile PR open beside the victim costs its review no more than the
ordinary one does.

`--case corpus` runs the pre-check over every `.tgz` committed at the tips of the mirrors
(`--mirrors`, default /work/.mirror: bare repositories under `*/repo`) and reports how many it
read, any it refused and why, and the most members, header bytes, bytes unpacked and nesting depth
one archive had: what the caps in bot/tarball/limits.py are measured against.

    .venv/bin/python bench/archive_bench.py [--case hostile|corpus] [--members N] [--mirrors DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.charts.schemas import archive_verdict  # noqa: E402
from bot.tarball.headers import ArchiveRefused  # noqa: E402
from bot.tarball.limits import LIMITS  # noqa: E402
from bot.tarball.reader import Budget, members  # noqa: E402
from tests.support.charts import chart_files  # noqa: E402
from tests.support.gitbuilder import GitBuilder  # noqa: E402
from tests.support.tarballs import empty_members, subchart  # noqa: E402

VENDORED = "app/charts/redis-1.0.0.tgz"
# How the schema rule (bot/charts/schemas.py), which the caps leave as it was, says why.
SCHEMA_REASONS = (
    "names a document outside the schema",
    "moves the base that references resolve against",
    "is not a draft the validator knows without fetching it",
)
TARGET_SECONDS = 5.0
FLAT_MIB = 50  # "flat": the hostile review's peak RSS within this of the ordinary one's


def build_repository(root: Path, count: int) -> tuple[GitBuilder, int]:
    g = GitBuilder(root / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    hostile = empty_members(count)
    for branch, data in (("hostile", hostile), ("normal", subchart("redis"))):
        g.checkout("develop").branch(branch)
        target = g.path / VENDORED
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        g.commit(f"vendor redis ({branch})")
    values = chart_files()["app/values.yaml"].replace("memory: 64Mi", "memory: 96Mi", 1)
    g.checkout("develop").branch("victim").write("app/values.yaml", values).commit("more memory")
    return g, len(hostile)


def timed_review(g: GitBuilder, head: str, out: Path, *extra: str) -> tuple[float, float, dict]:
    """`chart-review review` in a process of its own: seconds, its peak RSS in MiB, the report."""
    args = [sys.executable, "-m", "bot.cli.main", "review", "--repo", str(g.path)]
    args += ["--base", "develop", "--head", head, "--format", "json", "--output", str(out)]
    started = time.perf_counter()
    child = subprocess.Popen([*args, *extra], cwd=Path(__file__).resolve().parent.parent)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"review of {head} exited {code}")
    return seconds, usage.ru_maxrss / 1024, json.loads(out.read_text())


def said(report: dict) -> str:
    (chart,) = report["charts"]
    if chart["not_reviewed"]:
        return f"not reviewed: {chart['not_reviewed']}"
    notices = [f["title"] for f in report["findings"] if f["rule"] == "not-compared"]
    return "reviewed" + (f"; {notices[0]}" if notices else "")


def hostile_case(count: int) -> int:
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        started = time.perf_counter()
        g, size = build_repository(Path(tmp), count)
        print(
            f"built a gzip of {count:,} empty members: {size / 1e6:.1f} MB, "
            f"{count * 512 / 2**30:.2f} GiB of headers unpacked "
            f"({time.perf_counter() - started:.1f} s)"
        )
        rows = [
            ("normal", "normal", ()),
            ("hostile", "hostile", ()),
            ("victim", "victim", ("--no-open-prs",)),
            ("victim + open normal PR", "victim", ("--open-pr", f"1={g.sha('normal')}")),
            ("victim + open hostile PR", "victim", ("--open-pr", f"1={g.sha('hostile')}")),
        ]
        results = {}
        print(f"{'review':<26} {'seconds':>8} {'peak MiB':>9}  what it said")
        for label, head, extra in rows:
            flags = extra if extra else ("--no-open-prs",)
            seconds, peak, report = timed_review(g, head, Path(tmp) / f"{label}.json", *flags)
            results[label] = (seconds, peak)
            print(f"{label:<26} {seconds:8.2f} {peak:9.0f}  {said(report)[:160]}")
    return verdict(results)


def verdict(results: dict[str, tuple[float, float]]) -> int:
    hostile, normal = results["hostile"], results["normal"]
    beside, ordinary = results["victim + open hostile PR"], results["victim + open normal PR"]
    fast = hostile[0] < TARGET_SECONDS
    flat = hostile[1] - normal[1] < FLAT_MIB and beside[1] - ordinary[1] < FLAT_MIB
    print(
        f"hostile: {hostile[0]:.2f} s (target < {TARGET_SECONDS:g} s), peak RSS "
        f"{hostile[1] - normal[1]:+.0f} MiB against the ordinary review; the victim's review "
        f"beside the hostile PR {beside[0] / ordinary[0]:.2f}x its time beside an ordinary one, "
        f"{beside[1] - ordinary[1]:+.0f} MiB (flat: within {FLAT_MIB} MiB) "
        f"-> {'ok' if fast and flat else 'MISSED'}"
    )
    return 0 if fast and flat else 1


def committed_archives(mirrors: Path) -> Iterator[tuple[str, str, bytes]]:
    """(repository, path, bytes) of every .tgz at the tip of any ref of each mirror, once per
    blob; a blob the mirror lacks (a snapshot leaves out files of 4 MiB and more) is skipped."""
    for repo in sorted(mirrors.glob("*/repo")):
        listing = subprocess.run(
            ["git", "-C", str(repo), "rev-list", "--objects", "--no-walk", "--all"]
            + ["--missing=allow-any"],
            capture_output=True,
            text=True,
        ).stdout
        found = dict(
            line.split(" ", 1)[::-1] for line in listing.splitlines() if line.endswith(".tgz")
        )
        batch = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert batch.stdin is not None and batch.stdout is not None
        for path, oid in sorted(found.items()):
            batch.stdin.write(f"{oid}\n".encode())
            batch.stdin.flush()
            head = batch.stdout.readline().split()
            if head[1:2] == [b"missing"]:
                continue
            blob = batch.stdout.read(int(head[2]))
            batch.stdout.read(1)
            yield repo.parent.name, path, blob
        batch.stdin.close()
        batch.wait()


def corpus_case(mirrors: Path) -> int:
    """Every archive is read to its end for its counts, a refused one too (a schema that reaches
    out is no reason to leave its size out): what the caps must sit above."""
    count, refused = 0, []
    most = {"members": 0, "header bytes": 0, "bytes unpacked": 0, "depth": 0}
    for repo, path, data in committed_archives(mirrors):
        count += 1
        verdict = archive_verdict(data)
        if verdict.why is not None:
            refused.append(f"{repo}:{path}: {verdict.why}")
        budget, depth = Budget(), 0
        with contextlib.suppress(ArchiveRefused):  # said above
            depth = max((len(m.within) for m in members(data, budget=budget)), default=0)
        cost = budget.cost
        for key, value in zip(
            most, (cost.members, cost.header_bytes, cost.decompressed_bytes, depth), strict=True
        ):
            most[key] = max(most[key], value)
    capped = [line for line in refused if not line.endswith(SCHEMA_REASONS)]
    print(
        f"{count:,} archives read; {len(refused)} refused, {len(capped)} of them not for a schema"
    )
    for line in capped:
        print(f"  refused: {line}")
    print("the most in one archive: " + ", ".join(f"{k} {v:,}" for k, v in most.items()))
    caps = (LIMITS.members, LIMITS.header_bytes, LIMITS.decompressed_bytes, LIMITS.depth)
    shown = ", ".join(f"{k} {v:,}" for k, v in zip(most, caps, strict=True))
    print(f"the caps:               {shown}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=["hostile", "corpus"], default="hostile")
    parser.add_argument("--members", type=int, default=2_000_000)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    if args.case == "corpus":
        return corpus_case(args.mirrors)
    return hostile_case(args.members)


if __name__ == "__main__":
    raise SystemExit(main())
