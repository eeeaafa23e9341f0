"""The PostgreSQL store's own: migrations under an advisory lock, clear connection errors,
exact text statistics, FTS5's tokens and BM25, jobs claimed once, its upkeep and health.

Everything the two stores share is tested on both by the rest of tests/store (and the
service tests); these are what only PostgreSQL has. They run on the server of
tests/store_kinds.py: skipped without one, failed under CI.
"""

from __future__ import annotations

import math
import random
import sqlite3
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest

from fleetmem.config import load_global
from fleetmem.core.episode import episode_id
from fleetmem.core.textquery import fts_match
from fleetmem.errors import ConfigError, StoreError
from fleetmem.service import doctor
from fleetmem.service.bootstrap import App, build, open_store
from fleetmem.store.postgres import text_index
from fleetmem.store.postgres.migrations import MIGRATIONS
from fleetmem.store.postgres.store import PostgresStore
from fleetmem.store.sqlite import builtin_index as fts5
from tests import store_kinds
from tests.conftest import ingest_text, make_record, session, write_config

T = TypeVar("T")

API = "project:github.com/acme/api"


@pytest.fixture
def schema_url() -> Iterator[str]:
    """A URL on a fresh, empty schema of the test server."""
    base = store_kinds.required_url()
    name, url = store_kinds.fresh_schema(base)
    yield url
    store_kinds.drop_schema(base, name)


@pytest.fixture
def pg_app(home: Path, schema_url: str) -> Iterator[App]:
    write_config(home, f'[model_api]\nembedding_model = ""\n[store]\nurl = "{schema_url}"\n')
    app = build(home, {"HOME": str(home.parent)})
    yield app
    app.close()


def _ingest(app: App, n: int, text: str) -> str:
    record = make_record(
        run_id=f"run-{n}",
        started_at=f"2026-11-28T09:00:{n:02d}Z",
        ended_at=f"2026-11-28T09:00:{n:02d}Z",
        result_text=text,
        sessions=[session()],
    )
    episode_id = app.memory.ingest_run(record).episode_id
    assert episode_id is not None
    return episode_id


# ---- migrations ------------------------------------------------------------------------------
def _open_together(open_one: Callable[[], T], n: int) -> tuple[list[T], list[BaseException]]:
    """``n`` threads opening at once, as daemons starting together: what each opened, and
    what each raised."""
    opened: list[T] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(open_one())
        except BaseException as exc:  # reported to the caller
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return opened, errors


def test_a_migration_longer_than_the_statement_timeout_completes_and_others_wait(
    schema_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration that rebuilds a large table takes minutes (migration 8 at 100,000
    episodes); it is not cut by the statement timeout of queries, and a daemon starting
    beside it waits for it instead of failing at start."""
    from fleetmem.store.postgres import db as pg_db

    slow = (*MIGRATIONS, (MIGRATIONS[-1][0] + 1, "slow", "SELECT pg_sleep(1.2)"))
    monkeypatch.setattr(pg_db, "MIGRATIONS", slow)
    opened, errors = _open_together(
        lambda: pg_db.PgDatabase(schema_url, statement_timeout_ms=300), 2
    )
    try:
        assert errors == []
        assert {db.schema_version() for db in opened} == {slow[-1][0]}
        # Queries keep their own budget afterwards, on every connection of the pool.
        for db in opened:
            with pytest.raises(StoreError, match="timeout"):
                db.value("SELECT pg_sleep(1)")
    finally:
        for db in opened:
            db.close()


def test_daemons_starting_together_apply_each_migration_once(schema_url: str) -> None:
    opened, errors = _open_together(lambda: PostgresStore(schema_url), 4)
    assert errors == []
    store = opened[0]
    rows = store.db.rows("SELECT version, name FROM schema_migrations ORDER BY version")
    assert rows == [(v, n) for v, n, _ in MIGRATIONS]
    assert {s.schema_version() for s in opened} == {MIGRATIONS[-1][0]}
    tables = {
        r[0]
        for r in store.db.rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
    }
    assert {"runs", "episodes", "jobs", "facts", "fact_journal", "context_files"} <= tables
    assert {"live_runs", "run_paths", "notes_proposals", "builtin_fts", "builtin_vectors"} <= tables
    indexes = {
        r[0]
        for r in store.db.rows(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND tablename = 'events'"
        )
    }
    # Migration 5 dropped the index no query read; the primary key stays.
    assert "events_path" not in indexes and indexes
    # Each execution is planned for its own values, prepared or not: a generic plan cannot
    # see a tsquery's selectivity (the text channel ran three times slower on one).
    with store.db.read() as conn:
        mode = conn.execute("SHOW plan_cache_mode").fetchone()
        assert mode is not None and mode[0] == "force_custom_plan"
    for s in opened:
        s.close()


# ---- selection and errors --------------------------------------------------------------------
def test_a_home_without_a_url_keeps_its_sqlite_file(home: Path) -> None:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    store = open_store(home, load_global(home), {})
    try:
        assert store.kind == "sqlite" and store.location == str(home / "fleetmem.db")
    finally:
        store.close()


def test_the_environment_selects_postgresql_over_the_file(home: Path, schema_url: str) -> None:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    store = open_store(home, load_global(home), {"FLEETMEM_STORE_URL": schema_url})
    try:
        assert store.kind == "postgresql" and "***" in store.location
        assert not (home / "fleetmem.db").exists()
    finally:
        store.close()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("mysql://u:pw@db/x", "must be a postgresql:// URL"),
        ("postgresql://u:pw@db:99999/x", "not a valid URL"),
        ("postgresql:///x", "must name the database server's host"),
        ("postgresql://u:pw@db/x#frag", "must not have a fragment"),
    ],
)
def test_a_bad_url_names_store_url_and_never_shows_the_password(
    home: Path, url: str, reason: str
) -> None:
    write_config(home, f'[store]\nurl = "{url}"\n')
    with pytest.raises(ConfigError) as caught:
        load_global(home)
    message = str(caught.value)
    assert "store.url" in message and reason in message and "pw" not in message
    write_config(home, "")
    with pytest.raises(ConfigError) as caught:
        open_store(home, load_global(home), {"FLEETMEM_STORE_URL": url})
    message = str(caught.value)
    assert "store.url" in message and "FLEETMEM_STORE_URL" in message and "pw" not in message


def test_an_unreachable_server_is_a_store_error_naming_store_url(home: Path) -> None:
    with socket_nobody_listens() as port:
        url = f"postgresql://fleetmem:s3cretpw@127.0.0.1:{port}/fleetmem?connect_timeout=1"
        write_config(home, "")
        with pytest.raises(StoreError) as caught:
            open_store(home, load_global(home), {"FLEETMEM_STORE_URL": url})
    message = str(caught.value)
    assert "store.url" in message and "s3cretpw" not in message and "***" in message


def test_a_refused_password_is_a_store_error_without_the_password(home: Path) -> None:
    base = store_kinds.required_url()
    parts = psycopg.conninfo.conninfo_to_dict(base)
    url = f"postgresql://{parts['user']}:wrong-pw-123@{parts['host']}:{parts['port']}/x"
    with pytest.raises(StoreError) as caught:
        PostgresStore(url)
    message = str(caught.value)
    assert "store.url" in message and "wrong-pw-123" not in message
    assert "password authentication failed" in message


def test_the_cli_says_what_is_wrong_without_a_traceback(home: Path) -> None:
    from tests.surfaces.cli_helpers import run_cli

    with socket_nobody_listens() as port:
        write_config(home, f'[store]\nurl = "postgresql://u:pw9@127.0.0.1:{port}/x"\n')
        proc = run_cli(home, "status", check=False)
    assert proc.returncode != 0
    assert "store.url" in proc.stderr and "pw9" not in proc.stderr
    assert "Traceback" not in proc.stderr


class socket_nobody_listens:
    """A local port nothing listens on (bound, never listening)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


# ---- the text index --------------------------------------------------------------------------
FTS5_CORPUS = [
    "Running the migrations connected relational databases quickly",
    "snake_case_name and CamelCaseName in src/app/main.py:42",
    "Café naïve résumé — Ünïcode façade",
    "v1.2.3 released 2026-11-28 by api-fixer; see PR #123",
    "tests FAILED: test_ledger_rounding (AssertionError) at ledger/rounding.py",
    "a an the of it is to be or as ab abc abcd",
    "Generalizations generously generated; hopefulness, hopelessly",
]


def test_the_tokens_are_the_ones_fts5_indexes() -> None:
    """The same tokens as SQLite's ``porter unicode61`` tokenizer, on a varied corpus."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")
    for i, text in enumerate(FTS5_CORPUS):
        conn.execute("INSERT INTO t (rowid, x) VALUES (?, ?)", (i, text))
    for i, text in enumerate(FTS5_CORPUS):
        fts5 = [
            str(r[0])
            for r in conn.execute("SELECT term FROM v WHERE doc = ? ORDER BY offset", (i,))
        ]
        assert text_index.tokens(text) == fts5, text


def test_term_statistics_stay_exact_through_replace_and_delete(pg_app: App) -> None:
    store = pg_app.store
    assert isinstance(store, PostgresStore)
    a = _ingest(pg_app, 1, "ledger drift ledger")
    b = _ingest(pg_app, 2, "ledger rounding")

    Counts = dict[str, tuple[int, ...]]

    def stats() -> tuple[tuple[int, int], Counts]:
        totals = store.db.row("SELECT docs, tokens FROM builtin_totals")
        assert totals is not None
        rows = store.db.rows(
            "SELECT lexeme, docs, in_text, in_summary, in_context FROM builtin_terms"
        )
        return (int(totals[0]), int(totals[1])), {str(r[0]): tuple(r[1:]) for r in rows}

    def recount() -> tuple[tuple[int, int], Counts]:
        """The statistics counted again from every stored posting's positions."""
        rows = store.db.rows("SELECT doc_len FROM builtin_fts")
        terms: dict[str, list[int]] = {}
        for lexeme, packed, text_end, summary_end in store.db.rows(
            "SELECT p.lexeme, p.positions, f.text_end, f.summary_end FROM builtin_postings p"
            " JOIN builtin_fts f ON f.erow = p.erow"
        ):
            counts = terms.setdefault(lexeme, [0, 0, 0, 0])
            counts[0] += 1
            columns = {
                0 if at <= text_end else 1 if at <= summary_end else 2
                for at in text_index.unpack_positions(bytes(packed))
            }
            for column in columns:
                counts[column + 1] += 1
        return (len(rows), sum(int(r[0]) for r in rows)), {k: tuple(v) for k, v in terms.items()}

    def postings() -> set[tuple[object, ...]]:
        return {
            tuple(r)
            for r in store.db.rows(
                "SELECT p.lexeme, s.scope, p.erow, p.n_main, p.n_context, p.doc_len, p.started_at"
                " FROM builtin_postings p JOIN builtin_scopes s ON s.id = p.scope_id"
            )
        }

    def postings_again() -> set[tuple[object, ...]]:
        """The postings as their positions and their episode's row say they should read
        (positions to the summary's end weigh 1); each episode's terms list its postings."""
        found = set()
        for erow, scope, doc_len, summary_end, started_at, terms in store.db.rows(
            "SELECT erow, scope, doc_len, summary_end, started_at, terms FROM builtin_fts"
        ):
            held = store.db.rows(
                "SELECT lexeme, positions FROM builtin_postings WHERE erow = %s", (erow,)
            )
            assert sorted(terms) == sorted(str(r[0]) for r in held)
            for lexeme, packed in held:
                positions = text_index.unpack_positions(bytes(packed))
                assert list(positions) == sorted(set(positions)) and positions[0] >= 1
                main = sum(1 for p in positions if p <= summary_end)
                found.add((lexeme, scope, erow, main, len(positions) - main, doc_len, started_at))
        return found

    def pairs() -> set[tuple[object, ...]]:
        return {
            (int(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]), float(r[5]), bytes(r[6]))
            for r in store.db.rows(
                "SELECT p.pair, s.scope, p.erow, p.n_main, p.doc_len, p.started_at, p.positions"
                " FROM builtin_pair_postings p JOIN builtin_scopes s ON s.id = p.scope_id"
            )
        }

    def pairs_again() -> set[tuple[object, ...]]:
        """The pair postings as the stored postings' positions say they should read."""
        found = set()
        for erow, scope, doc_len, summary_end, started_at in store.db.rows(
            "SELECT erow, scope, doc_len, summary_end, started_at FROM builtin_fts"
        ):
            held = {
                str(r[0]): text_index.unpack_positions(bytes(r[1]))
                for r in store.db.rows(
                    "SELECT lexeme, positions FROM builtin_postings WHERE erow = %s", (erow,)
                )
            }
            at = {p: lexeme for lexeme, where in held.items() for p in where}
            starts: dict[int, list[int]] = {}
            for p in sorted(at):
                if p + 1 in at:
                    starts.setdefault(text_index.pair_id(at[p], at[p + 1]), []).append(p)
            for pair, where in starts.items():
                main = sum(1 for p in where if p <= summary_end)
                packed = text_index.pack_positions(where)
                found.add((pair, scope, erow, main, doc_len, started_at, packed))
        return found

    def both() -> None:
        assert postings() == postings_again()
        assert pairs() == pairs_again()

    assert stats() == recount() and stats()[1]["ledger"][0] == 2
    both()
    assert (text_index.pair_id("ledger", "drift"), API) in {(r[0], r[1]) for r in pairs()}
    assert sorted(r[3] for r in postings() if r[0] == "ledger") == [1, 2]  # "ledger drift ledger"
    store.builtin_put(a, "rounding only", "ledger summary", None, "", "", context="drift")
    # docs, in text, in summary (in context depends on the neighbours' excerpts)
    assert stats() == recount() and stats()[1]["ledger"][:3] == (2, 1, 1)
    assert stats()[1]["round"][:2] == (2, 2) and stats()[1]["drift"][3] >= 1
    both()
    # A term past its 256 stored positions in the text, then in the context: counted in the
    # columns its stored positions are in, so replacing and removing it leaves nothing behind.
    store.builtin_put(b, "tally " * 300, None, None, "", "", context="tally rounding")
    assert stats() == recount() and stats()[1]["talli"][1:] == (1, 0, 0)
    both()
    store.builtin_put(b, "rounding only", None, None, "", "")
    assert stats() == recount() and "talli" not in stats()[1]
    assert store.builtin_delete(b)
    assert stats() == recount() and stats()[1]["round"][0] == 1
    both()
    assert store.builtin_delete(a) and stats() == ((0, 0), {}) and postings() == set()
    assert pairs() == set()


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[App]:
    home = tmp_path / "sqlite-home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n')
    app = build(home, {"HOME": str(tmp_path)})
    yield app
    app.close()


def test_bm25_and_coverage_match_sqlite_fts5_on_the_same_episodes(
    pg_app: App, sqlite_app: App
) -> None:
    """Same episodes in both stores: the same ranking and the same coverage (to 1e-9)."""
    words = [
        "ledger",
        "drift",
        "rounding",
        "cache",
        "worker",
        "deploy",
        "retry",
        "timeout",
        "token",
        "parser",
    ]
    texts = [
        " ".join(words[(i * k + i) % len(words)] for k in range(3 + i % 7))
        + (" snake_case_name" if i % 4 == 0 else "")
        for i in range(40)
    ]
    ids: list[dict[str, str]] = [{}, {}]
    for i, text in enumerate(texts):
        for side, app in enumerate((sqlite_app, pg_app)):
            ids[side][_ingest(app, i, text)] = f"run-{i}"
    for query in ["ledger drift", "snake_case_name", "retry timeout token", "cache", "nothing"]:
        match = fts_match(query)
        assert match is not None
        got = [
            [(ids[side][e], round(c, 9)) for e, c in app.store.search_text_scored(match, [API], 15)]
            for side, app in enumerate((sqlite_app, pg_app))
        ]
        assert got[0] == got[1], query


def test_the_postings_rank_as_fts5_does_with_phrases_the_cap_scopes_and_tombstones(
    pg_app: App, sqlite_app: App, monkeypatch: pytest.MonkeyPatch, rng: random.Random
) -> None:
    """Queries are answered from ``builtin_postings`` (migration 7), a phrase of several
    tokens (``word_word``) checked in the newest rows holding its tokens. On a random corpus
    in two repositories, with a scoring cap that leaves most matches out and forgotten
    episodes still indexed, the ranking and coverage are SQLite FTS5's, query after query.
    (Each episode starts at its own minute: two starting together would take each other's
    text as context in an order set by their ids, which differ between the stores.)"""
    vocabulary = sorted(
        {"".join(rng.choices("bcdfgklmnprstvz", k=rng.randint(4, 8))) for _ in range(30)}
    )
    weights = [1 / (i + 1) for i in range(len(vocabulary))]  # a few common words, many rare
    repos = ["github.com/acme/api", "github.com/acme/web"]
    ids: list[dict[str, str]] = [{}, {}]
    pairs: list[str] = []  # identifiers written in the texts: phrases that match
    written: dict[str, set[tuple[str, str]]] = {}  # identifier -> (run, repository) holding it
    for i in range(70):
        words = rng.choices(vocabulary, weights, k=rng.randint(2, 14))
        for k in range(len(words) - 1):
            if rng.random() < 0.25:  # two or three words written as one identifier: a_b(_c)
                joined = words[k : k + rng.choice((2, 2, 3))]
                words[k] = "_".join(joined)
                pairs.append(words[k])
        text = " ".join(words)
        at = f"2026-11-28T{9 + i // 60:02d}:{i % 60:02d}:00Z"
        repo = rng.choice(repos)
        for word in words:
            written.setdefault(word, set()).add((f"run-{i}", repo))
        for side, app in enumerate((sqlite_app, pg_app)):
            ids[side][ingest_text(app.memory, f"run-{i}", at, text, repo=repo)] = f"run-{i}"
    forgotten = ("run-3", "run-40", "run-41")
    for side, app in enumerate((sqlite_app, pg_app)):
        by_run = {run: eid for eid, run in ids[side].items()}
        for run in forgotten:
            app.store.tombstone_episode(by_run[run], 1.8e9)
    scopes = [f"project:{r}" for r in repos]
    for cap in (4_000, 9, 2):
        monkeypatch.setattr(fts5, "MAX_SCORED", cap)
        for _ in range(40):
            words = rng.sample(vocabulary, rng.randint(0, 3))
            if not words or rng.random() < 0.5:  # a phrase: written, or two words never joined
                words.append(
                    rng.choice(pairs)
                    if rng.random() < 0.7
                    else "_".join(rng.sample(vocabulary, rng.choice((2, 3))))
                )
            if rng.random() < 0.2:
                words.append("unseen")
            match = fts_match(" ".join(words))
            assert match is not None
            asked = rng.choice([scopes, scopes[:1], scopes[1:]])
            got = [app.store.search_text_scored(match, asked, 15) for app in (sqlite_app, pg_app)]
            runs = [[ids[side][e] for e, _ in hits] for side, hits in enumerate(got)]
            assert runs[0] == runs[1], (words, asked, cap)
            # Relative: a coverage over IDFs clamped to 1e-6 is a number in the millions.
            assert all(
                math.isclose(a, b, rel_tol=1e-12)
                for (_, a), (_, b) in zip(got[0], got[1], strict=True)
            ), (words, asked, cap)
            # A written identifier is found, when a live episode in an asked scope holds it.
            live = [
                run
                for word in words
                for run, repo in written.get(word, ())
                if run not in forgotten and f"project:{repo}" in asked
            ]
            if live and cap == 4_000:
                assert got[1], (words, live)


def test_forgotten_best_matches_past_the_ordered_head_leave_fts5s_order(
    pg_app: App, sqlite_app: App, rng: random.Random
) -> None:
    """Only the best candidates are put in exact order at first (``_bm25_ranked``'s head);
    when forgotten episodes still indexed fill it, the rest is ordered as it is read. With
    the best 150 of 200 matches forgotten, the answer is still FTS5's, for a word and a
    phrase, asked for one and for many."""
    filler = ["".join(rng.choices("bcdfgklmnprstvz", k=6)) for _ in range(12)]
    ids: list[dict[str, str]] = [{}, {}]
    for i in range(200):
        words = ["vexil"] * rng.randint(1, 4) + ["mork_tand"] * rng.randint(1, 2)
        words += rng.choices(filler, k=rng.randint(0, 30))
        rng.shuffle(words)
        at = f"2026-11-28T{9 + i // 60:02d}:{i % 60:02d}:00Z"
        for side, app in enumerate((sqlite_app, pg_app)):
            ids[side][ingest_text(app.memory, f"run-{i}", at, " ".join(words))] = f"run-{i}"
    match = fts_match("vexil")
    assert match is not None
    best = [ids[0][e] for e, _ in sqlite_app.store.search_text_scored(match, [API], 150)]
    assert len(best) == 150
    for side, app in enumerate((sqlite_app, pg_app)):
        by_run = {run: eid for eid, run in ids[side].items()}
        for run in best:
            app.store.tombstone_episode(by_run[run], 1.8e9)
    apps = (sqlite_app, pg_app)
    for query in ("vexil", "mork_tand", "vexil mork_tand"):
        match = fts_match(query)
        assert match is not None
        for limit in (1, 8, 60):
            got = [app.store.search_text_scored(match, [API], limit) for app in apps]
            runs = [[ids[side][e] for e, _ in hits] for side, hits in enumerate(got)]
            assert runs[0] == runs[1], (query, limit)
            assert len(runs[1]) == min(limit, 50)
            assert not set(runs[1]) & set(best)


def test_a_phrase_is_checked_on_positions_where_its_pairs_are_all_held(
    pg_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phrase of three tokens is checked on its pairs' starts (migration 10): an episode
    holding each adjacent pair of "alpha beta gamma" but never the three in a row,
    newer than the one that holds the phrase, neither matches nor takes the phrase's place
    under the scoring cap. Nor does a pair whose words end one column and start the next."""
    store = pg_app.store
    assert isinstance(store, PostgresStore)

    # Each on a branch of its own: no episode is another's context.
    def put(n: int, text: str) -> str:
        at = f"2026-11-28T09:0{n}:00Z"
        return ingest_text(pg_app.memory, f"run-{n}", at, text, branch=f"b{n}")

    holds = put(1, "alpha beta gamma and more")
    pairs_only = put(2, "alpha beta zeta beta gamma")  # "alpha beta", "beta gamma"
    spanning = put(3, "only alpha")
    store.builtin_put(spanning, "only alpha", "beta gamma summary", None, "", "")
    phrase = fts_match("alpha_beta_gamma")
    assert phrase is not None
    for cap in (4_000, 1):
        monkeypatch.setattr(fts5, "MAX_SCORED", cap)
        assert [e for e, _ in store.search_text_scored(phrase, [API], 10)] == [holds], cap
    pair = fts_match("alpha_beta")
    assert pair is not None
    monkeypatch.setattr(fts5, "MAX_SCORED", 4_000)
    assert {e for e, _ in store.search_text_scored(pair, [API], 10)} == {holds, pairs_only}


def test_scores_tie_only_when_equal_to_eleven_significant_digits() -> None:
    """A word in nearly every episode has its IDF clamped to 1e-6, so its scores differ from
    the sixth decimal on: they still rank by score, not as ties broken by start. Scores that
    differ only in their last bits (the same terms added in another order) are ties."""
    from fleetmem.store.postgres.builtin_index import _rank

    older_better, newer_worse = (1.7579151410725826e-06, 100.0, 1), (1.7578722799e-06, 200.0, 2)
    assert sorted([newer_worse, older_better], key=_rank) == [older_better, newer_worse]
    big, small = (1.7579151410725826e3, 100.0, 3), (1.7578722799e3, 200.0, 4)
    assert sorted([small, big], key=_rank) == [big, small]
    same = 0.1 + 0.2 + 0.3
    again = 0.3 + 0.2 + 0.1  # 0.6000000000000001 and 0.6: one score
    assert same != again
    older, newer = (same, 100.0, 5), (again, 200.0, 6)
    assert sorted([older, newer], key=_rank) == [newer, older]


def test_equal_scores_and_starts_are_ordered_by_episode_id(pg_app: App) -> None:
    """FTS5's last tie-break, kept by the postings path: episodes of equal score and start
    (the same text at the same moment, each on its own branch so none is another's context)
    come in episode id order, for a one-token query and a phrase, across result windows."""
    at = datetime(2026, 11, 28, 9, tzinfo=UTC)
    # Smallest ids stored first, so the newest rows (the first window) hold the largest ids.
    runs = sorted((f"run-{k}" for k in range(40)), key=lambda r: episode_id("coder", r, at))
    ids = [
        ingest_text(pg_app.memory, run, "2026-11-28T09:00:00Z", "vexil mork_tand", branch=run)
        for run in runs
    ]
    assert ids == sorted(ids)
    for query in ("vexil", "mork_tand"):
        match = fts_match(query)
        assert match is not None
        hits = pg_app.store.search_text_scored(match, [API], 40)
        assert [e for e, _ in hits] == sorted(ids)
        assert len({c for _, c in hits}) == 1
        # Fewer asked than tie: the first window (32 rows) runs on to the end of the tie.
        assert [e for e, _ in pg_app.store.search_text_scored(match, [API], 5)] == sorted(ids)[:5]


def _tsvector(held: list[tuple[str, bytes]], text_end: int, summary_end: int) -> str:
    """The ``tsvector`` literal migration 6's layout held for these postings: each position
    labelled by its column (A the text, B the summary, C the context)."""
    parts = []
    for lexeme, packed in sorted(held):
        labels = [
            f"{at}{'A' if at <= text_end else 'B' if at <= summary_end else 'C'}"
            for at in text_index.unpack_positions(packed)
        ]
        quoted = lexeme.replace("\\", "\\\\").replace("'", "''")
        parts.append(f"'{quoted}':{','.join(labels)}")
    return " ".join(parts)


def test_the_postings_migrations_build_the_rows_the_writes_keep(pg_app: App) -> None:
    """Migrations 7 to 10 build each indexed episode's postings, with their positions, its
    list of terms and its pairs' postings, from the ``tsvector`` an older store kept: the same
    rows the index writes keep from then on, and the same answers. The older layout is rebuilt
    here from what the writes stored (a phrase, a term in the summary, terms in the context, a
    quote, a repeated pair, a text whose last word and the summary's first are the tokens of a
    phrase: no pair spans two columns)."""
    store = pg_app.store
    assert isinstance(store, PostgresStore)
    texts = [
        "ledger drift ledger drift",
        "ledger rounding o'brien",
        "cache cache worker ledger_drift",
    ]
    ids = [_ingest(pg_app, n, text) for n, text in enumerate(texts)]
    store.builtin_put(ids[1], "rounding only o'brien ledger", "drift summary", None, "", "")
    postings = (
        "SELECT p.lexeme, s.scope, p.erow, p.n_main, p.n_context, p.doc_len, p.started_at,"
        " p.positions FROM builtin_postings p JOIN builtin_scopes s ON s.id = p.scope_id"
        " ORDER BY 1, 2, 3"
    )
    episodes = (
        "SELECT erow, episode_id, scope, doc_len, text_end, summary_end, started_at, terms"
        " FROM builtin_fts ORDER BY erow"
    )
    pair_postings = (
        "SELECT p.pair, s.scope, p.erow, p.n_main, p.positions, p.doc_len, p.started_at"
        " FROM builtin_pair_postings p JOIN builtin_scopes s ON s.id = p.scope_id"
        " ORDER BY 1, 2, 3"
    )
    kept, indexed = store.db.rows(postings), store.db.rows(episodes)
    pairs_kept = store.db.rows(pair_postings)
    by_erow = {r[0]: r for r in indexed}
    ledger_drift = text_index.pair_id("ledger", "drift")
    # "ledger" ends the text and "drift" starts the summary: no pair of them there.
    assert (ledger_drift, by_erow[indexed[1][0]][0]) not in {(r[0], r[2]) for r in pairs_kept}
    twice = [r for r in pairs_kept if r[0] == ledger_drift and r[2] == indexed[0][0]]
    assert len(twice) == 1 and twice[0][3] >= 2  # written twice in the text
    starts = text_index.unpack_positions(bytes(twice[0][4]))
    assert len(starts) >= twice[0][3] and list(starts) == sorted(starts)
    # some pairs start in the context
    assert any(len(r[4]) // 2 > r[3] for r in pairs_kept)
    assert kept and any(r[4] > 0 for r in kept)  # some positions are in the context
    assert any(r[5] > r[4] for r in indexed)  # a summary
    queries = [
        fts_match(q) for q in ("ledger", "ledger drift", "ledger_drift", "o'brien", '"o brien"')
    ]
    answers = [store.search_text_scored(q or "", [API], 10) for q in queries]
    assert all(answers)
    held: dict[int, list[tuple[str, bytes]]] = {}
    for lexeme, _, erow, *_, packed in kept:
        held.setdefault(erow, []).append((lexeme, bytes(packed)))
    with store.db.write() as conn:
        conn.execute(
            "DROP TABLE builtin_postings, builtin_scopes, builtin_fts, builtin_pair_postings"
        )
        conn.execute(
            "CREATE TABLE builtin_fts (erow bigint PRIMARY KEY,"
            ' episode_id text COLLATE "C" NOT NULL UNIQUE, scope text COLLATE "C" NOT NULL,'
            " doc_len integer NOT NULL, text_end integer NOT NULL, summary_end integer NOT NULL,"
            " tsv tsvector NOT NULL, started_at double precision NOT NULL)"
        )
        for erow, episode, scope, doc_len, text_end, summary_end, started_at, *_ in indexed:
            conn.execute(
                "INSERT INTO builtin_fts VALUES (%s, %s, %s, %s, %s, %s, %s::tsvector, %s)",
                (
                    erow,
                    episode,
                    scope,
                    doc_len,
                    text_end,
                    summary_end,
                    _tsvector(held[erow], text_end, summary_end),
                    started_at,
                ),
            )
        conn.execute("CREATE INDEX builtin_fts_tsv ON builtin_fts USING gin (tsv)")
        conn.execute("CREATE INDEX builtin_fts_scope ON builtin_fts (scope, erow)")
        for version, _, sql in MIGRATIONS:
            if version in (7, 8, 9, 10):
                conn.execute(sql)
    assert store.db.rows(postings) == kept
    assert store.db.rows(pair_postings) == pairs_kept
    assert [(*r[:7], sorted(r[7])) for r in store.db.rows(episodes)] == [
        (*r[:7], sorted(r[7])) for r in indexed
    ]
    assert [store.search_text_scored(q or "", [API], 10) for q in queries] == answers
    columns = {
        str(r[0])
        for r in store.db.rows(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'builtin_fts'"
            " AND table_schema = current_schema()"
        )
    }
    assert "tsv" not in columns and "terms" in columns and "pairs" not in columns
    # The rebuilt tables take writes and deletes as the new ones do.
    _ingest(pg_app, 9, "ledger again")
    assert store.builtin_delete(ids[0])


# ---- jobs ------------------------------------------------------------------------------------
def test_two_daemons_never_claim_the_same_job(pg_app: App) -> None:
    first = pg_app.store
    assert isinstance(first, PostgresStore)
    second = PostgresStore(first.db.url)
    try:
        for n in range(6):
            first.enqueue("record", "elsewhere", f"ep_{n}", None, 10.0 + n)
        a = first.due_jobs(100.0, 4)
        b = second.due_jobs(100.0, 4)
        assert len(a) == 4 and len(b) == 2
        assert not {j.id for j in a} & {j.id for j in b}
        assert first.due_jobs(100.0, 10) == []  # all claimed
        # A daemon killed mid-job leaves a claim that runs out: the job is due again later.
        again = second.due_jobs(100.0 + 301.0, 10)
        assert {j.id for j in again} == {j.id for j in a} | {j.id for j in b}
        # A retried job is released at once, due at its next attempt.
        first.retry_job(a[0].id, 500.0, "provider down")
        assert [j.id for j in first.due_jobs(500.0, 10)] == [a[0].id]
    finally:
        second.close()


# ---- upkeep and health -----------------------------------------------------------------------
def test_upkeep_is_a_no_op_and_the_doctor_reports_the_server(pg_app: App) -> None:
    _ingest(pg_app, 1, "ledger drift")
    store = pg_app.store
    assert store.builtin_segments() == [1]
    done = store.builtin_compact(1.0)
    assert (done.segments_before, done.segments_after, done.complete) == (1, 1, True)
    row = {c.name: c for c in doctor.run_checks(pg_app)}["store"]
    assert row.status == "ok" and "PostgreSQL 1" in row.detail and "pgvector" in row.detail
    assert "***" in row.detail and f"schema {MIGRATIONS[-1][0]}" in row.detail


def test_a_backup_points_to_postgresqls_own_tools(pg_app: App, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="pg_dump"):
        pg_app.store.backup_to(tmp_path / "backup.db")
