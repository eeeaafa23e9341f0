"""The built-in provider served as an MCP server, reached over the SDK's in-process transport.

fleetmem's memory code talks to the built-in index exactly as it talks to an upstream: the
same client, the same contract schemas, the same index filter afterwards (seed 000 REQ-11).
Its ids are episode ids. The tools hand their work to a small thread pool of the caller's,
so a slow query or embedding never blocks the loop that carries the other sessions, and the
store's per-thread SQLite connections stay few (the SDK's own worker threads would be
replaced on every call when driven from a loop with no root task).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

from pydantic import Field

from fleetmem import __version__
from fleetmem.providers.builtin import BuiltinProvider
from fleetmem.providers.contract import CONTRACT_VERSION

SERVER_NAME = "fleetmem-builtin"

EpisodeId = Annotated[str, Field(pattern=r"^ep_[0-9a-f]{20}$")]
Scope = Annotated[str, Field(min_length=9, max_length=264, pattern=r"^project:\S+$")]
Query = Annotated[str, Field(min_length=1, max_length=512)]
Scopes = Annotated[list[Scope], Field(min_length=1, max_length=2)]
Limit = Annotated[int, Field(ge=1, le=20)]
Paths = Annotated[list[Annotated[str, Field(min_length=1, max_length=1024)]], Field(max_length=20)]
ProviderId = Annotated[str, Field(min_length=1, max_length=128)]
T = TypeVar("T")


@contextmanager
def _keep_root_logging() -> Iterator[None]:
    """MCPServer configures logging when created; the host process's logging is its own."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def build_server(index: BuiltinProvider, executor: Executor) -> Any:
    """An ``MCPServer`` with the four contract tools over ``index``; work runs on ``executor``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    async def off_loop(fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            executor, functools.partial(fn, *args)
        )

    with _keep_root_logging():
        server = MCPServer(SERVER_NAME, version=__version__, log_level="WARNING")

    @server.tool(name="memory_contract", description="The contract version this server speaks.")
    def memory_contract() -> dict[str, Any]:
        return {
            "contract": CONTRACT_VERSION,
            "provider": {"name": SERVER_NAME, "version": __version__},
        }

    @server.tool(
        name="memory_record_episode",
        description="Index one episode fleetmem has stored; its id is the episode id.",
    )
    async def memory_record_episode(
        episode_id: EpisodeId,
        scope: Scope,
        trust_class: str,
        episode: dict[str, Any],
        text: Annotated[str, Field(min_length=1, max_length=65536)],
    ) -> dict[str, Any]:
        try:
            ids = await off_loop(index.record, episode_id, scope, trust_class, episode, text)
        except KeyError:
            # The index lives beside fleetmem's own copy: it indexes stored episodes only.
            raise ToolError("unknown_episode: fleetmem has not stored this episode") from None
        return {"ids": ids}

    @server.tool(
        name="memory_recall",
        description="Episodes in the given scopes, by BM25 and vector similarity fused.",
    )
    async def memory_recall(
        query: Query, scope: Scopes, limit: Limit, paths: Paths | None = None
    ) -> dict[str, Any]:
        answer = await off_loop(index.recall, query, scope, limit, paths or [])
        out: dict[str, Any] = {
            "items": [{"id": i.id, "text": i.text, "score": i.score} for i in answer.items]
        }
        if answer.degraded:
            out["degraded"] = answer.degraded
        return out

    @server.tool(name="memory_forget", description="Drop one episode from the index.")
    async def memory_forget(id: ProviderId) -> dict[str, Any]:
        return {"forgotten": await off_loop(index.forget, id)}

    return server
