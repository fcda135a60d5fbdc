"""`.github/chart-review.yml`: schema, defaults, and errors that name the key and line.

Read at the PR's base commit, so a PR cannot switch its own checks off."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.errors import ChartReviewError
from bot.kube.capabilities import (
    Capabilities,
    CapabilitiesError,
    parse_api_versions,
    parse_kube_version,
)
from bot.model.yaml.blocks import LOADER
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.textlines import git_line

CONFIG_PATH = ".github/chart-review.yml"

SeverityName = Literal["failure", "warning", "notice"]
# How a review's verdict is published as check runs: `one` run named `chart-review` with a section
# per check (the default), or `per-check`, a run per check family (`chart-review/qos`, …), for
# branch protection that requires each.
CheckRunLayout = Literal["one", "per-check"]
ONE_RUN: CheckRunLayout = "one"
PER_CHECK: CheckRunLayout = "per-check"
# Other repositories one review may read (references to `owner/name:path`): each costs API calls
# and a mirror on the worker's disk. The config may lower it, never raise it.
MAX_LINKED_REPOSITORIES = 5
LINK_PATTERN_RE = re.compile(r"^[A-Za-z0-9-]+/(?:[A-Za-z0-9_.-]+|\*)$")


class ConfigError(ChartReviewError):
    """The config cannot be used. The message names the file, key and line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProfileSpec(_Strict):
    """A values profile. Without `values_file` or `values`, an entry only sets flags on a profile that
    the chart already has (e.g. marks `ci/oc-values.yaml` as `arbitrary_uid`)."""

    name: str
    chart: str | None = Field(default=None, description="chart directory; all charts when unset")
    values_file: str | None = Field(default=None, description="repository path of a values file")
    values: dict[str, Any] | None = None
    arbitrary_uid: bool = False

    @property
    def defines_values(self) -> bool:
        return self.values_file is not None or self.values is not None


class CheckConfig(_Strict):
    enabled: bool = True
    # One severity for every finding of the check, or a severity per rule.
    severity: SeverityName | dict[str, SeverityName] | None = None


OptionsT = TypeVar("OptionsT", bound=CheckConfig)


@dataclass(frozen=True)
class CheckOptions:
    """Where the config file holds a check's options and what model reads them: under
    `checks.<name>:`, or at a top-level key named for the check (where the version and probes
    checks have always had theirs). A check declares it (bot/model/check.py); the registry's list
    of them is what `parse_config` knows of checks."""

    name: str
    model: type[CheckConfig] = CheckConfig
    top_level: bool = False

    @property
    def key(self) -> str:
        return self.name if self.top_level else f"checks.{self.name}"


class LinksConfig(_Strict):
    """Which other repositories references may lead a review to read. The allow-list only narrows
    what the App may read anyway (bot/app/link_policy.py); absent, it narrows nothing."""

    repositories: list[str] | None = Field(
        default=None, description="`owner/name` or `owner/*`; none other is read"
    )
    max_repositories: int = Field(default=MAX_LINKED_REPOSITORIES, ge=0, le=MAX_LINKED_REPOSITORIES)

    @field_validator("repositories")
    @classmethod
    def _patterns(cls, value: list[str] | None) -> list[str] | None:
        for pattern in value or ():
            if not LINK_PATTERN_RE.match(pattern):
                raise ValueError(f"expected OWNER/NAME or OWNER/*, got {pattern!r}")
        return value

    def allows(self, name: str) -> bool:
        """GitHub's names are case-insensitive, and so is the list."""
        if self.repositories is None:
            return True
        return any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in self.repositories)


class DiffConfig(_Strict):
    """What the rendered diff leaves out: what every release changes, so that the lines a reviewer
    reads are the PR's. Patterns are globs (`checksum/*`); each list replaces the default."""

    ignore_labels: list[str] = Field(
        default_factory=lambda: ["helm.sh/chart", "app.kubernetes.io/version"]
    )
    ignore_annotations: list[str] = Field(default_factory=lambda: ["checksum/*"])
    # Fields whose values are not compared, wherever they are: a webhook's `caBundle` made by
    # `genCA` is new at every render. Their presence still is.
    ignore_fields: list[str] = Field(default_factory=lambda: ["caBundle"])


class DependencyRepository(_Strict):
    """A chart repository or OCI registry the review may fetch dependencies from. `name` says which
    environment variables hold its credentials: HELM_REPO_<NAME>_USERNAME / _PASSWORD."""

    url: str = Field(
        description="`https://charts.example.com` or `oci://registry.example.com/path`"
    )
    name: str | None = Field(default=None, description="names the credentials' variables")
    registry_config: str | None = Field(
        default=None, description="an OCI registry's credentials file (Docker config.json format)"
    )

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if not value.startswith(("https://", "http://", "oci://")):
            raise ValueError(f"expected an https://, http:// or oci:// URL, got {value!r}")
        return value

    @field_validator("name")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_-]+", value):
            raise ValueError(f"expected letters, digits, - and _, got {value!r}")
        return value


class DependenciesConfig(_Strict):
    """Where a chart's remote dependencies may come from (bot/charts/remote.py). Read at base
    like the rest: a PR cannot widen what its own review fetches."""

    # None: the repositories the base's Chart.yaml files already name, and no other.
    repositories: list[DependencyRepository] | None = None
    offline: bool = False


class Config(_Strict):
    charts: list[str] | None = None
    develop: str | None = None
    release_name: str | None = None
    namespace: str | None = None
    profiles: list[ProfileSpec] = Field(default_factory=list)
    # Every check's options, by check, as its own model read them (wherever the file has them).
    checks: dict[str, CheckConfig] = Field(default_factory=dict)
    release_board: bool = False
    check_runs: CheckRunLayout = ONE_RUN
    links: LinksConfig = Field(default_factory=LinksConfig)
    # What the charts are rendered for, as `helm template --kube-version` and `--api-versions`.
    kube_version: str | None = Field(default=None, description="`1.29` or `v1.29.0`")
    api_versions: list[str] = Field(default_factory=list)
    diff: DiffConfig = Field(default_factory=DiffConfig)
    dependencies: DependenciesConfig = Field(default_factory=DependenciesConfig)

    @field_validator("kube_version", mode="before")
    @classmethod
    def _kube_version(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            # YAML reads `1.30` as the number 1.3: the version it meant is lost, so it must be quoted.
            raise ValueError(f'read as the number {value}: quote the version, as in "1.30"')
        if not isinstance(value, str):
            return value  # pydantic says what it expected
        try:
            return parse_kube_version(value, "kube_version")
        except CapabilitiesError as exc:
            raise ValueError(exc.reason) from None

    @field_validator("api_versions")
    @classmethod
    def _api_versions(cls, value: list[str]) -> list[str]:
        try:
            return list(parse_api_versions(value, "api_versions"))
        except CapabilitiesError as exc:
            raise ValueError(exc.reason) from None

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(self.kube_version, tuple(self.api_versions))

    def check(self, name: str) -> CheckConfig:
        return self.checks.get(name) or CheckConfig()

    def options(self, name: str, model: type[OptionsT]) -> OptionsT:
        """The check's options as its model reads them, its defaults when the file has none."""
        found = self.checks.get(name)
        if found is None:
            return model()
        if not isinstance(found, model):
            raise TypeError(f"the {name} check's options were read as {type(found).__name__}")
        return found

    def enabled(self, name: str) -> bool:
        return self.check(name).enabled

    def profiles_for(self, chart: str) -> list[ProfileSpec]:
        return [p for p in self.profiles if p.chart in (None, chart)]


def parse_config(
    text: str | None,
    source: str = CONFIG_PATH,
    known_checks: Collection[CheckOptions] | None = None,
) -> Config:
    """Parse config text; None (no file) gives the defaults. `known_checks` (the registry's
    `options`) says which model reads each check's options and where; with it, a `checks:` entry
    naming no check is an error too (a typo would otherwise switch nothing off). Without it, every
    entry under `checks:` is read as enabled and severity alone."""
    if text is None or not text.strip():
        return Config()
    try:
        # libyaml's parser refuses nesting past 1000 levels with a clean error; the pure-Python
        # composer would recurse into RecursionError, near whose depth even a garbage
        # collector's finalizer fails.
        node = yaml.compose(text, Loader=LOADER)
        data = yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc, text)
        where = f" line {line}" if line is not None else ""
        raise ConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise ConfigError(f"{source} line 1: expected a mapping of settings, found {_kind(data)}")
    known = {o.name: o for o in known_checks} if known_checks is not None else None
    tops = {n: data[n] for n, o in (known or {}).items() if o.top_level and n in data}
    settings = {k: v for k, v in data.items() if k not in tops and k != "checks"}
    try:
        config = Config.model_validate({**settings, "checks": {}})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, node, source, text)) from None
    entries = data.get("checks")
    if entries is not None and not isinstance(entries, dict):
        line = _line_of(node, ["checks"], text)
        where = f" line {line}" if line else ""
        raise ConfigError(f"{source}{where}: 'checks': expected a mapping of checks by name")
    _check_names(entries or {}, node, source, known, text)
    read = {
        name: _read_options(known, name, raw, [name] if name in tops else ["checks", name], where)
        for name, raw in [*(entries or {}).items(), *tops.items()]
        for where in [(node, source, text)]
    }
    return config.model_copy(update={"checks": read})


def _read_options(
    known: Mapping[str, CheckOptions] | None,
    name: str,
    raw: Any,
    at: list[str],
    where: tuple[yaml.Node | None, str, str],
) -> CheckConfig:
    """One check's options, read by the model it declares; errors name the key and line."""
    node, source, text = where
    model = known[name].model if known is not None else CheckConfig
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, node, source, text, at)) from None


def layout_of_text(text: str | None) -> CheckRunLayout:
    """The `check_runs:` a config asks for even when the rest of it cannot be used: its runs are
    begun before a review reports the config's error, and branch protection may require each
    per-check run by name. Anything unreadable is the default."""
    try:
        data = yaml.load(text or "", Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES:
        return ONE_RUN
    wanted = data.get("check_runs") if isinstance(data, dict) else None
    return PER_CHECK if wanted == PER_CHECK else ONE_RUN


def _check_names(
    entries: Mapping[str, Any],
    node: yaml.Node | None,
    source: str,
    known: Mapping[str, CheckOptions] | None,
    text: str = "",
) -> None:
    for name in entries:
        line = _line_of(node, ["checks", name], text)
        where = f"{source} line {line}" if line else source
        if known is not None and name in known and known[name].top_level:
            raise ConfigError(
                f"{where}: 'checks.{name}': the {name} check is configured under the top-level "
                f"'{name}:' key"
            )
        if known is not None and name not in known:
            raise ConfigError(
                f"{where}: 'checks.{name}': unknown check (one of {', '.join(sorted(known))})"
            )


def _describe(
    exc: ValidationError,
    node: yaml.Node | None,
    source: str,
    text: str = "",
    at: Sequence[str] = (),
) -> str:
    """The first error, naming its key (under `at`, where the model read was) and its line."""
    err = exc.errors()[0]
    loc = [*at, *(str(p) for p in err["loc"] if not str(p).startswith(("function-", "literal[")))]
    # pydantic appends union-member names to the location; keep only keys that exist in the file.
    key = ".".join(loc)
    line = _line_of(node, [*at, *err["loc"]], text)
    where = f" line {line}" if line else ""
    if err["type"] == "extra_forbidden":
        return f"{source}{where}: unknown key '{key}'"
    return f"{source}{where}: '{key}': {err['msg']}"


def _line_of(node: yaml.Node | None, path: list[Any], text: str = "") -> int | None:
    """The line, as git numbers `text`'s lines, of the deepest key of `path` the file holds."""
    line = _yaml_line(text, node.start_mark.line) if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(part)), None)
            key_node = next((k for k, _ in node.value if k.value == str(part)), None)
            if match is None:
                return line
            line = _yaml_line(text, (key_node or match).start_mark.line)
            node = match
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            node = node.value[part]
            line = _yaml_line(text, node.start_mark.line)
        else:
            return line
    return line


def _yaml_line(text: str, mark_line: int) -> int:
    """A YAML mark's 0-based line as git's 1-based one (YAML breaks lines at U+2028 and NEL too)."""
    return git_line(text, mark_line)


def _kind(value: Any) -> str:
    return {
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
    }.get(type(value), type(value).__name__)
