"""What the built-in text index indexed of each episode, kept so it can be taken out again.

The index is contentless (migration 21): FTS5 keeps no copy of a row, so removing or replacing
one means handing it the very words it indexed. ``builtin_fts_source`` keeps them, one row per
indexed episode: its indexed text, summary and neighbours' context as a JSON list, packed
against the episode's body (``packed.pack_against``: the indexed text is nearly all words of
the body, so it costs a few dozen bytes). The fourth indexed value, the scope token, is
derived from the episode's scope, which never changes. Rows written before this module hold
all four values, packed alone, and are read as they are.

Because a row is packed against its episode's body, a change to that body (a summary added,
a forget dropping it) must first pack the row against the new body: :func:`rebase`.
"""

from __future__ import annotations

import json
import sqlite3

from fleetmem.store.sqlite.packed import pack_against, repack, unpack

Indexed = tuple[str, str, str, str]  # text, summary, context, scope token


def scope_token(scope: str) -> str:
    """The one ``scope_key`` token of ``scope`` (migration m0011 builds the same in SQL).

    Hex of the UTF-8 bytes is exact (no two scopes share a token) and a single unicode61
    token; the trailing digit keeps the porter stemmer from shortening it.
    """
    return "s" + scope.encode("utf-8").hex() + "0"


def write(conn: sqlite3.Connection, rowid: int, values: Indexed, body: str | None) -> None:
    """Keep ``values`` (their scope token aside) as what row ``rowid`` was indexed with."""
    kept = json.dumps(list(values[:3]), ensure_ascii=False)
    conn.execute(
        "INSERT INTO builtin_fts_source (rowid, indexed) VALUES (?, ?)",
        (rowid, pack_against(kept, body)),
    )


def _stored(conn: sqlite3.Connection, rowid: int) -> bytes | str | None:
    found = conn.execute(
        "SELECT indexed FROM builtin_fts_source WHERE rowid = ?", (rowid,)
    ).fetchone()
    return None if found is None else found[0]


def read(conn: sqlite3.Connection, rowid: int, body: str | None, scope_key: str) -> Indexed | None:
    """What row ``rowid`` was indexed with, or None if it is not indexed."""
    stored = _stored(conn, rowid)
    if stored is None:
        return None
    values = [str(v) for v in json.loads(unpack(stored, body) or "[]")]
    if len(values) == 3:
        values.append(scope_key)
    if len(values) != 4:
        raise ValueError(f"builtin_fts_source row {rowid} holds {len(values)} values, not 4")
    return (values[0], values[1], values[2], values[3])


def delete(conn: sqlite3.Connection, rowid: int) -> None:
    conn.execute("DELETE FROM builtin_fts_source WHERE rowid = ?", (rowid,))


def rebase(conn: sqlite3.Connection, rowid: int, old: str | None, new: str | None) -> None:
    """Pack row ``rowid``'s entry against ``new``, the body replacing ``old`` (None: none)."""
    stored = _stored(conn, rowid)
    if stored is not None:
        conn.execute(
            "UPDATE builtin_fts_source SET indexed = ? WHERE rowid = ?",
            (repack(stored, old, new), rowid),
        )


def of_episode(conn: sqlite3.Connection, episode_id: str) -> Indexed | None:
    """What the index holds of episode ``episode_id`` (None: not indexed), read beside the
    episode's own body and scope (for tests and for the footprint benchmark)."""
    row = conn.execute(
        "SELECT rowid, scope, episode_json FROM episodes WHERE id = ?", (episode_id,)
    ).fetchone()
    if row is None:
        return None
    return read(conn, int(row[0]), unpack(row[2]), scope_token(str(row[1])))
