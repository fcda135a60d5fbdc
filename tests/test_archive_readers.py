"""Every archive is read the one bounded way: no module of the bot but bot/tarball/reader.py opens a
tar, gzip or other compressed stream for reading. Building an archive (the chart archive handed to
Helm, the probe chart) is writing, and allowed."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

READER = ROOT / "bot" / "tarball" / "reader.py"
PACKAGES = ("bot", "checks", "webhooks")
ARCHIVE_MODULES = frozenset({"tarfile", "gzip", "zlib", "zipfile", "bz2", "lzma", "shutil"})
# What writing an archive needs; `tarfile.open` only with a literal writing mode ("w:gz").
WRITING = frozenset(
    {
        "gzip.compress",
        "tarfile.TarInfo",
        "tarfile.BLOCKSIZE",
        "tarfile.RECORDSIZE",
        "tarfile.PAX_FORMAT",
        "tarfile.USTAR_FORMAT",
    }
)
# shutil is imported for its file operations; only its archive functions read archives.
SHUTIL_READING = frozenset({"unpack_archive", "ReadError"})


def readers(path: Path) -> list[str]:
    """Each use in `path` of an archive module that is not writing, as `line: what`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = list(ast.walk(tree))
    aliases = {
        alias.asname or alias.name: alias.name
        for node in nodes
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name in ARCHIVE_MODULES
    }
    found = [
        f"{node.lineno}: from {node.module} import {alias.name}"
        for node in nodes
        if isinstance(node, ast.ImportFrom) and node.module in ARCHIVE_MODULES
        for alias in node.names
        if not _writing(node.module, alias.name)
    ]
    opening = {id(n.func) for n in nodes if isinstance(n, ast.Call) and _write_open(n, aliases)}
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module and not _writing(module, node.attr) and id(node) not in opening:
                found.append(f"{node.lineno}: {module}.{node.attr}")
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def _writing(module: str, name: str) -> bool:
    if module == "shutil":
        return name not in SHUTIL_READING
    return f"{module}.{name}" in WRITING


def _write_open(call: ast.Call, aliases: dict[str, str]) -> bool:
    """`tarfile.open(..., mode="w:gz")`: an archive opened to be written."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    if (aliases.get(func.value.id), func.attr) != ("tarfile", "open"):
        return False
    modes = [k.value for k in call.keywords if k.arg == "mode"] + call.args[1:2]
    return any(isinstance(m, ast.Constant) and str(m.value).startswith("w") for m in modes)


def test_no_module_but_the_bounded_reader_reads_an_archive() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != READER and (found := readers(path))
    }
    assert offenders == {}


def test_the_check_finds_a_reader(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import io, tarfile as t\nimport gzip\nfrom zlib import decompressobj\n"
        "t.open(fileobj=io.BytesIO(b''), mode='r:*')\n"
        "gzip.decompress(b'')\n"
        "t.open(fileobj=io.BytesIO(), mode='w:gz')\n"
        "gzip.compress(b'')\n"
    )
    assert readers(module) == [
        "3: from zlib import decompressobj",
        "4: tarfile.open",
        "5: gzip.decompress",
    ]
