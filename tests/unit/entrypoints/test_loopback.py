"""Which hosts count as "this machine only": the servers' bind check and the web page's Host
check (DNS rebinding) share `is_loopback`."""

import pytest

from memlane.entrypoints.listen import is_loopback
from memlane.entrypoints.ui.security import host_name


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", " 127.0.0.1 "]
)
def test_loopback_addresses_and_localhost_are_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host",
    [
        "127.attacker.example",  # a name, whatever it resolves to
        "127.0.0.1.rebind.example",
        "localhost.evil.example",
        "0.0.0.0",
        "::",
        "10.0.0.1",
        "example.com",
        "",
        "[::1",
        "128.0.0.1",
    ],
)
def test_names_and_other_addresses_are_not(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8766", "127.0.0.1"),
        ("localhost", "localhost"),
        ("[::1]:8766", "[::1]"),
        ("[::1]", "[::1]"),
        ("127.attacker.example:8766", "127.attacker.example"),
        ("::1", "::1"),  # a bare IPv6 address has no port to cut
    ],
)
def test_the_host_header_loses_its_port_only(header: str, name: str) -> None:
    assert host_name(header) == name
