"""Vector feedback (pseudo-relevance feedback) in the built-in provider, with the real model."""

from __future__ import annotations

from collections.abc import Callable

from fleetmem.embed.local import LocalMiniLM
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

API = "project:github.com/acme/api"
TEXTS = (
    "the ledger reconciliation test fails at midnight rollover",
    "pinned the clock in the ledger test so reconciliation is stable",
    "settlement fixture writes rows in the local timezone",
    "bumped the linter version in the pre-commit hooks",
)


def test_feedback_stays_in_scope_and_changes_only_the_order(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    model = LocalMiniLM()
    ids: dict[str, str] = {}
    for n, text in enumerate(TEXTS):
        for repo in ("github.com/acme/api", "github.com/acme/web"):
            record = make_record(
                run_id=f"run-{repo[-3:]}-{n}",
                result_text=text,
                sessions=[session(repo=repo)],
                started_at=f"2026-11-28T0{n}:00:00Z",
                ended_at=f"2026-11-28T0{n}:10:00Z",
            )
            episode_id = app.memory.ingest_run(record).episode_id
            assert episode_id is not None
            ids[episode_id] = repo
    plain = BuiltinProvider(app.store, model, RankingOptions())
    feedback = BuiltinProvider(app.store, model, RankingOptions(feedback_items=2))
    for provider in (plain, feedback):
        for row_id in ids:
            row = app.store.get_episode(row_id)
            assert row is not None and row.episode is not None and row.text is not None
            provider.record(row_id, row.scope, row.trust_class, row.episode, row.text)
    query = "why is the reconciliation flaky around midnight"
    without = plain.recall(query, [API], 8, [])
    with_feedback = feedback.recall(query, [API], 8, [])
    assert with_feedback.degraded is None
    found = [item.id for item in with_feedback.items]
    assert found and all(ids[i] == "github.com/acme/api" for i in found)
    # Feedback adds a channel over the same scope: it may reorder, never widen the scope.
    assert set(found) <= {i for i, repo in ids.items() if repo == "github.com/acme/api"}
    assert found[0] == without.items[0].id  # the clear best match stays first
