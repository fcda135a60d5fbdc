"""Response bodies for check runs and suites and for git objects (branches, refs, commits)."""

from __future__ import annotations

import hashlib
from typing import Any

from .openapi_check import GITHUB_HOST
from .payloads import WEB_HOST, app, example, from_example, repository, rewrite
from .state import ChangedFile, CheckRun, GitHubState, Repository, iso

Json = dict[str, Any]
_CHECKS_EXAMPLE_REPO = "github/hello-world"


def _pull_ref(base: str, state: GitHubState, run: CheckRun) -> list[Json]:
    """Open PRs whose head is this sha, in the minimal form GitHub embeds in a check run."""
    repo = state.repos[run.repo]
    small = {"id": repo.id, "url": f"{base}/repos/{repo.full_name}", "name": repo.name}
    return [
        {
            "url": f"{base}/repos/{pr.repo}/pulls/{pr.number}",
            "id": pr.id,
            "number": pr.number,
            "head": {"ref": pr.head_ref, "sha": pr.head_sha, "repo": small},
            "base": {"ref": pr.base_ref, "sha": pr.base_sha, "repo": small},
        }
        for pr in state.pulls.values()
        if pr.repo == run.repo and pr.head_sha == run.head_sha and pr.state == "open"
    ]


def check_run(base: str, state: GitHubState, run: CheckRun) -> Json:
    url = f"{base}/repos/{run.repo}/check-runs/{run.id}"
    body: Json = from_example("check-run", base, run.repo, _CHECKS_EXAMPLE_REPO)
    body.update(
        id=run.id,
        node_id=f"CR_{run.id}",
        head_sha=run.head_sha,
        external_id=run.external_id or "",
        url=url,
        html_url=f"{WEB_HOST}/{run.repo}/runs/{run.id}",
        details_url=run.details_url or f"{WEB_HOST}/{run.repo}/runs/{run.id}",
        status=run.status,
        conclusion=run.conclusion,
        started_at=iso(run.started_at),
        completed_at=iso(run.completed_at),
        output={
            "title": run.title,
            "summary": run.summary,
            "text": run.text,
            "annotations_count": len(run.annotations),
            "annotations_url": f"{url}/annotations",
        },
        name=run.name,
        check_suite={"id": run.suite_id},
        app=app(base, state),
        pull_requests=_pull_ref(base, state, run),
    )
    return body


def annotation(base: str, run: CheckRun, note: Json) -> Json:
    return {
        "path": note["path"],
        "start_line": note["start_line"],
        "end_line": note["end_line"],
        "start_column": note.get("start_column"),
        "end_column": note.get("end_column"),
        "annotation_level": note["annotation_level"],
        "title": note.get("title"),
        "message": note["message"],
        "raw_details": note.get("raw_details"),
        "blob_href": f"{WEB_HOST}/{run.repo}/blob/{run.head_sha}/{note['path']}",
    }


def check_suite(base: str, state: GitHubState, repo: Repository, sha: str, suite: int) -> Json:
    runs = [r for r in state.check_runs.values() if r.suite_id == suite]
    done = bool(runs) and all(r.status == "completed" for r in runs)
    body: Json = from_example("check-suite", base, repo.full_name, _CHECKS_EXAMPLE_REPO)
    body.update(
        id=suite,
        node_id=f"CS_{suite}",
        head_sha=sha,
        head_branch=next((b for b, s in repo.branches.items() if s == sha), None),
        status="completed" if done else ("in_progress" if runs else "queued"),
        conclusion=_suite_conclusion(runs) if done else None,
        url=f"{base}/repos/{repo.full_name}/check-suites/{suite}",
        app=app(base, state),
        repository=repository(base, state, repo),
        pull_requests=[],
        latest_check_runs_count=len(runs),
        check_runs_url=f"{base}/repos/{repo.full_name}/check-suites/{suite}/check-runs",
    )
    return body


def _suite_conclusion(runs: list[CheckRun]) -> str:
    """The worst conclusion wins, as on GitHub's suite summary."""
    order = ["action_required", "failure", "timed_out", "cancelled", "neutral", "skipped"]
    conclusions = {r.conclusion for r in runs}
    return next((c for c in order if c in conclusions), "success")


def branch(base: str, repo: Repository, name: str, sha: str) -> Json:
    body: Json = from_example("branch-get", base, repo.full_name)
    body["name"] = name
    body["commit"] = commit(base, repo, sha)
    body["_links"] = {
        "self": f"{base}/repos/{repo.full_name}/branches/{name}",
        "html": f"{WEB_HOST}/{repo.full_name}/tree/{name}",
    }
    body["protection_url"] = f"{base}/repos/{repo.full_name}/branches/{name}/protection"
    return body


def short_branch(base: str, repo: Repository, name: str, sha: str) -> Json:
    return {
        "name": name,
        "commit": {"sha": sha, "url": f"{base}/repos/{repo.full_name}/commits/{sha}"},
        "protected": False,
    }


def git_ref(base: str, repo: Repository, ref: str, sha: str) -> Json:
    return {
        "ref": f"refs/{ref}",
        "node_id": f"REF_{sha[:12]}",
        "url": f"{base}/repos/{repo.full_name}/git/refs/{ref}",
        "object": {
            "type": "commit",
            "sha": sha,
            "url": f"{base}/repos/{repo.full_name}/git/commits/{sha}",
        },
    }


def commit(base: str, repo: Repository, sha: str, files: list[ChangedFile] | None = None) -> Json:
    body: Json = from_example("commit", base, repo.full_name)
    body = rewrite(body, {"6dcb09b5b57875f334f61aebed695e2e4193db5e": sha})
    body["sha"] = sha
    body["node_id"] = f"C_{sha[:12]}"
    # `author`/`committer` stay the example's user: the fake does not know who committed, and
    # the schema's nullable oneOf makes openapi-core refuse null there.
    body["parents"] = []
    body["files"] = [diff_entry(base, repo, sha, f) for f in files or []]
    body["stats"] = {
        "additions": sum(f.additions for f in files or []),
        "deletions": sum(f.deletions for f in files or []),
        "total": sum(f.additions + f.deletions for f in files or []),
    }
    return body


def comparison(base: str, repo: Repository, base_sha: str, head_sha: str) -> Json:
    body: Json = from_example("commit-comparison", base, repo.full_name)
    body.update(
        url=f"{base}/repos/{repo.full_name}/compare/{base_sha}...{head_sha}",
        base_commit=commit(base, repo, base_sha),
        merge_base_commit=commit(base, repo, base_sha),
        status="identical" if base_sha == head_sha else "ahead",
        ahead_by=0 if base_sha == head_sha else 1,
        behind_by=0,
        total_commits=0 if base_sha == head_sha else 1,
        commits=[] if base_sha == head_sha else [commit(base, repo, head_sha)],
        files=[],
    )
    return body


def diff_entry(base: str, repo: Repository, sha: str, item: ChangedFile) -> Json:
    body: Json = rewrite(example("diff-entry-items")[0], {GITHUB_HOST: base})
    body.update(
        sha=hashlib.sha1(item.filename.encode()).hexdigest(),  # stable stand-in blob id
        filename=item.filename,
        status=item.status,
        additions=item.additions,
        deletions=item.deletions,
        changes=item.additions + item.deletions,
        blob_url=f"{WEB_HOST}/{repo.full_name}/blob/{sha}/{item.filename}",
        raw_url=f"{WEB_HOST}/{repo.full_name}/raw/{sha}/{item.filename}",
        contents_url=f"{base}/repos/{repo.full_name}/contents/{item.filename}?ref={sha}",
    )
    if item.patch is None:
        body.pop("patch", None)
    else:
        body["patch"] = item.patch
    return body
