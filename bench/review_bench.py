"""How much a whole review costs next to the Helm renders it needs, measured in one run as ratios.

A generated chart of ~50 templates and 5 profiles, base and head in a real git repository. Each round
times (a) the engine's whole review with cold caches (renders, parses, QoS classes, tree listings)
and (b) the same 10 renders alone (Helm loading the chart directory and rendering it, nothing else),
as many at once as the engine renders. Reported: medians, and their ratio.
Target: the review costs at most 2x the raw renders; each check's share of the renders is listed,
and the QoS check's alone (target: well under 5%). The repository is packed, as the bot's mirrors
are.
The review renders as the bot does, in the sandbox's render processes; `--in-process` renders in this
process instead, to see what the sandbox costs.

The real-shaped case (issue 17) is a bare repository built here, shaped like a GitHub mirror: a
chart of ~50 templates with 4 profiles among 3,000 docs files, and 600 `refs/pull/N/head` forked
from develop as it moved, a third squash-merged (`(#N)` subjects), a merge ref on every fifth of
the others. The reviewed branch edits the chart. It reports, with no open PRs and with discovery
of the 600 (timed as part of the review, as the CLI runs it), the review against Helm's whole work
for it: every render and `helm lint` the review asked for (the other open PRs' renders for the
duplicates check too), redone alone; and the headings check's share. Target: <= 1.5x for all
three. Against the two sides' renders alone it is also shown: since the review lints (30-40x a
render), that is no floor any more. Last, every open PR's version claim on the chart, cold and warm,
with the 400 open PRs and again in a mirror of the same shape with 1,000 open (`--claims-prs`).

    .venv/bin/python bench/review_bench.py [--rounds N] [--templates N] [--in-process]
        [--case synthetic|real-shaped|both] [--prs N] [--docs N] [--claims-prs N]
    .venv/bin/python bench/review_bench.py --case mirror --repo MIRROR --pr N [--pr N] [--base B]

The mirror case reviews real PRs of a real GitHub mirror (`fetch`ed) as the command line does, as
the App first does and as the App does next (see `mirror_case`), against Helm's work for each alone:
where the fixed costs of a review (open-PR discovery over thousands of refs, develop's history)
show, next to a small PR's few renders.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import helm_python
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import helm_work  # noqa: E402
from all_charts_bench import RecordingRenderer, children_cpu  # noqa: E402
from cold_bench import cold_ratios  # noqa: E402

from bot.charts.resources import Resources  # noqa: E402
from bot.cli.open_prs import discover_open_prs, finding_open_prs  # noqa: E402
from bot.engine.review import Engine, ReviewInput, ReviewResult  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from bot.memos import Memos  # noqa: E402
from bot.model.context import Context, OpenPR  # noqa: E402
from bot.model.manifests import clear_parse_cache  # noqa: E402
from bot.render.base import RENDER_WORKERS, Renderer
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm  # noqa: E402
from bot.render.factory import make_renderer
from bot.review_process import tune_for_reviews  # noqa: E402
from bot.versions.claims import open_claims  # noqa: E402
from checks import REGISTRY  # noqa: E402
from checks.qos.compare import clear_memo  # noqa: E402

PROFILES = ("aks", "bm", "eks", "gke", "oc")

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ .Release.Name }}}}-svc{i}
  labels: {{{{- include "bench.labels" . | nindent 4 }}}}
spec:
  replicas: {{{{ .Values.replicas }}}}
  selector:
    matchLabels: {{app: svc{i}}}
  template:
    metadata:
      labels: {{app: svc{i}}}
    spec:
      initContainers:
        - name: init
          image: busybox
          resources: {{{{- toYaml .Values.resources | nindent 12 }}}}
      containers:
        - name: svc{i}
          image: "example/svc{i}:{{{{ .Values.tag }}}}"
          ports: [{{name: http, containerPort: 8080}}]
          readinessProbe: {{httpGet: {{path: /healthz, port: http}}}}
          env:
{{{{- range $k, $v := .Values.env }}}}
            - {{name: {{{{ $k }}}}, value: {{{{ $v | quote }}}}}}
{{{{- end }}}}
          resources: {{{{- toYaml .Values.resources | nindent 12 }}}}
"""
SERVICE = """apiVersion: v1
kind: Service
metadata: {{name: '{{{{ .Release.Name }}}}-svc{i}'}}
spec:
  selector: {{app: svc{i}}}
  ports: [{{port: 80, targetPort: http}}]
"""


def chart_files(templates: int, head: bool, profiles: tuple[str, ...] = PROFILES) -> dict[str, str]:
    """The chart's files (path under the chart → text); the head changes every fifth Deployment."""
    files = {
        "Chart.yaml": f"apiVersion: v2\nname: bench\nversion: {'2.0.0' if head else '1.0.0'}\n",
        # The head's comment changes the file, not the renders: the yaml check lints it both sides.
        "values.yaml": ("# the defaults\n" if head else "")
        + "replicas: 1\ntag: '1'\nenv: {A_PORT: '8080', LOG: info, MODE: prod}\n"
        "resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}\n",
        "templates/_helpers.tpl": '{{- define "bench.labels" -}}\napp.kubernetes.io/name: bench\n'
        "app.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n",
    }
    for i in range(templates // 2):
        text = DEPLOYMENT.format(i=i)
        if head and i % 5 == 0:
            text = text.replace("replicas: {{ .Values.replicas }}", "replicas: 2")
        files[f"templates/svc{i}-deployment.yaml"] = text
        files[f"templates/svc{i}-service.yaml"] = SERVICE.format(i=i)
    for n, name in enumerate(profiles):
        cpu = "100m" if n % 2 else "200m"
        files[f"ci/{name}-values.yaml"] = (
            f"replicas: {n + 1}\nresources: {{requests: {{cpu: {cpu}, memory: 64Mi}}, "
            f"limits: {{cpu: {cpu}, memory: 64Mi}}}}\n"
        )
    return files


def write_chart(root: Path, templates: int, head: bool) -> None:
    for path, text in chart_files(templates, head).items():
        (root / "bench" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "bench" / path).write_text(text)


def git(root: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(root),
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


# CI runs `ct lint` on the chart, so the yaml check lints what ct lint would.
CT_FILES = {
    ".github/ct.yaml": "chart-dirs: [.]\n",
    ".github/workflows/ci.yaml": "on: pull_request\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - run: ct lint --config .github/ct.yaml\n",
}


def build_repo(root: Path, templates: int) -> None:
    git(root, "init", "-q", "-b", "develop")
    write_chart(root, templates, head=False)
    for path, text in CT_FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "pr")
    write_chart(root, templates, head=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "head")
    # Packed, as the bot's mirrors are (fetched objects arrive in packs): a loose object costs git
    # a file and an inflate of its own, ~7x the chart's archive build here.
    git(root, "repack", "-adq")


def render_one(chart_dir: Path, profile: str) -> None:
    values = yaml.load((chart_dir / f"ci/{profile}-values.yaml").read_text(), yaml.CSafeLoader)
    with helm_python.Chart.load(chart_dir) as chart:
        chart.render(values=values, name="release", namespace="default", is_install=True)


def lint_one(chart_dir: Path, profile: str) -> None:
    values = yaml.load((chart_dir / f"ci/{profile}-values.yaml").read_text(), yaml.CSafeLoader)
    helm_python.chart.lint(chart_dir, values, namespace="default")


def raw_lints(head: Path, pool: ThreadPoolExecutor) -> float:
    """`helm lint` alone, as `ct lint` runs it: the head's chart, once per profile, as many at
    once as the engine renders. The review lints the base too only when the head's lint says
    something, which this chart's does not."""
    t0 = time.perf_counter()
    for future in [pool.submit(lint_one, head, name) for name in profiles_of(head)]:
        future.result()
    return time.perf_counter() - t0


def profiles_of(chart_dir: Path) -> list[str]:
    return sorted(p.name.removesuffix("-values.yaml") for p in chart_dir.glob("ci/*-values.yaml"))


def raw_renders(dirs: list[Path], pool: ThreadPoolExecutor | None = None) -> float:
    """The renders alone: Helm loads each side's chart directory and renders it for each profile, as
    `helm template -f ci/NAME-values.yaml` would, and nothing else. With `pool`, as many at once as
    the engine renders (like for like: the engine renders profiles in parallel)."""
    t0 = time.perf_counter()
    jobs = [(chart_dir, name) for chart_dir in dirs for name in profiles_of(chart_dir)]
    if pool is None:
        for job in jobs:
            render_one(*job)
    else:
        for future in [pool.submit(render_one, *job) for job in jobs]:
            future.result()
    return time.perf_counter() - t0


def main() -> None:
    tune_for_reviews()  # as the command line does: a review's process
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--templates", type=int, default=50)
    parser.add_argument("--in-process", action="store_true", help="render without the sandbox")
    parser.add_argument(
        "--case",
        choices=["synthetic", "real-shaped", "both", "mirror"],
        default="both",
        help="which repository (mirror: --repo's PRs, --pr)",
    )
    parser.add_argument(
        "--repo", type=Path, help="a GitHub mirror (refs/pull/*/head), for --case mirror"
    )
    parser.add_argument(
        "--pr", type=int, action="append", default=[], help="a PR of --repo to review (repeatable)"
    )
    parser.add_argument("--base", help="--repo's integration branch (default: its HEAD's)")
    parser.add_argument(
        "--ways",
        default="cold,cli,app,warm",
        help="the mirror case's reviews, comma-separated: cold (a fresh CLI process against a "
        "fresh process doing Helm's whole work, bench/cold_bench.py), cli, app, warm",
    )
    parser.add_argument(
        "--prs", type=int, default=600, help="refs/pull/N/head of the real-shaped case"
    )
    parser.add_argument("--docs", type=int, default=3000, help="docs files of the real-shaped case")
    parser.add_argument(
        "--claims-prs", type=int, default=1500, help="PR refs of the claims' own repository"
    )
    args = parser.parse_args()
    helm: Renderer = EmbeddedHelm() if args.in_process else make_renderer("embedded")
    pool = ThreadPoolExecutor(RENDER_WORKERS)
    if args.case in ("synthetic", "both"):
        synthetic_case(args, helm, pool)
    if args.case in ("real-shaped", "both"):
        real_shaped_case(args, helm, pool)
    if args.case == "mirror":
        if args.repo is None or not args.pr:
            parser.error("--case mirror needs --repo and at least one --pr")
        mirror_case(args, helm)


def synthetic_case(args: argparse.Namespace, helm: Renderer, pool: ThreadPoolExecutor) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build_repo(root, args.templates)
        sides = []
        for ref in ("develop", "pr"):
            dest = Path(tmp) / ref
            git(root, "worktree", "add", "-q", "--detach", str(dest), ref)
            sides.append(dest / "bench")
        repo = GitRepo(root)
        review = ReviewInput(base="develop", head="pr")
        runs = measure(repo, helm, pool, sides, {"review": lambda _: review}, args.rounds)
        result, reviews, checks_share = (
            runs.result["review"],
            runs.reviews["review"],
            runs.checks["review"],
        )
        review_s, raw_s = statistics.median(reviews), statistics.median(runs.raws)
        pods = sum(len(r.documents) for c in result.context.charts for r in c.head.values())
        print(
            f"chart: {args.templates} templates, {len(PROFILES)} profiles, 2 sides, "
            f"{'in-process' if args.in_process else 'sandboxed'} renders "
            f"({pods} objects at head); {args.rounds} rounds, medians"
        )
        print(f"whole review       {review_s * 1000:8.1f} ms")
        print(
            f"raw renders alone  {raw_s * 1000:8.1f} ms   ({RENDER_WORKERS} at once, as the engine)"
        )
        print(f"  (one at a time   {statistics.median(runs.serial) * 1000:8.1f} ms, for reference)")
        print(f"ratio review/raw   {review_s / raw_s:8.2f}x   (target <= 2.00x)")
        helm_s = raw_s + statistics.median(runs.lints)
        print(
            f"renders + head lints {helm_s * 1000:6.1f} ms   (Helm's whole work: ct lint's lint of "
            "each profile at head, besides the renders)"
        )
        print(f"ratio review/helm  {review_s / helm_s:8.2f}x")
        for name, samples in sorted(checks_share.items()):
            share = statistics.median(samples) / raw_s
            print(
                f"check {name:<12} {statistics.median(samples) * 1000:8.2f} ms = {share:6.1%} of the renders"
            )
        qos_s = qos_alone(result.context)
        print(
            f"qos alone          {qos_s * 1000:8.2f} ms = {qos_s / raw_s:6.1%} of the renders "
            "(by itself, memo cleared: every pod's class at both sides, the comparison, the JSON data)"
        )
        print(yaml.safe_dump({"ratio": round(review_s / raw_s, 3)}).strip())


@dataclass
class Runs:
    """Per labelled review: its results, times and each check's time; the raw renders' times."""

    result: dict[str, Any] = field(default_factory=dict)
    reviews: dict[str, list[float]] = field(default_factory=dict)
    checks: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    raws: list[float] = field(default_factory=list)
    serial: list[float] = field(default_factory=list)
    lints: list[float] = field(default_factory=list)
    # Per labelled review, Helm's work for it redone alone right after it, in the same round: the
    # machine's speed drifts over a run, so a review is compared with the floor taken beside it.
    floors: dict[str, list[float]] = field(default_factory=dict)
    # Per labelled review, the CPU each round's review took (this process, its render processes,
    # git's), and its floor's render processes: where a review's time went on a loaded machine,
    # which the wall clock alone does not say.
    cpu: dict[str, list[Cpu]] = field(default_factory=dict)
    floor_cpu: dict[str, list[Cpu]] = field(default_factory=dict)

    def ratio(self, label: str) -> float:
        """The median of each round's review / its floor."""
        pairs = zip(self.reviews[label], self.floors[label], strict=True)
        return statistics.median(review / floor for review, floor in pairs)


@dataclass(frozen=True)
class Cpu:
    """CPU seconds so far: this process's, its live render processes', and its ended children's
    (git's processes)."""

    own: float
    helm: float
    ended: float

    @classmethod
    def now(cls) -> Cpu:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        helm = children_cpu()
        return cls(time.process_time(), helm, ended.ru_utime + ended.ru_stime)

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(self.own - other.own, self.helm - other.helm, self.ended - other.ended)


def measure(
    repo: GitRepo,
    helm: Renderer,
    pool: ThreadPoolExecutor,
    sides: list[Path],
    inputs: dict[str, MakeInput],
    rounds: int,
    floors: Mapping[str, Callable[[], float]] | None = None,
) -> Runs:
    """Each round: every labelled review with cold caches (its input made inside the timing: open-PR
    discovery is part of the review), each followed by its floor in `floors` (Helm's work for it,
    alone), then the raw renders, pooled and one at a time."""
    runs = Runs()
    raw_renders(sides, pool)  # warm the library once, as a long-running worker would be
    for make in inputs.values():
        with Resources() as warming:
            review_on(repo, helm, make, warming)
    for _ in range(rounds):
        for label, make in inputs.items():
            # Resources of its own, so memos of its own (merge bases, listings, parses): cold.
            with Resources() as resources:
                before = Cpu.now()
                t0 = time.perf_counter()
                engine, runs.result[label] = review_on(repo, helm, make, resources)
                runs.reviews.setdefault(label, []).append(time.perf_counter() - t0)
                runs.cpu.setdefault(label, []).append(Cpu.now() - before)
            for name, seconds in engine.timings.by_check.items():
                runs.checks.setdefault(label, {}).setdefault(name, []).append(seconds)
            if floors is not None and label in floors:
                before = Cpu.now()
                runs.floors.setdefault(label, []).append(floors[label]())
                runs.floor_cpu.setdefault(label, []).append(Cpu.now() - before)
        runs.raws.append(raw_renders(sides, pool))
        runs.serial.append(raw_renders(sides))
        runs.lints.append(raw_lints(sides[-1], pool))
    return runs


# What a benchmark reviews: its input, made on the review's resources (the command line's
# discovery of open PRs runs in their pool, on their memos).
MakeInput = Callable[[Resources], ReviewInput]


def review_on(
    repo: GitRepo, renderer: Renderer, make: MakeInput, resources: Resources
) -> tuple[Engine, ReviewResult]:
    """A review on `resources`, its input made there too, as `chart-review review` makes it."""
    engine = Engine(repo, renderer, REGISTRY, RenderCache(), resources=resources)
    with resources.active():
        return engine, engine.review(make(resources))


# -- the real-shaped case: a GitHub mirror's refs, a chart among thousands of docs ---------------

REAL_PROFILES = ("aks", "eks", "gke", "oc")
CHART_DIR = "charts/bench"
DOC = """# Page {i} of section {k}

## ROLLOUT OF PAGE {i}

Before you start, read [the next page]({link}#page-{j}-of-section-{k2}).

## Notes

Plain prose: nothing here names a heading.
"""


class FastImport:
    """A `git fast-import` stream: commits with marks, each file given inline."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.marks = 0
        self.when = int(time.time()) - 3 * 86400  # recent: every unmerged PR counts as open

    def commit(self, ref: str, subject: str, parent: int | None, files: dict[str, str]) -> int:
        self.marks += 1
        self.when += 1
        head = f"commit {ref}\nmark :{self.marks}\ncommitter b <b@b> {self.when} +0000\n"
        self.parts.append(head.encode() + _data(subject))
        if parent is not None:
            self.parts.append(f"from :{parent}\n".encode())
        for path, text in files.items():
            self.parts.append(f"M 100644 inline {path}\n".encode() + _data(text))
        return self.marks

    def reset(self, ref: str, mark: int) -> None:
        self.parts.append(f"reset {ref}\nfrom :{mark}\n\n".encode())


def _data(text: str) -> bytes:
    raw = text.encode()
    return f"data {len(raw)}\n".encode() + raw + b"\n"


def docs(count: int) -> dict[str, str]:
    sections = max(1, count // 100)
    files = {}
    for n in range(count):
        k, i = n % sections, n // sections
        j, k2 = (i + 1) % (count // sections), (k + 1) % sections
        link = f"../section{k2}/page{j}.md"
        files[f"docs/section{k}/page{i}.md"] = DOC.format(i=i, k=k, j=j, k2=k2, link=link)
    return files


def pr_change(n: int, docs_paths: list[str]) -> dict[str, str]:
    """PR n's change: every fourth bumps the chart (a values tweak and its version), the others
    edit one docs page."""
    if n % 4 == 0:
        return {
            f"{CHART_DIR}/Chart.yaml": f"apiVersion: v2\nname: bench\nversion: 1.{n}.0\n",
            f"{CHART_DIR}/ci/aks-values.yaml": f"replicas: {n}\n",
        }
    path = docs_paths[n % len(docs_paths)]
    return {path: f"# Page edited by PR {n}\n\nNew text.\n"}


def build_real_shaped(root: Path, templates: int, prs: int, doc_count: int) -> None:
    """A bare repository shaped like a GitHub mirror: develop with a chart and `doc_count` docs,
    `prs` refs/pull/N/head forked from develop as it moved, a third of them squash-merged (`(#N)`),
    a merge ref for every fifth still open; then the reviewed branch `pr`, which edits the chart."""
    git(root, "init", "-q", "--bare", "-b", "develop")
    stream = FastImport()
    base = {f"{CHART_DIR}/{p}": t for p, t in chart_files(templates, False, REAL_PROFILES).items()}
    documents = docs(doc_count)
    tip = stream.commit("refs/heads/develop", "chart and docs", None, {**base, **documents})
    paths = sorted(documents)
    for n in range(1, prs + 1):
        change = pr_change(n, paths)
        head = stream.commit(f"refs/pull/{n}/head", f"change {n}", tip, change)
        if n % 3 == 0:
            tip = stream.commit("refs/heads/develop", f"change {n} (#{n})", tip, change)
        elif n % 5 == 0:
            stream.reset(f"refs/pull/{n}/merge", head)
    # A docs-only PR that rewords a heading another page links (and ALL-CAPS one): the headings
    # check's search for who still links or quotes it, across every docs file.
    reworded = f"docs/section{doc_count // 100 - 1}/page5.md"
    text = documents[reworded].replace("# Page 5 of", "# Page 5 in").replace("ROLLOUT", "ROLLING")
    stream.commit("refs/heads/pr-docs", "reword a linked heading", tip, {reworded: text})
    pr_files = chart_files(templates, True, REAL_PROFILES)
    stream.commit(
        "refs/heads/pr",
        "the reviewed change",
        tip,
        {f"{CHART_DIR}/{p}": t for p, t in pr_files.items()},
    )
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream.parts), check=True
    )
    git(root, "repack", "-adq")
    # As a mirror keeps them (`clone --mirror` and `fetch` write packed-refs: the prometheus-
    # community mirror holds its 7,985 refs there, none loose), not a file each as fast-import.
    git(root, "pack-refs", "--all")


def export_chart(root: Path, ref: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", ref, CHART_DIR], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / CHART_DIR


def real_shaped_case(args: argparse.Namespace, helm: Renderer, pool: ThreadPoolExecutor) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mirror.git"
        root.mkdir()
        t0 = time.perf_counter()
        build_real_shaped(root, args.templates, args.prs, args.docs)
        built = time.perf_counter() - t0
        sides = [export_chart(root, ref, Path(tmp) / ref) for ref in ("develop", "pr")]
        repo = GitRepo(root)
        develop, head = repo.resolve("develop"), repo.resolve("pr")
        assert develop is not None and head is not None

        def with_prs(resources: Resources) -> ReviewInput:
            # As the command line finds them: beside the review's renders.
            found = finding_open_prs(repo, develop, head, resources.pools.open_prs)
            return ReviewInput(base="develop", head="pr", open_prs_found=found)

        with_refs = f"{args.prs} PR refs"
        reworded = "a heading reworded"
        inputs = {
            "no open PRs": lambda _: ReviewInput(base="develop", head="pr"),
            with_refs: with_prs,
            reworded: lambda _: ReviewInput(base="develop", head="pr-docs"),
        }
        recorded = {label: record_helm_work(repo, helm, make) for label, make in inputs.items()}
        floors = {label: recorder.replay_alone for label, recorder in recorded.items()}
        runs = measure(repo, helm, pool, sides, inputs, args.rounds, floors)
        raw_s = statistics.median(runs.raws)
        open_count = len(discover_open_prs(repo, develop, None, head))
        print(
            f"real-shaped: {args.prs} refs/pull/N/head ({open_count} open), {args.docs} docs, "
            f"chart of {args.templates} templates, {len(REAL_PROFILES)} profiles "
            f"(built in {built:.1f} s); {args.rounds} rounds, medians"
        )
        print(
            f"raw renders alone  {raw_s * 1000:8.1f} ms   ({RENDER_WORKERS} at once, as the engine)"
        )
        ratios = {}
        for label, samples in runs.reviews.items():
            if label == reworded:
                continue  # renders nothing: its figure is its headings check's, below
            review_s = statistics.median(samples)
            helm_s, ratio = statistics.median(runs.floors[label]), runs.ratio(label)
            renders, lints = len(recorded[label].jobs), recorded[label].lints
            ratios[label] = round(ratio, 3)
            ratios[f"{label}, base and head renders only"] = round(review_s / raw_s, 3)
            print(
                f"{label:<18} {review_s * 1000:8.1f} ms = {ratio:5.2f}x Helm's work for it "
                f"(target <= 1.50x: {renders} renders, {lints} linted, alone "
                f"{helm_s * 1000:.1f} ms; the median of each round's ratio); "
                f"{review_s / raw_s:5.2f}x the two sides' renders alone"
            )
            print("  " + _cpu_line(runs.cpu[label], runs.floor_cpu[label]))
        headings = statistics.median(runs.checks[with_refs].get("headings", [0.0]))
        ratios["headings share"] = round(headings / raw_s, 3)
        print(
            f"check headings     {headings * 1000:8.1f} ms = {headings / raw_s:5.2f}x the renders "
            f"({with_refs})"
        )
        docs_s = statistics.median(runs.checks[reworded].get("headings", [0.0]))
        ratios["headings share, heading reworded"] = round(docs_s / raw_s, 3)
        print(
            f"check headings     {docs_s * 1000:8.1f} ms = {docs_s / raw_s:5.2f}x the renders "
            f"({reworded} in a docs-only PR: every docs file searched, cold)"
        )
        print_claims(repo, develop, head, args.rounds)
        print_claims_at_scale(args, Path(tmp) / "claims.git")
        print(yaml.safe_dump({"real_shaped": ratios}).strip())


def mirror_case(args: argparse.Namespace, helm: Renderer) -> None:
    """Real PRs of a real mirror, against Helm's work for each redone alone, three ways:
    - cli: as a fresh command-line process reviews it (every cache emptied; Python's imports
      not counted), the other open PRs discovered from the refs beside the renders (offline, as
      a mirror has no network);
    - app: as the App's first review of the repository (every cache emptied), the open PRs given
      as GitHub lists them;
    - warm: the App's next review: git's facts kept from the review before (fork points,
      develop's history, tree listings), renders and their parses redone."""
    repo = GitRepo(args.repo)
    base = args.base or repo.default_branch() or "main"
    develop = repo.resolve(base)
    assert develop is not None, f"{args.repo}: no branch {base}"
    ways = [way for way in args.ways.split(",") if way]
    print(
        f"mirror {args.repo} ({len(repo.refs('refs/pull'))} PR refs), {base}; {args.rounds} rounds"
    )
    for number in args.pr:
        head = repo.resolve(f"refs/pull/{number}/head")
        assert head is not None, f"{args.repo}: no refs/pull/{number}/head"
        if "cold" in ways:
            cold = cold_ratios(args.repo, base, f"refs/pull/{number}/head", args.rounds)
            print(f"#{number}: " + (cold.line() if cold else "renders no chart"))
        in_process = [way for way in ("cli", "app", "warm") if way in ways]
        if not in_process:
            continue
        listed = discover_open_prs(repo, develop, None, head, exclude_number=number)
        inputs = _mirror_inputs(repo, base, develop, number, listed)
        recorded = record_helm_work(repo, helm, inputs["cli"])
        # The PR's own Helm work (no other PR's render for the duplicates check): the floor that
        # does not move when the review renders fewer other PRs.
        own = record_helm_work(repo, helm, inputs["own"])
        if not recorded.jobs:
            print(f"#{number}: renders nothing offline (its charts' dependencies are not vendored)")
            continue
        fixed = _fixed_floor(
            args.repo, base, f"refs/pull/{number}/head", reviewed_charts(repo, helm, inputs["own"])
        )
        ratios: dict[str, list[float]] = {way: [] for way in in_process}
        own_ratios: dict[str, list[float]] = {way: [] for way in in_process}
        fixed_ratios: dict[str, list[float]] = {way: [] for way in in_process}
        fixed_floors = []
        walls: dict[str, list[float]] = {way: [] for way in ratios}
        floors, own_floors = [], []
        warm = Resources()  # the App's next review: the memos its last left
        for _ in range(args.rounds):
            for way in in_process:
                with contextlib.ExitStack() as round_end:
                    # Cold: resources of its own, its memos empty. Warm: the parses and the QoS
                    # memo go still, the rest stays.
                    resources = warm if way == "warm" else round_end.enter_context(Resources())
                    with resources.active():
                        clear_parse_cache(), clear_memo()
                    timed = _timed_review(
                        repo, helm, inputs["app" if way == "warm" else way], resources
                    )
                walls[way].append(timed)
                floors.append(recorded.replay_alone())
                own_floors.append(own.replay_alone())
                fixed_floors.append(fixed())
                ratios[way].append(walls[way][-1] / floors[-1])
                own_ratios[way].append(walls[way][-1] / own_floors[-1])
                fixed_ratios[way].append(walls[way][-1] / fixed_floors[-1])
        warm.close()
        figures = ", ".join(
            f"{way} {statistics.median(walls[way]) * 1000:.0f} ms = {statistics.median(r):.2f}x"
            for way, r in ratios.items()
        )
        rounds = "; ".join(f"{way} {_listed(r)}" for way, r in ratios.items())
        print(
            f"#{number}: {len(recorded.jobs)} renders, {recorded.lints} linted, {len(listed)} other "
            f"open PRs; Helm's work for it alone {statistics.median(floors) * 1000:.0f} ms; review "
            f"{figures} (rounds: {rounds})"
        )
        against_own = ", ".join(
            f"{way} {statistics.median(r):.2f}x" for way, r in own_ratios.items()
        )
        print(
            f"#{number}: against the PR's own Helm work ({len(own.jobs)} renders, {own.lints} "
            f"linted, no other PR's; alone {statistics.median(own_floors) * 1000:.0f} ms): "
            f"{against_own}"
        )
        against_fixed = ", ".join(
            f"{way} {statistics.median(r):.2f}x" for way, r in fixed_ratios.items()
        )
        print(
            f"#{number}: against Helm's whole work in this process (bench/helm_work.py's: every "
            f"profile rendered and parsed at both sides, linted at head; "
            f"{statistics.median(fixed_floors) * 1000:.0f} ms, the same whatever the review "
            f"asks of Helm): {against_fixed}"
        )


def reviewed_charts(repo: GitRepo, helm: Renderer, make: MakeInput) -> list[str]:
    with Resources() as resources:
        _, result = review_on(repo, helm, make, resources)
    return [c.path for c in result.report.charts]


def _fixed_floor(mirror: Path, base: str, head: str, charts: list[str]) -> Callable[[], float]:
    """Helm's whole work for the change as bench/helm_work.py does it, in this process, on both
    sides unpacked once: a floor that does not move with what a review asks of Helm."""
    tmp = tempfile.mkdtemp(prefix="helm-work-")
    sides = helm_work.extracted(str(mirror), base, head, charts, Path(tmp))
    pool = ThreadPoolExecutor(helm_work.RENDER_WORKERS)

    def timed() -> float:
        t0 = time.perf_counter()
        helm_work.work(sides, pool)
        return time.perf_counter() - t0

    return timed


def _mirror_inputs(
    repo: GitRepo, base: str, develop: str, number: int, listed: tuple[OpenPR, ...]
) -> dict[str, MakeInput]:
    head_ref = f"refs/pull/{number}/head"

    def cli(resources: Resources) -> ReviewInput:
        head = repo.resolve(head_ref)
        pool = resources.pools.open_prs
        found = finding_open_prs(repo, develop, head, pool, exclude_number=number)
        return ReviewInput(base=base, head=head_ref, offline=True, open_prs_found=found)

    def app(_: Resources) -> ReviewInput:
        return ReviewInput(base=base, head=head_ref, offline=True, open_prs=listed)

    def own(_: Resources) -> ReviewInput:
        return ReviewInput(base=base, head=head_ref, offline=True)

    return {"cli": cli, "app": app, "own": own}


def _timed_review(repo: GitRepo, helm: Renderer, make: MakeInput, resources: Resources) -> float:
    t0 = time.perf_counter()
    review_on(repo, helm, make, resources)
    return time.perf_counter() - t0


def _listed(ratios: list[float]) -> str:
    return ", ".join(f"{r:.2f}" for r in ratios)


def print_claims(repo: GitRepo, develop: str, head: str, rounds: int) -> None:
    open_count = len(discover_open_prs(repo, develop, None, head))
    cold_ms, warm_ms, claimed = claims_cost(repo, develop, head, rounds)
    print(
        f"claims of {open_count} open PRs ({claimed} on the chart): cold {cold_ms:.0f} ms, "
        f"warm {warm_ms:.0f} ms (target: under a second warm at 1,000)"
    )


def print_claims_at_scale(args: argparse.Namespace, root: Path) -> None:
    """The claims target's own number: a mirror of the same shape with 1,500 PR refs, 1,000 of them
    open (a third squash-merged), and few docs, since only the claims are timed."""
    root.mkdir()
    build_real_shaped(root, args.templates, args.claims_prs, 100)
    repo = GitRepo(root)
    develop, head = repo.resolve("develop"), repo.resolve("pr")
    assert develop is not None and head is not None
    print_claims(repo, develop, head, args.rounds)


def _cpu_line(review: list[Cpu], floor: list[Cpu]) -> str:
    """Where the review's CPU went, against its floor's (medians, in ms)."""
    own, helm, git_s = (
        statistics.median(getattr(c, f) for c in review) for f in Cpu.__annotations__
    )
    alone = statistics.median(c.helm for c in floor)
    return (
        f"CPU: this process {own * 1000:.0f} ms, its render processes {helm * 1000:.0f} ms, git "
        f"{git_s * 1000:.0f} ms; Helm's work alone {alone * 1000:.0f} ms of CPU (2 cores: the "
        f"review's own CPU adds to Helm's as the wall clock does)"
    )


def claims_cost(repo: GitRepo, develop: str, head: str, rounds: int) -> tuple[float, float, int]:
    """Every open PR's version claim on the chart, as the version check asks for them: with every
    memo cleared (a CLI review), and again at once (the App's next review of the repository)."""
    prs = discover_open_prs(repo, develop, None, head)
    cold, warm = [], []
    claims: tuple[Any, ...] = ()
    for _ in range(rounds):
        with Memos().active():  # every memo empty, the repository's listings too
            t0 = time.perf_counter()
            open_claims(repo, CHART_DIR, prs, develop)
            cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            claims = open_claims(repo, CHART_DIR, prs, develop)
            warm.append(time.perf_counter() - t0)
    claimed = sum(1 for _, claim in claims if claim.head is not None and claim.changed)
    return statistics.median(cold) * 1000, statistics.median(warm) * 1000, claimed


def record_helm_work(repo: GitRepo, helm: Renderer, make: MakeInput) -> RecordingRenderer:
    """Helm's whole work for one review: every render and `helm lint` the review asked of the
    renderer (the other open PRs' renders for the duplicates check among them), recorded in a
    cold review, to be redone alone (`replay_alone`) beside each timed review."""
    recorder = RecordingRenderer(helm)
    with Resources() as resources:  # memos of its own: cold
        review_on(repo, recorder, make, resources)
    return recorder


def qos_alone(ctx: Context, rounds: int = 50) -> float:
    """The QoS check by itself over the review's renders, repeated with its memo cleared: the
    check's own work. Its figure in the review is higher: there it is the first to walk each
    render's pods, fresh from the parse, out of the processor's caches."""
    check = REGISTRY.by_name("qos")
    assert check is not None
    samples = []
    for _ in range(rounds):
        clear_memo()
        t0 = time.thread_time()
        for chart in ctx.charts:
            chart_ctx = ctx.for_chart(chart)
            check.run(chart_ctx)
            if check.chart_data is not None:
                check.chart_data(chart_ctx)
        samples.append(time.thread_time() - t0)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
