"""A fleet with a memory, and the official MCP SDK client over every transport.

``World`` fills a fresh home through the real services: stored runs with episodes (built-in
provider, vectors off), facts people taught, a live run of ``api-fixer`` whose token the
tests hand to the MCP server, and a live run of ``codex`` editing the same file (a
collision). Clients are the SDK's own: in-process (``Client(server)``), stdio (a real
``fleetmem mcp`` subprocess) and streamable HTTP (a real ``fleetmem serve``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fleetmem.core.scope import WORKSPACE, project_scope
from fleetmem.core.wrapper import Document, parse
from fleetmem.service.bootstrap import App
from fleetmem.service.runs import OpenedRun
from tests.conftest import make_record, session
from tests.surfaces.cli_helpers import FLEETMEM, env_for

API = "github.com/acme/api"
WEB = "github.com/acme/web"
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
CONFIG = VECTORS_OFF + "[agent.api-fixer]\nbriefing_max_chars = 4000\n"
T = TypeVar("T")


class World:
    """A home with stored runs, episodes, facts and two live runs on ``API``."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.home = app.home
        for i, branch in enumerate(("main", "main", "dev")):
            app.memory.ingest_run(
                make_record(
                    run_id=f"past-{i}",
                    started_at=f"2026-11-2{i}T08:00:00Z",
                    ended_at=f"2026-11-2{i}T09:00:00Z",
                    sessions=[session(branch=branch, edits=("billing/ledger.py",))],
                )
            )
        # An episode of another repository: never visible to a run in API.
        app.memory.ingest_run(
            make_record(
                run_id="web-0",
                sessions=[session(repo=WEB, cwd="/home/dev/src/web", edits=("app.ts",))],
            )
        )
        self.facts = {
            "fixture": app.facts.add(
                "The settlement fixture writes rows in local time.", scope=project_scope(API)
            ).fact.id,
            "decimal": app.facts.add(
                "Ledger amounts are Decimal, never float.", scope=project_scope(API)
            ).fact.id,
            "review": app.facts.add(
                "Every change needs a second reviewer.", scope=WORKSPACE
            ).fact.id,
            "web": app.facts.add(
                "The web app's settlement page is cached for an hour.", scope=project_scope(WEB)
            ).fact.id,
        }
        self.me = app.runs.open_run("api-fixer", repo=API, branch="main", run_id="me")
        app.runs.touch(self.me.token, ["billing/ledger.py"])
        self.other = app.runs.open_run("codex", repo=API, branch="main", run_id="other")
        app.runs.touch(self.other.token, ["billing/ledger.py", "tests/test_ledger.py"])

    def open_run(self, agent: str = "api-fixer", **kwargs: Any) -> OpenedRun:
        kwargs.setdefault("repo", API)
        kwargs.setdefault("branch", "main")
        return self.app.runs.open_run(agent, **kwargs)

    def exposures(self, run_id: str) -> list[tuple[str, str]]:
        """(fact id, surface) of every exposure row of a run, in order."""
        return [(e.fact_id, e.surface) for e in self.app.facts.offered_to_run(run_id)]

    def fact_count(self) -> int:
        return sum(self.app.facts.counts()[s] for s in ("proposed", "active", "evidence"))


@pytest.fixture
def world(make_app: Callable[..., App]) -> World:
    return World(make_app(CONFIG))


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run one coroutine to completion on a fresh event loop."""
    return asyncio.run(make())  # type: ignore[arg-type]


@asynccontextmanager
async def client_for(target: Any) -> AsyncIterator[Any]:
    """The official SDK client connected to ``target`` (a server object, stdio parameters, a
    transport); response caching off, so every read reaches the server."""
    from mcp.client.client import Client

    async with Client(target, cache=None) as client:
        yield client


def call_tools(server: Any, calls: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
    """Call each (tool, arguments) through the SDK client in one session; each answer's
    text contents as JSON, in order (the server is left open)."""

    async def body() -> list[str]:
        said: list[str] = []
        async with client_for(server) as client:
            for name, args in calls:
                result = await client.call_tool(name, args)
                said.append(json.dumps([getattr(c, "text", "") for c in result.content]))
        return said

    return run_async(body)


@asynccontextmanager
async def stdio_client_for(
    home: Path, token: str | None, errlog: Path, **env: str
) -> AsyncIterator[Any]:
    """A real ``fleetmem mcp`` subprocess over stdio, attributed by ``token`` (if any)."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    extra = dict(env)
    if token is not None:
        extra["FLEETMEM_RUN_TOKEN"] = token
    params = StdioServerParameters(command=FLEETMEM, args=["mcp"], env=env_for(home, **extra))
    with errlog.open("a", encoding="utf-8") as err:
        async with client_for(stdio_client(params, errlog=err)) as client:
            yield client


@asynccontextmanager
async def http_client_for(url: str, token: str | None) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP client to ``url``, with ``Authorization: Bearer token``."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        client_for(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def text(result: Any) -> str:
    """The text of a tool result (one text content block, possibly empty)."""
    blocks = [b for b in result.content if getattr(b, "type", None) == "text"]
    assert len(blocks) <= 1, result
    return blocks[0].text if blocks else ""


def ok_text(result: Any) -> str:
    assert not result.is_error, text(result)
    return text(result)


def ok_json(result: Any) -> Any:
    return json.loads(ok_text(result))


def error_text(result: Any) -> str:
    assert result.is_error, text(result)
    return text(result)


def resource_text(result: Any) -> str:
    [content] = result.contents
    assert content.mime_type == "text/plain"
    return str(content.text)


def document(text_: str) -> Document:
    doc, _ = parse(text_)
    return doc


def ids(text_: str, section: str, key: str = "id") -> list[str]:
    found = document(text_).section(section)
    return [] if found is None else [str(i.get(key)) for i in found.items]


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "mcp-stderr.log"
    path.touch()
    yield path
