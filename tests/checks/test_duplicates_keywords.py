"""GitHub's closing keywords, as checks/duplicates/keywords.py reads them."""

from __future__ import annotations

import pytest

from checks.duplicates.keywords import KEYWORDS, IssueRef, closing_issues

HERE = IssueRef("", 12)


@pytest.mark.parametrize("verb", KEYWORDS)
def test_every_verb_closes_in_any_case_with_or_without_a_colon(verb: str) -> None:
    for text in (f"{verb} #12", f"{verb.upper()}: #12", f"{verb.capitalize()}:  #12."):
        assert closing_issues(text) == {HERE}, text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Closes #12", IssueRef("", 12)),
        ("Closes tracebloc/Backend#2913", IssueRef("tracebloc/backend", 2913)),
        ("fixes https://github.com/Acme/charts/issues/7", IssueRef("acme/charts", 7)),
        ("(resolves #3)", IssueRef("", 3)),
    ],
)
def test_each_reference_form_is_normalised(text: str, expected: IssueRef) -> None:
    assert closing_issues(text) == {expected}


def test_the_repository_own_name_is_the_same_issue_as_a_bare_number() -> None:
    assert closing_issues("Closes acme/charts#12", this_repo="Acme/Charts") == {HERE}
    assert closing_issues("Closes other/charts#12", this_repo="acme/charts") == {
        IssueRef("other/charts", 12)
    }


@pytest.mark.parametrize(
    "text",
    [
        "see #12",
        "related to #12",
        "Part of #12, follows up acme/charts#12",
        "prefixes #12",  # a keyword inside another word
        "fixes #12abc",
        "fix https://github.com/acme/charts/pull/12",  # a PR, not an issue
        "closes#12",  # GitHub needs the space
    ],
)
def test_mentions_that_do_not_close(text: str) -> None:
    assert closing_issues(text) == frozenset()


def test_only_the_first_reference_after_a_keyword_closes() -> None:
    assert closing_issues("closes #1, #2; fixes #3") == {IssueRef("", 1), IssueRef("", 3)}


def test_template_examples_in_comments_and_code_are_not_read() -> None:
    body = (
        "<!-- Write 'Fixes #123' to close an issue.\n"
        "     Closes #456 works too -->\n"
        "```\n"
        "fixes #9\n"
        "```\n"
        "~~~~\n"
        "resolves #10\n"
        "~~~~\n"
        "Type `closes #11` to link it.\n"
        "Fixes #2913\n"
    )
    assert closing_issues(body) == {IssueRef("", 2913)}
