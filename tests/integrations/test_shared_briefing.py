"""One briefing per run across its deliveries (seed 000 REQ-15, REQ-16, REQ-17).

``fleetmem run`` with ``memory_briefing = true`` prepends the run's stored briefing; the MCP
``briefing`` tool and the ``fleetmem://memory/briefing`` resource, called later with that run's
token by a real ``fleetmem mcp`` over stdio (official SDK client), serve the very same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fleetmem.core.fence import parse_block
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI
from tests.integrations.conftest import World
from tests.mcp.conftest import ok_text, resource_text, run_async, stdio_client_for
from tests.surfaces.cli_helpers import run_cli


def _run_once(world: World, open_app: Callable[[], App]) -> tuple[str, str, str]:
    """Run the fake claude once, briefed; (run id, its token, the prepended briefing)."""
    world.config(world.agent(scenario="success"))
    app = open_app()
    app.facts.add("The settlement fixture writes rows in local time.")
    app.facts.add("Ledger amounts are Decimal, never float.")
    app.close()
    proc = run_cli(world.home, "run", "nightly-triage", "--workdir", str(world.repo),
                   "--prompt", "Triage the failing tests.")  # fmt: skip
    found = re.search(r"run (run-[0-9a-f]{16}) of", proc.stderr)
    assert found, proc.stderr
    [start] = world.starts()
    block, rest = parse_block(start["argv"][-1])
    assert rest == "\n\nTriage the failing tests."
    return found.group(1), start["token"], block.body


def test_the_tool_and_the_resource_serve_the_prepended_briefing_byte_for_byte(
    world: World, open_app: Callable[[], App], tmp_path: Path
) -> None:
    run_id, token, prepended = _run_once(world, open_app)
    assert "local time" in prepended and "Decimal" in prepended

    async def ask() -> tuple[str, str]:
        async with stdio_client_for(world.home, token, tmp_path / "mcp.err") as client:
            tool = ok_text(await client.call_tool("briefing", {}))
            resource = resource_text(await client.read_resource(BRIEFING_URI))
            return tool, resource

    tool, resource = run_async(ask)
    assert tool.encode("utf-8") == prepended.encode("utf-8")
    assert resource.encode("utf-8") == prepended.encode("utf-8")
    app = open_app()
    stored = app.agent_memory.stored_briefing(run_id)
    assert stored is not None and stored.origin == "spawn" and stored.version == 1
    assert stored.text == prepended
    # Each delivery is its own exposure row: the prepended copy says `prompt`.
    surfaces = [e.surface for e in app.facts.offered_to_run(run_id)]
    assert sorted(surfaces) == sorted(["prompt"] * 2 + ["briefing"] * 2 + ["resource"] * 2)
    assert surfaces[:2] == ["prompt", "prompt"]


def test_a_refresh_is_a_new_document_and_the_prepended_one_stays_recorded(
    world: World, open_app: Callable[[], App], tmp_path: Path
) -> None:
    run_id, token, prepended = _run_once(world, open_app)
    app = open_app()
    app.facts.add("Deploys freeze on Fridays.")
    app.close()

    async def ask() -> tuple[str, str]:
        async with stdio_client_for(world.home, token, tmp_path / "mcp.err") as client:
            same = ok_text(await client.call_tool("briefing", {}))
            fresh = ok_text(await client.call_tool("briefing", {"refresh": True}))
            return same, fresh

    same, fresh = run_async(ask)
    # Without refresh the new fact is not there: the run keeps the document it was given.
    assert same == prepended and "Fridays" not in same
    assert "Fridays" in fresh
    stored = open_app().agent_memory.stored_briefing(run_id)
    assert stored is not None and stored.origin == "refresh"
