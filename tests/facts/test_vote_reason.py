"""A vote keeps the voter's reason (migration 9): redacted, capped, refused naming ``reason``
when it holds a secret or is too long, and shown by ``fleetmem facts votes`` and the API."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import sql_rows
from tests.facts.conftest import ALICE, API, VECTORS_OFF, Clock
from tests.surfaces.cli_helpers import run_cli, run_json
from tests.surfaces.test_http import Daemon

GH_TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2


def _fact(facts: FactService, clock: Clock, body: str = "The api's ledger tests need UTC.") -> str:
    clock.advance(1.0)
    fact = facts.add(body, actor=ALICE).fact
    assert fact is not None
    return fact.id


def test_a_vote_stores_its_reason_cleaned(facts: FactService, clock: Clock) -> None:
    fact_id = _fact(facts, clock)
    result = facts.vote(
        run_id="run-1",
        agent="api-fixer",
        repo=API,
        fact_id=fact_id,
        stance="support",
        reason="  ran   the ledger\u200b suite under TZ=UTC  ",
    )
    assert result.vote.note == "ran the ledger suite under TZ=UTC"
    facts.vote(run_id="run-2", agent="web-fixer", repo=API, fact_id=fact_id, stance="contradict")
    stored = facts.votes(fact_id).votes
    assert [(v.run_id, v.note, v.reason) for v in stored] == [
        ("run-1", "ran the ledger suite under TZ=UTC", "independent"),
        ("run-2", None, "independent"),
    ]


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (f"checked with token {GH_TOKEN}", "contains a secret (github_token)"),
        ("x" * 501, "is 501 characters"),
        (42, "must be a string"),
    ],
)
def test_a_bad_reason_is_refused_naming_the_field_and_nothing_is_stored(
    facts: FactService, clock: Clock, reason: object, message: str
) -> None:
    fact_id = _fact(facts, clock)
    with pytest.raises(InvalidInput, match=re.escape(message)) as raised:
        facts.vote(
            run_id="run-1",
            agent="api-fixer",
            repo=API,
            fact_id=fact_id,
            stance="support",
            reason=reason,  # type: ignore[arg-type]
        )
    assert raised.value.field == "reason"
    assert GH_TOKEN not in str(raised.value)
    assert facts.votes(fact_id).votes == ()
    # The run may still vote, once, with a reason that is fine.
    ok = facts.vote(
        run_id="run-1", agent="api-fixer", repo=API, fact_id=fact_id, stance="support", reason="ok"
    )
    assert ok.vote.counted and ok.vote.note == "ok"


def test_a_purge_drops_the_voters_words_with_the_facts(facts: FactService, clock: Clock) -> None:
    fact_id = _fact(facts, clock)
    facts.vote(
        run_id="run-1",
        agent="api-fixer",
        repo=API,
        fact_id=fact_id,
        stance="support",
        reason="the ledger suite needs UTC",
    )
    facts.forget(fact_id, actor=ALICE)
    clock.advance(31 * 86_400.0)
    assert facts.purge_expired() == 1
    notes = sql_rows(facts.store, "SELECT note FROM fact_votes WHERE fact_id = ?", (fact_id,))
    assert notes == [(None,)]


@pytest.mark.sqlite_only(reason="SQLite's migration 9 on an existing file")
def test_migration_9_adds_the_column_to_an_existing_store(tmp_path: Path) -> None:
    path = tmp_path / "fleetmem.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(fact_votes)")]
    names = dict(conn.execute("SELECT version, name FROM schema_migrations").fetchall())
    conn.close()
    assert "note" in columns and names[9] == "fact_vote_reason"


@pytest.fixture
def voted(make_app: Callable[..., App]) -> Iterator[tuple[Path, str]]:
    """A home with one fact and two votes on it, one with a reason."""
    app = make_app(VECTORS_OFF)
    fact = app.facts.add("Tag releases from main.", actor=ALICE).fact
    assert fact is not None
    app.facts.vote(
        run_id="run-a",
        agent="api-fixer",
        repo=API,
        fact_id=fact.id,
        stance="support",
        reason="release.sh tags HEAD of main",
    )
    app.facts.vote(run_id="run-b", agent="api-fixer", repo=API, fact_id=fact.id, stance="support")
    yield app.home, fact.id


def test_fleetmem_facts_votes_shows_the_reason(voted: tuple[Path, str]) -> None:
    home, fact_id = voted
    text = run_cli(home, "facts", "votes", fact_id).stdout
    assert 'reason: "release.sh tags HEAD of main"' in text
    assert text.count("reason:") == 1
    data = run_json(home, "facts", "votes", fact_id)
    assert [v["note"] for v in data["votes"]] == ["release.sh tags HEAD of main", None]


def test_the_votes_route_shows_the_reason(voted: tuple[Path, str]) -> None:
    home, fact_id = voted
    daemon = Daemon(home)
    try:
        body = daemon.client.get(f"/api/v1/facts/{fact_id}/votes").json()
    finally:
        daemon.stop()
    assert [(v["run_id"], v["note"]) for v in body["votes"]] == [
        ("run-a", "release.sh tags HEAD of main"),
        ("run-b", None),
    ]


def test_a_vote_stored_without_a_reason_reads_back_as_none(make_app: Callable[..., App]) -> None:
    app = make_app(VECTORS_OFF)
    try:
        fact = app.facts.add("Squash merges only.", actor=ALICE).fact
        assert fact is not None
        sql_rows(  # an old row, as written before migration 9
            app.store,
            "INSERT INTO fact_votes (workspace, fact_id, revision, run_id, agent, repo, stance,"
            " counted, reason, at) VALUES ('default', ?, 1, 'run-old', 'api-fixer', NULL,"
            " 'support', 1, 'independent', 1.0)",
            (fact.id,),
        )
        assert [v.note for v in app.facts.votes(fact.id).votes] == [None]
    finally:
        app.close()


def test_the_mcp_vote_fact_tool_stores_the_reason_and_refuses_a_secret(
    make_app: Callable[..., App],
) -> None:
    from fleetmem.surfaces.mcp.server import build_server, fixed_token
    from tests.mcp.conftest import CONFIG, World, client_for, error_text, ok_json, run_async

    world = World(make_app(CONFIG))
    server = build_server(world.app, fixed_token(world.me.token))
    fact_id = world.facts["decimal"]

    async def body() -> tuple[Any, str]:
        async with client_for(server) as client:
            secret = error_text(
                await client.call_tool(
                    "vote_fact",
                    {"fact_id": fact_id, "stance": "support", "reason": f"used {GH_TOKEN}"},
                )
            )
            voted = ok_json(
                await client.call_tool(
                    "vote_fact",
                    {"fact_id": fact_id, "stance": "support", "reason": "ran the ledger tests"},
                )
            )
            return voted, secret

    try:
        voted, secret = run_async(body)
    finally:
        server.close()
    assert voted["counted"] is True
    assert secret.startswith("invalid_input: reason") and GH_TOKEN not in secret
    assert [(v.run_id, v.note) for v in world.app.facts.votes(fact_id).votes] == [
        ("me", "ran the ledger tests")
    ]
