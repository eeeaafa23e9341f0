"""Small parsers shared by the CLI and the HTTP API for user-typed values."""

from __future__ import annotations

from datetime import UTC, datetime

from fleetmem.core.durations import parse_duration
from fleetmem.errors import InvalidInput


def parse_since(text: str, now: float) -> float:
    """``--since``: a duration back from now (``7d``, ``12h``) or an RFC 3339 date or time."""
    try:
        return now - parse_duration(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInput(
            "since", text, "must be a duration such as 7d or a date such as 2026-11-01"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
