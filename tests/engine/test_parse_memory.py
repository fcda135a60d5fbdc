"""The parse caches are bounded by the text they hold, not by a count: one template of large
configs is megabytes, and its parsed objects weigh several times that."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.model import manifests
from bot.model.manifests import load_documents
from bot.model.yaml import blocks


@pytest.fixture
def small_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(manifests._PARSED, "size", 50_000)
    monkeypatch.setattr(blocks._LEAVES, "size", 50_000)
    manifests.clear_parse_cache()
    yield
    manifests.clear_parse_cache()


def config_map(n: int, lines: int) -> str:
    data = "".join(f"    key{i}: value {n} {i}\n" for i in range(lines))
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n}\ndata:\n  config: |\n{data}"


def test_parsed_templates_are_kept_within_their_text_bytes(small_caches: None) -> None:
    texts = [config_map(n, 600) for n in range(6)]  # ~14 KB each
    parsed = [load_documents(t, f"t{n}.yaml") for n, t in enumerate(texts)]
    assert manifests._PARSED.weight() <= manifests._PARSED.size
    assert blocks._LEAVES.weight() <= blocks._LEAVES.size
    assert load_documents(texts[-1], "t5.yaml") is parsed[-1]  # the newest is still there
    again = load_documents(texts[0], "t0.yaml")
    assert again is not parsed[0] and again == parsed[0]  # the oldest went: parsed anew, alike
    assert again[0]["data"]["config"].count("\n") == 600


def crd_like(version: int) -> str:
    """A document whose `spec:` is long and nested (~9 KB), with one line that changes."""
    props = "".join(
        f"        field{i}:\n          type: string\n          description: field {i} of the spec\n"
        for i in range(100)
    )
    return f"kind: CRD\nmetadata:\n  name: c\n  version: v{version}\nspec:\n  properties:\n{props}"


def test_a_long_block_is_cut_again_rather_than_kept(
    small_caches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kept, the cut `spec:` would weigh what hundreds of its leaves do: those are kept instead.
    monkeypatch.setattr(blocks, "CUT_KEPT_CHARS", 4096)
    text = crd_like(1)
    first = blocks.load_mappings(text)
    held = set(blocks._LEAVES.held_keys())
    assert text[text.index("spec:") :] not in held
    assert text[text.index("  properties:") :] not in held
    assert "  version: v1\n" in held and "          description: field 7 of the spec\n" in held
    assert (
        "        field7:\n          type: string\n          description: field 7 of the spec\n"
        in held
    )
    second = blocks.load_mappings(crd_like(2))
    assert second[0]["spec"] == first[0]["spec"] and second[0]["metadata"]["version"] == "v2"
    # The short cut blocks are found again, the very same mappings (memos keyed by identity).
    assert second[0]["spec"]["properties"]["field7"] is first[0]["spec"]["properties"]["field7"]


def test_a_long_leaf_is_kept(small_caches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # A leaf's parse is the loader's, over all of it: kept at any length the budget holds.
    monkeypatch.setattr(blocks, "CUT_KEPT_CHARS", 4096)
    text = config_map(1, 1000)  # `config: |` over ~24 KB
    parsed = blocks.load_mappings(text)
    leaf = text[text.index("  config: |") :]
    assert len(leaf) > 4096 and leaf in blocks._LEAVES.held_keys()
    again = blocks.load_mappings(text.replace("name: cm1", "name: cm2"))
    assert again[0]["data"]["config"] is parsed[0]["data"]["config"]  # not parsed again


def test_a_long_cut_block_is_not_looked_up(
    small_caches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lookup hashes the whole key: a CRD's upper levels, never kept once cut, would be hashed
    # at every level on every parse for nothing.
    monkeypatch.setattr(blocks, "CUT_KEPT_CHARS", 4096)
    asked: list[str] = []
    lookup = blocks._LEAVES.get

    def get(key: str) -> object:
        asked.append(key)
        return lookup(key)

    monkeypatch.setattr(blocks._LEAVES, "get", get)
    text = crd_like(1) + "leaf: |\n" + "  a long block scalar\n" * 300
    first = blocks.load_mappings(text)
    assert all(len(key) <= 4096 for key in asked if not key.startswith("leaf:"))
    assert any(len(key) > 4096 for key in asked)  # a long leaf is looked up: it is kept
    asked.clear()
    assert blocks.load_mappings(text) == first
    assert [key for key in asked if len(key) > 4096] == [text[text.index("leaf: |") :]]
