"""The stores the contract tests run on: SQLite always, PostgreSQL when one is configured.

Tests under :data:`BOTH_STORES` that use ``make_app``, ``store_env`` or ``new_store`` run
twice, ``[sqlite]`` and ``[postgres]`` (``tests/conftest.py`` parametrizes them). The
PostgreSQL server is ``FLEETMEM_TEST_STORE_URL``, else the cluster ``make postgres`` started
(its URL is in ``.venv/postgres/url``). Each test gets a schema of its own in that database,
dropped afterwards, so tests running in parallel never see each other's rows.

Without a server the ``[postgres]`` tests are skipped, saying so; under CI (``CI`` set) they
fail instead, so CI cannot pass without having run them.
"""

from __future__ import annotations

import functools
import os
import secrets
from pathlib import Path
from urllib.parse import quote, urlsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
URL_FILE = ROOT / ".venv" / "postgres" / "url"
URL_ENV = "FLEETMEM_TEST_STORE_URL"
#: Test directories whose storage-touching tests run on both stores.
BOTH_STORES = (
    "tests/store/",
    "tests/service/",
    "tests/facts/",
    "tests/files/",
    "tests/runs/",
    "tests/doctor/",
)
KINDS = ("sqlite", "postgres")
SCHEMA_PREFIX = "fleetmem_test_"


def runs_on_both(nodeid: str) -> bool:
    return nodeid.startswith(BOTH_STORES)


@functools.cache
def server_url() -> tuple[str | None, str]:
    """(the test server's URL, or None and why there is none)."""
    url = os.environ.get(URL_ENV, "").strip()
    origin = URL_ENV
    if not url and URL_FILE.is_file():
        url, origin = URL_FILE.read_text(encoding="utf-8").strip(), str(URL_FILE)
    if not url:
        return None, f"no PostgreSQL server configured: run `make postgres` or set {URL_ENV}"
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"the PostgreSQL server of {origin} does not answer ({first}): make postgres"
    return url, origin


def required_url() -> str:
    """The server's URL; skips the test without one, or fails it under CI."""
    import pytest

    url, why = server_url()
    if url is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL store tests: {why}")
        pytest.skip(why)
    return url


def fresh_schema(base: str) -> tuple[str, str]:
    """A new empty schema in the server's database: (its name, a URL that uses it)."""
    name = SCHEMA_PREFIX + secrets.token_hex(6)
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    # pgvector's type lives in public: the schema first, then public.
    options = quote(f"-c search_path={name},public")
    joiner = "&" if urlsplit(base).query else "?"
    return name, f"{base}{joiner}options={options}"


def drop_schema(base: str, name: str) -> None:
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
