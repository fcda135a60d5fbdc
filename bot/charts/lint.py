"""`helm lint`'s messages as the review reads them: named by the repository path of the file they
are about, with the line Helm names, as render errors and templates are named."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.model.context import LintMessage, LintSeverity
from bot.model.manifests import template_repo_path
from bot.render.base import failure_from_message
from bot.render.lint import LintEntry


def lint_messages(
    entries: Iterable[LintEntry], chart_dir: str, placed: Mapping[str, str]
) -> tuple[LintMessage, ...]:
    """Helm names a file relative to the chart (`templates/d.yaml`), and a template error also by
    the template's own name and line (`app/templates/d.yaml:13:17`, which for a `file://`
    dependency is its `charts/NAME/` copy): the latter wins, being the more exact."""
    return tuple(_message(entry, chart_dir, placed) for entry in entries)


def _message(entry: LintEntry, chart_dir: str, placed: Mapping[str, str]) -> LintMessage:
    # Read as a render error's message is: the same spellings of a file and line.
    named = failure_from_message(entry.message)
    if named.template is not None and "/" in named.template:
        template = template_repo_path(named.template, chart_dir, placed)
        return LintMessage(_severity(entry), template, named.line, entry.message)
    # A directory is no place for a comment, but says where: as `helm lint` prints it.
    said = f"{entry.path}: {entry.message}" if entry.path.endswith("/") else entry.message
    return LintMessage(_severity(entry), _chart_path(entry.path, chart_dir), None, said)


def _severity(entry: LintEntry) -> LintSeverity:
    return LintSeverity[entry.severity.name]


def _chart_path(path: str, chart_dir: str) -> str | None:
    """A file of the chart by its repository path; None for the chart itself or a directory
    (`templates/`), which no inline comment can land on."""
    if not path or path.endswith("/"):
        return None
    return f"{chart_dir}/{path}" if chart_dir not in ("", ".") else path
