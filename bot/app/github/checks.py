"""Check runs over the REST API: start a review's runs, then complete each with its output.

PyGithub's `CheckRun.edit` needs the run fetched first and `Commit.get_check_runs` the commit;
these calls go straight to the requester by run id, one request each.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from github.Requester import Requester

from bot.report.bodies import ANNOTATIONS_PER_REQUEST, CheckRunOutput

IN_PROGRESS, COMPLETED = "in_progress", "completed"
RUNS_PER_PAGE = 100  # GitHub's largest page of check runs


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class AppIdentity:
    """Which app's runs are ours: by id where it is known (the App's own; GitHub Actions' on
    github.com), else by slug (GitHub Actions on Enterprise Server, whose id differs per server)."""

    id: int | None
    slug: str = ""

    def query(self) -> dict[str, Any]:
        return {"app_id": self.id} if self.id is not None else {}

    def owns(self, run: dict[str, Any]) -> bool:
        app = run.get("app") or {}
        return app.get("id") == self.id if self.id is not None else app.get("slug") == self.slug


def find_runs(
    requester: Requester, repo_url: str, head_sha: str, names: Sequence[str], app: AppIdentity
) -> dict[str, int]:
    """The latest run of this app on `head_sha` for each of `names` that has one: one listing
    for all of them (by name, when there is one name), paged at GitHub's 100 a page."""
    by_name = {"check_name": names[0]} if len(names) == 1 else {}
    query = {**by_name, **app.query(), "filter": "latest", "per_page": RUNS_PER_PAGE}
    found: dict[str, int] = {}
    page = 1
    while True:
        _, data = requester.requestJsonAndCheck(
            "GET", f"{repo_url}/commits/{head_sha}/check-runs", parameters={**query, "page": page}
        )
        for run in data["check_runs"]:
            if run["name"] in names and app.owns(run):
                found[run["name"]] = max(found.get(run["name"], 0), int(run["id"]))
        if len(data["check_runs"]) < RUNS_PER_PAGE:
            return found
        page += 1


def unfinished_runs(
    requester: Requester, repo_url: str, head_sha: str, app: AppIdentity
) -> list[int]:
    """This app's runs on `head_sha` still in progress (left so by a worker that died)."""
    _, data = requester.requestJsonAndCheck(
        "GET",
        f"{repo_url}/commits/{head_sha}/check-runs",
        parameters={**app.query(), "status": IN_PROGRESS, "per_page": 100},
    )
    return [int(r["id"]) for r in data["check_runs"] if app.owns(r)]


def start_run(requester: Requester, repo_url: str, head_sha: str, name: str) -> int:
    body = {"name": name, "head_sha": head_sha, "status": IN_PROGRESS, "started_at": _now()}
    _, data = requester.requestJsonAndCheck("POST", f"{repo_url}/check-runs", input=body)
    return int(data["id"])


def restart_run(requester: Requester, repo_url: str, run_id: int) -> None:
    body = {"status": IN_PROGRESS, "started_at": _now()}
    requester.requestJsonAndCheck("PATCH", f"{repo_url}/check-runs/{run_id}", input=body)


def annotation_key(note: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(
        note.get(k) for k in ("path", "start_line", "end_line", "annotation_level", "message")
    )


def existing_annotations(requester: Requester, repo_url: str, run_id: int) -> set[tuple[Any, ...]]:
    """What a reused run already carries: GitHub appends annotations and never removes them, so a
    re-run sends only the ones not there yet."""
    found: set[tuple[Any, ...]] = set()
    page = 1
    while True:
        _, data = requester.requestJsonAndCheck(
            "GET",
            f"{repo_url}/check-runs/{run_id}/annotations",
            parameters={"per_page": 100, "page": page},
        )
        found.update(annotation_key(a) for a in data)
        if len(data) < 100:
            return found
        page += 1


def completion_bodies(
    out: CheckRunOutput, already: Set[tuple[Any, ...]] = frozenset()
) -> list[dict[str, Any]]:
    """The PATCH bodies that complete a run: the annotations 50 a request (GitHub appends them),
    the conclusion with the last batch, so that a run never shows a verdict with half its
    evidence and a review of up to 50 annotations completes its run in one request."""
    notes = [n for n in (a.to_api() for a in out.annotations) if annotation_key(n) not in already]
    step = ANNOTATIONS_PER_REQUEST
    batches = [notes[i : i + step] for i in range(0, len(notes), step)] or [[]]
    bodies: list[dict[str, Any]] = [
        {"output": {"title": out.title, "summary": out.summary, "annotations": batch}}
        for batch in batches[:-1]
    ]
    final: dict[str, Any] = {"title": out.title, "summary": out.summary}
    if out.text:
        final["text"] = out.text
    if batches[-1]:
        final["annotations"] = batches[-1]
    bodies.append(
        {"status": COMPLETED, "conclusion": out.conclusion, "completed_at": _now(), "output": final}
    )
    return bodies


def unique(names: Sequence[str]) -> list[str]:
    """Each name once, in order: a name given twice would make two runs race for one id."""
    return list(dict.fromkeys(names))
