"""Shared fixtures: a fleetmem home, real git repositories, run records and wired apps."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetmem.service.bootstrap import App, build
from fleetmem.service.memory import MemoryService
from fleetmem.store.base import Store
from tests import store_kinds

pytest_plugins = ["tests.fakes.openai_server"]

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "run-record.json"

# Queries embed by the shipped model throughout the tests, whether or not this machine has made
# the int8 copy (fleetmem.embed.query_model): a ranking a test checks must not depend on what an
# earlier test or daemon left in ~/.cache. tests/embed/test_query_model.py turns it on itself.
os.environ.setdefault("FLEETMEM_QUERY_MODEL", "full")


@pytest.fixture
def rng() -> random.Random:
    """Fresh random values every run, from a seed printed with the test's output (pytest
    shows it when the test fails), so a failure can be replayed: ``FLEETMEM_TEST_SEED=SEED``."""
    seed = int(os.environ.get("FLEETMEM_TEST_SEED") or random.SystemRandom().randrange(2**32))
    print(f"random seed {seed}")
    return random.Random(seed)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "fleetmem-home"
    path.mkdir()
    return path


def write_config(home: Path, text: str) -> None:
    (home / "fleetmem.toml").write_text(text, encoding="utf-8")


class ControlTokenAuth(httpx.Auth):
    """Sends ``<home>/control.token`` as the bearer token (read when each request goes out,
    since the daemon creates it), unless the request carries its own Authorization."""

    def __init__(self, home: Path) -> None:
        self.path = home / "control.token"

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        if "authorization" not in request.headers and self.path.exists():
            request.headers["Authorization"] = f"Bearer {self.path.read_text().strip()}"
        yield request


def api_client(base_url: str, home: Path, **kwargs: Any) -> httpx.Client:
    """An httpx client for the daemon of ``home``, authorized with its control token."""
    return httpx.Client(base_url=base_url, auth=ControlTokenAuth(home), **kwargs)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # The contract: storage-touching tests of these directories run on both stores, unless
    # marked sqlite_only (with the reason: what they read of SQLite, what covers PostgreSQL).
    if "store_kind" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("sqlite_only")
    if only is not None:
        assert only.kwargs.get("reason"), f"{metafunc.definition.nodeid}: sqlite_only(reason=...)"
        return
    if store_kinds.runs_on_both(metafunc.definition.nodeid):
        metafunc.parametrize("store_kind", store_kinds.KINDS, indirect=True)


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgres`` (see tests/store_kinds.py); SQLite outside the contract."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def store_env(store_kind: str) -> Iterator[dict[str, str]]:
    """The environment that selects this test's store: nothing for SQLite, a fresh schema's
    ``FLEETMEM_STORE_URL`` for PostgreSQL (dropped after the test)."""
    if store_kind == "sqlite":
        yield {}
        return
    base = store_kinds.required_url()
    schema, url = store_kinds.fresh_schema(base)
    yield {"FLEETMEM_STORE_URL": url}
    store_kinds.drop_schema(base, schema)


@pytest.fixture
def new_store(tmp_path: Path, store_env: dict[str, str]) -> Iterator[Callable[[], Store]]:
    """Open this test's store (each call opens it again: another process's view of the same
    data). The stores opened are closed after the test."""
    opened: list[Store] = []

    def factory() -> Store:
        url = store_env.get("FLEETMEM_STORE_URL")
        if url is None:
            from fleetmem.store.sqlite.store import SqliteStore

            store: Store = SqliteStore(tmp_path / "store.db")
        else:
            from fleetmem.store.postgres.store import PostgresStore

            store = PostgresStore(url)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def reopen(store: Store) -> Store:
    """``store`` opened again (its own connections and caches), as another process would."""
    from fleetmem.store.postgres.store import PostgresStore
    from fleetmem.store.sqlite.store import SqliteStore

    if isinstance(store, PostgresStore):
        return PostgresStore(store.db.url)
    assert isinstance(store, SqliteStore)
    return SqliteStore(store.db.path)


def sql_rows(store: Store, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement of plain SQL (``?`` placeholders) on either store: for tests that
    read or set up rows no store method exposes."""
    from fleetmem.store.postgres.store import PostgresStore
    from fleetmem.store.sqlite.store import SqliteStore

    if isinstance(store, PostgresStore):
        with store.db.connection() as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
    assert isinstance(store, SqliteStore)
    return [tuple(r) for r in store.db.conn.execute(sql, params).fetchall()]


def database_error(store: Store) -> type[Exception]:
    """The exception the store's driver raises when the database refuses a statement."""
    import sqlite3

    import psycopg

    from fleetmem.store.postgres.store import PostgresStore

    return psycopg.Error if isinstance(store, PostgresStore) else sqlite3.DatabaseError


def fail_inserts(store: Store, table: str, message: str = "disk I/O error") -> None:
    """Make every insert into ``table`` fail in the database itself (a trigger)."""
    from fleetmem.store.postgres.store import PostgresStore

    if isinstance(store, PostgresStore):
        sql_rows(
            store,
            f"CREATE FUNCTION fail_{table}() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN RAISE EXCEPTION '{message}'; END $$",
        )
        sql_rows(
            store,
            f"CREATE TRIGGER fail_{table} BEFORE INSERT ON {table}"
            f" FOR EACH ROW EXECUTE FUNCTION fail_{table}()",
        )
        return
    sql_rows(
        store,
        f"CREATE TRIGGER fail_{table} BEFORE INSERT ON {table}"
        f" BEGIN SELECT RAISE(ABORT, '{message}'); END",
    )


def allow_inserts(store: Store, table: str) -> None:
    """Undo :func:`fail_inserts`."""
    from fleetmem.store.postgres.store import PostgresStore

    on = f" ON {table}" if isinstance(store, PostgresStore) else ""
    sql_rows(store, f"DROP TRIGGER fail_{table}{on}")


@contextmanager
def home_store(home: Path) -> Iterator[Store]:
    """The store a CLI started on ``home`` opens (its ``[store] url``, else its SQLite file)."""
    from fleetmem.config import load_global
    from fleetmem.service.bootstrap import open_store

    store = open_store(home, load_global(home), {})
    try:
        yield store
    finally:
        store.close()


def stored_bytes(store: Store, *, files: bool = True) -> bytes:
    """Every byte the store holds, to search for what must never be stored: the SQLite file
    and its WAL (its rows as SQL with ``files=False``: free pages may keep deleted words), or
    the text of every row of every table of the PostgreSQL store's schema."""
    from fleetmem.store.postgres.store import PostgresStore
    from fleetmem.store.sqlite.store import SqliteStore

    if isinstance(store, PostgresStore):
        tables = store.db.rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
        )
        dump = [
            str(row[0]).encode()
            for (name,) in tables
            for row in store.db.rows(f"SELECT t::text FROM {name} t")
        ]
        return b"\n".join(dump)
    assert isinstance(store, SqliteStore)
    # Long text columns are stored deflated: their text is added as it reads, or a search
    # of the raw bytes could never find what they hold.
    expanded = _packed_text(store)
    if not files:
        return "\n".join(store.db.conn.iterdump()).encode() + expanded
    path = Path(store.db.path)
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"") + expanded


def _packed_text(store: Any) -> bytes:
    from fleetmem.store.sqlite.copying import PACKED
    from fleetmem.store.sqlite.packed import unpack

    conn = store.db.conn
    out = []
    for table, columns in PACKED.items():
        for row in conn.execute(f"SELECT {', '.join(columns)} FROM {table}"):
            out.extend((unpack(v) or "").encode() for v in row)
    # Packed against their episode's body: the rendering, and what the text index holds
    # (an entry whose episode row is gone could not be read, and is an error here).
    for text, body in conn.execute("SELECT text, episode_json FROM episodes"):
        out.append((unpack(text, unpack(body)) or "").encode())
    for indexed, body in conn.execute(
        "SELECT f.indexed, e.episode_json FROM builtin_fts_source f"
        " LEFT JOIN episodes e ON e.rowid = f.rowid"
    ):
        out.append((unpack(indexed, unpack(body)) or "").encode())
    return b"\n" + b"\n".join(out)


@pytest.fixture
def make_app(home: Path, store_env: dict[str, str]) -> Iterator[Callable[..., App]]:
    """Build an App over ``home`` and this test's store; vectors off unless ``config`` says
    otherwise."""
    apps: list[App] = []

    def factory(config: str = '[model_api]\nembedding_model = ""\n', **env: str) -> App:
        url = store_env.get("FLEETMEM_STORE_URL")
        # The home names its store, so a CLI or daemon started on it later uses the same.
        write_config(home, config if url is None else f'{config}\n[store]\nurl = "{url}"\n')
        app = build(home, {"HOME": str(home.parent), **store_env, **env})
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.close()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args],
        check=True,
        capture_output=True,
        text=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin"},
    ).stdout.strip()


@pytest.fixture
def git_repo(tmp_path: Path) -> Callable[..., Path]:
    """Create a real repository with an origin remote and a checked-out branch."""

    def factory(name: str = "api", remote: str | None = None, branch: str = "main") -> Path:
        root = tmp_path / "repos" / name
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", branch)
        if remote is not None:
            git(root, "remote", "add", "origin", remote)
        return root.resolve()

    return factory


def example_record() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return data


def make_record(**overrides: Any) -> dict[str, Any]:
    """The example record with fields replaced; ``sessions`` may be given whole."""
    data = copy.deepcopy(example_record())
    data.update(overrides)
    return data


def ingest_text(
    memory: MemoryService,
    run_id: str,
    at: str,
    text: str,
    *,
    agent: str = "coder",
    repo: str = "github.com/acme/api",
    branch: str = "main",
) -> str:
    """Record one run whose result is ``text``, started and ended at ``at``; its episode id."""
    record = make_record(
        run_id=run_id,
        agent=agent,
        started_at=at,
        ended_at=at,
        result_text=text,
        sessions=[session(repo=repo, branch=branch)],
    )
    result = memory.ingest_run(record)
    assert result.status == "recorded" and result.episode_id is not None, result
    return result.episode_id


def session(
    sid: str = "s1",
    *,
    cwd: str = "/home/dev/src/api",
    repo: str | None = "github.com/acme/api",
    branch: str | None = "main",
    edits: tuple[str, ...] = (),
    failures: tuple[str, ...] = (),
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": sid, "cwd": cwd, **extra}
    if repo is not None:
        out["repo"] = repo
    if branch is not None:
        out["branch"] = branch
    events: list[dict[str, Any]] = [{"type": "edit", "path": p} for p in edits]
    events += [{"type": "verify", "passed": False, "error_class": c} for c in failures]
    out["events"] = events
    return out


# Under `make unit` (xdist, --dist loadfile) a test file runs whole on one worker, and files
# are handed out in collection order. These files take one to two minutes each on their own
# (a daemon fuzzed by schemathesis, the remote CLI against one daemon, wheel installs, the
# benchmarks in tiny mode); collected last, as their directories sort, they left one worker
# busy while the other sat idle. Collected first, the short files fill in around them.
# The order of all other tests is unchanged (the sort is stable).
LONG_FILES_FIRST = (
    "tests/surfaces/test_cli_remote.py",
    "tests/surfaces/test_schemathesis.py",
    "tests/packaging/test_install_paths.py",
    "tests/bench/test_bench_tiny.py",
    "tests/embed/test_plain_pip_install.py",
    "tests/ingress/test_write_routes.py",
    "tests/ingress/test_wide_corpus.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(__file__).resolve().parent.parent
    missing = [path for path in LONG_FILES_FIRST if not (root / path).is_file()]
    assert not missing, f"LONG_FILES_FIRST names files that are gone: {missing}"
    rank = {path: index for index, path in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
