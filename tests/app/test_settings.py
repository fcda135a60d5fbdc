"""Settings read from the environment: each variable's default, and a bad value named."""

from __future__ import annotations

import ipaddress

import pytest

from bot.app.settings import GITHUB_MAX_PAYLOAD_BYTES, MAX_BODY_BYTES, Settings, SettingsError
from bot.render.base import RENDER_WORKERS


def test_webhook_max_bytes_defaults_to_five_megabytes_and_can_be_set() -> None:
    assert Settings.from_env({}).max_body_bytes == MAX_BODY_BYTES == 5 * 2**20
    assert Settings.from_env({"WEBHOOK_MAX_BYTES": "65536"}).max_body_bytes == 65536


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (
            "0",
            "WEBHOOK_MAX_BYTES must be between 1 and 26214400 (GitHub's own cap on a payload), got 0",
        ),
        (str(GITHUB_MAX_PAYLOAD_BYTES + 1), "WEBHOOK_MAX_BYTES must be between 1 and 26214400"),
        ("5MB", "WEBHOOK_MAX_BYTES must be an integer, got '5MB'"),
    ],
)
def test_webhook_max_bytes_out_of_range_is_refused(raw: str, error: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"WEBHOOK_MAX_BYTES": raw})
    assert str(refused.value).startswith(error)


def test_trusted_proxies_are_none_by_default_and_take_addresses_and_networks() -> None:
    assert Settings.from_env({}).trusted_proxies == ()
    env = {"WEBHOOK_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7\tfd00::/8"}
    assert Settings.from_env(env).trusted_proxies == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("192.168.1.7/32"),
        ipaddress.ip_network("fd00::/8"),
    )


def test_a_trusted_proxy_that_is_no_address_is_refused_naming_it() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"WEBHOOK_TRUSTED_PROXIES": "10.0.0.0/8,ingress-nginx"})
    assert str(refused.value) == (
        "WEBHOOK_TRUSTED_PROXIES: 'ingress-nginx' is neither an IP address nor a network "
        "(such as 10.0.0.0/8)"
    )


def test_render_workers_default_to_the_machines_and_can_be_set() -> None:
    assert Settings.from_env({}).render_workers == RENDER_WORKERS
    assert Settings.from_env({"RENDER_WORKERS": "3"}).render_workers == 3
    with pytest.raises(SettingsError, match="RENDER_WORKERS must be positive, got 0"):
        Settings.from_env({"RENDER_WORKERS": "0"})


def test_the_job_heartbeat_defaults_to_fifteen_seconds_and_can_be_set() -> None:
    assert Settings.from_env({}).job_heartbeat == 15.0
    assert Settings.from_env({"JOB_HEARTBEAT_SECONDS": "4.5"}).job_heartbeat == 4.5


@pytest.mark.parametrize("raw", ["0.5", "7200", "-1"])
def test_a_job_heartbeat_out_of_range_is_refused_naming_it(raw: str) -> None:
    with pytest.raises(SettingsError, match=r"JOB_HEARTBEAT_SECONDS must be between 1 and 3600"):
        Settings.from_env({"JOB_HEARTBEAT_SECONDS": raw})
