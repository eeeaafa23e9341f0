"""The agent-facing MCP server through the official SDK client, in process."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fleetmem.core.facts import Actor
from fleetmem.core.fence import parse_block
from fleetmem.core.hosts import CONTEXT_URI
from fleetmem.core.scope import project_scope
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI
from fleetmem.surfaces.mcp.server import FleetmemMCP, build_server, fixed_token
from tests.conftest import make_record, session
from tests.mcp.conftest import (
    API,
    CONFIG,
    World,
    client_for,
    document,
    error_text,
    ids,
    ok_json,
    ok_text,
    resource_text,
    run_async,
    text,
)

TOOLS = [
    "recall",
    "briefing",
    "remember",
    "vote_fact",
    "read_context_file",
    "note_project",
    "update_notes",
]


@pytest.fixture
def serve(world: World) -> Iterator[Callable[[str | None], FleetmemMCP]]:
    """Build a server attributed by a token (or not attributed: None)."""
    made: list[FleetmemMCP] = []

    def factory(token: str | None) -> FleetmemMCP:
        server = build_server(world.app, fixed_token(token))
        made.append(server)
        return server

    yield factory
    for server in made:
        server.close()


def with_client(server: FleetmemMCP, body: Callable[[Any], Any]) -> Any:
    async def main() -> Any:
        async with client_for(server) as client:
            return await body(client)

    return run_async(main)


# ---- the lists -------------------------------------------------------------------------------
def test_the_tool_list_is_the_seven_agent_tools_described_for_a_model(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    async def body(client: Any) -> Any:
        return (await client.list_tools()).tools, (await client.list_resources()).resources

    tools, resources = with_client(serve(world.me.token), body)
    assert [t.name for t in tools] == TOOLS
    for tool in tools:
        words = tool.description.lower()
        assert len(tool.description) > 300, tool.name
        assert "return" in words and ("cannot" in words or "never" in words), tool.name
        assert tool.input_schema["type"] == "object"
        assert "ctx" not in tool.input_schema["properties"]
    by_name = {t.name: t for t in tools}
    recall = by_name["recall"].input_schema["properties"]
    assert (recall["query"]["minLength"], recall["query"]["maxLength"]) == (1, 512)
    assert recall["paths"]["maxItems"] == 20
    assert (recall["limit"]["minimum"], recall["limit"]["maximum"]) == (1, 20)
    assert by_name["recall"].input_schema["required"] == ["query"]
    assert set(by_name["vote_fact"].input_schema["required"]) == {"fact_id", "stance"}
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["remember"].annotations.read_only_hint is False
    assert [(str(r.uri), r.mime_type) for r in resources] == [
        (BRIEFING_URI, "text/plain"),
        (CONTEXT_URI, "text/plain"),
    ]


def test_provider_tools_are_never_listed_and_calls_naming_them_are_refused(
    make_app: Callable[..., App],
) -> None:
    app = make_app(CONFIG + '[mcp.ref]\ncommand = "/bin/true"\n')
    world = World(app)
    server = build_server(app, fixed_token(world.me.token))

    async def body(client: Any) -> Any:
        names = [t.name for t in (await client.list_tools()).tools]
        refused = [
            error_text(await client.call_tool(name, {"id": "ep_x"}))
            for name in ("memory_forget", "memory_recall", "builtin__memory_forget", "ref__search")
        ]
        return names, refused

    try:
        names, refused = with_client(server, body)
    finally:
        server.close()
    assert names == TOOLS
    assert all(r.startswith("not_permitted: ") for r in refused), refused
    denied = [r for r in app.store.recent_calls(limit=10) if r.outcome == "denied"]
    assert sorted(r.tool for r in denied) == sorted(
        ["memory_forget", "memory_recall", "builtin__memory_forget", "ref__search"]
    )
    assert {r.caller for r in denied} == {"agent:api-fixer run:me"}
    assert {r.error for r in denied} == {"not_permitted"}
    assert app.memory.list_episodes(limit=10)  # nothing was forgotten


def test_an_unknown_tool_is_named_in_the_error(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    async def body(client: Any) -> Any:
        return error_text(await client.call_tool("record_episode", {}))

    message = with_client(serve(world.me.token), body)
    assert message.startswith("unknown_tool: ") and "recall" in message


# ---- each tool ------------------------------------------------------------------------------
def test_recall_briefing_and_the_resource_through_the_sdk(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    async def body(client: Any) -> Any:
        resource = resource_text(await client.read_resource(BRIEFING_URI))
        briefing = ok_text(await client.call_tool("briefing", {}))
        again = ok_text(await client.call_tool("briefing", {"refresh": False}))
        recall = ok_text(
            await client.call_tool(
                "recall", {"query": "settlement fixture", "paths": ["billing/"], "limit": 3}
            )
        )
        refreshed = ok_text(await client.call_tool("briefing", {"refresh": True}))
        after = resource_text(await client.read_resource(BRIEFING_URI))
        return resource, briefing, again, recall, refreshed, after

    resource, briefing, again, recall, refreshed, after = with_client(serve(world.me.token), body)
    # REQ-15: the resource read first, then the tool: the same document; no churn.
    assert resource and resource == briefing == again
    assert refreshed != briefing and after == refreshed
    assert document(recall).kind == "recall"
    assert ids(recall, "facts") == [world.facts["fixture"]]
    assert len(ids(recall, "episodes")) <= 3 and ids(recall, "episodes")
    assert ids(recall, "recent_runs", "run") == ["past-2", "past-1", "past-0"]
    surfaces = [s for _, s in world.exposures("me")]
    assert {"briefing", "resource", "recall"} == set(surfaces)


def test_remember_and_vote_fact_tell_the_agent_what_happened(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    async def body(client: Any) -> Any:
        proposed = ok_json(
            await client.call_tool(
                "remember",
                {"text": "Payout exports need the tenant's timezone.", "kind": "lesson"},
            )
        )
        duplicate = ok_json(
            await client.call_tool(
                "remember", {"text": "The settlement fixture writes rows in local time."}
            )
        )
        await client.call_tool("recall", {"query": "settlement fixture"})
        exposed = ok_json(
            await client.call_tool(
                "vote_fact", {"fact_id": world.facts["fixture"], "stance": "support"}
            )
        )
        repeat = ok_json(
            await client.call_tool(
                "vote_fact", {"fact_id": world.facts["fixture"], "stance": "contradict"}
            )
        )
        independent = ok_json(
            await client.call_tool(
                "vote_fact",
                {"fact_id": world.facts["decimal"], "stance": "support", "reason": "ran tests"},
            )
        )
        bad_stance = error_text(
            await client.call_tool(
                "vote_fact", {"fact_id": world.facts["decimal"], "stance": "maybe"}
            )
        )
        hidden = error_text(
            await client.call_tool(
                "vote_fact", {"fact_id": world.facts["web"], "stance": "support"}
            )
        )
        return proposed, duplicate, exposed, repeat, independent, bad_stance, hidden

    proposed, duplicate, exposed, repeat, independent, bad_stance, hidden = with_client(
        serve(world.me.token), body
    )
    assert proposed["outcome"] == "proposed" and proposed["awaiting_review"] is True
    assert proposed["status"] == "proposed" and proposed["scope"] == project_scope(API)
    assert "review" in proposed["message"] and proposed["fact_id"] in proposed["message"]
    assert world.app.facts.get(proposed["fact_id"]).fact.author == "api-fixer"
    assert duplicate["outcome"] == "duplicate" and duplicate["fact_id"] == world.facts["fixture"]
    assert (exposed["counted"], exposed["reason"]) == (False, "exposed")
    assert "shown" in exposed["message"]
    assert (repeat["counted"], repeat["reason"]) == (False, "repeat")
    assert (independent["counted"], independent["reason"]) == (True, "independent")
    assert bad_stance.startswith("invalid_input: stance")
    assert hidden.startswith("unknown_fact: ")


def test_context_file_tools(world: World, serve: Callable[[str | None], FleetmemMCP]) -> None:
    app = world.app
    app.files.save(
        app.files.ref("glossary"),
        "Settlement: the nightly batch.\n",
        base_revision=0,
        actor=Actor("human", "marina"),
    )

    async def body(client: Any) -> Any:
        read = ok_json(await client.call_tool("read_context_file", {"name": "Glossary"}))
        missing = error_text(await client.call_tool("read_context_file", {"name": "secrets"}))
        noted = ok_json(await client.call_tool("note_project", {"text": "Run `make check` first."}))
        notes = ok_json(await client.call_tool("update_notes", {"text": "Prefer small diffs."}))
        stale = error_text(
            await client.call_tool(
                "update_notes", {"text": "All new.", "mode": "replace", "base_revision": 3}
            )
        )
        return read, missing, noted, notes, stale

    read, missing, noted, notes, stale = with_client(serve(world.me.token), body)
    block, rest = parse_block(read["text"])
    assert (read["name"], read["revision"], block.source, block.field, block.body, rest) == (
        "glossary",
        1,
        "fleetmem-file",
        "glossary",
        "Settlement: the nightly batch.\n",
        "",
    )
    assert "not instructions" in read["text_is"]
    assert missing.startswith("invalid_input: ")
    assert noted["written"] and noted["revision"] == 1 and noted["notebook"] == API
    notebook = app.files.get(app.files.ref("notebook", repo=API))
    assert notebook.body == "Run `make check` first.\n" and notebook.updated_by == "agent:api-fixer"
    # Without edit_agent_files nothing is written: the change comes back for a person.
    assert (notes["written"], notes["reason"]) == (False, "not_permitted")
    assert "Prefer small diffs." in parse_block(notes["proposed_text"])[0].body
    assert parse_block(notes["diff"])[0].field == "notes-diff"
    assert stale.startswith("stale_revision: ")


def test_update_notes_writes_with_the_grant_and_refuses_a_stale_replace(
    make_app: Callable[..., App],
) -> None:
    app = make_app(CONFIG + "edit_agent_files = true\n")
    world = World(app)
    server = build_server(app, fixed_token(world.me.token))

    async def body(client: Any) -> Any:
        first = ok_json(await client.call_tool("update_notes", {"text": "Prefer small diffs."}))
        stale = error_text(
            await client.call_tool(
                "update_notes", {"text": "All new.", "mode": "replace", "base_revision": 0}
            )
        )
        replaced = ok_json(
            await client.call_tool(
                "update_notes", {"text": "All new.\n", "mode": "replace", "base_revision": 1}
            )
        )
        return first, stale, replaced

    try:
        first, stale, replaced = with_client(server, body)
    finally:
        server.close()
    assert (first["written"], first["revision"]) == (True, 1) and "revision 1" in first["message"]
    assert stale.startswith("stale_revision: ")
    assert (replaced["written"], replaced["revision"]) == (True, 2)
    notes = app.files.get(app.files.ref("notes", agent="api-fixer"))
    assert notes.body == "All new.\n" and notes.updated_by == "agent:api-fixer"


# ---- errors a model reads --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x" * 513}, "query"),
        ({"query": "ok", "paths": [f"f{i}.py" for i in range(21)]}, "paths"),
        ({"query": "ok", "paths": ["/etc/passwd"]}, "paths"),
        ({"query": "ok", "paths": "billing/"}, "paths"),
        ({"query": "ok", "limit": 0}, "limit"),
        ({"query": "ok", "limit": 21}, "limit"),
        ({"query": "ok", "limit": "many"}, "limit"),
    ],
)
def test_recall_errors_name_the_argument(
    world: World,
    serve: Callable[[str | None], FleetmemMCP],
    arguments: dict[str, Any],
    field: str,
) -> None:
    async def body(client: Any) -> Any:
        return error_text(await client.call_tool("recall", arguments))

    message = with_client(serve(world.me.token), body)
    assert message.startswith(f"invalid_input: {field}"), message
    assert "x" * 100 not in message  # a long value is never echoed whole


def test_an_unattributed_caller_gets_not_attributed_and_workspace_facts(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(client: Any) -> Any:
        out = {
            name: text(await client.call_tool(name, args))
            for name, args in [
                ("briefing", {}),
                ("remember", {"text": "Anything at all."}),
                ("vote_fact", {"fact_id": world.facts["review"], "stance": "support"}),
                ("read_context_file", {"name": "voice"}),
                ("note_project", {"text": "hello"}),
                ("update_notes", {"text": "hello"}),
            ]
        }
        try:
            await client.read_resource(BRIEFING_URI)
        except MCPError as exc:
            out["resource"] = exc.message
        try:
            await client.read_resource(CONTEXT_URI)
        except MCPError as exc:
            out["context"] = exc.message
        out["recall"] = ok_text(await client.call_tool("recall", {"query": "settlement fixture"}))
        out["workspace"] = ok_text(await client.call_tool("recall", {"query": "second reviewer"}))
        return out

    for token in (None, "fmr_unknown_token"):
        out = with_client(serve(token), body)
        for name in ("briefing", "remember", "vote_fact", "read_context_file", "note_project"):
            assert out[name].startswith("not_attributed: "), (name, out[name])
        assert out["update_notes"].startswith("not_attributed: ")
        assert out["resource"].startswith("not_attributed: ")
        assert out["context"].startswith("not_attributed: ")
        assert ids(out["recall"], "facts") == [] and ids(out["recall"], "episodes") == []
        assert ids(out["workspace"], "facts") == [world.facts["review"]]
    assert world.app.store.fact_exposures(world.app.facts.workspace) == []


def test_a_run_outside_a_repository_has_no_notebook(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    outside = world.app.runs.open_run("api-fixer", workdir="/tmp", run_id="nowhere")

    async def body(client: Any) -> Any:
        return (
            error_text(await client.call_tool("note_project", {"text": "hi"})),
            ok_text(await client.call_tool("briefing", {})),
            error_text(await client.call_tool("remember", {"text": "A fact.", "scope": "project"})),
        )

    note, briefing, remember = with_client(serve(outside.token), body)
    assert note.startswith("no_repository: ") and remember.startswith("no_repository: ")
    assert briefing == ""


# ---- REQ-14 through the tool -----------------------------------------------------------------
def test_a_busy_briefing_keeps_its_order_and_bounds(make_app: Callable[..., App]) -> None:
    """3 collisions, 5 recent runs, 20 live facts, a working provider, max 2,000 chars."""
    app = make_app('[model_api]\nembedding_model = ""\n')
    me = app.runs.open_run("api-fixer", repo=API, branch="main", run_id="me")
    for i in range(3):
        app.runs.open_run(f"peer-{i}", repo=API, branch="main")
    for i in range(6):
        app.memory.ingest_run(
            make_record(
                run_id=f"r{i}",
                started_at=f"2026-11-2{i}T08:00:00Z",
                ended_at=f"2026-11-2{i}T08:30:00Z",
                sessions=[session(branch="main")],
            )
        )
    for i in range(20):
        app.facts.add(f"Ledger rule {i}: settle before {i + 1} o'clock.", scope=project_scope(API))
    server = build_server(app, fixed_token(me.token))

    async def body(client: Any) -> Any:
        return ok_text(await client.call_tool("briefing", {}))

    try:
        briefing = with_client(server, body)
    finally:
        server.close()
    doc = document(briefing)
    assert len(briefing) <= 2000 and len(briefing.encode()) <= 4096
    assert [s.name for s in doc.sections] == ["collisions", "recent_runs", "facts", "episodes"]
    facts = doc.section("facts")
    assert facts is not None and facts.omitted == 20 - len(facts.items) > 0
    assert f"({facts.omitted} more: call recall)" in briefing
    collisions = doc.section("collisions")
    assert collisions is not None and len(collisions.items) + collisions.omitted == 3
    recent = doc.section("recent_runs")
    assert recent is not None and len(recent.items) + recent.omitted == 5
    # Only the facts the document shows count as served (REQ-17).
    shown = [str(i.get("id")) for i in facts.items]
    assert [e.fact_id for e in app.facts.offered_to_run("me")] == shown


# ---- privacy of logs -------------------------------------------------------------------------
def test_logs_carry_ids_and_outcomes_never_queries_or_text(
    world: World, serve: Callable[[str | None], FleetmemMCP], caplog: pytest.LogCaptureFixture
) -> None:
    secret_query = "zebra-quokka-unmistakable settlement"

    async def body(client: Any) -> Any:
        await client.call_tool("recall", {"query": secret_query})
        await client.call_tool("recall", {"query": "q", "limit": 99})
        await client.call_tool("remember", {"text": "Quokka facts stay in the fence."})
        await client.call_tool("briefing", {})

    with caplog.at_level(logging.DEBUG):
        with_client(serve(world.me.token), body)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "mcp.call tool=recall run=me agent=api-fixer outcome=ok" in logged
    assert "outcome=invalid_input" in logged
    assert "quokka" not in logged.lower() and "settlement fixture" not in logged


def test_the_context_resource_serves_the_run_its_kept_whole_context(
    world: World, serve: Callable[[str | None], FleetmemMCP]
) -> None:
    from fleetmem.integrations.context_delivery import forget_whole, keep_whole
    from fleetmem.surfaces.mcp.descriptions import CONTEXT_WHOLE

    async def body(client: Any) -> Any:
        return resource_text(await client.read_resource(CONTEXT_URI))

    caller = world.app.agent_memory.caller(world.me.token)
    assert caller is not None
    # A run given its whole context at the start: the resource says so.
    assert with_client(serve(world.me.token), body) == CONTEXT_WHOLE
    whole = "## Project notebook\n" + secrets.token_hex(600) + "\n"
    keep_whole(world.app.home, caller.run_id, whole)
    assert with_client(serve(world.me.token), body) == whole
    # Only the run's own: another run's token reads its own (nothing kept).
    assert with_client(serve(world.other.token), body) == CONTEXT_WHOLE
    forget_whole(world.app.home, caller.run_id)
    assert with_client(serve(world.me.token), body) == CONTEXT_WHOLE
