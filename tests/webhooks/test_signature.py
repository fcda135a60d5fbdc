import hashlib
import hmac

import pytest

from webhooks.signature import sign, verify_signature

SECRET = b"It's a Secret to Everybody"
BODY = b"Hello, World!"
# GitHub's documented example: this secret and body give this signature.
GITHUB_EXAMPLE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_documented_example_verifies() -> None:
    assert sign(SECRET, BODY) == GITHUB_EXAMPLE
    assert verify_signature(SECRET, BODY, GITHUB_EXAMPLE)


def test_signature_is_hmac_sha256_over_the_exact_bytes() -> None:
    body = b'{"zen":"Design for failure."}'
    header = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    assert verify_signature(SECRET, body, header)
    assert not verify_signature(SECRET, body + b" ", header)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=",
        GITHUB_EXAMPLE.removeprefix("sha256="),  # no algorithm prefix
        "sha1=" + hmac.new(SECRET, BODY, hashlib.sha1).hexdigest(),  # the legacy header's form
        GITHUB_EXAMPLE[:-1] + "0",
        GITHUB_EXAMPLE.upper(),
        "sha256=ünïcödé",
    ],
)
def test_anything_but_the_right_signature_fails(header: str | None) -> None:
    assert not verify_signature(SECRET, BODY, header)


def test_wrong_secret_fails() -> None:
    assert not verify_signature(b"another secret", BODY, GITHUB_EXAMPLE)


def test_empty_secret_verifies_nothing() -> None:
    assert not verify_signature(b"", BODY, sign(b"", BODY))
