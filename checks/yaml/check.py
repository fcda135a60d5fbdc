"""The `yaml` check: the rest of `ct lint`, with the tools chart-testing itself runs: yamllint on the
chart's `Chart.yaml`, `values.yaml` and every `ci/*-values.yaml` with the lint config, and yamale
on `Chart.yaml` (strict, as ct runs it) with the Chart.yaml schema: ct's default `lintconf.yaml`
and `chart_schema.yaml` (carried in `checks/yaml/ct_defaults/` with chart-testing's Apache-2.0
notice), or the files the repository names.

Which, and whether each runs, is read as [ct.yaml](review.md#chart-testings-ctyaml) is, from every
CI run of `ct lint` / `lint-and-install` on the chart (a workflow step, or the Makefile target or
script it calls; checks/yaml/settings.py): the run's flags (`--lint-conf`, `--chart-yaml-schema`,
`--validate-yaml=false`, `--validate-chart-schema=false`), its `CT_*` variables (`CT_LINT_CONF`,
`CT_CONFIG_DIR`), its config's `lint-conf`, `chart-yaml-schema`, `validate-yaml` and
`validate-chart-schema`, else ct's search (`lintconf.yaml` or `.ct/lintconf.yaml` in the
repository), else ct's defaults. A lint config's `extends:` and `ignore-from-file:` are read from
the repository too, never from the machine.

Only the files the PR changed are read (a file the same at base and head holds nothing the PR
did): a yamllint error, a schema error or a deleted `values.yaml` new at head is a failure (ct lint
fails on it), a yamllint warning a warning (ct passes with it), and what the base's file had
already is folded as pre-existing (the base's file is linted only where the head's has a problem;
both are read from git while Helm renders, before the check's turn comes). Where CI runs no
`ct lint` but the repository has a ct.yaml, what ct lint would say is a notice; without either,
nothing is linted.

Caps (`checks/yaml/`): a file past 1 MiB is not linted, a notice (`MAX_LINT_BYTES`; yamllint reads
~170 KB a second); a lint config or schema past 64 KiB is not read (`MAX_CONF_BYTES`), nor
`extends:` more than 4 deep (`MAX_EXTENDS`); at most 25 findings a file, the rest one line
(`MAX_FINDINGS_PER_FILE`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.git.objects import Tree
from bot.model.check import Check
from bot.model.context import ChartContext, Context
from bot.model.report import Finding, Severity
from bot.textlines import git_lines
from checks.kit.delta import Issue, compare_files
from checks.yaml.conf import Loaded, chart_schema, lint_config
from checks.yaml.problems import MAX_LINT_BYTES, Problem, schema_errors, yamllint_problems
from checks.yaml.settings import FileRef, LintSettings, lint_settings

NAME = "yaml"
ERROR, WARNING, SCHEMA, MISSING = (
    "yamllint-error",
    "yamllint-warning",
    "chart-schema",
    "missing-file",
)
SETTINGS, NOT_LINTED, MORE = "settings", "not-linted", "more-problems"
ENFORCED = {ERROR: Severity.FAILURE, WARNING: Severity.WARNING, SCHEMA: Severity.FAILURE}
ENFORCED |= {MISSING: Severity.FAILURE}
ADVISORY = dict.fromkeys(ENFORCED, Severity.NOTICE)
# Findings of one file, the most severe first: a file of thousands of trailing spaces is one
# problem a reviewer states once, not a thousand annotations.
MAX_FINDINGS_PER_FILE = 25
VALUES = "values.yaml"

TITLE_LINT = "{path} line {line}: {description} ({rule})"
MSG_LINT = (
    "yamllint, with {conf}, reports {article} {level} in {path} line {line}, column {column}: "
    "{description} ({rule}). {consequence} ({said_by})."
)
FAILS = "`ct lint` fails on it"
PASSES = "`ct lint` prints it and passes, as yamllint fails only on errors"
TITLE_SCHEMA = "{path}: {key}: {problem}"
MSG_SCHEMA = (
    "{path} does not match {schema} (yamale, strict, as `ct lint` runs it): {key}: {problem}. "
    "`ct lint` fails on it ({said_by})."
)
TITLE_MISSING = "{path} is missing"
MSG_MISSING = (
    "{path} is missing: `ct lint` runs yamllint on every chart's values.yaml and fails where "
    "there is none ({said_by})."
)


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    if "head" in chart.refused or not ctx.head.is_file(f"{chart.path}/Chart.yaml"):
        return []
    return _findings(ctx, chart.path)


def early(ctx: Context, chart: str) -> None:
    """Everything `run` reads, read while Helm renders: git alone, remembered by content."""
    if ctx.head.is_file(f"{chart}/Chart.yaml"):
        _findings(ctx, chart)


def _findings(ctx: Context, chart: str) -> list[Finding]:
    changed = _changed(ctx, chart)
    settings = lint_settings(ctx.target, chart) if changed else ()
    if not settings:
        return []
    sides = _files(ctx.base, chart, changed), _files(ctx.head, chart, changed)
    found: dict[tuple[str, str, str | None, int | None, str], Finding] = {}
    for each in settings:
        for finding in _linted(ctx, chart, each, changed, *sides):
            found.setdefault(
                (finding.rule, finding.title, finding.path, finding.line, finding.message), finding
            )
    return _capped(list(found.values()))


def _changed(ctx: Context, chart: str) -> list[str]:
    """The files ct lint hands yamllint (Chart.yaml, values.yaml, `ci/*-values.yaml`, ct's glob:
    directly under ci/) that the PR changed, from its diff; values.yaml too for a chart the PR
    adds (yamllint fails where it is missing)."""
    found: list[str] = []
    for change in ctx.changes:
        for path in (change.path, change.old_path):
            if path is not None and _lintable(chart, path) and path not in found:
                found.append(path)
        if change.path == f"{chart}/Chart.yaml" and change.status == "A":
            found.append(f"{chart}/{VALUES}")
    return list(dict.fromkeys(found))


def _lintable(chart: str, path: str) -> bool:
    if not path.startswith(chart + "/"):
        return False
    rest = path[len(chart) + 1 :]
    if rest in ("Chart.yaml", VALUES):
        return True
    name = rest.removeprefix("ci/")
    return name != rest and "/" not in name and name.endswith("-values.yaml")


def _files(tree: Tree, chart: str, paths: Sequence[str]) -> dict[str, str | None]:
    """The texts of `paths` at one side (None for one it lacks); none where the side has no chart."""
    if not tree.is_file(f"{chart}/Chart.yaml"):
        return {}
    return {path: tree.text(path) for path in paths}


def _linted(
    ctx: Context,
    path: str,
    settings: LintSettings,
    changed: Sequence[str],
    base: dict[str, str | None],
    head: dict[str, str | None],
) -> list[Finding]:
    notes: list[Finding] = []
    base_issues: list[Issue] = []
    head_issues: list[Issue] = []
    chart_yaml = f"{path}/Chart.yaml"
    # The base's file is read only to fold what the head's already had: where the head's holds no
    # problem there is nothing to fold, and yamllint costs ~6 ms a KB.
    if settings.validate_schema and chart_yaml in changed:
        schema = _used(path, chart_schema(ctx.target, settings.schema), settings.schema, notes)
        if schema is not None:
            head_issues += _schema_issues(schema, chart_yaml, head.get(chart_yaml), settings)
            if head_issues:
                base_issues += _schema_issues(schema, chart_yaml, base.get(chart_yaml), settings)
    if settings.validate_yaml:
        conf = _used(path, lint_config(ctx.target, settings.lint_conf), settings.lint_conf, notes)
        linted = _lint_files(conf, changed, head, settings, notes)
        head_issues += linted
        with_problems = [p for p in changed if any(issue.path == p for issue in linted)]
        base_issues += _lint_files(conf, with_problems, base, settings, [])
    severity = ENFORCED if settings.enforced else ADVISORY
    notes = [replace(note, chart=path) for note in notes]
    return notes + compare_files(NAME, path, base_issues, head_issues, severity)


def _used(chart: str, loaded: Loaded, ref: FileRef, notes: list[Finding]) -> Loaded | None:
    """`loaded` where it can be used; what stood in the way said as a notice either way."""
    if ref.note:
        notes.append(_setting(chart, f"{ref.note}: {loaded.source} is used instead."))
    if loaded.error:
        notes.append(
            _setting(chart, f"{loaded.error}: not used, and `ct lint` cannot use it either.")
        )
        return None
    return loaded


def _setting(chart: str, text: str) -> Finding:
    return Finding(
        check=NAME,
        severity=Severity.NOTICE,
        title=f"{chart}: ct lint's settings",
        message=text,
        rule=SETTINGS,
        chart=chart,
    )


def _lint_files(
    conf: Loaded | None,
    changed: Sequence[str],
    files: dict[str, str | None],
    settings: LintSettings,
    notes: list[Finding],
) -> list[Issue]:
    if conf is None:
        return []
    return [issue for path in changed for issue in _lint_issues(conf, path, files, settings, notes)]


def _lint_issues(
    conf: Loaded,
    path: str,
    files: dict[str, str | None],
    settings: LintSettings,
    notes: list[Finding],
) -> list[Issue]:
    if path not in files:
        return []  # not on this side (a profile added or removed; a chart added)
    text = files[path]
    if text is None:
        return [_missing(path, settings)] if path.endswith("/" + VALUES) else []
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_LINT_BYTES:
        notes.append(_not_linted(path, size))
        return []
    problems = yamllint_problems(conf, path, text)
    return list(_problem_issues(conf, path, text, problems, settings))


def _problem_issues(
    conf: Loaded, path: str, text: str, problems: Sequence[Problem], settings: LintSettings
) -> Iterable[Issue]:
    lines = git_lines(text)
    seen: dict[tuple[str, str, str], int] = {}
    for p in problems:
        rule = p.rule or "syntax"
        source = lines[p.line - 1].strip() if 0 < p.line <= len(lines) else ""
        # Identity by the line's text, not its number, so an edit above a problem keeps it old.
        nth = seen[(rule, p.description, source)] = seen.get((rule, p.description, source), 0) + 1
        error = p.level == "error"
        fmt = {"path": path, "line": p.line, "column": p.column, "rule": rule}
        fmt |= {"description": p.description, "level": p.level, "conf": conf.source}
        fmt |= {"article": "an" if error else "a", "said_by": settings.said_by}
        fmt["consequence"] = FAILS if error else PASSES
        yield Issue(
            rule=ERROR if error else WARNING,
            subject=path,
            container=None,
            detail=f"{rule}: {p.description} on `{source}` #{nth}",
            title=TITLE_LINT.format(**fmt),
            message=MSG_LINT.format(**fmt),
            path=path,
            line=p.line,
            data={
                "yamllint_rule": rule,
                "level": p.level,
                "column": p.column,
                "config": conf.source,
            },
        )


def _schema_issues(
    schema: Loaded, path: str, text: str | None, settings: LintSettings
) -> list[Issue]:
    if text is None:
        return []
    issues = []
    for error in schema_errors(schema, path, text):
        fmt = {"path": path, "key": error.key, "problem": error.problem, "schema": schema.source}
        issues.append(
            Issue(
                rule=SCHEMA,
                subject=path,
                container=None,
                detail=f"{error.key}: {error.problem}",
                title=TITLE_SCHEMA.format(**fmt),
                message=MSG_SCHEMA.format(said_by=settings.said_by, **fmt),
                path=path,
                line=error.line,
                data={"key": error.key, "schema": schema.source},
            )
        )
    return issues


def _missing(path: str, settings: LintSettings) -> Issue:
    return Issue(
        rule=MISSING,
        subject=path,
        container=None,
        detail="missing",
        title=TITLE_MISSING.format(path=path),
        message=MSG_MISSING.format(path=path, said_by=settings.said_by),
        path=path,
    )


def _not_linted(path: str, size: int) -> Finding:
    return Finding(
        check=NAME,
        severity=Severity.NOTICE,
        title=f"{path}: not linted",
        message=(
            f"{path} is {size:,} bytes, more than the {MAX_LINT_BYTES:,} the review lints of "
            "one file (MAX_LINT_BYTES): yamllint was not run on it."
        ),
        rule=NOT_LINTED,
        path=path,
    )


def _capped(findings: list[Finding]) -> list[Finding]:
    """At most MAX_FINDINGS_PER_FILE findings a file, the most severe first; one notice for the rest."""
    by_file: dict[str | None, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.path, []).append(finding)
    out: list[Finding] = []
    for path, found in by_file.items():
        found.sort(key=lambda f: (f.severity.rank, f.line or 0))
        out += found[:MAX_FINDINGS_PER_FILE]
        if len(found) > MAX_FINDINGS_PER_FILE:
            out.append(_more(path, found[MAX_FINDINGS_PER_FILE:]))
    return out


def _more(path: str | None, rest: Sequence[Finding]) -> Finding:
    worst = min((f.severity for f in rest), key=lambda s: s.rank)
    return Finding(
        check=NAME,
        severity=worst,
        title=f"{path}: {len(rest)} more problems",
        message=(
            f"{len(rest)} more problems in {path} are not listed, beyond the "
            f"{MAX_FINDINGS_PER_FILE} said of one file: run `ct lint` (or yamllint) to see them all."
        ),
        rule=MORE,
        path=path,
        data={"count": len(rest), "rules": sorted({f.rule for f in rest})},
    )


def explain(ctx: ChartContext) -> list[str]:
    chart = ctx.chart.path
    settings = lint_settings(ctx.target, chart)
    if not settings:
        return [f"{NAME}: {chart}: no CI run of `ct lint` lints it, and no ct.yaml: not linted"]
    return [
        f"{NAME}: {chart}: {s.said_by}: yamllint {'on' if s.validate_yaml else 'off'} "
        f"({s.lint_conf.path or 'ct default'}), Chart.yaml schema "
        f"{'on' if s.validate_schema else 'off'} ({s.schema.path or 'ct default'})"
        for s in settings
    ]


CHECK = Check(NAME, "ct lint's YAML checks", run, "chart", explain=explain, quiet=True, early=early)
