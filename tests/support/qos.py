"""QoS test builders: an in-memory Tree, renders from YAML text or a real chart, a Context."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import helm_python

from bot.model.config import Config
from bot.model.context import ChartContext, ChartRenders, Rendered, RenderError
from bot.model.manifests import Document, documents_from_text, parse_rendered

CHART = "charts/tracebloc"
NAMESPACE = "tracebloc"


class DictTree:
    """The files of one commit, from a dict of path -> text."""

    def __init__(self, files: Mapping[str, str], commit: str = "x") -> None:
        self._files = dict(files)
        self._commit = commit

    @property
    def commit(self) -> str:
        return self._commit

    def read(self, path: str) -> bytes | None:
        text = self._files.get(path)
        return None if text is None else text.encode()

    def text(self, path: str) -> str | None:
        return self._files.get(path)

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        start = f"{prefix.rstrip('/')}/" if prefix else ""
        return tuple(sorted(p for p in self._files if p.startswith(start)))

    def is_file(self, path: str) -> bool:
        return path in self._files

    def dirs_with(self, name: str) -> tuple[str, ...]:
        held = {p.rpartition("/")[0] or "." for p in self._files if p.rpartition("/")[2] == name}
        return tuple(sorted(held))


def docs(text: str, template: str, namespace: str = NAMESPACE) -> tuple[Document, ...]:
    return documents_from_text(text, template, namespace)


def rendered(profile: str, documents: tuple[Document, ...]) -> Rendered:
    return Rendered(profile=profile, documents=documents)


def failed(profile: str) -> Rendered:
    return Rendered(profile=profile, error=RenderError(None, None, "boom"))


def context(
    base: Mapping[str, Rendered],
    head: Mapping[str, Rendered],
    base_files: Mapping[str, str] | None = None,
    head_files: Mapping[str, str] | None = None,
) -> ChartContext:
    chart = ChartRenders(path=CHART, name="tracebloc", base=dict(base), head=dict(head))
    base_tree, head_tree = DictTree(base_files or {}, "b"), DictTree(head_files or {}, "h")
    return ChartContext(
        config=Config(),
        git=None,  # type: ignore[arg-type]  # the QoS check never asks git
        base=base_tree,
        head=head_tree,
        target=base_tree,
        develop=None,
        changes=(),
        charts=(chart,),
        chart=chart,
    )


def write_chart(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def render_chart(chart_dir: Path, values: dict[str, Any], profile: str) -> Rendered:
    with helm_python.Chart.load(str(chart_dir)) as chart:
        out = chart.render(values=values, name="release", namespace=NAMESPACE)
    return Rendered(profile=profile, documents=parse_rendered(out, CHART, NAMESPACE))
