"""Episodes in briefings over a real store (seed 000 REQ-14): the built-in provider chooses
them, fleetmem's rows say what they were, and the default size shows more than one."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator

import pytest

from fleetmem.core.briefing import iso
from fleetmem.core.episode_brief import full_provenance
from fleetmem.core.scope import project_scope
from fleetmem.core.wrapper import Section, parse
from fleetmem.service.bootstrap import App
from fleetmem.service.briefings import BriefingService
from tests.conftest import make_record, session

API = "github.com/acme/api"
WEB = "github.com/acme/web"
BASE = '[model_api]\nembedding_model = ""\n'

PAST = [  # (branch, outcome, reason, result text, edits, failing checks)
    ("main", "failed", "verify_failed",
     "The ledger test is flaky. I pinned the clock but the settlement fixture still fails.",
     ("billing/ledger.py", "tests/test_ledger.py"), ("test_failure", "test_failure")),
    ("main", "succeeded", "completed",
     "Made reconcile() take an explicit cutoff. All billing tests pass.",
     ("billing/reconcile.py",), ()),
    ("fix/rounding", "failed", "tool_error",
     "Could not run the migrations: the database container did not start.",
     ("billing/migrations/0007.py",), ("import_error",)),
    ("main", "timed_out", "deadline",
     "Ran out of time bisecting the settlement rounding bug in billing/settlement.py.",
     ("billing/settlement.py",), ()),
    ("main", "succeeded", "completed",
     "Bumped pytest and regenerated the lockfile.", ("requirements.lock",), ()),
]  # fmt: skip


def _config(max_chars: int | None) -> str:
    if max_chars is None:
        return BASE
    return BASE + f"[agent.api-fixer]\nbriefing_max_chars = {max_chars}\n"


def _fill(app: App) -> None:
    for i, (branch, outcome, reason, text, edits, failures) in enumerate(PAST):
        app.memory.ingest_run(
            make_record(
                run_id=f"run-api-{i}",
                started_at=f"2026-11-2{i}T08:00:00Z",
                ended_at=f"2026-11-2{i}T08:40:00Z",
                outcome=outcome,
                reason=reason,
                result_text=text,
                sessions=[session(branch=branch, edits=edits, failures=failures)],
            )
        )
    # Another repository's episode, worded to match the same query: never in an api briefing.
    app.memory.ingest_run(
        make_record(
            run_id="run-web-0",
            started_at="2026-11-28T08:00:00Z",
            ended_at="2026-11-28T08:30:00Z",
            result_text="github.com/acme/api main api-fixer ledger settlement billing",
            sessions=[session(repo=WEB, cwd="/home/dev/src/web", edits=("src/cart.ts",))],
        )
    )
    for text in (
        "The settlement fixture writes rows in local time.",
        "Ledger amounts are Decimal, never float.",
        "Run the billing tests with --tz=UTC or the rounding cases fail.",
        "Migrations must be reversible; CI runs the down step.",
        "The payments sandbox rejects cards issued after 2025 in test mode.",
    ):
        app.facts.add(text, scope=project_scope(API))


@pytest.fixture
def store(make_app: Callable[..., App]) -> Iterator[Callable[[int | None], App]]:
    """A store with five api episodes, one web episode and five api facts; each call opens
    an app over it with the given ``briefing_max_chars`` (None: the default)."""
    _fill(make_app(_config(None)))

    def open_with(max_chars: int | None) -> App:
        return make_app(_config(max_chars))

    yield open_with


def _episodes(text: str) -> Section:
    section = parse(text)[0].section("episodes")
    assert section is not None
    return section


def test_the_default_briefing_shows_episodes_made_from_fleetmems_rows(
    store: Callable[[int | None], App],
) -> None:
    app = store(None)
    composed = app.briefings.preview("api-fixer", repo=API, branch="main")
    assert composed.chars <= 2000 and composed.size_bytes <= 4096
    section = _episodes(composed.text)
    assert len(section.items) >= 2 and section.omitted == 3 - len(section.items)
    assert composed.shown["facts"] >= 1 and composed.shown["recent_runs"] >= 1
    for item in section.items:
        row = app.memory.get_episode(str(item.get("id")))
        expected = {
            "id": row.id,
            "run": row.run_id,
            "agent": row.agent,
            "adapter": row.adapter,
            "model": row.model,
            "repo": API,
            "branch": row.branch,
            "outcome": row.outcome,
            "started": iso(row.started_at),
            "provider": "builtin",
        }
        # The same labels, in the same order, as the episode's item in a recall answer.
        assert dict(full_provenance(section, item)) == {
            k: v for k, v in expected.items() if v is not None
        }
        assert list(dict(full_provenance(section, item))) == [
            k for k, v in expected.items() if v is not None
        ]
        assert item.untrusted
        # Built by code from the stored episode, not the provider's "field: value" rendering.
        assert "result_excerpt:" not in item.text and "trace_id" not in item.text
    roomy = store(4000).briefings.preview("api-fixer", repo=API, branch="main")
    texts = [i.text for i in _episodes(roomy.text).items]
    assert len(texts) == 3 and any("files: billing/" in t for t in texts)


def test_recall_keeps_the_providers_full_text(store: Callable[[int | None], App]) -> None:
    app = store(None)
    subject = app.briefings.preview_subject("api-fixer", repo=API)
    answer = app.briefings.recall(subject, "settlement fixture ledger")
    items = _episodes(answer.text).items
    assert items and all("result_excerpt:" in i.text for i in items)
    assert {i.get("repo") for i in items} == {API} and all(i.get("adapter") for i in items)


def test_a_forgotten_or_foreign_episode_never_appears(store: Callable[[int | None], App]) -> None:
    app = store(4000)
    web = {e.id for e in app.memory.list_episodes(repo=WEB)}
    assert len(web) == 1
    first = app.briefings.preview("api-fixer", repo=API, branch="main")
    shown = set(first.ids("episodes"))
    assert len(shown) == 3 and not shown & web
    for episode_id in shown:
        app.memory.forget(episode_id)
    again = app.briefings.preview("api-fixer", repo=API, branch="main")
    left = set(again.ids("episodes"))
    assert left and not left & shown and not left & web
    assert all(episode_id not in again.text for episode_id in shown)


def test_the_same_store_and_nonce_give_the_same_bytes(store: Callable[[int | None], App]) -> None:
    app = store(None)
    n = secrets.token_hex(16)
    service = BriefingService(
        memory=app.memory,
        runs=app.runs,
        settings=lambda: app.config.current,
        facts=None,
        new_nonce=lambda: n,
    )
    subject = service.preview_subject("api-fixer", repo=API, branch="main")
    first, second = service.briefing(subject), service.briefing(subject)
    assert first.text == second.text and first.shown["episodes"] >= 2
