"""Facts served to runs: the facts block (seed 003 FR-19 to FR-24, NFR-2), recall answers,
exposure records with withhold-on-failure, and votes (seed 000 REQ-12, REQ-14, REQ-17)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from fleetmem import metrics
from fleetmem.core.facts import (
    BLOCK_HEADER,
    BLOCK_TOKEN_CAP,
    NOTHING_ELSE_MATCHED,
    NOTHING_MATCHED,
)
from fleetmem.errors import InvalidInput, UnknownFact
from fleetmem.service.bootstrap import App
from fleetmem.service.facts import FactService
from fleetmem.store.facts import FactRow
from fleetmem.tokenize import get_tokenizer
from tests.conftest import allow_inserts, fail_inserts
from tests.facts.conftest import ALICE, API, VECTORS_OFF, WEB, Clock
from tests.fakes.openai_server import FakeOpenAI


def add(facts: FactService, clock: Clock, body: str, **kw: object) -> FactRow:
    clock.advance(1.0)
    return facts.add(body, actor=ALICE, **kw).fact  # type: ignore[arg-type]


def block(facts: FactService, run: str, agent: str = "api-fixer", **kw: object):  # type: ignore[no-untyped-def]
    result = facts.facts_block(run_id=run, agent=agent, repo=kw.pop("repo", API), **kw)  # type: ignore[arg-type]
    assert result is not None
    return result


def fake_config(server: FakeOpenAI, extra: str = "") -> str:
    return f'[model_api]\nbase_url = "{server.base_url}"\nembedding_model = "fake-embed"\n' + extra


# ---- the block -----------------------------------------------------------------------------------
def test_pinned_first_then_recalled_with_an_explicit_line(facts: FactService, clock: Clock) -> None:
    empty = block(facts, "run-0")
    assert empty.status == "ok" and empty.nothing_matched
    assert empty.text == f"{BLOCK_HEADER}\n{NOTHING_MATCHED}"
    pinned = add(facts, clock, "Never force-push to main.", pin=True, kind="constraint")
    only_pinned = block(facts, "run-1")
    assert [i.fact_id for i in only_pinned.items] == [pinned.id]
    assert only_pinned.text.endswith(NOTHING_ELSE_MATCHED)
    recent = add(facts, clock, "Use Decimal for money.")
    full = block(facts, "run-2")
    assert [i.fact_id for i in full.items] == [pinned.id, recent.id]
    assert (full.pinned, full.recalled, full.nothing_matched) == (1, 1, False)
    assert full.text.splitlines()[1].startswith("- Never force-push to main. (pinned constraint")


def test_at_most_8_recalled_newest_and_most_confident_first(
    facts: FactService, clock: Clock
) -> None:
    ids = [add(facts, clock, f"Rule {i}: keep the {i}th module small.").id for i in range(12)]
    b = block(facts, "run-1")
    # Without a query: confidence, then recency, then id (seed 000 REQ-14).
    assert [i.fact_id for i in b.items] == ids[::-1][:8]
    assert (b.recalled, b.dropped) == (8, 0)


def test_the_block_is_capped_at_1200_tokens_dropping_whole_facts(
    facts: FactService, clock: Clock
) -> None:
    # Numbers cost more tokens per character than prose, so eleven bodies overflow the cap.
    long = "Ports 8081, 9443 and 7001 stay closed on 10.2.3.4 so the block overflows its cap. " * 6
    pinned = [add(facts, clock, f"P{i}. {long}"[:480], pin=True).id for i in range(3)]
    recalled = [add(facts, clock, f"R{i}. {long}"[:480]).id for i in range(8)]
    b = block(facts, "run-1")
    assert b.tokens <= BLOCK_TOKEN_CAP and get_tokenizer().count(b.text) == b.tokens
    shown = [i.fact_id for i in b.items]
    assert shown[:3] == pinned
    kept = len(shown) - 3
    assert 0 < kept < 8 and b.dropped == 8 - kept
    # Dropped from the lowest score: the oldest recalled facts went first, never cut in half.
    assert shown[3:] == recalled[::-1][:kept]
    assert all(f"{i.body} (" in b.text for i in b.items)
    assert "left out to stay within 1,200 tokens" in b.text


def test_only_active_facts_are_instructions(facts: FactService, clock: Clock) -> None:
    statuses = {}
    for action in ("evidence", "restrict", "stale"):
        f = add(facts, clock, f"A fact to {action}.")
        facts.review(f.id, action, actor=ALICE)
        statuses[f.id] = action
    active = add(facts, clock, "The only active fact.")
    proposal = facts.propose("A proposal.", agent="triage", run_id="r").fact
    assert proposal is not None
    assert [i.fact_id for i in block(facts, "run-1").items] == [active.id]


def test_recall_off_means_no_block_and_no_exposure(
    make_facts: Callable[..., tuple[App, FactService]], clock: Clock
) -> None:
    _, facts = make_facts(VECTORS_OFF + "[agent.quiet]\nmemory_recall = false\n")
    add(facts, clock, "Something everyone should know.")
    assert facts.facts_block(run_id="run-1", agent="quiet", repo=API) is None
    assert facts.offered_to_run("run-1") == []
    assert block(facts, "run-2", agent="loud").recalled == 1


def test_every_fact_served_is_an_exposure_and_the_trace_is_queryable(
    facts: FactService, clock: Clock
) -> None:
    a = add(facts, clock, "First fact.", pin=True)
    b = add(facts, clock, "Second fact.")
    served = block(facts, "run-1", surface="prompt", call_id=None)
    offered = facts.offered_to_run("run-1")
    assert [(e.fact_id, e.surface, e.served_as, e.agent, e.repo) for e in offered] == [
        (a.id, "prompt", "instruction", "api-fixer", API),
        (b.id, "prompt", "instruction", "api-fixer", API),
    ]
    assert [i.fact_id for i in served.items] == [e.fact_id for e in offered]
    assert facts.offered_to_run("run-2") == []


def test_a_fact_is_withheld_when_its_exposure_cannot_be_written(
    facts: FactService, clock: Clock
) -> None:
    add(facts, clock, "A fact that must be traced.")
    fail_inserts(facts.store, "fact_exposures")
    before = metrics.sample("fleetmem_facts_withheld_total", {"surface": "briefing"})
    withheld = block(facts, "run-1")
    assert (withheld.status, withheld.items, withheld.text, withheld.withheld) == (
        "withheld",
        (),
        "",
        1,
    )
    assert metrics.sample("fleetmem_facts_withheld_total", {"surface": "briefing"}) == before + 1
    recall = facts.recall_for_run("traced", run_id="run-1", agent="api-fixer", repo=API)
    assert (recall.items, recall.withheld) == ((), 1)
    assert (
        facts.serve_to_run(
            [r.id for r in facts.list().items], run_id="run-1", agent="api-fixer", repo=API
        )
        == ()
    )
    assert facts.offered_to_run("run-1") == []
    allow_inserts(facts.store, "fact_exposures")
    assert block(facts, "run-1").status == "ok"


def test_a_slow_embedder_costs_the_block_not_the_run(
    make_facts: Callable[..., tuple[App, FactService]],
    clock: Clock,
    fake_openai: FakeOpenAI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, facts = make_facts(fake_config(fake_openai, '[memory.facts]\nrecall_timeout = "300ms"\n'))
    add(facts, clock, "The ledger fixture needs a pinned clock.")
    fake_openai.slow_s = 3.0
    fake_openai.mode = "slow"
    started = time.monotonic()
    result = block(facts, "run-1", query="ledger fixture clock")
    assert time.monotonic() - started < 1.5
    assert (result.status, result.text, result.items) == ("timed_out", "", ())
    assert any("facts.block_timeout run=run-1" in r.message for r in caplog.records)
    fake_openai.mode = "ok"


def test_a_query_recalls_by_meaning_above_the_recall_threshold(
    make_facts: Callable[..., tuple[App, FactService]], clock: Clock, fake_openai: FakeOpenAI
) -> None:
    config = fake_config(fake_openai, '[memory.facts.thresholds."fake-embed"]\nrecall = 0.3\n')
    _, facts = make_facts(config)
    assert facts.thresholds().recall == 0.3 and facts.thresholds().search == 0.55
    near = add(facts, clock, "The ledger fixture needs a pinned clock.")
    add(facts, clock, "Dashboards use dark mode.")
    b = block(facts, "run-1", query="why does the ledger fixture fail")
    assert [i.fact_id for i in b.items] == [near.id] and b.degraded is None


def test_without_an_embedder_a_query_recalls_nothing_but_says_so(
    facts: FactService, clock: Clock
) -> None:
    pinned = add(facts, clock, "Pinned anyway.", pin=True)
    add(facts, clock, "The ledger fixture needs a pinned clock.")
    b = block(facts, "run-1", query="ledger fixture")
    assert [i.fact_id for i in b.items] == [pinned.id]
    assert b.nothing_matched and b.degraded == "embeddings_unavailable"


# ---- recall answers ------------------------------------------------------------------------------
def test_recall_serves_live_and_suspect_facts_labelled(facts: FactService, clock: Clock) -> None:
    active = add(facts, clock, "Deploy the api on Tuesdays.")
    evidence = add(facts, clock, "A deploy once failed on a Friday.")
    facts.review(evidence.id, "evidence", actor=ALICE)
    for action in ("restrict", "stale"):
        f = add(facts, clock, f"Deploy rule to {action}.")
        facts.review(f.id, action, actor=ALICE)
    gone = add(facts, clock, "Deploy from laptops.")
    facts.forget(gone.id, actor=ALICE)
    facts.propose("Deploy whenever.", agent="triage", run_id="r")
    other = add(facts, clock, "Deploy the web app daily.", scope=f"project:{WEB}")
    result = facts.recall_for_run("deploy", run_id="run-1", agent="api-fixer", repo=API)
    assert {(i.fact.id, i.served_as) for i in result.items} == {
        (active.id, "instruction"),
        (evidence.id, "data"),
    }
    assert result.degraded == "embeddings_unavailable"
    assert other.id not in {e.fact_id for e in facts.offered_to_run("run-1")}
    assert {(e.fact_id, e.surface, e.served_as) for e in facts.offered_to_run("run-1")} == {
        (active.id, "recall", "instruction"),
        (evidence.id, "recall", "data"),
    }
    with pytest.raises(InvalidInput):
        facts.recall_for_run("", run_id="run-1", agent="api-fixer")
    with pytest.raises(InvalidInput):
        facts.recall_for_run("deploy", run_id="run-1", agent="api-fixer", surface="email")


def test_serve_to_run_records_only_what_may_be_shown(facts: FactService, clock: Clock) -> None:
    shown = add(facts, clock, "Shown.")
    hidden = add(facts, clock, "Restricted.")
    facts.review(hidden.id, "restrict", actor=ALICE)
    elsewhere = add(facts, clock, "Another agent's.", scope="agent:reviewer")
    ids = facts.serve_to_run(
        [shown.id, hidden.id, elsewhere.id, "f_nope", shown.id],
        run_id="run-1",
        agent="api-fixer",
        repo=API,
        surface="resource",
    )
    assert ids == (shown.id,)
    assert [(e.fact_id, e.surface) for e in facts.offered_to_run("run-1")] == [
        (shown.id, "resource")
    ]
    preview = facts.select_for_run(agent="api-fixer", repo=API)
    assert [i.fact_id for i in preview] == [shown.id]
    assert len(facts.offered_to_run("run-1")) == 1  # a preview is not an exposure


# ---- votes ---------------------------------------------------------------------------------------
def vote(facts: FactService, run: str, fact: FactRow, stance: str = "support", **kw: str):  # type: ignore[no-untyped-def]
    return facts.vote(
        run_id=run,
        agent=kw.get("agent", "api-fixer"),
        repo=kw.get("repo", API),
        fact_id=fact.id,
        stance=stance,
    )


def test_a_run_shown_a_fact_cannot_corroborate_it(facts: FactService, clock: Clock) -> None:
    fact = add(facts, clock, "Pin the clock in ledger tests.")
    block(facts, "run-seen")
    seen = vote(facts, "run-seen", fact)
    assert (seen.vote.counted, seen.vote.reason) == (False, "exposed")
    fresh = vote(facts, "run-fresh", fact, agent="reviewer")
    assert (fresh.vote.counted, fresh.vote.reason) == (True, "independent")
    assert fresh.confidence > seen.confidence
    repeat = vote(facts, "run-fresh", fact, "contradict")
    assert repeat.duplicate and repeat.vote.stance == "support"
    # Shown after voting: the vote stops counting.
    block(facts, "run-fresh")
    summary = facts.votes(fact.id)
    assert [(v.run_id, v.counted, v.reason) for v in summary.votes] == [
        ("run-seen", False, "exposed"),
        ("run-fresh", False, "exposed"),
    ]
    assert summary.support.runs == 0


def test_the_writing_run_cannot_vote_for_its_own_fact(facts: FactService) -> None:
    fact = facts.propose("Vendor the fonts.", agent="docs-bot", run_id="run-w").fact
    assert fact is not None
    own = vote(facts, "run-w", fact, agent="docs-bot")
    assert (own.vote.counted, own.vote.reason) == (False, "author_run")


def test_confidence_counts_distinct_runs_agents_and_repositories(
    facts: FactService, clock: Clock
) -> None:
    a = add(facts, clock, "Fact a.")
    b = add(facts, clock, "Fact b.")
    for i in range(4):  # four runs of one agent in one repository
        vote(facts, f"a-{i}", a)
    for i, (agent, repo) in enumerate(
        [("api-fixer", API), ("reviewer", WEB), ("triage", API), ("docs-bot", WEB)]
    ):
        vote(facts, f"b-{i}", b, agent=agent, repo=repo)
    da, db = facts.get(a.id), facts.get(b.id)
    assert (da.support.runs, da.support.agents, da.support.repos) == (4, 1, 1)
    assert (db.support.runs, db.support.agents, db.support.repos) == (4, 4, 2)
    assert db.confidence > da.confidence > facts.get(add(facts, clock, "c.").id).confidence


def test_counted_contradictions_make_an_active_fact_suspect(
    facts: FactService, clock: Clock
) -> None:
    fact = add(facts, clock, "The sandbox resets at midnight UTC.")
    results = [
        vote(facts, f"run-{i}", fact, "contradict", agent=agent)
        for i, agent in enumerate(["api-fixer", "reviewer", "triage"])
    ]
    assert [r.status_change for r in results] == [None, None, "active->suspect"]
    suspect = facts.get(fact.id).fact
    assert suspect.status == "suspect"
    assert block(facts, "run-x").items == ()  # never an instruction while suspect
    recall = facts.recall_for_run("sandbox", run_id="run-x", agent="api-fixer", repo=API)
    assert [(i.fact.status, i.served_as) for i in recall.items] == [("suspect", "data")]
    journal = facts.store.fact_journal(facts.workspace, fact.id)
    assert (journal[-1].action, journal[-1].actor_kind) == ("suspect", "system")
    # A person confirms it: active again, and only newer contradictions count.
    clock.advance(10)
    facts.review(fact.id, "confirm", actor=ALICE)
    assert vote(facts, "run-9", fact, "contradict", agent="docs-bot").status_change is None
    assert facts.get(fact.id).fact.status == "active"


def test_promotion_stays_human_by_default(facts: FactService) -> None:
    fact = facts.propose("Use pnpm.", agent="triage", run_id="r0").fact
    assert fact is not None
    for i, agent in enumerate(["api-fixer", "reviewer", "docs-bot", "migrator"]):
        assert vote(facts, f"run-{i}", fact, agent=agent).status_change is None
    assert facts.get(fact.id).fact.status == "proposed"


def test_opt_in_corroboration_promotes_a_well_supported_proposal(
    make_facts: Callable[..., tuple[App, FactService]],
) -> None:
    _, facts = make_facts(VECTORS_OFF + '[memory.facts]\npromotion = "corroboration"\n')
    fact = facts.propose("Use pnpm.", agent="triage", run_id="r0").fact
    assert fact is not None
    changes = [
        vote(facts, f"run-{i}", fact, agent=agent).status_change
        for i, agent in enumerate(["api-fixer", "api-fixer", "reviewer"])
    ]
    assert changes == [None, None, "proposed->active"]
    promoted = facts.get(fact.id)
    assert promoted.fact.status == "active" and promoted.fact.confirmed_at is None
    assert facts.store.fact_journal(facts.workspace, fact.id)[-1].action == "promote"
    contested = facts.propose("Use yarn.", agent="triage", run_id="r1").fact
    assert contested is not None
    vote(facts, "c-0", contested, "contradict", agent="docs-bot")
    for i, agent in enumerate(["api-fixer", "reviewer", "migrator"]):
        vote(facts, f"s-{i}", contested, agent=agent)
    assert facts.get(contested.id).fact.status == "proposed"


def test_votes_need_a_live_fact_and_a_stance(facts: FactService, clock: Clock) -> None:
    fact = add(facts, clock, "Vote on me.")
    with pytest.raises(InvalidInput):
        vote(facts, "r", fact, "maybe")
    with pytest.raises(InvalidInput):
        facts.vote(run_id="", agent="a", repo=None, fact_id=fact.id, stance="support")
    elsewhere = add(facts, clock, "Only the reviewer sees this.", scope="agent:reviewer")
    with pytest.raises(UnknownFact):
        vote(facts, "r", elsewhere)  # agent api-fixer cannot see it
    assert vote(facts, "r2", elsewhere, agent="reviewer").vote.counted
    facts.forget(fact.id, actor=ALICE)
    with pytest.raises(UnknownFact):
        vote(facts, "r", fact)
