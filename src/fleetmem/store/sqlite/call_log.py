"""The call log in SQLite: fleetmem's calls to upstream MCP servers, arguments hashed."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from fleetmem.store.sqlite.db import Database


@dataclass(frozen=True, slots=True)
class CallLogRow:
    id: int
    at: float
    caller: str
    upstream: str
    tool: str
    args_sha256: str
    args_bytes: int
    outcome: str
    duration_ms: float | None
    error: str | None


def _row(r: sqlite3.Row) -> CallLogRow:
    return CallLogRow(
        id=int(r["id"]),
        at=float(r["at"]),
        caller=str(r["caller"]),
        upstream=str(r["upstream"]),
        tool=str(r["tool"]),
        args_sha256=str(r["args_sha256"]),
        args_bytes=int(r["args_bytes"]),
        outcome=str(r["outcome"]),
        duration_ms=None if r["duration_ms"] is None else float(r["duration_ms"]),
        error=r["error"],
    )


class CallLogMixin:
    db: Database

    def log_call(
        self,
        *,
        at: float,
        caller: str,
        upstream: str,
        tool: str,
        args_sha256: str,
        args_bytes: int,
        outcome: str,
        duration_ms: float | None,
        error: str | None,
    ) -> None:
        """Append one row; ``error`` is a short code or class name, never provider text."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO call_log (at, caller, upstream, tool, args_sha256, args_bytes,"
                " outcome, duration_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    at,
                    caller,
                    upstream,
                    tool,
                    args_sha256,
                    args_bytes,
                    outcome,
                    duration_ms,
                    None if error is None else error[:200],
                ),
            )

    def recent_calls(self, upstream: str | None = None, limit: int = 50) -> list[CallLogRow]:
        """The newest rows first, optionally of one upstream."""
        where, args = ("WHERE upstream = ?", [upstream]) if upstream else ("", [])
        rows = self.db.conn.execute(
            f"SELECT * FROM call_log {where} ORDER BY at DESC, id DESC LIMIT ?", [*args, limit]
        ).fetchall()
        return [_row(r) for r in rows]

    def prune_call_log(self, before: float) -> int:
        """Delete rows older than ``before``; returns how many."""
        with self.db.write() as conn:
            return int(conn.execute("DELETE FROM call_log WHERE at < ?", (before,)).rowcount)
