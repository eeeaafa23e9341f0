"""Where a store's bytes go, per episode, and what the daemon holds in memory (issue 20,
part 6), on SQLite and on PostgreSQL in the same run.

Each store is filled by :mod:`bench.populate`'s bulk path (the deferred write path, the
background job recording each episode through the built-in provider; only the first
vectors really embedded, the rest reused, as that module documents: a vector's bytes do not
depend on its values). SQLite at ``--size`` (100,000 by default), PostgreSQL at
``--pg-size`` (20,000 by default: filling PostgreSQL runs at 24 to 39 episodes a second on
this machine, so 100,000 takes more than an hour; ``--pg-size 100000`` measures it).
``FLEETMEM_BENCH_PG_SCHEMA=NAME`` measures that schema of the server, filled only up to
``--pg-size`` from what it holds and kept afterwards (as :mod:`bench.bench_fleet` does).

On disk, every table and index is put in one class, and each class is reported in bytes per
episode:

* ``run records``: what arrived from the agent (``runs``, ``sessions``, ``events``,
  ``run_paths`` and their indexes);
* ``episodes``: each episode's body and its rendered text, with the columns people filter on;
* ``vectors``: the embedding cache and the built-in index's links to it;
* ``text index``: the full-text index's own structures and the words it indexes;
* ``neighbour context``: the stored text of nearby runs each episode is indexed with (SQLite:
  the share of ``builtin_fts_source``, the copy of what the contentless index indexed, that is
  context, by what each part costs packed; PostgreSQL stores no copy of it, only its terms'
  postings, so there it is part of ``text index``);
* ``term statistics``: the per-scope term counts BM25's statistics come from;
* ``jobs and provider index``, ``facts and files`` (empty here), ``other``; and the free
  space the store keeps (SQLite's free pages; PostgreSQL's are inside the relations).

SQLite sizes are ``dbstat``'s pages (what the file holds, per object); PostgreSQL's are
``pg_relation_size`` of each table, its TOAST table and each index. Resident memory is
:func:`bench.bench_daemon.measure`'s: a real ``fleetmem serve`` over the store, after warm-up
recalls and measured recalls through the HTTP API.

    python -m bench.bench_footprint [--size N] [--pg-size N] [--url URL] [--quick]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from bench import harness
from bench.common import FleetData, machine_line, write_result
from fleetmem.store.sqlite import fts_source
from fleetmem.store.sqlite.packed import pack, pack_against, unpack

SIZE = 100_000
PG_SIZE = 20_000
#: Runs recorded through the daemon after its recalls (full runs only): a daemon that records
#: runs holds the document model too, until it has been quiet a while (``after_idle``).
INGEST = 20
QUICK_SIZE = 2_000
REAL_VECTORS = 2_000

#: Tables by class; an index goes with its table.
CLASSES: dict[str, tuple[str, ...]] = {
    "run records": (
        "runs",
        "sessions",
        "events",
        "event_rows",
        "event_paths",
        "run_paths",
        "run_path_links",
        "store_paths",
        "live_runs",
        "live_run_files",
    ),
    "episodes": ("episodes",),
    "vectors": ("embeddings", "builtin_vectors"),
    "text index": (
        "builtin_fts",
        "builtin_fts_data",
        "builtin_fts_idx",
        "builtin_fts_docsize",
        "builtin_fts_config",
        "builtin_fts_source",
        "builtin_postings",
        "builtin_pair_postings",
        "builtin_scopes",
    ),
    "term statistics": ("builtin_terms", "builtin_term_counts", "builtin_totals"),
    "jobs and provider index": ("jobs", "provider_index", "store_leases"),
    "facts and files": (
        "facts",
        "fact_revisions",
        "fact_vectors",
        "fact_journal",
        "fact_provenance",
        "context_files",
        "context_file_revisions",
    ),
}
_CLASS_OF = {table: name for name, tables in CLASSES.items() for table in tables}


def _class_of(table: str) -> str:
    return _CLASS_OF.get(table, "other")


def _per_episode(sizes: dict[str, int], episodes: int) -> dict[str, Any]:
    total = sum(sizes.values())
    return {
        "episodes": episodes,
        "total_bytes": total,
        "bytes_per_episode": round(total / max(1, episodes)),
        "classes": {
            name: {"bytes": b, "per_episode": round(b / max(1, episodes))}
            for name, b in sorted(sizes.items(), key=lambda kv: -kv[1])
        },
    }


# ---- SQLite --------------------------------------------------------------------------------
def sqlite_footprint(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        episodes = int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master"))
        sizes: dict[str, int] = {}
        objects: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)  # sqlite_schema and autoindexes name their table
            if name.startswith("sqlite_autoindex_"):
                table = name.removeprefix("sqlite_autoindex_").rsplit("_", 1)[0]
            objects[name] = int(size)
            sizes[_class_of(table)] = sizes.get(_class_of(table), 0) + int(size)
        # Context's share of what the index keeps of each row (the copy beside the contentless
        # index, fts_source), moved to its own class.
        own = near = 0
        for rowid, scope, stored in conn.execute(
            "SELECT e.rowid, e.scope, e.episode_json FROM builtin_fts_source f"
            " JOIN episodes e ON e.rowid = f.rowid"
        ):
            body = unpack(stored)
            held = fts_source.read(conn, int(rowid), body, fts_source.scope_token(str(scope)))
            text, summary, context, _scope_key = held or ("", "", "", "")
            # The entry is packed against the episode's body, which holds the indexed text
            # but not the neighbours' context: each part's share is what it costs packed so.
            own += len(pack_against(json.dumps([text, summary]), body) or b"")
            near += len(pack(json.dumps([context])) or b"")
        kept = objects.get("builtin_fts_source", 0)
        context = round(kept * near / max(1, own + near))
        sizes["text index"] -= context
        sizes["neighbour context"] = context
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        free = int(conn.execute("PRAGMA freelist_count").fetchone()[0]) * page
        sizes["free pages"] = free
        # A store in incremental auto-vacuum mode keeps pointer-map pages, which dbstat
        # does not list: whatever the file holds beyond its objects and free list.
        whole = int(conn.execute("PRAGMA page_count").fetchone()[0]) * page
        maps = whole - sum(objects.values()) - free
        if maps:
            sizes["page maps"] = maps
    finally:
        conn.close()
    wal = db.with_name(db.name + "-wal")
    out = _per_episode(sizes, episodes)
    out["file_bytes"] = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    out["largest_objects"] = {
        k: round(v / max(1, episodes)) for k, v in sorted(objects.items(), key=lambda kv: -kv[1])
    }
    return out


# ---- PostgreSQL ----------------------------------------------------------------------------
def pg_footprint(base: str, schema: str) -> dict[str, Any]:
    sizes: dict[str, int] = {}
    objects: dict[str, int] = {}
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"SET search_path = {schema}, public")
        counted = conn.execute("SELECT count(*) FROM episodes").fetchone()
        episodes = int(counted[0]) if counted else 0
        rows = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid)"
            " + coalesce(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0),"
            " coalesce((SELECT sum(pg_relation_size(i.indexrelid)) FROM pg_index i"
            "   WHERE i.indrelid = c.oid), 0)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchall()
        for table, heap, indexes in rows:
            objects[f"{table} (table)"] = int(heap)
            objects[f"{table} (indexes)"] = int(indexes)
            cls = _class_of(str(table))
            sizes[cls] = sizes.get(cls, 0) + int(heap) + int(indexes)
    out = _per_episode(sizes, episodes)
    out["largest_objects"] = {
        k: round(v / max(1, episodes)) for k, v in sorted(objects.items(), key=lambda kv: -kv[1])
    }
    return out


# ---- the run -------------------------------------------------------------------------------
def run(quick: bool = False) -> dict[str, Any]:
    """What ``run_all`` calls: the default sizes (``quick``: :data:`QUICK_SIZE` each), on
    the PostgreSQL server ``make postgres`` started, if any."""
    from bench.bench_pg_text import default_url

    size = QUICK_SIZE if quick else SIZE
    pg_size = QUICK_SIZE if quick else PG_SIZE
    warm, n = (5, 20) if quick else (30, 100)
    return measure(
        size, pg_size, default_url(), min(REAL_VECTORS, size), warm, n, idle_s=_idle(quick)
    )


def _idle(quick: bool) -> float:
    """How long the SQLite daemon is left quiet before its last reading: past the token
    counter's release (``TOKENIZER_IDLE_S``) and two 15-second job ticks; 0 (no idle reading)
    in quick runs."""
    from fleetmem.service.jobs import TOKENIZER_IDLE_S

    return 0.0 if quick else TOKENIZER_IDLE_S + 35.0


def measure(
    size: int,
    pg_size: int,
    url: str | None,
    real_vectors: int,
    warm: int,
    n: int,
    *,
    idle_s: float = 0.0,
) -> dict[str, Any]:
    """The figures of one run at the given sizes (see the module docstring); ``idle_s``
    adds the SQLite daemon's memory after that long without a request."""
    from bench import bench_daemon
    from bench.bench_fleet import _populate_pg, plan
    from bench.fleet_procs import bench_schema, write_home

    out: dict[str, Any] = {"plan": {"size": size, "pg_size": pg_size, "real_vectors": real_vectors}}
    work = Path(tempfile.mkdtemp(prefix="fleetmem-bench-footprint-"))
    try:
        home = work / "sqlite"
        harness.progress(f"footprint: SQLite store of {size:,} episodes")
        # bench_daemon's store, at the size asked for (no fallback to a smaller one).
        stats = bench_daemon._store(home, size, real_vectors, forced=True)
        disk = sqlite_footprint(home / "fleetmem.db")
        memory = bench_daemon.measure(
            home, disk["episodes"], warm, n, idle_s=idle_s, ingest=INGEST if idle_s else 0
        )
        out["sqlite"] = {
            "disk": disk,
            "memory": memory,
            "populate_s": stats.get("seconds", {}).get("total"),
        }
        if url is None:
            out["postgresql"] = {"skipped": "no PostgreSQL URL (make postgres, or --url)"}
            return out
        with bench_schema(url) as (schema, schema_url, found):
            pg_home = work / "pg"
            p = replace(plan(quick=False, tiny=False), real_vectors=real_vectors)
            harness.progress(f"footprint: PostgreSQL store of {pg_size:,} episodes")
            started = time.perf_counter()
            start = min(found or 0, pg_size)
            filled = _populate_pg(schema_url, pg_home, FleetData(), start, pg_size, [], p)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"SET search_path = {schema}, public")
                conn.execute("VACUUM ANALYZE")
            pg_disk = pg_footprint(url, schema)
            write_home(pg_home, url=schema_url)
            pg_memory = bench_daemon.measure(pg_home, pg_disk["episodes"], warm, n)
            out["postgresql"] = {
                "disk": pg_disk,
                "memory": pg_memory,
                "populate_s": round(time.perf_counter() - started, 1),
                "episodes_per_s": filled.get("episodes_per_s"),
            }
            if found is not None:
                out["postgresql"]["kept_schema"] = {"name": schema, "episodes_found": found}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarize(result: dict[str, Any]) -> str:
    lines = [machine_line(result["machine"])] if "machine" in result else []
    for store in ("sqlite", "postgresql"):
        cell = result.get(store, {})
        if "disk" not in cell:
            lines.append(f"  {store}: {cell.get('skipped', 'not measured')}")
            continue
        d, m = cell["disk"], cell["memory"]
        parts = ", ".join(f"{k} {v['per_episode']:,}" for k, v in d["classes"].items())
        lines.append(
            f"  {store} at {d['episodes']:,} episodes: {d['bytes_per_episode']:,} B/episode"
            f" ({parts}); daemon RSS {m['after_measured_recalls']['vmrss']:.0f} MiB"
            f" (peak {m['after_measured_recalls'].get('vmhwm', float('nan')):.0f})"
            + (
                f", {m['after_idle']['vmrss']:.0f} MiB after {m['after_idle']['idle_s']:.0f} s idle"
                if "after_idle" in m
                else ""
            )
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--pg-size", type=int, default=None)
    parser.add_argument("--url", default=None, help="PostgreSQL URL (default: make postgres's)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZE:,} episodes each")
    args = parser.parse_args(argv)
    from bench.bench_pg_text import default_url

    size = args.size or (QUICK_SIZE if args.quick else SIZE)
    pg_size = args.pg_size or (QUICK_SIZE if args.quick else PG_SIZE)
    url = args.url or default_url()
    warm, n = (5, 20) if args.quick else (30, 100)
    result = measure(size, pg_size, url, min(REAL_VECTORS, size), warm, n, idle_s=_idle(args.quick))
    write_result("footprint", result, suffix="-quick" if args.quick else "")
    print(summarize(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
