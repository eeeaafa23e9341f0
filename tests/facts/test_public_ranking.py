"""The fact service's public ranking (``rank_servable``, ``confidence_of``): what other services
use to rank facts without writing exposure, instead of reaching into private members."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.service.facts import FactService
from tests.facts.conftest import ALICE, API, Clock

SRC = Path(__file__).resolve().parents[2] / "src" / "fleetmem"


def test_rank_servable_ranks_like_recall_and_writes_no_exposure(
    facts: FactService, clock: Clock
) -> None:
    for body in (
        "The ledger tests need a pinned clock.",
        "Ledger exports run nightly at two.",
        "Never force-push to main.",
    ):
        clock.advance(1.0)
        facts.add(body, actor=ALICE)
    clock.advance(1.0)
    evidence = facts.add("The ledger once lost a day to a time zone bug.", actor=ALICE).fact
    assert evidence is not None
    facts.review(evidence.id, "evidence", actor=ALICE)
    ranked, degraded = facts.rank_servable("ledger", scopes=["workspace"], limit=5)
    assert degraded == "embeddings_unavailable"  # vectors are off in this store
    assert {r.fact.id for r in ranked} == {
        f.id for f in facts.list().items if "ledger" in f.body.lower()
    }
    assert {r.served_as for r in ranked} == {"instruction", "data"}
    assert all(0.0 < r.confidence <= 1.0 for r in ranked)
    assert facts.store.fact_exposures(facts.workspace) == []
    recalled = facts.recall_for_run("ledger", run_id="run-1", agent="api-fixer", repo=API)
    assert [r.fact.id for r in recalled.items] == [r.fact.id for r in ranked]
    assert len(facts.offered_to_run("run-1")) == len(ranked)


def test_rank_servable_refuses_bad_input_naming_the_field(facts: FactService) -> None:
    with pytest.raises(InvalidInput, match="query"):
        facts.rank_servable("  ", scopes=["workspace"])
    with pytest.raises(InvalidInput, match="limit"):
        facts.rank_servable("x", scopes=["workspace"], limit=0)
    with pytest.raises(InvalidInput, match="scope"):
        facts.rank_servable("x", scopes=["team:core"])
    assert facts.rank_servable("x", scopes=[]) == ([], None)


def test_confidence_of_reads_the_tallies_when_not_given(facts: FactService, clock: Clock) -> None:
    clock.advance(1.0)
    fact = facts.add("Deploy on Tuesdays.", actor=ALICE).fact
    assert fact is not None
    before = facts.confidence_of(fact)
    facts.vote(run_id="run-9", agent="api-fixer", repo=API, fact_id=fact.id, stance="contradict")
    after = facts.confidence_of(fact)
    assert after < before
    assert facts.get(fact.id).confidence == after


def _private_uses_of_facts(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        owner = ast.unparse(node.value)
        # ``facts``, ``self._facts``, ``app.facts``: the fact service by any of its names.
        if owner.split(".")[-1].lstrip("_") == "facts" and not node.attr.startswith("__"):
            found.append(f"{path.relative_to(SRC)}:{node.lineno} {owner}.{node.attr}")
    return found


def test_no_module_outside_the_fact_service_uses_its_private_members() -> None:
    own = {"facts.py", "fact_base.py", "fact_reads.py", "fact_runs.py", "fact_results.py"}
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.parent.name == "service" and path.name in own:
            continue
        offenders += _private_uses_of_facts(path)
    assert offenders == []
