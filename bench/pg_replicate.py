"""A larger PostgreSQL store made from a filled one, in SQL: ``factor`` copies of every run and
episode, so recall can be measured at 1,000,000 episodes without embedding and indexing them
one by one (at 24-39 episodes/s through the product, that fill alone would take 7 to 11 hours
on this machine; copying takes minutes).

What a copy is, and why:

- Copy 0 is the source as it stands. Copy ``k`` is every run and episode again, with ``k``
  times the source's span (plus a day) taken off every time, so the copies are older history of
  the same repositories: a scope holds ``factor`` times the episodes, as it would after months
  more work. Row numbers follow time as they do in a real store (copy 0 has the highest), so
  "newest first" reads see what they would see.
- A copy's episode ids are fresh (``ep_`` and 20 hex digits of an md5 of the source id and the
  copy, the product's id format); its run ids get ``-cK``. The JSON of each is rewritten for
  both ids; its dates are not (nothing on the recall path reads them).
- Texts, summaries, postings and vectors are repeated as they are. The source fill already
  reuses 2,000 real vectors across all its episodes (``bench/populate.py``), so repeating them
  keeps its method; the text index's statistics are multiplied to match.
- The tables recall reads (runs, episodes, the provider index, the built-in text and vector
  index) are multiplied; the rest (sessions, events, paths, jobs, cached embeddings) are copied
  once.

The big tables are loaded without their indexes and constraints, which are then built again as
the target's migrations made them (and the source's HNSW index, which the product creates on a
first vector). ``python -m bench.pg_replicate --from SCHEMA --to SCHEMA --factor N`` runs it
alone; ``bench_fleet --large N`` uses it by default.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bench.fleet_procs import schema_url, stored_episodes

#: Tables whose rows are repeated per copy, in load order, with each column's expression for
#: copy ``k``; a column not named is copied as it is. ``{id}``/``{run}`` stand for the copy's
#: new episode and run ids of the row's own columns; ``{shift}``, ``{erow}``, ``{seq}`` for
#: the copy's offsets.
MULTIPLIED: dict[str, dict[str, str]] = {
    "runs": {
        "run_id": "{run:run_id}",
        "seq": "seq + {seq_runs}",
        "started_at": "started_at - {shift}",
        "ended_at": "ended_at - {shift}",
        "ingested_at": "ingested_at - {shift}",
        "record_json": "replace(record_json, run_id, {run:run_id})",
    },
    "episodes": {
        "erow": "erow + {erow}",
        "id": "{id:id}",
        "run_id": "{run:run_id}",
        "started_at": "started_at - {shift}",
        "recorded_at": "recorded_at - {shift}",
        "forgotten_at": "forgotten_at - {shift}",
        "episode_json": "replace(replace(episode_json, id, {id:id}), run_id, {run:run_id})",
    },
    "provider_index": {
        "provider_id": "CASE WHEN provider_id = episode_id THEN {id:episode_id}"
        " ELSE provider_id || '-c{k}' END",
        "episode_id": "{id:episode_id}",
        "recorded_at": "recorded_at - {shift}",
        "forgotten_at": "forgotten_at - {shift}",
    },
    "builtin_fts": {
        "erow": "erow + {erow}",
        "episode_id": "{id:episode_id}",
        "started_at": "started_at - {shift}",
    },
    "builtin_postings": {"erow": "erow + {erow}", "started_at": "started_at - {shift}"},
    "builtin_pair_postings": {"erow": "erow + {erow}", "started_at": "started_at - {shift}"},
    "builtin_vectors": {"seq": "seq + {seq_vectors}", "episode_id": "{id:episode_id}"},
}

#: Kept by the target's own migrations.
SKIPPED = ("schema_migrations",)

#: Counts of the text index that grow with the copies.
SCALED = {
    "builtin_terms": ("docs", "in_text", "in_summary", "in_context"),
    "builtin_totals": ("docs", "tokens"),
}

Progress = Callable[[str], None]


def _expr(template: str, k: int, offsets: dict[str, float]) -> str:
    """``template`` for copy ``k``: ids renamed (copy 0 keeps them), offsets filled in."""
    out = template
    for kind in ("id", "run"):
        while "{" + kind + ":" in out:
            start = out.index("{" + kind + ":")
            end = out.index("}", start)
            column = out[start + len(kind) + 2 : end]
            if k == 0:
                new = column
            elif kind == "id":
                new = f"'ep_' || substr(md5({column} || ':{k}'), 1, 20)"
            else:
                new = f"{column} || '-c{k}'"
            out = out[:start] + new + out[end + 1 :]
    values = {"k": k} | {name: repr(v) for name, v in offsets.items()}
    for name, value in values.items():
        out = out.replace("{" + name + "}", str(value))
    return out


def _columns(conn: psycopg.Connection[Any], schema: str, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
        " AND table_name = %s ORDER BY ordinal_position",
        (schema, table),
    ).fetchall()
    return [str(r[0]) for r in rows]


def _tables(conn: psycopg.Connection[Any], schema: str) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
    ).fetchall()
    return [str(r[0]) for r in rows]


def _constraints(
    conn: psycopg.Connection[Any], schema: str, kinds: str, tables: Sequence[str] | None = None
) -> list[tuple[str, str, str]]:
    """(table, name, definition) of the constraints of ``kinds`` (p, u, f) in ``schema``."""
    rows = conn.execute(
        "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k"
        " JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND k.contype = ANY(%s) ORDER BY c.relname, k.conname",
        (schema, list(kinds)),
    ).fetchall()
    return [(str(t), str(n), str(d)) for t, n, d in rows if tables is None or t in tables]


def _indexes(conn: psycopg.Connection[Any], schema: str, table: str) -> dict[str, str]:
    """The indexes of ``table`` that no constraint owns: name -> CREATE INDEX statement."""
    rows = conn.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = %s"
        " AND i.tablename = %s AND NOT EXISTS (SELECT 1 FROM pg_constraint k"
        " JOIN pg_namespace n ON n.oid = k.connamespace"
        " WHERE n.nspname = %s AND k.conname = i.indexname)",
        (schema, table, schema),
    ).fetchall()
    return {str(n): str(d) for n, d in rows}


def _of(conn: psycopg.Connection[Any], schema: str, table: str, aggregate: str) -> float:
    """``aggregate`` (``max(erow)``) over ``table`` of ``schema``, 0 for no rows."""
    row = conn.execute(f"SELECT coalesce({aggregate}, 0) FROM {schema}.{table}").fetchone()
    return float(row[0]) if row else 0.0


def replicate(
    base: str, source: str, target: str, factor: int, progress: Progress | None = None
) -> dict[str, Any]:
    """Fill schema ``target`` (made and migrated here; it must not hold episodes) with
    ``factor`` copies of schema ``source``; figures of the work."""
    say = progress or (lambda _m: None)
    if factor < 1:
        raise ValueError(f"factor: {factor!r} is not a whole number of copies of at least 1")
    for name in (source, target):
        if not name.isidentifier() or not name.islower():
            raise ValueError(f"schema: {name!r} is not a lower-case identifier")
    if source == target:
        raise ValueError(f"--to: {target!r} is the source schema")
    held = stored_episodes(base, source)
    if held == 0:
        raise ValueError(f"--from: schema {source!r} holds no indexed episode")
    from fleetmem.store.postgres.store import PostgresStore

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {target}")
    PostgresStore(schema_url(base, target)).close()  # the target's own migrations
    if stored_episodes(base, target):
        raise ValueError(f"--to: schema {target!r} already holds episodes")
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute("SET synchronous_commit = off")
        conn.execute("SET statement_timeout = 0")
        source_tables = set(_tables(conn, source))
        target_tables = _tables(conn, target)
        big = [t for t in MULTIPLIED if t in target_tables]
        foreign = _constraints(conn, target, "f")
        keys = _constraints(conn, target, "pu", big)
        indexes = {t: _indexes(conn, target, t) for t in big}
        for t in big:  # indexes the product makes on first use (the HNSW index)
            for name, sql in _indexes(conn, source, t).items():
                if name not in indexes[t]:
                    indexes[t][name] = sql.replace(f" {source}.", f" {target}.")
        t0 = time.perf_counter()
        for table, name, _ in foreign:
            conn.execute(f"ALTER TABLE {target}.{table} DROP CONSTRAINT {name}")
        for table, name, _ in keys:
            conn.execute(f"ALTER TABLE {target}.{table} DROP CONSTRAINT {name}")
        for table in big:
            for name in _indexes(conn, target, table):
                conn.execute(f"DROP INDEX {target}.{name}")
        span = _of(conn, source, "runs", "max(ended_at)") - min(
            _of(conn, source, "runs", "min(started_at)"),
            _of(conn, source, "episodes", "min(started_at)"),
        )
        offsets_base = {
            "erow": int(_of(conn, source, "episodes", "max(erow)")) + 1,
            "seq_runs": int(_of(conn, source, "runs", "max(seq)")) + 1,
            "seq_vectors": int(_of(conn, source, "builtin_vectors", "max(seq)")) + 1,
        }
        for table in target_tables:
            if table in SKIPPED or table in MULTIPLIED or table not in source_tables:
                continue
            theirs = _columns(conn, source, table)
            columns = [c for c in _columns(conn, target, table) if c in theirs]
            cols = ", ".join(columns)
            conn.execute(f"DELETE FROM {target}.{table}")
            conn.execute(
                f"INSERT INTO {target}.{table} ({cols}) OVERRIDING SYSTEM VALUE"
                f" SELECT {cols} FROM {source}.{table}"
            )
        seconds["drop_and_small_tables"] = time.perf_counter() - t0
        for table in big:
            t0 = time.perf_counter()
            columns = _columns(conn, target, table)
            for k in range(factor):
                later = factor - 1 - k  # copy 0, the source, keeps the highest row numbers
                offsets = {
                    "shift": float(k * (span + 86_400)),
                    "erow": offsets_base["erow"] * later,
                    "seq_runs": offsets_base["seq_runs"] * later,
                    "seq_vectors": offsets_base["seq_vectors"] * later,
                }
                exprs = [
                    _expr(MULTIPLIED[table].get(c, c), k, offsets) + f" AS {c}" for c in columns
                ]
                conn.execute(
                    f"INSERT INTO {target}.{table} ({', '.join(columns)}) OVERRIDING SYSTEM VALUE"
                    f" SELECT {', '.join(exprs)} FROM {source}.{table}"
                )
                say(f"replicate: {table} copy {k + 1} of {factor}")
            seconds[f"load_{table}"] = time.perf_counter() - t0
        for table, columns in SCALED.items():
            sets = ", ".join(f"{c} = {c} * {factor}" for c in columns)
            conn.execute(f"UPDATE {target}.{table} SET {sets}")
        for table, name, definition in keys:
            t0 = time.perf_counter()
            conn.execute(f"ALTER TABLE {target}.{table} ADD CONSTRAINT {name} {definition}")
            seconds[f"key_{name}"] = time.perf_counter() - t0
            say(f"replicate: {name} built")
        for table in big:
            for name, sql in indexes[table].items():
                t0 = time.perf_counter()
                conn.execute(sql)
                seconds[f"index_{name}"] = time.perf_counter() - t0
                say(f"replicate: {name} built")
        t0 = time.perf_counter()
        for table, name, definition in foreign:  # it names the referenced table's schema
            conn.execute(f"ALTER TABLE {target}.{table} ADD CONSTRAINT {name} {definition}")
        seconds["foreign_keys"] = time.perf_counter() - t0
        _identities(conn, target)
        t0 = time.perf_counter()
        say("replicate: VACUUM ANALYZE")
        for table in target_tables:
            conn.execute(f"VACUUM ANALYZE {target}.{table}")
        seconds["vacuum_analyze"] = time.perf_counter() - t0
    return {
        "source": source,
        "target": target,
        "factor": factor,
        "source_episodes": held,
        "episodes": stored_episodes(base, target),
        "seconds": round(time.perf_counter() - started, 1),
        "steps_s": {k: round(v, 1) for k, v in seconds.items()},
        "method": "SQL copies of the source store (bench/pg_replicate.py): ids renamed, times"
        " shifted back a span per copy; texts, postings and vectors repeated",
    }


def _identities(conn: psycopg.Connection[Any], schema: str) -> None:
    """Every identity column's sequence moved past the rows loaded with explicit values."""
    rows = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = %s AND is_identity = 'YES'",
        (schema,),
    ).fetchall()
    for table, column in rows:
        top = int(_of(conn, schema, str(table), f"max({column})"))
        if top > 0:
            conn.execute(
                "SELECT setval(pg_get_serial_sequence(%s, %s), %s)",
                (f"{schema}.{table}", str(column), top),
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pg_replicate", description=__doc__)
    parser.add_argument("--from", dest="source", required=True, help="a filled schema")
    parser.add_argument("--to", dest="target", required=True, help="a new schema")
    parser.add_argument("--factor", type=int, required=True, help="copies, the source's included")
    parser.add_argument("--url", default=None, help="the server (default: make postgres's)")
    args = parser.parse_args(argv)
    from bench.bench_pg_text import default_url

    url = args.url or default_url()
    if url is None:
        print("pg_replicate: no PostgreSQL server (run make postgres or pass --url)")
        return 2
    try:
        out = replicate(url, args.source, args.target, args.factor, print)
    except ValueError as err:
        print(f"pg_replicate: {err}")
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
