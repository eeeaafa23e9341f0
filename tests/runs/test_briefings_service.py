"""BriefingService over real runs, episodes and SQLite: briefings and recall documents."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.core.briefing import RECALL_MAX_BYTES, fact_item
from fleetmem.core.wrapper import Item, parse
from fleetmem.errors import InvalidInput, NotAttributed
from fleetmem.providers.base import ProviderRecall
from fleetmem.service.bootstrap import App
from fleetmem.service.briefings import BriefingService, Subject, subject_of
from fleetmem.service.memory import MemoryService
from fleetmem.service.runs import RunsService
from tests.conftest import make_record, session
from tests.runs.test_runs_service import Clock

API = "github.com/acme/api"


class ScriptedProvider:
    """An episode provider that is down (``fail``) or answers nothing, and counts recalls."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.recalls = 0

    @property
    def name(self) -> str:
        return "scripted"

    def record(self, episode_id: str, *args: Any) -> list[str]:
        if self.fail:
            raise ConnectionError("provider down")
        return [episode_id]

    def recall(self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]) -> Any:
        self.recalls += 1
        if self.fail:
            raise ConnectionError("provider down")
        return ProviderRecall(items=())

    def forget(self, provider_id: str) -> bool:
        return True


CONFIG = '[model_api]\nembedding_model = ""\n[agent.api-fixer]\nbriefing_max_chars = 4000\n'


def facts_for(subject: Subject, query: str | None, limit: int) -> Sequence[Item]:
    """A stand-in for the facts service: 12 live facts in the subject's project scope."""
    scope = next((s for s in subject.scopes if s.startswith("project:")), None)
    if scope is None:
        return []
    return [
        fact_item(
            fact_id=f"f_{i}",
            text=f"fact {i} about {query or 'the repository'}",
            scope=scope,
            status="suspect" if i == 3 else "live",
            confidence=round(0.95 - i / 50, 2),
        )
        for i in range(12)
    ]


class World:
    """An app with a fixed clock, three stored runs, two live runs and a facts source."""

    def __init__(self, app: App, provider: Any = None) -> None:
        self.app = app
        self.clock = Clock(1_900_000_000.0)
        self.runs = RunsService(
            store=app.store, settings=lambda: app.config.current, clock=self.clock
        )
        app.memory.add_run_listener(self.runs.on_run_stored)
        self.memory: MemoryService = app.memory
        if provider is not None:
            self.memory = MemoryService(
                store=app.store, settings=lambda: app.config.current, provider=provider
            )
        self.nonces: Iterator[str] | None = None
        self.briefings = BriefingService(
            memory=self.memory,
            runs=self.runs,
            settings=lambda: app.config.current,
            facts=facts_for,
            new_nonce=self._nonce,
        )
        for i, branch in enumerate(("main", "main", "dev")):
            app.memory.ingest_run(
                make_record(
                    run_id=f"past-{i}",
                    started_at=f"2026-11-2{i}T08:00:00Z",
                    ended_at=f"2026-11-2{i}T09:00:00Z",
                    sessions=[session(branch=branch, edits=("billing/ledger.py",))],
                )
            )
        self.me = self.runs.open_run("api-fixer", repo=API, branch="main", run_id="me")
        self.runs.touch(self.me.token, ["billing/ledger.py"])
        other = self.runs.open_run("codex", repo=API, branch="main", run_id="other")
        self.runs.touch(other.token, ["billing/ledger.py", "tests/test_ledger.py"])

    def _nonce(self) -> str:
        if self.nonces is not None:
            found = next(self.nonces, None)
            if found is not None:
                return found
        return secrets.token_hex(16)

    def caller_subject(self) -> Subject:
        return subject_of(self.runs.resolve_caller(self.me.token))


@pytest.fixture
def world(make_app: Callable[..., App]) -> World:
    return World(make_app(CONFIG))


def test_a_callers_briefing_has_every_section_from_the_stores(world: World) -> None:
    composed = world.briefings.briefing(world.caller_subject())
    doc, _ = parse(composed.text)
    assert [s.name for s in doc.sections] == ["collisions", "recent_runs", "facts", "episodes"]
    assert composed.chars <= 4000 and composed.size_bytes <= 4096
    collisions = doc.section("collisions")
    assert collisions is not None
    assert [(i.get("run"), i.get("collision")) for i in collisions.items] == [("other", "files")]
    assert "billing/ledger.py" in collisions.items[0].text
    recent = doc.section("recent_runs")
    assert recent is not None
    assert [i.get("run") for i in recent.items] == ["past-1", "past-0"]  # branch main only
    facts = doc.section("facts")
    assert facts is not None and len(facts.items) + facts.omitted == 12
    assert facts.items[0].get("id") == "f_0" and all(i.untrusted for i in facts.items)
    episodes = doc.section("episodes")
    assert episodes is not None
    assert (dict(episodes.attrs)["repo"], dict(episodes.attrs)["provider"]) == (API, "builtin")
    assert len(episodes.items) + episodes.omitted >= 1
    assert composed.ids("facts") == tuple(str(i.get("id")) for i in facts.items)


def test_the_operator_preview_is_the_document_the_agent_gets(world: World) -> None:
    n = secrets.token_hex(16)
    world.nonces = iter([n, n])
    agent_view = world.briefings.briefing(world.caller_subject())
    preview = world.briefings.preview("api-fixer")
    assert preview.text == agent_view.text


def test_preview_subjects(world: World) -> None:
    by_repo = world.briefings.preview_subject("codex", repo=API, branch="main")
    assert (by_repo.repo, by_repo.run_id, by_repo.scopes) == (API, None, (f"project:{API}",))
    live = world.briefings.preview_subject("codex")
    assert (live.run_id, live.repo, live.files) == (
        "other",
        API,
        ("billing/ledger.py", "tests/test_ledger.py"),
    )
    world.clock.now += 3600  # every live run expired: fall back to the latest stored run
    stored = world.briefings.preview_subject("api-fixer")
    assert (stored.repo, stored.run_id) == (API, None)
    nobody = world.briefings.preview_subject("never-ran")
    assert nobody.repo is None and world.briefings.preview("never-ran").text == ""


def test_outside_a_repository_the_briefing_is_empty(world: World) -> None:
    subject = Subject(agent="api-fixer", repo=None, branch=None, scopes=("agent:api-fixer",))
    assert world.briefings.briefing(subject).text == ""


def test_without_the_provider_the_briefing_is_deterministic(make_app: Callable[..., App]) -> None:
    dead = ScriptedProvider(fail=True)
    world = World(make_app(CONFIG), provider=dead)
    n = secrets.token_hex(16)
    world.nonces = iter([n, n])
    first = world.briefings.briefing(world.caller_subject())
    second = world.briefings.briefing(world.caller_subject())
    assert first.text == second.text
    expected = f'<episodes repo="{API}" provider="scripted" degraded="provider_unavailable"/>'
    assert expected in first.text
    assert first.degraded == "provider_unavailable"
    third = world.briefings.briefing(world.caller_subject())  # a fresh nonce
    assert third.nonce is not None and third.text.replace(third.nonce, n) == first.text


def test_a_failing_facts_source_costs_only_the_facts(world: World) -> None:
    def broken(subject: Subject, query: str | None, limit: int) -> Sequence[Item]:
        raise RuntimeError("facts store is locked")

    world.briefings.set_facts_source(broken)
    composed = world.briefings.briefing(world.caller_subject())
    assert "<facts/>" in composed.text and "<collisions>" in composed.text
    world.briefings.set_facts_source(None)
    assert "<facts/>" in world.briefings.briefing(world.caller_subject()).text


def test_a_nonce_found_in_the_content_is_replaced(world: World) -> None:
    n = secrets.token_hex(16)
    fresh = secrets.token_hex(16)

    def leaky(subject: Subject, query: str | None, limit: int) -> Sequence[Item]:
        return [fact_item(fact_id="f_x", text=f"I guessed {n}", scope=f"project:{API}")]

    world.briefings.set_facts_source(leaky)
    world.nonces = iter([n, fresh])
    composed = world.briefings.briefing(world.caller_subject())
    assert composed.nonce == fresh and parse(composed.text)[1] == fresh


# ---- recall ------------------------------------------------------------------------------------
def test_recall_for_a_caller_has_three_labelled_sections(world: World) -> None:
    composed = world.briefings.recall(
        world.caller_subject(), "ledger settlement fixture", paths=["billing/ledger.py"], limit=5
    )
    doc, _ = parse(composed.text)
    assert [s.name for s in doc.sections] == ["facts", "episodes", "recent_runs"]
    facts, episodes, runs = doc.sections
    assert len(facts.items) == 5 and facts.items[0].text == "fact 0 about ledger settlement fixture"
    assert episodes.items and all(i.kind == "episode" and i.untrusted for i in episodes.items)
    assert {i.get("provider") for i in episodes.items} == {"builtin"}
    assert [i.get("run") for i in runs.items] == ["past-2", "past-1", "past-0"]
    assert composed.size_bytes <= RECALL_MAX_BYTES and composed.truncated == 0


def test_recall_without_paths_has_no_recent_runs(world: World) -> None:
    composed = world.briefings.recall(world.caller_subject(), "ledger")
    assert parse(composed.text)[0].sections[2].items == ()


def test_an_unattributed_caller_gets_no_episodes_and_the_provider_is_not_asked(
    make_app: Callable[..., App],
) -> None:
    spy = ScriptedProvider()
    world = World(make_app(CONFIG), provider=spy)
    with pytest.raises(NotAttributed):
        world.runs.resolve_caller(None)
    nobody = Subject(agent="unknown", repo=None, branch=None, scopes=())
    composed = world.briefings.recall(nobody, "ledger", paths=["billing/ledger.py"])
    doc, _ = parse(composed.text)
    assert doc.sections[1].items == () and doc.sections[2].items == ()
    assert spy.recalls == 0
    with pytest.raises(InvalidInput):
        world.briefings.recall(nobody, "x" * 513)


def test_recall_carries_a_degraded_provider(make_app: Callable[..., App]) -> None:
    world = World(make_app(CONFIG), provider=ScriptedProvider(fail=True))
    composed = world.briefings.recall(world.caller_subject(), "ledger")
    doc, _ = parse(composed.text)
    assert dict(doc.attrs)["degraded"] == "provider_unavailable"
    assert doc.sections[0].items  # facts still answer


# ---- metrics -----------------------------------------------------------------------------------
def test_deliveries_are_counted_with_a_bounded_agent_label(world: World) -> None:
    composed = world.briefings.briefing(world.caller_subject())

    def count(agent: str, delivery: str, outcome: str) -> float:
        labels = {"agent": agent, "delivery": delivery, "outcome": outcome}
        return metrics.sample("fleetmem_briefings_total", labels)

    before = count("api-fixer", "tool", "ok")
    world.briefings.count_delivery("api-fixer", "tool", composed)
    assert count("api-fixer", "tool", "ok") == before + 1
    assert metrics.sample("fleetmem_briefing_bytes", {"agent": "api-fixer"}) == (
        composed.size_bytes
    )
    before_other = count("other", "resource", "skipped")
    world.briefings.count_delivery("undeclared-agent", "resource", None)
    assert count("other", "resource", "skipped") == before_other + 1
    with pytest.raises(InvalidInput):
        world.briefings.count_delivery("api-fixer", "preview", composed)
