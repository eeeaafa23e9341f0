"""The activity feed (seed 003 FR-18, S3, S8): one feed, newest first, across the fact
journal, agents' votes and context file activity; paged without repeats or gaps; scoped to
its workspace."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from fleetmem.core.facts import Actor
from fleetmem.errors import InvalidInput
from fleetmem.service.activity import ActivityEntry, ActivityFeed
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.service.file_types import Actor as FileActor
from fleetmem.service.files import ContextFileService
from tests.facts.conftest import Clock

ALICE = Actor("human", "alice")
MARINA = FileActor("user", "marina")
WITH_NOTES = '[model_api]\nembedding_model = ""\n[agent.research]\nedit_agent_files = true\n'


class Memory:
    """Facts, files and the feed of one home, on one clock the test moves."""

    def __init__(self, app: App, clock: Clock) -> None:
        counter = itertools.count(1)
        self.clock = clock
        self.facts = FactService(
            store=app.store,
            settings=lambda: app.config.current,
            embedder=None,
            clock=clock,
            new_id=lambda: f"f_{next(counter):04d}",
        )
        self.files = ContextFileService(
            store=app.store, settings=lambda: app.config.current, clock=clock
        )
        self.feed = ActivityFeed(app.store)

    def tick(self, seconds: float = 1.0) -> None:
        self.clock.advance(seconds)


@pytest.fixture
def memory(make_app: Callable[..., App]) -> Iterator[Memory]:
    m = Memory(make_app(WITH_NOTES), Clock())
    yield m
    m.facts.close()


def _what(entries: tuple[ActivityEntry, ...]) -> list[tuple[str, str, str]]:
    return [(e.source, e.action, e.actor) for e in entries]


def test_one_feed_newest_first_across_facts_votes_and_files(memory: Memory) -> None:
    facts, files = memory.facts, memory.files
    taught = facts.add("Escalate anything over 5,000 to a human.", actor=ALICE).fact
    memory.tick()
    facts.edit(taught.id, "Escalate anything over 2,000 to a human.", actor=ALICE)  # S3
    memory.tick()
    proposed = facts.propose("Staging is rebuilt nightly.", agent="research", run_id="run-7")
    assert proposed.fact is not None
    memory.tick()
    facts.vote(run_id="run-8", agent="outreach", repo=None, fact_id=taught.id, stance="support")
    memory.tick()
    files.update_notes(agent="research", text="The API repo pins Python 3.11.", run_id="run-7")
    memory.tick()
    voice = files.ref("voice")
    files.save(voice, "Short sentences.", base_revision=0, actor=MARINA)
    memory.tick()
    files.read_context_file(agent="research", name="glossary", run_id="run-7")  # not a change
    memory.tick()
    facts.review(proposed.fact.id, "confirm", actor=ALICE)
    memory.tick()
    facts.forget(taught.id, actor=ALICE)
    memory.tick()
    facts.set_scope(proposed.fact.id, "agent:research", actor=ALICE)

    page = memory.feed.page()
    assert _what(page.entries) == [
        ("fact", "scope", "alice"),
        ("fact", "forget", "alice"),
        ("fact", "review:confirm", "alice"),
        ("file", "save", "marina"),
        ("file", "append", "research"),  # S8: an agent edit
        ("vote", "vote:support", "outreach"),
        ("fact", "propose", "research"),
        ("fact", "edit", "alice"),
        ("fact", "create", "alice"),
    ]
    assert page.next_cursor is None
    by_action = {e.action: e for e in page.entries}
    assert by_action["append"].file_ref == "agent/research/notes"
    assert by_action["append"].actor_kind == "agent" and by_action["append"].run_id == "run-7"
    assert (by_action["save"].actor_kind, by_action["save"].file_ref) == (
        "human",
        "workspace/voice",
    )
    assert by_action["edit"].fact_body == "Escalate anything over 2,000 to a human."
    assert by_action["edit"].revision == 2
    assert by_action["forget"].detail == "active→forgotten"
    assert by_action["review:confirm"].detail == "proposed→active"
    assert by_action["scope"].detail == "workspace→agent:research"
    assert by_action["vote:support"].fact_id == taught.id
    assert by_action["propose"].run_id == "run-7"
    assert all(earlier.at >= later.at for earlier, later in itertools.pairwise(page.entries))


def test_pages_neither_repeat_nor_skip_when_times_tie(memory: Memory) -> None:
    """Entries written at the same instant in different records page in one order."""
    facts, files = memory.facts, memory.files
    ids = [facts.add(f"Rule number {i} holds.", actor=ALICE).fact.id for i in range(4)]
    for i, fact_id in enumerate(ids):
        facts.vote(
            run_id=f"run-{i}", agent="outreach", repo=None, fact_id=fact_id, stance="support"
        )
        files.update_notes(agent="research", text=f"Note {i}.", run_id=f"run-{i}")
    whole = memory.feed.page(limit=200).entries
    assert len(whole) == 12 and len({e.at for e in whole}) == 1  # the clock never moved
    for size in (1, 2, 5, 7):
        seen: list[ActivityEntry] = []
        cursor = None
        while True:
            page = memory.feed.page(limit=size, cursor=cursor)
            seen.extend(page.entries)
            if page.next_cursor is None:
                break
            assert len(page.entries) == size
            cursor = page.next_cursor
        assert seen == list(whole), size


def test_a_purged_fact_keeps_its_entries_without_its_words(memory: Memory) -> None:
    fact = memory.facts.add("Temporary rule.", actor=ALICE).fact
    memory.facts.forget(fact.id, actor=ALICE)
    memory.tick(31 * 86_400)
    memory.facts.sweep()
    entries = memory.feed.page().entries
    assert [e.action for e in entries] == ["purge", "forget", "create"]
    assert all(e.fact_id == fact.id and e.fact_body is None for e in entries)


def test_another_workspace_is_never_in_the_feed(memory: Memory) -> None:
    memory.facts.in_workspace("acme").add("Acme ships on Mondays.", actor=ALICE)
    memory.tick()
    acme = ContextFileService(
        store=memory.files.store,
        settings=memory.files._settings,
        clock=memory.clock,
        workspace="acme",
    )
    acme.save(acme.ref("voice"), "Acme voice.", base_revision=0, actor=MARINA)
    assert memory.feed.page().entries == ()
    theirs = memory.feed.in_workspace("acme").page().entries
    assert [(e.source, e.action) for e in theirs] == [("file", "save"), ("fact", "create")]


@pytest.mark.parametrize(
    "cursor", ["", "yesterday", "1.0:fact", "1.0:episode:3", "1.0:fact:-1", "1e5:fact:1"]
)
def test_a_cursor_it_did_not_return_is_refused(memory: Memory, cursor: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        memory.feed.page(cursor=cursor)
    assert caught.value.field == "cursor"


@pytest.mark.parametrize("limit", [0, 201, True])
def test_the_limit_is_bounded(memory: Memory, limit: int) -> None:
    with pytest.raises(InvalidInput):
        memory.feed.page(limit=limit)
