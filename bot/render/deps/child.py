"""One fetch, in a process of its own: `python -m bot.render.deps.child` reads a JSON request on
stdin and writes one JSON reply on stdout.

A download can stall for ever, and Helm's downloader is a native call that cannot be interrupted
from Python; in a process of its own either can be killed (bot/render/deps/fetcher.py does, at the
fetch's time limit). The file-size limit bounds what a hostile index or archive can write, the
CPU limit what parsing it can cost. It runs with a private HOME and Helm directories, so no login
or repository of the machine's own Helm leaks in, and nothing it writes outlives it.

Three kinds, each request {kind, dest, max_bytes, cpu_seconds, wall_seconds, ...}:
- `index`: {url, home, authorization} → {"file"}: a chart repository's index.yaml, reduced to
  JSON (bot/render/deps/index.py) in `dest`;
- `archive`: {url, home, authorization} → {"file"}: one chart archive the index names;
- `oci`: {repository, name, version, exact, plain_http, username, password, registry_config} →
  {"version", "file"}: a chart from an OCI registry, through Helm's registry client.
`authorization` goes to `home`'s origin only (bot/render/deps/download.py). A failure is
{"error"}.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any


def main() -> int:
    request = json.loads(sys.stdin.read())
    _limit(request)
    try:
        reply = _fetch(request)
    except Exception as exc:  # Helm's errors are data here: the parent turns them into findings
        reply = {"error": _short(str(exc))}
    sys.stdout.write(json.dumps(reply))
    return 0


def _limit(request: dict[str, Any]) -> None:
    size = int(request["max_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    cpu = int(request["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _fetch(request: dict[str, Any]) -> dict[str, Any]:
    if request["kind"] == "oci":
        from helm_python import registry

        return _fetch_oci(request, registry)
    from bot.render.deps.download import DownloadError, download

    dest = request["dest"]
    url = request["url"]
    fetched = os.path.join(dest, "index.yaml" if request["kind"] == "index" else "chart.tgz")
    try:
        download(
            url,
            fetched,
            home=request["home"],
            authorization=request["authorization"],
            max_bytes=int(request["max_bytes"]),
            timeout=float(request["wall_seconds"]),
        )
    except DownloadError as exc:
        return {"error": str(exc)}
    if request["kind"] == "archive":
        return {"file": fetched}
    return {"file": _reduced(fetched, url, dest)}


def _reduced(path: str, url: str, dest: str) -> str:
    from bot.render.deps.index import reduce_index

    with open(path, "rb") as handle:
        text = handle.read()
    os.unlink(path)  # its room, under the file-size limit, is the reduced copy's
    reduced = reduce_index(text, url)  # a ValueError names what is wrong: the reply's error
    out = os.path.join(dest, "index.json")
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(reduced, handle, separators=(",", ":"))
    return out


def _fetch_oci(request: dict[str, Any], registry: Any) -> dict[str, Any]:
    from bot.render.deps.request import newest

    reference, version = (
        f"{request['repository'].rstrip('/')}/{request['name']}",
        request["version"],
    )
    plain = bool(request["plain_http"])
    home = os.environ.get("HOME", request["dest"])
    config = request["registry_config"] or os.path.join(home, "registry.json")
    with registry.RegistryClient(plain_http=plain, credentials_file=config) as client:
        if request["username"] is not None:
            host = reference.removeprefix("oci://").split("/", 1)[0]
            client.login(host, request["username"], request["password"], plain_http=plain)
        chosen = version if request["exact"] else newest(client.tags(reference), version)
        if chosen is None:
            return {"error": f"no tag of {reference} matching {version}"}
        client.pull(reference, version=chosen, destination=request["dest"], plain_http=plain)
    return {"version": chosen, "file": _archive(request["dest"])}


def _archive(directory: str) -> str:
    found = [f for f in os.listdir(directory) if f.endswith(".tgz")]
    if len(found) != 1:
        raise RuntimeError(f"expected one chart archive from the download, found {len(found)}")
    return os.path.join(directory, found[0])


def _short(message: str) -> str:
    """Helm's error chain, without the wrapper prefixes the SDK adds."""
    return " ".join(message.split())[:500]


if __name__ == "__main__":
    raise SystemExit(main())
