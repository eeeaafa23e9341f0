"""Writing the call log: fleetmem's own rows, arguments hashed whatever else is configured.

The daemon's calls to an upstream provider carry whole episodes; a call log that kept
arguments would be a second copy of them (seed 000 REQ-18). A row keeps the SHA-256 of the
canonical JSON of the arguments and its size, so two rows can still be matched to the same
request, and nothing of the content.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Protocol

log = logging.getLogger("fleetmem.providers")

#: The caller recorded for the daemon's memory code.
DAEMON_CALLER = "fleetmem"


class CallLog(Protocol):
    """Where call rows go (the store implements it)."""

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
    ) -> None: ...


def args_digest(args: Mapping[str, Any]) -> tuple[str, int]:
    """(SHA-256 hex of the canonical JSON, its length in bytes)."""
    body = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    data = body.encode("utf-8")
    return hashlib.sha256(data).hexdigest(), len(data)


def write_row(
    sink: CallLog | None,
    *,
    at: float,
    caller: str,
    upstream: str,
    tool: str,
    args: Mapping[str, Any],
    outcome: str,
    duration_ms: float | None,
    error: str | None = None,
) -> None:
    """Append a row; a call log that cannot be written is logged, never fatal to the call."""
    if sink is None:
        return
    digest, size = args_digest(args)
    try:
        sink.log_call(
            at=at,
            caller=caller,
            upstream=upstream,
            tool=tool,
            args_sha256=digest,
            args_bytes=size,
            outcome=outcome,
            duration_ms=duration_ms,
            error=error,
        )
    except Exception as exc:
        log.warning("call_log.write_failed upstream=%s tool=%s error=%s", upstream, tool, exc)
