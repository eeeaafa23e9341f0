"""The footprint benchmark accounts for every page of a SQLite store, and puts the run
records, the episodes and the index where they belong."""

from __future__ import annotations

import re
import secrets
import sqlite3
from pathlib import Path

from bench.bench_footprint import sqlite_footprint

from fleetmem.service.bootstrap import build
from tests.conftest import make_record, session, write_config


def test_every_page_is_in_one_class(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n')
    app = build(home, {"HOME": str(tmp_path)})
    words = " ".join(secrets.token_hex(3) for _ in range(60))
    for i in range(12):
        app.memory.ingest_run(
            make_record(
                run_id=f"run-{i}-{secrets.token_hex(3)}",
                result_text=f"fixed test {i}: {words}",
                sessions=[session(edits=(f"src/mod_{i}.py",))],
            )
        )
    app.close()
    db = home / "fleetmem.db"
    got = sqlite_footprint(db)
    conn = sqlite3.connect(db)
    pages, size = (
        int(conn.execute(f"PRAGMA {p}").fetchone()[0]) for p in ("page_count", "page_size")
    )
    conn.close()
    assert got["episodes"] == 12
    assert got["total_bytes"] == pages * size  # dbstat's pages and the free list: all of them
    classes = got["classes"]
    assert classes["run records"]["bytes"] > 0 and classes["episodes"]["bytes"] > 0
    assert classes["text index"]["bytes"] > 0
    assert sum(c["bytes"] for c in classes.values()) == got["total_bytes"]


def test_every_table_a_run_writes_is_a_run_record(tmp_path: Path) -> None:
    # Migration 22 moved run_paths' rows into two tables behind a view of that name.
    from bench.bench_footprint import _class_of

    home = tmp_path / "home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n')
    app = build(home, {"HOME": str(tmp_path)})
    app.close()
    conn = sqlite3.connect(home / "fleetmem.db")
    tables = {
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    }
    conn.close()
    for table in ("runs", "sessions", "events", "run_paths", "run_path_links", "store_paths"):
        assert table in tables
        assert _class_of(table) == "run records", table


def test_every_table_of_the_postgresql_word_index_is_text_index() -> None:
    """The postings (migrations 7 to 9) and the per-episode rows are the word index's bytes,
    not "other"; the term counts are the statistics."""
    from bench.bench_footprint import _class_of

    from fleetmem.store.postgres.migrations import MIGRATIONS

    created = {
        word.split("(")[0].strip()
        for _, _, sql in MIGRATIONS
        for word in sql.split("CREATE TABLE ")[1:]
    }
    # A migration's rebuilt table is renamed over the old one (builtin_fts_v9 -> builtin_fts).
    index_tables = {t for t in created if t.startswith("builtin_") and not re.search(r"_v\d+$", t)}
    assert {"builtin_fts", "builtin_postings", "builtin_scopes"} <= index_tables
    for table in index_tables - {"builtin_agents", "builtin_vectors"}:
        expected = (
            "term statistics" if table in ("builtin_terms", "builtin_totals") else "text index"
        )
        assert _class_of(table) == expected, table
