"""The SQLite side of context files: migration 4, compare-and-save, loads, runs in flight."""

from __future__ import annotations

import pytest

from fleetmem.store.base import RunRow
from fleetmem.store.files import FileKey, LoadRow, NewRevision
from fleetmem.store.sqlite.store import SqliteStore

KEY = FileKey("default", "agent", "research-agent", "notes")


@pytest.mark.sqlite_only(reason="reads sqlite_master (PostgreSQL's schema: test_postgres.py)")
def test_migration_4_creates_the_tables(store: SqliteStore) -> None:
    names = {
        r[0] for r in store.db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    assert {"context_files", "context_file_revisions", "context_file_activity"} <= names
    assert "run_context_loads" in names
    versions = [r[0] for r in store.db.conn.execute("SELECT version FROM schema_migrations")]
    assert 4 in versions


def test_compare_and_save(store: SqliteStore) -> None:
    new = NewRevision("first\n", "user", "marina", None, "save")
    row, written = store.write_revision(KEY, 0, new, 10.0, keep_last=20, keep_after=0.0)
    assert written and row.revision == 1 and row.body == "first\n"
    stale = NewRevision("other\n", "user", "dev", None, "save")
    row, written = store.write_revision(KEY, 0, stale, 11.0, keep_last=20, keep_after=0.0)
    assert not written and row.revision == 1 and row.body == "first\n"
    assert [r.revision for r in store.list_revisions(KEY)] == [1, 0]
    assert store.create_file(KEY, None, 12.0).revision == 1  # idempotent


def _run(run_id: str) -> RunRow:
    return RunRow(
        run_id=run_id, agent="research-agent", adapter="command", trace_id=None, model=None,
        trigger="manual", started_at=1.0, ended_at=2.0, outcome="succeeded", reason="completed",
        cost_usd=None, cost_source="unknown", spawned=False, pull_request=None, repo=None,
        branch=None, episode_status="skipped:test",
    )  # fmt: skip


def test_a_closed_run_is_no_longer_in_flight(store: SqliteStore) -> None:
    ref = "agent/research-agent/notes"
    for run_id in ("open", "closed"):
        store.record_loads(
            [LoadRow("default", run_id, "research-agent", None, "notes", ref, 1, 1500, 9, 9, 100.0)]
        )
    assert store.runs_in_flight("default", ref, 2, 50.0) == 2
    store.insert_run(_run("closed"), [], [], "{}", "hash", 120.0)
    assert store.runs_in_flight("default", ref, 2, 50.0) == 1
    assert store.runs_in_flight("default", ref, 1, 50.0) == 0  # it holds the current revision
    assert store.runs_in_flight("other", ref, 2, 50.0) == 0  # another workspace
    # The first assembly of a run is its receipt: a second record does not replace it.
    store.record_loads(
        [LoadRow("default", "open", "research-agent", None, "notes", ref, 2, 1500, 9, 9, 130.0)]
    )
    assert [r.revision for r in store.loads_for_run("default", "open")] == [1]
    assert store.last_loads("default", "research-agent")[0].run_id in ("open", "closed")
