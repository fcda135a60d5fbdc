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

    .venv/bin/python bench/review_bench.py [--rounds N] [--templates N] [--in-process]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import helm_python
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.engine.chart.renders import RENDER_WORKERS  # noqa: E402
from bot.engine.context import Context  # noqa: E402
from bot.engine.manifests import clear_parse_cache  # noqa: E402
from bot.engine.review import Engine, ReviewInput  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from bot.lru import clear_all  # noqa: E402
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm  # noqa: E402
from bot.render.factory import make_renderer
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


def write_chart(root: Path, templates: int, head: bool) -> None:
    chart = root / "bench"
    (chart / "templates").mkdir(parents=True, exist_ok=True)
    (chart / "ci").mkdir(exist_ok=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: bench\nversion: 1.0.{int(head)}\n")
    (chart / "values.yaml").write_text(
        "replicas: 1\ntag: '1'\nenv: {A_PORT: '8080', LOG: info, MODE: prod}\n"
        "resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}\n"
    )
    (chart / "templates/_helpers.tpl").write_text(
        '{{- define "bench.labels" -}}\napp.kubernetes.io/name: bench\n'
        "app.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n"
    )
    for i in range(templates // 2):
        text = DEPLOYMENT.format(i=i)
        if head and i % 5 == 0:
            text = text.replace("replicas: {{ .Values.replicas }}", "replicas: 2")
        (chart / f"templates/svc{i}-deployment.yaml").write_text(text)
        (chart / f"templates/svc{i}-service.yaml").write_text(SERVICE.format(i=i))
    for n, name in enumerate(PROFILES):
        cpu = "100m" if n % 2 else "200m"
        (chart / f"ci/{name}-values.yaml").write_text(
            f"replicas: {n + 1}\nresources: {{requests: {{cpu: {cpu}, memory: 64Mi}}, "
            f"limits: {{cpu: {cpu}, memory: 64Mi}}}}\n"
        )


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


def build_repo(root: Path, templates: int) -> None:
    git(root, "init", "-q", "-b", "develop")
    write_chart(root, templates, head=False)
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


def raw_renders(dirs: list[Path], pool: ThreadPoolExecutor | None = None) -> float:
    """The renders alone: Helm loads each side's chart directory and renders it for each profile, as
    `helm template -f ci/NAME-values.yaml` would, and nothing else. With `pool`, as many at once as
    the engine renders (like for like: the engine renders profiles in parallel)."""
    t0 = time.perf_counter()
    jobs = [(chart_dir, name) for chart_dir in dirs for name in PROFILES]
    if pool is None:
        for job in jobs:
            render_one(*job)
    else:
        for future in [pool.submit(render_one, *job) for job in jobs]:
            future.result()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--templates", type=int, default=50)
    parser.add_argument("--in-process", action="store_true", help="render without the sandbox")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build_repo(root, args.templates)
        sides = []
        for ref in ("develop", "pr"):
            dest = Path(tmp) / ref
            git(root, "worktree", "add", "-q", "--detach", str(dest), ref)
            sides.append(dest / "bench")
        helm: Renderer = EmbeddedHelm() if args.in_process else make_renderer("embedded")
        repo = GitRepo(root)
        pool = ThreadPoolExecutor(RENDER_WORKERS)
        reviews, raws, serial, checks_share = [], [], [], {}
        raw_renders(sides, pool)  # warm the library once, as a long-running worker would be
        Engine(repo, helm, REGISTRY, RenderCache()).review(ReviewInput(base="develop", head="pr"))
        for _ in range(args.rounds):
            engine = Engine(repo, helm, REGISTRY, RenderCache())
            clear_parse_cache()
            clear_memo()
            repo.clear_listings()
            clear_all()  # every other memo: a cold review
            t0 = time.perf_counter()
            result = engine.review(ReviewInput(base="develop", head="pr"))
            reviews.append(time.perf_counter() - t0)
            raws.append(raw_renders(sides, pool))
            serial.append(raw_renders(sides))
            for name, seconds in engine.timings.by_check.items():
                checks_share.setdefault(name, []).append(seconds)
        review_s, raw_s = statistics.median(reviews), statistics.median(raws)
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
        print(f"  (one at a time   {statistics.median(serial) * 1000:8.1f} ms, for reference)")
        print(f"ratio review/raw   {review_s / raw_s:8.2f}x   (target <= 2.00x)")
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
