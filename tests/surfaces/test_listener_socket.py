"""The daemon's listening socket: every accepted connection has Nagle's algorithm off.

uvicorn serves the socket ``bind_listener`` made, and asyncio sets TCP_NODELAY only on
connections whose socket names IPPROTO_TCP. Without it a reply written in two parts waited
for the client's delayed ACK (40 ms per request on a kept-alive connection; the figures are
in docs/benchmarks.md). Checked on the server's side of a real connection, for both address
families, rather than by timing requests.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from fleetmem.surfaces.http.server import bind_listener


async def _accepted_nodelay(host: str) -> int:
    listener = bind_listener(host, 0)
    port = listener.getsockname()[1]
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connect, sock=listener)
    try:
        _, writer = await asyncio.open_connection(host, port)
        flag = await asyncio.wait_for(seen, 10)
        writer.close()
        return flag
    finally:
        server.close()
        await server.wait_closed()


def test_the_listener_names_tcp_so_connections_get_nodelay() -> None:
    listener = bind_listener("127.0.0.1", 0)
    try:
        assert listener.proto == socket.IPPROTO_TCP
    finally:
        listener.close()
    assert asyncio.run(_accepted_nodelay("127.0.0.1")) != 0


def test_ipv6_connections_get_nodelay_too() -> None:
    if not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    assert asyncio.run(_accepted_nodelay("::1")) != 0
