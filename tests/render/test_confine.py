"""The render processes confine themselves (bot/render/confine.py): with the checks made before
the sandbox switched off (a chart archive handed to it directly), a values schema that names a
file outside the chart or a loopback listener reads no byte and opens no connection."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.render.base import RenderFailure
from bot.render.sandbox import SandboxedHelm, SandboxLimits
from tests.support.paths import ROOT

MARKER = "SECRET-KEY-MATERIAL"


def archive(schema: dict[str, object]) -> bytes:
    files = {
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/values.yaml": "x: 1\n",
        "chart/values.schema.json": json.dumps(schema),
        "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                seen.append(b"connected")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(timeout=5)
    server.close()


PROBE = (
    "import json; from bot.render.confine import confine; print(json.dumps(confine().to_json()))"
)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxedHelm]:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    missing = json.loads(probe.stdout)["missing"] if probe.returncode == 0 else [probe.stderr]
    if missing:
        pytest.skip(f"this kernel or libc cannot confine a process: {'; '.join(missing)}")
    with SandboxedHelm(SandboxLimits(), workers=1) as running:
        yield running


def failure(sandbox: SandboxedHelm, schema: dict[str, object]) -> str:
    with pytest.raises(RenderFailure) as failed:
        sandbox.render(archive(schema), {}, "release", "default")
    return failed.value.message


def test_a_schema_reading_a_file_outside_reads_nothing(
    sandbox: SandboxedHelm, tmp_path: Path
) -> None:
    marker = tmp_path / "app.pem"
    marker.write_text(MARKER)
    message = failure(sandbox, {"$ref": f"file://{marker}"})
    assert "permission denied" in message
    assert MARKER[:1] + "'" not in message and "invalid character" not in message


def test_a_schema_reaching_the_network_opens_no_connection(
    sandbox: SandboxedHelm, listener: tuple[int, list[bytes]]
) -> None:
    port, seen = listener
    message = failure(sandbox, {"$ref": f"http://127.0.0.1:{port}/latest/meta-data"})
    assert "socket: permission denied" in message
    assert seen == []


def test_a_confined_process_reads_only_its_own_code(sandbox: SandboxedHelm, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text(MARKER)
    script = (
        "import json, sys\n"
        "from bot.render.confine import confine\n"
        "c = confine()\n"
        "try:\n"
        f"    open({str(secret)!r}).read(); read = True\n"
        "except PermissionError:\n"
        "    read = False\n"
        "import bot.render.base  # a lazy import of the bot's own code still works\n"
        "print(json.dumps({'confined': c.to_json(), 'read': read}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"confined": {"landlock": True, "seccomp": True, "missing": []}, "read": False}
