"""``fleetmem store copy``: a whole memory moved between real stores, both ways, verified.

A SQLite home with a history (runs with vectors and neighbours, a forgotten episode, facts
voted on and served, context files, a live run, a briefing, the bookkeeping tables) is copied
to PostgreSQL and back to a new SQLite file: every table comes back row for row, the built-in
index holds the same words and the same vectors, and both stores answer the same recall.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetmem.core.facts import Actor
from fleetmem.core.textquery import fts_match
from fleetmem.service.bootstrap import App, build
from fleetmem.store.base import DeliveryRow
from fleetmem.store.copying import COPIED, NOT_COPIED, REBUILT, CopiedTable
from fleetmem.store.postgres.store import PostgresStore
from fleetmem.store.sqlite import fts_source
from fleetmem.store.sqlite.copying import CODECS, convert_rendering, rendering_at
from fleetmem.store.sqlite.store import SqliteStore
from fleetmem.surfaces.cli.main import main
from tests import store_kinds
from tests.conftest import fail_inserts, make_record, session, sql_rows, write_config
from tests.fakes.openai_server import FakeOpenAI

PERSON = Actor("human", "marina")
API = "github.com/acme/api"
#: Tables a home filled by ``_fill`` must hold rows of (the copy is proven on them).
FILLED = {
    "workspaces",
    "runs",
    "sessions",
    "events",
    "episodes",
    "provider_index",
    "jobs",
    "embeddings",
    "builtin_agents",
    "facts",
    "fact_revisions",
    "fact_provenance",
    "fact_journal",
    "fact_vectors",
    "fact_exposures",
    "fact_votes",
    "fact_pairs_kept",
    "context_files",
    "context_file_revisions",
    "context_file_activity",
    "live_runs",
    "run_briefings",
    "call_log",
    "degraded_recalls",
    "utility_calls",
    "provider_health",
    "briefing_deliveries",
}


@pytest.fixture
def pg_url() -> Iterator[Callable[[], str]]:
    """Fresh schemas of the test server (dropped afterwards)."""
    base = store_kinds.required_url()
    made: list[str] = []

    def factory() -> str:
        name, url = store_kinds.fresh_schema(base)
        made.append(name)
        return url

    yield factory
    for name in made:
        store_kinds.drop_schema(base, name)


def _app(home: Path, config: str) -> App:
    home.mkdir(parents=True, exist_ok=True)
    write_config(home, config)
    return build(home, {"HOME": str(home.parent)})


def _fill(app: App) -> None:
    """A history in every table a daemon writes while people and agents use it."""
    kept = app.facts.add("Ledger tests run in UTC.", kind="decision", actor=PERSON)
    app.facts.edit(kept.fact.id, "Ledger tests always run in UTC.", actor=PERSON)
    app.facts.pin(kept.fact.id, actor=PERSON)
    other = app.facts.add("Billing lives in project api.", scope=f"project:{API}", actor=PERSON)
    app.facts.keep_both(kept.fact.id, other.fact.id, actor=PERSON)
    gone = app.facts.add("The old staging host is db-7.", actor=PERSON)
    app.facts.forget(gone.fact.id, actor=PERSON)
    app.facts.propose("Prefer pytest -x for quick loops.", agent="coder", run_id="run-p1")
    # The default workspace renamed (the target's own default row must take the new name)
    # and a second one holding a fact.
    app.workspaces.rename("default", "Main desk")
    acme = app.workspaces.create("Acme").id
    app.in_workspace(acme).facts.add("Acme deploys on Tuesdays.", actor=PERSON)
    ref = app.files.ref("voice")
    first = app.files.save(ref, "Short sentences.\n", base_revision=0, actor=PERSON)
    app.files.save(ref, "Short sentences. No emoji.\n", base_revision=first.revision, actor=PERSON)
    texts = (
        "fixed the flaky ledger test in the settlement fixture",
        "bumped the payments SDK and regenerated the client",
        "settlement retries now back off exponentially",
        "secret work that is forgotten",
        "wrote the changelog for the ledger release",
    )
    episodes = []
    for n, text in enumerate(texts):
        # Twenty minutes apart on one branch: each episode has neighbours (indexed context).
        record = make_record(
            run_id=f"run-{n}",
            result_text=text,
            started_at=f"2026-11-01T1{n // 3}:{20 * (n % 3):02d}:00Z",
            ended_at=f"2026-11-01T1{n // 3}:{20 * (n % 3) + 5:02d}:00Z",
            sessions=[session(repo=API, edits=(f"src/ledger_{n}.py",))],
        )
        result = app.memory.ingest_run(record)
        assert result.episode_id is not None, result
        episodes.append(result.episode_id)
    app.memory.forget(episodes[3])
    # A run still waiting for its provider: finished jobs leave no row, a pending one does.
    queued = make_record(run_id="run-queued", result_text="queued", sessions=[session(repo=API)])
    assert app.memory.ingest_run(queued, process_now=False).episode_id is not None
    opened = app.runs.open_run("coder", repo=API, branch="feature/x")
    caller = app.runs.resolve_caller(opened.token)
    app.agent_memory.briefing(caller)
    app.agent_memory.recall(caller, "ledger settlement")
    app.agent_memory.vote(caller, other.fact.id, "support", reason="it is")
    store = app.store
    store.log_call(
        at=1.0,
        caller="coder",
        upstream="mem",
        tool="recall",
        args_sha256="0" * 64,
        args_bytes=10,
        outcome="ok",
        duration_ms=3.5,
        error=None,
    )
    store.note_degraded_recall(at=2.0, provider="builtin", reason="provider_unavailable")
    store.utility_claim("episode_summary", now=3.0, per_minute=10, day_start=0.0, daily=100)
    store.note_provider_health("builtin", state="ok", down=False, at=4.0, reason=None)
    store.note_briefing_delivery(
        DeliveryRow(
            at=5.0,
            origin="abc",
            agent="coder",
            delivery="tool",
            outcome="served",
            reason=None,
            bytes=120,
        )
    )


def _columns(store: SqliteStore | PostgresStore, table: CopiedTable) -> list[str]:
    """The table's columns both stores share (not the row order a store keeps its own way)."""
    if isinstance(store, PostgresStore):
        with store.db.connection() as conn:
            cur = conn.execute(f"SELECT * FROM {table.name} LIMIT 0")
            names = [d.name for d in cur.description or ()]
    else:
        names = [str(r[1]) for r in store.db.conn.execute(f"PRAGMA table_info('{table.name}')")]
    own = {"claimed_until"} | ({"rowid", "seq", "erow"} if table.in_row_order else set())
    return [n for n in names if n not in own]


def _table_rows(store: SqliteStore | PostgresStore, table: CopiedTable) -> list[tuple[Any, ...]]:
    names = _columns(store, table)
    rows = sql_rows(store, f"SELECT {', '.join(names)} FROM {table.name}")
    # SQLite keeps the long text columns deflated and vectors as int8; compare
    # what they hold, as a copy reads them.
    codecs = CODECS.get(table.name, {}) if isinstance(store, SqliteStore) else {}
    rendering = rendering_at(table.name, names) if isinstance(store, SqliteStore) else None
    return sorted(
        (
            convert_rendering(
                tuple(
                    codecs[n][0](v) if n in codecs else bytes(v) if isinstance(v, memoryview) else v
                    for n, v in zip(names, r, strict=True)
                ),
                rendering,
                0,
            )
            for r in rows
        ),
        key=repr,
    )


def _index(store: SqliteStore) -> list[tuple[Any, ...]]:
    """The SQLite built-in index by episode id: what it indexed (kept beside the contentless
    index), the vector link, and the index's own count of each term."""
    conn = store.db.conn
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.copy_vocab"
        " USING fts5vocab (main, builtin_fts, row)"
    )
    terms = tuple(sorted(tuple(r) for r in conn.execute("SELECT term, doc, cnt FROM copy_vocab")))
    return sorted(
        (str(r[0]), *(fts_source.of_episode(conn, str(r[0])) or ()), r[1], r[2], terms)
        for r in conn.execute(
            "SELECT e.id, v.content_hash, v.model_id"
            " FROM builtin_fts_source f JOIN episodes e ON e.rowid = f.rowid"
            " LEFT JOIN builtin_vectors v ON v.episode_id = e.id"
        )
    )


def _cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_copy_sqlite_to_postgres_and_back_keeps_every_row(
    tmp_path: Path,
    pg_url: Callable[[], str],
    fake_openai: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = f'[model_api]\nbase_url = "{fake_openai.base_url}"\nembedding_model = "bow-64"\n'
    source = _app(tmp_path / "a", config)
    _fill(source)
    assert isinstance(source.store, SqliteStore)
    empty = {t.name for t in COPIED if not sql_rows(source.store, f"SELECT 1 FROM {t.name}")}
    assert not (FILLED & empty), f"the history left these tables empty: {FILLED & empty}"
    source_path = str(tmp_path / "a" / "fleetmem.db")
    url = pg_url()

    code, out, err = _cli("store", "copy", "--from", source_path, "--to", url, capsys=capsys)
    assert code == 0, err
    assert "copying episodes" in err and "copying builtin index" in err
    assert "counts verified" in out and "***" in out  # the password is never printed
    # A second run copies nothing and says so.
    code, out, err = _cli(
        "store", "copy", "--from", source_path, "--to", url, "--json", capsys=capsys
    )
    assert code == 0, err
    again = json.loads(out)
    assert again["nothing_new"] is True and again["copied"] == 0 and again["differ"] == 0
    assert all(t["present"] == t["source"] == t["target"] for t in again["tables"])

    pg = PostgresStore(url)
    try:
        for table in COPIED:
            assert _table_rows(pg, table) == _table_rows(source.store, table), table
    finally:
        pg.close()

    # And back to a new SQLite file: the same rows, the same index, word for word.
    back = tmp_path / "c" / "copy.db"
    back.parent.mkdir()
    code, out, err = _cli("store", "copy", "--from", url, "--to", str(back), "-q", capsys=capsys)
    assert code == 0, err
    assert err == ""  # -q: no progress
    copy = SqliteStore(back)
    try:
        for table in COPIED:
            assert _table_rows(copy, table) == _table_rows(source.store, table), table
        assert _index(copy) == _index(source.store)
        assert len(_index(copy)) == 4  # the forgotten episode is not indexed
    finally:
        copy.close()
    # The same recall from both stores: words, vectors and the service's filtering.
    pg_app = _app(tmp_path / "b", f'{config}\n[store]\nurl = "{url}"\n')
    for query in ("ledger settlement", "payments SDK client", "forgotten secret"):
        want = source.memory.recall(query, scopes=[f"project:{API}"])
        got = pg_app.memory.recall(query, scopes=[f"project:{API}"])
        assert [h.episode_id for h in got.items] == [h.episode_id for h in want.items]
        assert got.degraded is None
        assert want.items or query == "forgotten secret"
    assert pg_app.memory.status()["vectors_missing"] == 0
    assert pg_app.facts.list() == source.facts.list()
    assert pg_app.facts.counts() == source.facts.counts()
    pg_app.close()
    source.close()


def test_every_table_of_both_stores_is_copied_or_rebuilt(
    tmp_path: Path, pg_url: Callable[[], str]
) -> None:
    """A migration that adds a table must say how a copy carries it."""
    lite = SqliteStore(tmp_path / "x.db")
    pg = PostgresStore(pg_url())
    try:
        with lite.copy_snapshot() as snapshot:
            # Every table, except those behind a view that stands for a table of the other
            # store (run_paths, migration 22), which the copy carries through the view.
            seen = set(snapshot.tables())
        raw = {str(r[0]) for r in lite.db.conn.execute("SELECT name FROM sqlite_master")}
        assert seen - {"run_paths"} <= raw and "run_paths" in seen
        names = {
            "sqlite": seen,
            "postgres": {
                str(r[0])
                for r in pg.db.rows(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                )
            },
        }
    finally:
        lite.close()
        pg.close()
    known = {t.name for t in COPIED} | REBUILT | NOT_COPIED
    for kind, tables in names.items():
        assert tables <= known, (kind, tables - known)
        assert {t.name for t in COPIED} <= tables, kind


def test_sqlite_to_sqlite_and_postgres_to_postgres(
    tmp_path: Path, pg_url: Callable[[], str], capsys: pytest.CaptureFixture[str]
) -> None:
    source = _app(tmp_path / "a", '[model_api]\nembedding_model = ""\n')
    _fill(source)
    assert isinstance(source.store, SqliteStore)
    first, second = pg_url(), pg_url()
    lite = tmp_path / "b.db"
    for src, dst in ((source.store.location, str(lite)), (str(lite), first), (first, second)):
        code, _, err = _cli("store", "copy", "--from", src, "--to", dst, "-q", capsys=capsys)
        assert code == 0, err
    last = PostgresStore(second)
    try:
        for table in COPIED:
            assert _table_rows(last, table) == _table_rows(source.store, table), table
        match = fts_match("ledger settlement")
        hits = last.search_text(match, [f"project:{API}"], 10)
        assert hits == source.store.search_text(match, [f"project:{API}"], 10)
        assert hits
    finally:
        last.close()
        source.close()


def test_bad_arguments_are_named(
    tmp_path: Path, pg_url: Callable[[], str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_url()
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello", encoding="utf-8")
    cases = [
        (["--from", str(tmp_path / "missing.db"), "--to", url], 2, "--from", "no such file"),
        (["--from", str(not_db), "--to", url], 2, "--from", "not a SQLite database"),
        (["--from", str(tmp_path), "--to", url], 2, "--from", "is a directory"),
        (["--from", url, "--to", str(tmp_path / "no" / "dir.db")], 2, "--to", "directory"),
        (["--from", url, "--to", "postgresql://"], 2, "--to", "host"),
        (["--from", url, "--to", "mysql://db/x"], 2, "--to", "postgresql://"),
        (["--from", url, "--to", url], 2, "--to", "same store"),
        (
            ["--from", url, "--to", "postgresql://u:hunter2@127.0.0.1:1/x"],
            5,
            "--to",
            "cannot reach",
        ),
    ]
    for argv, want_code, named, reason in cases:
        code, _, err = _cli("store", "copy", *argv, capsys=capsys)
        assert code == want_code, (argv, err)
        assert named in err and reason in err, (argv, err)
        assert "hunter2" not in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()


def test_a_failed_copy_leaves_the_target_as_it_was(
    tmp_path: Path, pg_url: Callable[[], str], capsys: pytest.CaptureFixture[str]
) -> None:
    source = _app(tmp_path / "a", '[model_api]\nembedding_model = ""\n')
    _fill(source)
    url = pg_url()
    target = PostgresStore(url)
    # The last table fails to insert: everything before it must be rolled back.
    fail_inserts(target, "briefing_deliveries")
    code, _, err = _cli(
        "store", "copy", "--from", source.store.location, "--to", url, "-q", capsys=capsys
    )
    assert code == 5 and "disk I/O error" in err, err
    try:
        for table in COPIED:
            if table.name == "workspaces":  # a new store's own row, as it was
                assert sql_rows(target, "SELECT id, name FROM workspaces") == [
                    ("default", "default")
                ]
            elif table.name != "provider_health":
                assert sql_rows(target, f"SELECT count(*) FROM {table.name}") == [(0,)], table
        assert sql_rows(target, "SELECT count(*) FROM builtin_fts") == [(0,)]
    finally:
        target.close()
    # A SQLite file the copy created is removed again when the copy fails.
    broken = tmp_path / "broken.db"
    source.store.db.conn.execute("PRAGMA foreign_keys = OFF")
    source.store.db.conn.execute(
        "INSERT INTO sessions (run_id, session_id, ord, subagent, cwd) VALUES"
        " ('no-such-run', 's', 0, 0, '/')"
    )
    code, _, err = _cli(
        "store",
        "copy",
        "--from",
        source.store.location,
        "--to",
        str(broken),
        "-q",
        capsys=capsys,
    )
    assert code == 5 and "FOREIGN KEY" in err.upper(), err
    assert not broken.exists() and not Path(f"{broken}-wal").exists()
    source.close()


def test_a_target_holding_other_data_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _app(tmp_path / "a", '[model_api]\nembedding_model = ""\n')
    _fill(first)
    other = _app(tmp_path / "b", '[model_api]\nembedding_model = ""\n')
    other.facts.add("Something else entirely.", actor=PERSON)
    before = sqlite3.connect(other.store.location).execute("SELECT count(*) FROM facts").fetchone()
    code, _, err = _cli(
        "store",
        "copy",
        "--from",
        first.store.location,
        "--to",
        other.store.location,
        capsys=capsys,
    )
    assert code == 2 and "--to" in err and "not a copy of --from" in err, err
    after = sqlite3.connect(other.store.location).execute("SELECT count(*) FROM facts").fetchone()
    assert before == after == (1,)
    first.close()
    other.close()
