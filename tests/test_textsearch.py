"""bot/textsearch.py finds what str.find finds, whatever the text holds around it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import textsearch
from bot.textsearch import find_token, holds_token


@settings(max_examples=600, deadline=None, database=None, print_blob=True)
@given(
    st.text(alphabet="/*<!-a\n’", max_size=80),
    st.sampled_from(["/*", "<!--", "<<", "--"]),
    st.data(),
)
def test_a_token_is_found_where_str_find_finds_it(
    text: str, token: str, data: st.DataObject
) -> None:
    pos = data.draw(st.integers(0, len(text)))
    until = data.draw(st.integers(pos, len(text)))
    hits = textsearch.FALSE_HITS
    try:
        for textsearch.FALSE_HITS in (0, 1, 3, hits):  # and past them, str.find's own search
            assert find_token(text, token, pos, until) == text.find(token, pos, until)
            assert find_token(text, token, pos) == text.find(token, pos)
            assert holds_token(text, token) == (token in text)
    finally:
        textsearch.FALSE_HITS = hits
