"""GitHub App authentication as the fake sees it: app JWTs and installation tokens."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .state import GitHubState, Token, now

# Endpoints GitHub serves only to the app itself, authenticated by its JWT (rest-limits.md).
_JWT_PATH_RE = re.compile(r"^/app(/.*)?$|^/repos/[^/]+/[^/]+/installation$")
# GitHub tolerates small clock drift between the app and its servers.
_JWT_LEEWAY_SECONDS = 60


class AuthError(Exception):
    """The request's credentials are missing, wrong or expired: GitHub answers 401."""


def make_app_key() -> str:
    """A fresh RSA private key in PEM, as GitHub hands an app for signing its JWTs."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


def public_pem(private_pem: str) -> str:
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def needs_jwt(path: str) -> bool:
    return bool(_JWT_PATH_RE.match(path))


def credential(authorization: str | None) -> str:
    """The secret from `Authorization: token <t>` or `Authorization: Bearer <t>`."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() not in ("token", "bearer") or not value.strip():
        raise AuthError("Requires authentication")
    return value.strip()


def verify_app_jwt(token: str, public_key_pem: str, app_id: int) -> None:
    try:
        claims = jwt.decode(
            token,
            public_key_pem,
            algorithms=["RS256"],
            leeway=_JWT_LEEWAY_SECONDS,
            options={"require": ["iat", "exp", "iss"]},
        )
    except jwt.PyJWTError as exc:
        raise AuthError(f"A JSON web token could not be decoded: {exc}") from exc
    if str(claims["iss"]) != str(app_id):
        raise AuthError(f"'Issuer' claim ('iss') must be the app id {app_id}")


def issue_token(
    state: GitHubState,
    installation_id: int,
    lifetime: timedelta,
    repos: list[str],
    permissions: dict[str, str] | None = None,
) -> Token:
    token = Token(
        token="ghs_" + secrets.token_urlsafe(27),
        installation_id=installation_id,
        expires_at=now() + lifetime,
        repos=repos,
        permissions=permissions,
    )
    state.tokens[token.token] = token
    return token


def installation_token(state: GitHubState, secret: str, at: datetime) -> Token:
    token = state.tokens.get(secret)
    if token is None:
        raise AuthError("Bad credentials")
    if token.expires_at <= at:
        raise AuthError("Bad credentials")  # GitHub says no more for an expired token
    return token
