"""The garbage collector's thresholds for a process that reviews: the command line, the Action and
the App's workers set them once, at start.

A review allocates ~17,000 containers it keeps a while (parsed manifests, tree levels, findings)
and frees nearly all of them by reference counting; Python's default young-generation threshold
(700) then collects ~25 times a review, each collection walking what is alive to find no cycle:
~30 ms of a 600-PR-ref review's ~330 ms of this process's CPU. At 50,000 a collection comes every
few reviews; the garbage cycles it finds late weigh a few MB at most."""

from __future__ import annotations

import gc

YOUNG, MIDDLE, OLD = 50_000, 20, 20


def set_review_thresholds() -> None:
    gc.set_threshold(YOUNG, MIDDLE, OLD)
