"""Real transports: a ``fleetmem mcp`` subprocess over stdio, ``/mcp`` of a running daemon."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetmem.core.hosts import CONTEXT_URI
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI
from tests.mcp.conftest import (
    API,
    World,
    document,
    error_text,
    http_client_for,
    ids,
    ok_json,
    ok_text,
    resource_text,
    run_async,
    stdio_client_for,
)
from tests.surfaces.test_http import Daemon

TOOLS = {
    "recall",
    "briefing",
    "remember",
    "vote_fact",
    "read_context_file",
    "note_project",
    "update_notes",
}
SECRET_QUERY = "okapi-narwhal settlement fixture"


@pytest.fixture
def daemon(world: World) -> Iterator[Daemon]:
    d = Daemon(world.home)
    try:
        yield d
    finally:
        err = d.stop()
        assert "Traceback" not in err, err
        assert "okapi" not in err  # logs carry ids and outcomes, never queries


async def every_tool(client: Any, world: World) -> dict[str, Any]:
    """List, call each tool once, read the resource; what each returned."""
    out: dict[str, Any] = {}
    out["tools"] = {t.name for t in (await client.list_tools()).tools}
    out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
    out["resource"] = resource_text(await client.read_resource(BRIEFING_URI))
    out["briefing"] = ok_text(await client.call_tool("briefing", {}))
    out["recall"] = ok_text(
        await client.call_tool(
            "recall", {"query": "settlement fixture", "paths": ["billing/ledger.py"]}
        )
    )
    ok_text(await client.call_tool("recall", {"query": SECRET_QUERY}))
    out["remember"] = ok_json(
        await client.call_tool("remember", {"text": "Nightly settlement runs at 02:00 UTC."})
    )
    out["vote_fact"] = ok_json(
        await client.call_tool(
            "vote_fact", {"fact_id": world.facts["fixture"], "stance": "support"}
        )
    )
    out["read_context_file"] = ok_json(
        await client.call_tool("read_context_file", {"name": "voice"})
    )
    out["note_project"] = ok_json(
        await client.call_tool("note_project", {"text": "Tests need TZ=UTC."})
    )
    out["update_notes"] = ok_json(await client.call_tool("update_notes", {"text": "A note."}))
    out["refused"] = error_text(await client.call_tool("memory_forget", {"id": "ep_x"}))
    return out


def check_every_tool(out: dict[str, Any], world: World, run_id: str) -> None:
    assert out["tools"] == TOOLS and out["resources"] == [BRIEFING_URI, CONTEXT_URI]
    # REQ-15: the resource and the tool serve the same document.
    assert out["resource"] and out["resource"] == out["briefing"]
    assert ids(out["briefing"], "collisions", "run")  # the codex run on the same file
    assert ids(out["recall"], "facts") == [world.facts["fixture"]]
    assert ids(out["recall"], "episodes") and ids(out["recall"], "recent_runs", "run")
    assert out["remember"]["awaiting_review"] is True
    assert (out["vote_fact"]["counted"], out["vote_fact"]["reason"]) == (False, "exposed")
    assert out["read_context_file"]["name"] == "voice"
    assert out["note_project"]["written"] is True
    assert out["update_notes"]["written"] is False  # edit_agent_files is off
    assert out["refused"].startswith("not_permitted: ")
    surfaces = {s for _, s in world.exposures(run_id)}
    assert surfaces == {"briefing", "resource", "recall"}


def test_stdio_server_attributed_by_its_environment(world: World, errlog: Path) -> None:
    async def main() -> dict[str, Any]:
        async with stdio_client_for(world.home, world.me.token, errlog) as client:
            return await every_tool(client, world)

    out = run_async(main)
    check_every_tool(out, world, "me")
    log = errlog.read_text(encoding="utf-8")
    assert "okapi" not in log and "Nightly settlement" not in log


def test_stdio_server_without_a_token_is_unattributed(world: World, errlog: Path) -> None:
    async def main() -> tuple[str, str, str]:
        async with stdio_client_for(world.home, None, errlog) as client:
            briefing = error_text(await client.call_tool("briefing", {}))
            recall = ok_text(await client.call_tool("recall", {"query": "settlement fixture"}))
            workspace = ok_text(await client.call_tool("recall", {"query": "second reviewer"}))
            return briefing, recall, workspace

    briefing, recall, workspace = run_async(main)
    assert briefing.startswith("not_attributed: ")
    assert ids(recall, "facts") == [] and ids(recall, "episodes") == []
    assert ids(workspace, "facts") == [world.facts["review"]]
    assert "FLEETMEM_RUN_TOKEN is not set" in errlog.read_text(encoding="utf-8")


def test_http_endpoint_attributed_by_bearer_token(world: World, daemon: Daemon) -> None:
    url = daemon.url + "/mcp"

    async def main() -> dict[str, Any]:
        async with http_client_for(url, world.me.token) as client:
            out = await every_tool(client, world)
        async with http_client_for(url, None) as client:
            out["anonymous"] = error_text(await client.call_tool("briefing", {}))
            out["anonymous_recall"] = ok_text(
                await client.call_tool("recall", {"query": "settlement fixture"})
            )
        async with http_client_for(url, "fmr_forged") as client:
            out["forged"] = error_text(await client.call_tool("briefing", {}))
        return out

    out = run_async(main)
    check_every_tool(out, world, "me")
    assert out["anonymous"].startswith("not_attributed: ")
    assert out["forged"].startswith("not_attributed: ")
    assert ids(out["anonymous_recall"], "episodes") == []
    scraped = daemon.client.get("/metrics").text
    for delivery in ("tool", "resource"):
        assert (
            f'fleetmem_briefings_total{{agent="api-fixer",delivery="{delivery}",outcome="ok"}}'
        ) in scraped
    assert 'fleetmem_briefing_bytes{agent="api-fixer"}' in scraped


def test_every_server_process_serves_the_runs_one_briefing(
    world: World, daemon: Daemon, errlog: Path
) -> None:
    run = world.open_run(run_id="shared")

    async def main() -> tuple[str, str, str]:
        async with http_client_for(daemon.url + "/mcp", run.token) as client:
            over_http = ok_text(await client.call_tool("briefing", {}))
        async with stdio_client_for(world.home, run.token, errlog) as client:
            over_stdio = resource_text(await client.read_resource(BRIEFING_URI))
        in_process = world.app.agent_memory.briefing(world.app.agent_memory.caller(run.token))
        return over_http, over_stdio, in_process.text

    over_http, over_stdio, in_process = run_async(main)
    assert over_http == over_stdio == in_process
    assert document(over_http).kind == "briefing"
    stored = world.app.agent_memory.stored_briefing("shared")
    assert stored is not None and stored.version == 1 and stored.text == over_http


def test_the_http_endpoint_admits_only_loopback_hosts(world: World, daemon: Daemon) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "Host": "evil.example:8737",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {world.me.token}",
    }
    with contextlib.closing(httpx.Client(base_url=daemon.url, timeout=10)) as raw:
        refused = raw.post("/mcp", json=body, headers=headers)
    assert refused.status_code >= 400 and "recall" not in refused.text
    # The rest of the API is where it was.
    assert daemon.client.get("/healthz").status_code == 200
    assert daemon.client.get("/api/v1/presence", params={"repo": API}).status_code == 200
