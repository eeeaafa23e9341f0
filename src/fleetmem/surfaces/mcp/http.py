"""``/mcp`` inside ``fleetmem serve``: the agent-facing server over streamable HTTP.

Each request is attributed by its ``Authorization: Bearer <run token>`` header. The daemon
binds loopback only, and the SDK's DNS-rebinding protection admits only loopback hosts and
origins. The session manager must run for as long as the web app does: the app's lifespan
enters :func:`McpEndpoint.lifespan`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.routing import Route

from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.server import FleetmemMCP, bearer_token, build_server

MCP_PATH = "/mcp"


@dataclass(frozen=True)
class McpEndpoint:
    server: FleetmemMCP
    route: Route

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the session manager while the web app runs; stop the tool threads after."""
        try:
            async with self.server.session_manager.run():
                yield
        finally:
            self.server.close()


def mcp_endpoint(app: App) -> McpEndpoint:
    """The ``/mcp`` route (all methods: POST, GET for the stream, DELETE) and its server."""
    server = build_server(app, bearer_token)
    # Creates the session manager; only the route is used, inside the daemon's own app.
    server.streamable_http_app(streamable_http_path=MCP_PATH, host="127.0.0.1")
    route = Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(server.session_manager))
    return McpEndpoint(server=server, route=route)
