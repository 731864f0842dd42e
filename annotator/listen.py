"""Whether the app can listen on an address and port, checked before `annotator serve` or `demo`
says where it serves (Streamlit, started after, would otherwise stop with a traceback of its own).

The check binds the way Streamlit's web server (Tornado's `bind_sockets`) binds: every address
the host name resolves to, SO_REUSEADDR on POSIX (a port left in TIME_WAIT by an app that just
stopped is free to it), IPV6_V6ONLY on IPv6 sockets, and localhost's ::1 skipped on a machine
without IPv6. Each socket is closed at once: nothing stays bound, so the port is free again for
the app a moment later (another program could take it in between; the app's own start then
says so).
"""

from __future__ import annotations

import errno
import os
import socket

from annotator.errors import PortUnavailableError


def check_can_listen(host: str, port: int) -> None:
    """Return when a server could listen on `host` (an address or a host name) at `port`
    (1-65535); raise PortUnavailableError, in words that name the port and what to do, when the
    port is taken, the address is not one of this machine's, the name does not resolve, or the
    system refuses (a port under 1024 for a user who may not bind it)."""
    try:
        addresses = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise PortUnavailableError(f"cannot listen on {host}: the name does not resolve ({error.strerror or error}); "
                                   "give an address of this machine, such as 127.0.0.1, with --host") from None
    for family, kind, protocol, _, address in dict.fromkeys(addresses):
        try:
            _try_bind(family, kind, protocol, address)
        except OSError as error:
            if error.errno == errno.EADDRNOTAVAIL and host.lower() == "localhost" and address[0] == "::1":
                continue  # no IPv6 here: Tornado skips localhost's ::1 the same way
            raise PortUnavailableError(_refusal(host, port, error)) from None


def _try_bind(family: int, kind: int, protocol: int, address: tuple) -> None:
    with socket.socket(family, kind, protocol) as probe:
        if os.name != "nt":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        probe.bind(address)


def _refusal(host: str, port: int, error: OSError) -> str:
    """Why nothing can listen on host:port, and what to do."""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (f"port {port} is already in use on {host} (another annotator, Streamlit or other program listens on "
                f"{shown}); stop that program, or choose a free port: --port {port + 1 if port < 65535 else 8501} "
                f"(make demo PORT={port + 1 if port < 65535 else 8501})")
    if error.errno == errno.EADDRNOTAVAIL:
        return (f"cannot listen on {shown}: {host} is not an address of this machine; give one of its addresses with "
                "--host, such as 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)")
    if error.errno in (errno.EACCES, errno.EPERM):
        return (f"cannot listen on {shown}: the system does not let this user listen on port {port} (ports under "
                "1024 usually need special rights); choose a port from 1024 up, such as --port 8501")
    return f"cannot listen on {shown}: {error.strerror or error}; choose another port with --port or another address with --host"
