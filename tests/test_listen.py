"""`annotator serve` and `annotator demo` check that they can listen on the port before they say
"Serving on ...": a taken port, or an address that is not this machine's, is refused in words
that name the port and what to do, and nothing starts (the demo seeds nothing either)."""

from __future__ import annotations

import socket
from contextlib import contextmanager

import pytest

from annotator.errors import PortUnavailableError
from annotator.listen import check_can_listen
from tests.conftest import annotator


@contextmanager
def taken_port(host: str = "127.0.0.1"):
    """A port on `host` that another program listens on while the block runs."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as other:
        other.bind((host, 0))
        other.listen()
        yield other.getsockname()[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def no_start(monkeypatch, tmp_path):
    """Streamlit's start caught (the command it would run is recorded, nothing is started), in an
    empty current folder (the demo writes its release under it)."""
    from annotator import cli

    monkeypatch.chdir(tmp_path)
    started: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execve", lambda _exe, command, _env: started.append(command))
    return started


def test_a_free_port_passes_and_stays_free():
    port = free_port()
    check_can_listen("127.0.0.1", port)
    check_can_listen("localhost", port)
    with socket.socket() as after:  # nothing of the check stays bound
        after.bind(("127.0.0.1", port))


def test_a_port_another_program_listens_on_is_refused_naming_it_and_the_way_out():
    with taken_port() as port, pytest.raises(PortUnavailableError) as refused:
        check_can_listen("127.0.0.1", port)
    assert str(refused.value) == (
        f"port {port} is already in use on 127.0.0.1 (another annotator, Streamlit or other program listens on "
        f"127.0.0.1:{port}); stop that program, or choose a free port: --port {port + 1} (make demo PORT={port + 1})")


def test_a_port_taken_on_every_interface_is_taken_for_loopback_too():
    with taken_port("0.0.0.0") as port, pytest.raises(PortUnavailableError, match=f"port {port} is already in use"):
        check_can_listen("127.0.0.1", port)


def test_an_address_of_another_machine_is_refused_saying_what_to_give():
    with pytest.raises(PortUnavailableError) as refused:
        check_can_listen("192.0.2.7", free_port())  # TEST-NET-1: never an address of this machine
    assert "192.0.2.7 is not an address of this machine" in str(refused.value) and "--host" in str(refused.value)


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_taken_port_stops_the_command_before_serving_and_exits_1(no_start, tmp_path, command):
    db = f"sqlite:///{tmp_path / 'annotator.db'}"
    with taken_port() as port:
        ran = annotator(command, "--db", db, "--port", str(port))
    assert ran.code == 1 and no_start == []
    assert ran.err == (f"Error: port {port} is already in use on 127.0.0.1 (another annotator, Streamlit or other program "
                       f"listens on 127.0.0.1:{port}); stop that program, or choose a free port: --port {port + 1} "
                       f"(make demo PORT={port + 1})\n")
    assert "Serving on" not in ran.out
    assert ran.out == ""  # the demo seeded nothing and printed no logins
    assert list(tmp_path.iterdir()) == []  # no database made


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_free_port_is_served_after_the_check(no_start, tmp_path, command):
    db = f"sqlite:///{tmp_path / 'annotator.db'}"
    if command == "serve":
        assert annotator("init", "--db", db).code == 0
    port = free_port()
    ran = annotator(command, "--db", db, "--port", str(port))
    assert ran.code == 0, ran.err
    assert f"Serving on http://127.0.0.1:{port} (database: {db}); Ctrl+C stops." in ran.out
    assert len(no_start) == 1 and no_start[0][no_start[0].index("--server.port") + 1] == str(port)


def test_demo_without_serving_does_not_look_at_the_port(no_start, tmp_path):
    with taken_port() as port:
        ran = annotator("demo", "--db", f"sqlite:///{tmp_path / 'annotator.db'}", "--port", str(port), "--no-serve")
    assert ran.code == 0 and "Demo data seeded" in ran.out and no_start == []
