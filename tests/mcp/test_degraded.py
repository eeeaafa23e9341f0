"""REQ-13 through the MCP tools: a killed or hanging provider degrades recall and briefing."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from fleetmem import metrics
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.server import build_server, fixed_token
from tests.mcp.conftest import (
    CONFIG,
    World,
    client_for,
    document,
    ids,
    ok_text,
    run_async,
    stdio_client_for,
)
from tests.providers.conftest import stdio_upstream, wait_for

TIMEOUT_S = 1.0
#: What a loaded two-core machine may add to the deadline: MCP round trips, scheduling.
SLACK_S = 1.5


def provider_config(tmp_path: Path, *flags: str) -> str:
    upstream = stdio_upstream(
        "ref",
        "--store",
        str(tmp_path / "ref.json"),
        "--pid-file",
        str(tmp_path / "ref.pid"),
        *flags,
    )
    return (
        CONFIG + f'[memory]\nprovider = "ref"\n[memory.episodes]\nprovider_timeout = "1s"\n'
        f"{upstream}"
    )


def degraded_count() -> float:
    labels = {"provider": "ref", "outcome": "degraded"}
    return metrics.sample("fleetmem_recalls_total", labels) or 0.0


def test_a_hanging_provider_degrades_recall_and_briefing_within_the_timeout(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = make_app(provider_config(tmp_path, "--misbehave", "hang"))
    world = World(app)
    server = build_server(app, fixed_token(world.me.token))
    before = degraded_count()

    async def main() -> tuple[str, float, str, float]:
        async with client_for(server) as client:
            started = time.monotonic()
            recall = ok_text(
                await client.call_tool(
                    "recall", {"query": "settlement fixture", "paths": ["billing/"]}
                )
            )
            recall_s = time.monotonic() - started
            started = time.monotonic()
            briefing = ok_text(await client.call_tool("briefing", {}))
            return recall, recall_s, briefing, time.monotonic() - started

    try:
        recall, recall_s, briefing, briefing_s = run_async(main)
    finally:
        server.close()
    assert recall_s < TIMEOUT_S + SLACK_S and briefing_s < TIMEOUT_S + SLACK_S
    doc = document(recall)
    assert dict(doc.attrs)["degraded"] == "provider_unavailable"
    assert ids(recall, "episodes") == []
    # Facts and the graph still answer.
    assert ids(recall, "facts") == [world.facts["fixture"]]
    assert ids(recall, "recent_runs", "run") == ["past-2", "past-1", "past-0"]
    episodes = document(briefing).section("episodes")
    assert episodes is not None and dict(episodes.attrs)["degraded"] == "provider_unavailable"
    assert ids(briefing, "facts") and ids(briefing, "collisions", "run")
    assert degraded_count() >= before + 2


def test_a_killed_provider_degrades_recall_of_a_stdio_server(
    make_app: Callable[..., App], tmp_path: Path, errlog: Path
) -> None:
    app = make_app(provider_config(tmp_path))
    world = World(app)  # records its episodes to the reference provider
    pid_file = tmp_path / "ref.pid"
    first = pid_file.read_text(encoding="utf-8")

    async def main() -> tuple[str, str, float]:
        async with stdio_client_for(world.home, world.me.token, errlog) as client:
            healthy = ok_text(await client.call_tool("recall", {"query": "settlement fixture"}))
            # The server opened its own provider process: kill it mid-session.
            pid = int(wait_for(lambda: (t := pid_file.read_text()) != first and t))
            os.kill(pid, signal.SIGKILL)
            started = time.monotonic()
            degraded = ok_text(await client.call_tool("recall", {"query": "settlement fixture"}))
            return healthy, degraded, time.monotonic() - started

    healthy, degraded, seconds = run_async(main)
    assert ids(healthy, "episodes") and "degraded" not in dict(document(healthy).attrs)
    assert seconds < TIMEOUT_S + SLACK_S
    assert dict(document(degraded).attrs)["degraded"] == "provider_unavailable"
    assert ids(degraded, "episodes") == [] and ids(degraded, "facts") == [world.facts["fixture"]]
