"""``fleetmem briefing`` (the operator preview) and ``fleetmem recall`` with its new sections."""

from __future__ import annotations

from fleetmem.core.wrapper import parse
from tests.mcp.conftest import API, World, document, ids
from tests.surfaces.cli_helpers import run_cli, run_json


def test_briefing_preview_prints_exactly_the_document_and_writes_no_exposure(
    world: World,
) -> None:
    out = run_cli(world.home, "briefing", "api-fixer")
    doc, nonce = parse(out.stdout)  # the whole of stdout is the document, nothing else
    assert [s.name for s in doc.sections] == ["collisions", "recent_runs", "facts", "episodes"]
    assert ids(out.stdout, "collisions", "run") == ["other"]  # its live run is the subject
    assert set(ids(out.stdout, "facts")) == {
        world.facts["fixture"],
        world.facts["decimal"],
        world.facts["review"],
    }
    # The document a run of api-fixer receives is this one, nonce aside.
    served = world.app.agent_memory.briefing(world.app.agent_memory.caller(world.me.token))
    assert served.text.replace(parse(served.text)[1], nonce) == out.stdout
    # REQ-17: a preview is not exposure; only the run's own read above wrote rows.
    rows = world.app.store.fact_exposures(world.app.facts.workspace)
    assert {r.run_id for r in rows} == {"me"}


def test_briefing_preview_json(world: World) -> None:
    data = run_json(world.home, "briefing", "api-fixer", "--repo", API)
    assert data["agent"] == "api-fixer" and data["repo"] == API
    assert document(data["text"]).kind == "briefing"
    assert data["chars"] == len(data["text"]) and data["bytes"] == len(data["text"].encode())
    assert (data["max_chars"], data["max_bytes"]) == (4000, 4096)
    assert [s["name"] for s in data["sections"]] == [
        "collisions",
        "recent_runs",
        "facts",
        "episodes",
    ]
    assert set(data["facts"]) == set(ids(data["text"], "facts"))
    assert data["provider"] == "builtin" and data["memory_briefing"] is False
    assert world.app.store.fact_exposures(world.app.facts.workspace) == []


def test_briefing_preview_of_an_agent_with_nothing_is_empty(world: World) -> None:
    out = run_cli(world.home, "briefing", "newcomer")
    assert out.stdout == "" and "empty briefing: outside any repository" in out.stderr
    data = run_json(world.home, "briefing", "newcomer")
    assert data["empty"] is True and data["text"] == "" and data["sections"] == []
    bad = run_cli(world.home, "briefing", "Not An Agent", check=False)
    assert bad.returncode == 2 and "agent" in bad.stderr


def test_recall_shows_facts_and_recent_runs_beside_episodes(world: World) -> None:
    data = run_json(
        world.home, "recall", "settlement fixture", "--repo", API, "--paths", "billing/ledger.py"
    )
    # The fields it had keep their meaning...
    assert data["provider"] == "builtin" and data["degraded"] is None
    assert data["items"] and {i["repo"] for i in data["items"]} == {API}
    assert "dropped" in data
    # ...and the sections an agent's recall has are added.
    assert [f["id"] for f in data["facts"]] == [world.facts["fixture"]]
    assert data["facts"][0]["status"] == "active" and 0 < data["facts"][0]["confidence"] <= 1
    assert [r["run_id"] for r in data["recent_runs"]] == ["past-2", "past-1", "past-0"]
    assert data["recent_runs"][0]["duration_ms"] == 3_600_000
    as_agent = run_json(world.home, "recall", "second reviewer", "--as", "api-fixer")
    assert [f["id"] for f in as_agent["facts"]] == [world.facts["review"]]
    assert as_agent["recent_runs"] == []

    text = run_cli(world.home, "recall", "settlement fixture", "--repo", API, "--paths", "billing/")
    lines = text.stdout.splitlines()
    assert lines[0] == "facts" and lines[1].startswith(world.facts["fixture"])
    assert "episodes" in lines and "runs that edited these paths" in lines
    # An operator's recall is not a run's: nothing is recorded as served.
    assert world.app.store.fact_exposures(world.app.facts.workspace) == []


def test_mcp_attach_names_the_agents_it_knows(world: World) -> None:
    bad = run_cli(world.home, "mcp", "--attach", "cursor", check=False)
    assert bad.returncode == 2
    assert "--attach" in bad.stderr and "'cursor'" in bad.stderr
    assert "claude-code" in bad.stderr and "codex" in bad.stderr
