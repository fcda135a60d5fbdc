"""Rendered manifests as values: documents with a stable key and the template they came from."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from bot.errors import ChartReviewError
from bot.lru import BoundedCache, IdentityMemo
from bot.model.yaml.blocks import clear_blocks, load_mappings
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.textlines import git_lines


class ManifestError(ChartReviewError):
    """A rendered template that is not YAML: names the template and line."""

    def __init__(self, template: str, line: int | None, reason: str) -> None:
        where = f"{template} line {line}" if line else template
        super().__init__(f"{where}: rendered output is not valid YAML: {reason}")
        self.template = template
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Document:
    """One Kubernetes object as rendered. `template` is the repository path of its template.
    `body` is read-only: identical YAML parses once, so its parts are shared between documents."""

    kind: str
    name: str
    namespace: str
    template: str
    body: Mapping[str, Any]

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


def is_manifest_template(name: str) -> bool:
    """NOTES.txt and partials render to text that is not a manifest."""
    base = name.rsplit("/", 1)[-1]
    return not (base == "NOTES.txt" or base.startswith("_"))


def template_repo_path(
    rendered_name: str, chart_dir: str, placed: Mapping[str, str] | None = None
) -> str:
    """Helm names templates `<chart name>/templates/x.yaml`; the repository knows them under the chart's
    directory, whatever the chart is called. A `file://` dependency copied into the archive under
    `charts/NAME/` (`placed`: that prefix → its directory in the repository) is named where it
    really is, so a finding in a library's template points at a file that exists."""
    _, _, rest = rendered_name.partition("/")
    for prefix in sorted(placed or (), key=len, reverse=True):
        if rest.startswith(prefix):
            return f"{(placed or {})[prefix]}/{rest[len(prefix) :]}".lstrip("/")
    return f"{chart_dir}/{rest}" if chart_dir not in ("", ".") else rest


def load_documents(text: str, template: str) -> tuple[Mapping[str, Any], ...]:
    """The mappings in a rendered template. Parsing dominates a review's own cost, and most templates
    render the same text on both sides and for every profile, so identical text is parsed once."""
    parsed, _ = _PARSED.get_or_make((text, template), lambda: (_parse(text, template), len(text)))
    return parsed


# Parsed templates by their text, weighed by it: the objects parsed weigh several times the text,
# and one template of CRDs or configs is megabytes, so a count would bound nothing. Enough for a
# large chart's two sides (what one review shares between its renders).
PARSED_TEXT_BYTES = 16 * 2**20
_PARSED: BoundedCache[tuple[str, str], tuple[tuple[Mapping[str, Any], ...], int]] = BoundedCache(
    PARSED_TEXT_BYTES, lambda parsed: 64 + parsed[1]
)


def _parse(text: str, template: str) -> tuple[Mapping[str, Any], ...]:
    try:
        # Block by block: what differs between profiles is a line or two of a large document.
        return load_mappings(text)
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc, text)
        raise ManifestError(template, line, str(problem)) from None


def parse_rendered(
    rendered: Mapping[str, str],
    chart_dir: str,
    namespace: str,
    placed: Mapping[str, str] | None = None,
    only: frozenset[str] | None = None,
) -> tuple[Document, ...]:
    """Every object of a render, in template order; with `only`, the objects of those templates
    (repository paths) alone. Objects without a kind or name are skipped: Kubernetes would reject
    them and they key nothing."""
    docs: list[Document] = []
    for name in sorted(rendered):
        if not is_manifest_template(name):
            continue
        template = template_repo_path(name, chart_dir, placed)
        if only is not None and template not in only:
            continue
        for body in load_documents(rendered[name], template):
            kind, meta = body.get("kind"), body.get("metadata")
            if not isinstance(kind, str) or not isinstance(meta, dict):
                continue
            obj_name = meta.get("name")
            if not isinstance(obj_name, str):
                continue
            ns = meta.get("namespace")
            docs.append(
                Document(
                    kind, obj_name, ns if isinstance(ns, str) and ns else namespace, template, body
                )
            )
    return tuple(docs)


def pod_spec(doc: Document) -> Mapping[str, Any] | None:
    """The pod spec a workload carries: a Pod's own spec, a CronJob's job template's, or any kind's
    `spec.template.spec` that has containers (Deployments, StatefulSets, Argo Rollouts, ...)."""
    spec = doc.body.get("spec")
    if not isinstance(spec, dict):
        return None
    if doc.kind == "Pod":
        return spec
    if doc.kind == "CronJob":
        spec = _dig(spec, "jobTemplate", "spec")
    template_spec = _dig(spec, "template", "spec")
    if isinstance(template_spec, dict) and isinstance(template_spec.get("containers"), list):
        return template_spec
    return None


def pod_labels(doc: Document) -> Mapping[str, Any]:
    spec = doc.body.get("spec")
    if doc.kind == "Pod":
        labels = _dig(doc.body, "metadata", "labels")
    else:
        if doc.kind == "CronJob":
            spec = _dig(spec, "jobTemplate", "spec")
        labels = _dig(spec, "template", "metadata", "labels")
    return labels if isinstance(labels, dict) else {}


def workloads(docs: tuple[Document, ...]) -> Iterator[tuple[Document, Mapping[str, Any]]]:
    for doc in docs:
        spec = pod_spec(doc)
        if spec is not None:
            yield doc, spec


ROLE_CONTAINER = "container"
ROLE_INIT = "init container"
# Renders are remembered for a review and a few more; container lists for many reviews.
RENDERS_REMEMBERED = 64
LISTS_REMEMBERED = 4096


class Container(NamedTuple):
    role: str
    name: str
    body: Mapping[str, Any]

    @property
    def who(self) -> str:
        return f"{self.role} {self.name}"


Workload = tuple[Document, Mapping[str, Any]]
PodContainer = tuple[Document, Mapping[str, Any], Container]


@dataclass(frozen=True)
class PodTemplates:
    """A render's workloads with their pod specs, and every container of them (workload document,
    its pod spec, the container), in document order."""

    workloads: tuple[Workload, ...]
    containers: tuple[PodContainer, ...]


def _named(entries: list[Any], role: str) -> tuple[Container, ...]:
    return tuple(
        Container(role, entry["name"], entry)
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    )


# Ephemeral containers are added by `kubectl debug`, never rendered by a chart.
_LISTS: tuple[tuple[str, Callable[[list[Any]], tuple[Container, ...]]], ...] = (
    ("initContainers", partial(_named, role=ROLE_INIT)),
    ("containers", partial(_named, role=ROLE_CONTAINER)),
)
# Identical YAML parses to the very same list (bot/model/yaml/blocks.py): a list is read once however many
# renders share it, and a render once however many checks read it.
_BY_LIST: dict[str, IdentityMemo[list[Any], tuple[Container, ...]]] = {
    key: IdentityMemo(LISTS_REMEMBERED) for key, _ in _LISTS
}
_BY_RENDER: IdentityMemo[tuple[Document, ...], PodTemplates] = IdentityMemo(RENDERS_REMEMBERED)


def containers(spec: Mapping[str, Any]) -> list[Container]:
    """Init containers first, then the app containers; entries without a name are skipped."""
    found: list[Container] = []
    for key, named in _LISTS:
        entries = spec.get(key)
        if isinstance(entries, list):
            found += _BY_LIST[key].get_or_make(entries, named)
    return found


def pod_templates(docs: tuple[Document, ...]) -> PodTemplates:
    """The pod templates of a render, found once per render: the engine asks as soon as a render is
    parsed, in the thread that rendered it, so the checks only read them."""
    return _BY_RENDER.get_or_make(docs, _pod_templates)


def _pod_templates(docs: tuple[Document, ...]) -> PodTemplates:
    found = tuple(workloads(docs))
    return PodTemplates(found, tuple((d, s, c) for d, s in found for c in containers(s)))


def _dig(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def find_line(source: str | None, *patterns: str) -> int | None:
    """1-based number of the first line matching any of `patterns`, tried in order. Used to point a
    finding at the template line that defines the culprit (a container's `name:`)."""
    if not source:
        return None
    lines = git_lines(source)
    for pattern in patterns:
        rx = re.compile(pattern)
        for number, text in enumerate(lines, start=1):
            if rx.search(text):
                return number
    return None


def container_name_line(source: str | None, container: str) -> int | None:
    """The template line that names a container: `- name: X` first, then any `name: X`."""
    name = re.escape(container)
    return find_line(
        source,
        rf"^\s*-\s+name:\s*[\"']?{name}[\"']?\s*(#.*)?$",
        rf"^\s*name:\s*[\"']?{name}[\"']?\s*(#.*)?$",
    )


def documents_from_text(text: str, source: str, namespace: str) -> tuple[Document, ...]:
    """The objects of one multi-document YAML text (e.g. `helm template` output), each with
    `template` set to `source`; objects without a kind or name are skipped, as in parse_rendered."""
    docs: list[Document] = []
    for body in load_documents(text, source):
        kind, meta = body.get("kind"), body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(kind, str) or not isinstance(name, str):
            continue
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        ns = ns if isinstance(ns, str) and ns else namespace
        docs.append(Document(kind, name, ns, source, body))
    return tuple(docs)


def clear_parse_cache() -> None:
    """Forget parsed templates (benchmarks measure a cold review)."""
    _PARSED.clear()
    clear_blocks()
