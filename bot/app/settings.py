"""The App's settings, from the environment. Secrets are kept out of reprs, so no log shows them."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import ChartReviewError
from bot.git.mirror import MIRRORS_MAX_BYTES
from bot.render.base import RENDER_WORKERS
from bot.render.cache import DEFAULT_MAX_BYTES as RENDER_CACHE_MAX_BYTES
from bot.render.sandbox import SandboxLimits

DEFAULT_API_URL = "https://api.github.com"
# GitHub refuses webhook payloads over 25 MB, so a bigger body is never GitHub's.
GITHUB_MAX_PAYLOAD_BYTES = 25 * 1024 * 1024
# The receiver's default cap (WEBHOOK_MAX_BYTES): GitHub's example payloads of the events the bot
# routes are 3-28 KB; a long PR description (65,536 characters) or a push listing thousands of
# files stays well under 5 MB. A body is held in memory until its signature is checked, so the cap
# is what an unsigned sender can make each connection cost.
MAX_BODY_BYTES = 5 * 1024 * 1024
# WEBHOOK_TRUSTED_PROXIES: addresses or networks, separated by commas or spaces.
TRUSTED_PROXIES_SPLIT = re.compile(r"[,\s]+")
# A job stopped by a full disk runs again after this many seconds (bot/app/disk_full.py); each try
# fetches its mirror again.
DISK_FULL_RETRY = 60.0
# A running job's heartbeat: a worker that stops beating for this long is taken for dead and its
# job given to another. Long enough that a stalled store (a Redis failover) does not lose a live
# worker's job; short enough that a killed worker's PR waits seconds, not minutes.
JOB_HEARTBEAT = 15.0


class SettingsError(ChartReviewError):
    """A missing or malformed environment variable; the message names it."""


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    webhook_secret: bytes = field(default=b"", repr=False)
    app_id: int | None = None
    private_key: str = field(default="", repr=False)
    api_url: str = DEFAULT_API_URL
    redis_url: str | None = field(default=None, repr=False)  # may carry a password
    workers: int = 2
    # PyGithub's courtesy spacing between requests; tests against the local fake set both to 0.
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0
    github_retry_backoff: float = 0.5  # before the first retry of a failed GitHub call; doubles
    max_body_bytes: int = MAX_BODY_BYTES
    # The proxies whose X-Forwarded-For names a request's source (webhooks/sources.py); none: the
    # connection's peer is the source.
    trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    log_level: str = "INFO"
    metrics_port: int | None = None  # `chart-review worker` serves /metrics here when set
    render_limits: SandboxLimits = SandboxLimits()
    # Render processes per worker process, and so its render threads (bot/charts/resources.py).
    render_workers: int = RENDER_WORKERS
    # What DATA_DIR/renders and DATA_DIR/mirrors may hold; past it, the least recently used go.
    render_cache_max_bytes: int = RENDER_CACHE_MAX_BYTES
    mirrors_max_bytes: int = MIRRORS_MAX_BYTES
    disk_full_retry: float = DISK_FULL_RETRY
    job_heartbeat: float = JOB_HEARTBEAT

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            data_dir=Path(env.get("DATA_DIR") or "data"),
            webhook_secret=env.get("GITHUB_WEBHOOK_SECRET", "").encode(),
            app_id=_int(env, "GITHUB_APP_ID"),
            private_key=_private_key(env),
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            redis_url=env.get("REDIS_URL") or None,
            workers=_int(env, "WORKERS") or 2,
            seconds_between_requests=_float(env, "GITHUB_SECONDS_BETWEEN_REQUESTS", 0.25),
            seconds_between_writes=_float(env, "GITHUB_SECONDS_BETWEEN_WRITES", 1.0),
            github_retry_backoff=_float(env, "GITHUB_RETRY_BACKOFF", 0.5),
            max_body_bytes=max_body_bytes(env),
            trusted_proxies=trusted_proxies(env),
            log_level=(env.get("LOG_LEVEL") or "INFO").upper(),
            metrics_port=_int(env, "METRICS_PORT"),
            render_limits=render_limits(env),
            render_workers=render_workers(env),
            render_cache_max_bytes=_megabytes(env, "RENDER_CACHE_MAX_MB", RENDER_CACHE_MAX_BYTES),
            mirrors_max_bytes=_megabytes(env, "MIRRORS_MAX_MB", MIRRORS_MAX_BYTES),
            job_heartbeat=job_heartbeat(env),
        )

    def require_app(self) -> None:
        """The worker and the receiver cannot run without these; say which is missing."""
        missing = [
            name
            for name, value in (
                ("GITHUB_WEBHOOK_SECRET", self.webhook_secret),
                ("GITHUB_APP_ID", self.app_id),
                ("GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH", self.private_key),
            )
            if not value
        ]
        if missing:
            raise SettingsError(f"missing environment variable: {', '.join(missing)}")


def max_body_bytes(env: Mapping[str, str]) -> int:
    """WEBHOOK_MAX_BYTES: the largest delivery body the receiver reads, at most GitHub's own cap."""
    value = _int(env, "WEBHOOK_MAX_BYTES")
    if value is None:
        return MAX_BODY_BYTES
    if not 0 < value <= GITHUB_MAX_PAYLOAD_BYTES:
        raise SettingsError(
            f"WEBHOOK_MAX_BYTES must be between 1 and {GITHUB_MAX_PAYLOAD_BYTES} (GitHub's own "
            f"cap on a payload), got {value}"
        )
    return value


def trusted_proxies(
    env: Mapping[str, str],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """WEBHOOK_TRUSTED_PROXIES: `10.0.0.0/8, 192.168.1.7`; an address is a network of one."""
    raw = env.get("WEBHOOK_TRUSTED_PROXIES", "").strip()
    networks = []
    for entry in TRUSTED_PROXIES_SPLIT.split(raw) if raw else []:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise SettingsError(
                f"WEBHOOK_TRUSTED_PROXIES: {entry!r} is neither an IP address nor a network "
                "(such as 10.0.0.0/8)"
            ) from None
    return tuple(networks)


def render_limits(env: Mapping[str, str] | None = None) -> SandboxLimits:
    """RENDER_TIMEOUT (seconds of wall clock), RENDER_CPU_SECONDS, RENDER_MEMORY_MB: per render."""
    env = os.environ if env is None else env
    default = SandboxLimits()
    wall = _float(env, "RENDER_TIMEOUT", default.wall_seconds)
    cpu = _int(env, "RENDER_CPU_SECONDS")
    memory_mb = _int(env, "RENDER_MEMORY_MB")
    for name, value in (
        ("RENDER_TIMEOUT", wall),
        ("RENDER_CPU_SECONDS", cpu),
        ("RENDER_MEMORY_MB", memory_mb),
    ):
        if value is not None and value <= 0:
            raise SettingsError(f"{name} must be positive, got {value}")
    return SandboxLimits(
        wall_seconds=wall,
        cpu_seconds=default.cpu_seconds if cpu is None else cpu,
        memory_bytes=default.memory_bytes if memory_mb is None else memory_mb * 2**20,
    )


def render_workers(env: Mapping[str, str] | None = None) -> int:
    """RENDER_WORKERS: render processes at once (default: the machine's CPUs, two to four)."""
    env = os.environ if env is None else env
    value = _int(env, "RENDER_WORKERS")
    if value is None:
        return RENDER_WORKERS
    if value <= 0:
        raise SettingsError(f"RENDER_WORKERS must be positive, got {value}")
    return value


def job_heartbeat(env: Mapping[str, str]) -> float:
    """JOB_HEARTBEAT_SECONDS: how long a worker may go silent before its job is taken back."""
    value = _float(env, "JOB_HEARTBEAT_SECONDS", JOB_HEARTBEAT)
    if not 1.0 <= value <= 3600.0:
        raise SettingsError(f"JOB_HEARTBEAT_SECONDS must be between 1 and 3600, got {value:g}")
    return value


def _megabytes(env: Mapping[str, str], name: str, default_bytes: int) -> int:
    """A size cap given in MB (2**20 bytes), in bytes; positive."""
    value = _int(env, name)
    if value is None:
        return default_bytes
    if value <= 0:
        raise SettingsError(f"{name} must be a positive number of MB, got {value}")
    return value * 2**20


def _int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None


def _private_key(env: Mapping[str, str]) -> str:
    if key := env.get("GITHUB_PRIVATE_KEY", "").strip():
        # Some platforms cannot hold a multi-line variable and pass the PEM with literal \n.
        return key.replace("\\n", "\n") + "\n"
    if path := env.get("GITHUB_PRIVATE_KEY_PATH", "").strip():
        try:
            return Path(path).read_text()
        except OSError as exc:
            raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH {path}: {exc.strerror}") from None
    return ""
