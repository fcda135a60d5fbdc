"""GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw body
keyed by the App's webhook secret. Checked before anything in the body is trusted or parsed."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Hub-Signature-256"
_PREFIX = "sha256="


def sign(secret: bytes, body: bytes) -> str:
    """The header value GitHub would send for `body` (tests and tools sign with this)."""
    return _PREFIX + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    """True only when `header` is the HMAC of exactly these bytes. An empty secret verifies
    nothing: a receiver without one must fail closed, not accept everyone's deliveries."""
    if not secret or not header or not header.startswith(_PREFIX):
        return False
    # compare_digest over ASCII strings takes the same time wherever they differ, so the
    # comparison leaks nothing about how much of a forged signature was right.
    expected = sign(secret, body)
    try:
        return hmac.compare_digest(expected, header.strip())
    except TypeError:  # a non-ASCII header value cannot be a hex digest
        return False
