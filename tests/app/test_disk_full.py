"""A job stopped by a full disk is run again later, not dropped; the disk caps' settings. (On a
real full disk, end to end: tests/app/test_full_disk.py.)"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from bot.app.disk_full import waiting_for_space
from bot.app.jobspec import Job, RepoRef, ReviewJob
from bot.app.queue import Busy, Handler
from bot.app.settings import Settings, SettingsError
from bot.git.fetch import disk_full

JOB = ReviewJob(RepoRef("acme/charts", 1, "https://github.com/acme/charts.git"), 1, "a" * 40, "x")


def failing(exc: Exception) -> Handler:
    def handler(job: Job) -> None:
        raise exc

    return handler


def test_a_mirror_that_the_disk_cannot_hold_makes_the_job_wait() -> None:
    handler = waiting_for_space(failing(disk_full(Path("mirrors/acme/x.git"), "git fetch")), 5)

    with pytest.raises(Busy, match=r"^disk full: git fetch failed: no space left") as busy:
        handler(JOB)
    assert busy.value.delay == 5


def test_a_write_that_runs_out_of_space_makes_the_job_wait() -> None:
    handler = waiting_for_space(failing(OSError(errno.ENOSPC, "No space left on device")), 5)

    with pytest.raises(Busy, match=r"^disk full: No space left on device$"):
        handler(JOB)


@pytest.mark.parametrize("exc", [OSError(errno.EACCES, "Permission denied"), ValueError("a bug")])
def test_other_failures_go_on_as_before(exc: Exception) -> None:
    with pytest.raises(type(exc)):
        waiting_for_space(failing(exc), 5)(JOB)


def test_the_disk_caps_default_and_are_given_in_megabytes() -> None:
    default = Settings.from_env({})
    assert (default.render_cache_max_bytes, default.mirrors_max_bytes) == (512 << 20, 10 << 30)

    set_ = Settings.from_env({"RENDER_CACHE_MAX_MB": "64", "MIRRORS_MAX_MB": "2048"})
    assert (set_.render_cache_max_bytes, set_.mirrors_max_bytes) == (64 << 20, 2 << 30)


@pytest.mark.parametrize("name", ["RENDER_CACHE_MAX_MB", "MIRRORS_MAX_MB"])
@pytest.mark.parametrize(
    ("raw", "error"),
    [("0", "must be a positive number of MB, got 0"), ("1G", "must be an integer, got '1G'")],
)
def test_a_disk_cap_that_is_no_positive_integer_is_refused(name: str, raw: str, error: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({name: raw})
    assert str(refused.value) == f"{name} {error}"
