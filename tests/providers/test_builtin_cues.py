"""Query cues (a named day or month, a named agent) favour the episodes they point at; the
follow-up channel brings the run that answers a leading run's question; the text column holds
what a run did, not its bookkeeping."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions, index_text
from fleetmem.service.bootstrap import App, build
from fleetmem.service.memory import MemoryService
from fleetmem.store.sqlite import fts_source
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import ingest_text, write_config

API = "github.com/acme/api"
SCOPE = f"project:{API}"
#: Every cue on, at weights of their own: these tests are about what each cue does, not
#: about their default weights (bench/fusion_lab.py and bench/bench_recall_sets.py decide
#: those).
CUES_ON: dict[str, float] = {"period_weight": 1.0, "agent_weight": 1.0, "follow_up_weight": 0.7}


def cues(**changes: float | int) -> RankingOptions:
    return RankingOptions(**{**CUES_ON, **changes})  # type: ignore[arg-type]


def _memory(app: App, options: RankingOptions | None = None) -> MemoryService:
    provider = BuiltinProvider(app.store, None, options or cues())
    return MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)


def _run(memory: MemoryService, run_id: str, at: str, text: str, agent: str = "coder") -> str:
    # A branch each: no run lends its words to another as context.
    return ingest_text(memory, run_id, at, text, agent=agent, branch=f"b-{run_id}")


def _found(memory: MemoryService, query: str) -> list[str]:
    return [h.episode_id for h in memory.recall(query, scopes=[SCOPE], limit=20).items]


def _days(memory: MemoryService) -> dict[str, str]:
    """The same words on three days; the newest would win a tie."""
    return {
        day: _run(memory, f"r{day}", f"{day}T10:00:00Z", "Migrated the billing schema.")
        for day in ("2026-03-03", "2026-05-03", "2026-11-20")
    }


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("billing schema migration on 3 May 2026", "2026-05-03"),
        ("billing schema migration on 2026-03-03", "2026-03-03"),
        ("what happened to the billing schema in March?", "2026-03-03"),
        ("billing schema on May 4", "2026-05-03"),  # a day's slack for time zones
    ],
)
def test_a_named_period_ranks_its_episodes_first(
    make_app: Callable[..., App], query: str, day: str
) -> None:
    memory = _memory(make_app())
    ids = _days(memory)
    assert _found(memory, query)[0] == ids[day]


def test_without_a_period_or_with_the_channel_off_the_newest_wins_the_tie(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    ids = _days(_memory(app))
    assert _found(_memory(app), "billing schema migration")[0] == ids["2026-11-20"]
    off = _memory(app, cues(period_weight=0))
    assert _found(off, "billing schema migration on 3 May 2026")[0] == ids["2026-11-20"]


def test_a_period_only_reorders_what_the_words_found(make_app: Callable[..., App]) -> None:
    memory = _memory(make_app())
    ids = _days(memory)
    _run(memory, "other", "2026-05-03T11:00:00Z", "Renamed the release script.")
    # The unrelated run of 3 May is not brought in by its date alone (no year in the query:
    # "2026" is a word of every rendering, which holds the start time).
    assert set(_found(memory, "billing schema on 3 May")) == set(ids.values())


def _two_agents(memory: MemoryService) -> dict[str, str]:
    return {
        "coder": _run(
            memory,
            "c1",
            "2026-11-20T10:00:00Z",
            "Asked the reviewer about the parser change; reviewer wants tests.",
            agent="coder",
        ),
        "reviewer": _run(
            memory,
            "v1",
            "2026-11-19T10:00:00Z",
            "Parser change approved after tests were added.",
            agent="reviewer",
        ),
    }


def test_a_named_agent_ranks_its_own_episodes_first(make_app: Callable[..., App]) -> None:
    app = make_app()
    ids = _two_agents(_memory(app))
    # The coder's run says "reviewer" twice; the reviewer's own run does not say it at all.
    off = _memory(app, cues(agent_weight=0))
    assert _found(off, "what did the reviewer say about the parser change")[0] == ids["coder"]
    found = _found(_memory(app), "what did the reviewer say about the parser change")
    assert found[0] == ids["reviewer"]
    assert set(found) == set(ids.values())


def test_naming_the_only_agent_of_a_scope_changes_nothing(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    memory = _memory(app)
    only = _run(memory, "c1", "2026-11-20T10:00:00Z", "Coder notes on the parser.", agent="coder")
    other = _run(memory, "c2", "2026-11-21T10:00:00Z", "Parser tests added.", agent="coder")
    # "coder" stays a search word: every run holds it as its agent, but only one says it in
    # its excerpt as well, and that one ranks first.
    assert _found(memory, "coder parser")[0] == only
    assert set(_found(memory, "coder parser")) == {only, other}


def test_a_query_that_is_only_a_name_still_searches_with_it(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    ids = _two_agents(_memory(app))
    assert _found(_memory(app), "reviewer")[0] == ids["reviewer"]


def test_agent_names_are_kept_per_scope_and_survive_an_upgrade(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    _two_agents(_memory(app))
    store = app.store
    assert store.builtin_agent_names([SCOPE]) == ["coder", "reviewer"]
    assert store.builtin_agent_names(["project:elsewhere"]) == []
    assert store.builtin_agent_names([]) == []
    # A store from before migration 14: the table is rebuilt from the episodes it holds.
    with store.db.write() as conn:
        conn.execute("DROP TABLE builtin_agents")
        conn.execute("DELETE FROM schema_migrations WHERE version = 14")
    upgraded = SqliteStore(store.db.path)
    try:
        assert upgraded.builtin_agent_names([SCOPE]) == ["coder", "reviewer"]
    finally:
        upgraded.close()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("period_weight", -1.0),
        ("agent_weight", float("nan")),
        ("agent_weight", float("inf")),
        ("period_weight", "1"),
        ("agent_weight", True),
    ],
)
def test_bad_cue_weights_name_the_field_and_the_value(field: str, value: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        RankingOptions(**{field: value})  # type: ignore[arg-type]
    assert f"RankingOptions.{field}" in str(caught.value)


def _thread(
    memory: MemoryService, ask: str, agents: tuple[str, str] = ("coder", "coder")
) -> tuple[str, str]:
    """A run and the next one on its branch, five minutes later."""
    first = _thread_run(memory, "t1", "2026-11-20T10:00:00Z", ask, agents[0])
    second = _thread_run(
        memory, "t2", "2026-11-20T10:05:00Z", "Ten, and log each attempt.", agents[1]
    )
    return first, second


def _thread_run(memory: MemoryService, run_id: str, at: str, text: str, agent: str) -> str:
    return ingest_text(memory, run_id, at, text, agent=agent, branch="b-thread")


#: No context column, so the second run can only be found as a follow-up.
NO_CONTEXT = cues(context_neighbours=0)


def test_the_run_after_a_question_is_found_as_its_follow_up(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    asked, answer = _thread(
        _memory(app, NO_CONTEXT), "Should the retry limit be five or ten?", ("coder", "lead")
    )
    assert _found(_memory(app, NO_CONTEXT), "retry limit") == [asked, answer]
    off = cues(context_neighbours=0, follow_up_weight=0)
    assert _found(_memory(app, off), "retry limit") == [asked]


def test_the_same_agents_next_run_is_a_continuation_not_an_answer(
    make_app: Callable[..., App],
) -> None:
    # A question is answered by whoever it was put to; the asker's own next run on the
    # thread carries on with its work and is found by its own words, not as a follow-up.
    app = make_app()
    asked, _ = _thread(_memory(app, NO_CONTEXT), "Should the retry limit be five or ten?")
    assert _found(_memory(app, NO_CONTEXT), "retry limit") == [asked]


def test_a_run_without_a_question_brings_no_follow_up(make_app: Callable[..., App]) -> None:
    app = make_app()
    asked, _ = _thread(_memory(app, NO_CONTEXT), "Set the retry limit to five.")
    assert _found(_memory(app, NO_CONTEXT), "retry limit") == [asked]


def test_a_follow_up_by_another_agent_than_the_named_one_is_left_out(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    memory = _memory(app, NO_CONTEXT)
    asked, answer = _thread(memory, "Should the retry limit be five or ten?", ("coder", "lead"))
    _run(memory, "x", "2026-11-01T10:00:00Z", "Unrelated cleanup.", agent="docs-bot")
    assert _found(memory, "retry limit") == [asked, answer]
    assert _found(memory, "what did coder ask about the retry limit") == [asked]
    assert _found(memory, "what did lead say about the retry limit") == [asked, answer]


def test_a_follow_up_is_returned_when_paths_decode_every_candidate(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    memory = _memory(app, NO_CONTEXT)
    asked, answer = _thread(memory, "Should the retry limit be five or ten?", ("coder", "lead"))
    result = memory.recall("retry limit", scopes=[SCOPE], limit=20, paths=["src/retry.py"])
    assert [h.episode_id for h in result.items] == [asked, answer]


def test_the_text_column_holds_what_a_run_did_not_its_bookkeeping(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    memory = _memory(app)
    eid = _run(memory, "r1", "2026-11-20T10:00:00Z", "Fixed the flaky parser test.")
    row = app.store.get_episode(eid)
    assert row is not None and row.episode is not None
    # The index is contentless; what it indexed is kept beside it (migration 21).
    held = fts_source.of_episode(app.store.db.conn, eid)
    assert held is not None
    indexed = held[0]
    assert indexed == index_text(row.episode)
    for kept in ("coder", API, "b-r1", "failed", "verify_failed", "Fixed the flaky parser test."):
        assert kept in indexed
    for left_out in (eid, "episode_id", "started_at", "2026-11-20", "trust_class", "scope:"):
        assert left_out not in indexed
    assert _found(memory, "flaky parser b-r1") == [eid]


def test_the_recall_cues_setting_turns_each_cue_off_at_once(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    cues: list[str] = ["periods", "agents", "follow_ups"]
    provider = BuiltinProvider(app.store, None, NO_CONTEXT, cues=lambda: cues)
    memory = MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)
    days = _days(memory)
    asked, answer = _thread(memory, "Should the retry limit be five or ten?", ("coder", "lead"))
    assert _found(memory, "billing schema on 3 May 2026")[0] == days["2026-05-03"]
    assert _found(memory, "retry limit") == [asked, answer]
    cues.remove("periods")  # read at each recall: no restart needed
    assert _found(memory, "billing schema on 3 May 2026")[0] == days["2026-11-20"]
    cues.remove("follow_ups")
    assert _found(memory, "retry limit") == [asked]


def test_the_daemon_reads_recall_cues_from_its_configuration(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, "[memory.episodes]\nrecall_cues = []\n")
    app = build(home, {"HOME": str(home)})
    try:
        days = _days(app.memory)
        assert _found(app.memory, "billing schema on 3 May 2026")[0] == days["2026-11-20"]
    finally:
        app.close()
