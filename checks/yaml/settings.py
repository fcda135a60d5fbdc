"""What `ct lint` validates on a chart besides `helm lint`, as the repository's CI runs it: whether
yamllint and the Chart.yaml schema run, and with which files, from each run's flags, its `CT_*`
environment and its config file, else ct's own defaults.

The runs are the CI reader's (bot/model/ci/ct_runs.py): the `ct lint` and `ct lint-and-install`
runs that lint the chart are the ones whose version check bot/model/ct_config.py's `version_gates`
reads, so they are taken from there. Read at the target branch, which the PR cannot change.

Where ct finds `lintconf.yaml` and `chart_schema.yaml` when nothing names them (its config search):
`$CT_CONFIG_DIR`, else `.` and `.ct/` of the directory it runs in (the repository's root), else
`~/.ct`, `/usr/local/etc/ct`, `/etc/ct`, where its installers and its image put its defaults."""

from __future__ import annotations

from dataclasses import dataclass

from bot.git.objects import Tree
from bot.model.ci.ct_runs import CtRun, ct_runs, flag_true
from bot.model.ci.shell import UNKNOWN
from bot.model.ct_config import (
    NO_CT,
    CtConfig,
    CtConfigError,
    load_ct_config,
    parse_ct_config,
    version_gates,
)

LINT_CONF, CHART_SCHEMA = "lintconf.yaml", "chart_schema.yaml"
LINTING = frozenset({"lint", "lint-and-install"})
# The directories of ct's config search that are inside the repository (ct runs at its root).
REPOSITORY_SEARCH = ("", ".ct/")
# Outside it: where ct's installers and its image keep ct's own defaults.
CT_HOMES = ("/etc/ct/", "/usr/local/etc/ct/", "~/.ct/", "$HOME/.ct/")


@dataclass(frozen=True)
class FileRef:
    """A file ct reads: `path` in the repository, or None for ct's own default, with `note` saying
    why when the run named something that cannot be read here."""

    path: str | None
    note: str = ""


DEFAULT = FileRef(None)


@dataclass(frozen=True)
class LintSettings:
    """What one way of running `ct lint` validates. `enforced`: CI runs it on the chart (else a
    ct.yaml no CI run lints with: what ct lint would say, for information)."""

    validate_yaml: bool
    validate_schema: bool
    lint_conf: FileRef
    schema: FileRef
    said_by: str
    enforced: bool


def lint_settings(tree: Tree, chart_path: str) -> tuple[LintSettings, ...]:
    """The distinct settings of the CI runs of `ct lint` on the chart; without any, the ct.yaml's
    as information when the repository has one and no CI run lints at all (a chart that CI's runs
    leave out is not linted by ct, and is said nothing of)."""
    runs = [gate.run for gate in version_gates(tree, chart_path)]
    if runs:
        found = (_from_run(tree, run) for run in runs)
        return tuple(dict.fromkeys(found))
    if any(run.subcommand in LINTING for run in ct_runs(tree)):
        return ()
    config = load_ct_config(tree)
    if config.source is None:
        return ()
    said = f"with {config.source}, which no CI run of `ct lint` uses"
    return (_settings(tree, None, config, said),)


def _from_run(tree: Tree, run: CtRun) -> LintSettings:
    config = _config_of(tree, run)
    said = f"`ct {run.subcommand}` at {run.where}"
    if config is not None and config.source:
        said += f" with {config.source}"
    return _settings(tree, run, config, said)


def _settings(tree: Tree, run: CtRun | None, config: CtConfig | None, said_by: str) -> LintSettings:
    known = config or NO_CT
    return LintSettings(
        validate_yaml=_flag(run, "validate-yaml", known.validate_yaml),
        validate_schema=_flag(run, "validate-chart-schema", known.validate_chart_schema),
        lint_conf=_file(tree, run, "lint-conf", known.lint_conf, LINT_CONF, config is None),
        schema=_file(
            tree, run, "chart-yaml-schema", known.chart_yaml_schema, CHART_SCHEMA, config is None
        ),
        said_by=said_by,
        enforced=run is not None,
    )


def _config_of(tree: Tree, run: CtRun) -> CtConfig | None:
    """The config file the run loads (NO_CT: none); None where only the run knows which, or it
    cannot be read (ct.yaml's own reader says what is wrong with it)."""
    path = run.config_path(tree)
    if path is None:
        return NO_CT
    if UNKNOWN in path:
        return None
    text = tree.text(path)
    if text is None:
        return None
    try:
        return parse_ct_config(text, path)
    except CtConfigError:
        return None


def _flag(run: CtRun | None, name: str, configured: bool) -> bool:
    given = flag_true(run.setting(name)) if run is not None else None
    return configured if given is None else given


def _file(
    tree: Tree,
    run: CtRun | None,
    flag: str,
    configured: str | None,
    default_name: str,
    config_unknown: bool,
) -> FileRef:
    """The file a run reads for `flag`: the flag (or its `CT_*` variable), else the config's key,
    else ct's search for `default_name`."""
    given = run.setting(flag) if run is not None else None
    if given is None and config_unknown:
        return FileRef(None, "the run's config file is known only to the run")
    named = given if given is not None else configured
    if named is not None:
        return _named(named, flag, default_name)
    directory = run.env.get("CT_CONFIG_DIR") if run is not None else None
    if directory is not None:
        return _named(f"{directory.rstrip('/')}/{default_name}", "CT_CONFIG_DIR", default_name)
    for place in REPOSITORY_SEARCH:
        if tree.is_file(place + default_name):
            return FileRef(place + default_name)
    return DEFAULT


def _named(path: str, said_by: str, default_name: str) -> FileRef:
    path = path.strip().strip("'\"")
    if UNKNOWN in path:
        return FileRef(None, f"`{said_by}` is set by something only the run knows")
    if any(path.startswith(home) for home in CT_HOMES) and path.endswith("/" + default_name):
        return DEFAULT  # ct's own defaults, where its image and installers put them
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("/", "~", "$")) or ".." in path.split("/"):
        return FileRef(None, f"`{said_by}` names {path}, outside the repository")
    return FileRef(path)
