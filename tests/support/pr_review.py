"""One pull request on a real git repository with a real chart, reviewed by the real engine: the
builder the uid, probes and selectors tests share.

`review_pr(tmp_path, base, head, check)` commits `base` on develop, lays `head` over it on branch
`pr` (a None value deletes the file), and returns that check's findings."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.config import CONFIG_PATH
from bot.model.report import Finding
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

CHART = "app"
CHART_YAML = "apiVersion: v2\nname: app\nversion: 1.0.0\n"

Files = Mapping[str, str | None]


def chart(
    templates: Mapping[str, str], profiles: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A chart `app` with these templates (name -> text) and `ci/<profile>-values.yaml` files."""
    files = {f"{CHART}/Chart.yaml": CHART_YAML, f"{CHART}/values.yaml": "{}\n"}
    for name, text in templates.items():
        files[f"{CHART}/templates/{name}"] = textwrap.dedent(text)
    for name, text in (profiles or {"default": "{}\n"}).items():
        files[f"{CHART}/ci/{name}-values.yaml"] = textwrap.dedent(text)
    return files


def template(name: str) -> str:
    return f"{CHART}/templates/{name}"


def review_pr(
    tmp_path: Path, base: Files, head: Files, check: str, config: str | None = None
) -> list[Finding]:
    g = GitBuilder(tmp_path / "repo")
    _lay(g, base)
    if config is not None:
        g.write(CONFIG_PATH, textwrap.dedent(config))
    g.commit("base").branch("pr")
    _lay(g, head)
    g.commit("the pull request")
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", only_checks=(check,))).report
    assert not report.findings_for("render"), report.findings_for("render")
    return report.findings_for(check)


def line_of(files: Files, path: str, text: str, occurrence: int = 1) -> int:
    """1-based number of the `occurrence`-th line of `path` that contains `text`."""
    content = files[path]
    assert content is not None
    hits = [n for n, line in enumerate(content.splitlines(), start=1) if text in line]
    return hits[occurrence - 1]


def _lay(g: GitBuilder, files: Files) -> None:
    for path, text in files.items():
        if text is None:
            g.remove(path)
        else:
            g.write(path, text)
