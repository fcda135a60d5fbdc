"""A render process of the sandbox (bot/render/sandbox.py): loads Helm once, then renders request
after request read from a pipe, each under a CPU-time and an address-space limit of its own.

    python -m bot.render.child REQUEST_FD REPLY_FD CPU_SECONDS MEMORY_BYTES SCRATCH_DIR

Wire format, both ways: frames of an 8-byte big-endian length and that many bytes. A request is three
frames (a JSON header with the release, the namespace, the capabilities and whether to lint; the
values as JSON; the chart archive); a reply is one frame (none where the header says `"render": false`: a lint alone, of a
render made before), `{"error": {"message", "template", "line"}}`
as JSON, or the manifests: `{"manifests": [[name, bytes], ...]}` as JSON, a line feed, and each
template's text in UTF-8, one after the other (megabytes of CRDs cross without JSON's escapes,
which cost several times the rest of their way); then, when the header asked for lint, a second,
`{"lint": [{"severity", "path", "message"}]}`. The lint has limits of its own, counted afresh after
the render: a lint that runs out of them costs the lint, never the render already sent. JSON, not
pickle: the parent never unpickles what a process running untrusted templates wrote.

SCRATCH_DIR is the one directory the process may write (Helm's lint takes a file path and extracts
the archive): created by the parent for this process alone, and TMPDIR in its environment."""

from __future__ import annotations

import json
import math
import os
import resource
import struct
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from bot.render.confine import Confinement, confine

_LENGTH = struct.Struct("!Q")
# Python's own allocations can fail under the address-space limit too; the parent reads this exit.
EXIT_OUT_OF_MEMORY = 3
_PARENT_POLL_SECONDS = 1.0


def frame(*parts: bytes) -> bytes:
    return b"".join(_LENGTH.pack(len(part)) + part for part in parts)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes | None:
    """One frame; None at the end of the stream (the parent closed the pipe or died)."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return None
    return _read_exactly(fd, _LENGTH.unpack(head)[0])


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _set_soft_limit(which: int, soft: int) -> None:
    # Only the soft limit moves: an unprivileged process can lower its hard limit but never raise it
    # again, and every render needs a soft limit above the last one.
    _, hard = resource.getrlimit(which)
    resource.setrlimit(which, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def limit_next_render(cpu_seconds: int, memory_bytes: int, statm: int) -> None:
    """RLIMIT_CPU counts the process's whole life, so this render's budget starts from what is used;
    the kernel sends SIGXCPU at the soft limit. RLIMIT_AS likewise: the Go runtime reserves ~1.8 GB
    of address space on load and keeps what its heap grew to, so the budget is on top of that.
    `statm` is /proc/self/statm, opened before confinement (which allows no new open of it)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _set_soft_limit(resource.RLIMIT_CPU, math.ceil(usage.ru_utime + usage.ru_stime) + cpu_seconds)
    pages = int(os.pread(statm, 256, 0).split()[0])
    _set_soft_limit(resource.RLIMIT_AS, pages * os.sysconf("SC_PAGE_SIZE") + memory_bytes)


def _watch_parent(parent: int) -> None:
    """Die with the parent even in the middle of a render. PR_SET_PDEATHSIG would fire when the
    *thread* that started this process exits, which in a threaded parent is not the parent dying."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _capabilities(request: dict[str, Any]) -> Any:
    from bot.kube.capabilities import Capabilities

    return Capabilities(request.get("kube_version"), tuple(request.get("api_versions") or ()))


def _reply(helm: Any, request: dict[str, Any], values: Any, archive: bytes) -> bytes:
    from bot.render.base import RenderFailure

    try:
        manifests = helm.render(
            archive, values, request["release"], request["namespace"], _capabilities(request)
        )
    except RenderFailure as failure:
        error = {"message": failure.message, "template": failure.template, "line": failure.line}
        return json.dumps({"error": error}).encode()
    return manifests_reply(manifests)


def manifests_reply(manifests: dict[str, str]) -> bytes:
    """The manifests as the reply frame carries them (the module's docstring)."""
    # surrogatepass: whatever str Helm's text became, the parent reads the same str back.
    texts = [(name, text.encode("utf-8", "surrogatepass")) for name, text in manifests.items()]
    sizes = json.dumps({"manifests": [[name, len(data)] for name, data in texts]})
    return b"".join((sizes.encode(), b"\n", *(data for _, data in texts)))


def read_reply(payload: bytes) -> dict[str, Any]:
    """A reply frame as the parent reads it: JSON (which holds no raw line feed), and after the
    first line feed the manifests' texts, when it lists their sizes."""
    head, _, body = payload.partition(b"\n")
    reply: dict[str, Any] = json.loads(head)
    sizes = reply.get("manifests")
    if isinstance(sizes, list):
        manifests, at = {}, 0
        for name, size in sizes:
            manifests[name] = body[at : at + size].decode("utf-8", "surrogatepass")
            at += size
        reply["manifests"] = manifests
    return reply


def _lint_reply(helm: Any, request: dict[str, Any], values: Any, archive: bytes) -> bytes:
    entries = helm.lint(archive, values, request["namespace"], _capabilities(request))
    return json.dumps({"lint": [entry.to_json() for entry in entries]}).encode()


def serve(
    requests: int,
    replies: int,
    cpu_seconds: int,
    memory_bytes: int,
    confined: Confinement,
    statm: int,
) -> int:
    from bot.render.embedded import EmbeddedHelm  # loads Helm's Go runtime, once for every render

    helm = EmbeddedHelm()
    ready = {"ready": helm.version, "confinement": confined.to_json()}
    write_all(replies, frame(json.dumps(ready).encode()))
    while True:
        # The address-space limit of the last render still holds while the next request is read:
        # a MemoryError anywhere in the loop is this exit code, the parent's evidence of the limit.
        try:
            request = [read_frame(requests) for _ in range(3)]
            header, values, archive = request
            if header is None or values is None or archive is None:
                return 0
            limit_next_render(cpu_seconds, memory_bytes, statm)
            request_header, request_values = json.loads(header), json.loads(values)
            if request_header.get("render", True):
                write_all(replies, frame(_reply(helm, request_header, request_values, archive)))
            if request_header.get("lint"):
                limit_next_render(cpu_seconds, memory_bytes, statm)
                lint = _lint_reply(helm, request_header, request_values, archive)
                write_all(replies, frame(lint))
        except MemoryError:
            return EXIT_OUT_OF_MEMORY


def main(argv: Sequence[str]) -> int:
    requests, replies, cpu_seconds, memory_bytes = (int(arg) for arg in argv[:4])
    scratch = argv[4]
    # SIGXCPU's default action dumps core: a looping template must not fill the disk.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    parent = os.getppid()
    statm = os.open("/proc/self/statm", os.O_RDONLY)  # what confinement no longer lets it open
    # Before any thread starts, Helm's Go runtime's included: a Landlock domain binds the thread
    # that enters it and the threads started afterwards.
    confined = confine(writable=scratch)
    _watch_parent(parent)
    return serve(requests, replies, cpu_seconds, memory_bytes, confined, statm)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
