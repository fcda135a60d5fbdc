"""One fetch, in a process of its own: `python -m bot.render.deps.child` reads a JSON request on
stdin and writes one JSON reply on stdout.

Helm's downloader is a native call that cannot be interrupted from Python, and a registry can
stall it for ever; in a process of its own it can be killed (bot/render/deps/fetcher.py does, at
the fetch's time limit). The file-size limit bounds what a hostile index or archive can write, the
CPU limit what parsing it can cost. It runs with a private HOME and Helm directories, so no login
or repository of the machine's own Helm leaks in, and nothing it writes outlives it.

Request: {repository, name, version, exact, oci, plain_http, username, password, registry_config,
dest, max_bytes, cpu_seconds}. Reply: {"version", "file", "index_digest"} or {"error"}.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

from bot.render.deps.request import newest


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
    from helm_python import registry

    if request["oci"]:
        return _fetch_oci(request, registry)
    name, url, version = request["name"], request["repository"], request["version"]
    auth = {"username": request["username"], "password": request["password"]}
    entries = registry.repo_index(url, **auth).get("entries", {}).get(name)
    if not entries:
        return {"error": f"chart {name} is not in the repository's index.yaml"}
    available = {str(e.get("version")): e for e in entries if isinstance(e, dict)}
    chosen = version if request["exact"] else newest(available, version)
    if chosen is None or chosen not in available:
        return {"error": f"no version of {name} matching {version} in the repository's index.yaml"}
    registry.pull(name, repo_url=url, version=chosen, destination=request["dest"], **auth)
    return {
        "version": chosen,
        "file": _archive(request["dest"]),
        "index_digest": available[chosen].get("digest"),
    }


def _fetch_oci(request: dict[str, Any], registry: Any) -> dict[str, Any]:
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
    return {"version": chosen, "file": _archive(request["dest"]), "index_digest": None}


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
