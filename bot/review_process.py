"""How a process that reviews runs: the command line, the Action and the App's workers set it
once, at start (`tune_for_reviews`).

Garbage collection. A review allocates ~17,000 containers it keeps a while (parsed manifests, tree
levels, findings) and frees nearly all of them by reference counting; Python's default
young-generation threshold (700) then collects ~25 times a review, each collection walking what is
alive to find no cycle: ~30 ms of a 600-PR-ref review's ~330 ms of this process's CPU. At 50,000 a
collection comes every few reviews; the garbage cycles it finds late weigh a few MB at most.

The GIL's switch interval. A render process waits on this process between two renders: the thread
that asked must take the GIL back to read the reply and send the next request. While a review's
checks hold the GIL, a waiting thread gets it only when the interval runs out, 5 ms by default,
about what a render takes, so a render process sat idle for much of its turn. At 1 ms the render
processes of a 200-change replay were busy 2-4 points more of the time, and this process spent no
more CPU (bench/replay_bench.py, alternating runs); at 0.2 ms, no better."""

from __future__ import annotations

import gc
import sys

YOUNG, MIDDLE, OLD = 50_000, 20, 20
SWITCH_INTERVAL = 0.001  # seconds


def tune_for_reviews() -> None:
    gc.set_threshold(YOUNG, MIDDLE, OLD)
    sys.setswitchinterval(SWITCH_INTERVAL)
