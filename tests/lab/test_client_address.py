"""Limits key on the real client behind the proxies listed in TRUSTED_PROXIES, and a client that sends its own
X-Forwarded-For is not believed (lab/client_address.py)."""

import ipaddress

import httpx
import pytest
from django.test import RequestFactory, override_settings

from lab.client_address import client_address
from tests.fixtures.factories import PASSWORD, make_user
from tests.fixtures.processes import start_web


def networks(*entries: str) -> list:
    return [ipaddress.ip_network(entry) for entry in entries]


def address_of(remote: str, forwarded: str | None = None) -> str:
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


def test_without_trusted_proxies_the_peer_is_the_client_whatever_it_forwards():
    assert address_of("203.0.113.5", "198.51.100.1") == "203.0.113.5"


@override_settings(TRUSTED_PROXIES=networks("10.0.0.0/8"))
def test_each_trusted_hop_hands_over_to_the_address_it_saw_and_the_client_s_own_entries_are_ignored():
    assert address_of("10.0.0.2", "203.0.113.5") == "203.0.113.5"  # one proxy
    assert address_of("10.0.0.2", "203.0.113.5, 10.0.0.3") == "203.0.113.5"  # two proxies
    assert address_of("10.0.0.2", "6.6.6.6, 203.0.113.5") == "203.0.113.5"  # the client wrote 6.6.6.6
    assert address_of("203.0.113.5", "6.6.6.6") == "203.0.113.5"  # a direct client, not through the proxy
    assert address_of("10.0.0.2", "not-an-address") == "10.0.0.2"
    assert address_of("10.0.0.2") == "10.0.0.2"  # the proxy itself, e.g. its health check


def test_an_ipv6_client_is_its_64_network():
    assert address_of("2001:db8:1:2:3:4:5:6") == address_of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert address_of("::ffff:203.0.113.5") == "203.0.113.5"  # not one /64 for every IPv4 client


@pytest.mark.django_db
@override_settings(TRUSTED_PROXIES=networks("10.0.0.0/8"), LOGIN_FAILURES_PER_ADDRESS=5)
def test_a_direct_client_rotating_a_forged_x_forwarded_for_stays_one_address(client):
    for n in range(5):
        response = client.post(
            "/api/v1/auth/token/",
            {"username": f"someone-{n}", "password": "guess"},
            REMOTE_ADDR="203.0.113.66",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )
        assert response.status_code == 400
    refused = client.post(
        "/api/v1/auth/token/",
        {"username": "someone-else", "password": "guess"},
        REMOTE_ADDR="203.0.113.66",
        HTTP_X_FORWARDED_FOR="198.51.100.99",
    )
    assert refused.status_code == 429


@pytest.mark.services
def test_behind_a_trusted_proxy_one_client_s_guessing_locks_out_that_client_not_everyone(transactional_db, tmp_path):
    # The test plays the TLS proxy on 127.0.0.1: it connects to the real web process and appends the address of
    # the client it serves, as nginx's $proxy_add_x_forwarded_for does.
    make_user("alice")
    web = start_web(tmp_path, TRUSTED_PROXIES="127.0.0.1", LOGIN_FAILURES_PER_ADDRESS="5")
    try:

        def through_proxy(client: str, username: str, password: str, sent: str | None = None) -> httpx.Response:
            forwarded = f"{sent}, {client}" if sent else client
            return httpx.post(
                f"{web.url}/api/v1/auth/token/",
                data={"username": username, "password": password},
                headers={"X-Forwarded-For": forwarded},
                timeout=30,
            )

        guesses = [through_proxy("203.0.113.66", f"someone-{n}", "guess").status_code for n in range(5)]
        locked = through_proxy("203.0.113.66", "alice", PASSWORD)
        forged = through_proxy("203.0.113.66", "alice", PASSWORD, sent="198.51.100.77")
        other = through_proxy("198.51.100.8", "alice", PASSWORD)
    finally:
        web.stop()

    assert guesses == [400] * 5
    assert locked.status_code == 429 and locked.json()["detail"].startswith("Too many password attempts")
    assert forged.status_code == 429  # what the client wrote before the proxy's entry changes nothing
    assert other.status_code == 200 and other.json()["token"]  # keyed on the proxy's address, this was a 429
