"""A hypothesis state machine over the real FactService and SQLite store.

Random sequences of writes, proposals, edits, reviews, merges, pins, forgets, restores,
forget-alls, serving to runs, votes, time passing and purges. After every step:

* nothing proposed, rejected, stale, restricted, merged or forgotten was ever served, and
  only active facts were served as instructions;
* no counted vote comes from a run that was exposed to the fact;
* the caps hold (small caps here, so they are actually reached);
* the journal grew by exactly one row per changed fact (creates, purges and merge targets
  included), and every journalled status change is an allowed transition.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from fleetmem.config import ConfigHolder
from fleetmem.core.facts import (
    INSTRUCTION,
    KEPT,
    LIVE,
    REVIEW_ACTIONS,
    SERVABLE,
    Actor,
)
from fleetmem.errors import (
    CapReached,
    DuplicateFact,
    InvalidInput,
    InvalidTransition,
    UnknownFact,
)
from fleetmem.service.fact_base import Limits
from fleetmem.service.facts import FactService
from fleetmem.store.base import Store
from fleetmem.store.sqlite.store import SqliteStore
from tests import store_kinds
from tests.facts.conftest import Clock

PERSON = Actor("human", "alice")
BODIES = [
    "Never force-push to main.",
    "never force-push to main!",
    "Use Decimal for money.",
    "Deploys are frozen on Fridays.",
    "Pin the clock in ledger tests.",
    "Run migrations from one job.",
    "Review comments that are optional start with nit.",
    "Staging resets on Sundays.",
]
SCOPES = ["workspace", "project:github.com/acme/api", "agent:api-fixer"]
AGENTS = ["api-fixer", "reviewer", "triage"]
REPOS = ["github.com/acme/api", "github.com/acme/web", None]
LIMITS = Limits(kept=6, proposed=4, pinned=2)
ALLOWED = {
    "create": ({None}, {"active"}),
    "propose": ({None}, {"proposed"}),
    "forget": (set(LIVE), {"forgotten"}),
    "restore": ({"forgotten"}, set(LIVE)),
    "suspect": ({"active"}, {"suspect"}),
    "promote": ({"proposed"}, {"active"}),
    "merge": (set(LIVE), {"merged"}),
    "purge": ({"forgotten", "rejected"}, {None}),
}
EXPECTED = (CapReached, DuplicateFact, InvalidTransition, InvalidInput, UnknownFact)


class FactMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        home = Path(self.dir.name)
        (home / "fleetmem.toml").write_text(
            '[model_api]\nembedding_model = ""\n[memory.facts]\npromotion = "corroboration"\n'
            'corroboration_runs = 2\nsuspect_contradictions = 2\nrecall_timeout = "10s"\n',
            encoding="utf-8",
        )
        self.config = ConfigHolder(home)
        self.store = self._open_store(home)
        self.clock = Clock()
        counter = itertools.count(1)
        self.facts = FactService(
            store=self.store,
            settings=lambda: self.config.current,
            embedder=None,
            clock=self.clock,
            new_id=lambda: f"f_{next(counter):04d}",
            limits=LIMITS,
        )
        self.runs = itertools.count(1)
        self.journal_len = 0
        self.state = self._state()

    def _open_store(self, home: Path) -> Store:
        return SqliteStore(home / "fleetmem.db")

    def teardown(self) -> None:
        self.facts.close()
        self.store.close()
        self.dir.cleanup()

    # ---- helpers --------------------------------------------------------------------------
    def _state(self) -> dict[str, tuple[Any, ...]]:
        rows = self.store.fact_candidates(
            self.facts.workspace, sorted(set(LIVE) | {"forgotten", "rejected", "merged"}), None
        )
        return {
            r.id: (
                r.status,
                r.pinned,
                r.revision,
                r.merged_into,
                len(self.store.fact_provenance(r.id)),
            )
            for r in rows
        }

    def _ids(self, data: st.DataObject) -> str:
        ids = sorted(self.state) or ["f_none"]
        return data.draw(st.sampled_from([*ids, "f_none"]))

    def _step(self) -> None:
        self.clock.advance(2.0)  # 30 writes a minute at most: the rate limit never trips here

    def _call(self, fn: Any, *args: Any, **kw: Any) -> Any:
        self._step()
        try:
            return fn(*args, **kw)
        except EXPECTED:
            return None

    # ---- rules ----------------------------------------------------------------------------
    @rule(body=st.sampled_from(BODIES), scope=st.sampled_from(SCOPES), pin=st.booleans())
    def add(self, body: str, scope: str, pin: bool) -> None:
        self._call(self.facts.add, body, scope=scope, pin=pin, actor=PERSON)

    @rule(body=st.sampled_from(BODIES), agent=st.sampled_from(AGENTS))
    def propose(self, body: str, agent: str) -> None:
        self._step()
        result = self.facts.propose(body, agent=agent, run_id=f"run-{next(self.runs)}")
        assert result.outcome in ("proposed", "duplicate", "dropped", "refused")

    @rule(data=st.data(), body=st.sampled_from(BODIES))
    def edit(self, data: st.DataObject, body: str) -> None:
        self._call(self.facts.edit, self._ids(data), body, actor=PERSON)

    @rule(data=st.data(), action=st.sampled_from(sorted(set(REVIEW_ACTIONS) - {"merge"})))
    def review(self, data: st.DataObject, action: str) -> None:
        self._call(self.facts.review, self._ids(data), action, actor=PERSON)

    @rule(data=st.data())
    def merge(self, data: st.DataObject) -> None:
        self._call(self.facts.review, self._ids(data), "merge", into=self._ids(data), actor=PERSON)

    @rule(data=st.data(), on=st.booleans())
    def pin(self, data: st.DataObject, on: bool) -> None:
        method = self.facts.pin if on else self.facts.unpin
        self._call(method, self._ids(data), actor=PERSON)

    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        self._call(self.facts.forget, self._ids(data), actor=PERSON)

    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        self._call(self.facts.restore, self._ids(data), actor=PERSON)

    @rule()
    def forget_all(self) -> None:
        self.clock.advance(1300.0)  # three an hour at most
        self.facts.forget_all("FORGET ALL", actor=PERSON)

    @rule(agent=st.sampled_from(AGENTS), repo=st.sampled_from(REPOS), run=st.integers(1, 6))
    def serve_block(self, agent: str, repo: str | None, run: int) -> None:
        self._step()
        block = self.facts.facts_block(run_id=f"run-{run}", agent=agent, repo=repo)
        assert block is not None
        rows = self.store.fact_get_many(self.facts.workspace, [i.fact_id for i in block.items])
        assert all(rows[i.fact_id].status in INSTRUCTION for i in block.items)

    @rule(agent=st.sampled_from(AGENTS), run=st.integers(1, 6), query=st.sampled_from(BODIES))
    def serve_recall(self, agent: str, run: int, query: str) -> None:
        self._step()
        recall = self.facts.recall_for_run(
            query.split()[-1], run_id=f"run-{run}", agent=agent, repo=REPOS[0]
        )
        for item in recall.items:
            assert item.fact.status in SERVABLE
            assert (item.served_as == "instruction") == (item.fact.status in INSTRUCTION)

    @rule(
        data=st.data(),
        run=st.integers(1, 8),
        agent=st.sampled_from(AGENTS),
        stance=st.sampled_from(["support", "contradict"]),
    )
    def vote(self, data: st.DataObject, run: int, agent: str, stance: str) -> None:
        self._call(
            self.facts.vote,
            run_id=f"run-{run}",
            agent=agent,
            repo=REPOS[0],
            fact_id=self._ids(data),
            stance=stance,
        )

    @rule(days=st.sampled_from([1, 10, 31]))
    def time_passes_and_sweep(self, days: int) -> None:
        self.clock.advance(days * 86_400.0)
        self.facts.sweep()

    # ---- invariants -----------------------------------------------------------------------
    @invariant()
    def no_exposed_run_counts(self) -> None:
        exposed = {(e.run_id, e.fact_id) for e in self.store.fact_exposures(self.facts.workspace)}
        for fact_id in self.state:
            for v in self.store.fact_votes(self.facts.workspace, fact_id):
                if v.counted:
                    assert (v.run_id, v.fact_id) not in exposed

    @invariant()
    def caps_hold(self) -> None:
        counts = self.facts.counts()
        assert sum(counts[s] for s in KEPT) <= LIMITS.kept
        assert counts["proposed"] <= LIMITS.proposed
        assert counts["pinned"] <= LIMITS.pinned

    @invariant()
    def one_journal_row_per_change(self) -> None:
        after = self._state()
        changed = {
            fact_id
            for fact_id in set(self.state) | set(after)
            if self.state.get(fact_id) != after.get(fact_id)
        }
        journal = self.store.fact_journal(self.facts.workspace)
        new_rows = journal[self.journal_len :]
        assert sorted(r.fact_id for r in new_rows) == sorted(changed), (
            changed,
            [(r.fact_id, r.action) for r in new_rows],
        )
        for row in new_rows:
            before = None if row.before is None else row.before["status"]
            now = None if row.after is None else row.after["status"]
            if row.action in ("edit", "pin", "unpin", "merge_in"):
                assert before == now, (row.action, before, now)
                continue
            sources, targets = _allowed(row.action)
            assert before in sources and now in targets, (row.action, before, now)
        self.journal_len = len(journal)
        self.state = after


def _allowed(action: str) -> tuple[set[Any], set[Any]]:
    if action.startswith("review:"):
        sources, target = REVIEW_ACTIONS[action.split(":", 1)[1]]
        return set(sources), {target}
    return ALLOWED[action]


TestFactMachine = FactMachine.TestCase
TestFactMachine.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_the_machine_on_the_postgresql_store() -> None:
    """The same rules on the PostgreSQL store (fewer examples: each has a schema of its own)."""
    base = store_kinds.required_url()

    class OnPostgres(FactMachine):
        def _open_store(self, home: Path) -> Store:
            from fleetmem.store.postgres.store import PostgresStore

            self.schema, url = store_kinds.fresh_schema(base)
            return PostgresStore(url)

        def teardown(self) -> None:
            super().teardown()
            store_kinds.drop_schema(base, self.schema)

    run_state_machine_as_test(
        OnPostgres,
        settings=settings(
            max_examples=30,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


def test_the_machine_reaches_the_caps() -> None:
    """A sanity check that the limits above are small enough to be hit by the rules."""
    assert LIMITS.kept < len(BODIES) * len(SCOPES)
    assert LIMITS.pinned < LIMITS.kept


pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
