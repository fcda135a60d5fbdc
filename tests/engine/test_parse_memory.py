"""The parse caches are bounded by the text they hold, not by a count: one template of large
configs is megabytes, and its parsed objects weigh several times that."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.engine import manifests
from bot.engine.manifests import load_documents
from bot.engine.yaml import blocks


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
    assert manifests._PARSED._total <= manifests._PARSED.size
    assert blocks._LEAVES._total <= blocks._LEAVES.size
    assert load_documents(texts[-1], "t5.yaml") is parsed[-1]  # the newest is still there
    again = load_documents(texts[0], "t0.yaml")
    assert again is not parsed[0] and again == parsed[0]  # the oldest went: parsed anew, alike
    assert again[0]["data"]["config"].count("\n") == 600
