"""A history cut short: one place that tells a shallow clone, and refuses to measure a change whose
merge base it does not hold.

A review measures the PR from the merge base of its target and head (as chart-testing does). In a
shallow clone (`actions/checkout`'s default depth of 1) that commit is often missing, and git then
finds no merge base: comparing with the target's tip instead blames the PR for everything the target
did since it forked (charts it never touched listed, their versions "not increasing"). That is
refused, naming the fix; where a merge base is found the range is right (every commit between it
and both tips is present), and only the rules that read the history say it is cut short."""

from __future__ import annotations

from typing import Protocol

from bot.errors import ChartReviewError

# How to get the whole history: on a checkout, and in a GitHub workflow's checkout step.
UNSHALLOW = "`git fetch --unshallow`"
FETCH_DEPTH = "`fetch-depth: 0` on `actions/checkout`"
FIX = f"{UNSHALLOW}, or {FETCH_DEPTH} in a workflow"
CUT_SHORT = (
    "{repo} is a shallow clone and does not hold the merge base of {base} and {head}, so the change "
    "cannot be measured from where {head} forked (comparing with the tip of {base} would blame it "
    "for every change {base} made since); fetch the whole history: {fix}"
)
UNRELATED = (
    "{base} and {head} have no commit in common in {repo} (no merge base), so there is no change "
    "to measure; name the branch {head} was made from as the base"
)


class Clone(Protocol):
    """A git view that can say where its history is cut (`GitRepo` can)."""

    def shallow_commits(self) -> frozenset[str]: ...


class History(Clone, Protocol):
    """The git view the merge base is read from (`GitRepo` is one)."""

    def merge_base(self, a: str, b: str) -> str | None: ...


class MissingMergeBase(ChartReviewError):
    """No merge base for the range asked: the history is cut short, or unrelated. Exit 2."""


def is_shallow(history: Clone) -> bool:
    """Whether the clone's history is cut short: git's `shallow` file lists the commits whose
    parents it lacks (read at each call, as a fetch may deepen it meanwhile)."""
    return bool(history.shallow_commits())


def missing_merge_base(history: History, repo: str, base: str, head: str) -> MissingMergeBase:
    """The refusal for `base`..`head` (as the user named them) having no merge base: why, and the
    fix."""
    text = CUT_SHORT if is_shallow(history) else UNRELATED
    return MissingMergeBase(text.format(repo=repo, base=base, head=head, fix=FIX))


def merge_base(history: History, repo: str, target: str, head: str, names: tuple[str, str]) -> str:
    """The merge base of `target` and `head` (commit ids); `names` are how the user named them,
    for the refusal when there is none."""
    found = history.merge_base(target, head)
    if found is None:
        raise missing_merge_base(history, repo, *names)
    return found
