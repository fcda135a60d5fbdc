"""Base and head issues into findings: a finding's line is looked up only for the issue reported."""

from __future__ import annotations

from bot.model.report import Severity
from checks.kit.delta import Issue, compare

RULE = "rule"


def issue(profile_line: int, asked: list[int]) -> Issue:
    def locate() -> int:
        asked.append(profile_line)
        return profile_line

    return Issue(
        RULE, "Deployment/default/web", "app", "detail", "title", "msg", "t.yaml", None, {}, locate
    )


def test_the_line_is_found_once_per_finding_from_its_first_profile() -> None:
    asked: list[int] = []
    head = {"aks": [issue(7, asked)], "eks": [issue(8, asked)], "gke": [issue(9, asked)]}
    [finding] = compare("check", "chart", {}, head, {RULE: Severity.FAILURE})
    assert (finding.line, finding.profile, asked) == (7, "aks, eks, gke", [7])


def test_an_issue_with_a_line_keeps_it() -> None:
    fixed = Issue(RULE, "Deployment/default/web", None, "detail", "title", "msg", "t.yaml", 3)
    [finding] = compare("check", "chart", {}, {"aks": [fixed]}, {RULE: Severity.FAILURE})
    assert finding.line == 3
