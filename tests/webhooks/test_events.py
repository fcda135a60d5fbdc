import copy
import json
from typing import Any

import pytest

from bot.app.commands import parse_command
from bot.app.jobspec import CommandJob, RecheckJob, RepoRef, ReviewJob
from tests.support.paths import WEBHOOKS
from webhooks.events import PayloadError, Routed, route

DELIVERY = "0b989ba4-242f-11e5-81e1-c7b6966d2516"
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
HELLO = RepoRef("Codertocat/Hello-World", 1, "https://github.com/Codertocat/Hello-World.git")
HELLO_957387 = RepoRef(
    "Codertocat/Hello-World", 957387, "https://github.com/Codertocat/Hello-World.git"
)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEBHOOKS / name).read_text())
    return data


def review(reason: str, repo: RepoRef = HELLO, number: int | None = 2, head: str = HEAD) -> Routed:
    return Routed(ReviewJob(repo, number, head, reason, DELIVERY), "queued")


def base_changed(payload: dict[str, Any]) -> dict[str, Any]:
    payload = copy.deepcopy(payload)
    payload["changes"]["base"] = {"ref": {"from": "develop"}, "sha": {"from": "f" * 40}}
    return payload


# Every example payload, with the X-GitHub-Event GitHub sends it under, and exactly what it routes to.
FIXTURES: list[tuple[str, str, Routed]] = [
    ("pull_request.opened.json", "pull_request", review("pull_request.opened")),
    ("pull_request.synchronize.json", "pull_request", review("pull_request.synchronize")),
    ("pull_request.reopened.json", "pull_request", review("pull_request.reopened")),
    ("pull_request.ready_for_review.json", "pull_request", review("pull_request.ready_for_review")),
    (
        "pull_request.closed.json",
        "pull_request",
        Routed(RecheckJob(HELLO, "master", "pull_request.closed", 2, DELIVERY), "queued"),
    ),
    # GitHub's example edits the title and the description, where the headings check reads
    ("derived/pull_request.edited.json", "pull_request", review("pull_request.edited")),
    ("issue_comment.created.json", "issue_comment", Routed(None, "ignored: not a pull request")),
    (
        "derived/issue_comment.created.pull_request.json",
        "issue_comment",
        Routed(None, "ignored: not a command"),
    ),
    (
        "check_run.rerequested.json",
        "check_run",
        review(
            "check_run.rerequested",
            RepoRef("github/hello-world", 1, "http://github.com/github/hello-world.git"),
            None,
            "d6fde92930d4715a2b49857d24b940956b26d2d3",
        ),
    ),
    ("check_run.requested_action.json", "check_run", Routed(None, "ignored: unhandled action")),
    (
        "check_suite.rerequested.json",
        "check_suite",
        review("check_suite.rerequested", HELLO_957387),
    ),
    ("check_suite.requested.json", "check_suite", Routed(None, "ignored: unhandled action")),
    ("push.json", "push", Routed(RecheckJob(HELLO, "master", "push", None, DELIVERY), "queued")),
    ("installation.created.json", "installation", Routed(None, "logged")),
    ("installation.deleted.json", "installation", Routed(None, "logged")),
    ("installation_repositories.added.json", "installation_repositories", Routed(None, "logged")),
    ("ping.json", "ping", Routed(None, "pong")),
]


@pytest.mark.parametrize(("name", "event", "expected"), FIXTURES, ids=[f[0] for f in FIXTURES])
def test_every_example_payload_routes_to_its_job(name: str, event: str, expected: Routed) -> None:
    assert route(event, load(name), DELIVERY) == expected


def test_every_example_file_is_covered() -> None:
    files = {p.relative_to(WEBHOOKS).as_posix() for p in WEBHOOKS.rglob("*.json")}
    assert files - {"manifest.json"} == {name for name, _, _ in FIXTURES}


def edit_changing(*fields: str) -> dict[str, Any]:
    payload = base_changed(load("derived/pull_request.edited.json"))
    payload["changes"] = {k: v for k, v in payload["changes"].items() if k in fields}
    return payload


@pytest.mark.parametrize("fields", [("base",), ("title",), ("body",), ("base", "body")])
def test_edit_of_the_base_title_or_description_is_reviewed(fields: tuple[str, ...]) -> None:
    payload = edit_changing(*fields)
    assert route("pull_request", payload, DELIVERY) == review("pull_request.edited")


def test_edit_of_nothing_the_review_reads_is_ignored_with_the_reason() -> None:
    payload = edit_changing()  # GitHub sends `edited` with empty changes, e.g. for some API edits
    assert route("pull_request", payload, DELIVERY) == Routed(
        None, "ignored: neither the base, the title nor the description changed"
    )


def test_draft_pull_requests_are_reviewed_too() -> None:
    payload = load("pull_request.opened.json")
    payload["pull_request"]["draft"] = True
    assert route("pull_request", payload, DELIVERY) == review("pull_request.opened")


@pytest.mark.parametrize(
    "action", ["labeled", "assigned", "converted_to_draft", "auto_merge_enabled"]
)
def test_other_pull_request_actions_are_ignored(action: str) -> None:
    payload = load("pull_request.opened.json") | {"action": action}
    assert route("pull_request", payload, DELIVERY) == Routed(None, "ignored: unhandled action")


def test_merged_pull_request_rechecks_its_base() -> None:
    payload = load("pull_request.closed.json")
    payload["pull_request"]["merged"] = True
    payload["pull_request"]["base"]["ref"] = "develop"
    job = RecheckJob(HELLO, "develop", "pull_request.closed", 2, DELIVERY)
    assert route("pull_request", payload, DELIVERY) == Routed(job, "queued")


def test_check_run_with_a_pull_request_uses_its_number() -> None:
    payload = load("check_run.requested_action.json") | {"action": "rerequested"}
    repo = RepoRef("electron/electron", 690857, "https://github.com/electron/electron.git")
    expected = review(
        "check_run.rerequested", repo, 26764, "5bd5f196a46b8222fb7484f05faba41a73cf34bd"
    )
    assert route("check_run", payload, DELIVERY) == expected


def test_check_suite_without_pull_requests_leaves_the_number_to_the_worker() -> None:
    payload = load("check_suite.rerequested.json")
    payload["check_suite"]["pull_requests"] = []
    expected = review("check_suite.rerequested", HELLO_957387, None)
    assert route("check_suite", payload, DELIVERY) == expected


@pytest.mark.parametrize(
    ("ref", "deleted", "outcome"),
    [
        ("refs/tags/v1.0.0", False, "ignored: not a branch"),
        ("refs/heads/release/1.x", True, "ignored: branch deleted"),
    ],
)
def test_tag_pushes_and_branch_deletions_are_ignored(ref: str, deleted: bool, outcome: str) -> None:
    payload = load("push.json") | {"ref": ref, "deleted": deleted}
    assert route("push", payload, DELIVERY) == Routed(None, outcome)


def test_push_to_a_nested_branch_name_keeps_the_whole_name() -> None:
    payload = load("push.json") | {"ref": "refs/heads/release/1.x"}
    job = RecheckJob(HELLO, "release/1.x", "push", None, DELIVERY)
    assert route("push", payload, DELIVERY) == Routed(job, "queued")


@pytest.mark.parametrize("event", ["star", "workflow_run", "", "pull_request_review"])
def test_unknown_events_are_ignored(event: str) -> None:
    assert route(event, {}, DELIVERY) == Routed(None, "ignored: unhandled event")


def comment(body: str, **user: Any) -> dict[str, Any]:
    payload = load("derived/issue_comment.created.pull_request.json")
    payload["comment"]["body"] = body
    payload["comment"]["user"].update(user)
    return payload


def command(name: str) -> Routed:
    job = CommandJob(HELLO, 2, 492700400, "Codertocat", name, DELIVERY)  # type: ignore[arg-type]
    return Routed(job, "queued")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/chart-review", "run"),
        ("/chart-review run", "run"),
        ("/chart-review help", "help"),
        ("/chart-review   \t", "run"),
        ("/chart-review run  ", "run"),
        ("/chart-review\r\nthanks!", "run"),
        ("/chart-review help\nand some prose below", "help"),
        ("/Chart-Review RUN", "run"),
        ("/chart-review\tHelp", "help"),
        ("/chart-review run now", None),
        ("/chart-review please", None),
        ("/chart-review-foo", None),
        ("/chart-reviewrun", None),
        (" /chart-review", None),
        ("please /chart-review", None),
        ("LGTM\n/chart-review", None),
        ("`/chart-review`", None),
        ("> /chart-review", None),
        ("", None),
    ],
)
def test_command_is_the_whole_first_line(body: str, expected: str | None) -> None:
    assert parse_command(body) == expected
    routed = route("issue_comment", comment(body), DELIVERY)
    assert routed == (command(expected) if expected else Routed(None, "ignored: not a command"))


@pytest.mark.parametrize(
    "user", [{"type": "Bot", "login": "chart-review"}, {"login": "chart-review[bot]"}]
)
def test_comments_by_bots_are_ignored(user: dict[str, str]) -> None:
    routed = route("issue_comment", comment("/chart-review", **user), DELIVERY)
    assert routed == Routed(None, "ignored: bot author")


def test_comment_sent_by_a_bot_is_ignored() -> None:
    payload = comment("/chart-review")
    payload["sender"] = {"login": "renovate[bot]", "type": "Bot"}
    assert route("issue_comment", payload, DELIVERY) == Routed(None, "ignored: bot author")


def edited(body: str, before: str | None, **user: Any) -> dict[str, Any]:
    """The comment edited to `body`, as GitHub sends it: `changes.body.from` holds the old body."""
    payload = comment(body, **user) | {"action": "edited"}
    if before is not None:
        payload["changes"] = {"body": {"from": before}}
    return payload


@pytest.mark.parametrize(
    ("body", "before", "expected"),
    [
        ("/chart-review", "/chart-reveiw", command("run")),
        ("/chart-review help", "please help", command("help")),
        ("/chart-review", "/chart-review run now", command("run")),
        (
            "/chart-review\nthanks, fixed",
            "/chart-review",
            Routed(None, "ignored: edit made no new command"),
        ),
        ("/chart-review run", "/chart-review", Routed(None, "ignored: edit made no new command")),
        ("/chart-review", None, Routed(None, "ignored: edit made no new command")),
        ("never mind", "/chart-review", Routed(None, "ignored: not a command")),
    ],
)
def test_edited_comment_runs_only_when_the_edit_made_the_command(
    body: str, before: str | None, expected: Routed
) -> None:
    assert route("issue_comment", edited(body, before), DELIVERY) == expected


def test_edited_comment_with_mistyped_changes_is_not_a_command() -> None:
    payload = edited("/chart-review", None)
    payload["changes"] = {"body": ["/chart-reveiw"]}
    expected = Routed(None, "ignored: edit made no new command")
    assert route("issue_comment", payload, DELIVERY) == expected


def test_edits_by_the_bot_to_its_own_comment_are_ignored() -> None:
    # The summary comment is edited on every review; its help text quotes the command.
    payload = edited("/chart-review\nre-runs the review", "old summary", login="chart-review[bot]")
    payload["sender"] = {"login": "chart-review[bot]", "type": "Bot"}
    assert route("issue_comment", payload, DELIVERY) == Routed(None, "ignored: bot author")


def test_deleted_comments_are_not_commands() -> None:
    payload = comment("/chart-review") | {"action": "deleted"}
    assert route("issue_comment", payload, DELIVERY) == Routed(None, "ignored: unhandled action")


def test_review_comments_are_not_commands() -> None:
    payload = comment("/chart-review")  # the fields a review comment shares with issue_comment
    expected = Routed(None, "ignored: review comment")
    assert route("pull_request_review_comment", payload, DELIVERY) == expected


@pytest.mark.parametrize(
    ("event", "name", "path", "message"),
    [
        ("pull_request", "pull_request.opened.json", "pull_request.head.sha", "missing"),
        ("pull_request", "pull_request.opened.json", "installation", "installation.id: missing"),
        ("pull_request", "pull_request.closed.json", "pull_request.base.ref", "missing"),
        ("push", "push.json", "repository.clone_url", "missing"),
        ("push", "push.json", "ref", "missing"),
        ("check_run", "check_run.rerequested.json", "check_run.head_sha", "missing"),
        ("check_suite", "check_suite.rerequested.json", "check_suite.pull_requests", "missing"),
        (
            "issue_comment",
            "derived/issue_comment.created.pull_request.json",
            "comment.body",
            "missing",
        ),
    ],
)
def test_missing_fields_are_named(event: str, name: str, path: str, message: str) -> None:
    payload = load(name)
    *parents, leaf = path.split(".")
    holder = payload
    for key in parents:
        holder = holder[key]
    del holder[leaf]
    expected = message if ":" in message else f"{path}: {message}"
    with pytest.raises(PayloadError) as raised:
        route(event, payload, DELIVERY)
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda p: p["pull_request"].update(number="2"),
            "pull_request.number: expected an integer, found a string",
        ),
        (
            lambda p: p["pull_request"].update(number=True),
            "pull_request.number: expected an integer, found a boolean",
        ),
        (
            lambda p: p["installation"].update(id=[1]),
            "installation.id: expected an integer, found a list",
        ),
        (lambda p: p.update(pull_request="2"), "pull_request: expected an object, found a string"),
    ],
)
def test_mistyped_fields_are_named(mutate: Any, message: str) -> None:
    payload = load("pull_request.opened.json")
    mutate(payload)
    with pytest.raises(PayloadError, match=f"^{message}$"):
        route("pull_request", payload, DELIVERY)


def test_mistyped_pull_request_entry_is_named() -> None:
    payload = load("check_suite.rerequested.json")
    payload["check_suite"]["pull_requests"] = [{"id": 1}]
    with pytest.raises(PayloadError, match=r"^check_suite\.pull_requests\.0\.number: missing$"):
        route("check_suite", payload, DELIVERY)
