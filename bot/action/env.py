"""What a GitHub Actions runner hands the action: its environment, the action's inputs and the
triggering event, read once into values. Anything missing or wrong is an ActionSetupError whose one
line says what to add to the workflow (exit 2)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.app.github.app import PullState
from bot.errors import ChartReviewError
from bot.kube.capabilities import CapabilitiesError, parse_api_versions, parse_kube_version
from bot.model.config import CONFIG_PATH
from bot.report.exit_status import FAIL_ON
from bot.report.text import FORMATS

# The events whose payload is a PR: `pull_request_target` runs with the base's workflow and a
# write token even for forks, `pull_request` with the PR's own and, from a fork, a read-only one.
PR_EVENTS = ("pull_request", "pull_request_target")
FAIL_ON_CHOICES = tuple(FAIL_ON)
DEFAULT_API_URL = "https://api.github.com"
# GitHub hands Dependabot's `pull_request` runs a read-only token, as it does a fork's.
READ_ONLY_ACTORS = frozenset({"dependabot[bot]"})
_LIST_SEPARATORS = re.compile(r"[\s,]+")
# `set` and `set-string` are one assignment a line: helm's own syntax has commas (`k1=v1,k2=v2`).
_LINES = re.compile(r"\r?\n")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


class ActionSetupError(ChartReviewError):
    """The workflow does not give the action what it needs: one line naming what to add, exit 2."""


@dataclass(frozen=True)
class ActionInputs:
    charts: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    fail_on: str = "failure"
    comment: bool = True
    config: str = CONFIG_PATH  # a path in the repository, read at the PR's base
    format: str = ""  # one of FORMATS: the report also written to `output_file`; "" none
    output_file: str = ""  # "" → chart-review.<suffix> in the runner's temporary directory
    offline: bool = False
    kube_version: str | None = None  # parsed as helm takes it
    api_versions: tuple[str, ...] = ()
    values: tuple[str, ...] = ()  # files on the runner, relative to the workspace
    sets: tuple[str, ...] = ()
    set_strings: tuple[str, ...] = ()
    open_prs: bool = True  # `no-open-prs: true` lists none


@dataclass(frozen=True)
class ActionEnv:
    event_name: str
    event_path: Path
    repository: str  # owner/name
    api_url: str
    token: str
    workspace: Path
    actor: str
    step_summary: Path | None
    output: Path | None
    temp_dir: Path | None
    inputs: ActionInputs


@dataclass(frozen=True)
class PullEvent:
    pr: PullState
    fork: bool  # the head lives in another repository: a `pull_request` run gets a read-only token


def _input(environ: Mapping[str, str], name: str) -> str:
    """An input as the action.yml passes it (`INPUT_FAIL_ON`), or as a JavaScript action's runner
    would (`INPUT_FAIL-ON`), so either way of running the entry point reads the same."""
    key = "INPUT_" + name.upper()
    raw = environ.get(key.replace("-", "_"), environ.get(key, ""))
    return raw.strip()


def _names(raw: str, strip: str = "") -> tuple[str, ...]:
    """A list input: names separated by commas, spaces or newlines (a YAML block scalar)."""
    return tuple(n.strip(strip) for n in _LIST_SEPARATORS.split(raw) if n.strip(strip))


def _lines(raw: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in _LINES.split(raw) if line.strip())


def _flag(raw: str, name: str, default: bool = True) -> bool:
    if not raw:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ActionSetupError(f"input {name}: expected true or false, got {raw!r}")


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    fail_on = _input(environ, "fail-on") or "failure"
    if fail_on not in FAIL_ON_CHOICES:
        choices = "|".join(FAIL_ON_CHOICES)
        raise ActionSetupError(f"input fail-on: expected {choices}, got {fail_on!r}")
    fmt = _input(environ, "format")
    if fmt and fmt not in FORMATS:
        raise ActionSetupError(f"input format: expected {'|'.join(FORMATS)}, got {fmt!r}")
    return ActionInputs(
        charts=_names(_input(environ, "charts"), strip="/"),
        profiles=_names(_input(environ, "profiles")),
        fail_on=fail_on,
        comment=_flag(_input(environ, "comment"), "comment"),
        config=_input(environ, "config").strip("/") or CONFIG_PATH,
        format=fmt,
        output_file=_input(environ, "output-file"),
        offline=_flag(_input(environ, "offline"), "offline", default=False),
        **_capabilities(environ),
        values=_names(_input(environ, "values")),
        sets=_lines(_input(environ, "set")),
        set_strings=_lines(_input(environ, "set-string")),
        open_prs=not _flag(_input(environ, "no-open-prs"), "no-open-prs", default=False),
    )


def _capabilities(environ: Mapping[str, str]) -> dict[str, Any]:
    """`kube-version` and `api-versions`, read as `review --kube-version` reads them."""
    version, apis = _input(environ, "kube-version"), _names(_input(environ, "api-versions"))
    try:
        return {
            "kube_version": parse_kube_version(version, "input kube-version") if version else None,
            "api_versions": parse_api_versions(apis, "input api-versions"),
        }
    except CapabilitiesError as exc:
        raise ActionSetupError(str(exc)) from None


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise ActionSetupError(
            f"{name} is not set: run chart-review's action as a step of a GitHub Actions job "
            "(the runner sets it)"
        )
    return value


def _optional_path(environ: Mapping[str, str], name: str) -> Path | None:
    value = environ.get(name, "").strip()
    return Path(value) if value else None


def read_env(environ: Mapping[str, str], repo: str | None = None) -> ActionEnv:
    """The runner's environment; `repo` (the entry point's --repo) stands in for the workspace."""
    event_name = _required(environ, "GITHUB_EVENT_NAME")
    if event_name not in PR_EVENTS:
        raise ActionSetupError(
            f"the workflow ran on '{event_name}', which reviews no pull request: trigger it with "
            "`on: pull_request` (or `pull_request_target`)"
        )
    token = _input(environ, "github-token") or environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise ActionSetupError(
            "no GitHub token: give the action `github-token: ${{ github.token }}` (its default) "
            "and the job `permissions: {checks: write, pull-requests: write}`"
        )
    return ActionEnv(
        event_name=event_name,
        event_path=Path(_required(environ, "GITHUB_EVENT_PATH")),
        repository=_required(environ, "GITHUB_REPOSITORY"),
        api_url=environ.get("GITHUB_API_URL", "").strip().rstrip("/") or DEFAULT_API_URL,
        token=token,
        workspace=Path(repo or _required(environ, "GITHUB_WORKSPACE")),
        actor=environ.get("GITHUB_ACTOR", ""),
        step_summary=_optional_path(environ, "GITHUB_STEP_SUMMARY"),
        output=_optional_path(environ, "GITHUB_OUTPUT"),
        temp_dir=_optional_path(environ, "RUNNER_TEMP"),
        inputs=read_inputs(environ),
    )


def read_event(path: Path) -> PullEvent:
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ActionSetupError(f"GITHUB_EVENT_PATH {path}: cannot read the event ({exc})") from None
    pr = payload.get("pull_request") if isinstance(payload, dict) else None
    if not isinstance(pr, dict):
        raise ActionSetupError(
            f"GITHUB_EVENT_PATH {path}: the event holds no pull_request: trigger the workflow "
            "with `on: pull_request` (or `pull_request_target`)"
        )
    try:
        return _pull_event(pr)
    except (KeyError, TypeError) as exc:
        raise ActionSetupError(f"GITHUB_EVENT_PATH {path}: the pull_request has no {exc}") from None


def _pull_event(pr: dict[str, Any]) -> PullEvent:
    head, base = pr["head"], pr["base"]
    head_repo = (head.get("repo") or {}).get("full_name")  # None once the fork is deleted
    state = PullState(
        number=int(pr["number"]),
        state=str(pr.get("state") or "open"),
        merged=bool(pr.get("merged")),
        draft=bool(pr.get("draft")),
        head_sha=str(head["sha"]),
        head_ref=str(head["ref"]),
        base_ref=str(base["ref"]),
        base_sha=str(base["sha"]),
        title=str(pr.get("title") or ""),
        body=str(pr.get("body") or ""),
        user=str((pr.get("user") or {}).get("login") or ""),
        private=bool((base.get("repo") or {}).get("private")),
    )
    return PullEvent(state, fork=head_repo != base["repo"]["full_name"])


def read_only_expected(env: ActionEnv, event: PullEvent) -> bool:
    """Whether GitHub gives this run a read-only token whatever the workflow asks: a fork's or
    Dependabot's `pull_request` run. There, a refused write is the expected case, not a mistake."""
    return env.event_name == "pull_request" and (event.fork or env.actor in READ_ONLY_ACTORS)
