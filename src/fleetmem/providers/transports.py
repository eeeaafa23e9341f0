"""How fleetmem opens an MCP client session: in-process, stdio subprocess, or streamable HTTP.

Each opener is an async context manager yielding an entered ``mcp.Client``; leaving it
closes the session (and ends a stdio subprocess). ``mcp`` is imported here, inside the
openers, so commands that never talk to a provider do not pay for the import.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fleetmem import __version__
from fleetmem.config import McpSettings
from fleetmem.errors import ProviderUnavailable

#: A provider's stderr log is rotated once it passes this size.
STDERR_LOG_MAX_BYTES = 5 * 1024 * 1024
#: HTTP timeouts below the call deadline; the deadline itself is enforced per call.
HTTP_CONNECT_TIMEOUT_S = 10.0
HTTP_READ_TIMEOUT_S = 300.0

Opener = Callable[[], AbstractAsyncContextManager[Any]]


@dataclass(frozen=True, slots=True)
class Target:
    """Where one provider lives and how to open a session to it."""

    name: str
    transport: str  # "in-process", "stdio" or "http"
    where: str  # for status: "in-process", the command's file name, or the URL's host
    open: Opener
    connect_timeout_s: float
    call_timeout_s: float


def preload() -> None:
    """Import what the openers use, in the calling thread.

    Sessions open on the loop thread; importing the ``mcp`` package there while another
    thread imports it too (the daemon's HTTP app mounts an MCP endpoint at start) can meet
    a partially initialised module. Importing first, here, makes the loop's imports lookups.
    """
    import anyio  # noqa: F401
    import httpx2  # noqa: F401
    import mcp.client.stdio
    import mcp.client.streamable_http
    import mcp_types  # noqa: F401

    import mcp  # noqa: F401


def _client_info() -> Any:
    from mcp import Implementation

    return Implementation(name="fleetmem", version=__version__)


def in_process(name: str, server: Any, *, call_timeout_s: float = 30.0) -> Target:
    """A server object in this process, over the SDK's in-process transport."""

    @asynccontextmanager
    async def open_() -> AsyncIterator[Any]:
        from mcp import Client

        async with Client(server, client_info=_client_info(), cache=None) as client:
            yield client

    return Target(name, "in-process", "in-process", open_, 5.0, call_timeout_s)


def _rotate(path: Path) -> None:
    try:
        if path.stat().st_size > STDERR_LOG_MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass


def stdio(up: McpSettings, log_dir: Path) -> Target:
    """``[mcp.NAME] command``: a subprocess speaking MCP on stdin/stdout.

    Its stderr goes to ``log_dir/provider-NAME.log``. Its environment is the SDK's safe
    default set (PATH, HOME, ...) plus ``env`` from the configuration, nothing else of ours.
    """
    assert up.command is not None
    command = up.command
    log_path = log_dir / f"provider-{up.name}.log"

    @asynccontextmanager
    async def open_() -> AsyncIterator[Any]:
        from mcp.client.stdio import stdio_client

        from mcp import Client, StdioServerParameters

        log_dir.mkdir(parents=True, exist_ok=True)
        _rotate(log_path)
        params = StdioServerParameters(
            command=command, args=list(up.args), env=dict(up.env) or None
        )
        with log_path.open("a", encoding="utf-8") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, client_info=_client_info(), cache=None) as client:
                yield client

    where = os.path.basename(command)
    return Target(up.name, "stdio", where, open_, up.connect_timeout_s, up.call_timeout_s)


def http(up: McpSettings, environ: Mapping[str, str]) -> Target:
    """``[mcp.NAME] url``: streamable HTTP; each header's value is read from its variable."""
    assert up.url is not None
    url = up.url

    @asynccontextmanager
    async def open_() -> AsyncIterator[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        from mcp import Client

        headers: dict[str, str] = {}
        for header, variable in up.headers.items():
            value = environ.get(variable)
            if not value:
                # Name the variable, never a value.
                raise ProviderUnavailable(
                    f"environment variable {variable} (for header {header}) is not set",
                    provider=up.name,
                )
            headers[header] = value
        timeout = httpx2.Timeout(HTTP_CONNECT_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http_client:
            transport = streamable_http_client(url, http_client=http_client)
            async with Client(transport, client_info=_client_info(), cache=None) as client:
                yield client

    where = urlsplit(url).hostname or url
    return Target(up.name, "http", where, open_, up.connect_timeout_s, up.call_timeout_s)


def upstream(up: McpSettings, *, log_dir: Path, environ: Mapping[str, str]) -> Target:
    """The target of one ``[mcp.NAME]`` table."""
    return stdio(up, log_dir) if up.command is not None else http(up, environ)
